// Loads the golden vectors in tests/vectors/*.json and expands their compact forms
// ($repeat, $concat, $seq, $bytes_hex, $bytes) exactly as core/tests/common/mod.rs does.
// Shared by the runners of both builds of the JavaScript binding (bindings-js/__test__).

import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of tests/vectors. */
export const VECTORS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');

const utf8 = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

/** Every vector file: `{ file, operation, cases: [{ name, input, expected?, error? }] }`. */
export function loadVectorFiles() {
  return readdirSync(VECTORS_DIR)
    .filter((f) => f.endsWith('.json') && f !== 'xfail.json')
    .sort()
    .map((file) => {
      const doc = JSON.parse(readFileSync(join(VECTORS_DIR, file), 'utf8'));
      if (typeof doc.operation !== 'string' || !Array.isArray(doc.cases)) {
        throw new Error(`${file}: needs "operation" and "cases"`);
      }
      return { file, operation: doc.operation, cases: doc.cases };
    });
}

/** Cases `host` is known to fail: `Map<file, Map<caseName, reason>>` from xfail.json. */
export function loadXfail(host) {
  const doc = JSON.parse(readFileSync(join(VECTORS_DIR, 'xfail.json'), 'utf8'));
  const out = new Map();
  for (const [file, names] of Object.entries(doc[host] ?? {})) {
    if (file.startsWith('_')) continue;
    const entries = Array.isArray(names) ? names.map((n) => [n, 'listed in xfail.json']) : Object.entries(names);
    out.set(file, new Map(entries));
  }
  return out;
}

const isForm = (v, key) => v !== null && typeof v === 'object' && !Array.isArray(v) && key in v;

/**
 * Expands an input value: `$repeat`/`$concat`/`$seq` become strings (they must decode as UTF-8,
 * as in Rust), `$bytes`/`$bytes_hex` become `Uint8Array`s, everything else is copied.
 */
export function expand(v) {
  if (Array.isArray(v)) return v.map(expand);
  if (v === null || typeof v !== 'object') return v;
  const keys = Object.keys(v);
  if (keys.length === 1 && (keys[0] === '$repeat' || keys[0] === '$concat' || keys[0] === '$seq')) return utf8.decode(bytes(v));
  if (keys.length === 1 && (keys[0] === '$bytes' || keys[0] === '$bytes_hex')) return bytes(v);
  return Object.fromEntries(keys.map((k) => [k, expand(v[k])]));
}

/** A byte input from a string, a `Uint8Array` or any `$` form. */
export function bytes(v) {
  if (typeof v === 'string') return encoder.encode(v);
  if (v instanceof Uint8Array) return v;
  if (isForm(v, '$repeat')) {
    const [unit, times] = v.$repeat;
    const one = bytes(unit);
    const out = new Uint8Array(one.length * times);
    for (let i = 0; i < times; i++) out.set(one, i * one.length);
    return out;
  }
  if (isForm(v, '$concat') || isForm(v, '$bytes')) {
    const parts = (v.$concat ?? v.$bytes).map(bytes);
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) { out.set(p, at); at += p.length; }
    return out;
  }
  if (isForm(v, '$seq')) {
    // [prefix, from, to, suffix]: the prefix, each whole number from..=to, the suffix, joined.
    const [prefix, from, to, suffix] = v.$seq;
    const parts = [];
    for (let n = from; n <= to; n += 1) parts.push(bytes(prefix), encoder.encode(String(n)), bytes(suffix));
    return bytes({ $concat: parts });
  }
  if (isForm(v, '$bytes_hex')) {
    const hex = v.$bytes_hex;
    if (hex.length % 2 !== 0 || /[^0-9a-fA-F]/.test(hex)) throw new Error(`invalid $bytes_hex: ${hex.slice(0, 40)}`);
    return Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));
  }
  throw new Error(`not a string or byte form: ${JSON.stringify(v)?.slice(0, 80)}`);
}

/** A string input from a string or a `$repeat`/`$concat` form. */
export function string(v) {
  return typeof v === 'string' ? v : utf8.decode(bytes(v));
}

/** A JSON-comparable copy of a host result (drops `undefined`, turns typed arrays into arrays). */
export function plain(v) {
  return JSON.parse(JSON.stringify(v, (_k, x) => (x instanceof Uint8Array ? Array.from(x) : x)) ?? 'null');
}
