# The Rust toolchain and the pure core.

SETUP_TARGETS += setup-rust
TEST_TARGETS += test-core test-core-wasm32
BENCH_TARGETS += bench-core
LINT_TARGETS += lint-rust

.PHONY: setup-rust test-core test-core-wasm32 bench-core lint-rust

setup-rust: ## rust target wasm32-unknown-unknown, rustfmt, clippy
	@rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
	@rustup component list --installed | grep -q '^clippy' || rustup component add clippy rustfmt

test-core: ## the core's unit tests and every golden vector, in Rust
	cargo test -p lowdown-core

test-core-wasm32: ## prove the core builds for wasm32-unknown-unknown and that clippy finds no IO in it
	cargo build -p lowdown-core --target wasm32-unknown-unknown
	cargo clippy -p lowdown-core --all-targets -- -D warnings

bench-core: ## criterion benchmarks of the core
	cargo bench -p lowdown-core

lint-rust:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --features lowdown-server/bench -- -D warnings
