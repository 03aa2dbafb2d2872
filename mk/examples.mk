# The classify-transcript examples (examples/{node,wasm,rust}): each host that records MCP
# sessions feeds examples/transcripts/server-everything.jsonl through the core's Recorder and
# prints the records. test-examples checks that all hosts print the same records, and the
# right ones (validated by the Python build, as prowl validates its records); the Rust leg
# runs once core/Cargo.toml has `[[example]] classify_transcript`.

TEST_TARGETS += test-examples

.PHONY: test-examples examples

test-examples: build-js-binding build-python-binding build-wasm-binding ## the classify-transcript examples: Node, WASM and Rust print identical records
	PY=$(PY) node --test --test-reporter=spec tests/examples/

examples: build-js-binding build-wasm-binding ## print the records of the recorded MCP session from every host's example
	@for run in "node examples/node/classify-transcript.mjs" "node examples/wasm/classify-transcript.mjs"; do echo "== $$run"; $$run; done
	@if grep -q '"classify_transcript"' core/Cargo.toml; then \
		echo "== cargo run -q -p lowdown-core --example classify_transcript"; \
		cargo run -q -p lowdown-core --example classify_transcript; fi

TEST_TARGETS += test-readme
.PHONY: test-readme

test-readme: build-server ## the README: two set-up commands, links that resolve, the curl walkthrough against a real server, the defaults the READMEs state
	node --test --test-reporter=spec tests/readme/
