// Bad input and unlucky timing: every case leaves the file exactly as it was, says why,
// and leaves no temp file behind.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { run, processConfig, locateConfigs } from '../src/wrap/index.js';
import { FIXTURES, makeWorld, testLabel } from './wrap-helpers.js';

const cursorOnly = [{ client: 'cursor', fixture: 'cursor-mcp.json', base: 'home', rel: '.cursor/mcp.json' }];

function leftovers(dir) {
  return fs.readdirSync(dir).filter((n) => n.endsWith('.tmp') || n.endsWith('.bak'));
}

test('malformed JSON is left untouched with an error naming the line', async () => {
  const w = makeWorld([{ client: 'claude-desktop', fixture: 'malformed.json', base: 'home', rel: '.config/Claude/claude_desktop_config.json' }]);
  try {
    const [r] = (await run('wrap', { ...w.where, label: testLabel })).filter((x) => x.status !== 'missing');
    assert.equal(r.status, 'error');
    assert.equal(r.error.type, 'malformed_json');
    assert.match(r.error.message, /not valid JSON: .* at line 8, column 1; nothing was changed/);
    assert.equal(fs.readFileSync(w.files[0].file, 'utf8'), w.files[0].original);
    assert.deepEqual(leftovers(path.dirname(w.files[0].file)), []);
  } finally {
    w.cleanup();
  }
});

test('a --config file that does not exist is an error; unknown default places are just skipped', async () => {
  const w = makeWorld([]);
  try {
    const missing = path.join(w.root, 'nope.json');
    const [r] = await run('wrap', { configs: [missing] });
    assert.equal(r.status, 'error');
    assert.equal(r.error.type, 'missing');
    assert.match(r.error.message, /nope\.json: no such file/);
    assert.ok(!fs.existsSync(missing), 'nothing created');
    const all = await run('wrap', w.where);
    assert.ok(all.length > 6 && all.every((x) => x.status === 'missing'));
  } finally {
    w.cleanup();
  }
});

test('a read-only config is refused and left untouched', async () => {
  const w = makeWorld(cursorOnly);
  try {
    fs.chmodSync(w.files[0].file, 0o444);
    const [r] = (await run('wrap', { ...w.where, label: testLabel })).filter((x) => x.status !== 'missing');
    assert.equal(r.status, 'error');
    assert.equal(r.error.type, 'read_only');
    assert.match(r.error.message, /read-only; nothing was changed/);
    assert.equal(fs.readFileSync(w.files[0].file, 'utf8'), w.files[0].original);
    assert.equal(fs.statSync(w.files[0].file).mode & 0o777, 0o444);
    assert.deepEqual(leftovers(path.dirname(w.files[0].file)), []);
  } finally {
    w.cleanup();
  }
});

test('a config another program changes between read and write is not overwritten', async () => {
  const w = makeWorld(cursorOnly);
  try {
    const file = w.files[0].file;
    const theirs = w.files[0].original.replace('"figma"', '"figma-desktop"');
    const loc = locateConfigs({ ...w.where, clients: ['cursor'] }).find((l) => l.path === file);
    const r = await processConfig(loc, {
      mode: 'wrap',
      label: testLabel,
      hooks: { beforeCommit: () => fs.writeFileSync(file, theirs) },
    });
    assert.equal(r.status, 'error');
    assert.equal(r.error.type, 'changed');
    assert.match(r.error.message, /changed while it was being rewritten .*nothing was changed, run the command again/);
    assert.equal(fs.readFileSync(file, 'utf8'), theirs, 'the other program\'s write survives');
    assert.deepEqual(leftovers(path.dirname(file)), []);
  } finally {
    w.cleanup();
  }
});

test('a symlinked config is rewritten in place of its target, keeping the link', async () => {
  const w = makeWorld(cursorOnly);
  try {
    const real = path.join(w.root, 'dotfiles-mcp.json');
    fs.renameSync(w.files[0].file, real);
    fs.symlinkSync(real, w.files[0].file);
    const [r] = (await run('wrap', { ...w.where, label: testLabel })).filter((x) => x.status !== 'missing');
    assert.equal(r.status, 'written');
    assert.ok(fs.lstatSync(w.files[0].file).isSymbolicLink(), 'the link is still a link');
    assert.match(fs.readFileSync(real, 'utf8'), /"lowdown-proxy"/);
  } finally {
    w.cleanup();
  }
});

test('entries that are wrapped by hand, invalid, or have no args are handled without loss', async () => {
  const w = makeWorld([]);
  try {
    const file = path.join(w.root, 'mcp.json');
    const text = '{"mcpServers":{"hand":{"command":"npx","args":["lowdown-proxy","--target","x","--","node","s.js"]},"bad":{"command":"node","args":"s.js"},"bare":{"command":"srv"}}}';
    fs.writeFileSync(file, text);
    const [r] = await run('wrap', { configs: [file], label: testLabel });
    const byName = Object.fromEntries(r.servers.map((s) => [s.name, s]));
    assert.equal(byName.hand.state, 'manual');
    assert.equal(byName.hand.label, 'x');
    assert.equal(byName.bad.state, 'invalid');
    assert.match(byName.bad.reason, /"args" is not an array of strings/);
    assert.equal(byName.bare.action, 'wrap');
    const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    assert.deepEqual(doc.mcpServers.hand, JSON.parse(text).mcpServers.hand);
    assert.deepEqual(doc.mcpServers.bad, JSON.parse(text).mcpServers.bad);
    assert.deepEqual(doc.mcpServers.bare._lowdown, { command: 'srv' });
    await run('unwrap', { configs: [file] });
    assert.equal(fs.readFileSync(file, 'utf8'), text);
  } finally {
    w.cleanup();
  }
});

