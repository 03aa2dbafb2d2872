// A unified diff of a rewrite, built from the splices that made it (so it is exact and
// linear in the file size, however large ~/.claude.json grows).

const CONTEXT = 3;

/** @param {string} text */
function lineStarts(text) {
  const starts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/**
 * @param {number[]} starts
 * @param {number} pos
 */
function lineOf(starts, pos) {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** @param {string} text */
function splitLines(text) {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

// Line operations turning `a` into `b` by longest common subsequence (blocks are one
// server entry or so; past a size bound, plain replacement keeps it linear).
/** @typedef {[' ' | '-' | '+', string]} LineOp */
/**
 * @param {string[]} a
 * @param {string[]} b
 * @returns {LineOp[]}
 */
function lineOps(a, b) {
  if (a.length * b.length > 4_000_000) return [...a.map((l) => /** @type {LineOp} */ (['-', l])), ...b.map((l) => /** @type {LineOp} */ (['+', l]))];
  const n = a.length;
  const m = b.length;
  const len = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let x = n - 1; x >= 0; x--) {
    for (let y = m - 1; y >= 0; y--) len[x][y] = a[x] === b[y] ? len[x + 1][y + 1] + 1 : Math.max(len[x + 1][y], len[x][y + 1]);
  }
  /** @type {LineOp[]} */
  const ops = [];
  let x = 0;
  let y = 0;
  while (x < n || y < m) {
    if (x < n && y < m && a[x] === b[y]) {
      ops.push([' ', a[x++]]);
      y++;
    } else if (x < n && (y === m || len[x + 1][y] >= len[x][y + 1])) ops.push(['-', a[x++]]);
    else ops.push(['+', b[y++]]);
  }
  return ops;
}

/**
 * A unified diff (`---`/`+++`, `@@` hunks, 3 lines of context) between `before` and the
 * result of applying `edits` to it.
 * @param {string} before the old text
 * @param {{start: number, end: number, text: string, seq?: number}[]} edits the splices (non-overlapping)
 * @param {(text: string, edits: {start: number, end: number, text: string, seq?: number}[]) => string} apply applies splices (entry.js applyEdits)
 * @param {string} label the file name shown in the header
 * @returns {string} the diff, empty when nothing changes
 */
export function unifiedDiff(before, edits, apply, label) {
  if (edits.length === 0) return '';
  const starts = lineStarts(before);
  const oldLines = splitLines(before);
  // Each group of edits touching the same old lines becomes one changed block.
  const sorted = [...edits].sort((a, b) => a.start - b.start);
  /** @type {{a: number, b: number, edits: typeof edits}[]} */
  const blocks = [];
  for (const e of sorted) {
    const a = lineOf(starts, e.start);
    const b = lineOf(starts, Math.max(e.start, e.end - 1)) + 1;
    const last = blocks.at(-1);
    if (last && a <= last.b) {
      last.b = Math.max(last.b, b);
      last.edits.push(e);
    } else blocks.push({ a, b, edits: [e] });
  }
  /** @type {LineOp[]} */
  const ops = [];
  let i = 0;
  for (const blk of blocks) {
    for (; i < blk.a; i++) ops.push([' ', oldLines[i]]);
    const from = starts[blk.a];
    const to = blk.b < starts.length ? starts[blk.b] : before.length;
    const rel = blk.edits.map((e) => ({ ...e, start: e.start - from, end: e.end - from }));
    ops.push(...lineOps(oldLines.slice(blk.a, blk.b), splitLines(apply(before.slice(from, to), rel))));
    i = blk.b;
  }
  for (; i < oldLines.length; i++) ops.push([' ', oldLines[i]]);
  const changed = ops.flatMap((op, k) => (op[0] === ' ' ? [] : [k]));
  if (changed.length === 0) return '';
  // Rewrites never touch the end of the file, so both sides end alike.
  const noFinalNewline = before.length > 0 && !before.endsWith('\n');
  const lastIndex = (/** @type {'-' | '+'} */ kind) => ops.findLastIndex((op) => op[0] === ' ' || op[0] === kind);
  const lastOld = lastIndex('-');
  const lastNew = lastIndex('+');
  const out = [`--- ${label}`, `+++ ${label} (after)`];
  // Running line numbers on both sides, advanced hunk by hunk (linear overall).
  let pos = 0;
  let oldLine = 1;
  let newLine = 1;
  const advance = (/** @type {number} */ to) => {
    for (; pos < to; pos++) {
      if (ops[pos][0] !== '+') oldLine++;
      if (ops[pos][0] !== '-') newLine++;
    }
  };
  for (let g = 0; g < changed.length; ) {
    let h = g;
    while (h + 1 < changed.length && changed[h + 1] - changed[h] <= 2 * CONTEXT + 1) h++;
    const lo = Math.max(0, changed[g] - CONTEXT);
    const hi = Math.min(ops.length, changed[h] + CONTEXT + 1);
    advance(lo);
    const [o, n] = [oldLine, newLine];
    advance(hi);
    out.push(`@@ -${o},${oldLine - o} +${n},${newLine - n} @@`);
    for (let k = lo; k < hi; k++) {
      out.push(ops[k][0] + ops[k][1]);
      if (noFinalNewline && (k === lastOld || k === lastNew)) out.push('\\ No newline at end of file');
    }
    g = h + 1;
  }
  return `${out.join('\n')}\n`;
}
