// Routing sampled calls through the Prowl sampling gateway (SPEC §10), on when an agent key
// and a gateway URL are both set. What to route, with which headers, and when to fetch the
// catalog and the salt again is the core's `Router` (WebAssembly); this file only fetches
// them, in the background so a call never waits: until the first fetch answers, calls go
// straight to the vendor.

import { DEFAULTS, GATEWAY } from './contract.js';

/** The IO side of the core's Router for one observed fetch. */
export class Router {
  /**
   * @param {{apiUrl: string, agentKey?: string, gatewayUrl?: string, gatewayServices?: string}} settings
   * @param {{ready: () => boolean, Router: new (agentKey: string | null, gatewayUrl: string | null, services: string | null) => any}} core the WebAssembly core
   * @param {Function} transport the caller's own fetch, never observed or routed itself
   */
  constructor(settings, core, transport) {
    this.settings = settings;
    this.core = core;
    this.transport = transport;
    this.machine = null;
    this.fetching = null;
  }

  /** The core's Router, once the WebAssembly module is in. */
  get router() {
    if (!this.machine && this.core.ready()) {
      const { agentKey, gatewayUrl, gatewayServices } = this.settings;
      this.machine = new this.core.Router(agentKey ?? null, gatewayUrl ?? null, gatewayServices ?? null);
    }
    return this.machine;
  }

  /**
   * Where a `method` call to `url` goes: the core's route (`{url, headers, keep, slug, ...}`:
   * the gateway URL, the headers to add, which of `headerNames` go along), or null (straight
   * to the vendor).
   * @param {string} url
   * @param {string} [method]
   * @param {string[]} [headerNames]
   */
  route(url, method = 'GET', headerNames = []) {
    this.prefetch();
    let href;
    try {
      href = new URL(url).href; // as fetch sends it
    } catch {
      return null;
    }
    const got = this.router?.route(Date.now(), method, href, headerNames);
    return got ? JSON.parse(got) : null;
  }

  /** Starts fetching the catalog and salt when the core asks for it; the fetch under way. */
  prefetch() {
    if (!this.fetching && this.router?.wantsFetch(Date.now())) {
      this.fetching = this.fetch().finally(() => {
        this.fetching = null;
      });
    }
    return this.fetching;
  }

  /** A routed call was answered `status` with body `reason`: whether the gateway refused it. */
  /**
   * @param {number} status
   * @param {unknown} reason
   */
  refused(status, reason) {
    const r = JSON.parse(this.router.refused(Date.now(), status, typeof reason === 'string' ? reason : null));
    if (r.gateway) this.prefetch();
    return r.gateway;
  }

  /** `{ready, agentId, saltId, services, counts}`. */
  status() {
    const s = this.router ? JSON.parse(this.router.status(Date.now())) : { ready: false, agent_id: null, salt_id: null, services: 0, counts: {} };
    return { ready: s.ready, agentId: s.agent_id, saltId: s.salt_id, services: s.services, counts: s.counts };
  }

  /**
   * @param {string} path
   * @param {Record<string, string>} [headers]
   */
  async get(path, headers = {}) {
    // Called as a plain function: a browser's fetch refuses any `this` but the global.
    const res = await this.transport.call(globalThis, `${this.settings.apiUrl}${path}`, {
      headers: { accept: 'application/json', ...headers },
      signal: AbortSignal.timeout(GATEWAY.FETCH_TIMEOUT_MS),
    });
    if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status}`);
    return res.text();
  }

  async fetch() {
    try {
      const [catalog, salt] = await Promise.all([this.get('/v1/services'), this.get('/v1/sampling/salt', { [DEFAULTS.AGENT_KEY_HEADER]: /** @type {string} observe routes only with a key */ (this.settings.agentKey) })]);
      this.router.loaded(Date.now(), catalog, salt);
    } catch {
      // never into the caller: calls simply go direct meanwhile
      this.router.fetchFailed(Date.now());
    }
  }
}
