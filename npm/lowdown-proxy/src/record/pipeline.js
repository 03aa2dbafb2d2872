// Everything recording does after the relay has forwarded the bytes: the core's Recorder turns
// them into finished records (JSON lines), and the Sender delivers them. It runs on the
// recording thread (worker.js), or on the main thread when that thread is unavailable
// (recorder.js). Loading the core, labelling the target and reading nothing else happen here,
// off the proxy's start path.

import crypto from 'node:crypto';
import path from 'node:path';
import { Recorder, targetLabel, kind } from '../core.js';
import { Sender } from './sender.js';
import { safeLabel } from '../label-facts.js';
import { loadNodeIdentity } from './home.js';
import { startingLocalNode, whereTo } from './node.js';
import { FILES } from '../contract.js';
import { pageUrl } from '../mcp/format.js';
import { startOtel } from './otel.js';

/**
 * What every record of a session carries (the core's Recorder context); `target` null until labelled.
 * @typedef {{actor: string, target: string|null, source: string, node_id: string|null, recorder_version: string}} RecordContext
 */

/** One session's recording: the core's Recorder plus a sender. */
export class RecordPipeline {
  /** @type {{home: string, spawned: Promise<unknown>}|null} the node this session is starting, until it answers or fails */
  #starting = null;

  /**
   * @param {{ctx: RecordContext, argv: string[], env: Record<string, string|undefined>, apiUrl: string|null, version: string, debug: (m: string) => void,
   *   records?: boolean}} opts
   *   `ctx.target` null: label the target from `argv` (SPEC §3.2); `env`: the LOWDOWN_* and
   *   OTEL_* variables (the state dir and API address come from them, `apiUrl` overriding;
   *   OpenTelemetry export from LOWDOWN_OTEL and OTEL_*); `records` false
   *   (LOWDOWN_RECORD=0): no records, only OpenTelemetry export
   */
  constructor({ ctx, argv, env, apiUrl, version, debug, records = true }) {
    this.debug = debug;
    /** @type {import('./otel.js').OtelExport|null} */
    this.otel = null;
    try {
      this.otel = startOtel(env, version, debug);
    } catch (err) {
      debug(`OpenTelemetry export off: ${/** @type {Error} */ (err).message}`);
    }
    if (!records) {
      // LOWDOWN_RECORD=0 with export on: no identity, records, spool or node.
      this.sender = null;
      this.recorder = new Recorder(JSON.stringify({ ...ctx, target: ctx.target ?? safeLabel(targetLabel, argv, debug) }), 'x');
      // Spans only when something takes them (the core may have said no after all).
      if (this.otel) this.recorder.collectSpans();
      return;
    }
    const where = whereTo(env);
    const { home } = where;
    let nodeId = ctx.node_id;
    try {
      nodeId ??= loadNodeIdentity(home).node_id;
    } catch (err) {
      debug(`no node id (${/** @type {Error} */ (err).message}): records carry none`);
    }
    const target = ctx.target ?? safeLabel(targetLabel, argv, debug);
    this.recorder = new Recorder(JSON.stringify({ ...ctx, target, node_id: nodeId ?? null }), crypto.randomUUID().replaceAll('-', ''));
    // Where the core says (no deployment configured: the local node); when nothing answers
    // there and it may, the node is started once.
    const url = apiUrl ?? (where.problem ? null : where.url);
    const startApi = !apiUrl && where.may_start ? () => this.#startNode(home, target) : null;
    // A configured URL that is not one: records go nowhere else, they wait, and it is said.
    if (url === null) process.stderr.write(`lowdown-proxy: ${where.problem}; records wait in ${path.join(home, FILES.SPOOL_DIR)} (set LOWDOWN_API_URL to the deployment's base URL)\n`);
    this.sender = new Sender({ apiUrl: url, home, nodeId, version, debug, startApi });
    this.sender.drainSpoolSoon();
    if (this.otel) this.recorder.collectSpans();
    debug(`recording ${target} with the ${kind} core`);
  }

  /**
   * Applies queued items in order: `['c', direction, bytes, nowMs]` (bytes to record),
   * `['r', lines]` (records the relay thread built, as JSON lines), `['end', nowMs, reason]`
   * (the session ended, `client_ended` or `server_ended`: pending requests are recorded),
   * `['s', lines]` (OpenTelemetry spans the relay thread built, as JSON lines).
   * @param {Array<['c', 'client_to_server'|'server_to_client', Buffer, number] | ['r', string]
   *   | ['end', number, 'client_ended'|'server_ended'] | ['s', string]>} items
   */
  apply(items) {
    for (const item of items) {
      try {
        let lines = '';
        if (item[0] === 'c') lines = this.recorder.feed(item[1], item[2], item[3]);
        else if (item[0] === 'r') lines = item[1];
        else if (item[0] === 'end') lines = this.recorder.close(item[1], item[2]);
        else if (item[0] === 's') this.otel?.add(item[1]);
        if (this.otel && item[0] !== 'r' && item[0] !== 's') {
          const spans = this.recorder.takeSpans();
          if (spans !== '') this.otel.add(spans);
        }
        if (lines !== '' && this.sender) this.sender.addLines(lines);
      } catch (err) {
        this.debug(`recording: ${/** @type {Error} */ (err).message}`);
      }
    }
  }

  /**
   * Starts the local node of `home`, saying once on stderr where records go: to the node
   * and the target's page there, or, when no node can start, where they wait.
   * @param {string} home
   * @param {string|null} target
   * @returns {Promise<string>} the node's URL
   */
  async #startNode(home, target) {
    const { spawned, node } = startingLocalNode(home);
    this.#starting = { home, spawned };
    try {
      const { url, started } = await node;
      this.#starting = null;
      const page = target ? `; what it records of ${target}: ${pageUrl(url, target)}` : '';
      const what = started ? 'started a local Lowdown node' : 'recording to the local Lowdown node';
      process.stderr.write(`lowdown-proxy: ${what} at ${url} (log: ${path.join(home, FILES.LOCAL_NODE_LOG)})${page}\n`);
      return url;
    } catch (err) {
      this.#starting = null;
      process.stderr.write(
        `lowdown-proxy: no Lowdown node to record to (${/** @type {Error} */ (err).message}); records wait in ${path.join(home, FILES.SPOOL_DIR)} and go to the next node that answers (LOWDOWN_API_URL names a deployment; LOWDOWN_AUTOSTART=0 stops starting one)\n`,
      );
      throw err;
    }
  }

  /** Delivers or spools everything within `budgetMs`. @param {number} budgetMs */
  async shutdown(budgetMs) {
    // OpenTelemetry's last batches are pending deliveries like the records: same budget, in parallel.
    const [out] = await Promise.all([this.sender?.shutdown(budgetMs), this.otel?.shutdown(budgetMs)]);
    // A session shorter than the node's start: the node is left starting (it takes the spool
    // when it runs), and where the records are is said once.
    const starting = this.#starting;
    if (starting) {
      await starting.spawned;
      if (this.#starting) {
        const { home } = starting;
        process.stderr.write(`lowdown-proxy: starting a local Lowdown node (log: ${path.join(home, FILES.LOCAL_NODE_LOG)}); this session's records wait in ${path.join(home, FILES.SPOOL_DIR)} and go to it once it runs\n`);
      }
    }
    return out;
  }
}
