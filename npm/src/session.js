// Watches one relayed MCP session: feeds a copy of the bytes to the core's classifier,
// turns finished exchanges into records (built by the core) and, with `--watch-log`,
// appends the log block to the next `tools/call` result that has a `content` array.

import crypto from 'node:crypto';
import { Classifier, buildRecord } from './core.js';

const NL = 0x0a;

/** The relay observer for one session (see relay.js `Observer`). */
export class Session {
  /**
   * @param {object} p
   * @param {{actor: string, target: string, source: string, node_id: string|null, recorder_version: string}} p.ctx
   * @param {((build: () => object | null) => void) | null} p.onRecord takes a function that
   *   builds the record (null for exchanges that are not recorded); null = recording off
   * @param {import('./watchlog/watcher.js').LogWatcher | null} p.watch
   * @param {(msg: string) => void} p.debug
   * @param {() => number} [p.now] clock in ms
   */
  constructor({ ctx, onRecord, watch, debug, now = () => performance.timeOrigin + performance.now() }) {
    this.classifier = new Classifier();
    // The binding takes absent optional fields as undefined, not null.
    this.ctx = Object.fromEntries(Object.entries(ctx).filter(([, v]) => v !== null && v !== undefined));
    this.onRecord = onRecord;
    this.watch = watch;
    this.debug = debug;
    this.now = now;
    /** With watch-log on, server→client bytes are held until their newline. */
    this.holdsServerBytes = Boolean(watch);
    this.held = [];
    this.heldBytes = 0;
    this.exchanges = 0;
  }

  /** @param {Buffer} chunk client→server bytes, already forwarded */
  fromClient(chunk) {
    this.#handle(this.classifier.feed('client_to_server', chunk, this.now()));
  }

  /**
   * @param {Buffer} chunk server→client bytes
   * @returns {Buffer[] | undefined} what to write, when bytes are held
   */
  fromServer(chunk) {
    if (!this.holdsServerBytes) {
      this.#handle(this.classifier.feed('server_to_client', chunk, this.now()));
      return undefined;
    }
    const last = chunk.lastIndexOf(NL);
    if (last === -1) {
      this.held.push(chunk);
      this.heldBytes += chunk.length;
      return [];
    }
    let data = chunk.subarray(0, last + 1);
    if (this.held.length > 0) {
      this.held.push(data);
      data = Buffer.concat(this.held, this.heldBytes + data.length);
    }
    this.held = last + 1 < chunk.length ? [chunk.subarray(last + 1)] : [];
    this.heldBytes = this.held.length ? this.held[0].length : 0;
    return this.#completeLines(data);
  }

  /** Complete server→client lines in watch-log mode: classify each, rewrite at most the tools/call results. */
  #completeLines(data) {
    const out = [];
    let runStart = 0;
    let pos = 0;
    while (pos < data.length) {
      const nl = data.indexOf(NL, pos);
      const end = nl === -1 ? data.length : nl + 1;
      const line = data.subarray(pos, end);
      const exchanges = this.classifier.feed('server_to_client', line, this.now());
      this.#handle(exchanges);
      const replaced = this.#withLogBlock(line, exchanges);
      if (replaced) {
        if (pos > runStart) out.push(data.subarray(runStart, pos));
        out.push(replaced);
        runStart = end;
      }
      pos = end;
    }
    if (runStart < data.length) out.push(runStart === 0 ? data : data.subarray(runStart));
    return out;
  }

  /** The rewritten line when it ends a `tools/call` with content and the logs have news. */
  #withLogBlock(line, exchanges) {
    const ex = exchanges.find((e) => e.direction === 'client_to_server' && e.method === 'tools/call' && e.has_content);
    if (!ex) return null;
    try {
      return this.watch.appendTo(line, this.now());
    } catch (err) {
      this.debug(`watch-log: ${err.message}`);
      return null;
    }
  }

  /** The held tail at EOF (an unterminated last line), passed on as it came. */
  flushServer() {
    const out = this.held.length ? [Buffer.concat(this.held)] : [];
    this.held = [];
    this.heldBytes = 0;
    for (const b of out) this.#handle(this.classifier.feed('server_to_client', b, this.now()));
    return out;
  }

  /** Ends the session: pending requests become server-layer failures (SPEC §3.1). */
  close() {
    this.#handle(this.classifier.close(this.now()));
  }

  #handle(exchanges) {
    if (exchanges.length === 0 || !this.onRecord) return;
    // What the session knew when these exchanges finished; the records themselves are built
    // later, when the sender gathers a batch, so the relay path pays only for `feed`.
    const facts = this.classifier.facts();
    for (const ex of exchanges) {
      this.exchanges += 1;
      this.onRecord(() => this.#build(ex, facts));
    }
  }

  #build(ex, facts) {
    try {
      return buildRecord(ex, facts, this.ctx, crypto.randomUUID());
    } catch (err) {
      this.debug(`record: ${err.message}`);
      return null;
    }
  }
}
