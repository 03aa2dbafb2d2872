# Provider mode (SPEC §11): the prowl-provider-hook benchmark, and its Python tests on
# PostgreSQL. The Rust tests run with test-server (SQLite and PostgreSQL), the Python ones
# with test-prowl (SQLite).

TEST_TARGETS += test-provider-pg
BENCH_TARGETS += bench-provider

.PHONY: test-provider-pg bench-provider

test-provider-pg: ## prowl-provider-hook, prowl-provider daemon and prowl_provider_hook.py against a real lowdown-server on PostgreSQL (started and stopped here)
	cargo build -q -p lowdown-server
	url="$$(server/scripts/pg-start.sh)"; trap 'server/scripts/pg-stop.sh' EXIT; \
	LOWDOWN_TEST_DATABASE_URL="$$url" $(PY) -m pytest -q -p no:cacheprovider bindings-python/tests/test_provider_hook.py bindings-python/tests/test_provider_hostile.py bindings-python/tests/test_provider_daemon.py bindings-python/tests/test_provider_hook_file_e2e.py bindings-python/tests/test_provider_hook_file_agent.py

bench-provider: build-python-binding ## prowl-provider-hook's return time (p50/p99 over 300 Stop events, beside the Python floor) and the time to score a protocol directive
	$(PY) bench/provider/bench.py
