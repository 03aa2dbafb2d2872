// The one module that touches lowdown-core (native, or its WebAssembly fallback; see the
// lowdown-core package). Every classification, record, label, redaction and log-diff rule
// lives in the Rust core; the rest of the package calls these names only.

import os from 'node:os';
import core from 'lowdown-core';

/** Which build of the core loaded: `native` or `wasm`. */
export const kind = core.kind;

/** Records one MCP session: `feed(direction, bytes, nowMs)` → finished records as JSON lines. */
export const Recorder = core.Recorder;

/**
 * Whether OpenTelemetry export is on (the core's `otel_export::decide`): `{export: 'on',
 * traces, metrics, service_name, resource}` (each signal `{url, protocol, headers, timeout_ms}`
 * or null) or `{export: 'off', reason}`.
 * @param {Record<string, string|undefined>} env
 */
export function otelConfig(env) {
  const strings = Object.fromEntries(Object.entries(env).filter(([, v]) => typeof v === 'string'));
  return JSON.parse(core.otelConfig(JSON.stringify(strings)));
}

/** One session's OpenTelemetry export: spans in, OTLP bodies out (see record/otel.js). */
export const OtelExporter = core.OtelExporter;

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

/**
 * What the spool's entries hold, for a status line (SPEC §3; the core's `spool::tally`):
 * each name with its text ('' when unreadable).
 * @param {string[]} names
 * @param {string[]} texts
 * @returns {{files: number, records: number, dropped: number}}
 */
export const spoolTally = (names, texts) => JSON.parse(core.spoolTally(names, texts));

/** The spool's and node.json's plans (SPEC §3, §3.5), run by record/files.js. */
export const { SpoolClaim, SpoolWrite, NodeIdentityLoad } = core;

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
 * The local node an announcement's text names, or null (SPEC §2).
 * @param {string} text
 * @returns {{url: string, pid: number, started_at: string}|null}
 */
export const localNode = (text) => JSON.parse(core.localNode(text) ?? 'null');

/**
 * The value of `key` in the text of LOWDOWN_HOME/config.json (null: no file), or null;
 * throws with `code` `unknown_setting`, `invalid_value` or `not_settings`.
 * @type {(text: string|null, key: string) => string|null}
 */
export const storedGet = core.storedGet;

/**
 * The text of config.json with `key` set to `value` (null: removed); throws as `storedGet`.
 * @type {(text: string|null, key: string, value: string|null) => string}
 */
export const storedSet = core.storedSet;

/**
 * Where a host delivers and queries (the core's `stored::destination`).
 * @param {object} s the settings
 * @param {string|null} stored config.json's text
 * @param {string|null} announcement local-node.json's text
 * @returns {{url: string, via: 'environment'|'stored'|'local_node'|'default', may_start: boolean, problem?: string}}
 */
export const destination = (s, stored, announcement) => JSON.parse(core.destination(JSON.stringify(s), stored, announcement));

/**
 * A host's settings from its environment (SPEC §2): `{api_url, home, record, telemetry,
 * debug, local_node, autostart}`; `client` is `proxy` (this package) or `telemetry`.
 * @param {Record<string, string|undefined>} env
 * @param {'proxy'|'telemetry'} [client]
 */
export function settings(env, client = 'proxy') {
  const strings = Object.fromEntries(Object.entries(env).filter(([, v]) => typeof v === 'string'));
  return JSON.parse(core.settingsFromEnv(JSON.stringify(strings), os.homedir(), client));
}
