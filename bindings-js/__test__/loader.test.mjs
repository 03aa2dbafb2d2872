// index.js, the package entry: native where a build fits, WebAssembly otherwise or when asked.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { it } from 'node:test';

const INDEX = new URL('../index.js', import.meta.url).pathname;
const load = (env) =>
  JSON.parse(execFileSync(process.execPath, ['-e', `const c = require(${JSON.stringify(INDEX)}); console.log(JSON.stringify({ kind: c.kind, error: c.nativeError ? String(c.nativeError.message) : null, label: c.targetLabel(['npx', '-y', 'pkg@1']) }))`],
    { env: { ...process.env, ...env }, encoding: 'utf8' }));

it('loads the native build of this platform by default', () => {
  assert.deepEqual(load({ LOWDOWN_CORE: '' }), { kind: 'native', error: null, label: 'npm:pkg' });
});

it('LOWDOWN_CORE=wasm loads the WebAssembly build, which answers the same', () => {
  assert.deepEqual(load({ LOWDOWN_CORE: 'wasm' }), { kind: 'wasm', error: null, label: 'npm:pkg' });
});
