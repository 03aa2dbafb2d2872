// The local node (SPEC §2) with nothing configured: the first session starts the installed
// lowdown-server (here the debug build, named by LOWDOWN_SERVER_BIN as the workspace has no
// platform package) and its records reach it; the next session uses the same node and
// drains what the first spooled. LOWDOWN_AUTOSTART=0 starts nothing; a node that cannot
// start is said once, with where the records wait.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROXY, SDK_SERVER, run } from './helpers/run.js';
import { eventually } from './helpers/api.js';
import { connect } from './helpers/scenario.js';
import { SERVER_BIN } from './helpers/lowdown-server.js';

const node = process.execPath;
const TARGET = 'local-target';

/** The environment of a user who configured nothing, with `home` as LOWDOWN_HOME. */
function unconfigured(home, more = {}) {
  const { LOWDOWN_API_URL: _a, PROWL_API_URL: _p, DATABASE_URL: _d, LOWDOWN_DEBUG: _g, ...env } = process.env;
  return { ...env, LOWDOWN_HOME: home, LOWDOWN_SERVER_BIN: SERVER_BIN, ...more };
}

/** One session of `calls` echo calls through the proxy; what the proxy said on stderr. */
async function session(env, calls) {
  const s = await connect(node, [PROXY, '--target', TARGET, '--', node, SDK_SERVER], env);
  let stderr = '';
  s.transport.stderr.on('data', (d) => (stderr += d));
  for (let i = 0; i < calls; i += 1) await s.client.callTool({ name: 'echo', arguments: { message: `m${i}` } });
  return { stderr: () => stderr, close: () => s.client.close() };
}

/** The announcement of `home`'s node, or null. */
function announcement(home) {
  try {
    return JSON.parse(fs.readFileSync(path.join(home, 'local-node.json'), 'utf8'));
  } catch {
    return null;
  }
}

/**
 * A fresh LOWDOWN_HOME; after the test, the node it announces is ended (and waited for: one
 * left behind would answer the next test's sessions) before the directory goes.
 */
