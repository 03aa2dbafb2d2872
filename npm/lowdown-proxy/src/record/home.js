// The state directory and the node identity (SPEC §2, §3.5). What they are is the core's
// (settings from the environment, node.json's format); this file does the file IO only.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { settings, nodeIdentity } from '../core.js';
import { FILES } from '../contract.js';

/**
 * The state directory: `$LOWDOWN_HOME`, else `~/.lowdown`.
 * @param {Record<string, string|undefined>} [env]
 * @returns {string}
 */
export function lowdownHome(env = process.env) {
  return path.resolve(settings(env).home);
}

/**
 * Reads `<home>/node.json`, creating it (mode 0600, atomically) on first use and replacing
 * it when the core does not read an identity in it.
 * @param {string} home
 * @returns {{node_id: string, created_at: string, created: boolean}}
 */
export function loadNodeIdentity(home) {
  const file = path.join(home, FILES.NODE_FILE);
  const existing = readIdentity(file);
  if (existing.identity) return { ...existing.identity, created: false };
  const text = nodeIdentity.fresh(crypto.randomBytes(6).toString('hex'), new Date().toISOString());
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, text, { mode: 0o600 });
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
  return { ...nodeIdentity.parse(text), created: true };
}

/** Reads node.json: the identity when the core reads one, `missing` when there is no file. */
function readIdentity(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    return { identity: null, missing: err.code === 'ENOENT' };
  }
  return { identity: nodeIdentity.parse(text), missing: false };
}

/** The user's home directory, as the core joins `.lowdown` to it. */
export const userHome = () => os.homedir();
