// Per-call cost of the calls hosts make through the JavaScript binding, on its native (napi)
// build and its WebAssembly build for Node, to set beside the Rust baseline (overhead.rs) and
// pyo3 (overhead.py). Prints {"napi": {op: ns_per_call}, "wasm": {...}}. Needs `make build`.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const fx = JSON.parse(readFileSync(new URL('./fixtures.json', import.meta.url), 'utf8'));
const hosts = {
  napi: require('../../bindings-js/native.js'),
  wasm: require('../../bindings-js/wasm/lowdown.js'),
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

const req = Buffer.from(fx.request + '\n');
const resp = Buffer.from(fx.response + '\n');
const out = {};
for (const [name, api] of Object.entries(hosts)) {
  const policy = new api.HostPolicy(null, null);
  const r = new api.Recorder(JSON.stringify({ target: 'npm:bench' }), 'bench');
  out[name] = {
    // One exchange: the request line in, the response line in, the finished record out.
    record_exchange: time(() => {
      r.feed('client_to_server', req, 1);
      r.feed('server_to_client', resp, 2);
    }),
    prepare_observation: time(() => api.prepareObservation(fx.url, 'GET', 200, 12.5, 512, 'organic', policy)),
  };
}
console.log(JSON.stringify(out));
