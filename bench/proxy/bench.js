// `make bench-proxy`: what the proxy costs an MCP session.
//
// One run, same machine, same raw JSON-RPC client, five ways to reach the same responder:
// direct; a bare 10-line Node pipe relay (the floor for any Node proxy); lowdown-proxy with
// recording on (to a real lowdown-server when target/debug/lowdown-server exists); the
// proxy with --watch-log on a file that grows during the run; the proxy with recording
// off. Prints one table. BENCH_SEQ and BENCH_PIPELINED change the counts. On Linux, the
// table also shows how long each relay's main thread ran per sequential call: on a busy
// machine latency swings by tens of µs between runs, that CPU time much less.
// A sixth way is the proxy with OpenTelemetry export on (LOWDOWN_OTEL=1, OTLP/HTTP protobuf
// to a local receiver in this process that decodes nothing and answers 200): the export's
// cost per exchange beside the proxy without it.
// Then whole sessions (spawn, handshake, BENCH_SESSION_CALLS calls, stdin closed, exit)
// with the API working and with an API that accepts connections and never answers (and with
// OpenTelemetry export to such a collector): the session time and the time from closing
// stdin to exit, side by side.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..', '..');
const PROXY = path.join(ROOT, 'npm', 'lowdown-proxy', 'bin', 'lowdown-proxy.js');
const RESPONDER = path.join(HERE, 'responder.js');
const BARE = path.join(HERE, 'bare-relay.js');
const SERVER_BIN = path.join(ROOT, 'target', 'debug', 'lowdown-server');
const SEQ = Number(process.env.BENCH_SEQ ?? 3000);
const PIPELINED = Number(process.env.BENCH_PIPELINED ?? 20000);
const STARTS = Number(process.env.BENCH_STARTS ?? 30);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 15);
const SESSION_CALLS = Number(process.env.BENCH_SESSION_CALLS ?? 200);

const node = process.execPath;
const ARG = 'a'.repeat(900); // with the envelope, a ~1 KB request; the reply is ~1 KB too

/** A raw line client over a spawned command's stdio. */
function open(cmd, args, env) {
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'], env });
  const waiting = new Map();
  let tail = Buffer.alloc(0);
  child.stdout.on('data', (chunk) => {
    let buf = tail.length ? Buffer.concat([tail, chunk]) : chunk;
    let start = 0;
    for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10, start)) {
      const line = buf.subarray(start, nl);
      start = nl + 1;
      // The id is the first field the responder writes: {"jsonrpc":"2.0","id":N,...
      const m = /"id":(\d+)/.exec(line.subarray(0, 40).toString('latin1'));
      const cb = m && waiting.get(Number(m[1]));
      if (cb) {
        waiting.delete(Number(m[1]));
        cb(line);
      }
    }
    tail = start < buf.length ? Buffer.from(buf.subarray(start)) : Buffer.alloc(0);
  });
  let next = 1;
  const request = (method, params) =>
    new Promise((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
  const close = () =>
    new Promise((resolve) => {
      child.on('close', resolve);
      child.stdin.end();
    });
  return { request, close, pid: child.pid };
}

/**
 * Nanoseconds the process's main thread (the relay's thread; for `direct`, the server's)
 * has run on a CPU so far (Linux `schedstat`), or null where that is not available.
 */
function mainThreadCpuNs(pid) {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'latin1').split(' ')[0]);
  } catch {
    return null;
  }
}

const call = (c, args = { message: ARG }) => c.request('tools/call', { name: 'echo', arguments: args });

