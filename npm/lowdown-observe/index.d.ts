/** Where observations come from; sources are reported apart and never mixed. */
export type Source = 'organic' | 'seeded' | 'synthetic';

/** Options of {@link observe}. Each falls back to its environment variable in Node. */
export interface ObserveOptions {
  /** Lowdown API base URL. @default PROWL_API_URL, LOWDOWN_API_URL, then "http://127.0.0.1:7077" */
  apiUrl?: string;
  /** Agent key (`ak_…`) sent as `X-Agent-Key`; raises the observations' weight. @default PROWL_AGENT_KEY */
  agentKey?: string;
  /** Report only these hosts and their subdomains (array or "a.com,b.com"). @default PROWL_TELEMETRY_ALLOWLIST, no restriction */
  allowlist?: string[] | string;
  /** Report private and loopback hosts too (local testing only). @default PROWL_TELEMETRY_ALLOW_PRIVATE=1, false */
  allowPrivate?: boolean;
  /** @default "organic" */
  source?: Source;
  /** Fraction of calls reported, 0..1. @default 1 */
  sampleRate?: number;
  /** Workers: `ctx.waitUntil.bind(ctx)`, so delivery outlives the response. */
  waitUntil?: (promise: Promise<unknown>) => void;
  /** Node: let the process exit before a pending delivery timer fires. @default false */
  unrefTimers?: boolean;
  /** `false` returns `fetch` unchanged. @default PROWL_TELEMETRY !== "0" */
  enabled?: boolean;
  /**
   * The Prowl sampling gateway. With `agentKey` too, calls to catalog services this agent is
   * sampled for, and that a service's `allow` rules match, go through it (server-side code
   * only: it sends the agent key). For an `inject` service such a call runs on the gateway
   * operator's vendor account and carries none of your `Authorization` or `Cookie`.
   * @default PROWL_GATEWAY_URL, off
   */
  gatewayUrl?: string;
  /**
   * Route only these catalog services (slugs or service ids); unset, every one whose rules
   * match. Every other call goes straight to the vendor, observed as before.
   * @default PROWL_GATEWAY_SERVICES, every service
   */
  gatewayServices?: string | string[];
}

/** What the gateway router knows (`observedFetch.lowdown.gateway.status()`). */
export interface GatewayStatus {
  /** The catalog and a usable salt are in: sampled calls are routed. */
  ready: boolean;
  agentId: string | null;
  saltId: string | null;
  /** Catalog services it can route. */
  services: number;
  counts: { routed: number; direct: number; fetches: number; fetch_failures: number; refused: number };
}

/** The router behind an observed fetch when a gateway is configured. */
export interface GatewayRouter {
  status(): GatewayStatus;
  /** Fetch the catalog and salt now (in the background); resolves when that fetch ends. */
  prefetch(): Promise<void> | null;
}

/** Delivery counters of an observed fetch (`observedFetch.lowdown.stats`). */
export interface ObserveStats {
  queued: number;
  sent: number;
  dropped: number;
  failed: number;
  blocked: number;
  errors: number;
  unready: number;
}

/** The reporter behind an observed fetch. */
export interface Reporter {
  readonly stats: ObserveStats;
  /** Sends everything queued now; resolves when delivered or abandoned (never rejects). */
  flush(): Promise<void>;
  /** The sampling-gateway router, or null when routing is off. */
  readonly gateway: GatewayRouter | null;
}

/** `fetch` with the same signature and behaviour, reporting each call to Lowdown. */
export type ObservedFetch = typeof fetch & { readonly lowdown: Reporter };

/**
 * Wraps `fetch`: same response object, same errors, bodies untouched. Each call reports
 * `{host, method, status | null, latency_ms, response_bytes, source}` after the core's
 * privacy filter; never the path, query, headers or body. Latency is time to the response
 * headers; `response_bytes` is the `Content-Length` (null when absent).
 */
export function observe(fetch: typeof globalThis.fetch, options?: ObserveOptions): ObservedFetch;

/** Browsers and edge: load the WebAssembly core (fetched next to the module unless given). */
export function init(input?: RequestInfo | URL | BufferSource | WebAssembly.Module): Promise<void>;
/** Workers: load the WebAssembly core from a compiled module (`import wasm from "lowdown-observe/lowdown_bg.wasm"`). */
export function initSync(input: WebAssembly.Module | { module: WebAssembly.Module }): void;

/** Default Lowdown API base URL. */
export const DEFAULT_API_URL: string;
