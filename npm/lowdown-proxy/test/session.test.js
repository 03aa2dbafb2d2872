// End to end with real parts: the SDK client drives @modelcontextprotocol/server-everything
// (and a small SDK-built server for isError and crashes) through the proxy, which records
// to a real lowdown-server. The client must see what it sees without the proxy; the server
// must receive correctly classified records and none of the canary strings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PROXY, EVERYTHING, SDK_SERVER, tempDir } from './helpers/run.js';
import { startApi, eventually } from './helpers/api.js';
import { everythingSession, connect, CANARY } from './helpers/scenario.js';

const node = process.execPath;

function allSpoolBytes(home) {
  const dir = path.join(home, 'spool');
  if (!fs.existsSync(dir)) return '';
  return fs.readdirSync(dir).map((f) => fs.readFileSync(path.join(dir, f), 'utf8')).join('\n');
}

function assertNoCanary(text, where) {
  for (const c of Object.values(CANARY)) assert.ok(!text.includes(c), `${c} found in ${where}`);
  assert.ok(!text.includes('CANARY'), `a canary found in ${where}`);
}

/** Compares two session outcomes; progress timing is compared loosely (see below). */
function assertSameOutcomes(a, b) {
  const strip = ({ progress, ...rest }) => rest;
  assert.deepEqual(strip(b), strip(a));
  // The last progress notification races the result in the server itself, direct or not.
  for (const p of [a.progress, b.progress]) {
    assert.ok(p.length >= 2, `progress notifications relayed: ${JSON.stringify(p)}`);
    assert.ok(p.every(([, total]) => total === 3));
  }
}

test('server-everything via the SDK: same answers as direct, and classified records at lowdown-server', async (t) => {
  const api = await startApi(t);
  const home = tempDir(t);
  const env = { ...process.env, LOWDOWN_HOME: home, LOWDOWN_API_URL: api.url };
  const direct = await everythingSession(node, [EVERYTHING, 'stdio'], env);
  const target = 'npm:@modelcontextprotocol/server-everything';
  const proxied = await everythingSession(node, [PROXY, '--test', '--actor', 'ci-agent', '--target', target, '--', node, EVERYTHING, 'stdio'], env);
  assertSameOutcomes(direct.out, proxied.out);
  assert.deepEqual(proxied.out.seen, { roots: 1, sampling: 1, elicitation: 1 });

  const records = await eventually(() => {
    const r = api.records(home);
    return r.some((x) => x.outcome === 'cancelled') && r.length >= 12 ? r : null;
  }, 'records at the server', 8000, () => JSON.stringify(api.records(home).map((r) => [r.task_type, r.outcome, r.error_layer])));
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(api.records(home).length, 12, 'one record per client request, none twice');
  const byTask = (task) => records.filter((r) => r.task_type === task);
  const one = (task) => {
    const r = byTask(task);
    assert.equal(r.length, 1, `one ${task} record, got ${JSON.stringify(r)}`);
    return r[0];
  };

  const node_id = JSON.parse(fs.readFileSync(path.join(home, 'node.json'), 'utf8')).node_id;
  for (const r of records) {
    assert.equal(r.target, target);
    assert.equal(r.actor, 'ci-agent');
    assert.equal(r.source, 'synthetic');
    assert.equal(r.target_type, 'tool');
    assert.equal(r.node_id, node_id);
    assert.equal(typeof r.latency_ms, 'number');
    assert.ok(r.latency_ms >= 0);
    assert.match(r.record_id, /^[0-9a-f]{32}-[0-9a-f]+$/, 'a random session prefix and a sequence number');
    assert.equal(r.recorder_version, `lowdown-proxy/${JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url))).version}`, 'who made it: <recorder>/<version>');
  }
  assert.equal(new Set(records.map((r) => r.record_id)).size, records.length, 'record ids are unique');

  assert.equal(one('initialize').request_kind, 'protocol');
  assert.equal(one('tools/list').request_kind, 'protocol');
  const echo = byTask('echo');
  assert.deepEqual(
    echo.map((r) => [r.outcome, r.error_layer ?? null, r.request_kind]).sort(),
    [['failure', 'request', 'tool'], ['success', null, 'tool']],
    'echo: one success, one invalid-arguments rejection',
  );
  const ok = echo.find((r) => r.outcome === 'success');
  assert.equal(ok.server_version, '2.0.0');
  assert.match(ok.schema_hash, /^[0-9a-f]{64}$/);
  assert.ok(ok.protocol_version);
  assert.equal(echo.find((r) => r.outcome === 'failure').failure_type, 'invalid_arguments');
  assert.equal(one('get-sum').outcome, 'success');
  const unknown = one('no-such-tool');
  assert.deepEqual([unknown.outcome, unknown.error_layer], ['failure', 'request']);
  const method = one('lowdown/no-such-method');
  assert.deepEqual([method.outcome, method.error_layer, method.request_kind], ['failure', 'request', 'protocol']);
  for (const task of ['get-roots-list', 'trigger-sampling-request', 'trigger-elicitation-request']) assert.equal(one(task).outcome, 'success', task);
  const longRuns = byTask('trigger-long-running-operation').map((r) => r.outcome).sort();
  assert.deepEqual(longRuns, ['cancelled', 'success']);
  for (const m of ['roots/list', 'sampling/createMessage', 'elicitation/create']) assert.equal(byTask(m).length, 0, `${m} is not recorded`);

  // The reputation answer counts what was recorded.
  const rep = await (await fetch(`${api.directUrl}/api/reputation/${encodeURIComponent(target)}`)).json();
  assert.equal(rep.resolved_target ?? rep.target, target);
  assert.ok(rep.interactions >= 1, JSON.stringify(rep));

  // Nothing from arguments, results, roots or sampling left the machine.
  assertNoCanary(api.bytes().toString('latin1'), 'bytes received by lowdown-server');
  assertNoCanary(allSpoolBytes(home), 'the spool');
});

