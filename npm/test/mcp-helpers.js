// A real lowdown-server on a free loopback port, for the lowdown-mcp and status tests.

import fs from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';

export const REPO = new URL('../../', import.meta.url).pathname;
export const SERVER_BIN = path.join(REPO, 'target', 'debug', 'lowdown-server');

/** A free TCP port on 127.0.0.1. */
export async function freePort() {
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

/**
 * Starts target/debug/lowdown-server (built by `cargo build -p lowdown-server`) on a temp
 * database and waits for /healthz.
 * @returns {Promise<{url: string, dir: string, post: (body: unknown) => Promise<object>, stop: () => Promise<void>}>}
 */
export async function startServer() {
  if (!fs.existsSync(SERVER_BIN)) throw new Error(`${SERVER_BIN} is missing: run cargo build -p lowdown-server`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-srv-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(SERVER_BIN, ['--listen', `127.0.0.1:${port}`, '--db', path.join(dir, 'x.db')], {
    env: { ...process.env, LOWDOWN_HOME: dir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((r) => child.once('exit', r));
  const deadline = Date.now() + 20000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`lowdown-server exited: ${stderr}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`lowdown-server did not start: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    dir,
    async post(body) {
      const res = await fetch(`${url}/api/interactions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const json = await res.json();
      if (res.status !== 201) throw new Error(`seeding failed: ${res.status} ${JSON.stringify(json)}`);
      return json;
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `n` records of one target and outcome. */
export function records(target, n, fields = {}) {
  return Array.from({ length: n }, () => ({ target, target_type: 'tool', task_type: 'search', outcome: 'success', ...fields }));
}

/**
 * A TCP server that accepts connections and never answers (a hung API).
 * @returns {Promise<{url: string, close: () => Promise<void>}>}
 */
export async function silentServer() {
  const sockets = new Set();
  const srv = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${srv.address().port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => srv.close(r));
    },
  };
}
