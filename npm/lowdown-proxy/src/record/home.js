// The state directory and the node identity (SPEC §2, §3.5).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';

const NODE_ID_RE = /^ld_[0-9a-f]{12}$/;

/**
 * The state directory: `$LOWDOWN_HOME`, else `~/.lowdown`.
 * @param {Record<string, string|undefined>} [env]
 * @returns {string}
 */
export function lowdownHome(env = process.env) {
  return env.LOWDOWN_HOME ? path.resolve(env.LOWDOWN_HOME) : path.join(os.homedir(), '.lowdown');
}

/**
 * Reads `<home>/node.json`, creating it (mode 0600, atomically) on first use and replacing
 * it when it is unreadable, not JSON or holds a malformed id.
 * @param {string} home
 * @returns {{node_id: string, created_at: string, created: boolean}}
 */
export function loadNodeIdentity(home) {
  const file = path.join(home, 'node.json');
  const existing = readIdentity(file);
  if (existing.identity) return { ...existing.identity, created: false };
  const identity = { node_id: `ld_${crypto.randomBytes(6).toString('hex')}`, created_at: new Date().toISOString() };
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(identity) + '\n', { mode: 0o600 });
  fs.chmodSync(tmp, 0o600);
  try {
    if (existing.missing) {
      // First run: create exclusively, so two proxies starting at once agree on one id.
      try {
        fs.linkSync(tmp, file);
      } catch (err) {
        if (err.code !== 'EEXIST') throw err;
        const winner = readIdentity(file).identity;
        if (winner) return { ...winner, created: false };
        fs.renameSync(tmp, file);
      }
    } else {
      fs.renameSync(tmp, file); // corrupt: replace atomically
    }
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  return { ...identity, created: true };
}

/** Reads node.json: the identity when valid, `missing` when there is no file. */
function readIdentity(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    return { identity: null, missing: err.code === 'ENOENT' };
  }
  try {
    const data = JSON.parse(text);
    if (data && typeof data.node_id === 'string' && NODE_ID_RE.test(data.node_id) && typeof data.created_at === 'string') {
      return { identity: { node_id: data.node_id, created_at: data.created_at }, missing: false };
    }
  } catch {
    // not JSON
  }
  return { identity: null, missing: false };
}
