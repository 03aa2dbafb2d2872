// Real local HTTP servers for the tests: the API being called, and a collector that keeps
// every raw byte it receives (for the privacy canaries).
import http from 'node:http';

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

/** A telemetry collector recording raw request bytes; `mode` 'ok' answers, 'hang' never does. */
export async function collector(mode = 'ok') {
  const received = [];
  const server = await serve((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      received.push({ method: req.method, url: req.url, headers: req.rawHeaders.join('\n'), raw });
      if (mode === 'ok') res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  return {
    ...server,
    received,
    observations: () => received.flatMap((r) => JSON.parse(r.raw.toString('utf8'))),
    allBytes: () => received.map((r) => `${r.method} ${r.url}\n${r.headers}\n${r.raw}`).join('\n'),
  };
}

/**
 * Starts the real lowdown-server (built by `cargo build -p lowdown-server`) on SQLite in a
 * temporary LOWDOWN_HOME, at a free port.
 */
export async function lowdownServer() {
  const { spawn } = await import('node:child_process');
  const { mkdtempSync, rmSync, existsSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const bin = new URL('../../../target/debug/lowdown-server', import.meta.url).pathname;
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`cargo build -p lowdown-server\``);
  const home = mkdtempSync(join(tmpdir(), 'lowdown-observe-'));
  const probe = await serve(() => {});
  const port = probe.port;
  await probe.close();
  const child = spawn(bin, ['--listen', `127.0.0.1:${port}`, '--db', join(home, 'lowdown.db')], {
    env: { ...process.env, LOWDOWN_HOME: home },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`lowdown-server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {}
    if (i > 200) throw new Error('lowdown-server did not start within 10 s');
    await new Promise((r) => setTimeout(r, 50));
  }
  const handle = {
    url,
    home,
    close: async () => {
      open.delete(handle);
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
      rmSync(home, { recursive: true, force: true });
    },
  };
  open.add(handle);
  return handle;
}
