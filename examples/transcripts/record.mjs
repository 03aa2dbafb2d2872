// Records a real MCP stdio session with @modelcontextprotocol/server-everything into
// server-everything.jsonl: one JSON object per line, {direction, at_ms, line}, where `line`
// is the raw message line exactly as it crossed the pipe (without its "\n") and `at_ms`
// is milliseconds since the session started.
//
// Run from the repository root after `npm ci` in npm/:
//   node examples/transcripts/record.mjs > examples/transcripts/server-everything.jsonl
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../../npm/lowdown-proxy/package.json"));
const pkg = require.resolve("@modelcontextprotocol/server-everything/package.json");
const entry = path.join(path.dirname(pkg), "dist/index.js");

const t0 = performance.now();
const now = () => Math.round((performance.now() - t0) * 1000) / 1000;
const out = (direction, line) => process.stdout.write(JSON.stringify({ direction, at_ms: now(), line }) + "\n");

// No network: the gzip tool only gets a URL scheme it refuses before fetching.
const child = spawn(process.execPath, [entry, "stdio"], {
  stdio: ["pipe", "pipe", "ignore"],
  env: { ...process.env, GZIP_ALLOWED_DOMAINS: "example.invalid" },
});

const waiting = new Map();
let tail = "";
child.stdout.setEncoding("utf8");
child.stdout.on("data", (chunk) => {
  tail += chunk;
  let nl;
  while ((nl = tail.indexOf("\n")) >= 0) {
    const line = tail.slice(0, nl);
    tail = tail.slice(nl + 1);
    out("server_to_client", line);
    const msg = JSON.parse(line);
    if (msg.method && msg.id !== undefined) answerServer(msg);
    else if (msg.id !== undefined && waiting.has(msg.id)) {
      waiting.get(msg.id)(msg);
      waiting.delete(msg.id);
    }
  }
});

function send(msg) {
  const line = JSON.stringify(msg);
  out("client_to_server", line);
  child.stdin.write(line + "\n");
}

function request(id, method, params) {
  return new Promise((resolve) => {
    waiting.set(id, resolve);
    send({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });
  });
}

// What a real client answers to the server's own requests.
function answerServer(msg) {
  if (msg.method === "roots/list") {
    send({ jsonrpc: "2.0", id: msg.id, result: { roots: [{ uri: "file:///home/demo/project", name: "project" }] } });
  } else if (msg.method === "sampling/createMessage") {
    send({
      jsonrpc: "2.0",
      id: msg.id,
      result: { role: "assistant", model: "demo-model", stopReason: "endTurn", content: { type: "text", text: "A short story." } },
    });
  } else {
    send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "Method not found" } });
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

await request(1, "initialize", {
  protocolVersion: "2025-06-18",
  capabilities: { roots: { listChanged: true }, sampling: {} },
  clientInfo: { name: "lowdown-demo-client", version: "0.1.0" },
});
send({ jsonrpc: "2.0", method: "notifications/initialized" });
await sleep(200);
await request(2, "tools/list");
await request(3, "tools/call", { name: "echo", arguments: { message: "hello from lowdown" } });
await request(4, "tools/call", { name: "get-sum", arguments: { a: 2, b: 3 } });
await request(5, "tools/call", { name: "gzip-file-as-resource", arguments: { name: "x.gz", data: "ftp://example.invalid/x" } });
await request(6, "tools/call", { name: "no-such-tool", arguments: {} });
await request(7, "tools/call", { name: "get-sum", arguments: { a: "two" } });
await request(8, "ping");
await request(9, "tools/call", { name: "trigger-sampling-request", arguments: { prompt: "Tell a story", maxTokens: 50 } });
request(10, "tools/call", { name: "trigger-long-running-operation", arguments: { duration: 1, steps: 2 } });
await sleep(300);
send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 10, reason: "User cancelled" } });
await sleep(1200);
await request(11, "tools/call", { name: "echo", arguments: { message: "still alive" } });
child.stdin.end();
await new Promise((r) => child.on("exit", r));
