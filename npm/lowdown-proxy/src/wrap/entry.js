// Wrapping and unwrapping one MCP server entry, as text splices on the parsed file.
//
// Reversible scheme: wrap replaces the entry's `command` with "npx" and its `args` with
// ["-y", "lowdown-proxy", "--target", LABEL, ("--actor", ACTOR,) "--", <command>, ...<args>]
// (a Windows `cmd /c X ...` entry keeps `cmd /c` in front: `cmd /c npx -y lowdown-proxy ... -- X ...`),
// and appends one member, `"_lowdown": {"command": ..., "args": ...}`, holding the original
// `command` and `args` values as their exact source text (an absent `args` stays absent there).
// Unwrap puts that text back and removes what wrap added, so an untouched wrapped file
// unwraps to the original bytes. Nothing else in the file is touched.

import { member, present } from './jsonc.js';

/** @typedef {import('./jsonc.js').SrcNode} SrcNode */
/** @typedef {import('./jsonc.js').ObjectNode} ObjectNode */
/** @typedef {import('./jsonc.js').SrcMember} SrcMember */
/** One splice: replace `start`..`end` by `text`; `seq` orders splices at one offset. */
/** @typedef {{start: number, end: number, text: string, seq: number}} Edit */
/**
 * What an entry is (inspectEntry).
 * @typedef {{state: string, command?: string, args?: string[], reason?: string, original?: {command: string, args?: string[]}}} EntryInfo
 */
/** @typedef {{nl: string, multiline: boolean, memberIndent: string, unit: string, colon: string}} Layout */

/** The key under which a wrapped entry keeps its original command and args. */
export const MARKER_KEY = '_lowdown';
/** The package the wrapped entries run through. */
export const PROXY_PACKAGE = 'lowdown-proxy';

/**
 * Says what an entry is: `unwrapped` (a stdio entry that can be wrapped), `wrapped` (by
 * this tool), `manual` (already runs through lowdown-proxy without a `_lowdown` record),
 * `remote` (a `url`/`serverUrl` entry: not wrappable) or `invalid` (with `reason`).
 * @param {SrcNode | null | undefined} node the entry's object node
 * @returns {EntryInfo}
 */
export function inspectEntry(node) {
  if (!node || node.kind !== 'object') return { state: 'invalid', reason: 'entry is not an object' };
  const v = node.value;
  const marker = member(node, MARKER_KEY);
  const args = Array.isArray(v.args) ? v.args : undefined;
  if (marker) {
    const orig = marker.value.value;
    if (!orig || typeof orig !== 'object' || typeof orig.command !== 'string' || !member(marker.value, 'command')) {
      return { state: 'invalid', reason: `"${MARKER_KEY}" has no original "command" to restore` };
    }
    if (!member(node, 'command')) return { state: 'invalid', reason: `wrapped entry lost its "command"; restore it by hand from "${MARKER_KEY}"` };
    return { state: 'wrapped', command: v.command, args, original: { command: orig.command, args: orig.args } };
  }
  if (typeof v.command !== 'string') {
    if (typeof v.uses === 'string') {
      return { state: 'remote', reason: `a Continue Hub block (uses: ${v.uses}): its command is defined on the Hub, not in this file` };
    }
    if (typeof v.url === 'string' || typeof v.serverUrl === 'string' || ['http', 'sse', 'streamable-http', 'streamableHttp'].includes(v.type)) {
      return { state: 'remote', reason: 'remote (url) server: not wrappable, there is no local process to relay' };
    }
    return { state: 'invalid', reason: 'no "command" string' };
  }
  if (v.args !== undefined && (!args || args.some((/** @type {unknown} */ a) => typeof a !== 'string'))) {
    return { state: 'invalid', reason: '"args" is not an array of strings' };
  }
  const words = [v.command, ...(args || [])];
  if (words.some((w) => w === PROXY_PACKAGE || /(^|[\\/])lowdown-proxy(\.js|\.cmd)?$/.test(w) || w.startsWith(`${PROXY_PACKAGE}@`))) {
    return { state: 'manual', command: v.command, args, reason: 'already runs through lowdown-proxy (set up by hand; left alone)' };
  }
  return { state: 'unwrapped', command: v.command, args };
}

/**
 * The command the server really runs: Windows configs often start it through `cmd /c`,
 * which stays in front of the proxy and is not part of what the proxy runs.
 * @param {string} command
 * @param {string[]} args
 * @returns {{prefix: string[], command: string, args: string[]}} `prefix` is `[]` or `['/c']`-style shell words
 */
