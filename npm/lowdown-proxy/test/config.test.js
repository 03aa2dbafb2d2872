// `lowdown-proxy config` (SPEC §2): one stored setting points this user's hosts at a shared
// deployment, and then no local node is started. What may be stored is the core's; these
// check the command line, the file and what the hosts do with it, against a real server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { PROXY, SDK_SERVER, run } from './helpers/run.js';
import { eventually } from './helpers/api.js';
import { connect } from './helpers/scenario.js';
import { startLowdownServer } from './helpers/lowdown-server.js';
import { apiBase } from '../src/api.js';

const node = process.execPath;

/** A user who configured nothing in the environment, with a fresh LOWDOWN_HOME. */
function user(t, more = {}) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-config-'));
  t.after(() => fs.rmSync(home, { recursive: true, force: true }));
  const { LOWDOWN_API_URL: _a, PROWL_API_URL: _p, DATABASE_URL: _d, LOWDOWN_DEBUG: _g, ...env } = process.env;
  // A node start would be a failure here: one that cannot start says so on stderr.
  return { home, env: { ...env, LOWDOWN_HOME: home, LOWDOWN_SERVER_BIN: path.join(home, 'never-started'), ...more } };
}

/** `lowdown-proxy config ...`: {code, stdout, stderr}. */
async function config(env, ...args) {
  const r = await run(node, [PROXY, 'config', ...args], { env });
  return { code: r.code, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** What `lowdown-proxy status` says about where records go. */
async function status(env) {
  const r = await run(node, [PROXY, 'status', '--config', path.join(os.tmpdir(), 'no-such-mcp-config.json')], { env });
  assert.equal(r.code, 0, r.stderr.toString());
  return r.stdout.toString();
}

test('a stored deployment receives the records; no node is started; unset goes back to the local node', async (t) => {
  const server = await startLowdownServer('lowdown-config-server-');
  t.after(() => server.stop());
  const { home, env } = user(t);
  const set = await config(env, 'set', 'api-url', `${server.url}/`);
  assert.deepEqual(set, { code: 0, stdout: `Records now go to ${server.url}; no local node is started.\n`, stderr: '' });
  const file = path.join(home, 'config.json');
  assert.equal(fs.statSync(file).mode & 0o777, 0o600, 'readable by the user only');
  assert.deepEqual(await config(env, 'get', 'api-url'), { code: 0, stdout: `${server.url}\n`, stderr: '' });
  assert.equal(apiBase(env), server.url, 'lowdown-mcp asks the same deployment');

  const s = await connect(node, [PROXY, '--target', 'stored-target', '--', node, SDK_SERVER], env);
  let stderr = '';
  s.transport.stderr.on('data', (d) => (stderr += d));
  await s.client.callTool({ name: 'echo', arguments: { message: 'hi' } });
  await s.client.close();
  const rep = await eventually(async () => {
    const a = await (await fetch(`${server.url}/api/reputation/stored-target`)).json();
    return a.interactions === 1 ? a : null;
  }, 'the call at the stored deployment', 30_000);
  assert.equal(rep.interactions, 1);
  assert.equal(stderr, '', 'nothing started, nothing to say');
  assert.equal(fs.existsSync(path.join(home, 'local-node.json')), false);
  assert.ok((await status(env)).includes(`Records go to ${server.url} (lowdown-proxy config set api-url, in ${file}).`));

  // The environment still wins, and the command says so.
  const both = { ...env, LOWDOWN_API_URL: 'http://127.0.0.1:9' };
  assert.equal(apiBase(both), 'http://127.0.0.1:9');
  assert.match((await config(both, 'set', 'api-url', server.url)).stdout, /LOWDOWN_API_URL \(http:\/\/127\.0\.0\.1:9\) is set here and still wins over it/);

  assert.deepEqual(await config(env, 'unset', 'api-url'), { code: 0, stdout: 'No deployment stored: records go to the local node.\n', stderr: '' });
  assert.deepEqual(await config(env, 'get', 'api-url'), { code: 0, stdout: '', stderr: '' });
  assert.equal(apiBase(env), 'http://127.0.0.1:7077');
});

test('what is not a deployment URL is refused and nothing is written', async (t) => {
  const { home, env } = user(t);
  for (const bad of ['lowdown.example.org', 'https://me:secret@lowdown.example.org', 'https://x.example/?k=1', 'file:///etc/passwd']) {
    const r = await config(env, 'set', 'api-url', bad);
    assert.equal(r.code, 1, bad);
    assert.match(r.stderr, /^lowdown-proxy config: api-url ".*" (must|has) /, r.stderr);
    assert.ok(!r.stderr.includes('secret') || bad.includes('secret'));
  }
  assert.equal(fs.existsSync(path.join(home, 'config.json')), false);
  const unknown = await config(env, 'set', 'api_url', 'https://x.example');
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /unknown setting "api_url" \(settings: api-url\)/);
  for (const usage of [[], ['get'], ['set', 'api-url'], ['unset', 'api-url', 'x'], ['frob', 'api-url']]) {
    const r = await config(env, ...usage);
    assert.equal(r.code, 2, usage.join(' '));
    assert.match(r.stderr, /Usage: lowdown-proxy config get\|set\|unset api-url/);
  }
  assert.equal((await config(env, '--help')).code, 0);
});

test('a corrupt config.json is never overwritten, and records still reach the local node or the spool', async (t) => {
  const { home, env } = user(t, { LOWDOWN_AUTOSTART: '0' });
  const file = path.join(home, 'config.json');
  fs.writeFileSync(file, '{"api_url": "https://team.example"');
  const r = await config(env, 'set', 'api-url', 'https://other.example');
  assert.equal(r.code, 1);
  assert.match(r.stderr, /config\.json is not a JSON object of settings; fix or remove it/);
  assert.equal(fs.readFileSync(file, 'utf8'), '{"api_url": "https://team.example"', 'left as it was');
  const said = await status(env);
  assert.ok(said.includes('Records go to http://127.0.0.1:7077; LOWDOWN_AUTOSTART=0, so no local node is started.'), said);
  assert.ok(said.includes(`${file} is ignored: config.json is not a JSON object of settings; fix or remove it.`), said);
});


test('a deployment under a path keeps it, and a LOWDOWN_API_URL that is not a URL keeps the records and says so once', async (t) => {
  // A reverse proxy serving the API under /lowdown: it answers as the API does.
  const paths = [];
  const api = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url}`);
      const n = JSON.parse(body).length;
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, accepted: n, duplicates: 0, rejected: [], rate_limited: [] }));
    });
  });
  await new Promise((r) => api.listen(0, '127.0.0.1', r));
  t.after(() => api.close());
  const { home, env } = user(t);
  const one = async (more) => {
    const s = await connect(node, [PROXY, '--target', 'prefixed', '--', node, SDK_SERVER], { ...env, ...more });
    let stderr = '';
    s.transport.stderr.on('data', (d) => (stderr += d));
    await s.client.callTool({ name: 'echo', arguments: { message: 'hi' } });
    await s.client.close();
    return stderr;
  };
  assert.equal(await one({ LOWDOWN_API_URL: `http://127.0.0.1:${api.address().port}/lowdown/` }), '');
  await eventually(() => paths.length > 0, 'a delivery');
  assert.deepEqual([...new Set(paths)], ['POST /lowdown/api/interactions']);

  const said = await one({ LOWDOWN_API_URL: 'lowdown.example.org' });
  const spool = path.join(home, 'spool');
  assert.equal(said, `lowdown-proxy: the API URL "lowdown.example.org" must start with http:// or https://; records wait in ${spool} (set LOWDOWN_API_URL to the deployment's base URL)\n`);
  await eventually(() => fs.existsSync(spool) && fs.readdirSync(spool).some((f) => f.endsWith('.jsonl')), 'the records spooled');
  assert.match(await status({ ...env, LOWDOWN_API_URL: 'lowdown.example.org' }), /Records go nowhere: the API URL "lowdown\.example\.org" must start with http:\/\/ or https:\/\/ \(LOWDOWN_API_URL\); they wait in the spool\./);
});
