// Sampled calls through the real sampling gateway, end to end (SPEC §10): a real
// lowdown-server with --gateway-listen, behind a relay that records what reaches it, and a
// services.toml naming a local vendor four times: `/on` sampled at rate 1.0 (inject, allowing
// POST /v1/charges and the redirect), `/off` at 0.0, `/mine` (passthrough) and `/ex` (inject,
// everything). observe(fetch) under Node must send the allowed `/on` calls through the
// gateway carrying none of the user's own secrets (the vendor sees the operator's credential
// and nothing of the agent), every call the rules do not allow and the `/off` calls straight
// to the vendor, as they were, a passthrough call with the user's own credential, and only
// the services PROWL_GATEWAY_SERVICES names.
import http from 'node:http';
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
const relayed = [];

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
  const inject = 'header = "X-Vendor-Key", env = "VENDOR_KEY_FIXTURE", format = "vk {}"';
  const service = (slug, base, rate, allow, credential = inject) => `
[[service]]
slug = "${slug}"
service_id = "svc_${slug}"
upstream = "${vendor.url}/${base}"
hosts = ["127.0.0.1"]
sampling_rate = ${rate}
allow = ${JSON.stringify(allow)}
credential = { ${credential} }
`;
  const catalog = path.join(dir, 'services.toml');
  fs.writeFileSync(catalog, service('sampled', 'on', '1.0', ['POST /v1/charges', 'GET /redirect', 'GET /v1/landed'])
    + service('unsampled', 'off', '0.0', ['GET /'])
    + service('mine', 'mine', '1.0', ['POST /v1/customers'], 'mode = "passthrough", header = "Authorization"')
    + service('excluded', 'ex', '1.0', ['GET /']));
  const gatewayPort = await freePort();
  // A relay in front of the gateway records what observe sent it.
  const relay = await serve((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const headers = {};
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers[req.rawHeaders[i].toLowerCase()] = req.rawHeaders[i + 1];
      relayed.push({ method: req.method, url: req.url, headers });
      const out = http.request({ host: '127.0.0.1', port: gatewayPort, method: req.method, path: req.url, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode, up.headers);
        up.pipe(res);
      });
      out.end(Buffer.concat(chunks));
    });
  });
  gatewayUrl = relay.url;
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
  for (const gone of ['authorization', 'cookie', 'x-custom', 'x-agent-key', 'x-prowl-salt-id', 'x-prowl-sample-decision']) {
    assert.equal(r.headers[gone], undefined, `${gone} reached the vendor`);
  }
  assert.equal(r.body, body);
  assert.ok(!JSON.stringify(r).includes(agent.agent_key) && !JSON.stringify(r).includes('CANARY_user'));
  // The user's own secrets never left the process: the gateway did not receive them either.
  const [sent] = relayed.filter((x) => x.url === r.url.replace('/on/', '/sampled/'));
  assert.equal(sent.headers['x-agent-key'], agent.agent_key);
  for (const gone of ['authorization', 'cookie', 'x-vendor-key', 'x-custom']) assert.equal(sent.headers[gone], undefined, `${gone} was sent to the gateway`);
  assert.ok(!JSON.stringify(sent).includes('CANARY_user'));
}