test('each OS has its own Claude Desktop, Cline and VS Code user paths', () => {
  const paths = (platform, env = {}) => locateConfigs({ home: '/h', cwd: '/p', platform, env }).map((l) => `${l.client} ${l.path}`);
  assert.ok(paths('darwin').includes('claude-desktop /h/Library/Application Support/Claude/claude_desktop_config.json'));
  assert.ok(paths('linux').includes('claude-desktop /h/.config/Claude/claude_desktop_config.json'));
  assert.ok(paths('linux', { XDG_CONFIG_HOME: '/x' }).includes('claude-desktop /x/Claude/claude_desktop_config.json'));
  assert.ok(paths('win32', { APPDATA: '/h/AppData/Roaming' }).some((p) => p.startsWith('claude-desktop /h/AppData/Roaming/Claude/')));
  assert.ok(paths('darwin').includes('cline /h/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json'));
  assert.ok(paths('linux').includes('cline /h/.config/Cursor/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json'));
  assert.ok(paths('darwin').includes('vscode /h/Library/Application Support/Code/User/mcp.json'));
  for (const p of ['claude-code /p/.mcp.json', 'claude-code /h/.claude.json', 'cursor /h/.cursor/mcp.json', 'cursor /p/.cursor/mcp.json', 'vscode /p/.vscode/mcp.json', 'windsurf /h/.codeium/windsurf/mcp_config.json']) {
    assert.ok(paths('linux').includes(p), p);
  }
  assert.deepEqual([...new Set(locateConfigs({ home: '/h', cwd: '/p', platform: 'linux', env: {}, clients: ['cursor'] }).map((l) => l.client))], ['cursor']);
});

test('fixtures are the real thing: every fixture but the malformed one is valid for its client', () => {
  for (const name of fs.readdirSync(FIXTURES)) {
    const text = fs.readFileSync(path.join(FIXTURES, name), 'utf8');
    if (name === 'malformed.json') assert.throws(() => JSON.parse(text));
    else if (name.endsWith('.yaml')) assert.equal(YAML.parseDocument(text).errors.length, 0, name);
    else if (name !== 'vscode-mcp.json') assert.doesNotThrow(() => JSON.parse(text), name);
  }
});

test('a one-line file without a final newline wraps, diffs for patch(1), and unwraps exactly', async () => {
  const w = makeWorld([]);
  try {
    const file = path.join(w.root, 'mcp.json');
    const text = '{"mcpServers":{"a":{"command":"node","args":["s.js"]}}}';
    fs.writeFileSync(file, text);
    const copy = `${file}.copy`;
    fs.writeFileSync(copy, text);
    const [dry] = await run('wrap', { configs: [file], label: testLabel, dryRun: true });
    assert.match(dry.diff, /\n\\ No newline at end of file\n/);
    await run('wrap', { configs: [file], label: testLabel });
    const { execFileSync } = await import('node:child_process');
    execFileSync('patch', ['--quiet', '--batch', copy], { input: dry.diff });
    assert.equal(fs.readFileSync(copy, 'utf8'), fs.readFileSync(file, 'utf8'));
    assert.ok(!fs.readFileSync(file, 'utf8').endsWith('\n'));
    await run('unwrap', { configs: [file] });
    assert.equal(fs.readFileSync(file, 'utf8'), text);
  } finally {
    w.cleanup();
  }
});

test('a Windows Cline config (under %APPDATA%, CRLF, cmd /c) keeps cmd /c in front of the proxy and unwraps exactly', async () => {
  const w = makeWorld([]);
  try {
    const appData = path.join(w.home, 'AppData', 'Roaming');
    const file = path.join(appData, 'Code', 'User', 'globalStorage', 'saoudrizwan.claude-dev', 'settings', 'cline_mcp_settings.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const original = fs.readFileSync(path.join(FIXTURES, 'cline_mcp_settings.windows.json'), 'utf8');
    fs.writeFileSync(file, original);
    const where = { home: w.home, cwd: w.cwd, platform: 'win32', env: { APPDATA: appData } };
    const labels = [];
    const label = async (cmd, args) => {
      labels.push([cmd, ...args].join(' '));
      return `test:${labels.length}`;
    };
    const reports = await run('wrap', { ...where, clients: ['cline'], label });
    assert.equal(reports.find((r) => r.path === file).status, 'written');
    const doc = JSON.parse(fs.readFileSync(file, 'utf8')).mcpServers;
    assert.equal(doc.filesystem.command, 'cmd');
    assert.deepEqual(doc.filesystem.args, ['/c', 'npx', '-y', 'lowdown-proxy', '--target', 'test:1', '--', 'npx', '-y', '@modelcontextprotocol/server-filesystem', 'C:\\Users\\ana\\Desktop']);
    assert.equal(doc.everart.command, 'npx');
    assert.deepEqual(doc.everart.args.slice(-2), ['C:\\Program Files\\nodejs\\node.exe', 'C:\\tools\\everart\\index.js']);
    assert.deepEqual(labels, ['npx -y @modelcontextprotocol/server-filesystem C:\\Users\\ana\\Desktop', 'C:\\Program Files\\nodejs\\node.exe C:\\tools\\everart\\index.js'], 'labels come from the command cmd /c runs');
    assert.ok(!fs.readFileSync(file, 'utf8').replace(/\r\n/g, '').includes('\n'), 'still CRLF throughout');
    await run('unwrap', { ...where, clients: ['cline'] });
    assert.equal(fs.readFileSync(file, 'utf8'), original);
  } finally {
    w.cleanup();
  }
});
