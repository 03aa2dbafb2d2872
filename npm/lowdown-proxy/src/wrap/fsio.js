// Reading and atomically rewriting one config file, losing nothing on any failure.

import fs from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';

/** A config file problem; `type` is a stable kind, `path` the file. */
export class ConfigError extends Error {
  /**
   * @param {'missing'|'unreadable'|'malformed_json'|'malformed_yaml'|'read_only'|'changed'|'write_failed'} type
   * @param {string} file
   * @param {string} message
   */
  constructor(type, file, message) {
    super(`${file}: ${message}`);
    this.type = type;
    this.path = file;
  }
}

/**
 * Reads a config file (following symlinks, so the real file gets rewritten later).
 * @param {string} file
 * @returns {Promise<{path: string, text: string, mtimeMs: number, mode: number}>}
 * @throws {ConfigError} `missing` or `unreadable`
 */
export async function readConfig(file) {
  let real;
  try {
    real = await fs.realpath(file);
    const st = await fs.stat(real);
    if (!st.isFile()) throw new ConfigError('unreadable', file, 'is not a regular file');
    const text = await fs.readFile(real, 'utf8');
    return { path: real, text, mtimeMs: st.mtimeMs, mode: st.mode & 0o7777 };
  } catch (caught) {
    if (caught instanceof ConfigError) throw caught;
    const e = /** @type {NodeJS.ErrnoException} */ (caught);
    if (e.code === 'ENOENT') throw new ConfigError('missing', file, 'no such file');
    throw new ConfigError('unreadable', file, `cannot be read (${e.code || e.message})`);
  }
}

/**
 * Replaces a config file's contents atomically: a temp file in the same directory is
 * renamed over it, after the previous contents are saved as `<file>.bak`. Refuses a file
 * without write permission, and a file whose contents or mtime changed since `read`
 * (another program wrote it): then the file is left as it is.
 * @param {{path: string, text: string, mtimeMs: number, mode: number}} read what readConfig returned
 * @param {string} text the new contents
 * @param {{beforeCommit?: () => Promise<void>|void}} [hooks] test hook run just before the re-check
 * @returns {Promise<{backup: string}>}
 * @throws {ConfigError} `read_only`, `changed` or `write_failed`
 */
export async function writeConfigAtomic(read, text, hooks = {}) {
  const file = read.path;
  // Root ignores permission bits, so honour the user's "read-only" mark explicitly.
  if ((read.mode & 0o222) === 0) throw new ConfigError('read_only', file, 'is read-only; nothing was changed (make it writable to wrap it)');
  try {
    await fs.access(file, fs.constants.W_OK);
  } catch {
    throw new ConfigError('read_only', file, 'is not writable by you; nothing was changed');
  }
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.lowdown-${process.pid}-${crypto.randomBytes(4).toString('hex')}.tmp`);
  const backup = `${file}.bak`;
  try {
    await fs.writeFile(tmp, text, { mode: read.mode & 0o777, flag: 'wx' });
    await fs.chmod(tmp, read.mode & 0o777);
    if (hooks.beforeCommit) await hooks.beforeCommit();
    let now;
    try {
      const st = await fs.stat(file);
      now = { mtimeMs: st.mtimeMs, text: await fs.readFile(file, 'utf8') };
    } catch {
      now = null;
    }
    if (!now || now.text !== read.text || now.mtimeMs !== read.mtimeMs) {
      throw new ConfigError('changed', file, 'changed while it was being rewritten (another program wrote it); nothing was changed, run the command again');
    }
    await fs.writeFile(backup, read.text, { mode: read.mode & 0o777 });
    await fs.rename(tmp, file);
    return { backup };
  } catch (caught) {
    await fs.rm(tmp, { force: true }).catch(() => {});
    if (caught instanceof ConfigError) throw caught;
    const e = /** @type {NodeJS.ErrnoException} */ (caught);
    throw new ConfigError('write_failed', file, `could not be written (${e.code || e.message}); the file was left as it was`);
  }
}