export function innerCommand(command, args) {
  if (/^cmd(\.exe)?$/i.test(command) && /^\/c$/i.test(args[0] ?? '') && args.length > 1) {
    return { prefix: [args[0]], command: args[1], args: args.slice(2) };
  }
  return { prefix: [], command, args };
}

/**
 * The command and args of a wrapped entry: `npx -y lowdown-proxy [--target L] [--actor A] --
 * <command> <args...>`, or the same behind `cmd /c` when the original used it.
 * @param {string} command the original command
 * @param {string[]} args the original args
 * @param {{label?: string|null, actor?: string}} opts target label and actor for the proxy
 * @returns {{command: string, args: string[]}}
 */
export function wrappedCommand(command, args, { label, actor } = {}) {
  const inner = innerCommand(command, args);
  const out = ['-y', PROXY_PACKAGE];
  if (label) out.push('--target', label);
  if (actor) out.push('--actor', actor);
  out.push('--', inner.command, ...inner.args);
  return inner.prefix.length ? { command, args: [...inner.prefix, 'npx', ...out] } : { command: 'npx', args: out };
}

/**
 * @param {string} text
 * @param {number} pos
 */
function lineIndent(text, pos) {
  const lineStart = text.lastIndexOf('\n', pos - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))?.[0] ?? ''; // always matches (possibly empty)
}

/**
 * How the entry is laid out, so added text looks as if the user had written it.
 * @param {string} text
 * @param {ObjectNode} node
 * @returns {Layout}
 */
function layout(text, node) {
  // Line ending and layout are read from the entry itself, so a file's size does not matter.
  const firstNl = text.indexOf('\n', node.start);
  const multiline = firstNl >= 0 && firstNl < node.end;
  const nl = multiline && text[firstNl - 1] === '\r' ? '\r\n' : '\n';
  const first = node.members[0];
  const base = lineIndent(text, node.start);
  const memberIndent = multiline && first ? lineIndent(text, first.keyStart) : base;
  let unit = memberIndent.startsWith(base) ? memberIndent.slice(base.length) : '';
  if (!unit) unit = /\t/.test(memberIndent) ? '\t' : '  ';
  const colon = first ? text.slice(first.keyEnd, first.value.start) : ': ';
  return { nl, multiline, memberIndent, unit, colon: /^\s*:\s*$/.test(colon) ? colon : ': ' };
}

/**
 * @param {string} text
 * @param {string[]} items
 * @param {import('./jsonc.js').ArrayNode | undefined} like the entry's `args` list, whose style the new one takes
 * @param {Layout} lay
 */
function formatArray(text, items, like, lay) {
  const strs = items.map((s) => JSON.stringify(s));
  if (like && like.items.length > 0) {
    const raw = text.slice(like.start, like.end);
    if (raw.includes('\n')) {
      const ind = lineIndent(text, like.items[0].start);
      return `[${lay.nl}${strs.map((s) => ind + s).join(`,${lay.nl}`)}${lay.nl}${lineIndent(text, like.end - 1)}]`;
    }
    const open = text.slice(like.start + 1, like.items[0].start);
    const close = text.slice(like.items[like.items.length - 1].end, like.end - 1).replace(/,/, '');
    const sep = like.items.length > 1 ? text.slice(like.items[0].end, like.items[1].start) : ', ';
    return `[${open}${strs.join(/^\s*,\s*$/.test(sep) ? sep : ', ')}${/^\s*$/.test(close) ? close : ''}]`;
  }
  if (lay.multiline) {
    const ind = lay.memberIndent + lay.unit;
    return `[${lay.nl}${strs.map((s) => ind + s).join(`,${lay.nl}`)}${lay.nl}${lay.memberIndent}]`;
  }
  return `[${strs.join(', ')}]`;
}

/**
 * @param {string} key
 * @param {string} valueText
 * @param {Layout} lay
 */
function memberText(key, valueText, lay) {
  return `${JSON.stringify(key)}${lay.colon}${valueText}`;
}

/** @param {Layout} lay */
function separator(lay) {
  return lay.multiline ? `,${lay.nl}${lay.memberIndent}` : ', ';
}

/**
 * The splices that wrap an `unwrapped` entry.
 * @param {string} text the file contents
 * @param {ObjectNode} node the entry's object node
 * @param {{label?: string|null, actor?: string}} opts
 * @returns {Edit[]}
 */
