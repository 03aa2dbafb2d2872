# The npm package `lowdown-proxy` (npm/lowdown-proxy/): the stdio proxy's tests and
# benchmarks. It depends on lowdown-core (bindings-js), linked by the npm workspace; the proxy
# tests record to the real lowdown-server, so test-proxy builds it first.

TEST_TARGETS += test-proxy
BENCH_TARGETS += bench-proxy

.PHONY: test-proxy bench-proxy build-proxy-server

build-proxy-server:
	cargo build -p lowdown-server

# The proxy's own suites: every test file of the package but lowdown-mcp's and wrap's (the
# lowdown-mcp/wrap fragment runs those; `cd npm/lowdown-proxy && npm test` runs them all), so
# a new file is never left out.
PROXY_TESTS := $(filter-out test/mcp% test/wrap%,$(patsubst npm/lowdown-proxy/%,%,$(wildcard npm/lowdown-proxy/test/*.test.js)))

test-proxy: build-proxy-server build-js-binding build-wasm-binding ## the proxy: relay byte for byte, SDK sessions, records at a real lowdown-server, watch-log
	cd npm/lowdown-proxy && node --test --test-concurrency=1 $(PROXY_TESTS)

bench-proxy: build-proxy-server build-js-binding ## proxy vs direct vs a bare Node relay: latency, throughput, 10 MB, watch-log, start-up
	node bench/proxy/bench.js
