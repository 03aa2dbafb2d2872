// lowdown-mcp driven by the official SDK client over stdio, against a real lowdown-server.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startServer, records, silentServer, freePort } from './mcp-helpers.js';
import { EVERYTHING_VERSION, registryEntry, runScan, startEverything, startNpm, startPypi, startRegistry } from './helpers/scan-fixtures.js';

const BIN = new URL('../bin/lowdown-mcp.js', import.meta.url).pathname;
const OTHER_NODE = 'ld_0123456789ab';

let server;
let home;

async function connect(env) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN], env: { PATH: process.env.PATH, ...env }, stderr: 'pipe' });
  const client = new Client({ name: 'lowdown-test', version: '1.0.0' });
  await client.connect(transport);
  // As real clients do: the listed outputSchemas are then checked against every
  // structuredContent the tools return (the SDK client refuses a mismatch).
  await client.listTools();
  return client;
}

const text = (r) => r.content.map((c) => c.text).join('\n');

before(async () => {
  server = await startServer();
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-home-'));
  await server.post([
    ...records('npm:alpha-search', 8, { node_id: OTHER_NODE }),
    ...records('npm:alpha-search', 2, { outcome: 'failure', failure_type: 'tool_error', error_layer: 'tool' }),
    ...records('npm:beta-search', 3),
    ...records('npm:beta-search', 4, { source: 'seeded' }),
    ...records('pypi:delta-search', 6, { task_type: 'fetch' }),
    ...records('npm:gamma-search', 2, { request_kind: 'protocol', task_type: 'tools/list' }),
  ]);
});

after(async () => {
  await server?.stop();
  if (home) fs.rmSync(home, { recursive: true, force: true });
});

test('lists the four tools with input and output schemas an agent can act on', async () => {
  const c = await connect({ LOWDOWN_API_URL: server.url, LOWDOWN_HOME: home });
  try {
    const { tools } = await c.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.deepEqual(Object.keys(byName).sort(), ['compare_tools', 'get_lowdown', 'get_node_stats', 'record_interaction']);
    for (const t of tools) {
      assert.ok(t.description.length > 40, `${t.name} has a real description`);
      assert.equal(t.outputSchema?.type, 'object', `${t.name} declares an outputSchema`);
      for (const [k, p] of Object.entries(t.inputSchema.properties ?? {})) assert.ok(p.description, `${t.name}.${k} is described`);
    }
    assert.deepEqual(byName.compare_tools.inputSchema.required, ['candidates']);
    assert.equal(byName.compare_tools.inputSchema.properties.candidates.minItems, 2);
    assert.equal(byName.compare_tools.inputSchema.properties.candidates.maxItems, 5);
    // Values and limits are the core's contract, the ones the API enforces.
    const record = byName.record_interaction.inputSchema.properties;
    assert.deepEqual(record.outcome.enum, ['success', 'partial', 'failure', 'cancelled']);
    assert.equal(record.target.maxLength, 256);
    assert.equal(record.task_type.maxLength, 128);
    assert.equal(record.actor.maxLength, 128);
    assert.equal(byName.get_lowdown.inputSchema.properties.target.maxLength, 256);
  } finally {
    await c.close();
  }
});

test('get_lowdown answers with the facts, readable and structured; node.json is created 0600', async () => {
  const c = await connect({ LOWDOWN_API_URL: server.url, LOWDOWN_HOME: home });
  try {
    const r = await c.callTool({ name: 'get_lowdown', arguments: { target: 'npm:alpha-search' } });
    assert.ok(!r.isError, text(r));
    assert.equal(r.structuredContent.interactions, 10);
    assert.equal(r.structuredContent.rated_interactions, 10);
    assert.equal(r.structuredContent.success_rate, 0.8);
    // Ten rated, all from this machine's network: low, since one network is one view.
    assert.equal(r.structuredContent.networks, 1);
    assert.equal(r.structuredContent.confidence, 'low');
    assert.match(text(r), /npm:alpha-search — 10 interactions, 10 rated from 1 network, success rate 80\.0% \(organic\), confidence low/);
    const seeded = await c.callTool({ name: 'get_lowdown', arguments: { target: 'npm:beta-search' } });
    assert.equal(seeded.structuredContent.rated_interactions, 3, 'seeded records never count in the rate');
    assert.match(text(seeded), /By source: organic 3; seeded 4; synthetic 0 \(only organic counts in the success rate\)/);
    const node = JSON.parse(fs.readFileSync(path.join(home, 'node.json'), 'utf8'));
    assert.match(node.node_id, /^ld_[0-9a-f]{12}$/);
    assert.ok(!Number.isNaN(Date.parse(node.created_at)));
    assert.equal(fs.statSync(path.join(home, 'node.json')).mode & 0o777, 0o600);
  } finally {
    await c.close();
  }
});

