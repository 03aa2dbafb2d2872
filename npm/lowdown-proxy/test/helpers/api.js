// The API the proxy tests record to: the REAL `lowdown-server` (target/debug/lowdown-server,
// SQLite in a temp dir), behind a byte tap, a plain TCP relay that keeps a copy of every
// byte the server was sent so tests can check what left the machine (records, and that no
// canary string is among those bytes).
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { startLowdownServer } from './lowdown-server.js';
import { Sender } from '../../src/record/sender.js';
import { spoolDir } from '../../src/record/spool.js';

/**
 * The records a run left in the spool of `home` (SPEC §3: at exit the proxy waits at most
 * 100 ms for the API, and what it could not deliver by then is spooled for the next run).
 */
export function spooledRecords(home) {
  const dir = spoolDir(home);
  if (!fs.existsSync(dir)) return [];
  // Waiting and claimed spool files: one record's JSON a line.
  return fs.readdirSync(dir).filter((f) => /^\d.*\.jsonl(\.\d+\.sending)?$/.test(f)).flatMap((f) => {
    let text;
    try {
      text = fs.readFileSync(path.join(dir, f), 'utf8');
    } catch {
      return []; // taken by a running proxy meanwhile
    }
    return text.split('\n').filter((l) => l.trim()).map((r) => JSON.parse(r));
  });
}

/** Delivers what `home`'s spool holds to `apiUrl`, as the next run would. */
export async function deliverSpool(home, apiUrl) {
  const sender = new Sender({ apiUrl, home, nodeId: 'ld_000000000000', version: 'test', debug: () => {} });
  sender.drainSpoolSoon();
  await eventually(() => spooledRecords(home).length === 0, 'the spool delivered');
  await sender.shutdown(1000);
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
    /** Records sent to the API, and with `home` those a run spooled instead, each once. */
    records: (home) => {
      const sent = requests()
        .filter((r) => r.method === 'POST' && r.path === '/api/interactions')
        .flatMap((r) => [].concat(JSON.parse(r.body)));
      const ids = new Set(sent.map((r) => r.record_id));
      return home ? sent.concat(spooledRecords(home).filter((r) => !ids.has(r.record_id))) : sent;
    },
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
