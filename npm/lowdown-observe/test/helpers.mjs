// Real local HTTP servers for the tests: the API being called, and a collector that keeps
// every raw byte it receives (for the privacy canaries).
import http from 'node:http';
import { startLowdownServer } from '../../lowdown-proxy/test/helpers/lowdown-server.js';

const open = new Set();

/** Closes every server a test started, even after a failed assertion. */
export async function closeAll() {
  await Promise.all([...open].map((s) => s.close()));
}

/** Starts `handler` on 127.0.0.1 at a free port. */
export async function serve(handler) {
  const server = http.createServer(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  const handle = {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () => {
      open.delete(handle);
      return new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); });
    },
  };
  open.add(handle);
  return handle;
}

/** The thing agents call: a few routes with known statuses and bodies. */
export function targetApi() {
  return serve((req, res) => {
    req.resume();
    const path = new URL(req.url, 'http://x').pathname;
    if (path === '/ok') return res.writeHead(200, { 'content-length': 11 }).end('hello world');
    if (path === '/missing') return res.writeHead(404, { 'content-length': 2 }).end('no');
    if (path === '/broken') return res.writeHead(500, { 'content-length': 4 }).end('oops');
    if (path === '/throttled') return res.writeHead(429, { 'retry-after': '1' }).end();
    if (path === '/stream') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      let n = 0;
      const tick = setInterval(() => {
        res.write(`chunk ${n}\n`);
        if (++n === 5) { clearInterval(tick); res.end(); }
      }, 10);
      return undefined;
    }
    return res.writeHead(200).end();
  });
}

/**
 * A telemetry collector recording raw request bytes; `mode` 'ok' answers as the API does,
 * 'hang' never answers, '404' answers as a mistyped API URL does, 'page' with a 200 page that
 * is not the API's answer. With `answerBytes`, the API's answer is padded with spaces to
 * that many bytes and streamed without a Content-Length, 64 KiB a write.
 * @param {string} [mode]
 * @param {{answerBytes?: number}} [opts]
 */
export async function collector(mode = 'ok', { answerBytes } = {}) {
  const received = [];
  const server = await serve((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      received.push({ method: req.method, url: req.url, headers: req.rawHeaders.join('\n'), raw });
      if (mode === '404') return res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>');
      if (mode === 'page') return res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Welcome</h1>');
      if (mode !== 'ok') return;
      // The API's answer to a batch (SPEC §4): every item accepted.
      let n = 0;
      try {
        n = [JSON.parse(raw.toString('utf8'))].flat().length;
      } catch {
        n = 0;
      }
      const answer = JSON.stringify({ ok: true, accepted: n, rate_limited: 0, items: [] });
      if (answerBytes === undefined) return res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.on('error', () => undefined); // the client may stop reading
      const padded = Buffer.alloc(answerBytes, ' ');
      padded.write(answer);
      for (let at = 0; at < padded.length && !res.destroyed; at += 64 * 1024) res.write(padded.subarray(at, at + 64 * 1024));
      return res.end();
    });
  });
  return {
    ...server,
    received,
    observations: () => received.flatMap((r) => JSON.parse(r.raw.toString('utf8'))),
    allBytes: () => received.map((r) => `${r.method} ${r.url}\n${r.headers}\n${r.raw}`).join('\n'),
  };
}

/** Starts the real lowdown-server (the npm package's shared test helper), closed by closeAll. */
export async function lowdownServer(more = {}) {
  const { url, dir, stop } = await startLowdownServer('lowdown-observe-', more);
  const handle = {
    url,
    home: dir,
    close: async () => {
      open.delete(handle);
      await stop();
    },
  };
  open.add(handle);
  return handle;
}
