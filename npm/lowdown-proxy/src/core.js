// The one module that touches lowdown-core (native, or its WebAssembly fallback; see the
// lowdown-core package). Every classification, record, label, redaction and log-diff rule
// lives in the Rust core; the rest of the package calls these names only.

import os from 'node:os';
import core from 'lowdown-core';

/** Which build of the core loaded: `native` or `wasm`. */
export const kind = core.kind;

/** Records one MCP session: `feed(direction, bytes, nowMs)` → finished records as JSON lines. */
export const Recorder = core.Recorder;

/** SPEC §3.2 target label from a command line (`string[]`), or null. */
export const targetLabel = core.targetLabel;

/** Watch-log state machine (SPEC §3.4). */
export const LogDiff = core.LogDiff;

/** Appends one text content item to a JSON-RPC result line, keeping every other byte; null when it has no `content` array. */
export const appendTextItem = core.appendTextItem;

/**
 * Expands `%VAR%`, `$VAR`, `${VAR}` and a leading `~` in a path (`env` as a plain object).
 * @param {string} path
 * @param {Record<string, string|undefined>} env
 * @param {string} [home]
 * @returns {string}
 */
export const expandPath = (path, env, home) => core.expandPath(path, JSON.stringify(env), home);

/** Bit of `Recorder.flags()`: the last feed finished a client `tools/call` whose result can carry the log block. */
export const CARRIES_LOG = 1;

/** The spool's format, names and bounds (SPEC §3), shared with every other host. */
export const spool = {
  /** @type {() => {max_files: number, max_records_per_file: number, stale_claim_ms: number}} */
  limits: () => JSON.parse(core.spoolLimits()),
  fileName: core.spoolFileName,
  claimName: core.spoolClaimName,
  /** @type {(name: string) => {kind: 'waiting'} | {kind: 'claimed', pid: number, original: string} | {kind: 'other'}} */
  entry: (name) => JSON.parse(core.spoolEntry(name)),
  encode: core.spoolEncode,
  /** @type {(text: string) => {records: string[], corrupt: number}} */
  decode: (text) => JSON.parse(core.spoolDecode(text)),
  /** Which of the spool's files go to keep its bound. @type {(names: string[]) => string[]} */
  overBound: (names) => JSON.parse(core.spoolOverBound(JSON.stringify(names))),
  dropped: core.spoolDropped,
};

/**
 * What the answer to a batch of `len` records means (SPEC §3, §5; the core's
 * `record::delivery`, as prowl has it): `{delivered, duplicates, rejected, keep: index[],
 * pause_ms, reason}`. `status` is null when no answer came.
 * @param {number} len
 * @param {number|null} status
 * @param {string|null} retryAfter
 * @param {string|null} body
 */
export const delivery = (len, status, retryAfter, body) => JSON.parse(core.delivery(len, status, retryAfter, body));

/**
 * A host's settings from its environment (SPEC §2): `{api_url, home, record, telemetry,
 * debug}`; `client` is `proxy` (this package) or `telemetry`.
 * @param {Record<string, string|undefined>} env
 * @param {'proxy'|'telemetry'} [client]
 */
export function settings(env, client = 'proxy') {
  const strings = Object.fromEntries(Object.entries(env).filter(([, v]) => typeof v === 'string'));
  return JSON.parse(core.settingsFromEnv(JSON.stringify(strings), os.homedir(), client));
}

/** node.json's format (SPEC §3.5): read one, or write a fresh one. */
export const nodeIdentity = {
  /** `{node_id, created_at}`, or null when `text` holds no identity. @type {(text: string) => {node_id: string, created_at: string} | null} */
  parse: (text) => JSON.parse(core.parseNodeIdentity(text) ?? 'null'),
  /** The text of a new node.json from 12 hex digits of randomness and the clock. */
  fresh: core.newNodeIdentity,
};
