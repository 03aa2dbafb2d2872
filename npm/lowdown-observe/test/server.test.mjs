// End to end: the observed fetch reports to the real lowdown-server, and the reputation
// answer for the host shows the observations in its telemetry block.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { observe } from '../src/node.js';
import { targetApi, lowdownServer, closeAll } from './helpers.mjs';

after(closeAll);

test('observations reach lowdown-server and appear in the host reputation', async () => {
  const api = await targetApi();
  const server = await lowdownServer();
  const f = observe(fetch, { apiUrl: server.url, allowPrivate: true });
  for (const path of ['/ok', '/ok', '/ok', '/broken', '/missing']) await (await f(`${api.url}${path}?q=CANARY_q`)).arrayBuffer();
  await f.lowdown.flush();
  assert.deepEqual(f.lowdown.stats, { queued: 5, sent: 5, dropped: 0, failed: 0, blocked: 0, errors: 0, unready: 0, throttled: 0 });
  const answer = await (await fetch(`${server.url}/api/reputation/127.0.0.1`)).json();
  assert.ok(answer.telemetry, `no telemetry block in ${JSON.stringify(answer)}`);
  assert.equal(answer.telemetry.observations, 5);
  assert.deepEqual(answer.telemetry.status_codes, { 200: 3, 404: 1, 500: 1 });
  assert.equal(answer.success_rate, null, 'telemetry never changes the interactions success_rate');
  assert.ok(!JSON.stringify(answer).includes('CANARY_q'));
});

test('an anonymous client sends 60 observations an hour, never more, and is never refused', async () => {
  const api = await targetApi();
  const server = await lowdownServer();
  const f = observe(fetch, { apiUrl: server.url, allowPrivate: true, unrefTimers: true });
  for (let i = 0; i < 100; i += 1) await (await f(`${api.url}/ok`)).arrayBuffer();
  await f.lowdown.flush();
  assert.equal(f.lowdown.stats.sent, 60);
  assert.equal(f.lowdown.stats.throttled, 0, 'the server never had to refuse');
  const answer = await (await fetch(`${server.url}/api/reputation/127.0.0.1`)).json();
  assert.equal(answer.telemetry.observations, 60);
});

test('two clients on one network share its 60 an hour: what the server refuses is dropped', async () => {
  const api = await targetApi();
  const server = await lowdownServer();
  const a = observe(fetch, { apiUrl: server.url, allowPrivate: true, unrefTimers: true });
  const b = observe(fetch, { apiUrl: server.url, allowPrivate: true, unrefTimers: true });
  for (let i = 0; i < 40; i += 1) await (await a(`${api.url}/ok`)).arrayBuffer();
  await a.lowdown.flush();
  // b keeps its own count (60 left, it thinks); the server knows the network sent 40.
  for (let i = 0; i < 40; i += 1) await (await b(`${api.url}/ok`)).arrayBuffer();
  await b.lowdown.flush();
  assert.equal(a.lowdown.stats.sent, 40);
  assert.deepEqual([b.lowdown.stats.sent, b.lowdown.stats.throttled, b.lowdown.stats.dropped], [20, 20, 20]);
  const answer = await (await fetch(`${server.url}/api/reputation/127.0.0.1`)).json();
  assert.equal(answer.telemetry.observations, 60);
});