test('get_lowdown reads the Registry, Scanner and package blocks in words and links the page', async () => {
  const everything = await startEverything();
  const registry = await startRegistry([
    registryEntry({
      name: 'io.github.modelcontextprotocol/server-everything',
      version: EVERYTHING_VERSION,
      remotes: [{ type: 'streamable-http', url: `${everything.url}/mcp` }],
      packages: [['npm', '@modelcontextprotocol/server-everything', EVERYTHING_VERSION], ['pypi', 'Fixture_Everything', '0.1.0'], ['oci', 'ghcr.io/fixture/everything', '1']],
    }),
  ]);
  const npm = await startNpm({ '@modelcontextprotocol/server-everything': ['2099.1.1', { [EVERYTHING_VERSION]: '', '2099.1.1': 'CANARY_deprecation_text' }] });
  const pypi = await startPypi({ 'fixture-everything': { status: 'archived', versions: ['0.1.0'], latest: '0.1.0' } });
  const c = await connect({ LOWDOWN_API_URL: server.url, LOWDOWN_HOME: home });
  try {
    const summary = await runScan(server.db, { registry: registry.url, npm: npm.url, pypi: pypi.url });
    assert.equal(summary.status, 'completed');
    assert.deepEqual(summary.by_level, { 2: 1 });
    assert.deepEqual(summary.packages, { checked: 2, found: 2, not_found: 0, failed: 0 });
    const today = new Date().toISOString().slice(0, 10);
    // No records of its own: the npm name answers with the one Registry entry declaring it.
    const r = await c.callTool({ name: 'get_lowdown', arguments: { target: 'npm:@modelcontextprotocol/server-everything' } });
    assert.ok(!r.isError, text(r));
    const t = text(r);
    const entry = 'mcp:io.github.modelcontextprotocol/server-everything';
    assert.equal(r.structuredContent.resolved_target, entry);
    const lines = t.split('\n');
    assert.equal(lines[0], `Lowdown for ${entry} (asked as "npm:@modelcontextprotocol/server-everything")`);
    assert.equal(lines[1], `npm:@modelcontextprotocol/server-everything 2099.1.1 is deprecated on npm; pypi:fixture-everything is archived on PyPI; MCP Registry declaration recorded; observed daily by Lowdown Scanner since ${today}; no agent-reported interactions.`);
    assert.equal(lines[2], `Page with charts: ${server.url}/t/${entry}`);
    assert.ok(lines.includes(`MCP Registry: listed, status active; declared version "${EVERYTHING_VERSION}"; remote hosts 127.0.0.1.`), t);
    assert.match(t, new RegExp(`Lowdown Scanner \\(what it observed when it connected, once a day; tools are never called; never part of the success rate\\): observed since ${today}; latest ${today}T[0-9:.]+Z: level 2 \\(initialize and tools/list\\), HTTP 200, \\d+ tools, server version "[0-9A-Za-z.+_-]+", initialize \\d+ ms\\.`));
    assert.ok(lines.includes('Last 30 days: 1 observed day (level 2: 1), 1 observation; no day without an observation.'), t);
    assert.match(t, /Declared version \S+, observed server version \S+; declared hosts 127\.0\.0\.1, hosts that answered 127\.0\.0\.1\./);
    assert.ok(lines.includes('Tool definitions over 30 days: not enough observations.'), t);
    assert.ok(lines.includes('Tool schema versions in 30 days: 1; HTTP statuses as observed: 200 1.'), t);
    assert.match(t, /^Observation method: once per UTC day, initialize, notifications\/initialized, tools\/list to every streamable-http remote .*; no tool is called; 10000 ms per request\.$/m);
    // In the answer's order: the Registry, the packages and the Scanner, then the interactions.
    const at = (prefix) => lines.findIndex((l) => l.startsWith(prefix));
    const order = ['MCP Registry:', 'Packages (from npm and PyPI', 'Lowdown Scanner (', `${entry} — `, 'Source: '].map(at);
    assert.ok(order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1])), `${order}\n${t}`);
    assert.match(t, /Tools \(\d+\): .*echo/);
    assert.match(t, new RegExp(`  npm "@modelcontextprotocol/server-everything": latest "2099\\.1\\.1"; declared "${EVERYTHING_VERSION.replace(/\./g, '\\.')}", not the latest; the latest version is deprecated; checked ${today}T`));
    assert.match(t, /  pypi "Fixture_Everything": latest "0\.1\.0"; declared "0\.1\.0"; project archived \(PEP 792\); checked /);
    assert.ok(lines.includes('  oci "ghcr.io/fixture/everything": not checked (Lowdown checks npm and PyPI packages)'), t);
    assert.ok(!t.includes('CANARY'), 'maintainers\' deprecation text is never read out');
    // The page it links to is there.
    const page = await fetch(`${server.url}/t/${entry}`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), new RegExp(`<h1>${entry}</h1>`));
    assert.ok(!t.includes('Changes in the last 7 days'), 'a first scan is the baseline: nothing changed');
    // A server version nodes record for the first time is a change of today, in words.
    await server.post(records(entry, 2, { server_version: '9.9.9' }));
    const changed = text(await c.callTool({ name: 'get_lowdown', arguments: { target: entry } })).split('\n');
    const first = changed.indexOf(`Changes in the last 7 days (${server.url}/t/${entry}/changes):`);
    assert.ok(first > 0, changed.join('\n'));
    assert.equal(changed[first + 1], `  ${today} "new server version 9.9.9: 2 rated calls so far" (records of Lowdown nodes (organic))`);
    // With records of its own, the npm name answers for itself and names its Registry entry.
    await server.post(records('npm:@modelcontextprotocol/server-everything', 2));
    const own = await c.callTool({ name: 'get_lowdown', arguments: { target: 'npm:@modelcontextprotocol/server-everything' } });
    assert.equal(own.structuredContent.resolved_target, 'npm:@modelcontextprotocol/server-everything');
    assert.match(text(own), new RegExp(`Declared by MCP Registry entries: "${entry}"\\.`));
    assert.match(text(own), /^npm:@modelcontextprotocol\/server-everything 2099\.1\.1 is deprecated on npm\. npm:@modelcontextprotocol\/server-everything: 2 organic tool calls rated/m);
  } finally {
    await c.close();
    await Promise.all([everything.close(), registry.close(), npm.close(), pypi.close()]);
  }
});

