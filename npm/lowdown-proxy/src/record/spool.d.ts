// TEMPORARY (issue 22): spool.js is being rewritten on the `plans` branch, which owns it, and
// does not pass tsc's noImplicitAny yet. tsc reads this declaration in its place (a `.d.ts`
// beside a `.js` wins the import), so spool.js itself is not checked; the proxy's tsconfig
// excludes it too. Delete this file once spool.js carries its own JSDoc types.

/** Most spool files kept, most records per file, age after which a claim is stale (ms). */
export const MAX_FILES: number;
export const MAX_RECORDS_PER_FILE: number;
export const STALE_CLAIM_MS: number;
/** The spool directory of a state dir. */
export function spoolDir(home: string): string;
/** Writes records (JSON texts) to the spool synchronously; returns how many were written. */
export function spoolRecords(home: string, records: string[]): number;
/** Claims the oldest spool file: its records, and `done` (delete) or `release` (give back). */
export function claimNext(home: string): { records: string[]; done: () => void; release: () => void } | null;
