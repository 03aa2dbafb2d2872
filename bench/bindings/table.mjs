// Prints the binding overhead side by side from the JSON lines of overhead.rs, overhead.mjs
// and overhead.py: ns per call in each host, and the overhead over Rust.
// Usage: node table.mjs rust.json js.json py.json

import { readFileSync } from 'node:fs';

const results = Object.assign({}, ...process.argv.slice(2).map((f) => JSON.parse(readFileSync(f, 'utf8'))));
const hosts = ['rust', 'napi', 'pyo3', 'wasm'].filter((h) => h in results);
const ops = Object.keys(results.rust);
const cell = (ns) => (ns >= 10_000 ? `${(ns / 1000).toFixed(1)} µs` : `${ns.toFixed(0)} ns`);
const rows = [['operation (per call)', ...hosts, ...hosts.slice(1).map((h) => `${h} − rust`)]];
for (const op of ops) {
  const base = results.rust[op];
  const at = (h) => results[h][op];
  // A host that does not make this call (prowl records no sessions; only prowl validates
  // records) shows a dash.
  rows.push([op, ...hosts.map((h) => (at(h) === undefined ? '-' : cell(at(h)))), ...hosts.slice(1).map((h) => (at(h) === undefined ? '-' : cell(at(h) - base)))]);
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
for (const [i, r] of rows.entries()) {
  console.log(r.map((c, j) => (j === 0 ? c.padEnd(widths[j]) : c.padStart(widths[j]))).join('  '));
  if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
}
