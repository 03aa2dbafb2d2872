// `make bench-proxy`: what the proxy costs an MCP session.
//
// One run, same machine, same raw JSON-RPC client, four ways to reach the same responder:
// direct; a bare 10-line Node pipe relay (the floor for any Node proxy); lowdown-proxy with
// recording on (to a real lowdown-server when target/debug/lowdown-server exists); and the
// proxy with --watch-log on a file that grows during the run. Prints one table.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..', '..');
const PROXY = path.join(ROOT, 'npm', 'bin', 'lowdown-proxy.js');
const RESPONDER = path.join(HERE, 'responder.js');
const BARE = path.join(HERE, 'bare-relay.js');
const SERVER_BIN = path.join(ROOT, 'target', 'debug', 'lowdown-server');
const SEQ = Number(process.env.BENCH_SEQ ?? 3000);
const PIPELINED = Number(process.env.BENCH_PIPELINED ?? 20000);

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
  return { request, close };
}

const call = (c, args = { message: ARG }) => c.request('tools/call', { name: 'echo', arguments: args });

function pct(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function measure(label, cmd, args, env, logFile) {
  const c = open(cmd, args, env);
  await c.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
  await c.request('tools/list', {});
  for (let i = 0; i < 300; i += 1) await call(c); // warm-up
  const times = [];
  for (let i = 0; i < SEQ; i += 1) {
    if (logFile && i % 10 === 0) fs.appendFileSync(logFile, `12:00:00 ERROR bench line ${i} token=abc123\n`);
    const t0 = process.hrtime.bigint();
    await call(c);
    times.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  times.sort((a, b) => a - b);
  const t1 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: PIPELINED }, () => call(c)));
  const pipeSecs = Number(process.hrtime.bigint() - t1) / 1e9;
  const big = 'b'.repeat(10 * 1024 * 1024);
  const t2 = process.hrtime.bigint();
  await call(c, { big });
  const bigMs = Number(process.hrtime.bigint() - t2) / 1e6;
  await c.close();
  return { label, p50: pct(times, 50), p99: pct(times, 99), rps: PIPELINED / pipeSecs, bigMs };
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
  try {
    rows.push(await measure('direct', node, [RESPONDER], env));
    rows.push(await measure('bare Node relay', node, [BARE, node, RESPONDER], env));
    rows.push(await measure('lowdown-proxy (recording on)', node, [PROXY, '--', node, RESPONDER], env));
    rows.push(await measure('lowdown-proxy + --watch-log', node, [PROXY, '--watch-log', logFile, '--', node, RESPONDER], env, logFile));
    rows.push(await measure('lowdown-proxy, LOWDOWN_RECORD=0', node, [PROXY, '--', node, RESPONDER], { ...env, LOWDOWN_RECORD: '0' }));
  } finally {
    server?.kill('SIGTERM');
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const d = rows[0];
  const bare = rows[1];
  console.log(`\nlowdown-proxy benchmark: ${SEQ} sequential 1 KB tools/call, ${PIPELINED} pipelined, one 10 MB message`);
  console.log(`recording to ${server ? 'a real lowdown-server (debug build, SQLite)' : 'an unreachable API (spool)'}; node ${process.version}; ${os.cpus().length} CPUs\n`);
  const head = ['path', 'p50 µs', 'p99 µs', '+p50 vs direct', '+p99 vs direct', 'pipelined msg/s', '10 MB ms'];
  const table = rows.map((r) => [
    r.label,
    r.p50.toFixed(0),
    r.p99.toFixed(0),
    r === d ? '-' : (r.p50 - d.p50).toFixed(0),
    r === d ? '-' : (r.p99 - d.p99).toFixed(0),
    r.rps.toFixed(0),
    r.bigMs.toFixed(1),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  const fmt = (row) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(fmt(head));
  for (const row of table) console.log(fmt(row));
  const added = (r, k) => (r[k] - d[k]) / Math.max(1, bare[k] - d[k]);
  const proxy = rows[2];
  console.log(`\nproxy overhead / bare-relay overhead: p50 ${added(proxy, 'p50').toFixed(2)}×, p99 ${added(proxy, 'p99').toFixed(2)}× (aim ≤ 1.2×)`);
  console.log(`watch-log on vs off, per call: p50 ${(rows[3].p50 - proxy.p50).toFixed(0)} µs (aim ≤ 50 µs)`);
}

await main();
