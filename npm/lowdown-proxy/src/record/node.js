// The local node (SPEC §2): where records go when no API URL is configured, and starting it
// when nothing answers there. What the announcement in LOWDOWN_HOME says, and whether a host
// may start a node, are the core's; this is the IO.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { FILES } from '../contract.js';
import { localNodeUrl } from '../core.js';

/** How long a started node has to announce itself before this session stops waiting. */
export const ANNOUNCE_WAIT_MS = 5000;

/**
 * The URL the running local node of `home` announces, or null.
 * @param {string} home
 * @returns {string|null}
 */
export function announcedUrl(home) {
  return announced(home)?.url ?? null;
}

/**
 * The node `home` announces: its URL (the core's reading) and process id, or null.
 * @param {string} home
 * @returns {{url: string, pid: number}|null}
 */
function announced(home) {
  try {
    const text = fs.readFileSync(path.join(home, FILES.LOCAL_NODE_FILE), 'utf8');
    const url = localNodeUrl(text);
    return url ? { url, pid: JSON.parse(text).pid } : null;
  } catch {
    return null;
  }
}

/**
 * Starts the local node of `home` in the background: the installed lowdown-server, detached,
 * on SQLite in `home`, its output appended to the log beside it (a node already running,
 * another host's start a moment earlier, makes this one exit at once). Resolves to the URL
 * of the node announced, and whether it is the one started here; throws saying why there is
 * none.
 * @param {string} home
 * @returns {Promise<{url: string, started: boolean}>}
 */
export async function startLocalNode(home) {
  const { binaryPath } = await import('lowdown-server');
  const bin = binaryPath();
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  const log = fs.openSync(path.join(home, FILES.LOCAL_NODE_LOG), 'a', 0o600);
  let pid;
  try {
    const { DATABASE_URL: _, ...env } = process.env;
    const child = spawn(bin, ['serve', '--local-node'], { detached: true, stdio: ['ignore', log, log], env: { ...env, LOWDOWN_HOME: home } });
    await new Promise((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    child.unref();
    pid = child.pid;
  } finally {
    fs.closeSync(log);
  }
  for (const started = Date.now(); Date.now() - started < ANNOUNCE_WAIT_MS; ) {
    const node = announced(home);
    if (node) return { url: node.url, started: node.pid === pid };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`it did not announce itself within ${ANNOUNCE_WAIT_MS / 1000} s (see ${path.join(home, FILES.LOCAL_NODE_LOG)})`);
}
