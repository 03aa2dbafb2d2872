// The WASM build and the napi build export the same API (names, classes and their methods),
// so code written for one runs on the other. Needs both builds (`make build`).

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { it } from 'node:test';

const require = createRequire(import.meta.url);
const napi = require('../../bindings-node/index.js');
const wasm = require('../pkg/nodejs/lowdown.js');

// Host plumbing, not API: napi's loader marker; wasm-bindgen's module handles.
const PLUMBING = new Set(['__napiBindingTarget', 'initSync', '__wasm', 'default']);
// napi's generated index.js also lists each class under its Rust name (`JsClassifier`), bound
// to `undefined` because the addon exports only the JavaScript name: not part of the API.
const names = (m) => Object.keys(m).filter((k) => !PLUMBING.has(k) && m[k] !== undefined).sort();
const methods = (cls) =>
  Object.getOwnPropertyNames(cls.prototype).filter((k) => k !== 'constructor' && !k.startsWith('__') && k !== 'free').sort();

it('both hosts export the same names', () => {
  assert.deepEqual(names(wasm), names(napi));
  assert.ok(names(napi).length >= 30, names(napi).join(', '));
});

it('every class has the same methods in both hosts', () => {
  for (const name of names(napi).filter((n) => /^[A-Z]/.test(n))) {
    assert.deepEqual(methods(wasm[name]), methods(napi[name]), name);
  }
});
