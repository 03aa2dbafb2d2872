// Routing sampled calls through the Prowl sampling gateway (SPEC §10), on when an agent key
// and a gateway URL are both set. The decisions are the core's (WebAssembly): `decide` for
// sampling, `GatewayRules` for whether the gateway carries a call (a service's `allow` rules)
// and which request headers go with it, `gatewayServiceSelected` for PROWL_GATEWAY_SERVICES.
// This file keeps the catalog and salt they need, fetched in the background so a call never
// waits: until the first fetch answers, calls go straight to the vendor.

/** Milliseconds between catalog refreshes. */
export const CATALOG_TTL_MS = 3_600_000;
/** Milliseconds before a failed fetch is tried again. */
export const RETRY_MS = 60_000;
/** Milliseconds one fetch may take. */
export const FETCH_TIMEOUT_MS = 5_000;
/** The reasons with which the gateway itself (not the vendor) refuses a call. */
export const GATEWAY_REASONS = new Set([
  'unknown_service', 'missing_agent_key', 'unknown_agent_key', 'missing_salt_id', 'missing_decision',
  'malformed_decision', 'unknown_salt', 'expired_salt', 'wrong_decision', 'not_sampled',
  'below_min_reputation', 'no_credential', 'not_allowed', 'bad_path', 'gateway_rate_limited',
]);
/** Statuses a gateway refusal can have. */
export const REFUSAL_STATUSES = new Set([400, 403, 404, 429, 503]);

const DEFAULT_PORT = { 'http:': '80', 'https:': '443' };
const origin = (u) => `${u.protocol}//${u.hostname.toLowerCase().replace(/\.$/, '')}:${u.port || DEFAULT_PORT[u.protocol] || ''}`;

function services(answer, core) {
  const byOrigin = new Map();
  for (const s of answer?.services ?? []) {
    try {
      const up = new URL(s.upstream);
      const svc = {
        slug: String(s.slug),
        serviceId: String(s.service_id),
        rate: Number(s.sampling_rate),
        hosts: s.hosts.map((h) => String(h).toLowerCase()),
        base: up.pathname.replace(/\/+$/, ''),
        vendorPrefix: `${up.origin}${up.pathname.replace(/\/+$/, '')}`,
        rules: new core.GatewayRules((s.allow ?? []).map(String), s.mode ?? null, s.credential_header ?? null),
      };
      if (!byOrigin.has(origin(up))) byOrigin.set(origin(up), []);
      byOrigin.get(origin(up)).push(svc);
    } catch {
      // an entry this client cannot use is one it sends direct
    }
  }
  for (const list of byOrigin.values()) list.sort((a, b) => b.base.length - a.base.length);
  return byOrigin;
}

/**
 * The catalog, salt and decisions of one observed fetch. `route(url)` answers at once from
 * what is known; fetching happens behind it.
 */
export class Router {
  /**
   * @param {{apiUrl: string, agentKey: string, gatewayUrl: string, gatewayServices?: string|null}} settings
   * @param {{decide: Function, ready: () => boolean, gatewayServiceSelected: Function}} core the WebAssembly core (`decide` returns JSON text)
   * @param {Function} transport the caller's own fetch, never observed or routed itself
   */
  constructor(settings, core, transport) {
    this.settings = settings;
    this.core = core;
    this.transport = transport;
    this.state = null;
    this.fetching = null;
    this.retryAt = 0;
    this.counts = { routed: 0, direct: 0, fetches: 0, fetch_failures: 0, refused: 0 };
  }

