// Background, batched delivery of records to `POST /api/interactions` (SPEC §3, §5).
//
// Nothing here is on the relay path: `addLines` only pushes to an array, bounded by
// MAX_QUEUE (past it the oldest records spill to the spool). A timer sends batches of up to
// BATCH_MAX records, one request at a time, each with REQUEST_TIMEOUT_MS. The API takes a
// batch record by record: the ones it refuses (named by index) would be refused forever, so
// they are dropped and counted, and the rest are delivered; one bad record never costs the
// others. When the API is unreachable, slow, throttled (429) or failing (5xx), the batch goes
// to the spool and the API is left alone for BACKOFF_MS (later batches spool directly).
// After a batch succeeds the spool is drained in the same way. `shutdown` gives pending work
// at most `budgetMs` (the proxy gives 100 ms) and spools whatever is left.

import { spoolRecords, claimNext, MAX_RECORDS_PER_FILE } from './spool.js';
import { DEFAULTS } from '../contract.js';

/** Records per request. */
export const BATCH_MAX = 100;
/** Records held in memory at most; past this the oldest go to the spool. */
export const MAX_QUEUE = 10_000;
/** Delay that gathers records into one batch. */
export const BATCH_DELAY_MS = 100;
/** Per-request timeout. */
export const REQUEST_TIMEOUT_MS = 2000;
/** After a failed delivery, how long records go straight to the spool. */
export const BACKOFF_MS = 30_000;
/**
 * Records bound for the spool are gathered in memory for up to this long (or until a file's
 * worth), so a long session with the API down fills few, full spool files rather than
 * many small ones. A proxy killed with SIGKILL loses at most this window.
 */
export const SPOOL_GATHER_MS = 5000;

/** Sends records in the background; spools what cannot be sent. */
export class Sender {
  /**
   * @param {{apiUrl: string, home: string, nodeId: string, version: string, debug: (m: string) => void}} opts
   */
  constructor({ apiUrl, home, nodeId, version, debug }) {
    this.url = new URL('/api/interactions', apiUrl.endsWith('/') ? apiUrl : apiUrl + '/').href;
    this.home = home;
    this.headers = { 'content-type': 'application/json', [DEFAULTS.NODE_ID_HEADER]: nodeId, 'user-agent': `lowdown-proxy/${version}` };
    this.debug = debug;
    this.queue = [];
    this.timer = null;
    this.inflight = null; // {promise, controller, records}
    this.downUntil = 0;
    this.closed = false;
    this.stats = { sent: 0, spooled: 0, rejected: 0, duplicates: 0 };
    this.toSpool = [];
    this.spoolTimer = null;
  }

  /**
   * Queues records given as JSON lines (the core's Recorder output; one record per line),
   * sent as they are, never parsed. Never blocks.
   * @param {string} lines
   */
  addLines(lines) {
    const records = lines.split('\n');
    if (this.closed) {
      this.#spool(records);
      return;
    }
    for (const r of records) this.queue.push(r);
    if (this.queue.length > MAX_QUEUE) this.#spool(this.queue.splice(0, this.queue.length - MAX_QUEUE));
    this.#schedule(this.queue.length >= BATCH_MAX ? 0 : BATCH_DELAY_MS);
  }

  /** Starts delivering records a previous run left in the spool (in the background). */
  drainSpoolSoon() {
    this.#schedule(0, true);
  }

