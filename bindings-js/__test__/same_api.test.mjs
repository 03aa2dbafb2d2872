// The native and the WebAssembly builds export the same API (names, classes and their
// methods), so the loader can hand either to the same code.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { BUILDS } from './builds.mjs';

const [[, native], [, wasm]] = BUILDS;
// Host plumbing, not API: napi's loader marker; wasm-bindgen's module handles.
const PLUMBING = new Set(['__napiBindingTarget', 'initSync', '__wasm', 'default']);
// napi's generated loader also lists each class under its Rust name (`JsRecorder`), bound to
// `undefined` because the addon exports only the JavaScript name: not part of the API.
const names = (m) => Object.keys(m).filter((k) => !PLUMBING.has(k) && m[k] !== undefined).sort();
const methods = (cls) =>
  Object.getOwnPropertyNames(cls.prototype).filter((k) => k !== 'constructor' && !k.startsWith('__') && k !== 'free').sort();

it('both builds export the same names', () => {
  assert.deepEqual(names(wasm), names(native));
  assert.deepEqual(names(native), ['HostPolicy', 'LogDiff', 'NodeIdentityLoad', 'OtelExporter', 'Recorder', 'Router', 'SpoolClaim', 'SpoolWrite', 'TelemetryBudget',
    'appendTextItem', 'delivery', 'destination', 'expandPath', 'localNode', 'otelConfig', 'prepareObservation', 'settingsFromEnv', 'spoolTally', 'storedGet',
    'storedSet', 'targetLabel']);
});

it('every class has the same methods in both builds', () => {
  for (const name of names(native).filter((n) => /^[A-Z]/.test(n))) {
    assert.deepEqual(methods(wasm[name]), methods(native[name]), name);
  }
});
