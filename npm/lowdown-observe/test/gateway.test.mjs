// Sampled calls through the real sampling gateway, end to end (SPEC §10): a real
// lowdown-server with --gateway-listen and a services.toml naming a local vendor twice,
// `/on` sampled at rate 1.0 and `/off` at 0.0. observe(fetch) under Node must send the `/on`
// calls through the gateway (the vendor sees the operator's credential and nothing of the
// agent) and the `/off` calls straight to the vendor, as they were.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { observe } from '../src/node.js';
import { serve, lowdownServer, targetApi, closeAll } from './helpers.mjs';
import { freePort } from '../../lowdown-proxy/test/helpers/lowdown-server.js';

const USER_SECRET = 'Bearer CANARY_user_vendor_token';
const VENDOR_KEY = 'CANARY_operator_key';
let vendor;
let server;
let gatewayUrl;
const received = [];

before(async () => {
  vendor = await serve((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const headers = {};
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers[req.rawHeaders[i].toLowerCase()] = req.rawHeaders[i + 1];
      received.push({ method: req.method, url: req.url, headers, body: Buffer.concat(chunks).toString() });
      const { pathname } = new URL(req.url, 'http://x');
      if (pathname.endsWith('/redirect')) return res.writeHead(302, { location: `${vendor.url}/${pathname.split('/')[1]}/v1/landed`, 'content-length': 0 }).end();
      const body = JSON.stringify({ path: req.url, method: req.method });
      return res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'observe-gateway-'));
  const service = (slug, base, rate) => `
[[service]]
slug = "${slug}"
service_id = "svc_${slug}"
upstream = "${vendor.url}/${base}"
hosts = ["127.0.0.1"]
sampling_rate = ${rate}
credential = { header = "X-Vendor-Key", env = "VENDOR_KEY_FIXTURE", format = "vk {}" }
`;
  const catalog = path.join(dir, 'services.toml');
  fs.writeFileSync(catalog, service('sampled', 'on', '1.0') + service('unsampled', 'off', '0.0'));
  const gatewayPort = await freePort();
  gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  server = await lowdownServer({
    args: ['--catalog', catalog, '--gateway-listen', `127.0.0.1:${gatewayPort}`, '--unsafe-allow-loopback'],
    env: { VENDOR_KEY_FIXTURE: VENDOR_KEY },
  });
});
after(closeAll);

