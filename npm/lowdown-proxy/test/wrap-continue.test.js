// Continue: config.yaml's `mcpServers` list and the .continue/mcpServers folders (YAML block
// files and JSON in Claude's shape or one server per file), edited as text: comments,
// quoting, indentation and line endings survive, unwrap restores the bytes, and anything the
// tool cannot edit faithfully is left exactly as it was, with the reason.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { run, locateConfigs } from '../src/wrap/index.js';
import { formatReports } from '../src/wrap/report.js';
import { makeWorld, testLabel } from './wrap-helpers.js';

const write = (file, text) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
};

test('Continue is found where it reads: ~/.continue (or CONTINUE_GLOBAL_DIR) and the workspace .continue/mcpServers', () => {
  const w = makeWorld([]);
  try {
    const user = path.join(w.home, '.continue', 'mcpServers');
    write(path.join(user, 'b.yaml'), 'mcpServers: []\n');
    write(path.join(user, 'a.json'), '{}\n');
    write(path.join(user, 'notes.md'), '# not a config\n');
    fs.mkdirSync(path.join(user, 'sub'));
    const found = (env = {}) => locateConfigs({ ...w.where, env, clients: ['continue'] }).map((l) => `${l.scope} ${path.relative(w.root, l.path)}`);
    assert.deepEqual(found(), [
      'project project/.continue/mcpServers',
      'user home/.continue/config.yaml',
      'user home/.continue/mcpServers/a.json',
      'user home/.continue/mcpServers/b.yaml',
    ]);
    const custom = path.join(w.root, 'continue-home');
    assert.deepEqual(found({ CONTINUE_GLOBAL_DIR: custom }), ['project project/.continue/mcpServers', 'user continue-home/config.yaml', 'user continue-home/mcpServers']);
    const win = locateConfigs({ home: 'C:/Users/ana', cwd: 'C:/src/app', platform: 'win32', env: {}, clients: ['continue'] }).map((l) => l.path);
    assert.ok(win.includes(path.join('C:/Users/ana', '.continue', 'config.yaml')));
  } finally {
    w.cleanup();
  }
});

test('status lists every Continue entry: stdio servers by name, Hub blocks and remote servers as not wrappable', async () => {
  const w = makeWorld();
  try {
    const reports = await run('status', { ...w.where, clients: ['continue'], label: testLabel });
    const out = formatReports('status', reports);
    assert.match(out, /^Continue \(user\): .*\.continue\/config\.yaml\n {2}SQLite MCP +not wrapped +test:\d+\n {2}Supabase MCP +not wrapped +test:\d+\n {2}anthropic\/memory-mcp +not wrappable +a Continue Hub block \(uses: anthropic\/memory-mcp\)/m);
    assert.match(out, /Continue docs +not wrappable +remote \(url\) server/);
    assert.match(out, /Continue \(user\): .*mcpServers\/playwright-mcp\.json\n {2}playwright-mcp +not wrapped/);
    assert.match(out, /Continue \(project\): .*mcpServers\/mcp\.json\n {2}filesystem +not wrapped +test:\d+\n {2}linear +not wrappable/);
    assert.match(out, /Continue \(user\): .*mcpServers\/tools\.yaml\n {2}git +not wrapped[^\n]*\n {2}time +not wrapped[^\n]*\n {2}fetch +not wrapped[^\n]*\n {2}everything +not wrapped/);
    for (const f of w.files) assert.equal(fs.readFileSync(f.file, 'utf8'), f.original, 'status writes nothing');
  } finally {
    w.cleanup();
  }
});

