// The relay's observers (see relay.js `Observer`).
//
// - `RecordingObserver` (recording on, no --watch-log): hands a reference to each forwarded
//   chunk, with its arrival time, to the recorder; classification happens on the recording
//   thread. The relay thread does no parsing at all.
// - `Session` (--watch-log): classifies on the relay thread, because it must know, before
//   relaying a server→client line, whether it ends a `tools/call` that can carry the log
//   block. It reads that from the binding's JSON text of the finished exchanges (`scan`)
//   and hands the text, unparsed, to the recorder (when recording).

import { Classifier } from './core.js';

const NL = 0x0a;

/** A monotonic wall clock in ms (the classifier's `nowMs`). */
const wallClock = () => performance.timeOrigin + performance.now();

/** No exchange finished: what `feedJson` answers for most lines. */
const NONE = '[]';

// The relay thread reads what it needs from the binding's JSON text of the finished exchanges
// without parsing it when the text holds one exchange (the usual case): serde writes an
// exchange's fields in one order and escapes every `"` inside a string value, so these
// key-value texts can only be that exchange's own fields. Text with several exchanges is
// parsed. The recording thread parses what it records.
const EXCHANGE = '{"direction":';
const FROM_CLIENT = '"direction":"client_to_server"';
const TOOL = '"request_kind":"tool"';
const CONTENT = '"has_content":true';

/** Bit of `scan`: a client→server `tools/call` finished with a `content` array (it can carry the log block). */
export const CARRIES_LOG = 1;
/** Bit of `scan`: a non-`tools/call` exchange finished (it may have taught the classifier facts). */
export const PROTOCOL = 2;

/**
 * What the relay thread needs to know about the exchanges in `json` (the text of
 * `Classifier.feedJson`, not `"[]"`), as `CARRIES_LOG | PROTOCOL` bits.
 * @param {string} json
 * @returns {number}
 */
export function scan(json) {
  if (json.indexOf(EXCHANGE, 2) === -1) {
    const tool = json.includes(TOOL);
    return (tool && json.includes(FROM_CLIENT) && json.includes(CONTENT) ? CARRIES_LOG : 0) | (tool ? 0 : PROTOCOL);
  }
  let bits = 0;
  for (const e of JSON.parse(json)) {
    if (e.direction === 'client_to_server' && e.request_kind === 'tool' && e.has_content) bits |= CARRIES_LOG;
    if (e.request_kind !== 'tool') bits |= PROTOCOL;
  }
  return bits;
}

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
   * @param {{add: (exchanges: string, facts: object) => void} | null} p.recorder where finished
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
  }

  /** @param {Buffer} chunk client→server bytes, already forwarded */
  fromClient(chunk) {
    if (this.broken) return;
    this.#handle(this.classifier.feedJson('client_to_server', chunk, this.now()));
  }

  /**
   * @param {Buffer} chunk server→client bytes
   * @returns {Buffer[] | undefined} what to write, when bytes are held
   */
  fromServer(chunk) {
    if (!this.holdsServerBytes) {
      if (this.broken) return undefined;
      this.#handle(this.classifier.feedJson('server_to_client', chunk, this.now()));
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
      const bits = this.#handle(this.classifier.feedJson('server_to_client', line, this.now()));
      const replaced = bits & CARRIES_LOG ? this.#withLogBlock(line) : null;
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

  /** The rewritten `tools/call` result line (it has content) when the logs have news. */
  #withLogBlock(line) {
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
      for (const b of out) this.#handle(this.classifier.feedJson('server_to_client', b, this.now()));
    } catch (err) {
      this.debug(`session observer failed at EOF: ${err.message}`);
    }
    return out;
  }

  /** Ends the session: pending requests become server-layer failures (SPEC §3.1). */
  close() {
    if (this.broken) return;
    const exchanges = this.classifier.close(this.now());
    if (exchanges.length > 0) this.#handle(JSON.stringify(exchanges));
  }

  /**
   * Passes the exchanges of one feed (`feedJson` text) to the recorder.
   * @param {string} json
   * @returns {number} their `scan` bits (0 when none finished)
   */
  #handle(json) {
    if (json === NONE) return 0;
    const bits = scan(json);
    if (!this.recorder) return bits;
    // The facts as they were when these exchanges finished (the records are built on the
    // recording thread). Facts are learnt only from protocol exchanges (initialize,
    // server/discover, tools/list), so a run of tools/call results reuses the last snapshot
    // instead of asking the binding again.
    if (!this.facts || bits & PROTOCOL) this.facts = this.classifier.facts();
    this.recorder.add(json, this.facts);
    return bits;
  }
}
