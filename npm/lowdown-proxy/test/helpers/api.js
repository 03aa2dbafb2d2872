// The API the proxy tests record to: the REAL `lowdown-server` (target/debug/lowdown-server,
// SQLite in a temp dir), behind a byte tap, a plain TCP relay that keeps a copy of every
// byte the server was sent so tests can check what left the machine (records, and that no
// canary string is among those bytes).
import net from 'node:net';
import { startLowdownServer } from './lowdown-server.js';

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
  const server = await startLowdownServer();
  const { port, url: directUrl, dir: dbDir, stop: stopServer } = server;
  t.after(stopServer);

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