test('a wrapped YAML entry reads, for Continue, as the proxy with the original command kept', async () => {
  const w = makeWorld();
  try {
    await run('wrap', { ...w.where, clients: ['continue'], label: testLabel, actor: 'ana: nightly #1' });
    const doc = YAML.parse(fs.readFileSync(path.join(w.home, '.continue', 'config.yaml'), 'utf8'));
    const supabase = doc.mcpServers.find((s) => s.name === 'Supabase MCP');
    assert.equal(supabase.command, 'npx');
    const tail = ['--', 'npx', '-y', '@supabase/mcp-server-supabase@latest', '--access-token', '${{ secrets.SUPABASE_TOKEN }}'];
    assert.deepEqual(supabase.args, ['-y', 'lowdown-proxy', '--target', supabase.args[3], '--actor', 'ana: nightly #1', ...tail]);
    assert.deepEqual(supabase._lowdown, { command: 'npx', args: tail.slice(2) });
    assert.deepEqual(supabase.env, { SUPABASE_TOKEN: '${{ secrets.SUPABASE_TOKEN }}' });
    const text = fs.readFileSync(path.join(w.home, '.continue', 'config.yaml'), 'utf8');
    assert.match(text, /\n {6}- "ana: nightly #1"\n/, 'a value that needs quotes is quoted');
    assert.match(text, /\n {6}- \$\{\{ secrets\.SUPABASE_TOKEN \}\}\n/, 'the original args keep the text the user wrote');
    assert.match(text, /- name: Supabase MCP # secrets come from the Hub\n/, 'comments stay');
    const odd = YAML.parse(fs.readFileSync(path.join(w.home, '.continue', 'mcpServers', 'tools.yaml'), 'utf8')).mcpServers;
    assert.deepEqual(odd.find((s) => s.name === 'everything').args.slice(-2), ['--', 'npx'], 'an entry without args gets them');
    assert.equal(odd.find((s) => s.name === 'everything')._lowdown.args, undefined, 'and unwrap will remove them again');
  } finally {
    w.cleanup();
  }
});

test('malformed YAML is left untouched with an error naming the line', async () => {
  const w = makeWorld([]);
  try {
    const text = 'mcpServers:\n  - name: a\n    command: npx\n    args: ["-y", "x"\n  - name: b\n';
    const file = write(path.join(w.home, '.continue', 'config.yaml'), text);
    const [r] = (await run('wrap', { ...w.where, clients: ['continue'], label: testLabel })).filter((x) => x.status !== 'missing');
    assert.equal(r.status, 'error');
    assert.equal(r.error.type, 'malformed_yaml');
    assert.match(r.error.message, /config\.yaml: is not valid YAML: .* at line 5, column \d+; nothing was changed/);
    assert.equal(fs.readFileSync(file, 'utf8'), text);
    assert.deepEqual(fs.readdirSync(path.dirname(file)), ['config.yaml']);
  } finally {
    w.cleanup();
  }
});

test('entries sharing values through anchors, aliases or merge keys are skipped with the reason, never half-edited', async () => {
  const w = makeWorld([]);
  try {
    const text = [
      '%YAML 1.1',
      '---',
      'base: &base',
      '  command: npx',
      'mcpServers:',
      '  - name: merged',
      '    <<: *base',
      '  - name: anchored',
      '    command: uvx',
      '    args: &list [mcp-server-time]',
      '  - name: aliased',
      '    command: uvx',
      '    args: *list',
      '  - name: plain',
      '    command: uvx',
      '    args: [mcp-server-fetch]',
      '',
    ].join('\n');
    const file = write(path.join(w.root, '.continue', 'mcpServers', 'x.yaml'), text);
    const [r] = await run('wrap', { configs: [file], label: testLabel });
    const byName = Object.fromEntries(r.servers.map((s) => [s.name, s]));
    assert.equal(byName.merged.state, 'invalid');
    assert.match(byName.merged.reason, /merge key \(<<\)/);
    assert.equal(byName.anchored.state, 'invalid');
    assert.match(byName.anchored.reason, /anchor \(&list\)/);
    assert.equal(byName.aliased.state, 'invalid');
    assert.match(byName.aliased.reason, /alias/);
    assert.equal(byName.plain.action, 'wrap');
    const doc = YAML.parse(fs.readFileSync(file, 'utf8'));
    assert.deepEqual(doc.mcpServers.find((s) => s.name === 'aliased').args, ['mcp-server-time'], 'the shared list is untouched');
    await run('unwrap', { configs: [file] });
    assert.equal(fs.readFileSync(file, 'utf8'), text);
  } finally {
    w.cleanup();
  }
});

test('unwrap refuses, and changes nothing, when a hand edit means the original cannot be put back faithfully', async () => {
  const w = makeWorld([]);
  try {
    const text = 'mcpServers:\n  - name: a\n    command: npx\n    args:\n      - "-y"\n      - some-server\n';
    const file = write(path.join(w.root, 'config.yaml'), text);
    await run('wrap', { configs: [file], label: testLabel });
    // The user rewrites the wrapped args as a flow list: the block text kept under _lowdown
    // no longer fits where it would go back.
    const edited = fs.readFileSync(file, 'utf8').replace(/ {4}args:\n(?: {6}- .*\n)+/, '    args: ["-y", "lowdown-proxy", "--", "npx", "-y", "some-server"]\n');
    fs.writeFileSync(file, edited);
    const [r] = await run('unwrap', { configs: [file] });
    assert.equal(r.status, 'error');
    assert.equal(r.error.type, 'write_failed');
    assert.match(r.error.message, /would not be valid YAML|would not read back as intended/);
    assert.equal(fs.readFileSync(file, 'utf8'), edited);
  } finally {
    w.cleanup();
  }
});

test('a CRLF block file without a final newline wraps and unwraps exactly', async () => {
  const w = makeWorld([]);
  try {
    const text = 'name: x\r\nmcpServers:\r\n- name: time\r\n  command: uvx\r\n  args:\r\n  - mcp-server-time';
    const file = write(path.join(w.root, '.continue', 'mcpServers', 'time.yaml'), text);
    await run('wrap', { configs: [file], label: testLabel });
    const after = fs.readFileSync(file, 'utf8');
    assert.ok(!after.replace(/\r\n/g, '').includes('\n'), 'still CRLF throughout');
    assert.ok(!after.endsWith('\n'));
    assert.deepEqual(YAML.parse(after).mcpServers[0].args, ['-y', 'lowdown-proxy', '--target', 'test:19', '--', 'uvx', 'mcp-server-time']);
    await run('unwrap', { configs: [file] });
    assert.equal(fs.readFileSync(file, 'utf8'), text);
  } finally {
    w.cleanup();
  }
});
