# lowdown-observe: observe(fetch) on the WASM build, for browsers, edge runtimes and Node.

SETUP_TARGETS += setup-observe
BUILD_TARGETS += build-observe
TEST_TARGETS += test-observe

.PHONY: setup-observe setup-chromium build-observe test-observe

setup-observe: npm/observe/node_modules/.ci-stamp setup-chromium ## npm ci for lowdown-observe; Debian's Chromium for the browser test

npm/observe/node_modules/.ci-stamp: npm/observe/package-lock.json
	cd npm/observe && npm ci --no-audit --no-fund
	@touch $@

setup-chromium:
	@command -v chromium >/dev/null || { \
		echo "installing Chromium (Debian package) for the browser test"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

build-observe: build-wasm-binding ## copy the wasm-bindgen output into npm/observe/wasm
	cd npm/observe && node scripts/build.mjs

test-observe: build-observe build-server ## observe(fetch) under Node and in headless Chromium, reporting to a real lowdown-server
	cd npm/observe && npm test
