// The relay, byte for byte: every session here runs once directly and once through the
// proxy (recording on, API unreachable, so records go to a temp spool), and the client
// must see exactly the same bytes; plus the lifecycle: exit codes, signals, stdin EOF,
// crashes, missing commands, arguments/cwd/env unchanged, no orphans.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CHILD, PROXY, EVERYTHING, run, viaProxy, direct, tempDir, alive } from './helpers/run.js';

/** Env of a proxy that records to an API nobody listens on (port 9: connection refused). */
function recordingEnv(t) {
  const home = tempDir(t);
  return { env: { ...process.env, LOWDOWN_HOME: home, LOWDOWN_API_URL: 'http://127.0.0.1:9' }, home };
}

/**
 * Runs the same session directly and through the proxy (optionally with --watch-log on a
 * file that has new matching lines: nothing here is a tools/call result, so nothing may change).
 */
async function sameBytes(t, chunks, { gapMs = 0, mode = 'echo', watchLog = false } = {}) {
  const { env, home } = recordingEnv(t);
  const a = await direct([CHILD, mode], { chunks, gapMs });
  let proxyArgs = [];
  if (watchLog) {
    const log = path.join(home, 'app.log');
    fs.writeFileSync(log, '');
    setTimeout(() => fs.appendFileSync(log, 'ERROR pending line\n'), 50);
    proxyArgs = ['--watch-log', log];
  }
  const b = await viaProxy([CHILD, mode], { chunks, gapMs, env }, proxyArgs);
  assert.equal(b.code, a.code, `exit code; stderr: ${b.stderr}`);
  assert.ok(a.stdout.equals(b.stdout), `bytes differ (direct ${a.stdout.length} B, proxy ${b.stdout.length} B)`);
  return b;
}