async function register() {
  const res = await fetch(`${server.url}/v1/auth/agents/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'observe-gw', model_provider: 'acme', model_id: 'm-1', environment: 'test' }),
  });
  return res.json();
}

const calls = async (slug) => (await (await fetch(`${server.url}/v1/services/${slug}`)).json()).probe_health.n;
const got = (prefix) => received.filter((r) => r.url.startsWith(prefix));

async function waitFor(cond, what) {
  for (const deadline = Date.now() + 20000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    if (await cond()) return;
  }
  assert.fail(`timed out waiting for ${what}`);
}

async function routedFetch(agent, more = {}) {
  const f = observe(fetch, { apiUrl: server.url, agentKey: agent.agent_key, gatewayUrl, allowPrivate: true, unrefTimers: true, ...more });
  await f.lowdown.gateway.prefetch();
  assert.equal(f.lowdown.gateway.status().ready, true);
  return f;
}

function assertThroughGateway(r, agent, body) {
  assert.equal(r.headers['x-vendor-key'], `vk ${VENDOR_KEY}`, 'the gateway injected the operator credential');
  for (const gone of ['authorization', 'cookie', 'x-agent-key', 'x-prowl-salt-id', 'x-prowl-sample-decision']) {
    assert.equal(r.headers[gone], undefined, `${gone} reached the vendor`);
  }
  assert.equal(r.headers['x-custom'], 'kept');
  assert.equal(r.body, body);
  assert.ok(!JSON.stringify(r).includes(agent.agent_key) && !JSON.stringify(r).includes('CANARY_user'));
}

test('sampled calls go through the gateway, unsampled ones straight to the vendor', async () => {
  const agent = await register();
  const f = await routedFetch(agent);
  assert.equal(f.lowdown.gateway.status().agentId, agent.agent_id, 'the salt answer named this key\'s agent');
  const before = await calls('sampled');
  const headers = { authorization: USER_SECRET, cookie: 'session=CANARY_user_cookie', 'x-custom': 'kept' };
  const res = await f(`${vendor.url}/on/v1/charges?mark=url`, { method: 'POST', body: 'canary-body-url', headers });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { path: '/on/v1/charges?mark=url', method: 'POST' });
  assertThroughGateway(got('/on/v1/charges?mark=url')[0], agent, 'canary-body-url');

  // A Request object carries its method, headers and body through the gateway as well.
  await (await f(new Request(`${vendor.url}/on/v1/charges?mark=request`, { method: 'POST', body: 'canary-body-request', headers }))).arrayBuffer();
  assertThroughGateway(got('/on/v1/charges?mark=request')[0], agent, 'canary-body-request');
  await waitFor(async () => (await calls('sampled')) === before + 2, 'two ProxyCalls');

  await (await f(`${vendor.url}/off/v1/things?mark=direct`, { headers: { authorization: USER_SECRET } })).arrayBuffer();
  const [direct] = got('/off/v1/things?mark=direct');
  assert.equal(direct.headers.authorization, USER_SECRET, 'a direct call keeps the caller\'s own credential');
  assert.equal(direct.headers['x-vendor-key'], undefined);
  assert.ok(!Object.keys(direct.headers).some((h) => h.startsWith('x-prowl') || h === 'x-agent-key'), 'the agent key never goes to a vendor');
  assert.equal(await calls('unsampled'), 0, 'the gateway never saw an unsampled call');

  // fetch follows the redirect the gateway passes on, through the gateway.
  const landed = got('/on/v1/landed').length;
  const r = await f(`${vendor.url}/on/redirect`);
  assert.equal(r.status, 200);
  assert.deepEqual(got('/on/v1/landed').slice(landed).map((x) => x.headers['x-vendor-key']), [`vk ${VENDOR_KEY}`]);

  // Outside the catalog nothing changes.
  const api = await targetApi();
  assert.equal(await (await f(`${api.url}/ok`)).text(), 'hello world');
  assert.deepEqual(f.lowdown.gateway.status().counts, { routed: 3, direct: 1, fetches: 1, fetch_failures: 0, refused: 0 });
  await f.lowdown.flush();
});

test('a refused decision falls back to the vendor, and the router starts over', async () => {
  const agent = await register();
  const f = await routedFetch(agent);
  // A roll this agent could not honestly hold (as after a catalog or salt change).
  f.lowdown.gateway.state.decisions.set('svc_sampled', '0'.repeat(64));
  const res = await f(`${vendor.url}/on/v1/charges?mark=refused`, { method: 'POST', body: 'again', headers: { authorization: USER_SECRET } });
  assert.equal(res.status, 200, 'the caller gets the vendor\'s answer, not the gateway\'s 403');
  const [direct] = got('/on/v1/charges?mark=refused');
  assert.equal(direct.headers.authorization, USER_SECRET);
  assert.equal(direct.headers['x-vendor-key'], undefined);
  assert.equal(f.lowdown.gateway.status().counts.refused, 1);
  await waitFor(() => f.lowdown.gateway.status().ready, 'the router to fetch again');
});

test('the caller never waits for the catalog or the salt', async () => {
  let held = 0;
  const api = await serve(() => {
    held += 1; // accept the fetch and never answer it
  });
  const f = observe(fetch, { apiUrl: api.url, agentKey: 'ak_CANARY_agent_key', gatewayUrl, unrefTimers: true });
  const res = await f(`${vendor.url}/on/v1/charges?mark=early`);
  assert.equal(res.status, 200, 'the call finished while the catalog fetch still hangs');
  await waitFor(() => held >= 1, 'the router asking the API');
  assert.equal(f.lowdown.gateway.status().ready, false);
  assert.equal(got('/on/v1/charges?mark=early')[0].headers['x-agent-key'], undefined, 'sent direct, without the agent key');
  await api.close();
});

test('routing is off without a gateway URL or an agent key', async () => {
  const agent = await register();
  for (const f of [observe(fetch, { apiUrl: server.url, agentKey: agent.agent_key }), observe(fetch, { apiUrl: server.url, gatewayUrl })]) {
    assert.equal(f.lowdown.gateway, null);
  }
});
