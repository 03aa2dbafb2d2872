// observe(fetch): the runtime-neutral part. The privacy filter, host extraction and
// allowlist come from lowdown-core (WebAssembly); this file only times calls and
// delivers observations without ever making the caller wait. With an agent key and a
// gateway URL, calls the core samples go through the sampling gateway (route.js).

import { Router } from './route.js';
import { ANSWER_MAX_BYTES, readBounded } from './read.js';

import { DEFAULTS, DELIVERY, GATEWAY, InteractionRecord } from './contract.js';

/** Default Lowdown API base URL (SPEC §2; the core's, from the generated contract module). */
export const DEFAULT_API_URL = DEFAULTS.API_URL;
/** Observations sent per request at most (the core's, as every host sends). */
export const BATCH_MAX = DELIVERY.BATCH_MAX;
/** Observations held at most; past this they are dropped and counted. */
export const QUEUE_MAX = 1000;
/** Delay before a partial batch is sent, in ms. */
export const FLUSH_DELAY_MS = 1000;
/** A delivery that has not finished by then is abandoned, in ms (the core's). */
export const SEND_TIMEOUT_MS = DELIVERY.SEND_TIMEOUT_MS;
/** Observations one page-hide beacon carries at most (SPEC §4). */
export const BEACON_MAX_ITEMS = 60;
/** Bytes one beacon carries at most: browsers refuse larger keepalive bodies. */
export const BEACON_MAX_BYTES = 64 * 1024;

const SOURCES = new Set(InteractionRecord.source.values);

/**
 * The WebAssembly core as a runtime entry hands it over (web.js, node.js).
 * @typedef {{ready: () => boolean} & Pick<typeof import('../wasm/web/lowdown.js'), 'prepareObservation' | 'HostPolicy' | 'TelemetryBudget' | 'Router'>} Core
 */
/** @typedef {import('../index.d.ts').ObserveOptions} ObserveOptions */
/** @typedef {ReturnType<typeof resolve>} Settings */
/** @typedef {(input: RequestInfo | URL, init?: RequestInit) => Promise<Response>} FetchFn */
/**
 * The core's route of one call (route.js): the gateway URL, the headers to add, which of the
 * call's own headers go along.
 * @typedef {{url: string, headers: [string, string][], keep: string[]}} Route
 */

/**
 * Builds `observe` for one runtime.
 * @param {Core} core `ready()`, and the wasm-bindgen `prepareObservation`, `HostPolicy`, `TelemetryBudget` and `Router`
 * @param {(name: string) => string | undefined} env environment lookup (Node) or none
 * @param {() => {api_url: string, telemetry: boolean}} [coreSettings] the core's settings from the environment (Node)
 */
export function makeObserve(core, env = () => undefined, coreSettings = undefined) {
  /**
   * @param {FetchFn} fetchFn
   * @param {ObserveOptions} [options]
   */
  return function observe(fetchFn, options = {}) {
    if (typeof fetchFn !== 'function') throw new TypeError('observe(fetch): fetch must be a function');
    const settings = resolve(options, env, coreSettings);
    if (!settings.enabled) return fetchFn;
    const reporter = new Reporter(fetchFn, settings, core);
    const router = settings.gatewayUrl && settings.agentKey ? new Router(settings, core, fetchFn) : null;
    /** @type {InstanceType<Core['HostPolicy']> | null} */
    let policy = null;

    /** @type {(url: string, method: string, status: number | null, latencyMs: number, bytes: number | null) => void} */
    const report = (url, method, status, latencyMs, bytes) => {
      try {
        if (settings.sampleRate < 1 && Math.random() >= settings.sampleRate) return;
        if (!core.ready()) return void (reporter.stats.unready += 1);
        policy ??= new core.HostPolicy(settings.allowlist ?? undefined, settings.allowPrivate ? '1' : undefined);
        const obs = core.prepareObservation(url, method, status, latencyMs, bytes, settings.source, policy);
        if (obs) reporter.push(obs);
        else reporter.stats.blocked += 1;
      } catch {
        reporter.stats.errors += 1;
      }
    };

    /** @type {FetchFn} */
    const observed = function fetch(input, init) {
      const started = performance.now();
      const { url, method } = describe(input, init);
      let pending;
      try {
        const route = router && routeOf(router, input, init, url, method);
        pending = route ? viaGateway(fetchFn, input, init, route, router) : fetchFn(input, init);
      } catch (err) {
        report(url, method, null, performance.now() - started, null);
        throw err;
      }
      return Promise.resolve(pending).then(
        (response) => {
          report(url, method, response.status, performance.now() - started, contentLength(response));
          return response;
        },
        (err) => {
          report(url, method, null, performance.now() - started, null);
          throw err;
        },
      );
    };
    reporter.gateway = router;
    Object.defineProperties(observed, {
      lowdown: { value: reporter },
      length: { value: fetchFn.length },
    });
    return observed;
  };
}

