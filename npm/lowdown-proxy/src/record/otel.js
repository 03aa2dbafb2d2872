// OpenTelemetry export (issue 27, README "OpenTelemetry"): the IO of the core's
// `otel_export`. The core decides whether export is on and where it goes (`otelConfig`),
// builds each exchange's span (`Recorder.takeSpans`), holds the bounded queue and the
// histogram, says when a batch is due and what an answer means (`OtelExporter`); this file
// only posts the bodies it is handed and reports the status back.
//
// It runs where records are built (the recording thread, or the main thread when that thread
// is unavailable), never on the relay path: nothing here is awaited by the relay. One request
// per signal at a time, each bounded by the configured timeout; a collector that is down,
// refuses or hangs costs a dropped count, and the proxy writes nothing about it on stderr
// (LOWDOWN_DEBUG=1 shows it). At the end of the session, everything queued goes in one last
// request per signal, within the exit budget the records' delivery has (`shutdown`).

import crypto from 'node:crypto';
import { OtelExporter, otelConfig } from '../core.js';

/** @typedef {{url: string, protocol: string, headers: [string, string][], timeout_ms: number}} SignalConfig */

/** The two signals, in the order they are asked for. */
const SIGNALS = /** @type {const} */ (['traces', 'metrics']);

/**
 * The session's exporter when the environment turns export on, else null (said with
 * LOWDOWN_DEBUG=1 when LOWDOWN_OTEL was set but the core said no).
 * @param {Record<string, string|undefined>} env the LOWDOWN_* and OTEL_* variables
 * @param {string} version
 * @param {(m: string) => void} debug
 */
export function startOtel(env, version, debug) {
  if (!env.LOWDOWN_OTEL) return null;
  const decision = otelConfig(env);
  if (decision.export !== 'on') {
    debug(`OpenTelemetry export off: ${decision.reason}`);
    return null;
  }
  return new OtelExport({ env, decision, version, debug });
}

/** Posts what the core's OtelExporter hands out. */
export class OtelExport {
  /**
   * @param {{env: Record<string, string|undefined>, decision: {traces: SignalConfig|null, metrics: SignalConfig|null},
   *   version: string, debug: (m: string) => void, now?: () => number}} opts
   */
  constructor({ env, decision, version, debug, now = Date.now }) {
    this.now = now;
    this.debug = debug;
    const strings = Object.fromEntries(Object.entries(env).filter(([, v]) => typeof v === 'string'));
    this.core = new OtelExporter(JSON.stringify(strings), version, crypto.randomBytes(16), now());
    /** @type {Record<'traces'|'metrics', SignalConfig|null>} */
    this.signals = { traces: decision.traces, metrics: decision.metrics };
    /** @type {Set<{controller: AbortController, promise: Promise<void>}>} requests in flight */
    this.pending = new Set();
    /** @type {NodeJS.Timeout|null} */
    this.timer = null;
    this.timerAt = Infinity;
    this.closed = false;
    for (const s of SIGNALS) if (this.signals[s]) debug(`OpenTelemetry ${s} to ${this.signals[s]?.url} (${this.signals[s]?.protocol})`);
  }

  /**
   * Takes the spans of finished exchanges (JSON lines from the core's Recorder). Never blocks.
   * @param {string} lines
   */
  add(lines) {
    this.core.add(lines, this.now());
    this.#schedule();
  }

  /** Sets the timer for the next batch the core says is due. */
  #schedule() {
    if (this.closed) return;
    const now = this.now();
    const due = this.core.nextDueMs(now);
    if (due < 0 || now + due >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = now + due;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      this.#pump(false, 0);
    }, due);
    this.timer.unref();
  }

  /**
   * Posts every batch that is due.
   * @param {boolean} closing the session ended: everything goes
   * @param {number} capMs when closing, the time left in the exit budget
   */
  #pump(closing, capMs) {
    for (const signal of SIGNALS) {
      const cfg = this.signals[signal];
      if (!cfg) continue;
      const body = this.core.batch(signal, this.now(), closing);
      if (body) this.#post(signal, cfg, body, closing ? Math.min(capMs, cfg.timeout_ms) : cfg.timeout_ms);
    }
    this.#schedule();
  }

  /**
   * One request; its answer (or none) goes back to the core.
   * @param {'traces'|'metrics'} signal
   * @param {SignalConfig} cfg
   * @param {Uint8Array} body
   * @param {number} timeoutMs
   */
  #post(signal, cfg, body, timeoutMs) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    timer.unref();
    /** @type {{controller: AbortController, promise: Promise<void>}} */
    const entry = { controller, promise: Promise.resolve() };
    entry.promise = (async () => {
      /** @type {number|null} */
      let status = null;
      let why = '';
      try {
        const res = await fetch(cfg.url, { method: 'POST', headers: cfg.headers, body, signal: controller.signal });
        status = res.status;
        // The answer (a partial success at most) changes nothing: not read.
        await res.body?.cancel().catch(() => {});
      } catch (caught) {
        const err = /** @type {Error & {cause?: {code?: string}}} */ (caught);
        why = err.name === 'AbortError' ? 'timeout' : (err.cause?.code ?? err.message);
      } finally {
        clearTimeout(timer);
      }
      this.core.done(signal, status, this.now());
      this.pending.delete(entry);
      if (status === null || status < 200 || status >= 300) this.debug(`OpenTelemetry ${signal}: ${status ?? why}; dropped (${this.core.stats()})`);
      this.#schedule();
    })();
    this.pending.add(entry);
  }

  /**
   * The session ended: what waits goes now, and every request still in flight gets at most
   * `budgetMs` (the exit budget of the records' delivery, which runs beside it).
   * @param {number} budgetMs
   */
  async shutdown(budgetMs) {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.closed = true;
    this.#pump(true, budgetMs);
    // What the core held back (a signal paused after a failure) is dropped and counted.
    this.core.close(this.now());
    if (this.pending.size === 0) return;
    let timer;
    const late = new Promise((resolve) => (timer = setTimeout(resolve, budgetMs)));
    await Promise.race([Promise.all([...this.pending].map((e) => e.promise)), late]);
    clearTimeout(timer);
    for (const e of this.pending) e.controller.abort();
    await Promise.all([...this.pending].map((e) => e.promise));
    this.debug(`OpenTelemetry at exit: ${this.core.stats()}`);
  }
}
