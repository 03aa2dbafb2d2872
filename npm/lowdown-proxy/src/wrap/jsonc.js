// A small JSON-with-comments parser that keeps source positions, so config files can be
// edited by splicing text: everything outside the edited spans (comments, key order,
// whitespace, line endings) stays byte for byte as the user wrote it.

// The node tree parseJsonc (and yamlsrc.js's parseYaml) gives. `value` is the plain
// JavaScript value of the node, arbitrary JSON (or YAML) from the user's file.
/**
 * A member of an object node: `start`/`end` span key to value; `colonEnd` (YAML only) is just
 * past the `:`, -1 for an explicit `? key`.
 * @typedef {{key: string, keyStart: number, keyEnd: number, colonEnd?: number, start: number, end: number, value: SrcNode}} SrcMember
 */
/**
 * A mapping: `flow` and `anchor` are YAML's (`{}` style, `&name`).
 * @typedef {{kind: 'object', start: number, end: number, members: SrcMember[], value: any, flow?: boolean, anchor?: string, style?: undefined}} ObjectNode
 */
/** @typedef {{kind: 'array', start: number, end: number, items: SrcNode[], value: any[], flow?: boolean, anchor?: string, style?: undefined}} ArrayNode */
/**
 * A scalar, or (YAML) an alias; `style` is YAML's (`PLAIN`, `QUOTE_SINGLE`, ...).
 * @typedef {{kind: 'string' | 'number' | 'literal' | 'alias', start: number, end: number, value: any, style?: string, anchor?: string, flow?: undefined}} ScalarNode
 */
/** @typedef {ObjectNode | ArrayNode | ScalarNode} SrcNode */

/** Error raised for text that is not JSON (or JSONC); `offset` points at the problem. */
export class JsoncError extends Error {
  /**
   * @param {string} message what is wrong
   * @param {string} text the whole source, to turn the offset into a line and column
   * @param {number} offset index of the problem in `text`
   */
  constructor(message, text, offset) {
    const before = text.slice(0, offset);
    const line = before.split('\n').length;
    const column = offset - before.lastIndexOf('\n');
    super(`${message} at line ${line}, column ${column}`);
    /** Stable kind for callers and JSON output. */
    this.type = 'malformed_json';
    this.line = line;
    this.column = column;
  }
}

/**
 * Parses JSON text that may contain `//` and `/* *\/` comments and trailing commas
 * (the JSONC that VS Code accepts in mcp.json).
 *
 * Returns a node tree: every node has `start`, `end` (offsets into `text`) and `kind`
 * (`object`, `array`, `string`, `number`, `literal`); objects carry `members`
 * (`{key, keyStart, keyEnd, start, end, value}` where `start`/`end` span key to value), arrays
 * carry `items`, and every node carries `value` (the plain JavaScript value).
 * @param {string} text the file contents
 * @returns {SrcNode} the root node
 */
export function parseJsonc(text) {
  let pos = 0;
  /** @type {(msg: string, at?: number) => never} */
  const fail = (msg, at = pos) => {
    throw new JsoncError(msg, text, at);
  };
  const skip = () => {
    for (;;) {
      const c = text[pos];
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\ufeff') pos++;
      else if (c === '/' && text[pos + 1] === '/') {
        while (pos < text.length && text[pos] !== '\n') pos++;
      } else if (c === '/' && text[pos + 1] === '*') {
        const close = text.indexOf('*/', pos + 2);
        if (close < 0) fail('unterminated /* comment');
        pos = close + 2;
      } else return;
    }
  };
  /** @returns {ScalarNode & {value: string}} */
  const parseString = () => {
    const start = pos;
    pos++;
    for (;;) {
      if (pos >= text.length) fail('unterminated string', start);
      const c = text[pos];
      if (c === '"') break;
      if (c === '\\') pos += 2;
      else if (c < ' ') fail('control character in string');
      else pos++;
    }
    pos++;
    let value;
    try {
      value = JSON.parse(text.slice(start, pos));
    } catch {
      fail('invalid escape in string', start);
    }
    return { kind: 'string', start, end: pos, value };
  };
  /** @returns {SrcNode} */
  const parseValue = () => {
    skip();
    const c = text[pos];
    const start = pos;
    if (c === '{') {
      pos++;
      /** @type {SrcMember[]} */
      const members = [];
      /** @type {Record<string, unknown>} */
      const value = {};
      for (;;) {
        skip();
        if (text[pos] === '}') break;
        if (text[pos] !== '"') fail(pos >= text.length ? 'unexpected end of file' : 'expected a "key" or }');
        const key = parseString();
        skip();
        if (text[pos] !== ':') fail('expected : after key');
        pos++;
        const node = parseValue();
        members.push({ key: key.value, keyStart: key.start, keyEnd: key.end, start: key.start, end: node.end, value: node });
        value[key.value] = node.value;
        skip();
        if (text[pos] === ',') pos++;
        else if (text[pos] !== '}') fail('expected , or }');
      }
      pos++;
      return { kind: 'object', start, end: pos, members, value };
    }
    if (c === '[') {
      pos++;
      /** @type {SrcNode[]} */
      const items = [];
      for (;;) {
        skip();
        if (text[pos] === ']') break;
        if (pos >= text.length) fail('unexpected end of file');
        items.push(parseValue());
        skip();
        if (text[pos] === ',') pos++;
        else if (text[pos] !== ']') fail('expected , or ]');
      }
      pos++;
      return { kind: 'array', start, end: pos, items, value: items.map((i) => i.value) };
    }
    if (c === '"') return parseString();
    const m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(pos, pos + 400));
    if (!m) fail(pos >= text.length ? 'unexpected end of file' : `unexpected character ${JSON.stringify(c)}`);
    pos += m[0].length;
    return { kind: /^[-\d]/.test(m[0]) ? 'number' : 'literal', start, end: pos, value: JSON.parse(m[0]) };
  };
  const root = parseValue();
  skip();
  if (pos < text.length) fail('unexpected text after the end of the JSON value');
  return root;
}

/**
 * The member `key` of an entry whose state guarantees it (`command` of an entry that can be
 * wrapped, `_lowdown` of a wrapped one): {@link member}, typed as found.
 * @param {SrcNode} node
 * @param {string} key
 */
export const present = (node, key) => /** @type {SrcMember} */ (member(node, key));

/**
 * Finds a member of an object node by key (the last one wins, as in JSON.parse).
 * @param {SrcNode | null | undefined} node an object node from parseJsonc
 * @param {string} key the member name
 * @returns {SrcMember|undefined} the member `{key, keyStart, start, end, value}`
 */
export function member(node, key) {
  if (!node || node.kind !== 'object') return undefined;
  for (let i = node.members.length - 1; i >= 0; i--) if (node.members[i].key === key) return node.members[i];
  return undefined;
}
