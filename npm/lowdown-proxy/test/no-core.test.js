// The proxy where no build of lowdown-core loads (no native package for the platform, no
// WebAssembly package): relaying goes on unchanged, and nothing about the missing core
// kills the process. The package is laid out as npm installs it, with the real
// lowdown-core loader (bindings-js/index.js) but neither of its builds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHILD, tempDir } from './helpers/run.js';

const PACKAGE = fileURLToPath(new URL('..', import.meta.url));
const LOADER = fileURLToPath(new URL('../../../bindings-js/', import.meta.url));

/** A project whose node_modules hold lowdown-proxy and lowdown-core's loader only. */
function installWithoutCore(t) {
  const root = tempDir(t, 'lowdown-no-core-');
  const proxy = path.join(root, 'node_modules', 'lowdown-proxy');
  for (const part of ['bin', 'src', 'package.json']) fs.cpSync(path.join(PACKAGE, part), path.join(proxy, part), { recursive: true });
  const core = path.join(root, 'node_modules', 'lowdown-core');
  fs.mkdirSync(core, { recursive: true });
  for (const file of ['index.js', 'index.mjs', 'package.json']) fs.copyFileSync(path.join(LOADER, file), path.join(core, file));
  return { root, proxy };
}

test('the recording pipeline without a core: the import fails once, as a rejection, and the process lives on', (t) => {
  const { proxy } = installWithoutCore(t);
  // pipeline.js reaches the core through several modules; Node 20 used to rethrow the
  // loader's failure as an uncaught exception after the import had been caught.
  const script = `import(${JSON.stringify(new URL('file://' + path.join(proxy, 'src/record/pipeline.js')).href)})
    .then(() => console.log('loaded'), (e) => console.log('rejected: ' + e.message.split('\\n')[0]))
    .then(() => setTimeout(() => console.log('alive'), 50));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.deepEqual(out.trim().split('\n'), ["rejected: Cannot find module 'lowdown-core-wasm'", 'alive']);
});

test('sessions without a core relay byte for byte, exit 0 and say once that recording is off', (t) => {
  const { root, proxy } = installWithoutCore(t);
  const input = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n';
  for (let i = 0; i < 5; i += 1) {
    const r = spawnSync(process.execPath, [path.join(proxy, 'bin/lowdown-proxy.js'), '--', process.execPath, CHILD, 'echo'], {
      input,
      encoding: 'utf8',
      env: { ...process.env, LOWDOWN_HOME: path.join(root, 'home'), LOWDOWN_API_URL: 'http://127.0.0.1:9', LOWDOWN_CORE: '' },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, input);
    const said = r.stderr.split('\n').filter((l) => l.startsWith('lowdown-proxy: lowdown-core did not load'));
    assert.equal(said.length, 1, r.stderr);
  }
});
