import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { observe } from '../src/node.js';
import { BATCH_MAX } from '../src/observe.js';
import { ANSWER_MAX_BYTES } from '../src/read.js';
import { targetApi, collector, closeAll } from './helpers.mjs';

const CANARY = 'CANARY_c4a7f1_do_not_leak';
let api;

before(async () => { api = await targetApi(); });
after(closeAll);

test('a successful call is reported with host, method, status, latency and bytes', async () => {
  const sink = await collector();
  const f = observe(fetch, { apiUrl: sink.url, allowPrivate: true });
  const res = await f(`${api.url}/ok`);
  assert.equal(await res.text(), 'hello world');
  await f.lowdown.flush();
  const [obs] = sink.observations();
  assert.equal(obs.host, '127.0.0.1');
  assert.equal(obs.method, 'GET');
  assert.equal(obs.status, 200);
  assert.equal(obs.response_bytes, 11);
  assert.equal(obs.source, 'organic');
  assert.ok(obs.latency_ms > 0 && obs.latency_ms < 5000, `latency ${obs.latency_ms}`);
  assert.equal(sink.observations().length, 1);
  await sink.close();
});

test('4xx, 429 and 5xx statuses are reported as they were', async () => {
  const sink = await collector();
  const f = observe(fetch, { apiUrl: sink.url, allowPrivate: true });
  for (const path of ['/missing', '/throttled', '/broken']) await (await f(`${api.url}${path}`)).arrayBuffer();
  await f.lowdown.flush();
  assert.deepEqual(sink.observations().map((o) => o.status), [404, 429, 500]);
  await sink.close();
});

test('a network error is reported with status null and the original error rethrown', async () => {
  const sink = await collector();
  let thrown;
  const raw = (...args) => fetch(...args).catch((err) => { thrown = err; throw err; });
  const f = observe(raw, { apiUrl: sink.url, allowPrivate: true });
  const closed = await targetApi();
  await closed.close();
  await assert.rejects(f(`${closed.url}/ok`), (err) => err === thrown);
  await f.lowdown.flush();
  const [obs] = sink.observations();
  assert.equal(obs.status, null);
  assert.equal(obs.response_bytes, null);
  await sink.close();
});

test('the caller gets the very same Response, and a streaming body is untouched', async () => {
  const sink = await collector();
  let original;
  const raw = async (...args) => (original = await fetch(...args));
  const f = observe(raw, { apiUrl: sink.url, allowPrivate: true });
  const res = await f(`${api.url}/stream`);
  assert.equal(res, original);
  assert.equal(res.bodyUsed, false);
  assert.equal(await res.text(), 'chunk 0\nchunk 1\nchunk 2\nchunk 3\nchunk 4\n');
  await f.lowdown.flush();
  assert.equal(sink.observations()[0].response_bytes, null, 'no Content-Length: bytes unknown, body not read');
  await sink.close();
});

test('only the host leaves the machine: path, query, headers and body never do', async () => {
  const sink = await collector();
  const f = observe(fetch, { apiUrl: sink.url, allowPrivate: true });
  const req = new Request(`${api.url}/ok/${CANARY}?token=${CANARY}#${CANARY}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CANARY}`, 'x-secret': CANARY },
    body: `{"password":"${CANARY}"}`,
  });
  await (await f(req)).arrayBuffer();
  await f(`http://user:${CANARY}@127.0.0.1:${api.port}/ok`).then((r) => r.arrayBuffer(), () => undefined);
  await f.lowdown.flush();
  assert.ok(sink.observations().length >= 1);
  assert.equal(sink.observations()[0].method, 'POST');
  assert.ok(!sink.allBytes().includes(CANARY), 'a canary reached the collector');
  assert.ok(!sink.allBytes().includes('/ok'), 'a path reached the collector');
  await sink.close();
});

test('private and loopback hosts are not reported unless allowed', async () => {
  const sink = await collector();
  const f = observe(fetch, { apiUrl: sink.url });
  await (await f(`${api.url}/ok`)).arrayBuffer();
  await f.lowdown.flush();
  assert.equal(sink.received.length, 0);
  assert.equal(f.lowdown.stats.blocked, 1);
  await sink.close();
});

test('an allowlist restricts reports to its hosts', async () => {
  const sink = await collector();
  const f = observe(fetch, { apiUrl: sink.url, allowPrivate: true, allowlist: ['example.com'] });
  await (await f(`${api.url}/ok`)).arrayBuffer();
  await f.lowdown.flush();
  assert.equal(sink.received.length, 0);
  await sink.close();
});