/**
 * The gateway route of a call, or null; a routing failure sends the call direct.
 * @param {Router} router
 * @param {RequestInfo | URL} input
 * @param {RequestInit | undefined} init
 * @param {string} url
 * @param {string} method
 * @returns {Route | null}
 */
function routeOf(router, input, init, url, method) {
  try {
    return router.route(url, method, [...givenHeaders(input, init).keys()]);
  } catch {
    return null;
  }
}

/** @type {(input: unknown) => input is Request} */
const isRequest = (input) => typeof input === 'object' && input !== null && 'url' in input && 'method' in input;
/** @type {(input: RequestInfo | URL, init?: RequestInit) => Headers} */
const givenHeaders = (input, init) => new Headers(init?.headers ?? (isRequest(input) ? input.headers : undefined));

/**
 * Sends a sampled call to the gateway: the same method and body, only the request headers
 * the core's route keeps (for an inject service never the user's Authorization or Cookie),
 * plus the agent key and the decision. A refusal by the gateway itself (a rotated salt, a
 * changed catalog) makes the router start over, and the call goes to the vendor instead when
 * its body can be sent again.
 * @param {FetchFn} fetchFn
 * @param {RequestInfo | URL} input
 * @param {RequestInit | undefined} init
 * @param {Route} route
 * @param {Router} router
 */
async function viaGateway(fetchFn, input, init, route, router) {
  const request = isRequest(input);
  const replayable = !(request && /** @type {Request} */ (input).body) && !(typeof ReadableStream !== 'undefined' && init?.body instanceof ReadableStream);
  const given = givenHeaders(input, init);
  const headers = new Headers();
  for (const name of route.keep) headers.set(name, /** @type {string} */ (given.get(name))); // one of given's own names
  for (const [k, v] of route.headers) headers.set(k, v);
  // A Request's credentials mode would add the browser's cookies for the gateway's origin.
  const res = await fetchFn(request ? new Request(route.url, /** @type {Request} */ (input)) : route.url, { ...init, headers, credentials: 'omit' });
  if (!GATEWAY.REFUSAL_STATUSES.includes(res.status)) return res;
  const reason = await res.clone().json().then((/** @type {any} the refusal's JSON */ b) => b?.reason, () => null);
  if (!router.refused(res.status, reason)) return res;
  if (!replayable) return res;
  await res.body?.cancel();
  return fetchFn(input, init);
}

/**
 * The URL and method of a fetch call, without reading its body.
 * @param {RequestInfo | URL} input
 * @param {RequestInit} [init]
 */
function describe(input, init) {
  const request = isRequest(input);
  const url = request ? input.url : absolute(String(input));
  const method = (init && init.method) || (request ? input.method : 'GET');
  return { url, method: String(method).toUpperCase() };
}

/**
 * Resolves a relative URL against the page, as fetch does; unchanged elsewhere.
 * @param {string} url
 */
function absolute(url) {
  const base = globalThis.location?.href;
  if (!base) return url;
  try {
    return new URL(url, base).href;
  } catch {
    return url;
  }
}

/**
 * Bytes announced by `Content-Length`; null when absent (the body is never read).
 * @param {Response} response
 */
