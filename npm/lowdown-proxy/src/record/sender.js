// Background, batched delivery of records to `POST /api/interactions` (SPEC §3, §5).
//
// Nothing here is on the relay path: `addLines` only pushes to an array, bounded by
// MAX_QUEUE (past it the oldest records spill to the spool). A timer sends batches of up to
// BATCH_MAX records, one request at a time, each with REQUEST_TIMEOUT_MS. What an answer
// means is the core's decision (`delivery`, shared with prowl): records refused as invalid
// would be refused forever, so they are dropped and counted; records the API did not take
// (unreachable, slow, over a quota, 429, 5xx, any other status such as a mistyped URL's 404)
// go to the spool, and the API is left alone for the pause the answer asks (Retry-After) or
// the core's backoff; later batches spool directly meanwhile. After a batch succeeds the
// spool is drained in the same way. When the API is unreachable and the sender was given a
// way to start one (the local node, SPEC §2), it starts it once and delivers there as soon
// as it answers. `shutdown` gives pending work at most `budgetMs` (the proxy gives the
// core's DELIVERY.EXIT_BUDGET_MS) and spools whatever is left.

import { spoolRecords, claimNext, MAX_RECORDS_PER_FILE } from './spool.js';
import { DEFAULTS, DELIVERY } from '../contract.js';
import { delivery } from '../core.js';
import { ANSWER_MAX_BYTES, readBounded } from '../read.js';

/** Records per request. */
export const BATCH_MAX = DELIVERY.BATCH_MAX;
/** Records held in memory at most; past this the oldest go to the spool. */
export const MAX_QUEUE = 10_000;
/** Delay that gathers records into one batch. */
export const BATCH_DELAY_MS = 100;
/** Per-request timeout. */
export const REQUEST_TIMEOUT_MS = DELIVERY.SEND_TIMEOUT_MS;
// A longer answer than ANSWER_MAX_BYTES is no answer: the batch is kept.
export { ANSWER_MAX_BYTES };
/**
 * Records bound for the spool are gathered in memory for up to this long (or until a file's
 * worth), so a long session with the API down fills few, full spool files rather than
 * many small ones. A proxy killed with SIGKILL loses at most this window.
 */
export const SPOOL_GATHER_MS = 5000;

/** @param {string} apiUrl @returns {string} the records' endpoint under `apiUrl` */
// Relative, so a deployment under a path (`https://team.example/lowdown`) keeps it, as prowl does.
const interactionsUrl = (apiUrl) => new URL('api/interactions', apiUrl.endsWith('/') ? apiUrl : apiUrl + '/').href;