// No durations measured: a caller that waited on the hanging delivery would see it end (it
// is abandoned after SEND_TIMEOUT_MS) before its own call resolved. The test timeout only
// turns an unbounded flush into a failure instead of a hung suite.
test('a telemetry endpoint that never answers costs the caller nothing', { timeout: 15000 }, async () => {
  const sink = await collector('hang');
  // With a key: a batch (100) and ten more are past the anonymous budget of 60 an hour.
  const f = observe(fetch, { apiUrl: sink.url, allowPrivate: true, agentKey: 'ak_budget_600' });
  // A full batch starts a delivery, which the endpoint leaves hanging.
  for (let i = 0; i < BATCH_MAX; i++) await (await f(`${api.url}/ok`)).arrayBuffer();
  let delivered = false;
  f.lowdown.flush().then(() => { delivered = true; });
  for (let i = 0; i < 10; i++) {
    await (await f(`${api.url}/ok`)).arrayBuffer();
    assert.equal(delivered, false, `call ${i} resolved only after the hanging delivery ended`);
  }
  await f.lowdown.flush(); // resolves although the endpoint never answers: bounded by the send timeout
  assert.equal(f.lowdown.stats.failed, BATCH_MAX + 10);
  await sink.close();
});

// The core reads every answer (as prowl does): only the API's own answer delivers.
for (const mode of ['404', 'page']) {
  test(`an API URL answering ${mode === '404' ? 'a 404' : 'a page that is not the API'} counts every observation failed`, async () => {
    const sink = await collector(mode);
    const f = observe(fetch, { apiUrl: sink.url, allowPrivate: true });
    for (let i = 0; i < 3; i++) await (await f(`${api.url}/ok`)).arrayBuffer();
    await f.lowdown.flush();
    assert.equal(sink.observations().length, 3, 'they were posted');
    const { sent, failed, throttled } = f.lowdown.stats;
    assert.deepEqual({ sent, failed, throttled }, { sent: 0, failed: 3, throttled: 0 });
    await sink.close();
  });
}

// A hostile or misconfigured API URL cannot make the client buffer what it likes: the answer
// is read up to ANSWER_MAX_BYTES, and a longer one (here the API's own answer padded) is no answer.
for (const [what, answerBytes, delivered] of [
  ['exactly the bound', ANSWER_MAX_BYTES, true],
  ['one byte over the bound', ANSWER_MAX_BYTES + 1, false],
  ['a huge body (8 MiB)', 8 * 1024 * 1024, false],
]) {
  test(`an answer of ${what} is ${delivered ? 'read' : 'not read, and counts every observation failed'}`, async () => {
    const sink = await collector('ok', { answerBytes });
    const f = observe(fetch, { apiUrl: sink.url, allowPrivate: true });
    for (let i = 0; i < 3; i++) await (await f(`${api.url}/ok`)).arrayBuffer();
    await f.lowdown.flush();
    assert.equal(sink.observations().length, 3, 'they were posted');
    const { sent, failed } = f.lowdown.stats;
    assert.deepEqual({ sent, failed }, delivered ? { sent: 3, failed: 0 } : { sent: 0, failed: 3 });
    await sink.close();
  });
}

test('workers: each delivery is handed to waitUntil', async () => {
  const sink = await collector();
  const kept = [];
  const f = observe(fetch, { apiUrl: sink.url, allowPrivate: true, waitUntil: (p) => kept.push(p) });
  await (await f(`${api.url}/ok`)).arrayBuffer();
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(kept.length, 1);
  await Promise.all(kept);
  assert.equal(sink.observations().length, 1);
  await sink.close();
});

test('agent key goes in X-Agent-Key; PROWL_TELEMETRY=0 returns fetch unchanged', async () => {
  const sink = await collector();
  const f = observe(fetch, { apiUrl: sink.url, allowPrivate: true, agentKey: 'ak_test123' });
  await (await f(`${api.url}/ok`)).arrayBuffer();
  await f.lowdown.flush();
  assert.match(sink.received[0].headers, /x-agent-key\nak_test123/i);
  assert.equal(observe(fetch, { enabled: false }), fetch);
  await sink.close();
});

test('bad options are misuse and throw at once', () => {
  assert.throws(() => observe('not a function'), TypeError);
  assert.throws(() => observe(fetch, { source: 'made-up' }), /source must be one of/);
  assert.throws(() => observe(fetch, { sampleRate: 2 }), /sampleRate/);
});
