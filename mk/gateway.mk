# The sampling gateway (SPEC §10): its benchmark. Its tests run with test-server.

BENCH_TARGETS += bench-gateway

.PHONY: bench-gateway

bench-gateway: ## latency the gateway adds over calling the upstream directly (p50, p99) and throughput, side by side
	cargo build --release -p lowdown-server --features bench --bin lowdown-gateway-bench
	target/release/lowdown-gateway-bench