/** Sends records in the background; spools what cannot be sent. */
export class Sender {
  /**
   * @param {{apiUrl: string|null, home: string, nodeId: string|null, version: string, debug: (m: string) => void,
   *   startApi?: (() => Promise<string>) | null}} opts `startApi`: starts an API when
   *   none answers, resolving to its URL (called once at most)
   */
  constructor({ apiUrl, home, nodeId, version, debug, startApi = null }) {
    /** @type {string|null} null: no usable API URL, every record is kept in the spool */
    this.url = apiUrl === null ? null : interactionsUrl(apiUrl);
    this.startApi = startApi;
    this.home = home;
    /** @type {Record<string, string>} */
    this.headers = { 'content-type': 'application/json', 'user-agent': `lowdown-proxy/${version}` };
    // Without a node id (node.json unwritable) the header is left out, as prowl leaves it out.
    if (nodeId) this.headers[DEFAULTS.NODE_ID_HEADER] = nodeId;
    this.debug = debug;
    /** @type {string[]} records waiting to be sent, as JSON texts */
    this.queue = [];
    this.timer = null;
    this.inflight = null; // {promise, controller, records}
    this.downUntil = 0;
    this.closed = false;
    this.stats = { sent: 0, spooled: 0, rejected: 0, duplicates: 0, limited: 0 };
    /** @type {string[]} records gathered for the spool */
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

  /**
   * @param {number} delay
   * @param {boolean} [spoolToo]
   */
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
      else if ((await this.#post(batch)).length === 0) this.wantSpool = true;
    } else if (this.wantSpool && Date.now() >= this.downUntil) {
      const claim = claimNext(this.home);
      if (!claim) this.wantSpool = false;
      else {
        const kept = await this.#post(claim.records, true);
        if (kept.length === claim.records.length) claim.release();
        else {
          // What was taken is gone from the file; what was kept goes back as a file of its own.
          claim.done();
          if (kept.length) this.#spool(kept);
        }
      }
    }
    if (!this.closed && (this.queue.length > 0 || (this.wantSpool && Date.now() >= this.downUntil))) this.#schedule(this.queue.length >= BATCH_MAX ? 0 : BATCH_DELAY_MS);
  }

  /**
   * Posts one batch (JSON texts of records) and acts on the core's reading of the answer:
   * counts what was delivered and dropped, and returns the records kept for later, which it
   * spools unless `fromSpool` (the caller puts those back in the spool itself).
   * @param {string[]} records
   * @param {boolean} [fromSpool]
   * @param {number} [timeoutMs]
   * @returns {Promise<string[]>} the records kept
   */
  async #post(records, fromSpool = false, timeoutMs = REQUEST_TIMEOUT_MS) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    const url = this.url;
    const promise = (async () => {
      if (url === null) return { status: null, retryAfter: null, body: null, why: 'no usable API URL' };
      try {
        const res = await fetch(url, { method: 'POST', headers: this.headers, body: `[${records.join(',')}]`, signal: controller.signal });
        const body = await readBounded(res, ANSWER_MAX_BYTES).catch(() => undefined);
        if (body === null) return { status: null, retryAfter: null, body: null, why: `answered more than ${ANSWER_MAX_BYTES} bytes` };
        return { status: res.status, retryAfter: res.headers.get('retry-after'), body: body ?? null };
      } catch (caught) {
        const err = /** @type {Error & {cause?: {code?: string}}} */ (caught); // fetch's rejection
        const why = err.name === 'AbortError' ? 'timeout' : `unreachable (${err.cause?.code ?? err.message})`;
        return { status: null, retryAfter: null, body: null, why };
      } finally {
        clearTimeout(timer);
      }
    })();
    this.inflight = { promise, controller, records, fromSpool };
    const answer = await promise;
    this.inflight = null;
    const d = delivery(records.length, answer.status, answer.retryAfter, answer.body);
    this.stats.sent += d.delivered;
    this.stats.rejected += d.rejected;
    this.stats.duplicates += d.duplicates;
    if (d.delivered || d.rejected) {
      this.debug(`sent ${d.delivered} record(s)${d.rejected ? `, ${d.rejected} refused by the API as invalid and dropped` : ''}`);
    }
    const kept = d.keep.map((/** @type {number} */ i) => records[i]);
    if (answer.why?.startsWith('unreachable') && this.startApi) this.#start(this.startApi);
    if (kept.length) {
      this.stats.limited += d.limited;
      this.debug(`API ${answer.why ?? d.reason}: ${fromSpool ? 'left in' : 'moved to'} the spool, ${kept.length} record(s), next try in ${Math.round(d.pause_ms / 1000)} s`);
      this.downUntil = Date.now() + d.pause_ms;
      if (!fromSpool) this.#spool(kept);
    }
    return kept;
  }

  /**
   * Starts an API in the background; once it answers there, what waits is sent to it.
   * @param {() => Promise<string>} start
   */
  #start(start) {
    this.startApi = null;
    start().then(
      (url) => {
        this.url = interactionsUrl(url);
        this.downUntil = 0;
        this.#schedule(0, true);
      },
      () => {},
    );
  }

  /** @param {string[]} records */
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
      this.debug(`cannot spool ${records.length} record(s): ${/** @type {Error} */ (err).message}`);
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
