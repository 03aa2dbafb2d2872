// The bounded on-disk spool for records the API could not take (SPEC §3).
//
// Layout: `<home>/spool/<ms>-<seq>-<pid>-<rand>.jsonl` (names sort oldest first), one record per line, mode 0600, one file
// per failed batch (at most MAX_RECORDS_PER_FILE records). Bound: MAX_FILES files, so at most
// MAX_FILES × MAX_RECORDS_PER_FILE records (50,000; a record is ~400 bytes, so ~20 MB).
// Past the bound the oldest files are deleted and their record count is added to
// `<home>/spool/dropped.json` ({"dropped_records": N, "last_dropped_at": ISO}).
//
// A run delivering spooled records first claims a file by renaming it to `*.sending`
// (atomic, so two proxies never send the same file at once); a claim left by a crashed run
// is taken over after STALE_CLAIM_MS. Records carry a `record_id`, so a batch that reached
// the server before the failure was noticed is still counted once.

import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';

/** Most spool files kept. */
export const MAX_FILES = 100;
/** Most records per spool file. */
export const MAX_RECORDS_PER_FILE = 500;
/** Age after which another run's unfinished claim is taken over. */
export const STALE_CLAIM_MS = 60_000;

// Orders files written in the same millisecond by this process.
let seq = 0;

/** The spool directory of a state dir. */
export function spoolDir(home) {
  return path.join(home, 'spool');
}

/**
 * Writes records (JSON texts, one per line) to the spool synchronously (it runs at exit
 * too), trimming to the bound.
 * @param {string} home
 * @param {string[]} records
 * @returns {number} records written
 */
export function spoolRecords(home, records) {
  if (records.length === 0) return 0;
  const dir = spoolDir(home);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (let i = 0; i < records.length; i += MAX_RECORDS_PER_FILE) {
    const part = records.slice(i, i + MAX_RECORDS_PER_FILE);
    seq += 1;
    const name = `${String(Date.now()).padStart(15, '0')}-${String(seq).padStart(8, '0')}-${process.pid}-${crypto.randomBytes(3).toString('hex')}.jsonl`;
    const tmp = path.join(dir, `.${name}.tmp`);
    fs.writeFileSync(tmp, part.join('\n') + '\n', { mode: 0o600 });
    fs.renameSync(tmp, path.join(dir, name));
  }
  enforceBound(dir);
  return records.length;
}

/** Deletes the oldest spool files past MAX_FILES, counting their records in dropped.json. */
function enforceBound(dir) {
  const files = listSpool(dir, true);
  if (files.length <= MAX_FILES) return;
  let dropped = 0;
  for (const f of files.slice(0, files.length - MAX_FILES)) {
    const full = path.join(dir, f);
    try {
      dropped += countLines(fs.readFileSync(full, 'utf8'));
      fs.unlinkSync(full);
    } catch {
      // taken by another run meanwhile
    }
  }
  if (dropped > 0) {
    const file = path.join(dir, 'dropped.json');
    let prev = 0;
    try {
      prev = Number(JSON.parse(fs.readFileSync(file, 'utf8')).dropped_records) || 0;
    } catch {
      prev = 0;
    }
    fs.writeFileSync(file, JSON.stringify({ dropped_records: prev + dropped, last_dropped_at: new Date().toISOString() }) + '\n', { mode: 0o600 });
  }
}

function countLines(text) {
  return text.split('\n').filter((l) => l.trim() !== '').length;
}

/** Spool files oldest first (names start with a millisecond timestamp). */
function listSpool(dir, includeClaims = false) {
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => n.endsWith('.jsonl') || (includeClaims && n.endsWith('.sending'))).sort();
}

/**
 * Claims the next spool file for delivery, if any.
 * @param {string} home
 * @returns {{records: string[], done: () => void, release: () => void} | null} records as JSON texts
 *   `done` deletes the claimed file, `release` puts it back
 */
export function claimNext(home) {
  const dir = spoolDir(home);
  const now = Date.now();
  for (const name of listSpool(dir, true)) {
    const full = path.join(dir, name);
    if (name.endsWith('.sending')) {
      try {
        if (now - fs.statSync(full).mtimeMs < STALE_CLAIM_MS) continue;
      } catch {
        continue;
      }
    }
    const base = name.replace(/\.sending$/, '');
    const claimed = path.join(dir, `${base}.${process.pid}.sending`);
    try {
      fs.renameSync(full, claimed);
      fs.utimesSync(claimed, new Date(), new Date());
    } catch {
      continue;
    }
    let records;
    try {
      records = fs
        .readFileSync(claimed, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '');
      // A file that does not parse whole is corrupt: nothing in it is delivered.
      for (const l of records) JSON.parse(l);
    } catch {
      fs.rmSync(claimed, { force: true }); // corrupt: nothing deliverable in it
      continue;
    }
    const original = path.join(dir, base.replace(/\.\d+$/, '').replace(/\.jsonl.*$/, '.jsonl'));
    return {
      records,
      done: () => fs.rmSync(claimed, { force: true }),
      release: () => {
        try {
          fs.renameSync(claimed, original);
        } catch {
          // gone already
        }
      },
    };
  }
  return null;
}
