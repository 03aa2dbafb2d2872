# lowdown-server: the HTTP API over SQLite and PostgreSQL.

SETUP_TARGETS += setup-server
BUILD_TARGETS += build-server
TEST_TARGETS += test-server
BENCH_TARGETS += bench-server

.PHONY: setup-server build-server test-server bench-server pg-start pg-stop run-server

setup-server: ## install PostgreSQL for the server tests when missing (apt)
	@server/scripts/pg-start.sh --install-only

build-server: ## build lowdown-server
	cargo build -p lowdown-server

pg-start: ## start the test PostgreSQL on 127.0.0.1:25432 (prints its URL)
	@server/scripts/pg-start.sh

pg-stop: ## stop the test PostgreSQL
	@server/scripts/pg-stop.sh

test-server: setup-npm ## server tests on SQLite AND a real PostgreSQL (started and stopped here); the Scanner leg uses server-everything from the workspace node_modules
	url="$$(server/scripts/pg-start.sh)"; trap 'server/scripts/pg-stop.sh' EXIT; \
	LOWDOWN_TEST_DATABASE_URL="$$url" cargo test -p lowdown-server

bench-server: ## ingest records/s over HTTP (SQLite, PostgreSQL); reputation p50/p99 at 10k and 1M records
	cargo build --release -p lowdown-server --features bench --bin lowdown-server-bench
	url="$$(server/scripts/pg-start.sh)"; trap 'server/scripts/pg-stop.sh' EXIT; \
	LOWDOWN_BENCH_PG_URL="$$url" bench/server/run.sh

run-server: ## run lowdown-server on 127.0.0.1:7077 (SQLite under LOWDOWN_HOME, default ~/.lowdown)
	cargo run -p lowdown-server

BENCH_TARGETS += bench-scanner
.PHONY: bench-scanner

bench-scanner: ## Scanner against local fixtures (85% fast, 10% slow, 3% hang, 2% refuse): 5,000 remotes on one host and 25,000 on 253 hosts, old and new concurrency defaults: wall time, peak memory, probes/s
	cargo build --release -p lowdown-server --bin lowdown-server --example scanner_fixtures
	url="$$(server/scripts/pg-start.sh)"; trap 'server/scripts/pg-stop.sh' EXIT; \
	LOWDOWN_BENCH_PG_URL="$$url" bench/scanner/run.sh