function pct(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Opens a session and completes the handshake. */
async function start(label, cmd, args, env, logFile) {
  const c = open(cmd, args, env);
  await c.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
  await c.request('tools/list', {});
  for (let i = 0; i < 300; i += 1) await call(c); // warm-up
  return { label, c, logFile, times: [], calls: 0, cpuNs: 0 };
}

/** `n` sequential calls on one session, timed one by one. */
async function sequential(s, n) {
  const cpu0 = mainThreadCpuNs(s.c.pid);
  for (let i = 0; i < n; i += 1) {
    if (s.logFile && s.calls % 10 === 0) fs.appendFileSync(s.logFile, `12:00:00 ERROR bench line ${s.calls} token=abc123\n`);
    s.calls += 1;
    const t0 = process.hrtime.bigint();
    await call(s.c);
    s.times.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  const cpu1 = mainThreadCpuNs(s.c.pid);
  s.cpuNs = cpu0 === null || cpu1 === null || s.cpuNs === null ? null : s.cpuNs + cpu1 - cpu0;
}

/** Pipelined throughput and one 10 MB message, then the summary row. */
async function finish(s) {
  const times = [...s.times].sort((a, b) => a - b);
  const t1 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: PIPELINED }, () => call(s.c)));
  const pipeSecs = Number(process.hrtime.bigint() - t1) / 1e9;
  const big = 'b'.repeat(10 * 1024 * 1024);
  const t2 = process.hrtime.bigint();
  await call(s.c, { big });
  const bigMs = Number(process.hrtime.bigint() - t2) / 1e6;
  await s.c.close();
  const cpuUs = s.cpuNs === null ? null : s.cpuNs / 1000 / s.times.length;
  return { label: s.label, p50: pct(times, 50), p99: pct(times, 99), cpuUs, rps: PIPELINED / pipeSecs, bigMs };
}

/** Milliseconds from spawning `args` (under node) to its exit. */
function startToExit(args, env) {
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(node, args, { stdio: ['pipe', 'ignore', 'inherit'], env });
    child.stdin.end();
    child.on('exit', () => resolve(Number(process.hrtime.bigint() - t0) / 1e6));
  });
}

/** Start-up: `-- /bin/true` through the bare relay and through the proxy, alternating. */
async function startup(env) {
  const bare = [];
  const proxy = [];
  for (let i = 0; i < STARTS; i += 1) {
    bare.push(await startToExit([BARE, '/bin/true'], env));
    proxy.push(await startToExit([PROXY, '--', '/bin/true'], env));
  }
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { bare: median(bare), proxy: median(proxy) };
}

/** One whole session: ms from spawn to exit, from spawn to the first answer, and from closing stdin to exit. */
async function session(args, env) {
  const t0 = process.hrtime.bigint();
  const c = open(node, args, env);
  await c.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
  const first = Number(process.hrtime.bigint() - t0) / 1e6;
  await c.request('tools/list', {});
  for (let i = 0; i < SESSION_CALLS; i += 1) await call(c);
  const t1 = process.hrtime.bigint();
  await c.close();
  const t2 = process.hrtime.bigint();
  return { total: Number(t2 - t0) / 1e6, first, exit: Number(t2 - t1) / 1e6 };
}

/**
 * A user's first session: nothing configured, a fresh LOWDOWN_HOME, so the proxy starts the
 * local node (this build's server); the node is ended afterwards, so the next run is a first
 * session again.
 */
async function firstSession(env, home) {
  const { LOWDOWN_API_URL: _, ...rest } = env;
  const run = await session([PROXY, '--', node, RESPONDER], { ...rest, LOWDOWN_HOME: home, LOWDOWN_SERVER_BIN: SERVER_BIN });
  const file = path.join(home, 'local-node.json');
  for (let i = 0; i < 600 && !fs.existsSync(file); i += 1) await new Promise((r) => setTimeout(r, 50));
  try {
    process.kill(JSON.parse(fs.readFileSync(file, 'utf8')).pid, 'SIGTERM');
  } catch {}
  for (let i = 0; i < 200 && fs.existsSync(file); i += 1) await new Promise((r) => setTimeout(r, 50));
  return run;
}

/** An API that accepts connections and reads requests but never answers. */
async function hangingApi() {
  const sockets = new Set();
  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => {});
    sock.resume();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => {
      for (const sock of sockets) sock.destroy();
      server.close();
    },
  };
}

