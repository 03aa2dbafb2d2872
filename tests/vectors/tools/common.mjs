// Shared helpers for the vector generators. Expected values are computed here, in
// JavaScript, independently of the Rust core.
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

export const VECTORS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Expands the compact `$repeat`/`$concat`/`$bytes_hex`/`$bytes` forms into a Buffer. */
export function bytes(v) {
  if (typeof v === "string") return Buffer.from(v, "utf8");
  if (v && v.$repeat) return Buffer.concat(Array(v.$repeat[1]).fill(bytes(v.$repeat[0])));
  if (v && (v.$concat || v.$bytes)) return Buffer.concat((v.$concat || v.$bytes).map(bytes));
  if (v && typeof v.$bytes_hex === "string") return Buffer.from(v.$bytes_hex, "hex");
  throw new Error("not a string or byte form: " + JSON.stringify(v));
}

/** Text as a JavaScript host would decode it (invalid UTF-8 becomes U+FFFD). */
export const text = (v) => bytes(v).toString("utf8");

export const sha256 = (s) => createHash("sha256").update(s, "utf8").digest("hex");

// ---- the §3.3 hashes (the Lowdown Scanner's reference behaviour) -------------------------
/** Canonical JSON: sorted keys, `JSON.stringify` for everything else. */
export function canon(v) {
  if (Array.isArray(v)) return "[" + v.map(canon).join(",") + "]";
  if (v !== null && typeof v === "object")
    return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + canon(v[k])).join(",") + "}";
  return JSON.stringify(v);
}

function pick(tool, keys) {
  const t = tool !== null && typeof tool === "object" && !Array.isArray(tool) ? tool : {};
  const o = {};
  for (const k of keys) if (Object.prototype.hasOwnProperty.call(t, k)) o[k] = t[k];
  return o;
}

/** sha256 of the sorted canonical tools, each cut to `keys`. */
export function hashList(tools, keys) {
  return sha256("[" + tools.map((t) => canon(pick(t, keys))).sort().join(",") + "]");
}

/** The keys behind `schema_hash` and `desc_hash`. */
export const SCHEMA_KEYS = ["name", "inputSchema", "outputSchema"];
export const DESC_KEYS = ["name", "title", "description"];

export function writeVectors(file, operation, description, cases) {
  const names = new Set();
  for (const c of cases) {
    if (names.has(c.name)) throw new Error("duplicate case name " + c.name);
    names.add(c.name);
  }
  const body = JSON.stringify({ operation, description, cases }, null, 1) + "\n";
  writeFileSync(path.join(VECTORS, file), body);
  console.log(`${file}: ${cases.length} cases`);
}

export function assertEq(a, b, what) {
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`self-check failed: ${what}: ${JSON.stringify(a)} != ${JSON.stringify(b)}`);
}

/** A session's `Facts` as the core serialises them, nothing seen but what `o` sets. */
export const facts = (o = {}) => ({
  server_name: null, server_version: null, protocol_version: null,
  schema_hash: null, desc_hash: null, tools_has_more: false, tool_count: null, ...o,
});

/** A spool file's name: <ms:15>-<seq:8>-<pid>-<token>.jsonl. */
export const spoolName = (ms, seq, pid, token) =>
  `${String(ms).padStart(15, "0")}-${String(seq).padStart(8, "0")}-${pid}-${token}.jsonl`;

/** An `Exchange` as the core serialises it, with the defaults of a successful `tools/call`. */
export function exchange(o) {
  const method = o.method ?? "tools/call";
  return {
    direction: o.direction ?? "client_to_server",
    id: o.id,
    method,
    tool_name: o.tool_name ?? null,
    request_kind: o.request_kind ?? (method === "tools/call" ? "tool" : "protocol"),
    outcome: o.outcome ?? "success",
    failure_type: o.failure_type ?? null,
    error_layer: o.error_layer ?? null,
    error_code: o.error_code ?? null,
    started_ms: o.started_ms,
    latency_ms: o.latency_ms,
    has_content: o.has_content ?? false,
  };
}