test('a short name resolves when it is unique and lists candidates when it is not', async () => {
  const c = await connect({ LOWDOWN_API_URL: server.url, LOWDOWN_HOME: home });
  try {
    const one = await c.callTool({ name: 'get_lowdown', arguments: { target: 'delta-search' } });
    assert.ok(!one.isError, text(one));
    assert.equal(one.structuredContent.resolved_target, 'pypi:delta-search');
    assert.match(text(one), /Lowdown for pypi:delta-search \(asked as "delta-search"\)/);
    const many = await c.callTool({ name: 'get_lowdown', arguments: { target: 'search' } });
    assert.ok(!many.isError, text(many));
    assert.ok(Array.isArray(many.structuredContent.candidates));
    assert.match(text(many), /matches more than one target/);
  } finally {
    await c.close();
  }
});

test('compare_tools ranks by organic success rate, unrated last, and recommends only with 5+ rated', async () => {
  const c = await connect({ LOWDOWN_API_URL: server.url, LOWDOWN_HOME: home });
  try {
    const thin = await c.callTool({ name: 'compare_tools', arguments: { candidates: ['npm:gamma-search', 'npm:alpha-search', 'npm:beta-search'] } });
    assert.ok(!thin.isError, text(thin));
    assert.deepEqual(thin.structuredContent.ranked.map((r) => r.target), ['npm:beta-search', 'npm:alpha-search', 'npm:gamma-search']);
    assert.equal(thin.structuredContent.ranked[2].success_rate, null);
    assert.deepEqual(thin.structuredContent.recommendation, { target: null, reason: 'Insufficient interaction history for a reliable comparison.' });
    assert.match(
      text(thin),
      /^1\. npm:beta-search — success rate 100\.0% over 3 rated organic interactions, confidence low\n2\. npm:alpha-search — success rate 80\.0% over 10 rated organic interactions, confidence low\n3\. npm:gamma-search — no rated organic interactions \(confidence none\)\nNo recommendation: Insufficient interaction history for a reliable comparison\.$/m,
    );

    const clear = await c.callTool({ name: 'compare_tools', arguments: { candidates: ['npm:alpha-search', 'pypi:delta-search'] } });
    assert.equal(clear.structuredContent.ranked[0].target, 'pypi:delta-search');
    assert.equal(clear.structuredContent.recommendation.target, 'pypi:delta-search');
    assert.match(text(clear), /Recommendation: pypi:delta-search/);

    const narrowed = await c.callTool({ name: 'compare_tools', arguments: { candidates: ['npm:alpha-search', 'pypi:delta-search'], task_type: 'search' } });
    assert.equal(narrowed.structuredContent.task_type, 'search');
    assert.equal(narrowed.structuredContent.ranked[0].target, 'npm:alpha-search', 'delta has no "search" task');

    const bad = await c.callTool({ name: 'compare_tools', arguments: { candidates: ['npm:alpha-search'] } });
    assert.equal(bad.isError, true);
    assert.match(text(bad), /candidates/);
  } finally {
    await c.close();
  }
});

