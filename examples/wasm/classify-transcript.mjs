// Feeds a recorded MCP stdio session (examples/transcripts/*.jsonl) through lowdown-core's
// `classify` state machine, via the WASM build under Node, and prints one interaction
// record per line. Build it first with `make build-wasm-binding`.
//
//   node examples/wasm/classify-transcript.mjs [transcript.jsonl]
import { readFileSync } from "node:fs";
import { Classifier, buildRecord, canonicalJson } from "../../bindings-wasm/pkg/nodejs/lowdown.js";

const file = process.argv[2] ?? new URL("../transcripts/server-everything.jsonl", import.meta.url);
// Who records, for what. The transcript holds no command line, so the target is fixed.
const context = { actor: "example", target: "npm:@modelcontextprotocol/server-everything", node_id: null };
const encoder = new TextEncoder();

const classifier = new Classifier();
const print = (exchanges) => {
  for (const exchange of exchanges) {
    // The facts learnt so far (server version, schema hash) go into each record.
    const record = buildRecord(exchange, classifier.facts(), context, null);
    // null: a server→client request (sampling, roots/list) is relayed, never recorded.
    // canonicalJson sorts the keys and writes numbers the same way in every host.
    if (record) console.log(canonicalJson(encoder.encode(JSON.stringify(record))));
  }
};

let lastMs = 0;
for (const [i, text] of readFileSync(file, "utf8").split("\n").entries()) {
  if (!text.trim()) continue;
  try {
    const { direction, at_ms, line } = JSON.parse(text);
    print(classifier.feed(direction, encoder.encode(line + "\n"), at_ms));
    lastMs = at_ms;
  } catch (e) {
    console.error(`${file}:${i + 1}: ${e.message}`);
    process.exit(1);
  }
}
// End of session: anything still pending becomes a server-layer failure.
print(classifier.close(lastMs));
classifier.free(); // WASM memory is not garbage-collected promptly: free the session's state.