test('isError results are tool failures; a crash mid-request is a server failure; the proxy exits with the child code', async (t) => {
  const api = await startApi(t);
  const home = tempDir(t);
  const env = { ...process.env, LOWDOWN_HOME: home, LOWDOWN_API_URL: api.url };
  // No --target: the label comes from the command (a script path → its basename).
  const { client, transport } = await connect(node, [PROXY, '--', node, SDK_SERVER], env);
  const failed = await client.callTool({ name: 'fail', arguments: { reason: CANARY.arg } });
  assert.equal(failed.isError, true);
  assert.equal(failed.content[0].text, `failed: ${CANARY.arg}`);
  const exited = new Promise((r) => transport._process.once('exit', (code) => r(code)));
  await assert.rejects(client.callTool({ name: 'crash', arguments: {} }));
  assert.equal(await exited, 9, 'the proxy exits with the child exit code');
  const records = await eventually(() => (api.records(home).some((r) => r.task_type === 'crash') ? api.records(home) : null), 'crash record');
  for (const r of records) assert.equal(r.target, 'mcp-server');
  const fail = records.find((r) => r.task_type === 'fail');
  assert.deepEqual([fail.outcome, fail.failure_type, fail.error_layer], ['failure', 'tool_error', 'tool']);
  assert.equal(fail.server_version, '1.2.3');
  const crash = records.find((r) => r.task_type === 'crash');
  assert.deepEqual([crash.outcome, crash.failure_type, crash.error_layer], ['failure', 'server_error', 'server']);
  assertNoCanary(api.bytes().toString('latin1'), 'bytes received by lowdown-server');
});

test('API down: records go to the spool (no canaries) and a later run delivers them, each counted once', async (t) => {
  const api = await startApi(t);
  const home = tempDir(t);
  const target = 'spool-target';
  const down = { ...process.env, LOWDOWN_HOME: home, LOWDOWN_API_URL: 'http://127.0.0.1:9' };
  const s1 = await connect(node, [PROXY, '--target', target, '--', node, SDK_SERVER], down);
  for (let i = 0; i < 3; i += 1) await s1.client.callTool({ name: 'echo', arguments: { message: `${CANARY.arg}-${i}` } });
  const closedAt = Date.now();
  await s1.client.close();
  assert.ok(Date.now() - closedAt < 3000);
  const spooled = allSpoolBytes(home);
  assert.ok(spooled.includes('"task_type":"echo"'), 'echo records spooled');
  assertNoCanary(spooled, 'the spool');
  const spooledIds = spooled.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l).record_id);

  const up = { ...down, LOWDOWN_API_URL: api.url };
  const s2 = await connect(node, [PROXY, '--target', target, '--', node, SDK_SERVER], up);
  await s2.client.callTool({ name: 'echo', arguments: { message: 'second run' } });
  await s2.client.close();
  const received = await eventually(() => {
    const ids = new Set(api.records().map((r) => r.record_id));
    return spooledIds.every((id) => ids.has(id)) ? api.records() : null;
  }, 'spooled records delivered');
  assert.equal(received.filter((r) => r.task_type === 'echo').length, 4);
  assert.equal(fs.readdirSync(path.join(home, 'spool')).filter((f) => f.endsWith('.jsonl')).length, 0, 'spool emptied');
  const rep = await (await fetch(`${api.directUrl}/api/reputation/${target}`)).json();
  assert.equal(rep.rated_interactions, 4, JSON.stringify(rep));
  assertNoCanary(api.bytes().toString('latin1'), 'bytes received by lowdown-server');
});

