// The Lowdown HTTP API as seen from this package's query tools: bounded timeouts, the node
// id header, and one error type that says in words what went wrong.

import { lowdownHome, loadNodeIdentity } from './record/home.js';
import { settings } from './core.js';
import { DEFAULTS } from './contract.js';

/** Header carrying the node id on queries (SPEC §3.5). */
export const NODE_ID_HEADER = DEFAULTS.NODE_ID_HEADER;
/** How long one API request may take before it is given up, in milliseconds (`LOWDOWN_API_TIMEOUT_MS` overrides). */
export const DEFAULT_TIMEOUT_MS = 5000;

/** An API request that did not produce an answer; `type` is `unreachable`, `timeout`, `http` or `bad_response`. */
export class ApiError extends Error {
  /**
   * @param {'unreachable'|'timeout'|'http'|'bad_response'} type
   * @param {string} message
   * @param {number} [status] HTTP status for `http`
   * @param {object} [body] the API's JSON error body for `http`
   */
  constructor(type, message, status, body) {
    super(message);
    this.type = type;
    this.status = status;
    this.body = body;
  }
}

/**
 * The API base URL: `$LOWDOWN_API_URL`, else the default, without a trailing slash (the
 * core's settings).
 * @param {Record<string, string|undefined>} [env]
 * @returns {string}
 */
export function apiBase(env = process.env) {
  return settings(env).api_url;
}

/**
 * A client bound to one API base and node id.
 * @param {{base?: string, nodeId?: string|null, timeoutMs?: number, env?: object}} [opts]
 *   node id defaults to the one in `$LOWDOWN_HOME/node.json` (created if missing); the
 *   timeout to `$LOWDOWN_API_TIMEOUT_MS`, else 5 s
 * @returns {{base: string, nodeId: string|null, request: (method: string, path: string, body?: unknown) => Promise<any>}}
 */
export function apiClient(opts = {}) {
  const env = opts.env ?? process.env;
  const base = (opts.base ?? apiBase(env)).replace(/\/+$/, '');
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
  async function request(method, path, body) {
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
      text = await res.text();
    } catch (e) {
      if (e.name === 'TimeoutError' || e.name === 'AbortError') {
        throw new ApiError('timeout', `The Lowdown API at ${base} did not answer within ${timeoutMs / 1000} s.`);
      }
      throw new ApiError('unreachable', `The Lowdown API at ${base} is unreachable (${e.cause?.code || e.cause?.errors?.[0]?.code || e.cause?.message || e.message}). Is lowdown-server running, and is LOWDOWN_API_URL right?`);
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
  return { base, nodeId, request };
}
