// Node identity (SPEC §3.5) and the bounded spool, on a real temp file system.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { tempDir } from './helpers/run.js';
import { loadNodeIdentity, lowdownHome } from '../src/record/home.js';
import { spoolRecords, claimNext, MAX_FILES, MAX_RECORDS_PER_FILE, spoolDir } from '../src/record/spool.js';
import { Sender, ANSWER_MAX_BYTES } from '../src/record/sender.js';
import { startLowdownServer } from './helpers/lowdown-server.js';
import { deliverSpool, eventually, spooledRecords } from './helpers/api.js';

/** A valid record (JSON text), as the core's Recorder writes them; the spool keeps only such. */
const rec = (id, taskType = 'a') => JSON.stringify({ record_id: id, target: 'npm:spool-test', target_type: 'tool', task_type: taskType, outcome: 'success', request_kind: 'tool' });

test('node.json is created once with mode 0600 and a ld_<12 hex> id, then reused', (t) => {
  const home = path.join(tempDir(t), 'nested', 'home');
  const a = loadNodeIdentity(home);
  assert.match(a.node_id, /^ld_[0-9a-f]{12}$/);
  assert.equal(a.created, true);
  assert.ok(!Number.isNaN(Date.parse(a.created_at)));
  const file = path.join(home, 'node.json');
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), { node_id: a.node_id, created_at: a.created_at });
  const b = loadNodeIdentity(home);
  assert.equal(b.node_id, a.node_id);
  assert.equal(b.created, false);
});

test('a corrupt node.json is regenerated', (t) => {
  const home = tempDir(t);
  for (const bad of ['{not json', '{"node_id":"ld_XYZ","created_at":"x"}', '[]', '']) {
    fs.writeFileSync(path.join(home, 'node.json'), bad);
    const id = loadNodeIdentity(home);
    assert.equal(id.created, true, `regenerated from ${JSON.stringify(bad)}`);
    assert.match(JSON.parse(fs.readFileSync(path.join(home, 'node.json'), 'utf8')).node_id, /^ld_[0-9a-f]{12}$/);
  }
});

test('LOWDOWN_HOME overrides ~/.lowdown', () => {
  assert.equal(lowdownHome({ LOWDOWN_HOME: '/x/y' }), '/x/y');
  assert.match(lowdownHome({}), /\.lowdown$/);
});

test('the spool keeps at most MAX_FILES files, drops the oldest and counts what it dropped', (t) => {
  const home = tempDir(t);
  spoolRecords(home, [rec('first'), rec('first-2')]);
  for (let i = 0; i < MAX_FILES; i += 1) spoolRecords(home, [rec(`r${i}`)]);
  const files = fs.readdirSync(spoolDir(home)).filter((f) => f.endsWith('.jsonl'));
  assert.equal(files.length, MAX_FILES);
  const dropped = JSON.parse(fs.readFileSync(path.join(spoolDir(home), 'dropped.json'), 'utf8'));
  assert.equal(dropped.dropped_records, 2);
  const all = files.map((f) => fs.readFileSync(path.join(spoolDir(home), f), 'utf8')).join('');
  assert.ok(!all.includes('"first"'), 'oldest file dropped');
  for (const f of files) assert.equal(fs.statSync(path.join(spoolDir(home), f)).mode & 0o777, 0o600);
});

test('a large batch is split into files of MAX_RECORDS_PER_FILE; claims are exclusive and released on failure', (t) => {
  const home = tempDir(t);
  const recs = Array.from({ length: MAX_RECORDS_PER_FILE + 3 }, (_, i) => rec(`id${i}`));
  spoolRecords(home, recs);
  const a = claimNext(home);
  const b = claimNext(home);
  assert.equal(a.records.length + b.records.length, recs.length);
  assert.equal(claimNext(home), null, 'both files claimed');
  a.release();
  const again = claimNext(home);
  assert.deepEqual(again.records, a.records);
  again.done();
  b.done();
  assert.equal(claimNext(home), null);
});

