# The real-client suite (tests/clients): the Python MCP SDK and the MCP Inspector CLI drive
# real servers (mcp-server-time, server-everything, server-memory) through lowdown-proxy,
# recorded at a real lowdown-server; and the OpenTelemetry Python and JS SDKs exporting MCP
# client spans and metrics to it over OTLP/HTTP (otlp.test.mjs).

SETUP_TARGETS += setup-clients
TEST_TARGETS += test-clients

.PHONY: setup-clients test-clients

setup-clients: $(VENV)/.clients-stamp ## the Python MCP SDK, mcp-server-time and the OpenTelemetry SDK with its OTLP/HTTP exporters (PyPI, pinned) in the repo venv

$(VENV)/.clients-stamp: tests/clients/requirements.txt $(VENV)/.bindings-stamp
	$(PY) -m pip install --quiet --disable-pip-version-check -r tests/clients/requirements.txt
	@touch $@

test-clients: setup-clients setup-npm build-server build-js-binding ## real MCP clients (Python SDK 2.3, Inspector CLI) and servers through the proxy, records checked at a real lowdown-server; OTel SDKs' OTLP exports checked in its answers
	PY=$(PY) node --test --test-concurrency=1 --test-reporter=spec tests/clients/
