// Wrapping and unwrapping one server entry written as a YAML block mapping (Continue's
// `mcpServers` list items), as text splices. The scheme is entry.js's: `command` and `args`
// are rewritten to run through the proxy, and one member is appended,
//
//     _lowdown:
//       command: <the original command, as its source text>
//       args: <the original args, as their source text>
//
// which unwrap puts back before removing what wrap added, so a file nobody touched in between
// comes back byte for byte. Entries in flow style (`{name: x, command: y}`) are JSON-like and
// go through entry.js. Comments, quoting and blank lines outside the rewritten values stay.

import { member, present } from './jsonc.js';
import { MARKER_KEY, wrappedCommand } from './entry.js';
import { yamlScalar } from './yamlsrc.js';

/** @typedef {import('./jsonc.js').SrcNode} SrcNode */
/** @typedef {import('./jsonc.js').ObjectNode} ObjectNode */
/** @typedef {import('./jsonc.js').SrcMember} SrcMember */
/** @typedef {import('./entry.js').Edit} Edit */

/** @type {(text: string, pos: number) => number} */
const column = (text, pos) => pos - (text.lastIndexOf('\n', pos - 1) + 1);

// The end of the line holding `pos`, before its line break (so a trailing comment stays on it).
/**
 * @param {string} text
 * @param {number} pos
 */
function lineEnd(text, pos) {
  const nl = text.indexOf('\n', pos);
  if (nl < 0) return text.length;
  return text[nl - 1] === '\r' ? nl - 1 : nl;
}

// Where the line break before the line holding `pos` starts.
/**
 * @param {string} text
 * @param {number} pos
 */
function breakBefore(text, pos) {
  const nl = text.lastIndexOf('\n', pos - 1);
  return nl > 0 && text[nl - 1] === '\r' ? nl - 1 : nl;
}

// How the entry is laid out, so added lines look as if the user had written them.
/**
 * @param {string} text
 * @param {ObjectNode} node
 */
function layout(text, node) {
  const firstNl = text.indexOf('\n', node.start);
  const nl = firstNl > 0 && text[firstNl - 1] === '\r' ? '\r\n' : '\n';
  const col = column(text, node.members[0].keyStart);
  // The indentation step: how far this entry's nested collections sit in from its keys.
  let unit = 2;
  for (const m of node.members) {
    const v = m.value;
    if ((v.kind === 'object' || v.kind === 'array') && !v.flow && v.start > /** @type {number} */ (m.colonEnd)) {
      const step = column(text, v.kind === 'object' ? v.members[0]?.keyStart ?? v.start : v.start) - col;
      if (step > 0) {
        unit = step;
        break;
      }
    }
  }
  return { nl, ind: ' '.repeat(col), unit: ' '.repeat(unit) };
}

/** @type {(text: string, node: SrcNode) => string} */
const raw = (text, node) => text.slice(node.start, node.end);

// The source text of each wrapped arg. The original args end the list (and the command sits
// before them), so those keep the exact text the user wrote; the rest are written in the
// style of the list's first item.
/**
 * @param {string} text
 * @param {string[]} wrapped
 * @param {SrcNode} cmd
 * @param {SrcNode} [args]
 */
function itemTexts(text, wrapped, cmd, args) {
  /** @type {string[]} */
  const out = [];

  const orig = args ? /** @type {import('./jsonc.js').ArrayNode} */ (args).items : [];
  let j = orig.length - 1;
  for (let i = wrapped.length - 1; i >= 0; i--) {
    const o = orig[j];
    if (j >= 0 && o.kind === 'string' && o.value === wrapped[i] && !raw(text, o).includes('\n')) {
      out[i] = raw(text, o);
      j--;
      continue;
    }
    j = -1;
    const quoted = cmd.style === 'QUOTE_SINGLE' || cmd.style === 'QUOTE_DOUBLE';
    const isCommand = i === wrapped.length - orig.length - 1 && wrapped[i] === cmd.value;
    out[i] = isCommand && quoted && !raw(text, cmd).includes('\n') ? raw(text, cmd) : yamlScalar(wrapped[i], orig[0] ?? cmd);
  }
  return out;
}

/** @type {(texts: string[], indent: string, nl: string) => string} */
const blockSeq = (texts, indent, nl) => texts.map((t, i) => `${i ? `${nl}${indent}` : ''}- ${t}`).join('');

/**
 * @param {string} text
 * @param {string[]} texts
 * @param {import('./jsonc.js').ArrayNode} like
 */
function flowSeq(text, texts, like) {
  const open = like.items.length ? text.slice(like.start + 1, like.items[0].start) : '';
  const close = like.items.length ? text.slice(like.items[like.items.length - 1].end, like.end - 1).replace(/,/, '') : '';
  const sep = like.items.length > 1 ? text.slice(like.items[0].end, like.items[1].start) : ', ';
  const tidy = (/** @type {string} */ s) => (/^[ \t]*$/.test(s) ? s : '');
  return `[${tidy(open)}${texts.join(/^[ \t]*,[ \t]*$/.test(sep) ? sep : ', ')}${tidy(close)}]`;
}