test('sampled calls go through the gateway, unsampled ones straight to the vendor', async () => {
  const agent = await register();
  const f = await routedFetch(agent);
  assert.equal(f.lowdown.gateway.status().agentId, agent.agent_id, 'the salt answer named this key\'s agent');
  const before = await calls('sampled');
  const headers = { authorization: USER_SECRET, cookie: 'session=CANARY_user_cookie', 'x-vendor-key': 'vk CANARY_user_own_key', 'x-custom': 'CANARY_user_custom' };
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
  // A roll this agent could not honestly hold (as after a catalog or salt change): the salt's
  // id with another value, handed to the core's router as if fetched.
  const catalog = await (await fetch(`${server.url}/v1/services`)).text();
  const salt = await (await fetch(`${server.url}/v1/sampling/salt`, { headers: { 'x-agent-key': agent.agent_key } })).json();
  assert.equal(f.lowdown.gateway.router.loaded(Date.now(), catalog, JSON.stringify({ ...salt, salt: '0'.repeat(64) })), true);
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

test('calls the rules do not allow go straight to the vendor, and are still observed', async () => {
  const agent = await register();
  const f = await routedFetch(agent);
  const before = relayed.length;
  // The reproductions: a read and a refund on a sampled service that allows neither.
  await (await f(`${vendor.url}/on/v1/customers?mark=unallowed`, { headers: { authorization: USER_SECRET } })).arrayBuffer();
  await (await f(`${vendor.url}/on/v1/refunds?mark=unallowed`, { method: 'POST', body: 'x', headers: { authorization: USER_SECRET } })).arrayBuffer();
  await (await f(`${vendor.url}/on/v1/charges?mark=unallowed`, { headers: { authorization: USER_SECRET } })).arrayBuffer();
  for (const p of ['/on/v1/customers', '/on/v1/refunds', '/on/v1/charges']) {
    const [direct] = got(`${p}?mark=unallowed`);
    assert.equal(direct.headers.authorization, USER_SECRET, 'sent direct, on the user\'s own account');
    assert.equal(direct.headers['x-vendor-key'], undefined);
    assert.equal(direct.headers['x-agent-key'], undefined);
  }
  assert.equal(relayed.length, before, 'nothing reached the gateway');
  assert.equal(f.lowdown.gateway.status().counts.routed, 0);
  assert.equal(f.lowdown.stats.queued, 3, 'each call was observed as telemetry');
});

test('a passthrough call carries the user\'s own credential', async () => {
  const agent = await register();
  const f = await routedFetch(agent);
  const secret = 'Bearer CANARY_passthrough_observe';
  const res = await f(`${vendor.url}/mine/v1/customers?mark=pass`, { method: 'POST', body: '{}', headers: { authorization: secret, cookie: 'session=CANARY_user_cookie' } });
  assert.equal(res.status, 200);
  const [r] = got('/mine/v1/customers?mark=pass');
  assert.equal(r.headers.authorization, secret, 'the vendor saw the user\'s own credential');
  assert.equal(r.headers['x-vendor-key'], undefined);
  assert.equal(r.headers.cookie, undefined);
  const [sent] = relayed.filter((x) => x.url === '/mine/v1/customers?mark=pass');
  assert.equal(sent.headers.cookie, undefined, 'only the credential header goes with it');
  const listed = await (await fetch(`${server.url}/v1/services/mine`)).text();
  assert.ok(listed.includes('"passthrough"') && !listed.includes('CANARY_passthrough'));
});

test('PROWL_GATEWAY_SERVICES limits routing to the services it names', async () => {
  const agent = await register();
  const all = await routedFetch(agent);
  await (await all(`${vendor.url}/ex/v1/things?mark=all`, { headers: { authorization: USER_SECRET } })).arrayBuffer();
  assert.equal(got('/ex/v1/things?mark=all')[0].headers['x-vendor-key'], `vk ${VENDOR_KEY}`, 'unset: every service whose rules match');
  const named = await routedFetch(agent, { gatewayServices: 'sampled, svc_mine' });
  await (await named(`${vendor.url}/ex/v1/things?mark=named`, { headers: { authorization: USER_SECRET } })).arrayBuffer();
  const [direct] = got('/ex/v1/things?mark=named');
  assert.equal(direct.headers.authorization, USER_SECRET, 'excluded: direct');
  assert.equal(direct.headers['x-vendor-key'], undefined);
  await (await named(`${vendor.url}/on/v1/charges?mark=named`, { method: 'POST', body: 'b' })).arrayBuffer();
  assert.equal(got('/on/v1/charges?mark=named')[0].headers['x-vendor-key'], `vk ${VENDOR_KEY}`, 'named by slug: routed');
});
