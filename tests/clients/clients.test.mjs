// Real clients and real servers nobody here wrote, through lowdown-proxy, recorded at a real
// lowdown-server (behind a byte tap, so every record that left is seen):
//
// - clients: the official Python MCP SDK (`mcp` 2.3.0: `ClientSession` for the initialize
//   handshake, `Client(mode="auto")` for 2026-07-28) and the MCP Inspector CLI (1.0.3);
// - servers: `mcp-server-time` (PyPI), `@modelcontextprotocol/server-everything` and
//   `@modelcontextprotocol/server-memory` (npm).
//
// It checks what a reputation depends on: a caller's mistake is a rejection, never the
// server's failure; the tool's own errors count; a server has one label however it is
// launched; server version, protocol version and schema hash are recorded.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import { startApi, eventually } from '../../npm/lowdown-proxy/test/helpers/api.js';
import { spooledRecords } from '../../npm/lowdown-proxy/test/helpers/api.js';

const run = promisify(execFile);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const PROXY = path.join(ROOT, 'npm/lowdown-proxy/bin/lowdown-proxy.js');
const PYTHON = process.env.PY ?? path.join(ROOT, '.venv/bin/python');
const VENV_BIN = path.dirname(PYTHON);
const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const MEMORY = require.resolve('@modelcontextprotocol/server-memory/dist/index.js');
const INSPECTOR = path.join(ROOT, 'node_modules/.bin/mcp-inspector');
const NODE_BIN = path.dirname(EVERYTHING).split(`${path.sep}@modelcontextprotocol`)[0] + `${path.sep}.bin`;
const CANARY = 'CANARY_client_suite_5e1';
const TIME = ['--local-timezone', 'UTC'];

let api;
let home;
// startApi registers its clean-up on a test context; the suite's servers live for every test.
const cleanups = [];

before(async () => {
  api = await startApi({ after: (fn) => cleanups.push(fn) });
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-clients-'));
});
after(async () => {
  for (const fn of cleanups.reverse()) await fn();
  if (home) fs.rmSync(home, { recursive: true, force: true });
});

/** The environment every session runs with: the proxy records to the tapped server. */
const env = () => ({ ...process.env, LOWDOWN_API_URL: api.url, LOWDOWN_HOME: home, PATH: `${VENV_BIN}${path.delimiter}${NODE_BIN}${path.delimiter}${process.env.PATH}` });

/** A Python SDK session through the proxy (no --target: the proxy labels the server). */
async function python(mode, calls, server) {
  const { stdout } = await run(PYTHON, [path.join(HERE, 'python_client.py'), mode, JSON.stringify(calls), '--', process.execPath, PROXY, '--', ...server], { env: env(), timeout: 120_000 });
  return JSON.parse(stdout);
}

/** One Inspector CLI call through the proxy; its JSON output (or null when it failed). */
async function inspector(server, toolArgs) {
  const forwarded = ['LOWDOWN_API_URL', 'LOWDOWN_HOME'].flatMap((k) => ['-e', `${k}=${env()[k]}`]);
  try {
    const { stdout } = await run(INSPECTOR, ['--cli', ...forwarded, process.execPath, PROXY, '--', ...server, '--method', ...toolArgs], { env: env(), timeout: 120_000 });
    return JSON.parse(stdout.slice(stdout.indexOf('{')));
  } catch (err) {
    return { failed: true, stderr: String(err.stderr ?? err.message) };
  }
}

/**
 * The records the proxies made for `target` once at least `n` have, and one of tool `task`
 * among them when given (sessions deliver in any order, so a count alone may be met before
 * the last session's records arrive). A record is made once it reached the server or waits
 * in the spool: an exit gives delivery 100 ms, and on a loaded machine the last records of a
 * session wait there for the next run, as designed (the proxy's own tests cover delivery).
 */
async function recordsOf(target, n, task) {
  return eventually(() => {
    const got = made().filter((r) => r.target === target);
    return got.length >= n && (!task || calls(got, task).length > 0) ? got : null;
  }, `${n} records for ${target}`, 20_000, () => JSON.stringify(made().map((r) => [r.target, r.task_type])));
}

