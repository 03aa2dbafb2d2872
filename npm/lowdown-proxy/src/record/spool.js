// The spool for records the API could not take (SPEC §3): its format, names, bounds and
// claims are the core's (lowdown-core `record::spool`, shared with prowl); this file only
// does the IO: write, rename, read and delete under `<home>/spool/`. Whichever host starts
// next drains it.

import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { spool } from '../core.js';
import { FILES } from '../contract.js';

/** Most spool files kept, most records per file, age after which a claim is stale (ms). */
export const { max_files: MAX_FILES, max_records_per_file: MAX_RECORDS_PER_FILE, stale_claim_ms: STALE_CLAIM_MS } = spool.limits();

// Orders files written in the same millisecond by this process.
let seq = 0;

/** The spool directory of a state dir. */
export function spoolDir(home) {
  return path.join(home, FILES.SPOOL_DIR);
}

/**
 * Writes records (JSON texts) to the spool synchronously (it runs at exit too), at most
 * MAX_RECORDS_PER_FILE a file, then trims the spool to its bound.
 * @param {string} home
 * @param {string[]} records
 * @returns {number} records written
 */
export function spoolRecords(home, records) {
  if (records.length === 0) return 0;
  const dir = spoolDir(home);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (let i = 0; i < records.length; i += MAX_RECORDS_PER_FILE) {
    seq += 1;
    const name = spool.fileName(Date.now(), seq, process.pid, crypto.randomBytes(4).toString('hex'));
    const tmp = path.join(dir, `.${name}.tmp`);
    fs.writeFileSync(tmp, spool.encode(records.slice(i, i + MAX_RECORDS_PER_FILE).join('\n')), { mode: 0o600 });
    fs.renameSync(tmp, path.join(dir, name));
  }
  enforceBound(dir);
  return records.length;
}

/** Deletes the spool files past the bound (oldest first), counting their records in dropped.json. */
function enforceBound(dir) {
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  let dropped = 0;
  for (const name of spool.overBound(names)) {
    const full = path.join(dir, name);
    try {
      dropped += spool.decode(fs.readFileSync(full, 'utf8')).records.length;
      fs.unlinkSync(full);
    } catch {
      // taken by another host meanwhile
    }
  }
  if (dropped > 0) {
    const file = path.join(dir, FILES.DROPPED_FILE);
    let previous = null;
    try {
      previous = fs.readFileSync(file, 'utf8');
    } catch {
      previous = null;
    }
    fs.writeFileSync(file, spool.dropped(previous, dropped, new Date().toISOString()), { mode: 0o600 });
  }
}

/**
 * Claims the oldest spool file for delivery, if any: its records, `done` (deletes it) and
 * `release` (puts it back). Lines that are not records are left out (and gone with `done`).
 * @param {string} home
 * @returns {{records: string[], done: () => void, release: () => void} | null}
 */
export function claimNext(home) {
  const dir = spoolDir(home);
  let names;
  try {
    names = fs.readdirSync(dir).sort();
  } catch {
    return null;
  }
  const now = Date.now();
  for (const name of names) {
    const what = spool.entry(name);
    if (what.kind === 'other') continue;
    const full = path.join(dir, name);
    if (what.kind === 'claimed') {
      try {
        if (now - fs.statSync(full).mtimeMs < STALE_CLAIM_MS) continue;
      } catch {
        continue;
      }
    }
    const original = what.kind === 'claimed' ? what.original : name;
    const claimed = path.join(dir, spool.claimName(original, process.pid));
    try {
      fs.renameSync(full, claimed);
      fs.utimesSync(claimed, new Date(), new Date());
    } catch {
      continue; // another host took it first
    }
    let records;
    try {
      records = spool.decode(fs.readFileSync(claimed, 'utf8')).records;
    } catch {
      records = [];
    }
    if (records.length === 0) {
      fs.rmSync(claimed, { force: true }); // nothing deliverable in it
      continue;
    }
    return {
      records,
      done: () => fs.rmSync(claimed, { force: true }),
      release: () => {
        try {
          fs.renameSync(claimed, path.join(dir, original));
        } catch {
          // gone already
        }
      },
    };
  }
  return null;
}
