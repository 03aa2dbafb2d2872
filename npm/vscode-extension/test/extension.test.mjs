// The editor extension as it ships: `npm run package` builds the .vsix, the test unpacks it and
// drives its commands (dist/commands.js, the bundled wrap module with the WebAssembly core)
// through a scripted UI, on every client's real config file in its real place. The editor API
// itself (extension.js) only binds these commands to menus.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { before, test } from 'node:test';
import YAML from 'yaml';
import { makeWorld } from '../../lowdown-proxy/test/wrap-helpers.js';

const EXT = new URL('..', import.meta.url).pathname;
let unpacked;
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

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

before(() => {
  execFileSync('npm', ['run', '--silent', 'package'], { cwd: EXT, stdio: ['ignore', 'ignore', 'inherit'] });
  unpacked = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-vsix-'));
  // A .vsix is a zip archive; Python's zipfile reads it without any extra tool.
  execFileSync('python3', ['-m', 'zipfile', '-e', path.join(EXT, 'lowdown-mcp-wrap.vsix'), unpacked]);
  ({ lib, createCommands } = createRequire(import.meta.url)(path.join(unpacked, 'extension', 'dist', 'commands.js')));
});

test('the .vsix carries the bundle, the entry point, the WebAssembly core and the manifest, nothing else', () => {
  const files = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else files.push(path.relative(path.join(unpacked, 'extension'), full));
    }
  };
  walk(path.join(unpacked, 'extension'));
  assert.deepEqual(files.sort(), ['dist/commands.js', 'dist/extension.js', 'dist/lowdown_bg.wasm', 'package.json', 'readme.md']);
  const manifest = JSON.parse(fs.readFileSync(path.join(unpacked, 'extension', 'package.json'), 'utf8'));
  assert.equal(manifest.main, './dist/extension.js');
  assert.deepEqual(manifest.contributes.commands.map((c) => c.title), ['Lowdown: Wrap MCP servers', 'Lowdown: Unwrap MCP servers', 'Lowdown: Show status']);
});

test('Wrap shows the diff and asks; declining changes nothing; accepting wraps with the core\'s labels; Unwrap restores the bytes', async () => {
  const w = makeWorld();
  try {
    const no = scriptedUi(false);
    const declined = await createCommands({ lib, ui: no, where: w.where }).wrap();
    assert.equal(declined.applied, false);
    assert.match(no.shown[0], /\+\+\+ .*\(after\)/);
    assert.match(no.asked[0][0], /^Wrap 26 MCP servers in 12 config files\?/);
    assert.deepEqual(no.infos, ['Lowdown: nothing was changed.']);
    for (const f of w.files) assert.equal(fs.readFileSync(f.file, 'utf8'), f.original);

    const yes = scriptedUi(true);
    const applied = await createCommands({ lib, ui: yes, where: w.where }).wrap();
    assert.equal(applied.applied, true);
    assert.ok(applied.reports.every((r) => r.status === 'written'));
    assert.match(yes.infos[0], /wrapped 26 MCP servers/);
    for (const f of w.files) assert.match(fs.readFileSync(f.file, 'utf8'), /\blowdown-proxy\b/);
    // The labels come from the bundled WebAssembly core at once, as the proxy would derive them.
    const desktop = JSON.parse(fs.readFileSync(w.files.find((f) => f.client === 'claude-desktop').file, 'utf8'));
    const args = Object.values(desktop.mcpServers).map((s) => s.args.slice(s.args.indexOf('--target'), s.args.indexOf('--target') + 2));
    assert.deepEqual(args.map(([flag]) => flag), Object.keys(desktop.mcpServers).map(() => '--target'));
    assert.ok(args.some(([, label]) => label.startsWith('npm:')), JSON.stringify(args));
    assert.ok(args.some(([, label]) => label.startsWith('pypi:')), JSON.stringify(args));
    // Continue's YAML entries get the core's labels too.
    const tools = YAML.parse(fs.readFileSync(w.files.find((f) => f.fixture === 'continue-tools-odd.yaml').file, 'utf8')).mcpServers;
    const label = (name) => { const a = tools.find((s) => s.name === name).args; return a[a.indexOf('--target') + 1]; };
    assert.equal(label('git'), 'pypi:mcp-server-git');
    assert.equal(label('fetch'), 'pypi:mcp-server-fetch');

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
    await lib.run('wrap', { ...w.where, clients: ['windsurf'] });
    const port = await freePort();
    const ui = scriptedUi(true);
    const res = await createCommands({ lib, ui, where: { ...w.where, env: { LOWDOWN_API_URL: `http://127.0.0.1:${port}`, LOWDOWN_HOME: path.join(w.root, 'ld') } } }).status();
    const out = ui.shown[0];
    assert.match(out, /^Claude Desktop \(user\): .*claude_desktop_config\.json\n {2}filesystem +not wrapped/m);
    assert.match(out, /Windsurf \(user\): .*\n {2}git +wrapped +pypi:mcp-server-git\n {2}stripe +not wrappable +remote \(url\) server/);
    assert.match(out, new RegExp(`Reputation not shown: The Lowdown API at http://127\\.0\\.0\\.1:${port} is unreachable`));
    assert.ok(res.note);
    // Where records go, as `lowdown-proxy status` ends.
    assert.match(out, new RegExp(`\nRecords go to http://127\\.0\\.0\\.1:${port} \\(LOWDOWN_API_URL\\)\\.\nSpool: 0 record\\(s\\) waiting in 0 file\\(s\\) in .*spool\\.\n$`));
  } finally {
    w.cleanup();
  }
});
