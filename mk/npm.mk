# The npm workspace (package.json at the root): lowdown-core (bindings-js, its per-platform
# packages and its WebAssembly fallback), lowdown-proxy, lowdown-observe and the editor
# extension, installed together from one lockfile for development and tests. Each package is
# packed on its own by `make package`, as a user installs it.

SETUP_TARGETS += setup-npm

.PHONY: setup-npm

setup-npm: ## npm ci at the root when node_modules is missing or older than the lockfile
	@if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then \
		npm ci --no-audit --no-fund; fi

# --- packages -------------------------------------------------------------------------------

.PHONY: setup-cross package

# Cross targets of the native binding are built with zig as the linker (napi build -x, through
# cargo-zigbuild): zig comes from PyPI (ziglang, into the repo venv) and cargo-zigbuild from
# crates.io, so no system cross toolchain is needed.
CROSS_TARGETS := aarch64-unknown-linux-gnu x86_64-unknown-linux-musl
ZIGLANG_VERSION := 0.17.1
ZIG_DIR = $(shell $(PY) -c 'import ziglang, os; print(os.path.dirname(ziglang.__file__))' 2>/dev/null)

setup-cross: setup-rust setup-python-binding ## rustup targets, zig (PyPI) and cargo-zigbuild (crates.io) for the arm64 and musl packages, when missing
	@for target in $(CROSS_TARGETS); do \
		rustup target list --installed | grep -qx "$$target" || rustup target add "$$target"; done
	@$(PY) -c 'import ziglang' 2>/dev/null || $(PY) -m pip install --quiet --disable-pip-version-check "ziglang==$(ZIGLANG_VERSION)"
	@command -v cargo-zigbuild >/dev/null || cargo install cargo-zigbuild

package: setup-npm setup-cross setup-python-binding build-wasm-binding build-js-binding ## pack every package into dist/: npm tarballs (native per platform, WebAssembly, proxy, observe, the prebuilt server per platform), the .vsix, the prowl wheel and sdist, the server wheels
	PATH="$(ZIG_DIR):$$PATH" bash mk/package.sh

TEST_TARGETS += test-install
.PHONY: test-install

# The server packages of a test run hold the dev build the other suites already ran, for this
# machine only: an optimised build for three targets would add many minutes to a cold run.
# `make package` on its own builds them optimised for every target.
test-install: export SERVER_PROFILE ?= dev
test-install: export SERVER_TARGETS ?= host
test-install: package build-server ## the packages from dist/, installed outside the repository: npm tarballs (native, WebAssembly, no core) with a real MCP session, and the prowl wheel in a fresh venv
	node --test --test-reporter=spec tests/install/
	bash tests/install/prowl-wheel.sh