test('record_interaction records with this node id; the node then gets contributor detail and stats', async () => {
  const freshHome = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-home-'));
  const c = await connect({ LOWDOWN_API_URL: server.url, LOWDOWN_HOME: freshHome });
  try {
    const before = await c.callTool({ name: 'get_node_stats', arguments: {} });
    assert.ok(!before.isError, text(before));
    assert.equal(before.structuredContent.status, 'unknown');
    assert.match(text(before), /has not contributed any interactions yet/);
    const plain = await c.callTool({ name: 'get_lowdown', arguments: { target: 'npm:epsilon' } });
    assert.equal(plain.structuredContent.task_breakdown, undefined);

    const rec = await c.callTool({
      name: 'record_interaction',
      arguments: { actor: 'test-agent', target: 'npm:epsilon', target_type: 'tool', task_type: 'lookup', outcome: 'failure', failure_type: 'timeout', latency_ms: 1200 },
    });
    assert.ok(!rec.isError, text(rec));
    assert.equal(rec.structuredContent.accepted, 1);
    const nodeId = JSON.parse(fs.readFileSync(path.join(freshHome, 'node.json'), 'utf8')).node_id;
    assert.equal(rec.structuredContent.record.node_id, nodeId);
    const version = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
    assert.equal(rec.structuredContent.record.recorder_version, `lowdown-mcp/${version}`, 'who made it: <recorder>/<version>');
    assert.match(text(rec), /Recorded: test-agent → npm:epsilon \(lookup\): failure \(timeout\)/);

    const rep = await c.callTool({ name: 'get_lowdown', arguments: { target: 'npm:epsilon' } });
    assert.equal(rep.structuredContent.interactions, 1);
    assert.ok(rep.structuredContent.task_breakdown?.lookup, 'contributors get the per-task breakdown');
    assert.match(text(rep), /Per task \(shown because your node contributes\):\n {2}lookup: 0 success, 1 failure \(timeout 1\)/);

    const stats = await c.callTool({ name: 'get_node_stats', arguments: {} });
    assert.equal(stats.structuredContent.node_id, nodeId);
    assert.equal(stats.structuredContent.status, 'active');
    assert.equal(stats.structuredContent.contribution.interactions, 1);
    assert.match(text(stats), new RegExp(`Node ${nodeId} \\(active\\): 1 interaction on 1 target`));

    const wrong = await c.callTool({
      name: 'record_interaction',
      arguments: { actor: 'a', target: 'npm:epsilon', target_type: 'tool', task_type: 'x', outcome: 'success', failure_type: 'timeout' },
    });
    assert.equal(wrong.isError, true);
    assert.match(text(wrong), /refused the request \(400\): .*failure_type/);
  } finally {
    await c.close();
    fs.rmSync(freshHome, { recursive: true, force: true });
  }
});