test('Sender: API down → records spooled within the exit budget; API back → spool delivered once', async (t) => {
  const home = tempDir(t);
  const received = [];
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const records = JSON.parse(body);
      received.push({ headers: req.headers, records });
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, accepted: records.length, duplicates: 0, rejected: [], rate_limited: [] }));
    });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => srv.close());
  const down = new Sender({ apiUrl: 'http://127.0.0.1:9', home, nodeId: 'ld_000000000001', version: 't', debug: () => {} });
  for (let i = 0; i < 5; i += 1) down.addLines(rec(`x${i}`));
  await down.shutdown(100);
  assert.equal(down.stats.spooled, 5);

  const up = new Sender({ apiUrl: `http://127.0.0.1:${srv.address().port}`, home, nodeId: 'ld_000000000001', version: 't', debug: () => {} });
  up.drainSpoolSoon();
  up.addLines(rec('live'));
  const deadline = Date.now() + 5000;
  while (received.flatMap((r) => r.records).length < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  await up.shutdown(1000);
  const ids = received.flatMap((r) => r.records.map((x) => x.record_id)).sort();
  assert.deepEqual(ids, ['live', 'x0', 'x1', 'x2', 'x3', 'x4']);
  assert.equal(received[0].headers['x-lowdown-node-id'], 'ld_000000000001');
  assert.equal(claimNext(home), null, 'spool empty after delivery');
});

test('Sender: without a node id (node.json unwritable) the node-id header is left out, not sent as "null"', async (t) => {
  const home = tempDir(t);
  const headers = [];
  const srv = http.createServer((req, res) => {
    headers.push(req.headers);
    req.resume().on('end', () => res.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true,"accepted":1,"duplicates":0,"rejected":[],"rate_limited":[]}'));
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => srv.close());
  const s = new Sender({ apiUrl: `http://127.0.0.1:${srv.address().port}`, home, nodeId: null, version: 't', debug: () => {} });
  s.addLines(rec('anon-1'));
  await s.shutdown(1000);
  assert.equal(headers.length, 1);
  assert.equal('x-lowdown-node-id' in headers[0], false);
});

test('Sender: a hanging API does not hold shutdown: the batch under way is spooled', async (t) => {
  const home = tempDir(t);
  const srv = http.createServer(() => {}); // never answers
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => srv.closeAllConnections() || srv.close());
  const s = new Sender({ apiUrl: `http://127.0.0.1:${srv.address().port}`, home, nodeId: 'ld_000000000002', version: 't', debug: () => {} });
  s.addLines(rec('slow-1'));
  await new Promise((r) => setTimeout(r, 250)); // the batch is in flight
  await s.shutdown(100);
  const c = claimNext(home);
  assert.deepEqual(c.records.map((r) => JSON.parse(r).record_id), ['slow-1']);
});

test('proxies starting at once on a fresh home agree on one node id', async (t) => {
  const home = tempDir(t);
  const { spawn } = await import('node:child_process');
  const script = `import('${new URL('../src/record/home.js', import.meta.url).href}').then((m) => process.stdout.write(m.loadNodeIdentity(process.argv[1]).node_id))`;
  const ids = await Promise.all(
    Array.from({ length: 6 }, () =>
      new Promise((resolve) => {
        const c = spawn(process.execPath, ['-e', script, home]);
        let out = '';
        c.stdout.on('data', (d) => (out += d));
        c.on('close', () => resolve(out));
      }),
    ),
  );
  assert.equal(new Set(ids).size, 1, ids.join(' '));
  assert.equal(JSON.parse(fs.readFileSync(path.join(home, 'node.json'), 'utf8')).node_id, ids[0]);
  assert.deepEqual(fs.readdirSync(home), ['node.json'], 'no temp files left');
});

test('Sender: with the API down, batches gather into full spool files rather than many small ones', async (t) => {
  const home = tempDir(t);
  const s = new Sender({ apiUrl: 'http://127.0.0.1:9', home, nodeId: 'ld_000000000003', version: 't', debug: () => {} });
  for (let round = 0; round < 12; round += 1) {
    for (let i = 0; i < 100; i += 1) s.addLines(rec(`r${round}-${i}`));
    await new Promise((r) => setTimeout(r, 30));
  }
  await s.shutdown(1000);
  const files = fs.readdirSync(spoolDir(home)).filter((f) => f.endsWith('.jsonl'));
  assert.ok(files.length <= 3, `${files.length} files for 1200 records`);
  const ids = files.flatMap((f) => fs.readFileSync(path.join(spoolDir(home), f), 'utf8').trim().split('\n').map((l) => JSON.parse(l).record_id));
  assert.equal(new Set(ids).size, 1200, 'every record spooled once');
});

