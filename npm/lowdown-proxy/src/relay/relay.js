// The byte relay: spawn the MCP server (no shell), pipe stdin/stdout both ways unchanged
// and at once, inherit stderr, forward signals, and shut down the way SPEC §3 says.
//
// Observation is beside the relay: each chunk is written to its destination first and only
// then shown to the observer. The one exception is the `--watch-log` mode, where the
// observer asks to hold server→client bytes until their newline (see session.js).

import { spawn } from 'node:child_process';
import os from 'node:os';
import { resolveCommand } from './resolve.js';
import { startWatchdog } from './watchdog.js';
import { isFile } from '../label-facts.js';

/** Signals forwarded to the child. */
/** @type {NodeJS.Signals[]} */
export const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];
/** After our stdin ends: how long the child may keep running before SIGTERM, then SIGKILL. */
export const EOF_GRACE_MS = 2000;
/** How long to wait for the child's stdout to drain after it exited (grandchildren may hold it). */
const OUTPUT_DRAIN_MS = 2000;

/**
 * @typedef {object} Observer
 * @property {boolean} holdsServerBytes true when server→client bytes must go through `fromServer`
 * @property {(chunk: Buffer) => void} fromClient sees a client→server chunk after it was written
 * @property {(chunk: Buffer) => (Buffer[] | void)} fromServer sees a server→client chunk; when
 *   `holdsServerBytes`, returns what to write instead
 * @property {() => Buffer[]} [flushServer] the held tail at EOF (when `holdsServerBytes`)
 * @property {(endedBy: 'client_ended'|'server_ended') => void} [close] the child has exited and its output is relayed
 */

/** Whether children get their own process group (POSIX only). */
const GROUPS = process.platform !== 'win32';

/**
 * The exit status of a shell for a child that could not be started.
 * @param {NodeJS.ErrnoException} err
 */
function spawnFailureCode(err) {
  if (err.code === 'ENOENT') return 127;
  if (err.code === 'EACCES' || err.code === 'EPERM') return 126;
  return 1;
}

/**
 * Runs `command args` as a relayed child until it exits.
 * @param {object} p
 * @param {string} p.command
 * @param {string[]} p.args
 * @param {Observer} p.observer
 * @param {(msg: string) => void} p.debug
 * @returns {Promise<{code: number, spawned: boolean, error?: string}>} the exit code to use
 */
