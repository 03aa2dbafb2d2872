// The proxy when the API is not there for it (SPEC §3): exit never waits on a hanging or a
// slow API, what was not delivered is in the spool, and the next run delivers the spool
// record by record, so one record the API refuses never costs the others.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { PROXY, SDK_SERVER, tempDir } from './helpers/run.js';
import { startApi, eventually } from './helpers/api.js';
import { connect } from './helpers/scenario.js';

const node = process.execPath;

/** An API that takes requests and answers them `delayMs` later, or never (`null`). */
async function lateApi(t, delayMs) {
  const state = { requests: 0, answeredAt: [] };
  const srv = http.createServer((req, res) => {
    state.requests += 1;
    req.resume();
    if (delayMs === null) return;
    setTimeout(() => {
      state.answeredAt.push(performance.now());
      res.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true,"accepted":0,"duplicates":0,"rejected":[]}');
    }, delayMs);
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => srv.closeAllConnections() || srv.close());
  return { url: `http://127.0.0.1:${srv.address().port}`, state };
}

/**
 * A short real session through the proxy, with an SDK server that ends as soon as its input
 * does; resolves with when the proxy had exited.
 */
async function session(env, underWay = async () => {}) {
  const c = await connect(node, [PROXY, '--target', 'npm:exit-test', '--', node, SDK_SERVER], env);
  for (let i = 0; i < 3; i += 1) await c.client.callTool({ name: 'echo', arguments: { message: `m${i}` } });
  await underWay();
  const exited = new Promise((resolve) => c.transport._process.once('exit', () => resolve(performance.now())));
  await c.client.close();
  return exited;
}

const spooled = (home) => {
  const dir = path.join(home, 'spool');
  if (!fs.existsSync(dir)) return [];
  // Waiting spool files (<ms:15>-<seq:8>-<pid>-<token>.jsonl): one record's JSON a line.
  return fs.readdirSync(dir).filter((f) => /^\d{15}-\d{8}-\d+-[0-9a-z]*\.jsonl$/.test(f))
    .flatMap((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter((l) => l.trim()).map((r) => JSON.parse(r)));
};

test('a hanging API never holds the exit: the records are in the spool', async (t) => {
  const api = await lateApi(t, null);
  const home = tempDir(t);
  // The client leaves once a delivery is under way, so one is outstanding at exit.
  await session({ ...process.env, LOWDOWN_HOME: home, LOWDOWN_API_URL: api.url }, () => eventually(() => api.state.requests >= 1, 'a delivery'));
  const records = spooled(home);
  assert.deepEqual(records.filter((r) => r.request_kind === 'tool').map((r) => r.task_type), ['echo', 'echo', 'echo']);
});

test('a slow API answers after the proxy is gone: the records are in the spool', async (t) => {
  const api = await lateApi(t, 1000);
  const home = tempDir(t);
  const exitedAt = await session({ ...process.env, LOWDOWN_HOME: home, LOWDOWN_API_URL: api.url }, () => eventually(() => api.state.requests >= 1, 'a delivery'));
  const answeredBefore = api.state.answeredAt.filter((at) => at < exitedAt).length;
  assert.ok(api.state.requests > answeredBefore, 'the proxy waited for the answer to its last delivery');
  assert.ok(spooled(home).some((r) => r.request_kind === 'tool'), 'what was under way is in the spool');
});

test('the next run delivers the spool record by record: one refused record costs nothing else', async (t) => {
  const api = await startApi(t);
  const home = tempDir(t);
  const record = (id, target) => JSON.stringify({ record_id: id, target, target_type: 'tool', task_type: 'old', outcome: 'success', request_kind: 'tool' });
  // The middle record is one only the server refuses (a private host is never stored).
  const lines = [record('keep-1', 'npm:exit-test'), record('private-1', 'url:10.0.0.7'), record('keep-2', 'npm:exit-test')];
  fs.mkdirSync(path.join(home, 'spool'), { recursive: true });
  fs.writeFileSync(path.join(home, 'spool', `${String(Date.now() - 1000).padStart(15, '0')}-00000001-1-left.jsonl`), lines.map((l) => `${l}\n`).join(''));
  await session({ ...process.env, LOWDOWN_HOME: home, LOWDOWN_API_URL: api.url });
  const answer = await eventually(async () => {
    const a = await (await fetch(`${api.directUrl}/api/reputation/npm:exit-test`)).json();
    return a.interactions >= 5 ? a : null;
  }, 'the spooled records and the new ones');
  assert.equal(answer.interactions, 5, 'three calls now and the two good spooled records');
  assert.deepEqual(spooled(home), [], 'the spool is delivered, the refused record not kept');
  const posted = api.requests().filter((r) => r.path === '/api/interactions').map((r) => JSON.parse(r.body));
  assert.ok(posted.some((batch) => batch.some((r) => r.record_id === 'private-1')), 'the refused record was offered');
});
