# The npm package `lowdown-proxy` (npm/): the stdio proxy's tests and benchmarks.
#
# npm/node_modules comes from the committed lockfile (`npm ci`); `lowdown-core-node` is
# linked from bindings-node/, whose native build is the binding fragment's job. The proxy
# tests record to the real lowdown-server, so test-proxy builds it first.

SETUP_TARGETS += setup-proxy
TEST_TARGETS += test-proxy
BENCH_TARGETS += bench-proxy

.PHONY: setup-proxy test-proxy bench-proxy build-proxy-server

setup-proxy: ## npm ci in npm/ when node_modules is missing or older than the lockfile
	@if [ ! -d npm/node_modules ] || [ npm/package-lock.json -nt npm/node_modules/.package-lock.json ]; then \
		cd npm && npm ci --no-audit --no-fund; fi

build-proxy-server:
	cargo build -p lowdown-server

# The proxy's own suites (the package's other suites belong to the lowdown-mcp/wrap fragment;
# `cd npm && npm test` runs them all).
PROXY_TESTS := resolve relay record-store session watchlog readme

test-proxy: build-proxy-server ## the proxy: relay byte for byte, SDK sessions, records at a real lowdown-server, watch-log
	cd npm && node --test --test-concurrency=1 $(addprefix test/,$(addsuffix .test.js,$(PROXY_TESTS)))

bench-proxy: build-proxy-server ## proxy vs direct vs a bare Node relay: latency, throughput, 10 MB, watch-log
	node bench/proxy/bench.js