test('API down: every tool answers isError with a clear message, and the server keeps serving', async () => {
  const port = await freePort();
  const c = await connect({ LOWDOWN_API_URL: `http://127.0.0.1:${port}`, LOWDOWN_HOME: home });
  try {
    const calls = [
      ['get_lowdown', { target: 'npm:alpha-search' }],
      ['compare_tools', { candidates: ['npm:a', 'npm:b'] }],
      ['record_interaction', { actor: 'a', target: 'npm:a', target_type: 'tool', task_type: 't', outcome: 'success' }],
      ['get_node_stats', {}],
    ];
    for (const [name, args] of calls) {
      const r = await c.callTool({ name, arguments: args });
      assert.equal(r.isError, true, name);
      assert.match(text(r), new RegExp(`The Lowdown API at http://127\\.0\\.0\\.1:${port} is unreachable \\(ECONNREFUSED\\)`), name);
    }
    await c.ping();
  } finally {
    await c.close();
  }
});

test('API slow: a hung API gives isError after the timeout, not a hang', async () => {
  const silent = await silentServer();
  const c = await connect({ LOWDOWN_API_URL: silent.url, LOWDOWN_HOME: home, LOWDOWN_API_TIMEOUT_MS: '400' });
  try {
    const t0 = Date.now();
    const r = await c.callTool({ name: 'get_lowdown', arguments: { target: 'npm:alpha-search' } });
    const took = Date.now() - t0;
    assert.equal(r.isError, true);
    assert.match(text(r), /did not answer within 0\.4 s/);
    assert.ok(took < 5000, `answered in ${took} ms`);
    await c.ping();
  } finally {
    await c.close();
    await silent.close();
  }
});

// An API URL that answers without end (hostile, or not the API) is read up to the bound and
// no further: the tool says so instead of buffering the lot.
test('API answering a huge body: isError saying so, and the server keeps serving', async () => {
  const huge = http.createServer((req, res) => {
    res.on('error', () => {}); // lowdown-mcp stops reading
    res.writeHead(200, { 'content-type': 'application/json' });
    const body = Buffer.alloc(8 * 1024 * 1024, ' ');
    body.write('{"target":"npm:alpha-search","interactions":0}');
    for (let at = 0; at < body.length && !res.destroyed; at += 64 * 1024) res.write(body.subarray(at, at + 64 * 1024));
    res.end();
  });
  await new Promise((r) => huge.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${huge.address().port}`;
  const c = await connect({ LOWDOWN_API_URL: url, LOWDOWN_HOME: home });
  try {
    const r = await c.callTool({ name: 'get_lowdown', arguments: { target: 'npm:alpha-search' } });
    assert.equal(r.isError, true);
    assert.equal(text(r), `The Lowdown API at ${url} answered 200 with more than 1 MiB, which is not an answer of the API.`);
    await c.ping();
  } finally {
    await c.close();
    huge.closeAllConnections();
    await new Promise((r) => huge.close(r));
  }
});

test('lowdown-mcp exits cleanly when the client closes its stdin, printing nothing but protocol', async () => {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [BIN], { env: { PATH: process.env.PATH, LOWDOWN_HOME: home, LOWDOWN_API_URL: server.url }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stdin.end();
  const code = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('lowdown-mcp did not exit within 5 s of stdin EOF')), 5000);
    child.once('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  assert.equal(code, 0);
  assert.equal(out, '');
});
