# lowdown-mcp, `lowdown-proxy wrap|unwrap|status` and the editor extension (npm/lowdown-proxy,
# npm/vscode-extension).

TEST_TARGETS += test-mcp-wrap

TEST_TARGETS += test-extension

.PHONY: test-mcp-wrap test-extension

test-mcp-wrap: setup-npm build-js-binding ## lowdown-mcp against a real lowdown-server, config wrap/unwrap, the extension's commands
	cargo build -p lowdown-server
	cd npm/lowdown-proxy && node --test --test-concurrency=1 test/mcp*.test.js test/wrap*.test.js

test-extension: setup-npm build-wasm-binding ## the editor extension from its built .vsix: wrap, unwrap and status with the WebAssembly core's labels
	cd npm/vscode-extension && node --test test/
