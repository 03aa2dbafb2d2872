# The npm package `lowdown-proxy` (npm/lowdown-proxy/): the stdio proxy's tests and
# benchmarks. It depends on lowdown-core (bindings-js), linked by the npm workspace; the proxy
# tests record to the real lowdown-server, so test-proxy builds it first.

TEST_TARGETS += test-proxy
BENCH_TARGETS += bench-proxy

.PHONY: test-proxy bench-proxy build-proxy-server

build-proxy-server:
	cargo build -p lowdown-server

# The proxy's own suites (the package's other suites belong to the lowdown-mcp/wrap fragment;
# `cd npm/lowdown-proxy && npm test` runs them all).
PROXY_TESTS := resolve relay record-store session watchlog label-facts exit no-core readme

test-proxy: build-proxy-server build-js-binding build-wasm-binding ## the proxy: relay byte for byte, SDK sessions, records at a real lowdown-server, watch-log
	cd npm/lowdown-proxy && node --test --test-concurrency=1 $(addprefix test/,$(addsuffix .test.js,$(PROXY_TESTS)))

bench-proxy: build-proxy-server build-js-binding ## proxy vs direct vs a bare Node relay: latency, throughput, 10 MB, watch-log, start-up
	node bench/proxy/bench.js