  #schedule(delay, spoolToo = false) {
    if (spoolToo) this.wantSpool = true;
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.#pump();
    }, delay);
    this.timer.unref();
  }

  async #pump() {
    if (this.inflight || this.closed) return;
    if (this.queue.length > 0) {
      const batch = this.queue.splice(0, BATCH_MAX);
      if (Date.now() < this.downUntil) this.#spool(batch);
      else if (await this.#post(batch)) this.wantSpool = true;
    } else if (this.wantSpool && Date.now() >= this.downUntil) {
      const claim = claimNext(this.home);
      if (!claim) this.wantSpool = false;
      else {
        const ok = await this.#post(claim.records, true);
        if (ok) claim.done();
        else claim.release();
      }
    }
    if (!this.closed && (this.queue.length > 0 || (this.wantSpool && Date.now() >= this.downUntil))) this.#schedule(this.queue.length >= BATCH_MAX ? 0 : BATCH_DELAY_MS);
  }

  /** Posts one batch (JSON texts of records). Returns true when the API took it; on failure spools it unless `fromSpool`. */
  async #post(records, fromSpool = false, timeoutMs = REQUEST_TIMEOUT_MS) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    const promise = (async () => {
      try {
        const res = await fetch(this.url, { method: 'POST', headers: this.headers, body: `[${records.join(',')}]`, signal: controller.signal });
        const answer = await res.json().catch(() => null);
        if (res.ok) return { refused: answer?.rejected?.length ?? 0, duplicates: answer?.duplicates ?? 0 };
        if (res.status === 429 || res.status >= 500) return `status ${res.status}`;
        return 'rejected';
      } catch (err) {
        return err.name === 'AbortError' ? 'timeout' : `unreachable (${err.cause?.code ?? err.message})`;
      } finally {
        clearTimeout(timer);
      }
    })();
    this.inflight = { promise, controller, records, fromSpool };
    const result = await promise;
    this.inflight = null;
    if (typeof result === 'object') {
      // Taken record by record: the refused ones would be refused forever, so they go.
      this.stats.sent += records.length - result.refused;
      this.stats.rejected += result.refused;
      this.stats.duplicates += result.duplicates;
      this.debug(`sent ${records.length - result.refused} record(s)${result.refused ? `, ${result.refused} refused by the API and dropped` : ''}`);
      return true;
    }
    if (result === 'rejected') {
      // The API refused every record of the batch as invalid: resending would fail forever.
      this.stats.rejected += records.length;
      this.debug(`API rejected ${records.length} record(s); dropped`);
      return true;
    }
    this.debug(`API ${result}: ${fromSpool ? 'left in' : 'moved to'} the spool, ${records.length} record(s)`);
    this.downUntil = Date.now() + BACKOFF_MS;
    if (!fromSpool) this.#spool(records);
    return false;
  }

  #spool(records) {
    this.toSpool.push(...records);
    if (this.toSpool.length >= MAX_RECORDS_PER_FILE || this.closed) this.#writeSpool();
    else if (!this.spoolTimer) {
      this.spoolTimer = setTimeout(() => this.#writeSpool(), SPOOL_GATHER_MS);
      this.spoolTimer.unref();
    }
  }

  #writeSpool() {
    if (this.spoolTimer) clearTimeout(this.spoolTimer);
    this.spoolTimer = null;
    const records = this.toSpool;
    this.toSpool = [];
    if (records.length === 0) return;
    try {
      this.stats.spooled += spoolRecords(this.home, records);
    } catch (err) {
      this.debug(`cannot spool ${records.length} record(s): ${err.message}`);
    }
  }

  /**
   * Stops, giving in-flight and queued records at most `budgetMs`; spools the rest.
   * @param {number} budgetMs
   */
  async shutdown(budgetMs = 1000) {
    const deadline = Date.now() + budgetMs;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.closed = true;
    if (this.inflight) {
      const inflight = this.inflight;
      const left = Math.max(0, deadline - Date.now());
      const t = setTimeout(() => inflight.controller.abort(), left);
      await inflight.promise;
      clearTimeout(t);
      while (this.inflight) await new Promise((r) => setImmediate(r));
    }
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, BATCH_MAX);
      const left = deadline - Date.now();
      if (left < 50 || Date.now() < this.downUntil) this.#spool(batch);
      else await this.#post(batch, false, left);
    }
    this.#writeSpool();
  }
}
