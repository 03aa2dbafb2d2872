// Everything recording does after the relay has forwarded the bytes: classify them with the
// core (when the relay thread did not need to), have the core build a record per finished
// exchange, and deliver the records (Sender). It runs on the recording thread (worker.js),
// or on the main thread when that thread is unavailable (recorder.js).

import crypto from 'node:crypto';
import { Classifier, buildRecord } from '../core.js';
import { Sender } from './sender.js';

/** One session's recording: a classifier of its own plus a sender. */
export class RecordPipeline {
  /**
   * @param {{ctx: object, apiUrl: string, home: string, nodeId: string, version: string, debug: (m: string) => void}} opts
   */
  constructor({ ctx, apiUrl, home, nodeId, version, debug }) {
    this.ctx = ctx;
    this.debug = debug;
    this.sender = new Sender({ apiUrl, home, nodeId, version, debug });
    this.sender.drainSpoolSoon();
    this.classifier = null;
    this.facts = null;
  }

  /**
   * Applies queued items in order: `['c', direction, bytes, nowMs]` (bytes to classify),
   * `['x', exchangesJson, facts]` (exchanges the relay thread classified, as JSON text),
   * `['end', nowMs]` (the session ended: pending requests fail).
   * @param {Array<Array<unknown>>} items
   */
  apply(items) {
    for (const item of items) {
      try {
        if (item[0] === 'c') {
          // Most feeds finish nothing; JSON text is the cheaper way across when they do.
          const json = this.#classifier().feedJson(item[1], item[2], item[3]);
          if (json !== '[]') this.#exchanges(JSON.parse(json), null);
        } else if (item[0] === 'x') this.#exchanges(JSON.parse(item[1]), item[2]);
        else if (item[0] === 'end' && this.classifier) this.#exchanges(this.classifier.close(item[1]), null);
      } catch (err) {
        this.debug(`recording: ${err.message}`);
      }
    }
  }

  #classifier() {
    if (!this.classifier) this.classifier = new Classifier();
    return this.classifier;
  }

  #exchanges(exchanges, given) {
    if (exchanges.length === 0) return;
    let facts = given;
    if (!facts) {
      // Facts are learnt only from protocol exchanges (initialize, server/discover,
      // tools/list), so a run of tools/call results reuses the last snapshot.
      if (!this.facts || exchanges.some((e) => e.request_kind !== 'tool')) this.facts = this.classifier.facts();
      facts = this.facts;
    }
    for (const ex of exchanges) this.sender.add(() => this.#build(ex, facts));
  }

  #build(exchange, facts) {
    try {
      return buildRecord(exchange, facts, this.ctx, crypto.randomUUID());
    } catch (err) {
      this.debug(`record: ${err.message}`);
      return null;
    }
  }

  /** Delivers or spools everything within `budgetMs`. @param {number} budgetMs */
  shutdown(budgetMs) {
    return this.sender.shutdown(budgetMs);
  }
}