export function runRelay({ command, args, observer: given, debug }) {
  // A failing observer (a recording bug) must never take the relay down: it is dropped
  // and the bytes keep flowing.
  let observer = given;
  /** @type {<T>(fn: () => T) => T | undefined} */
  const observe = (fn) => {
    try {
      return fn();
    } catch (err) {
      debug(`observer failed, relaying only from now on: ${/** @type {Error} */ (err).stack ?? err}`);
      observer = { holdsServerBytes: false, fromClient() {}, fromServer() {} };
      return undefined;
    }
  };
  const input = process.stdin;
  const output = process.stdout;
  const resolved = resolveCommand(command, args, { exists: isFile });
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(resolved.file, resolved.args, {
        stdio: ['pipe', 'pipe', 'inherit'],
        shell: false,
        windowsHide: true,
        // POSIX: the child leads its own process group, so the escalation and the watchdog
        // reach what it started too (`npx` → npm → node server), never just the wrapper.
        detached: GROUPS,
        windowsVerbatimArguments: resolved.windowsVerbatimArguments,
      });
    } catch (caught) {
      const err = /** @type {NodeJS.ErrnoException} */ (caught); // spawn's own refusal
      resolve({ code: spawnFailureCode(err), spawned: false, error: `${err.code ?? 'error'}: ${err.message}` });
      return;
    }
    let spawned = false;
    let settled = false;
    // Who ended the session: the client (stdin EOF, a signal to the proxy) or the server.
    /** @type {'client_ended'|'server_ended'} */
    let endedBy = 'server_ended';
    let watchdog = { stop() {} };
    /** @type {NodeJS.Timeout[]} */
    const timers = [];
    const signalHandlers = new Map();

    // Sends `sig` to the child's whole process group (POSIX), or to the child alone.
    /** @param {NodeJS.Signals} sig */
    const killTree = (sig) => {
      try {
        if (GROUPS && child.pid) process.kill(-child.pid, sig);
        else child.kill(sig);
      } catch {
        // nothing left to signal
      }
    };

    const cleanup = () => {
      for (const t of timers) clearTimeout(t);
      for (const [sig, fn] of signalHandlers) process.off(sig, fn);
      input.off('data', onInput);
      input.off('end', onInputEnd);
      input.pause();
      watchdog.stop();
    };

    child.on('error', (/** @type {NodeJS.ErrnoException} */ err) => {
      if (!spawned && !settled) {
        settled = true;
        cleanup();
        resolve({ code: spawnFailureCode(err), spawned: false, error: `${err.code ?? 'error'}: ${err.message}` });
      } else debug(`child error: ${err.message}`);
    });
    child.on('spawn', () => {
      spawned = true;
      watchdog = startWatchdog(/** @type {number} */ (child.pid)); // set once spawned
      debug(`spawned pid ${child.pid}: ${resolved.file}`);
    });

    for (const sig of FORWARDED_SIGNALS) {
      const fn = () => {
        endedBy = 'client_ended';
        debug(`forwarding ${sig}`);
        try {
          child.kill(sig);
        } catch {
          // child already gone
        }
      };
      signalHandlers.set(sig, fn);
      process.on(sig, fn);
    }

    // client → server
    child.stdin.on('error', (/** @type {NodeJS.ErrnoException} */ err) => debug(`child stdin: ${err.code ?? err.message}`));
    /** @param {Buffer} chunk */
    const onInput = (chunk) => {
      if (!child.stdin.writable) return;
      if (!child.stdin.write(chunk)) {
        input.pause();
        child.stdin.once('drain', () => input.resume());
      }
      observe(() => observer.fromClient(chunk));
    };
    const onInputEnd = () => {
      endedBy = 'client_ended';
      debug('stdin EOF: closing the child stdin');
      child.stdin.end();
      timers.push(
        setTimeout(() => {
          debug('child still running 2 s after EOF: SIGTERM');
          killTree('SIGTERM');
          timers.push(setTimeout(() => killTree('SIGKILL'), EOF_GRACE_MS).unref());
        }, EOF_GRACE_MS).unref(),
      );
    };
    input.on('data', onInput);
    input.on('end', onInputEnd);
    input.on('error', (err) => debug(`stdin: ${err.message}`));

    // server → client
    output.on('error', (err) => debug(`stdout: ${err.code ?? err.message}`));
    /** @param {Buffer} buf */
    const write = (buf) => {
      if (!output.write(buf)) {
        child.stdout.pause();
        output.once('drain', () => child.stdout.resume());
      }
    };
    child.stdout.on('data', (/** @type {Buffer} */ chunk) => {
      if (observer.holdsServerBytes) {
        // Session.fromServer never throws in this mode (it hands back held bytes on failure).
        const out = observer.fromServer(chunk);
        if (out) for (const b of out) write(b);
      } else {
        write(chunk);
        observe(() => observer.fromServer(chunk));
      }
    });
    let stdoutEnded = false;
    const stdoutEnd = new Promise((r) => child.stdout.once('close', r)).then(() => {
      stdoutEnded = true;
    });

    child.on('exit', async (code, signal) => {
      watchdog.stop();
      debug(`child exited: code ${code} signal ${signal}`);
      if (!stdoutEnded) {
        await Promise.race([stdoutEnd, new Promise((r) => setTimeout(r, OUTPUT_DRAIN_MS).unref())]);
      }
      if (observer.holdsServerBytes && observer.flushServer) for (const b of observer.flushServer()) write(b);
      if (observer.close) observe(() => observer.close?.(endedBy));
      // Whatever the child left running in its group would be orphaned: end it.
      killTree('SIGKILL');
      settled = true;
      cleanup();
      const exitCode = signal ? 128 + (os.constants.signals[signal] ?? 0) : (code ?? 1);
      resolve({ code: exitCode, spawned: true });
    });
  });
}
