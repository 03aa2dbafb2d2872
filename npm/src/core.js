// The one module that touches the napi binding of lowdown-core. Every classification,
// label, redaction and log-diff rule lives in the Rust core; the rest of the package calls
// these names only, so a renamed export is a one-line fix here.

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const native = require('lowdown-core-node');

/** Streaming MCP session classifier (SPEC §3.1): `feed(direction, bytes, nowMs)` → exchanges. */
export const Classifier = native.Classifier;

/** Builds an interaction record from a finished exchange, or null when it is not recorded. */
export const buildRecord = native.buildRecord;

/** SPEC §3.2 target label from a command line (`string[]`). */
export const targetLabel = native.targetLabel;

/** Watch-log state machine (SPEC §3.4). */
export const LogDiff = native.LogDiff;

/** Appends one text content item to a JSON-RPC result line, keeping every other byte; null when it has no `content` array. */
export const appendTextItem = native.appendTextItem;

/** Expands `%VAR%`, `$VAR`, `${VAR}` and a leading `~` in a path. */
export const expandPath = native.expandPath;
