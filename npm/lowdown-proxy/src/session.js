// The --watch-log observer of the relay (see relay.js `Observer`; without --watch-log the
// relay uses record/observer.js and never loads the core). `Session` classifies on the relay
// thread, because it must know, before relaying a server→client line, whether it ends a
// `tools/call` that can carry the log block. The core's Recorder answers that (`flags()`) and
// hands back the finished records as JSON lines, which go to the recording thread unparsed.

import crypto from 'node:crypto';
import { Recorder, CARRIES_LOG } from './core.js';

const NL = 0x0a;

/** A monotonic wall clock in ms (the classifier's `nowMs`). */
const wallClock = () => performance.timeOrigin + performance.now();

/** The --watch-log observer: classifies on the relay thread and appends the log block. */
export class Session {
  /**
   * @param {object} p
   * @param {{addRecords: (lines: string) => void, addSpans: (lines: string) => void} | null} p.recorder where
   *   finished records (and OpenTelemetry spans) go (see record/recorder.js); null = recording off
   * @param {import('./record/pipeline.js').RecordContext} p.ctx the records' context
   * @param {import('./watchlog/watcher.js').LogWatcher} p.watch (the proxy makes a Session only with --watch-log)
   * @param {(msg: string) => void} p.debug
   * @param {() => number} [p.now] clock in ms
   * @param {boolean} [p.spans] OpenTelemetry export is on: build the spans here too
   */
  constructor({ recorder, ctx, watch, debug, now = wallClock, spans = false }) {
    this.core = new Recorder(JSON.stringify(ctx), crypto.randomUUID().replaceAll('-', ''));
    this.spans = spans && Boolean(recorder);
    if (this.spans) this.core.collectSpans();
    this.recorder = recorder;
    this.watch = watch;
    this.debug = debug;
    this.now = now;
    /** With watch-log on, server→client bytes are held until their newline. */
    this.holdsServerBytes = Boolean(watch);
    /** @type {Buffer[]} */
    this.held = [];
    this.heldBytes = 0;
  }

  /** @param {Buffer} chunk client→server bytes, already forwarded */
  fromClient(chunk) {
    if (this.broken) return;
    this.#handle(this.core.feed('client_to_server', chunk, this.now()));
  }

  /**
   * @param {Buffer} chunk server→client bytes
   * @returns {Buffer[] | undefined} what to write, when bytes are held
   */
  fromServer(chunk) {
    if (!this.holdsServerBytes) {
      if (this.broken) return undefined;
      this.#handle(this.core.feed('server_to_client', chunk, this.now()));
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
    try {
      return this.#completeLines(data);
    } catch (err) {
      // Never lose or hold bytes because of a recording bug: pass everything on unchanged
      // and stop holding (and observing) from here on.
      this.debug(`session observer failed, relaying only: ${/** @type {Error} */ (err).stack ?? err}`);
      const out = [data, ...this.held];
      this.held = [];
      this.heldBytes = 0;
      this.holdsServerBytes = false;
      this.broken = true;
      return out;
    }
  }

  /**
   * Complete server→client lines in watch-log mode: classify each, rewrite at most the tools/call results.
   * @param {Buffer} data
   * @returns {Buffer[]}
   */
  #completeLines(data) {
    const out = [];
    let runStart = 0;
    let pos = 0;
    while (pos < data.length) {
      const nl = data.indexOf(NL, pos);
      const end = nl === -1 ? data.length : nl + 1;
      const line = data.subarray(pos, end);
      this.#handle(this.core.feed('server_to_client', line, this.now()));
      const replaced = this.core.flags() & CARRIES_LOG ? this.#withLogBlock(line) : null;
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

  /**
   * The rewritten `tools/call` result line (it has content) when the logs have news.
   * @param {Buffer} line
   */
  #withLogBlock(line) {
    try {
      return this.watch.appendTo(line);
    } catch (err) {
      this.debug(`watch-log: ${/** @type {Error} */ (err).message}`);
      return null;
    }
  }

  /** The held tail at EOF (an unterminated last line), passed on as it came. */
  flushServer() {
    const out = this.held.length ? [Buffer.concat(this.held)] : [];
    this.held = [];
    this.heldBytes = 0;
    try {
      for (const b of out) this.#handle(this.core.feed('server_to_client', b, this.now()));
    } catch (err) {
      this.debug(`session observer failed at EOF: ${/** @type {Error} */ (err).message}`);
    }
    return out;
  }

  /**
   * Ends the session: pending requests are recorded as cancelled (the client ended it) or as
   * server-layer failures (the server did), SPEC §3.1.
   * @param {'client_ended'|'server_ended'} reason
   */
  close(reason) {
    if (this.broken) return;
    this.#handle(this.core.close(this.now(), reason));
  }

  /**
   * Passes the records of one feed (JSON lines, `""` when none) to the recorder.
   * @param {string} lines
   */
  #handle(lines) {
    if (lines !== '' && this.recorder) this.recorder.addRecords(lines);
    if (this.spans) {
      const spans = this.core.takeSpans();
      if (spans !== '') this.recorder?.addSpans(spans);
    }
  }
}
