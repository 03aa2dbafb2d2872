// The Lowdown HTTP API as seen from this package's query tools: bounded timeouts, the node
// id header, and one error type that says in words what went wrong.

import { lowdownHome, loadNodeIdentity } from './record/home.js';
import { startLocalNode, whereTo } from './record/node.js';
import { DEFAULTS } from './contract.js';
import { readBounded } from './read.js';

/** Header carrying the node id on queries (SPEC §3.5). */
export const NODE_ID_HEADER = DEFAULTS.NODE_ID_HEADER;
/** How long one API request may take before it is given up, in milliseconds (`LOWDOWN_API_TIMEOUT_MS` overrides). */
export const DEFAULT_TIMEOUT_MS = 5000;
/**
 * Bytes of one API answer read at most. The largest is a reputation answer with its scanner,
 * registry and package blocks, tens of kilobytes; a longer one is not the API's answer.
 */
export const ANSWER_MAX_BYTES = 1024 * 1024;

/** An API request that did not produce an answer; `type` is `unreachable`, `timeout`, `http` or `bad_response`. */
export class ApiError extends Error {
  /**
   * @param {'unreachable'|'timeout'|'http'|'bad_response'} type
   * @param {string} message
   * @param {number} [status] HTTP status for `http`
   * @param {unknown} [body] the API's JSON error body for `http`
   */
  constructor(type, message, status, body) {
    super(message);
    this.type = type;
    this.status = status;
    this.body = body;
  }
}

/**
 * The API base URL, without a trailing slash: `$LOWDOWN_API_URL`, else the stored `api-url`,
 * else the local node that `$LOWDOWN_HOME/local-node.json` announces, else the default
 * (the core's `destination`).
 * @param {Record<string, string|undefined>} [env]
 * @returns {string}
 */
export function apiBase(env = process.env) {
  return whereTo(env).url;
}

/**
 * A client of the API; `request` resolves to the API's JSON answer (null for an empty body).
 * @typedef {{base: string, nodeId: string|null, request: (method: string, path: string, body?: unknown) => Promise<any>}} ApiClient
 */

/** @typedef {{base?: string, nodeId?: string|null, timeoutMs?: number, env?: Record<string, string|undefined>, autostart?: boolean}} ApiOptions */

/**
 * A client bound to one API base and node id.
 * @param {ApiOptions} [opts]
 *   node id defaults to the one in `$LOWDOWN_HOME/node.json` (created if missing); the
 *   timeout to `$LOWDOWN_API_TIMEOUT_MS`, else 5 s; `autostart`: when nothing answers and no
 *   deployment is configured, start the local node (once) and ask it (lowdown-mcp)
 * @returns {ApiClient}
 */
export function apiClient(opts = {}) {
  const env = opts.env ?? process.env;
  const where = opts.base ? null : whereTo(env);
  let base = (opts.base ?? where?.url ?? '').replace(/\/+$/, '');
  /** @type {Promise<void>|null} the local node's start, once */
  let starting = null;
  let nodeId = opts.nodeId;
  if (nodeId === undefined) {
    try {
      nodeId = loadNodeIdentity(lowdownHome(env)).node_id;
    } catch {
      nodeId = null; // an unwritable home only costs the richer answers
    }
  }
  const fromEnv = Number(env.LOWDOWN_API_TIMEOUT_MS);
  const timeoutMs = opts.timeoutMs ?? (fromEnv > 0 ? fromEnv : DEFAULT_TIMEOUT_MS);
  /**
   * @param {string} method
   * @param {string} path
   * @param {unknown} [body]
   */
  async function request(method, path, body) {
    if (where?.problem) throw new ApiError('unreachable', `No Lowdown API to ask: ${where.problem} (set LOWDOWN_API_URL to the deployment's base URL).`);
    try {
      return await ask(method, path, body);
    } catch (err) {
      if (!(err instanceof ApiError && err.type === 'unreachable' && opts.autostart && where?.may_start)) throw err;
      const home = where.home;
      starting ??= startLocalNode(home).then(({ url }) => {
        base = url;
      });
      try {
        await starting;
      } catch (why) {
        throw new ApiError('unreachable', `${err.message} No local node could start either (${/** @type {Error} */ (why).message}).`);
      }
      return ask(method, path, body);
    }
  }

  /**
   * @param {string} method
   * @param {string} path
   * @param {unknown} [body]
   */
  async function ask(method, path, body) {
    /** @type {Record<string, string>} */
    const headers = { accept: 'application/json' };
    if (nodeId) headers[NODE_ID_HEADER] = nodeId;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res;
    let text;
    try {
      res = await fetch(base + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await readBounded(res, ANSWER_MAX_BYTES);
    } catch (caught) {
      // What fetch rejects with: an AbortSignal's DOMException, or a TypeError whose cause is
      // the socket's error (an AggregateError of them when every address failed).
      const e = /** @type {Error & {cause?: {code?: string, message?: string, errors?: {code?: string}[]}}} */ (caught);
      if (e.name === 'TimeoutError' || e.name === 'AbortError') {
        throw new ApiError('timeout', `The Lowdown API at ${base} did not answer within ${timeoutMs / 1000} s.`);
      }
      throw new ApiError('unreachable', `The Lowdown API at ${base} is unreachable (${e.cause?.code || e.cause?.errors?.[0]?.code || e.cause?.message || e.message}). Is lowdown-server running there, and is that the deployment meant (LOWDOWN_API_URL, or lowdown-proxy config get api-url)?`);
    }
    if (text === null) {
      throw new ApiError('bad_response', `The Lowdown API at ${base} answered ${res.status} with more than ${ANSWER_MAX_BYTES / 1024 / 1024} MiB, which is not an answer of the API.`, res.status);
    }
    let json;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      throw new ApiError('bad_response', `The Lowdown API at ${base} answered ${res.status} with something that is not JSON.`, res.status);
    }
    if (!res.ok) {
      const what = json && typeof json.error === 'string' ? json.error : `HTTP ${res.status}`;
      throw new ApiError('http', `The Lowdown API refused the request (${res.status}): ${what}`, res.status, json);
    }
    return json;
  }
  return {
    get base() {
      return base;
    },
    nodeId,
    request,
  };
}
