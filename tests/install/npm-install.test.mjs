// The npm packages as a user gets them: the tarballs `make package` wrote to dist/ are copied
// into an empty project outside the repository and installed with npm, their third-party
// dependencies coming from the registry, and run on a PATH with no Rust toolchain. The server
// is `npx lowdown-server` from its package (the prebuilt binary of this platform). Then a real
// MCP session (the official SDK client, server-everything) runs through `npx lowdown-proxy`,
// recording to it: once on the native core, once with the native package removed (the
// WebAssembly fallback, which must record the same), and once with no core at all (relaying
// only, said once).

import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = path.join(ROOT, 'dist');
const TARGET = 'npm:@modelcontextprotocol/server-everything';
const CANARY = 'CANARY_npm_install_9d2';
let project;
/** The user's PATH without any directory holding cargo: nothing here may need Rust. */
const PATH_NO_CARGO = process.env.PATH.split(path.delimiter)
  .filter((d) => !fs.existsSync(path.join(d, 'cargo')))
  .join(path.delimiter);
const ENV = { ...process.env, PATH: PATH_NO_CARGO };

// The client side, run inside the installed project (its own SDK, its own npx).
const SESSION = `
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
let stderr = '';
(async () => {
  const transport = new StdioClientTransport({
    command: 'npx', args: ['--no-install', 'lowdown-proxy', '--', 'npx', '--no-install', '@modelcontextprotocol/server-everything', 'stdio'],
    env: process.env, stderr: 'pipe',
  });
  transport.stderr.on('data', (d) => (stderr += d));
  const client = new Client({ name: 'install-test', version: '1.0.0' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const sums = [];
  for (let i = 0; i < 3; i += 1) sums.push((await client.callTool({ name: 'get-sum', arguments: { a: i, b: 1 } })).content[0].text);
  const echo = (await client.callTool({ name: 'echo', arguments: { message: process.argv[1] } })).content[0].text;
  const bad = await client.callTool({ name: 'no-such-tool', arguments: {} });
  // With WAIT_FOR_SAID, the session stays open until the proxy said that (at most a minute).
  for (let i = 0; process.env.WAIT_FOR_SAID && !stderr.includes(process.env.WAIT_FOR_SAID) && i < 1200; i += 1) await new Promise((r) => setTimeout(r, 50));
  await client.close();
  console.log(JSON.stringify({ tools: tools.length, sums, echo, bad: bad.isError === true, stderr }));
})().catch((e) => { console.error(e); console.error('the proxy said: ' + JSON.stringify(stderr)); process.exit(1); });
`;

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** Whether `url` answers `/healthz`. */
const healthy = (url) => fetch(`${url}/healthz`).then((r) => r.ok, () => false);

/**
 * `npx lowdown-server` from the installed package on a fresh SQLite database, once it answers;
 * stopped (SIGTERM to npx) after the test. Its URL, the npx process and its end.
 */