export function wrapEdits(text, node, opts) {
  const lay = layout(text, node);
  const cmd = present(node, 'command');
  const argsMember = member(node, 'args');
  const original = { command: cmd.value.value, args: argsMember ? argsMember.value.value : [] };
  const wrapped = wrappedCommand(original.command, original.args, opts);
  // An entry that can be wrapped has `args` as a list of strings, or none (inspectEntry).
  const argsText = formatArray(text, wrapped.args, /** @type {import('./jsonc.js').ArrayNode | undefined} */ (argsMember?.value), lay);
  /** @type {Edit[]} */
  const edits = [];
  if (wrapped.command !== original.command) edits.push({ start: cmd.value.start, end: cmd.value.end, text: JSON.stringify(wrapped.command), seq: 0 });
  if (argsMember) edits.push({ start: argsMember.value.start, end: argsMember.value.end, text: argsText, seq: 1 });
  else edits.push({ start: cmd.value.end, end: cmd.value.end, text: separator(lay) + memberText('args', argsText, lay), seq: 1 });
  // The original values travel as source text, indented one level deeper.
  const inner = { ...lay, memberIndent: lay.memberIndent + lay.unit };
  const deeper = (/** @type {string} */ raw) => raw.replace(/\n/g, `\n${lay.unit}`);
  const parts = [memberText('command', text.slice(cmd.value.start, cmd.value.end), inner)];
  if (argsMember) parts.push(memberText('args', deeper(text.slice(argsMember.value.start, argsMember.value.end)), inner));
  const markerText = lay.multiline
    ? `{${lay.nl}${inner.memberIndent}${parts.join(separator(inner))}${lay.nl}${lay.memberIndent}}`
    : `{${parts.join(', ')}}`;
  const last = node.members[node.members.length - 1]; // a wrappable entry has its command
  edits.push({ start: last.end, end: last.end, text: separator(lay) + memberText(MARKER_KEY, markerText, lay), seq: 2 });
  return edits;
}

/**
 * The span that removes a member together with the separator in front of it.
 * @param {ObjectNode} node
 * @param {SrcMember} m
 */
function removal(node, m) {
  const i = node.members.indexOf(m);
  if (i > 0) return { start: node.members[i - 1].end, end: m.end };
  const next = node.members[i + 1];
  return { start: m.start, end: next ? next.start : m.end };
}

/**
 * The splices that unwrap a `wrapped` entry: the original `command` and `args` text comes
 * back from `_lowdown`, and the members wrap added are removed.
 * @param {string} text the file contents
 * @param {ObjectNode} node the entry's object node
 * @returns {Edit[]}
 */
export function unwrapEdits(text, node) {
  const lay = layout(text, node);
  const marker = present(node, MARKER_KEY);
  const origCmd = present(marker.value, 'command');
  const origArgs = member(marker.value, 'args');
  const cmd = present(node, 'command');
  const argsMember = member(node, 'args');
  const shallower = (/** @type {string} */ raw) => raw.split(`\n${lay.unit}`).join('\n');
  const cmdText = text.slice(origCmd.value.start, origCmd.value.end);
  /** @type {Edit[]} */
  const edits = [];
  edits.push({ start: cmd.value.start, end: cmd.value.end, text: cmdText, seq: 0 });
  if (origArgs) {
    const argsText = shallower(text.slice(origArgs.value.start, origArgs.value.end));
    if (argsMember) edits.push({ start: argsMember.value.start, end: argsMember.value.end, text: argsText, seq: 1 });
    else {
      edits.push({ start: cmd.end, end: cmd.end, text: separator(lay) + memberText('args', argsText, lay), seq: 1 });
    }
  } else if (argsMember) {
    edits.push({ ...removal(node, argsMember), text: '', seq: 1 });
  }
  edits.push({ ...removal(node, marker), text: '', seq: 2 });
  return edits;
}

/**
 * Applies non-overlapping splices to a text in one pass (linear in its size). Insertions
 * at the same position go in `seq` order.
 * @param {string} text
 * @param {{start: number, end: number, text: string, seq?: number}[]} edits
 * @returns {string}
 */
export function applyEdits(text, edits) {
  const sorted = [...edits].sort((a, b) => a.start - b.start || a.end - a.start - (b.end - b.start) || (a.seq ?? 0) - (b.seq ?? 0));
  const parts = [];
  let at = 0;
  for (const e of sorted) {
    parts.push(text.slice(at, e.start), e.text);
    at = Math.max(at, e.end);
  }
  parts.push(text.slice(at));
  return parts.join('');
}
