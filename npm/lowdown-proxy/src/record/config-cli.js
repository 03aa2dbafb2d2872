// `lowdown-proxy config get|set|unset api-url [URL]`: the one stored setting (SPEC §2), in
// LOWDOWN_HOME/config.json. What may be stored and how the file reads are the core's; this
// reads and replaces the file.

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { FILES } from '../contract.js';
import { settings, storedGet, storedSet } from '../core.js';

export const HELP = `Usage: lowdown-proxy config get|set|unset api-url [URL]

  get api-url        print the stored deployment URL (nothing when none is stored)
  set api-url URL    send records to, and ask, this deployment (a team's or a public one)
                     instead of the local node, which is then never started
  unset api-url      forget it: records go to the local node again

Stored in LOWDOWN_HOME/config.json (~/.lowdown/config.json). LOWDOWN_API_URL, when set,
wins over it.
`;

/**
 * Runs the subcommand; returns the exit code: 0 done, 1 the file could not be read or
 * written, or the value is not allowed, 2 bad usage.
 * @param {string[]} args the words after `config`
 * @param {{stdout?: {write: Function}, stderr?: {write: Function}, env?: Record<string, string|undefined>}} [io]
 * @returns {number}
 */
export function main(args, io = {}) {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const env = io.env ?? process.env;
  const [op, key, value, ...extra] = args;
  if (op === '--help' || op === 'help') {
    stdout.write(HELP);
    return 0;
  }
  const arity = { get: 2, set: 3, unset: 2 }[op ?? ''];
  if (!arity || args.length !== arity || extra.length) {
    stderr.write(`lowdown-proxy config: expected get, set or unset and a setting\n\n${HELP}`);
    return 2;
  }
  const home = path.resolve(settings(env).home);
  const file = path.join(home, FILES.CONFIG_FILE);
  try {
    let text = null;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      if (/** @type {NodeJS.ErrnoException} */ (err).code !== 'ENOENT') throw err;
    }
    if (op === 'get') {
      const stored = storedGet(text, key);
      if (stored !== null) stdout.write(`${stored}\n`);
      return 0;
    }
    const next = storedSet(text, key, op === 'set' ? value : null);
    write(home, file, next);
    if (op === 'set') {
      stdout.write(`Records now go to ${storedGet(next, key)}; no local node is started.\n`);
      if (env.LOWDOWN_API_URL) stdout.write(`LOWDOWN_API_URL (${env.LOWDOWN_API_URL}) is set here and still wins over it.\n`);
    } else {
      stdout.write('No deployment stored: records go to the local node.\n');
    }
    return 0;
  } catch (err) {
    stderr.write(`lowdown-proxy config: ${/** @type {Error} */ (err).message} (${file})\n`);
    return 1;
  }
}

/**
 * Replaces `file` with `text` at once (a temporary file renamed over it), readable by the
 * user only, in a home made 0700 when missing.
 * @param {string} home
 * @param {string} file
 * @param {string} text
 */
function write(home, file, text) {
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${crypto.randomBytes(6).toString('hex')}.tmp`;
  try {
    fs.writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' });
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}
