// The host side of `--watch-log` (SPEC §3.4): reads what was appended to the watched files
// and hands the bytes to the core's LogDiff, which decides what is new, what matches, what
// is redacted and how the quoted block reads. This file only does IO: stat, read, time.
//
// Files are read synchronously when a `tools/call` result is about to be relayed, so a line
// written just before the tool answered is in that answer. At most READ_CAP bytes are read
// per file per result; a burst larger than that is picked up by the following results.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LogDiff, appendTextItem, expandPath } from '../core.js';

/** Most bytes read from one file per result. */
export const READ_CAP = 16 * 1024 * 1024;

/**
 * `HH:MM:SS` in local time.
 * @param {number} ms
 */
function hhmmss(ms) {
  const d = new Date(ms);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/**
 * The environment as the binding takes it: string values only.
 * @param {Record<string, string|undefined>} env
 */
function stringEnv(env) {
  return Object.fromEntries(Object.entries(env).filter(([, v]) => typeof v === 'string'));
}

/** @param {string} p */
function statOrNull(p) {
  try {
    const st = fs.statSync(p, { throwIfNoEntry: false });
    return st?.isFile() ? st : null;
  } catch {
    return null;
  }
}

/** Watches the `--watch-log` files and appends their news to tool results. */
export class LogWatcher {
  /**
   * @param {{files: string[], pattern?: string, env: Record<string, string|undefined>, debug: (m: string) => void, now?: () => number}} p
   * @throws {Error} with `code: "invalid_pattern"` for a bad `--log-pattern`
   */
  constructor({ files, pattern, env, debug, now = Date.now }) {
    this.diff = new LogDiff(pattern === undefined ? null : JSON.stringify({ pattern }));
    this.debug = debug;
    this.now = now;
    this.identity = new Map();
    /** Each path's read offset as last seen in the LogDiff (absent: ask it). */
    this.offsets = new Map();
    /** False while the LogDiff is known to hold no matching lines (nothing fed since it said so). */
    this.mayHavePending = false;
    this.paths = [];
    for (const f of files) {
      const p = path.resolve(expandPath(f, stringEnv(env), os.homedir()));
      const st = statOrNull(p);
      this.diff.watch(p, st ? st.size : null);
      this.identity.set(p, st ? `${st.dev}:${st.ino}` : null);
      this.paths.push(p);
    }
    this.sinceMs = now();
  }

  /** Reads every watched file's new bytes into the LogDiff. */
  poll() {
    for (const p of this.paths) {
      const st = statOrNull(p);
      if (!st) {
        // Gone (rotated away or deleted): when a file appears here again, read it from 0.
        if (this.identity.get(p) !== null) this.#restart(p);
        this.identity.set(p, null);
        continue;
      }
      const id = `${st.dev}:${st.ino}`;
      const prev = this.identity.get(p);
      if (prev && prev !== id) this.#restart(p);
      this.identity.set(p, id);
      if (this.#read(p, st.size) === 'restarted') this.#read(p, st.size);
    }
  }

  /** @param {string} p */
  #restart(p) {
    this.diff.restart(p);
    this.offsets.delete(p);
  }

  /**
   * @param {string} p
   * @param {number} size
   */
  #read(p, size) {
    let offset = this.offsets.get(p);
    if (offset === undefined) offset = Number(this.diff.offset(p));
    // Nothing appended (the usual case for a result): no read and no call into the core.
    if (size === offset) return 'read';
    const len = Math.min(Math.max(0, size - offset), READ_CAP);
    let bytes = Buffer.alloc(0);
    if (len > 0) {
      const fd = fs.openSync(p, 'r');
      try {
        bytes = Buffer.allocUnsafe(len);
        const n = fs.readSync(fd, bytes, 0, len, offset);
        bytes = bytes.subarray(0, n);
      } finally {
        fs.closeSync(fd);
      }
    }
    const outcome = this.diff.feed(p, Math.min(size, offset + bytes.length), bytes);
    this.offsets.set(p, Number(this.diff.offset(p)));
    this.mayHavePending = true;
    return outcome;
  }

  /**
   * The `tools/call` result `line` (with its line ending) with the log block appended, or
   * null to relay it unchanged (nothing new, or it cannot carry the item: lines stay pending).
   * @param {Buffer} line
   * @returns {Buffer | null}
   */
  appendTo(line) {
    this.poll();
    if (!this.mayHavePending || !this.diff.hasPending()) {
      this.mayHavePending = false;
      this.sinceMs = this.now();
      return null;
    }
    let end = line.length;
    if (end > 0 && line[end - 1] === 0x0a) end -= 1;
    if (end > 0 && line[end - 1] === 0x0d) end -= 1;
    const message = line.subarray(0, end);
    const block = this.diff.takeBlock(hhmmss(this.sinceMs));
    this.mayHavePending = false;
    if (block === null || block === undefined) return null;
    const rewritten = appendTextItem(message, block);
    if (!rewritten) {
      this.debug('watch-log: result could not carry the log block');
      return null;
    }
    this.sinceMs = this.now();
    return Buffer.concat([rewritten, line.subarray(end)]);
  }
}