const init = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n';
const call = (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"message":"CANARY-ARG-${id}"}}}\n`;

test('coalesced writes: many messages in one chunk arrive unchanged', async (t) => {
  await sameBytes(t, [init + call(2) + call(3) + call('"3"')]);
});

test('split writes: one message cut mid-token across chunks arrives unchanged', async (t) => {
  const msg = call(4);
  await sameBytes(t, [msg.slice(0, 7), msg.slice(7, 30), msg.slice(30)], { gapMs: 20 });
});

test('CRLF line endings, non-JSON lines, batch arrays and a missing final newline pass as they came', async (t) => {
  await sameBytes(t, [
    '{"jsonrpc":"2.0","id":5,"method":"ping"}\r\n',
    'this is not JSON\n\n  \n',
    '[{"jsonrpc":"2.0","id":6,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]\n',
    Buffer.from([0xff, 0xfe, 0x0a]),
    '{"jsonrpc":"2.0","id":7,"method":"ping","params":{"n":1.0e2,"k":"\\u0041"}}',
  ]);
});

test('with --watch-log on, split, coalesced, CRLF, non-JSON and unterminated traffic still passes unchanged', async (t) => {
  const msg = call(11);
  await sameBytes(t, [msg.slice(0, 9), msg.slice(9) + init + '[1,2]\r\nnot json\n', '{"jsonrpc":"2.0","id":12,"result":{"content":[]}}', '\n{"tail":true}'], {
    gapMs: 30,
    watchLog: true,
  });
});

test('a raw session with server-everything: the client gets the same bytes through the proxy', async (t) => {
  const { env } = recordingEnv(t);
  const lines = [
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}\n',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}\r\n',
    '{"jsonrpc":"2.0","id":"2","method":"tools/list"}\n{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"raw \u2603 ☃"}}}\n',
    '{"jsonrpc":"2.0","id":4,"method":"ping"}\n',
    '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}\n',
    'garbage\n',
  ];
  const a = await direct([EVERYTHING, 'stdio'], { chunks: lines, gapMs: 100, env });
  const b = await viaProxy([EVERYTHING, 'stdio'], { chunks: lines, gapMs: 100, env });
  assert.ok(a.stdout.length > 5000, 'the server answered');
  // The server answers concurrent requests in whichever order its handlers finish, direct
  // or not; every line must be byte-identical, in any order.
  const lines_ = (buf) => buf.toString('latin1').split('\n').sort();
  assert.equal(b.stdout.length, a.stdout.length);
  assert.deepEqual(lines_(b.stdout), lines_(a.stdout));
  assert.equal(b.code, a.code);
});

test('a 5 MB message passes unchanged', async (t) => {
  const big = `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"message":"${'x'.repeat(5 * 1024 * 1024)}"}}}\n`;
  const r = await sameBytes(t, [big, call(9)]);
  assert.equal(r.stdout.length, Buffer.byteLength(big) + Buffer.byteLength(call(9)));
});

test('arguments, working directory and environment reach the child unchanged', async (t) => {
  const { env } = recordingEnv(t);
  env.LOWDOWN_TEST_VALUE = 'with spaces $HOME "quotes" ;&|';
  const cwd = tempDir(t);
  const args = [CHILD, 'info', 'a b', '$HOME', '*', '--', '"q"'];
  const a = await direct(args, { env, cwd });
  const b = await viaProxy(args, { env, cwd });
  const da = JSON.parse(a.stdout.toString().split('\n')[0]);
  const db = JSON.parse(b.stdout.toString().split('\n')[0]);
  assert.deepEqual(db.argv, ['info', 'a b', '$HOME', '*', '--', '"q"']);
  assert.equal(db.cwd, fs.realpathSync(cwd));
  assert.deepEqual(db.env, da.env, 'no variable added or removed');
});

test('the child exit code is the proxy exit code', async () => {
  const r = await run(process.execPath, [PROXY, '--', 'sh', '-c', 'exit 7'], { env: { ...process.env, LOWDOWN_RECORD: '0' } });
  assert.equal(r.code, 7);
});

test('a crashing child: its last output is flushed and its exit code returned', async (t) => {
  const { env } = recordingEnv(t);
  const r = await viaProxy([CHILD, 'crash'], { chunks: [call(10)], keepOpen: true, env });
  assert.equal(r.stdout.toString(), 'partial');
  assert.equal(r.code, 3);
});

test('a child killed by a signal gives 128 + signal', async () => {
  const r = await run(process.execPath, [PROXY, '--', 'sh', '-c', 'kill -TERM $$'], { env: { ...process.env, LOWDOWN_RECORD: '0' } });
  assert.equal(r.code, 143);
});

for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  test(`${sig} to the proxy reaches the child, whose final output and exit code come back`, async (t) => {
    const { env } = recordingEnv(t);
    let proxy;
    const done = viaProxy([CHILD, 'sigterm'], {
      env,
      keepOpen: true,
      chunks: ['hello\n'],
      onSpawn: (c) => (proxy = c),
    });
    // Wait until the child answers, so its handlers are installed.
    await new Promise((r) => proxy.stdout.once('data', r));
    proxy.kill(sig);
    const r = await done;
    assert.equal(r.stdout.toString(), `hello\ngot ${sig}\n`);
    assert.equal(r.code, 42);
  });
}

test('stdin EOF: the child keeps relaying while it finishes', async (t) => {
  const { env } = recordingEnv(t);
  const r = await viaProxy([CHILD, 'late'], { env, chunks: ['a\n'] });
  assert.equal(r.stdout.toString(), 'a\nlate\n');
  assert.equal(r.code, 0);
});

test('stdin EOF: a child that ignores EOF and SIGTERM is killed (SIGTERM after 2 s, SIGKILL 2 s later)', async (t) => {
  const { env } = recordingEnv(t);
  const started = Date.now();
  const r = await viaProxy([CHILD, 'stubborn'], { env, chunks: ['x\n'] });
  const took = Date.now() - started;
  assert.equal(r.code, 137);
  assert.ok(took >= 3900 && took < 8000, `took ${took} ms`);
});

test('a missing command fails at once with a clear message and a non-zero code', async (t) => {
  const { env } = recordingEnv(t);
  const started = Date.now();
  const r = await run(process.execPath, [PROXY, '--', 'lowdown-no-such-command-xyz', '--flag'], { env });
  assert.equal(r.code, 127);
  assert.match(r.stderr, /cannot start "lowdown-no-such-command-xyz": command not found/);
  assert.equal(r.stdout.length, 0);
  assert.ok(Date.now() - started < 3000);
});

test('no orphan: when the proxy is SIGKILLed, the watchdog ends the child and what it started', async (t) => {
  const { env } = recordingEnv(t);
  let proxy;
  let firstLine;
  const gotPid = new Promise((resolve) => {
    run(process.execPath, [PROXY, '--', process.execPath, CHILD, 'spawner'], {
      env,
      keepOpen: true,
      onSpawn: (c) => {
        proxy = c;
        c.stdout.once('data', (d) => resolve((firstLine = d.toString())));
      },
    }).catch(() => {});
  });
  const grandchild = Number((await gotPid).trim());
  assert.ok(alive(grandchild), `grandchild from ${firstLine}`);
  proxy.kill('SIGKILL');
  const deadline = Date.now() + 5000;
  while (alive(grandchild) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.equal(alive(grandchild), false, 'the child group was not ended after the proxy died');
});

test('no orphan: after a normal exit nothing the child started is left running', async (t) => {
  const { env } = recordingEnv(t);
  const r = await viaProxy([CHILD, 'spawner'], { env, chunks: ['bye\n'] });
  const grandchild = Number(r.stdout.toString().split('\n')[0]);
  await new Promise((res) => setTimeout(res, 200));
  assert.equal(alive(grandchild), false);
});

test('--help and --version print to stdout and exit 0; bad options exit 2 with a message', async () => {
  const h = await run(process.execPath, [PROXY, '--help']);
  assert.equal(h.code, 0);
  assert.match(h.stdout.toString(), /Usage: lowdown-proxy \[options\] -- <command>/);
  const v = await run(process.execPath, [PROXY, '--version']);
  assert.equal(v.stdout.toString().trim(), JSON.parse(fs.readFileSync(path.join(path.dirname(PROXY), '..', 'package.json'), 'utf8')).version);
  const bad = await run(process.execPath, [PROXY, '--source', 'bogus', '--', 'true']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--source must be organic, seeded or synthetic/);
  const pattern = await run(process.execPath, [PROXY, '--watch-log', 'x.log', '--log-pattern', '(unclosed', '--', 'true']);
  assert.equal(pattern.code, 2);
  assert.match(pattern.stderr, /--watch-log: invalid log pattern/);
  const none = await run(process.execPath, [PROXY, '--actor', 'me']);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /no command given/);
});
