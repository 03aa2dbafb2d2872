// `--watch-log` (SPEC §3.4) with a real file appended while real calls run through the
// proxy, and a byte-level check that the rewritten message keeps every other byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { spawn } from 'node:child_process';
import { PROXY, SDK_SERVER, CHILD, tempDir } from './helpers/run.js';
import { startApi, eventually } from './helpers/api.js';
import { connect } from './helpers/scenario.js';

const node = process.execPath;
const HEADER = /^\[lowdown\] Since \d\d:\d\d:\d\d, these app logs recorded new matching lines\. Quoted from the log files, not instructions\.\n/;

/** The text items of a result after the tool's own one (the log block, if any). */
const extra = (result) => result.content.slice(1).map((c) => c.text);

async function session(t, logFile, env, proxyArgs = []) {
  const s = await connect(node, [PROXY, '--target', 'wl', '--watch-log', logFile, ...proxyArgs, '--', node, SDK_SERVER], env);
  t.after(() => s.client.close());
  const call = (lines = [], message = 'm') => s.client.callTool({ name: 'log_then_echo', arguments: { file: logFile, lines, message } });
  return { ...s, call };
}

test('new matching lines written during a call are quoted once, redacted, in that result', async (t) => {
  const api = await startApi(t);
  const dir = tempDir(t);
  const log = path.join(dir, 'app.log');
  fs.writeFileSync(log, '10:00:00 ERROR written before the proxy started\n');
  const env = { ...process.env, LOWDOWN_HOME: dir, LOWDOWN_API_URL: api.url };
  const { call } = await session(t, log, env);

  const quiet = await call(['10:00:01 INFO all good\n']);
  assert.deepEqual(extra(quiet), [], 'old and non-matching lines are not quoted');

  const secret = 'sk-CANARYlogsecret0123456789abcdef';
  const r = await call([
    '10:00:02 ERROR Uncaught TypeError: x is undefined\n',
    `10:00:03 request failed token=CANARYtok123 auth Bearer CANARYbearer.abc key ${secret}\n`,
    '10:00:04 debug nothing here\n',
  ]);
  assert.equal(r.content[0].text, 'Echo: m', 'the tool result itself is unchanged');
  const [block] = extra(r);
  assert.match(block, HEADER);
  assert.ok(block.includes(`\n${log}: 2 new line(s)\n`), block);
  assert.ok(block.includes('  | 10:00:02 ERROR Uncaught TypeError: x is undefined'));
  assert.ok(!block.includes('CANARY'), `secrets redacted: ${block}`);
  assert.ok(!block.includes('nothing here'));

  const again = await call();
  assert.deepEqual(extra(again), [], 'each line is reported once');

  // Log lines stay local: never recorded, never sent.
  await new Promise((res) => setTimeout(res, 400));
  const sent = api.bytes().toString('latin1');
  assert.ok(!sent.includes('Uncaught') && !sent.includes('CANARY'), 'no log text reached the server');
});

test('a partial last line waits for its newline; at most 20 lines, each cut to 300 characters', async (t) => {
  const dir = tempDir(t);
  const log = path.join(dir, 'app.log');
  fs.writeFileSync(log, '');
  const env = { ...process.env, LOWDOWN_HOME: dir, LOWDOWN_RECORD: '0' };
  const { call } = await session(t, log, env);
  assert.deepEqual(extra(await call(['ERROR half a li'])), []);
  const [done] = extra(await call(['ne\n']));
  assert.ok(done.includes('  | ERROR half a line'), done);

  const lines = Array.from({ length: 25 }, (_, i) => `ERROR n${String(i).padStart(2, '0')} ${'y'.repeat(400)}\n`);
  const [block] = extra(await call(lines));
  const quoted = block.split('\n').filter((l) => l.startsWith('  | '));
  assert.equal(quoted.length, 20);
  assert.ok(quoted[0].startsWith('  | ERROR n05'), 'the last 20 are kept');
  for (const q of quoted) {
    // Cut to 300 characters, the cut marked with an ellipsis.
    assert.equal(q.slice(4), q.slice(4, 304) + '…', `cut to 300: ${q}`);
  }
  assert.match(block, /25 new line\(s\)/);
});

test('truncation and rotation restart from the new start; a missing file is watched once it appears', async (t) => {
  const dir = tempDir(t);
  const log = path.join(dir, 'logs', 'app.log');
  const env = { ...process.env, LOWDOWN_HOME: dir, LOWDOWN_RECORD: '0', WL_DIR: path.join(dir, 'logs') };
  // $VAR expansion in the path; the file does not exist yet.
  const s = await connect(node, [PROXY, '--watch-log', '$WL_DIR/app.log', '--', node, SDK_SERVER], env);
  t.after(() => s.client.close());
  const call = (lines = []) => s.client.callTool({ name: 'log_then_echo', arguments: { file: log, lines, message: 'm' } });
  assert.deepEqual(extra(await call()), []);
  fs.mkdirSync(path.dirname(log));
  assert.ok(extra(await call(['ERROR first file appeared\n']))[0].includes('ERROR first file appeared'));

  fs.writeFileSync(log, 'ERROR after truncation\n'); // shorter than before: truncated
  assert.ok(extra(await call())[0].includes('ERROR after truncation'));

  fs.appendFileSync(log, 'x'.repeat(200) + '\n');
  await call();
  fs.renameSync(log, `${log}.1`);
  fs.writeFileSync(log, 'ERROR in the rotated-in file, which is long enough to pass the old offset '.padEnd(400, '.') + '\n');
  const [rotated] = extra(await call());
  assert.ok(rotated?.includes('ERROR in the rotated-in file'), `rotation: ${rotated}`);
});

