// The one way the JS tests start a real lowdown-server (the debug build, SQLite in
// a temp LOWDOWN_HOME, a free loopback port): the proxy, lowdown-mcp/wrap and lowdown-observe
// suites all call this (observe by relative path).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
/** The server binary the make targets build first (`cargo build -p lowdown-server`), where cargo
 * puts it (`CARGO_TARGET_DIR`, as prowl's tests read it, else `target`); `LOWDOWN_SERVER_BIN`
 * names another. */
export const SERVER_BIN =
  process.env.LOWDOWN_SERVER_BIN ??
  path.join(path.resolve(ROOT, process.env.CARGO_TARGET_DIR ?? 'target'), 'debug', 'lowdown-server');

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

/**
 * Starts lowdown-server on a fresh temp dir (its database and LOWDOWN_HOME) and waits for
 * /healthz. `stop()` ends it and removes the dir; it is safe to call twice.
 * @param {string} [prefix] the temp dir's name prefix
 * @param {{args?: string[], env?: Record<string, string>, db?: string}} [more] extra `serve`
 *   options (e.g. `--gateway-listen`), environment, and `db`: another database (a
 *   `postgres://` URL) instead of the SQLite file in the dir
 * @returns {Promise<{url: string, port: number, dir: string, db: string, stop: () => Promise<void>}>}
 */
export async function startLowdownServer(prefix = 'lowdown-server-test-', more = {}) {
  if (!fs.existsSync(SERVER_BIN)) throw new Error(`${SERVER_BIN} is missing: run \`cargo build -p lowdown-server\``);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const db = more.db ?? path.join(dir, 'x.db');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // The hosts the observe tests call are on loopback, which a real server refuses to store:
  // these tests lift that block (SPEC §4's test-only flag).
  const child = spawn(SERVER_BIN, ['serve', '--listen', `127.0.0.1:${port}`, '--db', db, '--unsafe-allow-private-hosts', ...(more.args ?? [])], {
    env: { ...process.env, LOWDOWN_HOME: dir, ...more.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((r) => child.once('exit', r));
  const stop = async () => {
    if (child.exitCode === null && !child.signalCode) child.kill('SIGTERM');
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 20000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`lowdown-server exited ${child.exitCode}: ${stderr}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`lowdown-server did not become healthy: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, port, dir, db, stop };
}