/**
 * Says why an entry cannot be edited by splices without changing something else (a key
 * written as `? key`, a value that is an alias of another or an anchor others may alias, a
 * command from a merge key), or null when it can.
 * @param {ObjectNode} node the entry's mapping node (yamlsrc.js)
 * @returns {string|null}
 */
export function entryProblem(node) {
  for (const key of ['command', 'args', MARKER_KEY]) {
    const m = member(node, key);
    if (!m) continue;
    if (/** @type {number} */ (m.colonEnd) < 0) return `"${key}" is written as an explicit ? key; edit this entry by hand`;
    if (m.value.kind === 'alias') return `"${key}" is a YAML alias (*name) of another value; edit this entry by hand`;
    if (m.value.anchor) return `"${key}" carries a YAML anchor (&${m.value.anchor}) other entries may share; edit this entry by hand`;
  }
  if (typeof node.value.command === 'string' && !member(node, 'command')) return '"command" comes from a merge key (<<); edit this entry by hand';
  return null;
}

/**
 * The splices that wrap an `unwrapped` block entry.
 * @param {string} text the file contents
 * @param {ObjectNode} node the entry's block mapping node
 * @param {{label?: string|null, actor?: string}} opts
 * @returns {Edit[]}
 */
export function yamlWrapEdits(text, node, opts) {
  const { nl, ind, unit } = layout(text, node);
  const cmd = present(node, 'command');
  const args = member(node, 'args');
  const wrapped = wrappedCommand(cmd.value.value, args ? args.value.value : [], opts);
  /** @type {Edit[]} */
  const edits = [];
  if (wrapped.command !== cmd.value.value) edits.push({ start: cmd.value.start, end: cmd.value.end, text: yamlScalar(wrapped.command, cmd.value), seq: 0 });
  // Blank lines stay empty: indentation is added to (and later removed from) the others only.
  const deeper = (/** @type {string} */ s) => s.replace(/\n(?=[^\r\n])/g, `\n${unit}`);
  const texts = itemTexts(text, wrapped.args, cmd.value, args?.value);
  let markerArgs = '';
  if (args && args.value.kind === 'array' && args.value.flow) {
    edits.push({ start: args.value.start, end: args.value.end, text: flowSeq(text, texts, args.value), seq: 1 });
    markerArgs = `${nl}${ind}${unit}args: ${deeper(raw(text, args.value))}`;
  } else if (args) {
    const dash = ' '.repeat(column(text, args.value.start));
    edits.push({ start: args.value.start, end: args.value.end, text: blockSeq(texts, dash, nl), seq: 1 });
    markerArgs = `${nl}${ind}${unit}args:${nl}${dash}${unit}${deeper(raw(text, args.value))}`;
  } else {
    const at = lineEnd(text, cmd.value.end);
    edits.push({ start: at, end: at, text: `${nl}${ind}args:${nl}${ind}${unit}${blockSeq(texts, ind + unit, nl)}`, seq: 1 });
  }
  const last = node.members.reduce((a, m) => (m.end > a.end ? m : a));
  const at = lineEnd(text, last.end);
  edits.push({ start: at, end: at, text: `${nl}${ind}${MARKER_KEY}:${nl}${ind}${unit}command: ${deeper(raw(text, cmd.value))}${markerArgs}`, seq: 2 });
  return edits;
}

/**
 * The splices that unwrap a `wrapped` block entry: the original `command` and `args` source
 * text comes back from `_lowdown`, and the lines wrap added are removed.
 * @param {string} text the file contents
 * @param {ObjectNode} node the entry's block mapping node
 * @returns {Edit[]}
 */
export function yamlUnwrapEdits(text, node) {
  const { nl, ind, unit } = layout(text, node);
  const marker = present(node, MARKER_KEY);
  const origCmd = present(marker.value, 'command');
  const origArgs = member(marker.value, 'args');
  const cmd = present(node, 'command');
  const args = member(node, 'args');
  const shallower = (/** @type {string} */ s) => s.split(`\n${unit}`).join('\n');
  const edits = [{ start: cmd.value.start, end: cmd.value.end, text: shallower(raw(text, origCmd.value)), seq: 0 }];
  if (origArgs && args) {
    edits.push({ start: args.value.start, end: args.value.end, text: shallower(raw(text, origArgs.value)), seq: 1 });
  } else if (origArgs) {
    const sep = origArgs.value.flow ? ' ' : `${nl}${' '.repeat(Math.max(0, column(text, origArgs.value.start) - unit.length))}`;
    const at = lineEnd(text, cmd.value.end);
    edits.push({ start: at, end: at, text: `${nl}${ind}args:${sep}${shallower(raw(text, origArgs.value))}`, seq: 1 });
  } else if (args) {
    edits.push({ start: breakBefore(text, args.keyStart), end: args.value.end, text: '', seq: 1 });
  }
  edits.push({ start: breakBefore(text, marker.keyStart), end: marker.value.end, text: '', seq: 2 });
  return edits;
}
