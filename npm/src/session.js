// The relay's observers (see relay.js `Observer`).
//
// - `RecordingObserver` (recording on, no --watch-log): hands a reference to each forwarded
//   chunk, with its arrival time, to the recorder; classification happens on the recording
//   thread. The relay thread does no parsing at all.
// - `Session` (--watch-log): classifies on the relay thread, because it must know, before
//   relaying a server→client line, whether it ends a `tools/call` that can carry the log
//   block; finished exchanges go to the recorder (when recording) as they are.

import { Classifier } from './core.js';

const NL = 0x0a;

/** A monotonic wall clock in ms (the classifier's `nowMs`). */
const wallClock = () => performance.timeOrigin + performance.now();

/** Observer for recording without --watch-log: queues bytes for the recording thread. */
export class RecordingObserver {
  /**
   * @param {{bytesIn: Function, end: Function}} recorder
   * @param {() => number} [now]
   */
  constructor(recorder, now = wallClock) {
    this.recorder = recorder;
    this.now = now;
    this.holdsServerBytes = false;
  }

  /** @param {Buffer} chunk client→server bytes, already forwarded */
  fromClient(chunk) {
    this.recorder.bytesIn('client_to_server', chunk, this.now());
  }

  /** @param {Buffer} chunk server→client bytes, already forwarded */
  fromServer(chunk) {
    this.recorder.bytesIn('server_to_client', chunk, this.now());
  }

  /** The child exited and its output is relayed. */
  close() {
    this.recorder.end(this.now());
  }
}

/** The --watch-log observer: classifies on the relay thread and appends the log block. */
export class Session {
  /**
   * @param {object} p
   * @param {{add: (exchanges: object[], facts: object) => void} | null} p.recorder where finished
   *   exchanges go (see record/recorder.js); null = recording off
   * @param {import('./watchlog/watcher.js').LogWatcher | null} p.watch
   * @param {(msg: string) => void} p.debug
   * @param {() => number} [p.now] clock in ms
   */
  constructor({ recorder, watch, debug, now = wallClock }) {
    this.classifier = new Classifier();
    this.recorder = recorder;
    this.facts = null;
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
    if (this.broken) return;
    this.#handle(this.classifier.feed('client_to_server', chunk, this.now()));
  }

  /**
   * @param {Buffer} chunk server→client bytes
   * @returns {Buffer[] | undefined} what to write, when bytes are held
   */
  fromServer(chunk) {
    if (!this.holdsServerBytes) {
      if (this.broken) return undefined;
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
    try {
      return this.#completeLines(data);
    } catch (err) {
      // Never lose or hold bytes because of a recording bug: pass everything on unchanged
      // and stop holding (and observing) from here on.
      this.debug(`session observer failed, relaying only: ${err.stack ?? err}`);
      const out = [data, ...this.held];
      this.held = [];
      this.heldBytes = 0;
      this.holdsServerBytes = false;
      this.broken = true;
      return out;
    }
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
    try {
      for (const b of out) this.#handle(this.classifier.feed('server_to_client', b, this.now()));
    } catch (err) {
      this.debug(`session observer failed at EOF: ${err.message}`);
    }
    return out;
  }

  /** Ends the session: pending requests become server-layer failures (SPEC §3.1). */
  close() {
    if (this.broken) return;
    this.#handle(this.classifier.close(this.now()));
  }

  #handle(exchanges) {
    if (exchanges.length === 0 || !this.recorder) return;
    // The facts as they were when these exchanges finished (the records are built on the
    // recording thread). Facts are learnt only from protocol exchanges (initialize,
    // server/discover, tools/list), so a run of tools/call results reuses the last snapshot
    // instead of asking the binding again.
    this.exchanges += exchanges.length;
    if (!this.facts || exchanges.some((e) => e.request_kind !== 'tool')) this.facts = this.classifier.facts();
    this.recorder.add(exchanges, this.facts);
  }
}