test('LOWDOWN_RECORD=0: the session works and nothing is sent or spooled', async (t) => {
  const api = await startApi(t);
  const home = tempDir(t);
  const env = { ...process.env, LOWDOWN_HOME: home, LOWDOWN_API_URL: api.url, LOWDOWN_RECORD: '0' };
  const s = await connect(node, [PROXY, '--', node, SDK_SERVER], env);
  const r = await s.client.callTool({ name: 'echo', arguments: { message: 'x' } });
  assert.equal(r.content[0].text, 'Echo: x');
  await s.client.close();
  await new Promise((res) => setTimeout(res, 300));
  assert.equal(api.records().length, 0);
  assert.equal(fs.existsSync(path.join(home, 'spool')), false);
  assert.equal(fs.existsSync(path.join(home, 'node.json')), false);
});

test('a slow API delays the proxy exit by at most ~1 s; what was not delivered is spooled', async (t) => {
  const net = await import('node:net');
  const sockets = [];
  const silent = net.createServer((s) => sockets.push(s)); // accepts, never answers
  await new Promise((r) => silent.listen(0, '127.0.0.1', r));
  t.after(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });
  const init = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n';
  const call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"${CANARY.arg}"}}}\n`;
  const timed = async (apiUrl) => {
    const home = tempDir(t);
    const started = Date.now();
    const { run } = await import('./helpers/run.js');
    // stdin stays open until the answer is back, then EOF: the child exits at once.
    let proxy;
    let out = '';
    const done = run(node, [PROXY, '--', node, SDK_SERVER], {
      env: { ...process.env, LOWDOWN_HOME: home, LOWDOWN_API_URL: apiUrl },
      chunks: [init, call],
      keepOpen: true,
      onSpawn: (c) => {
        proxy = c;
        c.stdout.on('data', (d) => (out += d));
      },
    });
    await eventually(() => out.includes('"id":2'), 'the tools/call answer');
    // Past the batch delay, so the record is in flight to the API when stdin ends.
    await new Promise((r) => setTimeout(r, 300));
    const eofAt = Date.now();
    proxy.stdin.end();
    const r = await done;
    assert.equal(r.code, 0, r.stderr);
    return { afterEof: Date.now() - eofAt, total: Date.now() - started, home };
  };
  const refused = await timed('http://127.0.0.1:9');
  const slow = await timed(`http://127.0.0.1:${silent.address().port}`);
  assert.ok(slow.afterEof - refused.afterEof < 1300, `slow API added ${slow.afterEof - refused.afterEof} ms to the exit`);
  const spooled = allSpoolBytes(slow.home);
  assert.ok(spooled.includes('"task_type":"echo"'), 'the undelivered record is spooled');
  assertNoCanary(spooled, 'the spool');
});

test('split and coalesced writes, CRLF and junk lines: one record per request, ids compared as written', async (t) => {
  const api = await startApi(t);
  const home = tempDir(t);
  const { run, CHILD } = await import('./helpers/run.js');
  const req = (id, name) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":{"secret":"${CANARY.arg}"}}}`;
  const split = req(1, 'split') + '\r\n';
  // --api-url wins over LOWDOWN_API_URL.
  const r = await run(node, [PROXY, '--target', 'framing', `--api-url=${api.url}`, '--', node, CHILD, 'respond'], {
    env: { ...process.env, LOWDOWN_HOME: home, LOWDOWN_API_URL: 'http://127.0.0.1:9' },
    chunks: [split.slice(0, 10), split.slice(10, 50), split.slice(50), 'not json at all\n' + req(2, 'coalesced') + '\n' + req('"2"', 'coalesced') + '\n'],
    gapMs: 40,
  });
  assert.equal(r.code, 0);
  assert.equal(r.stdout.toString().split('\r\n').filter(Boolean).length, 3, 'three answers relayed');
  const records = await eventually(() => (api.records(home).length >= 3 ? api.records(home) : null), 'three records');
  await new Promise((res) => setTimeout(res, 200));
  assert.deepEqual(api.records(home).map((x) => `${x.task_type}:${x.outcome}`).sort(), ['coalesced:success', 'coalesced:success', 'split:success']);
  assert.ok(records.every((x) => x.target === 'framing'));
  assertNoCanary(api.bytes().toString('latin1'), 'bytes received by lowdown-server');
});
