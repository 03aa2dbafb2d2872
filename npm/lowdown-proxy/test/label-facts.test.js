// One server, one label (SPEC §3.2): however a real installed server is launched (npx, its
// node_modules/.bin link, node on its script, the bare command found on PATH), the proxy and
// `wrap` give the same label, because both hand the core the same file-system facts.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { labelFacts } from '../src/label-facts.js';
import { targetLabel as wrapLabel } from '../src/wrap/label.js';
import { targetLabel } from '../src/core.js';

const require = createRequire(import.meta.url);
const ENTRY = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
// npm installs the bin link in the node_modules that holds the package.
const MODULES = ENTRY.slice(0, ENTRY.lastIndexOf(`${path.sep}@modelcontextprotocol${path.sep}`));
const BIN_DIR = path.join(MODULES, '.bin');
const LINK = path.join(BIN_DIR, 'mcp-server-everything');
const VENV = new URL('../../../.venv/', import.meta.url).pathname;

const label = (argv, where) => targetLabel(argv, JSON.stringify(labelFacts(argv, where)));

test('server-everything has one label however it is launched, in the proxy and in wrap', async () => {
  assert.ok(fs.existsSync(LINK), `${LINK} (npm ci installs it)`);
  const launches = [
    ['npx', '-y', '@modelcontextprotocol/server-everything', 'stdio'],
    [LINK, 'stdio'],
    ['node', ENTRY, 'stdio'],
    [path.relative(path.dirname(MODULES), LINK), 'stdio'],
  ];
  const where = { cwd: path.dirname(MODULES), env: { PATH: `${BIN_DIR}${path.delimiter}/usr/bin` } };
  launches.push(['mcp-server-everything', 'stdio']); // found on PATH, as npm run or npx put it there
  launches.push(['npx', 'mcp-server-everything', 'stdio']); // the project's bin, which npx runs before the registry
  launches.push(['npm', 'exec', '--', 'mcp-server-everything']);
  for (const argv of launches) {
    assert.equal(label(argv, where), 'npm:@modelcontextprotocol/server-everything', argv.join(' '));
    assert.equal(await wrapLabel(argv[0], argv.slice(1), where), 'npm:@modelcontextprotocol/server-everything', `wrap: ${argv.join(' ')}`);
  }
});

test('npx of a name no project here installs is the registry\'s package of that name', () => {
  const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-nobins-'));
  try {
    const where = { cwd: elsewhere, env: { PATH: '/usr/bin' } };
    assert.equal(label(['npx', 'mcp-server-everything', 'stdio'], where), 'npm:mcp-server-everything');
    // A subdirectory of the project finds its bins, as npx does.
    const sub = path.join(path.dirname(MODULES), 'npm');
    assert.equal(label(['npx', 'mcp-server-everything'], { cwd: sub, env: { PATH: '/usr/bin' } }), 'npm:@modelcontextprotocol/server-everything');
    // pnpm dlx always fetches the registry's package, whatever the project installed.
    assert.equal(label(['pnpm', 'dlx', 'mcp-server-everything'], { cwd: path.dirname(MODULES), env: { PATH: '/usr/bin' } }), 'npm:mcp-server-everything');
  } finally {
    fs.rmSync(elsewhere, { recursive: true, force: true });
  }
});

test('a virtualenv console script is its PyPI distribution, from its dist-info', () => {
  const script = path.join(VENV, 'bin', 'maturin');
  assert.ok(fs.existsSync(script), 'the repo venv has maturin (make setup)');
  assert.deepEqual(labelFacts([script, 'build']).packages, [{ arg: script, registry: 'pypi', name: 'maturin' }]);
  assert.equal(label([script, 'build']), 'pypi:maturin');
});

test('a project\'s own script is not a published package; unreadable words are no facts', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-label-'));
  try {
    fs.mkdirSync(path.join(dir, 'weather', 'dist'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'weather', 'package.json'), '{"name":"private-weather"}');
    fs.writeFileSync(path.join(dir, 'weather', 'dist', 'index.js'), '');
    const argv = ['node', path.join(dir, 'weather', 'dist', 'index.js')];
    assert.deepEqual(labelFacts(argv).packages, []);
    assert.equal(label(argv), 'weather/index');
    assert.deepEqual(labelFacts(['no-such-command-here', path.join(dir, 'missing.js')], { env: { PATH: dir } }).packages, []);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
