// Feeds a recorded MCP stdio session (examples/transcripts/*.jsonl) through lowdown-core's
// Recorder (the `classify` state machine and record building), via the native Node binding,
// and prints one interaction record per line, keys sorted.
//
//   node examples/node/classify-transcript.mjs [transcript.jsonl]
//
// In your own project: `npm install lowdown-core`, then the same import.
import { readFileSync } from "node:fs";
import core from "lowdown-core";

const file = process.argv[2] ?? new URL("../transcripts/server-everything.jsonl", import.meta.url);
// Who records, for what. The transcript holds no command line, so the target is fixed.
const context = { actor: "example", target: "npm:@modelcontextprotocol/server-everything" };
// Record ids are "example-0", "example-1", ...: the prefix is yours (use a random one).
const recorder = new core.Recorder(JSON.stringify(context), "example");

// Finished records come back as JSON lines; sorting the keys makes every host print the same.
const sorted = (v) => (v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])])) : v);
const print = (lines) => lines && lines.split("\n").forEach((l) => console.log(JSON.stringify(sorted(JSON.parse(l)))));

let lastMs = 0;
for (const [i, text] of readFileSync(file, "utf8").split("\n").entries()) {
  if (!text.trim()) continue;
  try {
    const { direction, at_ms, line } = JSON.parse(text);
    print(recorder.feed(direction, Buffer.from(line + "\n"), at_ms));
    lastMs = at_ms;
  } catch (e) {
    console.error(`${file}:${i + 1}: ${e.message}`);
    process.exit(1);
  }
}
// End of session: the recorded client closed its side, so anything still pending was
// given up by the client (cancelled), not failed by the server.
print(recorder.close(lastMs, "client_ended"));
