// End to end: `lowdown-proxy wrap` rewrites a Claude Desktop config, and the wrapped entry,
// launched exactly as a client would (command + args through the SDK's stdio client),
// runs server-everything through the proxy; `status` then reports it; `unwrap` undoes it.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startServer, records, freePort } from './mcp-helpers.js';
import { deliverSpool, eventually, spooledRecords } from './helpers/api.js';
import { main } from '../src/wrap/cli.js';
import { run as runWrap } from '../src/wrap/index.js';
import { makeWorld, sink } from './wrap-helpers.js';

const run = promisify(execFile);
const PKG = new URL('../', import.meta.url).pathname;
const PROXY_BIN = path.join(PKG, 'bin', 'lowdown-proxy.js');
const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');

let server;
let root;

before(async () => {
  server = await startServer();
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-launch-'));
});

after(async () => {
  await server?.stop();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

test('a wrapped config launches the proxied server, which answers through the proxy', async () => {
  const home = path.join(root, 'home');
  const file = path.join(home, '.config', 'Claude', 'claude_desktop_config.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const original = `${JSON.stringify({ mcpServers: { everything: { command: 'node', args: [EVERYTHING, 'stdio'] } } }, null, 2)}\n`;
  fs.writeFileSync(file, original);
  const env = { ...process.env, HOME: home, LOWDOWN_HOME: path.join(root, 'ld'), LOWDOWN_API_URL: server.url, XDG_CONFIG_HOME: '' };

  const dry = await run(process.execPath, [PROXY_BIN, 'wrap', '--dry-run', '--client', 'claude-desktop'], { env, cwd: root });
  assert.match(dry.stdout, /everything +would wrap/);
  assert.match(dry.stdout, /\n-      "command": "node",\n\+      "command": "npx",\n       "args": \[\n\+        "-y",\n\+        "lowdown-proxy",\n/);
  assert.equal(fs.readFileSync(file, 'utf8'), original, 'dry run wrote nothing');

  const wrapped = await run(process.execPath, [PROXY_BIN, 'wrap', '--client', 'claude-desktop', '--actor', 'launch-test'], { env, cwd: root });
  assert.match(wrapped.stdout, /everything +wrapped now/);
  const entry = JSON.parse(fs.readFileSync(file, 'utf8')).mcpServers.everything;
  assert.equal(entry.command, 'npx');
  const sep = entry.args.indexOf('--');
  assert.deepEqual(entry.args.slice(sep + 1), ['node', EVERYTHING, 'stdio']);
  assert.deepEqual(entry.args.slice(sep - 2, sep), ['--actor', 'launch-test']);

  // `npx -y lowdown-proxy` would fetch the published package; this stand-in resolves the
  // name to this checkout instead and passes every other argument through untouched.
  const shimDir = path.join(root, 'shim');
  fs.mkdirSync(shimDir);
  fs.writeFileSync(
    path.join(shimDir, 'npx'),
    `#!/bin/sh\n[ "$1" = "-y" ] && shift\n[ "$1" = "lowdown-proxy" ] || { echo "npx stand-in: unexpected $*" >&2; exit 97; }\nshift\nexec "${process.execPath}" "${PROXY_BIN}" "$@"\n`,
    { mode: 0o755 },
  );
  const canary = `canary-${Date.now()}-do-not-record`;
  const transport = new StdioClientTransport({
    command: entry.command,
    args: entry.args,
    env: { ...env, PATH: `${shimDir}${path.delimiter}${process.env.PATH}` },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'launch-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'echo'), 'server-everything tools come through the proxy');
    const r = await client.callTool({ name: 'echo', arguments: { message: canary } });
    assert.match(r.content[0].text, new RegExp(canary));
  } finally {
    await client.close();
  }

  // The proxy records asynchronously; when the entry names its target, status shows it. At
  // exit it waits at most 100 ms for the API: what it could not deliver by then is in the
  // spool, and the next run delivers it (done here as that run would).
  const label = entry.args[entry.args.indexOf('--target') + 1];
  if (entry.args.includes('--target')) {
    const answer = async () => (await fetch(`${server.url}/api/reputation/${encodeURIComponent(label)}`)).json();
    await eventually(async () => (await answer()).interactions > 0 || spooledRecords(env.LOWDOWN_HOME).some((r) => r.task_type === 'echo'), 'the echo record, delivered or spooled', 15000);
    if (spooledRecords(env.LOWDOWN_HOME).length) await deliverSpool(env.LOWDOWN_HOME, server.url);
    assert.equal((await answer()).interactions, 1, 'the echo call was recorded under the wrapped label');
  }
  const status = await run(process.execPath, [PROXY_BIN, 'status', '--client', 'claude-desktop'], { env, cwd: root });
  assert.match(status.stdout, /everything +wrapped/);
  if (entry.args.includes('--target')) assert.match(status.stdout, new RegExp(`${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} — 1 interaction`));

  // Nothing the agent sent reached the database.
  for (const name of fs.readdirSync(server.dir)) {
    assert.ok(!fs.readFileSync(path.join(server.dir, name)).includes(canary), `${name} holds no arguments or results`);
  }

  await run(process.execPath, [PROXY_BIN, 'unwrap', '--client', 'claude-desktop'], { env, cwd: root });
  assert.equal(fs.readFileSync(file, 'utf8'), original, 'unwrap restores the original bytes');
});

test('status shows each server wrapped or not with its reputation line; an unreachable API is said, exit 0', async () => {
  const w = makeWorld();
  try {
    await runWrap('wrap', { ...w.where, clients: ['cursor'], label: async (cmd) => `npm:status-${cmd}` });
    await server.post([...records('npm:status-npx', 4), ...records('npm:status-npx', 1, { outcome: 'failure', failure_type: 'timeout', error_layer: 'server' })]);
    const out = sink();
    const env = { LOWDOWN_API_URL: server.url, LOWDOWN_HOME: path.join(w.root, 'ld') };
    const code = await main(['status', '--client', 'cursor'], { ...w.where, env, stdout: out, stderr: out });
    assert.equal(code, 0);
    assert.match(out.text(), /^Cursor \(user\): .*\.cursor\/mcp\.json\n {2}brave-search +wrapped +npm:status-npx\n {6}npm:status-npx — 5 interactions, 5 rated from 1 network, success rate 80\.0% \(organic\), confidence low\n {2}figma +not wrappable/m);
    assert.match(out.text(), /local-tools +wrapped +npm:status-python\n {6}npm:status-python — no interactions recorded yet/);

    const down = sink();
    const port = await freePort();
    const code2 = await main(['status', '--client', 'cursor'], { ...w.where, env: { ...env, LOWDOWN_API_URL: `http://127.0.0.1:${port}` }, stdout: down, stderr: down });
    assert.equal(code2, 0);
    assert.match(down.text(), /brave-search +wrapped +npm:status-npx\n/);
    assert.match(down.text(), new RegExp(`Reputation not shown: The Lowdown API at http://127\\.0\\.0\\.1:${port} is unreachable`));
  } finally {
    w.cleanup();
  }
});

test('bad usage exits 2 with the help; a bad file exits 1 and names the file', async () => {
  const out = sink();
  assert.equal(await main(['wrap', '--client', 'emacs'], { stdout: out, stderr: out }), 2);
  assert.match(out.text(), /unknown client "emacs"; choose from claude-desktop, claude-code, cursor, cline, vscode, windsurf, continue\n\nUsage: lowdown-proxy wrap\|unwrap\|status/);
  const help = sink();
  assert.equal(await main(['unwrap', '--help'], { stdout: help, stderr: help }), 0);
  assert.match(help.text(), /--dry-run +print the diff/);
  const bad = sink();
  const missing = path.join(os.tmpdir(), `lowdown-missing-${process.pid}.json`);
  assert.equal(await main(['wrap', '--config', missing], { stdout: bad, stderr: bad }), 1);
  assert.match(bad.text(), new RegExp(`error: ${missing.replace(/[.]/g, '\\.')}: no such file`));
  process.exitCode = 0;
});
