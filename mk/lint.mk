# The host linters: the Python and JavaScript code held to the bar clippy holds the Rust to.
#
# - prowl (bindings-python/python/prowl): ruff's bug-finding rules and mypy --strict, both
#   configured in bindings-python/pyproject.toml, and mypy.stubtest of _native.pyi against
#   the built module (also run by test-python-binding). Pinned in requirements-dev.txt.
# - the npm packages (lowdown-proxy, lowdown-observe, lowdown-server, the editor extension): tsc --checkJs
#   on their JSDoc types (tsconfig.base.json at the root, a tsconfig.json per package).
#   typescript, @types/node and @types/vscode are pinned root devDependencies.
#
# The checks read generated declarations: the WebAssembly glue's lowdown.d.ts (observe) and
# the native module (stubtest). Each is built here only when missing; `make test` builds both
# before it lints. test-lint-hosts runs the linters and then proves each one fails on a
# planted error (tests/lint/).

LINT_TARGETS += lint-hosts
TEST_TARGETS += test-lint-hosts

.PHONY: lint-hosts lint-python lint-js test-lint-hosts

TSC := $(ROOT)/node_modules/.bin/tsc
TS_PROJECTS := npm/lowdown-proxy npm/lowdown-observe npm/lowdown-server npm/vscode-extension
OBSERVE_WASM_DTS := npm/lowdown-observe/wasm/web/lowdown.d.ts

lint-hosts: lint-python lint-js ## ruff, mypy --strict and stubtest over prowl; tsc --checkJs over the npm packages

lint-python: $(VENV)/.prowl-stamp build-python-binding ## stubtest checks the stub against the binding as built from this tree, so it is rebuilt first
	cd bindings-python && $(VENV)/bin/ruff check --no-cache --quiet python/prowl
	cd bindings-python && $(VENV)/bin/mypy --no-error-summary
	$(PY) -m mypy.stubtest prowl._native

lint-js: setup-npm | $(OBSERVE_WASM_DTS)
	@for p in $(TS_PROJECTS); do echo "tsc -p $$p"; $(TSC) -p $$p || exit 1; done

$(OBSERVE_WASM_DTS):
	$(MAKE) --no-print-directory build-wasm-binding

test-lint-hosts: lint-hosts ## the host linters pass, and each fails on a planted error (a wrong type, an undefined name)
	node --test --test-reporter=spec tests/lint/
