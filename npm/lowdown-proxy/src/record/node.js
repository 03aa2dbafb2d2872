// The local node (SPEC §2): where records go when no API URL is configured, and starting it
// when nothing answers there. What the announcement in LOWDOWN_HOME says, and whether a host
// may start a node, are the core's; this is the IO.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { FILES } from '../contract.js';
import { destination, localNode, settings, spoolTally, storedGet } from '../core.js';

/**
 * How long a started node has to announce itself before this session stops waiting (a
 * first start migrates a new database; a loaded machine is slow). The wait holds nothing:
 * the relay goes on, and an ending session spools what it has.
 */
export const ANNOUNCE_WAIT_MS = 30_000;

/**
 * Where this user's hosts deliver and query, as the core decides from the environment,
 * LOWDOWN_HOME/config.json and the local node's announcement (SPEC §2).
 * @param {Record<string, string|undefined>} [env]
 * @returns {{url: string, via: 'environment'|'stored'|'local_node'|'default', may_start: boolean, problem?: string, home: string, settings: any, stored: string|null}}
 *   `home` resolved; `stored` the text of config.json, null when there is none
 */
export function whereTo(env = process.env) {
  const s = settings(env);
  const home = path.resolve(s.home);
  const stored = readText(path.join(home, FILES.CONFIG_FILE));
  return { ...destination(s, stored, readText(path.join(home, FILES.LOCAL_NODE_FILE))), home, settings: s, stored };
}

/**
 * Where this user's records go, for `lowdown-proxy status`: the configured deployment, or
 * the local node (running, with its process id and log, or not), and what waits in the
 * spool (files and records) and was dropped from it.
 * @param {Record<string, string|undefined>} [env]
 * @returns {string[]} lines
 */
export function destinationLines(env = process.env) {
  const w = whereTo(env);
  const { home } = w;
  const lines = [];
  const node = announced(home);
  const log = path.join(home, FILES.LOCAL_NODE_LOG);
  if (w.problem) lines.push(`Records go nowhere: ${w.problem} (LOWDOWN_API_URL); they wait in the spool.`);
  else if (w.via === 'environment') lines.push(`Records go to ${w.url} (LOWDOWN_API_URL).`);
  else if (w.via === 'stored') lines.push(`Records go to ${w.url} (lowdown-proxy config set api-url, in ${path.join(home, FILES.CONFIG_FILE)}).`);
  else if (node) lines.push(`Records go to the local node at ${node.url} (process ${node.pid}; log ${log}).`);
  else if (w.may_start) lines.push(`Records go to the local node at ${w.url}, which the next session starts if nothing answers there.`);
  else lines.push(`Records go to ${w.url}; LOWDOWN_AUTOSTART=0, so no local node is started.`);
  try {
    storedGet(w.stored, 'api-url');
  } catch (err) {
    lines.push(`${path.join(home, FILES.CONFIG_FILE)} is ignored: ${/** @type {Error} */ (err).message}.`);
  }
  const dir = path.join(home, FILES.SPOOL_DIR);
  /** @type {string[]} */
  let names = [];
  try {
    names = fs.readdirSync(dir);
  } catch {}
  const { files, records, dropped } = spoolTally(names, names.map((n) => readText(path.join(dir, n)) ?? ''));
  lines.push(`Spool: ${records} record(s) waiting in ${files} file(s) in ${dir}${dropped ? `; ${dropped} dropped when it was full` : ''}.`);
  return lines;
}

/**
 * A file's text, or null when it cannot be read.
 * @param {string} file
 * @returns {string|null}
 */
function readText(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/**
 * The node `home` announces (the core's reading), or null.
 * @param {string} home
 */
function announced(home) {
  const text = readText(path.join(home, FILES.LOCAL_NODE_FILE));
  return text === null ? null : localNode(text);
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
  return announcedBy(home, await spawnLocalNode(home));
}

/**
 * Spawns the local node of `home` (see startLocalNode); resolves to its process id once it
 * runs, so a host that ends now leaves it starting.
 * @param {string} home
 * @returns {Promise<number|undefined>}
 */
export async function spawnLocalNode(home) {
  const { binaryPath } = await import('lowdown-server');
  const bin = binaryPath();
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  const log = fs.openSync(path.join(home, FILES.LOCAL_NODE_LOG), 'a', 0o600);
  try {
    const { DATABASE_URL: _, ...env } = process.env;
    // In LOWDOWN_HOME, not this session's directory, which it would otherwise hold for its life.
    const child = spawn(bin, ['serve', '--local-node'], { cwd: home, detached: true, stdio: ['ignore', log, log], env: { ...env, LOWDOWN_HOME: home } });
    await new Promise((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    child.unref();
    return child.pid;
  } finally {
    fs.closeSync(log);
  }
}

/**
 * The node `home` announces within ANNOUNCE_WAIT_MS, and whether it is the process `pid`.
 * @param {string} home
 * @param {number|undefined} pid
 * @returns {Promise<{url: string, started: boolean}>}
 */
async function announcedBy(home, pid) {
  for (const started = Date.now(); Date.now() - started < ANNOUNCE_WAIT_MS; ) {
    const node = announced(home);
    if (node) return { url: node.url, started: node.pid === pid };
    await new Promise((r) => setTimeout(r, 50).unref());
  }
  throw new Error(`it did not announce itself within ${ANNOUNCE_WAIT_MS / 1000} s (see ${path.join(home, FILES.LOCAL_NODE_LOG)})`);
}

/**
 * Starts the local node of `home` as startLocalNode does, with the spawn apart: `spawned`
 * settles once the process runs (or cannot), `node` once it announced itself.
 * @param {string} home
 * @returns {{spawned: Promise<unknown>, node: Promise<{url: string, started: boolean}>}}
 */
export function startingLocalNode(home) {
  const spawned = spawnLocalNode(home);
  return { spawned: spawned.catch(() => {}), node: spawned.then((pid) => announcedBy(home, pid)) };
}
