// The API the proxy tests record to: the REAL `lowdown-server` (target/debug/lowdown-server,
// SQLite in a temp dir), behind a byte tap, a plain TCP relay that keeps a copy of every
// byte the server was sent so tests can check what left the machine (records, and that no
// canary string is among those bytes).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from './run.js';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The server binary `make test-proxy` builds first. */
export const SERVER_BIN = process.env.LOWDOWN_SERVER_BIN ?? path.join(ROOT, 'target', 'debug', 'lowdown-server');

/** A free loopback port. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Waits until GET url answers 200. */
async function waitHealthy(url, child, getErr) {
  const deadline = Date.now() + 20000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`lowdown-server exited ${child.exitCode}: ${getErr()}`);
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`lowdown-server did not become healthy: ${getErr()}`);
}

/** Splits captured HTTP/1.1 request bytes into {method, path, body} (content-length bodies). */
export function parseRequests(buf) {
  const out = [];
  let pos = 0;
  while (pos < buf.length) {
    const end = buf.indexOf('\r\n\r\n', pos);
    if (end === -1) break;
    const head = buf.subarray(pos, end).toString('latin1');
    const [requestLine, ...headers] = head.split('\r\n');
    const len = Number(headers.find((h) => /^content-length:/i.test(h))?.split(':')[1] ?? 0);
    const [method, reqPath] = requestLine.split(' ');
    out.push({ method, path: reqPath, body: buf.subarray(end + 4, end + 4 + len).toString('utf8') });
    pos = end + 4 + len;
  }
  return out;
}

/**
 * Starts lowdown-server and a tap in front of it; stopped when the test ends.
 * @returns {Promise<{url: string, directUrl: string, bytes: () => Buffer, records: () => object[], requests: () => object[], stop: () => Promise<void>, dbDir: string}>}
 */
export async function startApi(t) {
  if (!fs.existsSync(SERVER_BIN)) throw new Error(`${SERVER_BIN} is missing: run \`cargo build -p lowdown-server\` (make test-proxy does)`);
  const dbDir = tempDir(t, 'lowdown-server-test-');
  const port = await freePort();
  let err = '';
  const server = spawn(SERVER_BIN, ['--listen', `127.0.0.1:${port}`, '--db', path.join(dbDir, 'x.db')], {
    env: { ...process.env, LOWDOWN_HOME: dbDir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  server.stderr.on('data', (d) => (err += d));
  const directUrl = `http://127.0.0.1:${port}`;
  const stopServer = async () => {
    if (server.exitCode !== null || server.signalCode) return;
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
  };
  t.after(stopServer);
  await waitHealthy(`${directUrl}/healthz`, server, () => err);

  // Per connection capture; concatenated in connection order when asked.
  const captures = [];
  const tap = net.createServer((client) => {
    const chunks = [];
    captures.push(chunks);
    const upstream = net.connect(port, '127.0.0.1');
    client.on('data', (d) => {
      chunks.push(d);
      upstream.write(d);
    });
    upstream.on('data', (d) => client.write(d));
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise((r) => tap.listen(0, '127.0.0.1', r));
  const tapUrl = `http://127.0.0.1:${tap.address().port}`;
  const stop = async () => {
    await new Promise((r) => tap.close(r));
    await stopServer();
  };
  t.after(() => new Promise((r) => tap.close(() => r())));
  const requests = () => captures.flatMap((c) => parseRequests(Buffer.concat(c)));
  return {
    url: tapUrl,
    directUrl,
    dbDir,
    bytes: () => Buffer.concat(captures.flat()),
    requests,
    records: () =>
      requests()
        .filter((r) => r.method === 'POST' && r.path === '/api/interactions')
        .flatMap((r) => [].concat(JSON.parse(r.body))),
    stop,
  };
}

/** Waits until `check()` is truthy (polling), or throws with `what`. */
export async function eventually(check, what, timeoutMs = 8000, describe = () => '') {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} ${describe()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
