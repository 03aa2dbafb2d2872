// YAML config files (Continue's config.yaml and .continue/mcpServers/*.yaml) read with source
// positions, as the same node tree jsonc.js gives for JSON, so they are edited the same way:
// by splicing text, leaving comments, quoting, indentation and line endings as they were.
//
// Parsing is the `yaml` package's (the parser Continue itself uses, so a file reads here as
// it reads there); this module only turns its document into position-carrying nodes.

import { parseDocument, isMap, isSeq, isScalar, LineCounter } from 'yaml';

/** Error raised for text that is not one YAML document; says where. */
export class YamlError extends Error {
  /**
   * @param {string} message what is wrong
   * @param {{line: number, col: number}} [at] where
   */
  constructor(message, at) {
    super(at ? `${message} at line ${at.line}, column ${at.col}` : message);
    /** Stable kind for callers and JSON output. */
    this.type = 'malformed_yaml';
    this.line = at?.line;
    this.column = at?.col;
  }
}

// Where a scalar's content ends: block scalars (`|`, `>`) count their final line break as
// part of their range, which belongs to the line, not to the value.
/**
 * @param {string} text
 * @param {import('yaml').Scalar} node
 */
function scalarEnd(text, node) {
  const range = /** @type {import('yaml').Range} */ (node.range); // a parsed node has one
  let end = range[1];
  if (node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED') {
    while (end > range[0] && /[\r\n \t]/.test(text[end - 1])) end--;
  }
  return end;
}

// The offset just past the `:` that follows a block or flow key, or -1 (explicit `? key`).
/**
 * @param {string} text
 * @param {number} keyEnd
 */
function colonAfter(text, keyEnd) {
  let i = keyEnd;
  while (text[i] === ' ' || text[i] === '\t') i++;
  return text[i] === ':' ? i + 1 : -1;
}

// `value` is the node's plain value, taken from the whole document's (so aliases and merge
// keys resolve as a reader sees them).
/**
 * @param {string} text
 * @param {unknown} node a node of the `yaml` package's document
 * @param {unknown} value
 * @returns {import('./jsonc.js').SrcNode | null}
 */
function convert(text, node, value) {
  if (node == null) return null;
  /** @type {(v: unknown) => Record<string, unknown>} */
  const own = (v) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? /** @type {Record<string, unknown>} */ (v) : {});
  if (isMap(node)) {
    const range = /** @type {import('yaml').Range} */ (node.range); // a parsed node has one
    /** @type {import('./jsonc.js').SrcMember[]} */
    const members = [];
    for (const pair of node.items) {
      const key = pair.key;
      if (!key || !isScalar(key) || !key.range) continue; // complex keys: not config
      const v = key.value === '<<' ? undefined : own(value)[/** @type {string} */ (key.value)];
      /** @type {import('./jsonc.js').SrcNode} */
      const child = convert(text, pair.value, v) ?? { kind: 'literal', start: key.range[1], end: key.range[1], value: null };
      members.push({ key: /** @type {string} */ (key.value), keyStart: key.range[0], keyEnd: key.range[1], colonEnd: colonAfter(text, key.range[1]), start: key.range[0], end: child.end, value: child });
    }
    /** @type {number} */
    const end = node.flow ? range[1] : members.length ? members[members.length - 1].end : range[0];
    return { kind: 'object', flow: Boolean(node.flow), anchor: node.anchor, start: range[0], end, members, value: own(value) };
  }
  if (isSeq(node)) {
    const range = /** @type {import('yaml').Range} */ (node.range);
    const list = Array.isArray(value) ? value : [];
    const items = /** @type {import('./jsonc.js').SrcNode[]} */ (node.items.map((item, i) => convert(text, item, list[i])).filter(Boolean));
    /** @type {number} */
    const end = node.flow ? range[1] : items.length ? items[items.length - 1].end : range[0];
    return { kind: 'array', flow: Boolean(node.flow), anchor: node.anchor, start: range[0], end, items, value: list };
  }
  if (isScalar(node)) {
    const range = /** @type {import('yaml').Range} */ (node.range);
    const kind = typeof value === 'string' ? 'string' : typeof value === 'number' ? 'number' : 'literal';
    return { kind, style: node.type, anchor: node.anchor, start: range[0], end: scalarEnd(text, node), value };
  }
  // Aliases: readable as a value, never edited in place.
  const alias = /** @type {import('yaml').Alias} */ (node);
  const range = /** @type {import('yaml').Range} */ (alias.range);
  return { kind: 'alias', start: range[0], end: range[1], value };
}

/**
 * Parses one YAML document into nodes shaped like parseJsonc's: `object` (with `members`
 * `{key, keyStart, keyEnd, colonEnd, start, end, value}`), `array` (with `items`), `string`,
 * `number`, `literal`, `alias`; each with `start`/`end` offsets (end: where its content
 * ends, before any trailing comment or line break), `value` (plain JavaScript) and, for
 * collections, `flow` (`{}`/`[]` style) and, for scalars, `style` (`PLAIN`,
 * `QUOTE_SINGLE`, `QUOTE_DOUBLE`, `BLOCK_LITERAL`, `BLOCK_FOLDED`), and `anchor` (`&name`) when
 * it has one.
 * @param {string} text the file contents
 * @returns {import('./jsonc.js').SrcNode} the root node (an empty file gives an empty block mapping)
 * @throws {YamlError} for text that is not exactly one well-formed YAML document
 */
export function parseYaml(text) {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: false });
  if (doc.errors.length) {
    const e = doc.errors[0];
    throw new YamlError(e.message.split('\n')[0].replace(/\.$/, ''), lines.linePos(e.pos[0]));
  }
  let value;
  try {
    value = doc.toJS({ maxAliasCount: 1000 });
  } catch (e) {
    throw new YamlError(String(/** @type {Error} */ (e).message).split('\n')[0]);
  }
  return convert(text, doc.contents, value) ?? { kind: 'object', flow: false, start: 0, end: 0, members: [], value: {} };
}

// YAML 1.1 readers take these as booleans or null; quote them so every reader agrees.
const YAML11_WORDS = /^(y|yes|n|no|on|off|true|false|null|~)$/i;
const PLAIN_CHARS = /^[^\s#,[\]{}'"`!&*|>%@?:-][^\s#,[\]{}'"`]*$|^-[^\s#,[\]{}'"`]+$/;

/**
 * @param {string} source
 * @param {unknown} expected
 */
function reads(source, expected) {
  try {
    const doc = parseDocument(source);
    return doc.errors.length === 0 && JSON.stringify(doc.toJSON()) === JSON.stringify(expected);
  } catch {
    return false;
  }
}

/**
 * A string as YAML scalar source, in the style of `like` (a scalar node of the same list or
 * entry) where that style can carry it: plain when it reads back as the same string both in
 * a block and in a flow sequence, else single or double quoted.
 * @param {string} s
 * @param {{style?: string}} [like]
 * @returns {string}
 */
export function yamlScalar(s, like) {
  const style = like?.style;
  if (style === 'QUOTE_SINGLE' && !/[\x00-\x1f\x7f]/.test(s)) return `'${s.replace(/'/g, "''")}'`;
  if (style !== 'QUOTE_DOUBLE' && PLAIN_CHARS.test(s) && !YAML11_WORDS.test(s) && reads(`- ${s}`, [s]) && reads(`[${s}]`, [s])) return s;
  // JSON's escapes are all YAML double-quoted escapes.
  return JSON.stringify(s);
}