function home(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-local-node-'));
  t.after(async () => {
    const a = announcement(dir);
    if (a) {
      process.kill(a.pid, 'SIGTERM');
      await eventually(() => !fs.existsSync(path.join(dir, 'local-node.json')), 'the node ended', 10000);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** What `lowdown-proxy status` prints (no client config to look at). */
async function statusOf(env) {
  const r = await run(node, [PROXY, 'status', '--config', path.join(os.tmpdir(), 'no-such-mcp-config.json')], { env });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.toString();
}

const spooled = (home) => {
  const dir = path.join(home, 'spool');
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).length : 0;
};

test('nothing configured: two first sessions at once start one local node and their records reach it; the next one reuses it', async (t) => {
  const dir = home(t);
  const env = unconfigured(dir);
  const firsts = await Promise.all([session(env, 3), session(env, 3)]);
  // Generous waits: a node's first start on a loaded machine can take seconds.
  const node1 = await eventually(() => announcement(dir), 'a node announced', 60_000);
  assert.equal(fs.readlinkSync(`/proc/${node1.pid}/cwd`), fs.realpathSync(dir), 'the node runs in LOWDOWN_HOME, not the session\'s directory');
  await eventually(() => firsts.some((s) => s.stderr().includes('started')), 'a proxy said where records go', 60_000);
  await Promise.all(firsts.map((s) => s.close()));
  // One proxy started the node; the other found it starting (or, slower, answering already).
  const where = `at ${node1.url} (log: ${path.join(dir, 'local-node.log')}); what it records of ${TARGET}: ${node1.url}/t/${TARGET}`;
  const said = firsts.flatMap((s) => s.stderr().split('\n').filter((l) => l !== '')).sort();
  assert.equal(said[said.length - 1], `lowdown-proxy: started a local Lowdown node ${where}`, said.join('\n'));
  assert.deepEqual(said.slice(0, -1), said.length === 2 ? [`lowdown-proxy: recording to the local Lowdown node ${where}`] : []);
  const answer = async () => (await fetch(`${node1.url}/api/reputation/${TARGET}`)).json();

  // The next session drains the spool in the background: it stays open until it has.
  const second = await session(env, 1);
  const rep = await eventually(async () => {
    const a = await answer();
    return a.interactions === 7 ? a : null;
  }, 'all seven calls at the node, the spooled ones drained', 60_000);
  await second.close();
  assert.equal(second.stderr(), '', 'a running node is used as it is');
  assert.equal(announcement(dir).pid, node1.pid, 'one node');
  assert.equal(rep.rated_interactions, 7, 'loopback is trusted: nothing capped');
  assert.equal(spooled(dir), 0);
  const page = await fetch(`${node1.url}/t/${TARGET}`);
  assert.equal(page.status, 200, 'the page the proxy named');
  const status = await statusOf(env);
  assert.ok(status.includes(`Records go to the local node at ${node1.url} (process ${node1.pid}; log ${path.join(dir, 'local-node.log')}).`), status);
  assert.ok(status.includes(`Spool: 0 record(s) waiting in 0 file(s) in ${path.join(dir, 'spool')}.`), status);
  const nodeId = JSON.parse(fs.readFileSync(path.join(dir, 'node.json'), 'utf8')).node_id;
  assert.match(status, new RegExp(`\\nNode ${nodeId} \\([a-z]+\\): [1-9]\\d* interactions on 1 target, active on 1 day`), 'what the node has of this machine');
});

test('LOWDOWN_AUTOSTART=0 starts no node: the records wait in the spool, and nothing is said', async (t) => {
  const dir = home(t);
  const s = await session(unconfigured(dir, { LOWDOWN_AUTOSTART: '0' }), 2);
  await s.close();
  assert.equal(s.stderr(), '');
  assert.equal(announcement(dir), null);
  await eventually(() => spooled(dir) > 0, 'records spooled', 60_000);
  const status = await statusOf(unconfigured(dir, { LOWDOWN_AUTOSTART: '0' }));
  assert.ok(status.includes('Records go to http://127.0.0.1:7077; LOWDOWN_AUTOSTART=0, so no local node is started.'), status);
  const spool = path.join(dir, 'spool');
  const [file] = fs.readdirSync(spool);
  const records = fs.readFileSync(path.join(spool, file), 'utf8').trim().split('\n').length;
  assert.ok(status.includes(`Spool: ${records} record(s) waiting in 1 file(s) in ${spool}.`), status);
  // A torn line is no record; what the spool's bound dropped is said.
  fs.appendFileSync(path.join(spool, file), '{"torn\n');
  fs.writeFileSync(path.join(spool, 'dropped.json'), '{"dropped_records":4,"last_dropped_at":"2026-12-07T00:00:00Z"}\n');
  const after = await statusOf(unconfigured(dir, { LOWDOWN_AUTOSTART: '0' }));
  assert.ok(after.includes(`Spool: ${records} record(s) waiting in 1 file(s) in ${spool}; 4 dropped when it was full.`), after);
});

test('a node that cannot start is said once, with where the records wait', async (t) => {
  const dir = home(t);
  const missing = path.join(dir, 'no-such-lowdown-server');
  const s = await session(unconfigured(dir, { LOWDOWN_SERVER_BIN: missing }), 3);
  await eventually(() => s.stderr().includes('no Lowdown node'), 'the notice', 60_000);
  await s.close();
  const said = s.stderr().split('\n').filter((l) => l.startsWith('lowdown-proxy:'));
  assert.equal(said.length, 1, s.stderr());
  assert.match(said[0], /^lowdown-proxy: no Lowdown node to record to \(spawn .*no-such-lowdown-server ENOENT\); records wait in .*spool and go to the next node that answers/);
  assert.ok(spooled(dir) > 0);
});

const MCP = path.join(path.dirname(PROXY), 'lowdown-mcp.js');

/** The text of a tool result. */
const said = (r) => r.content.map((c) => c.text).join('\n');

test('lowdown-mcp with nothing configured starts the local node for the first question, and then answers about the sessions recorded there', async (t) => {
  const dir = home(t);
  const env = unconfigured(dir);
  const mcp = await connect(node, [MCP], env);
  t.after(() => mcp.client.close());
  const first = await mcp.client.callTool({ name: 'get_node_stats', arguments: {} });
  assert.equal(first.isError, undefined, said(first));
  const started = await eventually(() => announcement(dir), 'lowdown-mcp started a node', 60_000);

  const s = await session(env, 2);
  await s.close();
  assert.equal(s.stderr(), '', 'the session found the node lowdown-mcp started');
  const rep = await eventually(async () => {
    const r = await mcp.client.callTool({ name: 'get_lowdown', arguments: { target: TARGET } });
    return r.structuredContent?.interactions === 2 ? r : null;
  }, 'lowdown-mcp answers with the two recorded calls', 60_000);
  assert.match(said(rep), new RegExp(`Page with charts: ${started.url.replaceAll('.', '\\.')}/t/${TARGET}`));
  assert.equal(announcement(dir).pid, started.pid, 'one node');
});

test('lowdown-mcp says why when no node can start, and starts nothing with LOWDOWN_AUTOSTART=0', async (t) => {
  const dir = home(t);
  const missing = path.join(dir, 'no-such-lowdown-server');
  for (const [more, why] of [
    [{ LOWDOWN_SERVER_BIN: missing }, /is unreachable \(ECONNREFUSED\)\..* No local node could start either \(spawn .*no-such-lowdown-server ENOENT\)\./],
    [{ LOWDOWN_AUTOSTART: '0' }, /is unreachable \(ECONNREFUSED\)\. Is lowdown-server running there/],
  ]) {
    const mcp = await connect(node, [MCP], unconfigured(dir, more));
    try {
      for (let i = 0; i < 2; i += 1) {
        const r = await mcp.client.callTool({ name: 'get_lowdown', arguments: { target: TARGET } });
        assert.equal(r.isError, true);
        assert.match(said(r), why);
        assert.doesNotMatch(said(r), /No local node could start either.*No local node/);
      }
    } finally {
      await mcp.client.close();
    }
    assert.equal(announcement(dir), null);
  }
});

test('a session shorter than the node\'s start says where its records wait, and the node takes them when it runs', async (t) => {
  const dir = home(t);
  // A node slow to start: the session ends first.
  const slow = path.join(dir, 'slow-lowdown-server');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(slow, `#!/bin/sh\nsleep 3\nexec '${SERVER_BIN}' "$@"\n`, { mode: 0o755 });
  const s = await session(unconfigured(dir, { LOWDOWN_SERVER_BIN: slow }), 2);
  await s.close();
  const said = s.stderr().split('\n').filter((l) => l !== '');
  assert.deepEqual(said, [`lowdown-proxy: starting a local Lowdown node (log: ${path.join(dir, 'local-node.log')}); this session's records wait in ${path.join(dir, 'spool')} and go to it once it runs`]);
  const started = await eventually(() => announcement(dir), 'the node announced', 60_000);
  const rep = await eventually(async () => {
    const a = await (await fetch(`${started.url}/api/reputation/${TARGET}`)).json();
    return a.interactions === 2 ? a : null;
  }, 'the node drained the spool itself, with no session after', 60_000);
  assert.equal(rep.interactions, 2);
  await eventually(() => spooled(dir) === 0, 'the spool emptied', 10_000);
});
