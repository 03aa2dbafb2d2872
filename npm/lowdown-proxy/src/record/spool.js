// The spool for records the API could not take (SPEC §3). Its format, names, bounds and
// claims, and the plans for writing and claiming (which file, what an empty, corrupt, stale or
// raced file means), are the core's (lowdown-core `record::spool`, shared with prowl); this
// file runs them under `<home>/spool/` (./files.js does the IO). Whichever host starts next
// drains it.

import path from 'node:path';
import crypto from 'node:crypto';
import { SpoolClaim, SpoolWrite } from '../core.js';
import { FILES } from '../contract.js';
import { run } from './files.js';

/** Most spool files kept, most records per file, age after which a claim is stale (ms). */
export const { SPOOL_MAX_FILES: MAX_FILES, SPOOL_MAX_RECORDS_PER_FILE: MAX_RECORDS_PER_FILE, SPOOL_STALE_CLAIM_MS: STALE_CLAIM_MS } = FILES;

// The last sequence number this process put in a file name (orders files of one millisecond).
let seq = 0;

/**
 * The spool directory of a state dir.
 * @param {string} home
 */
export function spoolDir(home) {
  return path.join(home, FILES.SPOOL_DIR);
}

/**
 * Writes records (JSON texts) to the spool synchronously (it runs at exit too), then trims
 * the spool to its bound; throws the IO error when a file cannot be written.
 * @param {string} home
 * @param {string[]} records
 * @returns {number} records written
 */
export function spoolRecords(home, records) {
  const plan = new SpoolWrite(records, seq, process.pid, Date.now(), new Date().toISOString(), crypto.randomBytes(4).toString('hex'));
  seq = plan.seq();
  const { step, error } = run(spoolDir(home), plan);
  if (step.step === 'failed') throw error ?? new Error('cannot spool');
  return records.length;
}

/**
 * Claims the next spool file for delivery, if any: its records, `done` (they were taken:
 * the file goes) and `release` (they were not: it is put back).
 * @param {string} home
 * @returns {{records: string[], done: () => void, release: () => void} | null}
 */
export function claimNext(home) {
  const dir = spoolDir(home);
  const plan = new SpoolClaim(process.pid, Date.now());
  const { step } = run(dir, plan);
  if (step.step !== 'deliver') return null;
  return {
    records: step.records,
    done: () => void run(dir, plan, plan.finish(true)),
    release: () => void run(dir, plan, plan.finish(false)),
  };
}
