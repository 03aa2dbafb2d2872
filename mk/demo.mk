# `make demo`: the main job on the embedded default. Starts lowdown-server on SQLite, runs a
# real MCP server (server-everything) through lowdown-proxy with the official SDK client,
# and prints what was recorded.

.PHONY: demo

demo: setup-rust setup-npm build-server build-js-binding ## start the server on SQLite, run a real MCP session through the proxy, show what was recorded
	bash examples/demo/run.sh