/** A local OTLP/HTTP receiver: reads each export, answers 200, counts requests and bytes. */
async function otlpReceiver() {
  const stats = { requests: 0, bytes: 0 };
  const server = http.createServer((req, res) => {
    req.on('data', (c) => (stats.bytes += c.length));
    req.on('end', () => {
      stats.requests += 1;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, stats, close: () => server.close() };
}

/** OpenTelemetry export on, to `url` (OTLP/HTTP protobuf). */
const otelOn = (env, url) => ({ ...env, LOWDOWN_OTEL: '1', OTEL_EXPORTER_OTLP_ENDPOINT: url });

/** Sessions through the bare relay and through the proxy to a working and a hanging API, alternating. */
async function wholeSessions(env, tmp) {
  const hanging = await hangingApi();
  const runs = { bare: [], working: [], hanging: [], first: [], otelHanging: [] };
  try {
    for (let i = 0; i < SESSIONS; i += 1) {
      // A fresh home each time, so no spool from an earlier run is sent at start.
      const home = (name) => ({ ...env, LOWDOWN_HOME: path.join(tmp, `sessions-${name}-${i}`) });
      runs.bare.push(await session([BARE, node, RESPONDER], env));
      runs.working.push(await session([PROXY, '--', node, RESPONDER], home('working')));
      runs.hanging.push(await session([PROXY, '--', node, RESPONDER], { ...home('hanging'), LOWDOWN_API_URL: hanging.url }));
      runs.first.push(await firstSession(env, home('first').LOWDOWN_HOME));
      runs.otelHanging.push(await session([PROXY, '--', node, RESPONDER], otelOn(home('otel'), hanging.url)));
    }
  } finally {
    hanging.close();
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const summary = {};
  for (const [k, xs] of Object.entries(runs)) summary[k] = { total: median(xs.map((x) => x.total)), first: median(xs.map((x) => x.first)), exit: median(xs.map((x) => x.exit)) };
  return summary;
}

async function freePort() {
  return new Promise((r) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => r(port));
    });
  });
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-bench-'));
  let server = null;
  let apiUrl = 'http://127.0.0.1:9';
  if (fs.existsSync(SERVER_BIN)) {
    const port = await freePort();
    server = spawn(SERVER_BIN, ['--listen', `127.0.0.1:${port}`, '--db', path.join(tmp, 'bench.db')], { stdio: 'ignore', env: { ...process.env, LOWDOWN_HOME: tmp } });
    apiUrl = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 100; i += 1) {
      try {
        if ((await fetch(`${apiUrl}/healthz`)).ok) break;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
  const env = { ...process.env, LOWDOWN_HOME: path.join(tmp, 'home'), LOWDOWN_API_URL: apiUrl };
  const logFile = path.join(tmp, 'app.log');
  fs.writeFileSync(logFile, '');
  const rows = [];
  let starts;
  let whole;
  const receiver = await otlpReceiver();
  try {
    starts = await startup(env);
    whole = server ? await wholeSessions(env, tmp) : null;
    // All five sessions stay open and take turns in short rounds, so a load spike on the
    // machine hits every path alike instead of whichever one happened to be running.
    const sessions = [
      await start('direct', node, [RESPONDER], env),
      await start('bare Node relay', node, [BARE, node, RESPONDER], env),
      await start('lowdown-proxy (recording on)', node, [PROXY, '--', node, RESPONDER], env),
      await start('lowdown-proxy + --watch-log', node, [PROXY, '--watch-log', logFile, '--', node, RESPONDER], env, logFile),
      await start('lowdown-proxy, LOWDOWN_RECORD=0', node, [PROXY, '--', node, RESPONDER], { ...env, LOWDOWN_RECORD: '0' }),
      await start('lowdown-proxy + OTel export', node, [PROXY, '--', node, RESPONDER], otelOn(env, receiver.url)),
    ];
    const ROUND = 100;
    for (let done = 0; done < SEQ; done += ROUND) for (const s of sessions) await sequential(s, Math.min(ROUND, SEQ - done));
    for (const s of sessions) rows.push(await finish(s));
  } finally {
    server?.kill('SIGTERM');
    receiver.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const d = rows[0];
  const bare = rows[1];
  console.log(`\nlowdown-proxy benchmark: ${SEQ} sequential 1 KB tools/call, ${PIPELINED} pipelined, one 10 MB message`);
  console.log(`recording to ${server ? 'a real lowdown-server (debug build, SQLite)' : 'an unreachable API (spool)'}; node ${process.version}; ${os.cpus().length} CPUs\n`);
  const head = ['path', 'p50 µs', 'p99 µs', '+p50 vs direct', '+p99 vs direct', 'CPU µs/call', 'pipelined msg/s', '10 MB ms'];
  const table = rows.map((r) => [
    r.label,
    r.p50.toFixed(0),
    r.p99.toFixed(0),
    r === d ? '-' : (r.p50 - d.p50).toFixed(0),
    r === d ? '-' : (r.p99 - d.p99).toFixed(0),
    r === d || r.cpuUs === null ? '-' : r.cpuUs.toFixed(1),
    r.rps.toFixed(0),
    r.bigMs.toFixed(1),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  const fmt = (row) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(fmt(head));
  for (const row of table) console.log(fmt(row));
  const proxy = rows[2];
  const ratio = (k) => {
    const floor = bare[k] - d[k];
    return floor < 5 ? `n/a (bare relay added ${floor.toFixed(0)} µs: noise)` : `${((proxy[k] - d[k]) / floor).toFixed(2)}×`;
  };
  console.log(`\nproxy overhead / bare-relay overhead: p50 ${ratio('p50')}, p99 ${ratio('p99')} (aim ≤ 1.2×)`);
  console.log(`recording on vs LOWDOWN_RECORD=0, per call: p50 ${(proxy.p50 - rows[4].p50).toFixed(0)} µs`);
  console.log(`watch-log on vs off, per call: p50 ${(rows[3].p50 - proxy.p50).toFixed(0)} µs (aim ≤ 50 µs)`);
  const otel = rows[5];
  console.log(`OTel export on vs off, per call: p50 ${(otel.p50 - proxy.p50).toFixed(0)} µs, p99 ${(otel.p99 - proxy.p99).toFixed(0)} µs${otel.cpuUs !== null && proxy.cpuUs !== null ? `, relay-thread CPU ${(otel.cpuUs - proxy.cpuUs).toFixed(1)} µs` : ''}; pipelined ${((otel.rps / proxy.rps) * 100).toFixed(0)}% of the proxy's msg/s; the receiver took ${receiver.stats.requests} export requests (${(receiver.stats.bytes / 1024).toFixed(0)} KiB)`);
  console.log(`start to exit, \`-- /bin/true\`, median of ${STARTS}: bare relay ${starts.bare.toFixed(1)} ms, lowdown-proxy (recording on) ${starts.proxy.toFixed(1)} ms: ${(starts.proxy / starts.bare).toFixed(2)}× (aim ≤ 1.2×)`);
  if (whole) {
    const { bare: b, working: w, hanging: h, first: f, otelHanging: o } = whole;
    console.log(`\nwhole sessions (handshake + ${SESSION_CALLS} calls, stdin closed), median of ${SESSIONS}, ms:`);
    console.log(`  session: bare relay ${b.total.toFixed(0)}, proxy + working API ${w.total.toFixed(0)}, proxy + hanging API ${h.total.toFixed(0)}: hanging / working ${(h.total / w.total).toFixed(2)}× (aim ≤ 1.2×)`);
    console.log(`  stdin closed to exit: bare relay ${b.exit.toFixed(0)}, working API ${w.exit.toFixed(0)}, hanging API ${h.exit.toFixed(0)}: +${(h.exit - w.exit).toFixed(0)} ms with the API hanging (aim ≤ 100 ms)`);
    console.log(`  OTel export to a hanging collector (and a working API): session ${o.total.toFixed(0)} (${(o.total / w.total).toFixed(2)}× without export), stdin closed to exit ${o.exit.toFixed(0)}: +${(o.exit - w.exit).toFixed(0)} ms (aim ≤ 100 ms)`);
    console.log(`  a user's first session (nothing configured: the proxy starts the local node): spawn to first answer ${f.first.toFixed(1)} ms, against ${w.first.toFixed(1)} through the proxy with a working API and ${b.first.toFixed(1)} through the bare relay (${(f.first / b.first).toFixed(2)}× the relay), session ${f.total.toFixed(0)}, stdin closed to exit ${f.exit.toFixed(0)} (aim: the start costs the relay nothing)`);
  }
  if (proxy.cpuUs !== null) {
    console.log(`relay-thread CPU per call, watch-log on vs off: ${(rows[3].cpuUs - proxy.cpuUs).toFixed(1)} µs`);
    console.log('(CPU µs/call: time the relay process\'s main thread ran per sequential call, from /proc schedstat; the load-independent part of the latency)');
  }
}

await main();
