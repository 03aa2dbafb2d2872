// A real lowdown-server on a free loopback port, for the lowdown-mcp and status tests.

import net from 'node:net';
import { startLowdownServer } from './helpers/lowdown-server.js';

export { freePort } from './helpers/lowdown-server.js';

/**
 * Starts the real lowdown-server (see helpers/lowdown-server.js), with a `post` that seeds
 * records through its API.
 * @returns {Promise<{url: string, dir: string, db: string, post: (body: unknown) => Promise<object>, stop: () => Promise<void>}>}
 */
export async function startServer() {
  const { url, dir, db, stop } = await startLowdownServer('lowdown-srv-');
  return {
    url,
    dir,
    db,
    async post(body) {
      const res = await fetch(`${url}/api/interactions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const json = await res.json();
      if (res.status !== 201) throw new Error(`seeding failed: ${res.status} ${JSON.stringify(json)}`);
      return json;
    },
    stop,
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
