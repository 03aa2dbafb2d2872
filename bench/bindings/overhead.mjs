// Per-call cost of the same four calls through the napi binding and the WASM build (for
// Node), to set beside the Rust baseline (overhead.rs) and pyo3 (overhead.py).
// Prints {"napi": {op: ns_per_call}, "wasm": {...}}. Needs `make build` first.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const fx = JSON.parse(readFileSync(new URL('./fixtures.json', import.meta.url), 'utf8'));
const hosts = {
  napi: require('../../bindings-node/index.js'),
  wasm: require('../../bindings-wasm/pkg/nodejs/lowdown.js'),
};

/** Nanoseconds per call of `f`, after a warm-up, over about 0.3 s. */
function time(f) {
  for (let i = 0; i < 1000; i++) f();
  for (let n = 1000; ; n *= 4) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) f();
    const spent = Number(process.hrtime.bigint() - start);
    if (spent > 3e8) return spent / n;
  }
}

const req = Buffer.from(fx.request);
const resp = Buffer.from(fx.response);
const tools = Buffer.from(fx.tools_list);
const out = {};
for (const [name, api] of Object.entries(hosts)) {
  const policy = new api.HostPolicy(null, null);
  const c = new api.Classifier();
  out[name] = {
    redact: time(() => api.redact(fx.redact)),
    host_verdict: time(() => api.hostVerdict(fx.host, policy)),
    classifier_feed: time(() => {
      c.feed('client_to_server', req, 1);
      c.feed('server_to_client', resp, 2);
    }) / 2,
    hash_tools_result: time(() => api.hashToolsResult(tools)),
  };
}
console.log(JSON.stringify(out));