/** What reached the server and what waits in the spool, once each (by `record_id`). */
function made() {
  const spooled = spooledRecords(home);
  const seen = new Set();
  return [...api.records(), ...spooled].filter((r) => !seen.has(r.record_id) && seen.add(r.record_id));
}

const calls = (records, task) => records.filter((r) => r.task_type === task && r.request_kind === 'tool');
const kinds = (records) => records.map((r) => [r.outcome, r.failure_type ?? null, r.error_layer ?? null]);

test('mcp-server-time through the Python SDK (initialize handshake): the caller\'s missing argument is a rejection, the tool\'s own refusal counts', async () => {
  const out = await python('legacy', [
    ['get_current_time', { timezone: 'Europe/Lisbon' }],
    ['get_current_time', {}],
    ['convert_time', { source_timezone: 'UTC', time: '25:99', target_timezone: 'Asia/Tokyo' }],
    ['get_time', { timezone: CANARY }],
  ], [path.join(VENV_BIN, 'mcp-server-time'), ...TIME]);
  assert.equal(out[0].is_error, false);
  assert.equal(out[1].is_error, true, 'the SDK answers the missing argument with isError');
  const records = await recordsOf('pypi:mcp-server-time', 6);
  assert.deepEqual(kinds(calls(records, 'get_current_time')), [['success', null, null], ['failure', 'invalid_arguments', 'request']]);
  assert.deepEqual(kinds(calls(records, 'convert_time')), [['failure', 'tool_error', 'tool']]);
  assert.equal(calls(records, 'get_time')[0].error_layer, 'request', 'an unknown tool is the caller\'s mistake');
  const init = records.find((r) => r.task_type === 'initialize');
  assert.match(init.protocol_version, /^20\d\d-\d\d-\d\d$/);
  for (const r of records.filter((x) => x.request_kind === 'tool')) {
    assert.match(r.server_version ?? '', /^\d/, 'the server version is recorded');
    assert.match(r.schema_hash ?? '', /^[0-9a-f]{64}$/, 'the schema hash is recorded');
  }
});

test('mcp-server-time through the Python SDK in auto mode: a 2026-07-28 session records its protocol version', async () => {
  const before = api.records().length;
  await python('auto', [['get_current_time', { timezone: 'Asia/Tokyo' }], ['get_current_time', {}]], [PYTHON, '-m', 'mcp_server_time', ...TIME]);
  const records = await eventually(() => {
    const got = api.records().slice(before).filter((r) => r.target === 'pypi:mcp-server-time');
    return got.filter((r) => r.request_kind === 'tool').length >= 2 ? got : null;
  }, 'the auto-mode records', 20_000);
  const tools = records.filter((r) => r.request_kind === 'tool');
  assert.deepEqual(kinds(tools), [['success', null, null], ['failure', 'invalid_arguments', 'request']]);
  for (const r of tools) {
    assert.equal(r.protocol_version, '2026-07-28');
    assert.match(r.server_version ?? '', /^\d/);
  }
  assert.ok(records.some((r) => r.task_type === 'server/discover'), 'the discover handshake is protocol traffic');
});

test('server-everything through the Inspector CLI: one label however it is launched, rejections apart', async () => {
  const launches = [
    ['npx', '--no-install', '@modelcontextprotocol/server-everything', 'stdio'],
    ['mcp-server-everything', 'stdio'],
    [path.join(NODE_BIN, 'mcp-server-everything'), 'stdio'],
    ['node', EVERYTHING, 'stdio'],
  ];
  for (const server of launches) {
    const ok = await inspector(server, ['tools/call', '--tool-name', 'get-sum', '--tool-arg', 'a=1', '--tool-arg', 'b=2']);
    assert.equal(ok.content?.[0]?.text, 'The sum of 1 and 2 is 3.', JSON.stringify(ok));
  }
  const bad = await inspector(launches[0], ['tools/call', '--tool-name', 'no-such-tool']);
  assert.ok(bad.failed || bad.isError, 'the Inspector reports the unknown tool');
  const records = await recordsOf('npm:@modelcontextprotocol/server-everything', 4 * 3 + 3, 'no-such-tool');
  const sums = calls(records, 'get-sum');
  assert.equal(sums.length, launches.length, 'every launch recorded under the one label');
  assert.deepEqual([...new Set(kinds(sums).map(String))], ['success,,']);
  assert.equal(calls(records, 'no-such-tool')[0].error_layer, 'request');
  assert.ok(!api.records().some((r) => /everything/.test(r.target) && r.target !== 'npm:@modelcontextprotocol/server-everything'), 'no second history');
  for (const r of sums) {
    assert.match(r.server_version ?? '', /^\d/);
    assert.match(r.schema_hash ?? '', /^[0-9a-f]{64}$/);
  }
});

