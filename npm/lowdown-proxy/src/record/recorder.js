// The relay thread's side of recording. It only queues: the bytes it relayed (with the time
// they arrived) or, in --watch-log mode, the records it already built. Every few
// milliseconds the queue goes to the recording thread (worker.js → pipeline.js), which
// has the core build the records and delivers them. The core is loaded there too, so the
// proxy's start path never waits for it; on the relay's thread its work would be paid between
// two messages, on its own thread it is not.
//
// If the thread cannot start (or dies), the same pipeline runs on the main thread from the
// queue's timer, so recording degrades to slower, never to nothing.

import { createRequire } from 'node:module';

// worker_threads (and the perf_hooks it pulls in) loads at the first bytes, off the start path.
const require = createRequire(import.meta.url);

/** How long work is queued before it is handed to the recording thread. */
export const HANDOFF_MS = 10;
/** Queued bytes that trigger an immediate handoff. */
export const HANDOFF_BYTES = 4 * 1024 * 1024;

/** Queues a session's recording work and hands it to the recording thread. */
export class Recorder {
  /**
   * @param {{ctx: import('./pipeline.js').RecordContext, argv: string[], env: Record<string, string|undefined>, apiUrl: string|null, version: string,
   *   debug: (m: string) => void, debugOn: boolean, unavailable: (why: string) => void, records?: boolean}} opts
   *   `env`: the LOWDOWN_* and OTEL_* variables; `apiUrl`: --api-url, else null (the
   *   environment's); `records` false: OpenTelemetry export only (LOWDOWN_RECORD=0)
   *   `unavailable` is called once if the core cannot load (recording is then off)
   */
  constructor(opts) {
    this.opts = opts;
    this.debug = opts.debug;
    /** @type {Array<['c', 'client_to_server'|'server_to_client', Buffer, number] | ['r', string] | ['end', number, 'client_ended'|'server_ended'] | ['s', string]>} */
    this.items = [];
    this.bytes = 0;
    this.timer = null;
    this.inline = null;
    this.closing = false;
    this.worker = null;
    this.started = false;
    this.fallingBack = false;
  }

  /**
   * Starts the recording thread, at the first bytes: a session that relays nothing (or a
   * command that exits at once) never pays for a thread.
   */
  #start() {
    if (this.started) return;
    this.started = true;
    try {
      const { ctx, argv, env, apiUrl, version, debugOn, records } = this.opts;
      const { Worker } = require('node:worker_threads');
      this.worker = new Worker(new URL('./worker.js', import.meta.url), { workerData: { ctx, argv, env, apiUrl, version, debugOn, records } });
      this.worker.unref();
      this.worker.on('message', (m) => m.type === 'unavailable' && this.#unavailable(m.message));
      this.worker.on('error', (err) => this.#fallback(`recording thread failed: ${err.message}`));
      this.worker.on('exit', (code) => {
        if (!this.closing) this.#fallback(`recording thread exited (${code})`);
      });
    } catch (err) {
      this.worker = null;
      this.#fallback(`recording thread unavailable: ${/** @type {Error} */ (err).message}`);
    }
  }

  /**
   * Records on the main thread instead, once however often the thread fails (its `error`
   * and then its `exit` both come here).
   * @param {string} why
   */
  async #fallback(why) {
    if (this.inline || this.off || this.fallingBack) return;
    this.fallingBack = true;
    this.debug(`${why}; recording on the main thread`);
    this.worker = null;
    try {
      const { RecordPipeline } = await import('./pipeline.js');
      this.inline = new RecordPipeline(this.opts);
    } catch (err) {
      this.#unavailable(/** @type {Error} */ (err).message.split('\n')[0]);
      return;
    }
    this.#flush();
  }

