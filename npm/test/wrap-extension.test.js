// The editor extension's commands under plain Node: bundled from ../src/wrap by its own
// bundle script, driven through a scripted UI, on real files.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { makeWorld, testLabel } from './wrap-helpers.js';
import { freePort } from './mcp-helpers.js';

const EXT = new URL('../vscode-extension/', import.meta.url).pathname;
const require = createRequire(import.meta.url);
let lib;
let createCommands;

function scriptedUi(answer) {
  const ui = { shown: [], infos: [], errors: [], asked: [] };
  ui.show = (t) => ui.shown.push(t);
  ui.info = (m) => ui.infos.push(m);
  ui.error = (m) => ui.errors.push(m);
  ui.confirm = async (m, action) => {
    ui.asked.push([m, action]);
    return answer;
  };
  return ui;
}

before(async () => {
  execFileSync(process.execPath, [path.join(EXT, 'scripts', 'bundle.js')], { cwd: EXT });
  const commands = require(path.join(EXT, 'src', 'commands.js'));
  createCommands = commands.createCommands;
  lib = await commands.loadLib(path.join(EXT, 'lib'));
});

test('the extension ships the wrap module byte for byte, not a second implementation', () => {
  const src = new URL('../src/wrap/', import.meta.url).pathname;
  for (const name of fs.readdirSync(src).filter((n) => n.endsWith('.js'))) {
    assert.equal(fs.readFileSync(path.join(EXT, 'lib', 'wrap', name), 'utf8'), fs.readFileSync(path.join(src, name), 'utf8'), name);
  }
  const manifest = JSON.parse(fs.readFileSync(path.join(EXT, 'package.json'), 'utf8'));
  assert.deepEqual(manifest.contributes.commands.map((c) => c.title), ['Lowdown: Wrap MCP servers', 'Lowdown: Unwrap MCP servers', 'Lowdown: Show status']);
});

test('Wrap shows the diff and asks; declining changes nothing, accepting wraps; Unwrap restores the bytes', async () => {
  const w = makeWorld();
  try {
    const no = scriptedUi(false);
    const declined = await createCommands({ lib, ui: no, where: w.where }).wrap();
    assert.equal(declined.applied, false);
    assert.match(no.shown[0], /\+\+\+ .*\(after\)/);
    assert.match(no.asked[0][0], /^Wrap 16 MCP servers in 7 config files\?/);
    assert.deepEqual(no.infos, ['Lowdown: nothing was changed.']);
    for (const f of w.files) assert.equal(fs.readFileSync(f.file, 'utf8'), f.original);

    const yes = scriptedUi(true);
    const applied = await createCommands({ lib, ui: yes, where: w.where }).wrap();
    assert.equal(applied.applied, true);
    assert.ok(applied.reports.every((r) => r.status === 'written'));
    assert.match(yes.infos[0], /wrapped 16 MCP servers/);
    for (const f of w.files) assert.match(fs.readFileSync(f.file, 'utf8'), /"lowdown-proxy"/);

    const again = scriptedUi(true);
    await createCommands({ lib, ui: again, where: w.where }).wrap();
    assert.deepEqual(again.asked, [], 'nothing left to wrap: no question');
    assert.deepEqual(again.infos, ['Lowdown: no MCP server to wrap.']);

    const undo = scriptedUi(true);
    await createCommands({ lib, ui: undo, where: w.where }).unwrap();
    for (const f of w.files) assert.equal(fs.readFileSync(f.file, 'utf8'), f.original, `${f.fixture} restored`);
  } finally {
    w.cleanup();
  }
});

test('Show status lists each client and server, and says so when the API is unreachable', async () => {
  const w = makeWorld();
  try {
    await lib.run('wrap', { ...w.where, clients: ['windsurf'], label: testLabel });
    const port = await freePort();
    const ui = scriptedUi(true);
    const res = await createCommands({ lib, ui, where: { ...w.where, env: { LOWDOWN_API_URL: `http://127.0.0.1:${port}`, LOWDOWN_HOME: path.join(w.root, 'ld') } } }).status();
    const out = ui.shown[0];
    assert.match(out, /^Claude Desktop \(user\): .*claude_desktop_config\.json\n {2}filesystem +not wrapped/m);
    assert.match(out, /Windsurf \(user\): .*\n {2}git +wrapped +test:\d+\n {2}stripe +not wrappable +remote \(url\) server/);
    assert.match(out, new RegExp(`Reputation not shown: The Lowdown API at http://127\\.0\\.0\\.1:${port} is unreachable`));
    assert.ok(res.note);
  } finally {
    w.cleanup();
  }
});