test('server-memory through the Python SDK and the Inspector: good calls succeed, a bad argument is a rejection', async () => {
  await python('legacy', [
    ['create_entities', { entities: [{ name: 'lowdown', entityType: 'project', observations: ['records outcomes'] }] }],
    ['read_graph', {}],
    ['create_entities', { entities: 'not a list' }],
  ], ['node', MEMORY]);
  const viaInspector = await inspector(['node', MEMORY], ['tools/call', '--tool-name', 'search_nodes', '--tool-arg', 'query=lowdown']);
  assert.ok(!viaInspector.failed, viaInspector.stderr);
  // initialize, tools/list and three calls (Python); initialize, tools/list and one call (Inspector).
  const records = await recordsOf('npm:@modelcontextprotocol/server-memory', 5 + 3);
  assert.deepEqual(kinds(calls(records, 'create_entities')), [['success', null, null], ['failure', 'invalid_arguments', 'request']]);
  assert.deepEqual(kinds(calls(records, 'read_graph')), [['success', null, null]]);
  assert.deepEqual(kinds(calls(records, 'search_nodes')), [['success', null, null]]);
});

test('server-everything through the Python SDK in auto mode falls back to initialize and records as usual', async () => {
  const out = await python('auto', [['echo', { message: CANARY }], ['get-sum', { a: 'two', b: 3 }]], ['node', EVERYTHING, 'stdio']);
  assert.equal(out[0].text, `Echo: ${CANARY}`);
  const records = await eventually(() => {
    const got = api.records().filter((r) => r.target === 'npm:@modelcontextprotocol/server-everything' && r.task_type === 'echo');
    return got.length ? got : null;
  }, 'the echo record', 20_000);
  assert.equal(records[0].outcome, 'success');
  const sums = calls(api.records(), 'get-sum').filter((r) => r.error_layer === 'request');
  assert.ok(sums.length >= 1, 'the mistyped argument is a rejection');
});

test('lowdown-mcp\'s tools, as the Inspector CLI lists them, say what they answer and which names they take', async () => {
  const MCP = path.join(ROOT, 'npm/lowdown-proxy/bin/lowdown-mcp.js');
  const forwarded = ['LOWDOWN_API_URL', 'LOWDOWN_HOME'].flatMap((k) => ['-e', `${k}=${env()[k]}`]);
  const { stdout } = await run(INSPECTOR, ['--cli', ...forwarded, process.execPath, MCP, '--method', 'tools/list'], { env: env(), timeout: 120_000 });
  const { tools } = JSON.parse(stdout.slice(stdout.indexOf('{')));
  const text = (name) => {
    const t = tools.find((x) => x.name === name);
    return `${t.description} ${Object.values(t.inputSchema.properties).map((p) => p.description ?? '').join(' ')}`;
  };
  // What an agent choosing tools needs to know to ask about a server it never used.
  for (const fact of ['MCP Registry', 'npm', 'PyPI', 'Lowdown Scanner', 'interactions agents reported', 'confidence']) {
    assert.ok(text('get_lowdown').includes(fact), `get_lowdown mentions ${fact}: ${text('get_lowdown')}`);
  }
  for (const name of ['get_lowdown', 'compare_tools']) {
    for (const form of ['mcp:', 'npm:', 'pypi:', 'short name']) assert.ok(text(name).includes(form), `${name} names ${form}`);
  }
  assert.match(text('compare_tools'), /ranked by organic success rate/);
  assert.match(text('compare_tools'), /never change the order/);
});

test('nothing the clients sent or received left the machine', () => {
  assert.ok(!api.bytes().includes(CANARY));
});
