# The Python package `prowl` (bindings-python/python/prowl): httpx observe, the LangChain
# handler, the Claude Code hook. Its native module is built by build-python-binding
# (mk/bindings.mk); this fragment adds what its tests and benchmark need.

SETUP_TARGETS += setup-prowl
TEST_TARGETS += test-prowl
BENCH_TARGETS += bench-prowl

.PHONY: setup-prowl test-prowl bench-prowl

PROWL_TESTS := $(filter-out %/test_vectors.py %/test_native.py,$(wildcard bindings-python/tests/test_*.py))
# The real Claude Code CLI, pinned: the provider hook's flags are checked against it (its
# --help, and a run that parses them all and stops at the missing login). About 400 MB,
# installed once into the venv; it never reaches a model here.
CLAUDE_CODE_VERSION := 2.1.332
CLAUDE_CLI_DIR := $(VENV)/claude-code-$(CLAUDE_CODE_VERSION)
export PROWL_TEST_CLAUDE_CLI := $(CLAUDE_CLI_DIR)/node_modules/.bin/claude

setup-prowl: $(VENV)/.prowl-stamp $(CLAUDE_CLI_DIR)/.stamp ## test and bench deps of prowl (httpx, anyio, langchain-core, OpenTelemetry, the claude CLI), pinned

$(CLAUDE_CLI_DIR)/.stamp:
	mkdir -p $(CLAUDE_CLI_DIR)
	npm install --prefix $(CLAUDE_CLI_DIR) --no-save --no-audit --no-fund --loglevel=error @anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION)
	$(PROWL_TEST_CLAUDE_CLI) --version
	@touch $@

$(VENV)/.prowl-stamp: bindings-python/tests/requirements.txt $(VENV)/.bindings-stamp
	$(PY) -m pip install --quiet --disable-pip-version-check -r bindings-python/tests/requirements.txt
	@touch $@

test-prowl: $(CLAUDE_CLI_DIR)/.stamp ## prowl against a real local HTTP server and a real lowdown-server: httpx, LangChain, hook, README
	cargo build -q -p lowdown-server
	$(PY) -m pytest -q -p no:cacheprovider $(PROWL_TESTS)

bench-prowl: build-python-binding ## added latency and cost per request: plain httpx vs prowl.observe vs OpenTelemetry; LangChain handler per tool run; whole sessions with a working and a hanging API
	cargo build -q -p lowdown-server
	$(PY) bench/prowl/bench.py
