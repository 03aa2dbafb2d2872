// The relay's observer when recording without --watch-log (see relay.js `Observer`): hands a
// reference to each forwarded chunk, with its arrival time, to the recorder; the recording
// thread does the rest. The relay thread does no parsing at all and never loads the core.

/** A monotonic wall clock in ms (the core's `nowMs`). */
const wallClock = () => performance.timeOrigin + performance.now();

/** Observer for recording without --watch-log: queues bytes for the recording thread. */
export class RecordingObserver {
  /**
   * @param {{bytesIn: Function, end: Function, started: boolean}} recorder
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

  /**
   * The child exited and its output is relayed.
   * @param {'client_ended'|'server_ended'} reason who ended the session
   */
  close(reason) {
    // Nothing relayed, nothing to end (and no clock read: `performance` loads perf_hooks).
    if (this.recorder.started) this.recorder.end(this.now(), reason);
  }
}
