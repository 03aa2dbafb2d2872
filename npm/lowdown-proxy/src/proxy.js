// `lowdown-proxy [options] -- <command> [args...]`: wires the options, the node identity,
// the recorder, the watch-log and the relay together, and exits with the child's code.

import { readFileSync } from 'node:fs';
import { HELP, parseArgs, UsageError } from './args.js';
import { runRelay } from './relay/relay.js';
import { safeLabel } from './label-facts.js';
import { DELIVERY, RECORDERS } from './contract.js';

/**
 * Longest that pending deliveries may delay the proxy's exit (SPEC §3): what is not delivered
 * by then goes to the spool, for the next run.
 */
export const EXIT_BUDGET_MS = DELIVERY.EXIT_BUDGET_MS;

/** This package's version (`--version`); `make test-contracts` holds it to the core's release. */
export const VERSION = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

/**
 * Runs the proxy and returns the exit code (the child's, or 2 for usage errors, 127/126
 * when the command cannot be started).
 * @param {string[]} argv arguments after the program name
 * @param {Record<string, string|undefined>} [env]
 * @returns {Promise<number>}
 */
export async function main(argv, env = process.env) {
  const debugOn = env.LOWDOWN_DEBUG === '1';
  const debug = debugOn ? (/** @type {string} */ m) => process.stderr.write(`[lowdown-proxy] ${m}\n`) : () => {};
  let opts;
  try {
    opts = parseArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`lowdown-proxy: ${err.message}\n`);
    return 2;
  }
  if (opts.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (opts.version) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }

  const recording = env.LOWDOWN_RECORD !== '0';
  // The core decides whether OpenTelemetry export is on (record/otel.js); an unset switch
  // spares loading anything for it.
  const otelAsked = Boolean(env.LOWDOWN_OTEL);
  const argvOfChild = [/** @type {string} */ (opts.command), ...opts.commandArgs];
  // The core is loaded on the relay thread only for --watch-log, which must classify before
  // relaying; plain recording loads it on the recording thread, off the start path.
  let core = null;
  if (opts.watchLogs.length > 0) {
    try {
      core = await import('./core.js');
    } catch (err) {
      noCore(/** @type {Error} */ (err).message, recording);
    }
  }
  let watch = null;
  if (core) {
    const { LogWatcher } = await import('./watchlog/watcher.js');
    try {
      watch = new LogWatcher({ files: opts.watchLogs, pattern: opts.logPattern, env, debug });
    } catch (err) {
      process.stderr.write(`lowdown-proxy: --watch-log: ${/** @type {Error} */ (err).message}\n`);
      return 2;
    }
  }

  // Who made the records: `lowdown-proxy/<version>`, decided by the core (SPEC §3.2, see README).
  /** @type {{actor: string, target: string|null, source: string, node_id: string|null, recorder_version: string}} */
  const ctx = { actor: opts.actor ?? 'anonymous', target: opts.target ?? null, source: opts.source, node_id: null, recorder_version: RECORDERS.PROXY_RECORDER };
  // `watch` is set only once the core loaded.
  if (watch && ctx.target === null) ctx.target = safeLabel(/** @type {typeof import('./core.js')} */ (core).targetLabel, argvOfChild, debug);
  // With --watch-log the records (and spans) are built here, so the core says here whether
  // export is on.
  const spans = Boolean(watch && otelAsked && /** @type {typeof import('./core.js')} */ (core).otelConfig(env).export === 'on');
  if (watch && recording) {
    // --watch-log builds the records here, on the relay thread, so it needs the node id here.
    try {
      const { lowdownHome, loadNodeIdentity } = await import('./record/home.js');
      ctx.node_id = loadNodeIdentity(lowdownHome(env)).node_id;
    } catch (err) {
      debug(`no node id (${/** @type {Error} */ (err).message}): records carry none`);
    }
  }
  let recorder = null;
  if ((recording || (otelAsked && (!watch || spans))) && (core || opts.watchLogs.length === 0)) {
    try {
      const { Recorder } = await import('./record/recorder.js');
      // The state dir, node id and API address are worked out where the records are built,
      // off the start path; only the environment's own variables cross.
      const lowdownEnv = Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith('LOWDOWN_') || k.startsWith('OTEL_')));
      recorder = new Recorder({ ctx, argv: argvOfChild, env: lowdownEnv, apiUrl: opts.apiUrl ?? null, version: VERSION, debug, debugOn, records: recording,
        unavailable: (why) => noCore(why, true) });
    } catch (err) {
      // Recording is never worth breaking the relay for.
      debug(`recording off: ${/** @type {Error} */ (err).message}`);
      recorder = null;
    }
  }

  /** @type {import('./relay/relay.js').Observer} */
  let session = PASS_THROUGH;
  if (watch) session = new (await import('./session.js')).Session({ recorder, ctx, watch, debug, spans });
  else if (recorder) session = new (await import('./record/observer.js')).RecordingObserver(recorder);
  debug(`recording ${recorder ? 'on' : 'off'}`);

  const result = await runRelay({ command: argvOfChild[0], args: opts.commandArgs, observer: session, debug });
  if (!result.spawned) {
    process.stderr.write(`lowdown-proxy: cannot start "${opts.command}": ${describeSpawnError(result.error)}\n`);
    await recorder?.shutdown(0);
    return result.code;
  }
  await recorder?.shutdown(EXIT_BUDGET_MS);
  return result.code;
}

let noCoreSaid = false;

/**
 * Says once, on stderr, that no build of lowdown-core could load, and what still works.
 * @param {string} why
 * @param {boolean} recording
 */
function noCore(why, recording) {
  if (noCoreSaid) return;
  noCoreSaid = true;
  const off = recording ? 'recording' : '';
  process.stderr.write(`lowdown-proxy: lowdown-core did not load (${why.split('\n')[0]}); ${[off, '--watch-log'].filter(Boolean).join(' and ')} off, MCP traffic is relayed unchanged\n`);
}

/** The observer of a relay that neither records nor watches logs. */
const PASS_THROUGH = { holdsServerBytes: false, fromClient() {}, fromServer() {} };

function describeSpawnError(error = '') {
  if (error.startsWith('ENOENT')) return 'command not found (ENOENT); check the command and PATH';
  if (error.startsWith('EACCES')) return 'permission denied (EACCES); is the file executable?';
  return error;
}
