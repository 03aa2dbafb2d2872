# Lowdown's one task runner. `make` lists the targets.
#
# Each part of the tree owns a fragment in mk/*.mk that adds its own targets to the
# lists below; this file only strings them together.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

ROOT := $(abspath .)
comma := ,
VENV := $(ROOT)/.venv
PY := $(VENV)/bin/python
export CARGO_TERM_COLOR ?= never
# A CI run builds once: incremental caches would only take disk.
ifeq ($(CI),true)
export CARGO_INCREMENTAL ?= 0
endif

SETUP_TARGETS :=
BUILD_TARGETS :=
TEST_TARGETS :=
BENCH_TARGETS :=
LINT_TARGETS :=

include $(sort $(wildcard mk/*.mk))

.PHONY: help setup build test bench lint

help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | sort | awk -F':.*## ' '{printf "  make %-22s %s\n", $$1, $$2}'

setup: $(SETUP_TARGETS) ## install what is missing (idempotent)

build: setup $(BUILD_TARGETS) ## build every part

test: build ## run every test: Rust, Node, Python, WASM, server, end to end
	@$(MAKE) --no-print-directory $(TEST_TARGETS)
	@echo "make test: all suites passed ($(words $(TEST_TARGETS)) suites: $(TEST_TARGETS))"

bench: build ## run every benchmark, baselines side by side
	@$(MAKE) --no-print-directory $(BENCH_TARGETS)

lint: setup $(LINT_TARGETS) ## rustfmt, clippy (warnings denied) and the host linters
