# The Python package `prowl` (bindings-python/python/prowl): httpx observe, the LangChain
# handler, the Claude Code hook. Its native module is built by build-python-binding
# (mk/bindings.mk); this fragment adds what its tests and benchmark need.

SETUP_TARGETS += setup-prowl
TEST_TARGETS += test-prowl
BENCH_TARGETS += bench-prowl

.PHONY: setup-prowl test-prowl bench-prowl

PROWL_TESTS := $(filter-out %/test_vectors.py %/test_native.py,$(wildcard bindings-python/tests/test_*.py))

setup-prowl: $(VENV)/.prowl-stamp ## test and bench deps of prowl (httpx, anyio, langchain-core, OpenTelemetry), pinned

$(VENV)/.prowl-stamp: bindings-python/tests/requirements.txt $(VENV)/.bindings-stamp
	$(PY) -m pip install --quiet --disable-pip-version-check -r bindings-python/tests/requirements.txt
	@touch $@

test-prowl: ## prowl against a real local HTTP server and a real lowdown-server: httpx, LangChain, hook, README
	cargo build -q -p lowdown-server
	$(PY) -m pytest -q -p no:cacheprovider $(PROWL_TESTS)

bench-prowl: build-python-binding ## added latency and cost per request: plain httpx vs prowl.observe vs OpenTelemetry; LangChain handler per tool run; whole sessions with a working and a hanging API
	cargo build -q -p lowdown-server
	$(PY) bench/prowl/bench.py
