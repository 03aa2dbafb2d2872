// The state directory and the node identity (SPEC §2, §3.5). What they are is the core's
// (settings from the environment, node.json's format and its plan: create exclusively, the
// winner of a race, replace a corrupt file); this file runs the plan (./files.js does the IO).

import path from 'node:path';
import crypto from 'node:crypto';
import { settings, NodeIdentityLoad } from '../core.js';
import { run } from './files.js';

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
 * it when the core reads no identity in it; throws the IO error when it cannot.
 * @param {string} home
 * @returns {{node_id: string, created_at: string, created: boolean}}
 */
export function loadNodeIdentity(home) {
  const random = (/** @type {number} */ n) => crypto.randomBytes(n).toString('hex');
  const { step, error } = run(home, new NodeIdentityLoad(random(6), new Date().toISOString(), process.pid, random(4)));
  if (step.step !== 'identity') throw error ?? new Error('cannot load node.json');
  return { node_id: step.node_id, created_at: step.created_at, created: step.created };
}
