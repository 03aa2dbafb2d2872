// Feeds a recorded MCP stdio session (examples/transcripts/*.jsonl) through lowdown-core's
// `classify` state machine, via the Node binding, and prints one interaction record per line.
//
//   node examples/node/classify-transcript.mjs [transcript.jsonl]
//
// In your own project the import is `from "lowdown-core-node"`.
import { readFileSync } from "node:fs";
import { Classifier, buildRecord, canonicalJson } from "../../bindings-node/index.js";

const file = process.argv[2] ?? new URL("../transcripts/server-everything.jsonl", import.meta.url);
// Who records, for what. The transcript holds no command line, so the target is fixed.
const context = { actor: "example", target: "npm:@modelcontextprotocol/server-everything", node_id: null };

const classifier = new Classifier();
const print = (exchanges) => {
  for (const exchange of exchanges) {
    // The facts learnt so far (server version, schema hash) go into each record.
    const record = buildRecord(exchange, classifier.facts(), context, null);
    // null: a server→client request (sampling, roots/list) is relayed, never recorded.
    // canonicalJson sorts the keys and writes numbers the same way in every host.
    if (record) console.log(canonicalJson(Buffer.from(JSON.stringify(record))));
  }
};

let lastMs = 0;
for (const [i, text] of readFileSync(file, "utf8").split("\n").entries()) {
  if (!text.trim()) continue;
  try {
    const { direction, at_ms, line } = JSON.parse(text);
    print(classifier.feed(direction, Buffer.from(line + "\n"), at_ms));
    lastMs = at_ms;
  } catch (e) {
    console.error(`${file}:${i + 1}: ${e.message}`);
    process.exit(1);
  }
}
// End of session: anything still pending becomes a server-layer failure.
print(classifier.close(lastMs));