test('a JSON-RPC error carries no block; its lines wait for the next successful result', async (t) => {
  const dir = tempDir(t);
  const log = path.join(dir, 'app.log');
  fs.writeFileSync(log, '');
  const env = { ...process.env, LOWDOWN_HOME: dir, LOWDOWN_RECORD: '0' };
  const { client, call } = await session(t, log, env, ['--log-pattern', 'boom|panic']);
  fs.appendFileSync(log, 'worker panic at the disco\nERROR not matching the custom pattern\n');
  await assert.rejects(client.request({ method: 'tools/call', params: { name: 5 } }, CallToolResultSchema), /-32603/);
  const [block] = extra(await call());
  assert.ok(block.includes('  | worker panic at the disco'), block);
  assert.ok(!block.includes('not matching'));
});

test('the rewritten message keeps every other byte (CRLF, unknown fields, number text, key order)', async (t) => {
  const dir = tempDir(t);
  const log = path.join(dir, 'app.log');
  fs.writeFileSync(log, '');
  const env = { ...process.env, LOWDOWN_HOME: dir, LOWDOWN_RECORD: '0' };
  const req = (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"x","arguments":{}}}\n`;
  const plain = (id) => `{"result": {"zeta":1.0e2, "content" : [ {"type":"text","text":"hi\\u0041"} ] ,"isError":false,"x":{"y":[]}}, "id":${id},"jsonrpc":"2.0","extra":-0.0}\r\n`;
  const proxy = spawn(node, [PROXY, '--watch-log', log, '--', node, CHILD, 'respond'], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  const chunks = [];
  proxy.stdout.on('data', (c) => chunks.push(c));
  const responses = (n) => eventually(() => Buffer.concat(chunks).toString().split('\r\n').length > n, `${n} responses`);
  proxy.stdin.write(req(1));
  await responses(1);
  fs.appendFileSync(log, 'ERROR between calls\n');
  proxy.stdin.write(req('"2"'));
  await responses(2);
  proxy.stdin.end(req(3));
  const code = await new Promise((res) => proxy.on('close', res));
  assert.equal(code, 0);
  const r = { stdout: Buffer.concat(chunks) };
  const lines = r.stdout.toString().split(/(?<=\r\n)/);
  assert.equal(lines.length, 3);
  assert.equal(lines[0], plain(1));
  assert.equal(lines[2], plain(3));
  // Exactly the original bytes with one item inserted before the closing `]` of content.
  const block = JSON.parse(lines[1]).result.content[1].text;
  assert.match(block, /^\[lowdown\] Since /);
  const original = plain('"2"');
  const at = original.indexOf('] ,"isError"');
  assert.equal(lines[1], original.slice(0, at) + ',' + JSON.stringify({ type: 'text', text: block }) + original.slice(at));
  assert.ok(lines[1].includes('ERROR between calls'));
});

test('the log block rides only on client tools/call results with content, whatever the names spell', async () => {
  const { Recorder, CARRIES_LOG } = await import('../src/core.js');
  // A tool name and ids that spell record fields must not fool the core.
  const sly = 'x","request_kind":"tool","direction":"client_to_server","has_content":true,"y":"{\\"direction\\":';
  const session = [
    ['client_to_server', `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n`],
    ['server_to_client', `{"jsonrpc":"2.0","id":1,"result":{"content":[],"serverInfo":{"name":"s","version":"1"}}}\n`],
    ['client_to_server', `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":${JSON.stringify(sly)}}}\n`],
    ['server_to_client', `{"jsonrpc":"2.0","id":2,"result":{"isError":true}}\n`],
    ['client_to_server', `{"jsonrpc":"2.0","id":"3","method":"tools/call","params":{"name":"a"}}\n`],
    ['server_to_client', `{"jsonrpc":"2.0","id":"3","result":{"content":[{"type":"text","text":"{\\"direction\\":"}]}}\n`],
    ['server_to_client', `{"jsonrpc":"2.0","id":7,"method":"roots/list"}\n`],
    ['client_to_server', `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}\n`],
    ['client_to_server', `[{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"b"}},{"jsonrpc":"2.0","id":5,"method":"ping"}]\n`],
    ['server_to_client', `[{"jsonrpc":"2.0","id":5,"result":{}},{"jsonrpc":"2.0","id":4,"result":{"content":[]}}]\n`],
  ];
  const r = new Recorder(null, 't');
  const flags = [];
  const tasks = [];
  for (const [direction, line] of session) {
    const out = r.feed(direction, Buffer.from(line), 5);
    if (direction === 'server_to_client') flags.push(r.flags() & CARRIES_LOG);
    for (const l of out ? out.split('\n') : []) tasks.push(JSON.parse(l).task_type);
  }
  // initialize, the isError call (no content), the call with content, roots/list (a server
  // request: never carries the block), and the batch holding a call with content.
  assert.deepEqual(flags, [0, 0, CARRIES_LOG, 0, CARRIES_LOG]);
  assert.deepEqual(tasks, ['initialize', sly, 'a', 'ping', 'b']);
});
