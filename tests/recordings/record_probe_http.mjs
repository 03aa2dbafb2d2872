// Records one Scanner-style probe of the real @modelcontextprotocol/server-everything over
// streamable HTTP (initialize, notifications/initialized, tools/list, DELETE), byte for byte,
// into probe-everything-http.json. tests/vectors/tools/gen_benchmark.mjs replays it as a
// conformance vector.
//
//   node tests/recordings/record_probe_http.mjs
//
// server-everything comes from the workspace's node_modules (`npm ci` at the root).
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const pkg = ["node_modules", "npm/node_modules"]
  .map((d) => path.join(root, d, "@modelcontextprotocol/server-everything"))
  .find((p) => existsSync(p));
if (!pkg) throw new Error("server-everything is not installed: run `npm ci` at the repository root");
const version = JSON.parse(readFileSync(path.join(pkg, "package.json"), "utf8")).version;

const port = await new Promise((resolve) => {
  const s = createServer().listen(0, "127.0.0.1", () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const child = spawn(process.execPath, [path.join(pkg, "dist/index.js"), "streamableHttp"], {
  env: { ...process.env, PORT: String(port) },
  stdio: ["ignore", "pipe", "pipe"],
});
await new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error("server-everything did not start")), 30000);
  const watch = (chunk) => {
    if (String(chunk).includes("listening on port")) {
      clearTimeout(timer);
      resolve();
    }
  };
  child.stdout.on("data", watch);
  child.stderr.on("data", watch);
});

const url = `http://127.0.0.1:${port}/mcp`;
const base = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const replies = [];
async function send(method, body, headers) {
  const started = performance.now();
  const r = await fetch(url, { method, headers: { ...base, ...headers }, body: body && JSON.stringify(body) });
  const text = await r.text();
  replies.push({
    status: r.status,
    content_type: r.headers.get("content-type"),
    session_id: r.headers.get("mcp-session-id"),
    elapsed_ms: Math.round((performance.now() - started) * 10) / 10,
    body: text,
  });
  return r;
}
try {
  const init = await send("POST", {
    jsonrpc: "2.0", id: 1, method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "lowdown-scanner", version: "0.1.0" } },
  });
  const session = { "mcp-session-id": init.headers.get("mcp-session-id"), "mcp-protocol-version": "2025-06-18" };
  await send("POST", { jsonrpc: "2.0", method: "notifications/initialized" }, session);
  await send("POST", { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }, session);
  await send("DELETE", null, session);
} finally {
  child.kill();
}
const out = path.join(here, "probe-everything-http.json");
writeFileSync(out, JSON.stringify({ server: `@modelcontextprotocol/server-everything@${version}`, transport: "streamableHttp", replies }, null, 1) + "\n");
console.log(`${out}: ${replies.length} replies from server-everything ${version}`);