  /** The core did not load: recording is off from here on (said once, by the caller's hook). */
  /** @param {string} why */
  #unavailable(why) {
    if (this.off) return;
    this.off = true;
    this.closing = true;
    this.items = [];
    this.worker?.terminate();
    this.worker = null;
    this.opts.unavailable?.(why);
  }

  /**
   * Queues relayed bytes for classification on the recording thread.
   * @param {'client_to_server'|'server_to_client'} direction
   * @param {Buffer} bytes not modified afterwards (the relay never reuses its chunks)
   * @param {number} nowMs when they arrived
   */
  bytesIn(direction, bytes, nowMs) {
    if (this.off) return;
    this.#start();
    this.items.push(['c', direction, bytes, nowMs]);
    this.bytes += bytes.length;
    this.#schedule();
  }

  /**
   * Queues records the relay thread built itself (--watch-log mode).
   * @param {string} lines their JSON lines (`Recorder.feed`), sent unparsed
   */
  addRecords(lines) {
    if (this.off) return;
    this.#start();
    this.items.push(['r', lines]);
    this.#schedule();
  }

  /**
   * Queues OpenTelemetry spans the relay thread built itself (--watch-log mode).
   * @param {string} lines their JSON lines (`Recorder.takeSpans`), sent unparsed
   */
  addSpans(lines) {
    if (this.off) return;
    this.#start();
    this.items.push(['s', lines]);
    this.#schedule();
  }

  /**
   * The session ended at `nowMs`: requests still pending are recorded, as cancelled when the
   * client ended it, as server failures when the server did.
   * @param {number} nowMs
   * @param {'client_ended'|'server_ended'} reason
   */
  end(nowMs, reason) {
    if (this.off) return;
    this.items.push(['end', nowMs, reason]);
    this.#schedule();
  }

  #schedule() {
    if (this.bytes >= HANDOFF_BYTES) this.#flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.#flush(), HANDOFF_MS);
      this.timer.unref();
    }
  }

  #flush() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.items.length === 0) return;
    if (!this.worker && !this.inline) return; // the fallback pipeline is loading: keep them
    const items = this.items;
    this.items = [];
    const total = this.bytes;
    this.bytes = 0;
    if (!this.worker) {
      this.inline?.apply(items); // not null here: one of the two exists (checked above)
      return;
    }
    // One copy of all queued bytes into a buffer of its own, moved (not copied again) to
    // the recording thread; each item then names its range.
    const all = Buffer.allocUnsafeSlow(total);
    let at = 0;
    for (const item of items) {
      if (item[0] !== 'c') continue;
      const chunk = item[2];
      chunk.copy(all, at);
      /** @type {unknown[]} */ (item)[2] = [at, at + chunk.length]; // as the thread reads it: a range of `all`
      at += chunk.length;
    }
    this.worker.postMessage({ type: 'items', items, bytes: all }, [all.buffer]);
  }

  /**
   * Delivers what is pending within `budgetMs` and spools the rest.
   * @param {number} budgetMs
   */
  async shutdown(budgetMs) {
    if (this.off) return;
    this.closing = true;
    if (!this.started) {
      // Nothing was relayed, so nothing to record and no thread to wait for. A spool left
      // by an earlier run stays for the next session.
      return;
    }
    const deadline = Date.now() + budgetMs;
    while (!this.worker && !this.inline && !this.off && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    this.#flush();
    if (this.inline) {
      await this.inline.shutdown(Math.max(0, deadline - Date.now()));
      return;
    }
    if (!this.worker) return;
    const worker = this.worker;
    const done = new Promise((resolve) => {
      worker.on('message', (m) => m.type === 'done' && resolve(true));
      worker.once('exit', () => resolve(false));
    });
    worker.postMessage({ type: 'shutdown', budgetMs });
    let timer;
    // The thread's sender keeps to the budget itself; the margin covers classifying what
    // was still queued and writing the spool.
    const late = new Promise((resolve) => (timer = setTimeout(() => resolve(false), budgetMs + 500)));
    const finished = await Promise.race([done, late]);
    clearTimeout(timer);
    if (!finished) this.debug('recording thread did not finish in time');
    await worker.terminate();
  }
}
