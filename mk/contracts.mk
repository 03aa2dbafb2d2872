# The wire contracts (core/src/contract.rs): the record and the observation, defined once.
# The server builds its OpenAPI components and llms.txt field table from it at run time;
# the copies other hosts read are written by `make contracts` and committed, and
# `make test-contracts` fails when a committed copy differs from what the core writes.

TEST_TARGETS += test-contracts
.PHONY: contracts test-contracts

contracts: ## write the contract copies: bindings-js/contract.d.ts, prowl/_contract.py, src/contract.js of lowdown-proxy and lowdown-observe; the proxy's src/read.js from observe's; the provider drop-in hook's host rules from the telemetry hook's
	cargo run -q -p lowdown-core --example contracts

test-contracts: ## every generated copy matches its source (core/src/contract.rs, observe's src/read.js)
	cargo run -q -p lowdown-core --example contracts -- --check