  /**
   * Where a `method` call to `url` goes: `{url, headers, service}` through the gateway, or
   * null (straight to the vendor). Routed only when the service's rules carry it and
   * PROWL_GATEWAY_SERVICES (`gatewayServices`) names it or is unset.
   * @param {string} url the absolute vendor URL
   * @param {string} method the request method, upper case
   */
  route(url, method = 'GET') {
    const now = Date.now();
    const state = this.state;
    if (!state || now >= state.refreshAt) this.prefetch(now);
    if (!state || now >= state.usableUntil || !this.core.ready()) return null;
    let u;
    try {
      u = new URL(url);
    } catch {
      return null;
    }
    const host = u.hostname.toLowerCase().replace(/\.$/, '');
    for (const svc of state.byOrigin.get(origin(u)) ?? []) {
      if (!svc.hosts.some((h) => host === h || host.endsWith(`.${h}`))) continue;
      if (svc.base && u.pathname !== svc.base && !u.pathname.startsWith(`${svc.base}/`)) continue;
      const target = `${u.pathname.slice(svc.base.length) || '/'}${u.search}`;
      if (!this.core.gatewayServiceSelected(this.settings.gatewayServices ?? null, svc.slug, svc.serviceId)) continue;
      if (JSON.parse(svc.rules.check(method, target)).verdict !== 'allowed') continue;
      let roll = state.decisions.get(svc.serviceId);
      if (roll === undefined) {
        const d = JSON.parse(this.core.decide(svc.serviceId, state.agentId, state.saltId, state.salt, svc.rate));
        roll = d.sampled ? d.roll : false;
        state.decisions.set(svc.serviceId, roll);
      }
      if (!roll) {
        this.counts.direct += 1;
        return null;
      }
      this.counts.routed += 1;
      return {
        url: `${this.settings.gatewayUrl}/${svc.slug}${target}`,
        headers: [['x-agent-key', this.settings.agentKey], ['x-prowl-salt-id', state.saltId], ['x-prowl-sample-decision', roll]],
        service: svc,
      };
    }
    return null;
  }

  /** Starts fetching the catalog and salt unless a fetch runs or failed a moment ago. */
  prefetch(now = Date.now()) {
    if (this.fetching || now < this.retryAt) return this.fetching;
    this.fetching = this.fetch().finally(() => {
      this.fetching = null;
    });
    return this.fetching;
  }

  /**
   * The gateway refused a routed call: forget what was fetched, and fetch again now when the
   * salt or the catalog changed, after a minute otherwise (a limit, a missing credential).
   */
  refused(reason) {
    this.counts.refused += 1;
    this.state = null;
    const stale = ['expired_salt', 'unknown_salt', 'wrong_decision', 'not_sampled', 'not_allowed', 'bad_path'].includes(reason);
    this.retryAt = stale ? 0 : Date.now() + RETRY_MS;
    if (stale) this.prefetch();
  }

  /** `{ready, agentId, saltId, services, counts}`. */
  status() {
    const s = this.state;
    return {
      ready: Boolean(s && Date.now() < s.usableUntil),
      agentId: s?.agentId ?? null,
      saltId: s?.saltId ?? null,
      services: s ? [...s.byOrigin.values()].reduce((n, l) => n + l.length, 0) : 0,
      counts: { ...this.counts },
    };
  }

  async get(path, headers = {}) {
    // Called as a plain function: a browser's fetch refuses any `this` but the global.
    const res = await this.transport.call(globalThis, `${this.settings.apiUrl}${path}`, {
      headers: { accept: 'application/json', ...headers },
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
    if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status}`);
    return res.json();
  }

  async fetch() {
    this.counts.fetches += 1;
    try {
      const [catalog, salt] = await Promise.all([this.get('/v1/services'), this.get('/v1/sampling/salt', { 'x-agent-key': this.settings.agentKey })]);
      const now = Date.now();
      this.state = {
        byOrigin: services(catalog, this.core),
        agentId: String(salt.agent_id),
        saltId: String(salt.salt_id),
        salt: String(salt.salt),
        refreshAt: Math.min(Date.parse(salt.valid_until), now + CATALOG_TTL_MS),
        usableUntil: Date.parse(salt.accepted_until ?? salt.valid_until),
        decisions: new Map(),
      };
      this.retryAt = 0;
    } catch {
      // never into the caller: calls simply go direct meanwhile
      this.counts.fetch_failures += 1;
      this.retryAt = Date.now() + RETRY_MS;
    }
  }
}