function contentLength(response) {
  const value = response.headers && response.headers.get('content-length');
  const n = value === null || value === undefined ? NaN : Number(value);
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/**
 * The settings of one observed fetch: its options first, then the environment (Node only;
 * `coreSettings` is the core's reading of it: API address and off switch), then the defaults.
 * @param {ObserveOptions} options
 * @param {(name: string) => string | undefined} env
 * @param {(() => {api_url: string, telemetry: boolean}) | undefined} coreSettings
 */
function resolve(options, env, coreSettings) {
  const fromEnv = coreSettings?.() ?? { api_url: DEFAULT_API_URL, telemetry: true };
  const apiUrl = (options.apiUrl || fromEnv.api_url).replace(/\/+$/, '');
  const source = options.source || InteractionRecord.source.default;
  if (!SOURCES.has(source)) throw new TypeError(`observe(fetch): source must be one of ${[...SOURCES].join('|')}`);
  const sampleRate = options.sampleRate ?? 1;
  if (!(typeof sampleRate === 'number' && sampleRate >= 0 && sampleRate <= 1)) {
    throw new TypeError('observe(fetch): sampleRate must be a number from 0 to 1');
  }
  const allowlist = Array.isArray(options.allowlist) ? options.allowlist.join(',') : options.allowlist ?? env('PROWL_TELEMETRY_ALLOWLIST');
  return {
    apiUrl,
    source,
    sampleRate,
    allowlist,
    allowPrivate: options.allowPrivate ?? env('PROWL_TELEMETRY_ALLOW_PRIVATE') === '1',
    agentKey: options.agentKey ?? env('PROWL_AGENT_KEY'),
    gatewayUrl: (options.gatewayUrl ?? env('PROWL_GATEWAY_URL'))?.replace(/\/+$/, '') || undefined,
    gatewayServices: Array.isArray(options.gatewayServices) ? options.gatewayServices.join(',') : options.gatewayServices ?? env('PROWL_GATEWAY_SERVICES'),
    enabled: options.enabled ?? fromEnv.telemetry,
    waitUntil: options.waitUntil,
    unrefTimers: options.unrefTimers ?? false,
  };
}

/**
 * Queues observations and delivers them in batches, never blocking or throwing. It keeps the
 * server's hourly budget (the core's TelemetryBudget: 60 observations an hour anonymously,
 * 600 with an agent key) and sends no more than that; what the budget does not allow yet
 * waits in the queue, and a refusal pauses sending for the server's Retry-After.
 */
class Reporter {
  /**
   * @param {FetchFn} transport
   * @param {Settings} settings
   * @param {Core} core
   */
  constructor(transport, settings, core) {
    this.transport = transport; // the caller's unobserved fetch: delivery is never observed itself
    this.settings = settings;
    this.core = core;
    /** @type {InstanceType<Core['TelemetryBudget']> | null} the core's TelemetryBudget, once the core is ready */
    this.budget = null;
    /** @type {import('./route.js').Router | null | undefined} the gateway router, set by observe */
    this.gateway;
    this.url = `${settings.apiUrl}/v1/telemetry/observe`;
    /** @type {string[]} observations' JSON texts */
    this.queue = [];
    /** @type {ReturnType<typeof setTimeout> | null} */
    this.timer = null;
    this.inflight = new Set();
    this.stats = { queued: 0, sent: 0, dropped: 0, failed: 0, blocked: 0, errors: 0, unready: 0, throttled: 0 };
    if (typeof addEventListener === 'function' && typeof document !== 'undefined') {
      // A page being hidden may never come back: hand what is left to the browser.
      addEventListener('pagehide', () => this.beacon());
      addEventListener('visibilitychange', () => document.visibilityState === 'hidden' && this.beacon());
    }
  }

  /** @param {string} obs one observation's JSON text, from the core */
  push(obs) {
    if (this.queue.length >= QUEUE_MAX) {
      this.stats.dropped += 1;
      return;
    }
    this.queue.push(obs);
    this.stats.queued += 1;
    this.schedule();
  }

  schedule() {
    const { waitUntil } = this.settings;
    if (waitUntil) {
      // Edge runtimes freeze timers after the response: send now, and keep the isolate alive for it.
      queueMicrotask(() => this.queue.length && waitUntil(this.flush()));
      return;
    }
    if (this.queue.length >= BATCH_MAX) return void this.flush();
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush();
    }, FLUSH_DELAY_MS);
    if (this.settings.unrefTimers && typeof this.timer?.unref === 'function') this.timer.unref();
  }

  /**
   * How many queued observations the budget lets go now (they count as sent).
   * @param {number} want
   */
  allowed(want) {
    return this.ownBudget().take(Date.now(), want);
  }

  /** The core's TelemetryBudget of this client. */
  ownBudget() {
    this.budget ??= new this.core.TelemetryBudget(Boolean(this.settings.agentKey));
    return this.budget;
  }

  /**
   * Counts the answer to `n` observations (`status` null when none came) as the core reads
   * it, as every host does; the budget pauses on a refusal. Telemetry is never resent, so
   * what the quota refused is dropped.
   * @param {number} n
   * @param {number | null} status
   * @param {string | null} retryAfter
   * @param {string | null} body
   */
  answered(n, status, retryAfter, body) {
    const a = JSON.parse(this.ownBudget().answered(Date.now(), n, status, retryAfter, body));
    this.stats.sent += a.delivered;
    this.stats.failed += a.failed;
    this.stats.throttled += a.throttled;
    this.stats.dropped += a.throttled;
  }

  /**
   * Sends what the budget allows of the queue; resolves when delivery finished or was
   * abandoned. Never rejects. What the budget does not allow yet is sent by a later flush.
   */
  flush() {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const sends = [];
    let n = this.queue.length ? this.allowed(this.queue.length) : 0;
    while (n > 0) {
      const batch = this.queue.splice(0, Math.min(BATCH_MAX, n));
      n -= batch.length;
      sends.push(this.send(batch));
    }
    if (this.queue.length && !this.settings.waitUntil) {
      // Over the budget: try again when it allows (bounded, so a long pause never piles up timers).
      this.timer = setTimeout(() => {
        this.timer = null;
        this.flush();
      }, Math.min(Math.max(this.ownBudget().waitMs(Date.now()), FLUSH_DELAY_MS), 60_000));
      if (this.settings.unrefTimers && typeof this.timer?.unref === 'function') this.timer.unref();
    }
    return Promise.all([...sends, ...this.inflight]).then(() => undefined);
  }

  /** @param {string[]} batch observations' JSON texts */
  send(batch) {
    // In a page, text/plain keeps the cross-origin request simple: no preflight, which
    // Chromium does not allow for keepalive requests (the API reads JSON either way).
    /** @type {Record<string, string>} */
    const headers = { 'content-type': typeof document === 'undefined' ? 'application/json' : 'text/plain;charset=UTF-8' };
    if (this.settings.agentKey) headers[DEFAULTS.AGENT_KEY_HEADER] = this.settings.agentKey;
    let p;
    try {
      // Called as a plain function: a browser's fetch refuses any `this` but the global.
      p = Promise.resolve(
        this.transport.call(globalThis, this.url, {
          method: 'POST',
          headers,
          body: `[${batch.join(',')}]`,
          keepalive: true,
          signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
        }),
      ).then(
        async (res) => {
          const body = await readBounded(res, ANSWER_MAX_BYTES).catch(() => undefined);
          // Longer than any answer of the API's: read no further, and count it as no answer.
          if (body === null) return void this.answered(batch.length, null, null, null);
          this.answered(batch.length, res.status, res.headers.get('retry-after'), body ?? null);
        },
        () => void this.answered(batch.length, null, null, null),
      );
    } catch {
      this.answered(batch.length, null, null, null);
      return Promise.resolve();
    }
    const tracked = p.catch(() => undefined).finally(() => this.inflight.delete(tracked));
    this.inflight.add(tracked);
    return tracked;
  }

  /**
   * Page hide: the browser delivers a last batch even if the page is gone (no custom headers
   * possible), within the budget, at most BEACON_MAX_ITEMS observations and BEACON_MAX_BYTES.
   */
  beacon() {
    if (!this.queue.length || typeof navigator === 'undefined' || typeof navigator.sendBeacon !== 'function') return;
    const batch = [];
    let bytes = 2; // the brackets
    for (const obs of this.queue) {
      if (batch.length === BEACON_MAX_ITEMS || bytes + obs.length + 1 > BEACON_MAX_BYTES) break;
      batch.push(obs);
      bytes += obs.length + 1;
    }
    batch.length = this.allowed(batch.length);
    if (!batch.length) return;
    this.queue.splice(0, batch.length);
    const ok = navigator.sendBeacon(this.url, new Blob([`[${batch.join(',')}]`], { type: 'text/plain' }));
    if (ok) this.stats.sent += batch.length;
    else this.stats.failed += batch.length;
  }
}