async function spawnServer(t) {
  const port = await freePort();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-install-server-'));
  // In a process group of its own, as a terminal runs a command: stop() signals the group.
  const child = spawn('npx', ['--no-install', 'lowdown-server', '--listen', `127.0.0.1:${port}`, '--db', path.join(home, 'db.sqlite')], {
    cwd: project,
    env: { ...ENV, LOWDOWN_HOME: home },
    stdio: 'ignore',
    detached: true,
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const stop = (/** @type {NodeJS.Signals} */ signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {}
    return exited;
  };
  t.after(async () => {
    await stop('SIGTERM');
    fs.rmSync(home, { recursive: true, force: true });
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; !(await healthy(url)); i += 1) {
    assert.ok(i < 400, 'lowdown-server did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, stop };
}

/** The URL of a server as [spawnServer] starts it. */
const startServer = async (t) => (await spawnServer(t)).url;

/** Runs the session in the installed project against `apiUrl`; its result and the node id. */
function runSession(apiUrl) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-install-home-'));
  const env = { ...ENV, LOWDOWN_API_URL: apiUrl, LOWDOWN_HOME: home, LOWDOWN_DEBUG: '1' };
  const out = JSON.parse(execFileSync(process.execPath, ['-e', SESSION, CANARY], { cwd: project, env, encoding: 'utf8', timeout: 120_000 }));
  const nodeId = fs.existsSync(path.join(home, 'node.json')) ? JSON.parse(fs.readFileSync(path.join(home, 'node.json'), 'utf8')).node_id : null;
  fs.rmSync(home, { recursive: true, force: true });
  return { ...out, nodeId };
}

/** The contributor answer for the target once all `want` interactions have landed. */
async function answer(apiUrl, nodeId, want) {
  for (let i = 0; ; i += 1) {
    const a = await (await fetch(`${apiUrl}/api/reputation/${encodeURIComponent(TARGET)}`, { headers: { 'x-lowdown-node-id': nodeId } })).json();
    if ((a.interactions ?? 0) + (a.protocol_requests ?? 0) >= want) return a;
    assert.ok(i < 100, `records did not arrive: ${JSON.stringify(a)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** What must be the same whichever core recorded: every count and breakdown, not times. */
function facts(a) {
  const { source, recent_trends, latency_ms, ...rest } = a;
  return { ...rest, recent_trends: recent_trends?.map(({ count, success_rate }) => ({ count, success_rate })) };
}

before(() => {
  const tarballs = fs.readdirSync(DIST).filter((f) => f.endsWith('.tgz'));
  assert.ok(tarballs.includes('lowdown-proxy-0.2.0.tgz'), 'run `make package` first');
  project = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-npm-install-'));
  for (const f of tarballs) fs.copyFileSync(path.join(DIST, f), path.join(project, f));
  fs.writeFileSync(path.join(project, 'package.json'), '{ "name": "install-test", "private": true }\n');
  const ours = ['lowdown-proxy', 'lowdown-core', 'lowdown-core-wasm', `lowdown-core-${nativePlatform()}`, 'lowdown-server', `lowdown-server-${nativePlatform()}`].map((n) => `./${n}-0.2.0.tgz`);
  // zod 3 at the project's root, as in a project that uses it: lowdown-mcp must still describe
  // its tools (it builds them with the zod the SDK resolves).
  execFileSync('npm', ['install', '--no-audit', '--no-fund', ...ours, '@modelcontextprotocol/server-everything@2026.8.31', '@modelcontextprotocol/sdk@1.32.2', 'zod@3.25.76'], {
    cwd: project,
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 300_000,
  });
});
after(() => project && fs.rmSync(project, { recursive: true, force: true }));

/** napi's name for this machine's platform package. */
function nativePlatform() {
  const arch = { x64: 'x64', arm64: 'arm64' }[process.arch];
  const libc = process.report.getReport().header.glibcVersionRuntime ? 'gnu' : 'musl';
  return `linux-${arch}-${libc}`;
}

test('the PATH the tests run on has no cargo', () => {
  assert.equal(spawnSync('cargo', ['--version'], { env: ENV }).error?.code, 'ENOENT');
});

test('npx lowdown-server runs the prebuilt binary, which Ctrl-C stops; its launcher passes SIGTERM on and ends as the server did', async (t) => {
  const version = execFileSync('npx', ['--no-install', 'lowdown-server', '--version'], { cwd: project, env: ENV, encoding: 'utf8' });
  assert.equal(version.trim(), 'lowdown-server 0.2.0');
  const bin = execFileSync(process.execPath, ['--input-type=module', '-e', "import('lowdown-server').then((m) => console.log(m.binaryPath()))"], { cwd: project, env: ENV, encoding: 'utf8' }).trim();
  assert.equal(bin, fs.realpathSync(path.join(project, 'node_modules', `lowdown-server-${nativePlatform()}`, 'lowdown-server')));
  const { url, stop } = await spawnServer(t);
  await stop('SIGINT');
  // The server drains what is in flight, then ends; one that outlived npx would answer on.
  for (let i = 0; await healthy(url); i += 1) {
    assert.ok(i < 200, 'lowdown-server still answers after npx ended');
    await new Promise((r) => setTimeout(r, 50));
  }

  // The launcher alone, signalled alone (as a supervisor that knows one pid does).
  const port = await freePort();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-install-launcher-'));
  t.after(() => fs.rmSync(home, { recursive: true, force: true }));
  const launcher = spawn(path.join(project, 'node_modules', '.bin', 'lowdown-server'), ['--listen', `127.0.0.1:${port}`, '--db', path.join(home, 'db.sqlite')], {
    env: { ...ENV, LOWDOWN_HOME: home },
    stdio: 'ignore',
  });
  const ended = new Promise((resolve) => launcher.on('exit', (code, signal) => resolve([code, signal])));
  for (let i = 0; !(await healthy(`http://127.0.0.1:${port}`)); i += 1) {
    assert.ok(i < 400, 'lowdown-server did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  launcher.kill('SIGTERM');
  assert.deepEqual(await ended, [0, null], 'the server stopped gracefully and the launcher ended with its code');
  assert.equal(await healthy(`http://127.0.0.1:${port}`), false);
});

test('nothing installed points into the repository', () => {
  const manifest = fs.readFileSync(path.join(project, 'node_modules', 'lowdown-proxy', 'package.json'), 'utf8');
  assert.equal(JSON.parse(manifest).dependencies['lowdown-core'], '0.2.0');
  const lock = fs.readFileSync(path.join(project, 'package-lock.json'), 'utf8');
  assert.ok(!lock.includes(ROOT), 'the lockfile names a path in the repository');
  const core = JSON.parse(fs.readFileSync(path.join(project, 'node_modules', 'lowdown-core', 'package.json'), 'utf8'));
  assert.deepEqual(Object.keys(core.optionalDependencies).sort(), ['lowdown-core-linux-arm64-gnu', 'lowdown-core-linux-x64-gnu', 'lowdown-core-linux-x64-musl']);
  const server = JSON.parse(fs.readFileSync(path.join(project, 'node_modules', 'lowdown-server', 'package.json'), 'utf8'));
  assert.equal(server.optionalDependencies[`lowdown-server-${nativePlatform()}`], '0.2.0');
});

test('with nothing configured, a session starts the local node from the installed lowdown-server, and lowdown-mcp answers from it', async (t) => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-install-local-'));
  const { LOWDOWN_API_URL: _a, PROWL_API_URL: _p, DATABASE_URL: _d, LOWDOWN_SERVER_BIN: _b, ...rest } = ENV;
  const env = { ...rest, LOWDOWN_HOME: home };
  const announced = () => {
    try {
      return JSON.parse(fs.readFileSync(path.join(home, 'local-node.json'), 'utf8'));
    } catch {
      return null;
    }
  };
  t.after(async () => {
    const node = announced();
    if (node) {
      process.kill(node.pid, 'SIGTERM');
      for (let i = 0; announced() && i < 200; i += 1) await new Promise((r) => setTimeout(r, 50));
    }
    fs.rmSync(home, { recursive: true, force: true });
  });
  // The first session lasts until the proxy has said where its records go (the node's start
  // can outlast a short session; its records then wait in the spool for the next one).
  const firstEnv = { ...env, WAIT_FOR_SAID: 'lowdown-proxy: ' };
  const first = JSON.parse(execFileSync(process.execPath, ['-e', SESSION, CANARY], { cwd: project, env: firstEnv, encoding: 'utf8', timeout: 120_000 }));
  assert.deepEqual(first.sums, ['The sum of 0 and 1 is 1.', 'The sum of 1 and 1 is 2.', 'The sum of 2 and 1 is 3.']);
  const node = announced();
  assert.ok(node, 'the node announced itself');
  const said = (out) => out.stderr.split('\n').filter((l) => l.startsWith('lowdown-proxy:'));
  assert.deepEqual(said(first), [`lowdown-proxy: started a local Lowdown node at ${node.url} (log: ${path.join(home, 'local-node.log')}); what it records of ${TARGET}: ${node.url}/t/${TARGET}`]);
  assert.match(fs.readFileSync(`/proc/${node.pid}/cmdline`, 'utf8'), new RegExp(`node_modules/lowdown-server-${nativePlatform()}/lowdown-server\0serve\0--local-node`), 'the installed binary, found by module resolution');
  // A second session reuses the node and delivers what the first one spooled.
  const second = JSON.parse(execFileSync(process.execPath, ['-e', SESSION, CANARY], { cwd: project, env, encoding: 'utf8', timeout: 120_000 }));
  assert.deepEqual(said(second), []);
  const nodeId = JSON.parse(fs.readFileSync(path.join(home, 'node.json'), 'utf8')).node_id;
  const rep = await answer(node.url, nodeId, 14);
  assert.equal(rep.interactions, 10);
  assert.equal(rep.capped, 0, 'loopback is trusted');
  const { answer: told } = JSON.parse(execFileSync(process.execPath, ['-e', MCP_ASK, TARGET], { cwd: project, env, encoding: 'utf8', timeout: 120_000 }));
  assert.notEqual(told.isError, true, JSON.stringify(told));
  assert.equal(told.structuredContent.interactions, 10, 'lowdown-mcp asked the local node');
  assert.ok(told.content[0].text.includes(`${node.url}/t/${TARGET}`), told.content[0].text);
  assert.ok(!JSON.stringify(told).includes(CANARY));
  const page = await fetch(`${node.url}/t/${TARGET}`);
  assert.equal(page.status, 200, 'the page the proxy named');
  assert.ok((await page.text()).includes(TARGET));
});

test('from the packages: LOWDOWN_AUTOSTART=0 starts nothing, a stored deployment is used, and a node ends after its idle time', async (t) => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-install-settings-'));
  t.after(() => fs.rmSync(home, { recursive: true, force: true }));
  const { LOWDOWN_API_URL: _a, PROWL_API_URL: _p, DATABASE_URL: _d, LOWDOWN_SERVER_BIN: _b, ...rest } = ENV;
  const env = { ...rest, LOWDOWN_HOME: home };
  const spooled = () => fs.readdirSync(path.join(home, 'spool')).filter((f) => f.endsWith('.jsonl')).length;

  // As today: no node, the records wait in the spool, nothing is said.
  const off = JSON.parse(execFileSync(process.execPath, ['-e', SESSION, CANARY], { cwd: project, env: { ...env, LOWDOWN_AUTOSTART: '0' }, encoding: 'utf8', timeout: 120_000 }));
  assert.deepEqual(off.stderr.split('\n').filter((l) => l.startsWith('lowdown-proxy:')), []);
  assert.ok(!fs.existsSync(path.join(home, 'local-node.json')));
  assert.ok(spooled() > 0, 'the records wait in the spool');

  // One stored setting: the next session delivers there (and the spool with it), no node starts.
  const server = { url: await startServer(t) };
  const npx = (args) => execFileSync('npx', ['--no-install', 'lowdown-proxy', ...args], { cwd: project, env, encoding: 'utf8' });
  assert.match(npx(['config', 'set', 'api-url', server.url]), /^Records now go to http:\/\/127\.0\.0\.1:\d+; no local node is started\.\n$/);
  execFileSync(process.execPath, ['-e', SESSION, CANARY], { cwd: project, env, encoding: 'utf8', timeout: 120_000 });
  const nodeId = JSON.parse(fs.readFileSync(path.join(home, 'node.json'), 'utf8')).node_id;
  const rep = await answer(server.url, nodeId, 14);
  assert.equal(rep.interactions, 10, 'both sessions, the spooled one drained');
  assert.ok(!fs.existsSync(path.join(home, 'local-node.json')), 'no node started');
  assert.match(npx(['status', '--config', path.join(home, 'no-such-config.json')]), new RegExp(`Records go to ${server.url.replaceAll('.', '\\.')} \\(lowdown-proxy config set api-url`));

  // The installed binary as a local node ends after --idle-exit, taking its announcement along.
  const nodeHome = path.join(home, 'idle');
  const idle = spawn('npx', ['--no-install', 'lowdown-server', 'serve', '--local-node', '--listen', `127.0.0.1:${await freePort()}`, '--idle-exit', '1'], { cwd: project, env: { ...env, LOWDOWN_HOME: nodeHome }, stdio: 'ignore' });
  const code = await new Promise((resolve) => idle.on('exit', resolve));
  assert.equal(code, 0);
  assert.ok(fs.existsSync(path.join(nodeHome, 'local-node.lock')) && !fs.existsSync(path.join(nodeHome, 'local-node.json')));
});

// lowdown-mcp asking about one target (argv[1]), as an agent's client starts it.
const MCP_ASK = `
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
(async () => {
  const client = new Client({ name: 'install-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: 'npx', args: ['--no-install', 'lowdown-mcp'], env: process.env }));
  const answer = await client.callTool({ name: 'get_lowdown', arguments: { target: process.argv[1] } });
  await client.close();
  console.log(JSON.stringify({ answer }));
})().catch((e) => { console.error(e); process.exit(1); });
`;

// lowdown-mcp as an agent's client starts it from the installed package.
const MCP_SESSION = `
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
(async () => {
  const transport = new StdioClientTransport({ command: 'npx', args: ['--no-install', 'lowdown-mcp'], env: process.env });
  const client = new Client({ name: 'install-test', version: '1.0.0' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const answer = await client.callTool({ name: 'get_lowdown', arguments: { target: 'npm:never-seen-here' } });
  await client.close();
  console.log(JSON.stringify({ tools, answer }));
})().catch((e) => { console.error(e); process.exit(1); });
`;

test('lowdown-mcp from the package describes every tool input to the agent and answers, beside a root zod 3', async (t) => {
  const api = await startServer(t);
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-install-mcp-'));
  t.after(() => fs.rmSync(home, { recursive: true, force: true }));
  const root = JSON.parse(fs.readFileSync(path.join(project, 'node_modules', 'zod', 'package.json'), 'utf8'));
  assert.equal(root.version, '3.25.76', 'the project hoists zod 3');
  const env = { ...ENV, LOWDOWN_API_URL: api, LOWDOWN_HOME: home };
  const { tools, answer } = JSON.parse(execFileSync(process.execPath, ['-e', MCP_SESSION], { cwd: project, env, encoding: 'utf8', timeout: 120_000 }));
  assert.deepEqual(tools.map((x) => x.name).sort(), ['compare_tools', 'get_lowdown', 'get_node_stats', 'record_interaction']);
  for (const tool of tools) {
    for (const [k, p] of Object.entries(tool.inputSchema.properties ?? {})) assert.ok(p.description, `${tool.name}.${k} is described`);
  }
  assert.equal(tools.find((x) => x.name === 'get_lowdown').inputSchema.properties.target.maxLength, 256);
  assert.notEqual(answer.isError, true, JSON.stringify(answer));
  assert.equal(answer.structuredContent.target, 'npm:never-seen-here');
});

test('native, then WebAssembly: the same session records the same facts; without a core, relaying goes on', async (t) => {
  const native = await startServer(t);
  const first = runSession(native);
  assert.deepEqual(first.sums, ['The sum of 0 and 1 is 1.', 'The sum of 1 and 1 is 2.', 'The sum of 2 and 1 is 3.']);
  assert.equal(first.echo, `Echo: ${CANARY}`);
  assert.match(first.stderr, /recording npm:@modelcontextprotocol\/server-everything with the native core/);
  // initialize, tools/list, 3 sums, echo, the rejected call: 7 records.
  const onNative = await answer(native, first.nodeId, 7);
  assert.equal(onNative.interactions, 5);
  assert.equal(onNative.rejected_requests, 1);
  assert.ok(!JSON.stringify(onNative).includes(CANARY));

  fs.rmSync(path.join(project, 'node_modules', `lowdown-core-${nativePlatform()}`), { recursive: true });
  const wasm = await startServer(t);
  const second = runSession(wasm);
  assert.deepEqual([second.tools, second.sums, second.echo, second.bad], [first.tools, first.sums, first.echo, first.bad]);
  assert.match(second.stderr, /with the wasm core/);
  const onWasm = await answer(wasm, second.nodeId, 7);
  assert.deepEqual(facts({ ...onWasm, target: null }), facts({ ...onNative, target: null }));

  fs.rmSync(path.join(project, 'node_modules', 'lowdown-core-wasm'), { recursive: true });
  const none = await startServer(t);
  const third = runSession(none);
  assert.deepEqual([third.sums, third.echo], [first.sums, first.echo], 'the session works unchanged');
  const said = third.stderr.split('\n').filter((l) => l.startsWith('lowdown-proxy: lowdown-core did not load'));
  assert.equal(said.length, 1, third.stderr);
  assert.match(said[0], /recording and --watch-log off, MCP traffic is relayed unchanged$/);
  const nothing = await (await fetch(`${none}/api/reputation/${encodeURIComponent(TARGET)}`)).json();
  assert.ok(!nothing.interactions, JSON.stringify(nothing));
});

test('without its platform package, npx lowdown-server says which package to install', () => {
  const dir = path.join(project, 'node_modules', `lowdown-server-${nativePlatform()}`);
  fs.renameSync(dir, `${dir}.away`);
  try {
    const r = spawnSync('npx', ['--no-install', 'lowdown-server', '--version'], { cwd: project, env: ENV, encoding: 'utf8' });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`^lowdown-server: lowdown-server-${nativePlatform()} is not installed`, 'm'));
  } finally {
    fs.renameSync(`${dir}.away`, dir);
  }
});
