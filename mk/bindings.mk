# The bindings of lowdown-core: JavaScript (bindings-js: napi-rs natively, wasm-bindgen for
# WebAssembly, one crate) and Python (bindings-python: pyo3 + maturin). Setup is idempotent
# and does nothing once done; each test target runs the golden vectors of every operation the
# binding exposes (the Rust vectors run them all).
#
# Generated files: bindings-js/native.js and native.d.ts (napi's loader and declarations) are
# committed, rebuilt by `make build` and checked for drift by `make test-js-binding`. The
# WebAssembly glue (bindings-js/wasm/lowdown*, npm/lowdown-observe/wasm/) and the .node files
# are built, never committed. The Python stubs (_native.pyi) are checked by mypy.stubtest in the Python tests.

SETUP_TARGETS += setup-python-binding setup-wasm-bindgen
BUILD_TARGETS += build-js-binding build-python-binding build-wasm-binding
TEST_TARGETS += test-js-binding test-python-binding
BENCH_TARGETS += bench-bindings
LINT_TARGETS += lint-bindings

.PHONY: setup-python-binding setup-wasm-bindgen build-js-binding build-python-binding \
	build-wasm-binding test-js-binding test-python-binding bench-bindings lint-bindings

PYTHON ?= python3
WASM_OUT = $(or $(CARGO_TARGET_DIR),$(ROOT)/target)/wasm32-unknown-unknown/release/lowdown_js.wasm
WASM_OPT := $(ROOT)/node_modules/.bin/wasm-opt
# The wasm-bindgen CLI must be exactly the version of the wasm-bindgen crate in Cargo.lock.
WASM_BINDGEN_VERSION = $(shell awk '/^name = "wasm-bindgen"$$/ { getline; gsub(/[^0-9.]/, ""); print }' $(ROOT)/Cargo.lock)
# Features that rustc's wasm32-unknown-unknown target emits by default; wasm-opt must allow them.
WASM_OPT_FEATURES := --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
	--enable-mutable-globals --enable-reference-types --enable-multivalue
# Size over speed for the .wasm only (the workspace release profile stays as it is).
WASM_PROFILE_ENV := CARGO_PROFILE_RELEASE_OPT_LEVEL=z CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1

# --- setup ------------------------------------------------------------------------------

setup-python-binding: $(VENV)/.bindings-stamp ## the repo venv with maturin and pytest (pinned)

$(VENV)/.bindings-stamp: bindings-python/requirements-dev.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r bindings-python/requirements-dev.txt
	@touch $@

setup-wasm-bindgen: setup-rust ## the wasm-bindgen CLI at the version Cargo.lock records (cargo install)
	@want="$(WASM_BINDGEN_VERSION)"; test -n "$$want" || { echo "no wasm-bindgen in Cargo.lock" >&2; exit 1; }; \
	have=""; if command -v wasm-bindgen >/dev/null; then have="$$(wasm-bindgen --version | awk '{print $$2}')"; fi; \
	if [ "$$have" != "$$want" ]; then \
		echo "installing wasm-bindgen-cli $$want (found: $${have:-none})"; \
		cargo install wasm-bindgen-cli --version "$$want" --force; \
	fi

# --- build ------------------------------------------------------------------------------

build-js-binding: setup-npm ## napi build (release) for this platform: bindings-js/*.node, native.js, native.d.ts
	cd bindings-js && npx napi build --platform --release --js native.js --dts native.d.ts

build-python-binding: setup-python-binding ## maturin develop (release) into the repo venv
	VIRTUAL_ENV=$(VENV) $(VENV)/bin/maturin develop --release --quiet -m bindings-python/Cargo.toml

# One WebAssembly build: $(1) = cargo features, $(2) = wasm-bindgen target, $(3) = out dir.
define wasm_build
	$(WASM_PROFILE_ENV) cargo build -q -p lowdown-js --target wasm32-unknown-unknown --release --no-default-features --features $(1)
	wasm-bindgen $(WASM_OUT) --target $(2) --out-dir $(3) --out-name lowdown
	$(WASM_OPT) -Oz $(WASM_OPT_FEATURES) $(3)/lowdown_bg.wasm -o $(3)/lowdown_bg.wasm
	@printf '%s: %s bytes, %s gzipped\n' "$(3)/lowdown_bg.wasm" \
		"$$(wc -c < $(3)/lowdown_bg.wasm)" "$$(gzip -9c $(3)/lowdown_bg.wasm | wc -c)"
endef

build-wasm-binding: setup-rust setup-wasm-bindgen setup-npm ## WebAssembly builds: the proxy's fallback (bindings-js/wasm) and observe's (npm/lowdown-observe/wasm)
	$(call wasm_build,proxy$(comma)observe,nodejs,bindings-js/wasm)
	$(call wasm_build,observe,web,npm/lowdown-observe/wasm/web)
	$(call wasm_build,observe,nodejs,npm/lowdown-observe/wasm/nodejs)
	@echo '{ "type": "commonjs" }' > npm/lowdown-observe/wasm/nodejs/package.json

# --- test -------------------------------------------------------------------------------

test-js-binding: build-js-binding build-wasm-binding ## the vectors of every exposed operation and the binding's own tests, on the native and the WebAssembly build
	cd bindings-js && node --test --test-reporter=spec __test__/
	@if git -C $(ROOT) rev-parse --is-inside-work-tree >/dev/null 2>&1 \
		&& git -C $(ROOT) ls-files --error-unmatch bindings-js/native.d.ts >/dev/null 2>&1; then \
		git -C $(ROOT) diff --exit-code --stat -- bindings-js/native.js bindings-js/native.d.ts \
		|| { echo "bindings-js/native.js or native.d.ts differ from what napi generates: commit them" >&2; exit 1; }; \
	fi

test-python-binding: ## the vectors of every operation prowl._native exposes and the binding's own tests, against the maturin build
	$(PY) -m pytest -q -p no:cacheprovider bindings-python/tests/test_vectors.py bindings-python/tests/test_native.py

# --- bench and lint ---------------------------------------------------------------------

bench-bindings: build-js-binding build-wasm-binding build-python-binding ## per-call overhead of napi, pyo3 and wasm against the same calls in Rust
	cargo bench -q -p lowdown-js --bench bindings_overhead > $(ROOT)/target/bench-bindings-rust.json
	cd bench/bindings && node overhead.mjs > $(ROOT)/target/bench-bindings-js.json
	$(PY) bench/bindings/overhead.py > $(ROOT)/target/bench-bindings-py.json
	node bench/bindings/table.mjs $(ROOT)/target/bench-bindings-rust.json $(ROOT)/target/bench-bindings-js.json $(ROOT)/target/bench-bindings-py.json

lint-bindings: ## the bindings' JS and Python test and bench files parse
	@for f in tests/vectors/js/*.mjs bindings-js/__test__/*.mjs bench/bindings/*.mjs; do \
		node --check $$f || exit 1; done
	$(PY) -m py_compile bindings-python/tests/test_vectors.py bindings-python/tests/test_native.py bench/bindings/overhead.py