test('Sender against the real server: records over a quota are spooled, then sent once the server takes them', async (t) => {
  const home = tempDir(t);
  const db = path.join(tempDir(t), 'quota.db');
  const node = 'ld_0000000000aa';
  const withNode = (id) => JSON.stringify({ ...JSON.parse(rec(id)), node_id: node });
  const limited = await startLowdownServer('lowdown-quota-', { db, args: ['--quota', 'records-per-network=3'] });
  t.after(limited.stop);
  const s = new Sender({ apiUrl: limited.url, home, nodeId: node, version: 't', debug: () => {} });
  for (let i = 0; i < 5; i += 1) s.addLines(withNode(`q${i}`));
  await eventually(() => s.stats.sent + s.stats.limited >= 5, 'the batch answered');
  await s.shutdown(1000);
  assert.deepEqual([s.stats.sent, s.stats.limited, s.stats.spooled], [3, 2, 2]);
  assert.deepEqual(spooledRecords(home).map((r) => r.record_id), ['q3', 'q4'], 'the last two, by index');
  await limited.stop();
  // The next run, once the server takes them (here: a higher quota on the same database).
  const open = await startLowdownServer('lowdown-quota-', { db, args: ['--quota', 'records-per-network=10'] });
  t.after(open.stop);
  await deliverSpool(home, open.url);
  const rep = await (await fetch(`${open.url}/api/reputation/npm:spool-test`)).json();
  assert.equal(rep.interactions, 5, 'each once');
});

test('Sender: a 404 (a mistyped API URL) keeps the records in the spool', async (t) => {
  const home = tempDir(t);
  const srv = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>'));
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => srv.close());
  const s = new Sender({ apiUrl: `http://127.0.0.1:${srv.address().port}/not-lowdown`, home, nodeId: 'ld_000000000003', version: 't', debug: () => {} });
  s.addLines(rec('kept-1'));
  await eventually(() => s.stats.spooled + s.toSpool.length >= 1, 'the answer read');
  await s.shutdown(100);
  assert.deepEqual(spooledRecords(home).map((r) => r.record_id), ['kept-1']);
  assert.equal(s.stats.rejected, 0, 'nothing dropped');
});

// A hostile or misconfigured API URL cannot make the proxy buffer what it likes: the answer is
// read up to ANSWER_MAX_BYTES, and a longer one (here the API's own answer, padded with spaces
// and streamed without a Content-Length) is taken as no answer: the records stay in the spool.
for (const [what, bytes, delivered] of [
  ['exactly the bound', ANSWER_MAX_BYTES, true],
  ['8 MiB', 8 * 1024 * 1024, false],
]) {
  test(`Sender: an answer of ${what} ${delivered ? 'is read' : 'is not read, and the records are kept'}`, async (t) => {
    const home = tempDir(t);
    const srv = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.on('error', () => {}); // the proxy stops reading
        res.writeHead(201, { 'content-type': 'application/json' });
        const body = Buffer.alloc(bytes, ' ');
        body.write('{"ok":true,"accepted":1,"duplicates":0,"rejected":[],"rate_limited":[]}');
        for (let at = 0; at < body.length && !res.destroyed; at += 64 * 1024) res.write(body.subarray(at, at + 64 * 1024));
        res.end();
      });
    });
    await new Promise((r) => srv.listen(0, '127.0.0.1', r));
    t.after(() => srv.closeAllConnections() || srv.close());
    const s = new Sender({ apiUrl: `http://127.0.0.1:${srv.address().port}`, home, nodeId: 'ld_000000000004', version: 't', debug: () => {} });
    s.addLines(rec('big-1'));
    await eventually(() => s.stats.sent + s.stats.spooled + s.toSpool.length >= 1, 'the answer read');
    await s.shutdown(100);
    assert.equal(s.stats.sent, delivered ? 1 : 0);
    assert.deepEqual(spooledRecords(home).map((r) => r.record_id), delivered ? [] : ['big-1']);
  });
}
