// Everything recording does after the relay has forwarded the bytes: the core's Recorder turns
// them into finished records (JSON lines), and the Sender delivers them. It runs on the
// recording thread (worker.js), or on the main thread when that thread is unavailable
// (recorder.js). Loading the core, labelling the target and reading nothing else happen here,
// off the proxy's start path.

import crypto from 'node:crypto';
import path from 'node:path';
import { Recorder, targetLabel, kind, settings } from '../core.js';
import { Sender } from './sender.js';
import { safeLabel } from '../label-facts.js';
import { loadNodeIdentity } from './home.js';

/**
 * What every record of a session carries (the core's Recorder context); `target` null until labelled.
 * @typedef {{actor: string, target: string|null, source: string, node_id: string|null, recorder_version: string}} RecordContext
 */

/** One session's recording: the core's Recorder plus a sender. */
export class RecordPipeline {
  /**
   * @param {{ctx: RecordContext, argv: string[], env: Record<string, string|undefined>, apiUrl: string|null, version: string, debug: (m: string) => void}} opts
   *   `ctx.target` null: label the target from `argv` (SPEC §3.2); `env`: the LOWDOWN_*
   *   variables (the state dir and API address come from them, `apiUrl` overriding)
   */
  constructor({ ctx, argv, env, apiUrl, version, debug }) {
    this.debug = debug;
    const s = settings(env);
    const home = path.resolve(s.home);
    let nodeId = ctx.node_id;
    try {
      nodeId ??= loadNodeIdentity(home).node_id;
    } catch (err) {
      debug(`no node id (${/** @type {Error} */ (err).message}): records carry none`);
    }
    const target = ctx.target ?? safeLabel(targetLabel, argv, debug);
    this.recorder = new Recorder(JSON.stringify({ ...ctx, target, node_id: nodeId ?? null }), crypto.randomUUID().replaceAll('-', ''));
    this.sender = new Sender({ apiUrl: apiUrl ?? s.api_url, home, nodeId, version, debug });
    this.sender.drainSpoolSoon();
    debug(`recording ${target} with the ${kind} core`);
  }

  /**
   * Applies queued items in order: `['c', direction, bytes, nowMs]` (bytes to record),
   * `['r', lines]` (records the relay thread built, as JSON lines), `['end', nowMs, reason]`
   * (the session ended, `client_ended` or `server_ended`: pending requests are recorded).
   * @param {Array<['c', 'client_to_server'|'server_to_client', Buffer, number] | ['r', string]
   *   | ['end', number, 'client_ended'|'server_ended']>} items
   */
  apply(items) {
    for (const item of items) {
      try {
        let lines = '';
        if (item[0] === 'c') lines = this.recorder.feed(item[1], item[2], item[3]);
        else if (item[0] === 'r') lines = item[1];
        else if (item[0] === 'end') lines = this.recorder.close(item[1], item[2]);
        if (lines !== '') this.sender.addLines(lines);
      } catch (err) {
        this.debug(`recording: ${/** @type {Error} */ (err).message}`);
      }
    }
  }

  /** Delivers or spools everything within `budgetMs`. @param {number} budgetMs */
  shutdown(budgetMs) {
    return this.sender.shutdown(budgetMs);
  }
}
