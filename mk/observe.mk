# lowdown-observe: observe(fetch) on the WASM build, for browsers, edge runtimes and Node.

SETUP_TARGETS += setup-chromium
TEST_TARGETS += test-observe

.PHONY: setup-chromium test-observe

setup-chromium: ## Debian's Chromium for the browser tests (apt), when missing
	@command -v chromium >/dev/null || { \
		echo "installing Chromium (Debian package) for the browser test"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

test-observe: build-wasm-binding build-server setup-chromium ## observe(fetch) under Node and in headless Chromium, reporting to a real lowdown-server
	cd npm/lowdown-observe && npm test
