// gateway_router.json: what a client routes through the sampling gateway (SPEC §10), as
// scripted steps against one Router; gateway_vendor_location.json: a gateway redirect mapped
// back onto the vendor. The expectations come from this independent model: WHATWG `URL` for
// the catalog's upstreams and the calls (http and https only, no credentials), `Date.parse`
// for the salt's times, `crypto` sha256 for the rolls, and the allow rules and header
// allowlist written again as regular expressions and `Array.includes`.
import { writeVectors, sha256 } from "./common.mjs";

const TTL = 3_600_000;
const RETRY = 60_000;
const REASONS = ["unknown_service", "missing_agent_key", "unknown_agent_key", "missing_salt_id", "missing_decision",
  "malformed_decision", "unknown_salt", "expired_salt", "wrong_decision", "not_sampled", "below_min_reputation",
  "no_credential", "not_allowed", "bad_path", "gateway_rate_limited"];
const STALE = ["expired_salt", "unknown_salt", "wrong_decision", "not_sampled", "not_allowed", "bad_path"];
const STATUSES = [400, 403, 404, 429, 503];
const KEPT = ["accept", "accept-encoding", "content-encoding", "content-length", "content-type", "idempotency-key",
  "if-match", "if-none-match", "user-agent", "transfer-encoding"];

// (Two expressions: under the `i` flag the character range would fold `s` and `k` into it.)
const badPath = (p) => !p.startsWith("/") || /[\\# \u0000-\u001f\u007f-\uffff]/u.test(p) || /%(?![0-9a-fA-F]{2})|%(2e|2f|5c|25)/i.test(p)
  || p.slice(1).split("/").some((s, i, all) => s === "." || s === ".." || (s === "" && i + 1 < all.length));

function rules(s) {
  const allow = s.allow ?? [];
  const mode = s.mode ?? null;
  const header = s.credential_header || null;
  if (!Array.isArray(allow) || allow.some((a) => typeof a !== "string")) return null;
  if ((mode !== null && typeof mode !== "string") || (s.credential_header != null && typeof s.credential_header !== "string")) return null;
  if (mode !== null && mode !== "inject" && mode !== "passthrough") return null;
  if (mode === "passthrough" && !header) return null;
  const parsed = allow.map((e) => /^([A-Z]{1,16}) (\/[^?]*)$/.exec(e)).map((m) => m && !badPath(m[2]) ? [m[1], m[2].replace(/\/+$/, "") || "/"] : null);
  if (parsed.includes(null)) return null;
  const pass = mode === "passthrough" ? header.toLowerCase() : null;
  return {
    check: (method, target) => {
      const path = target.split("?")[0] || "/";
      return !badPath(path) && parsed.some(([m, p]) => m === method && (p === "/" || path === p || path.startsWith(p + "/")));
    },
    keep: (names) => names.filter((n) => KEPT.includes(n.toLowerCase()) || n.toLowerCase() === pass),
  };
}

/** The origin of an http(s) URL without credentials (WHATWG `URL`), and its path and query
 * as written (never normalised: the path is checked as sent), or null. */
function parse(url) {
  let u;
  try { u = new URL(url); } catch { return null; }
  const m = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/([^/?#]*)([^#]*)/.exec(url);
  if (!m || !["http:", "https:"].includes(u.protocol) || m[1].includes("@")) return null;
  const port = Number(u.port || (u.protocol === "http:" ? 80 : 443));
  const hostname = u.hostname.replace(/\.$/, "");
  const [path, ...q] = m[2].split("?");
  return { hostname, path: path || "/", query: q.join("?"), origin: `${u.protocol}//${hostname}:${port}`, vendor: `${u.protocol}//${hostname}${u.port ? `:${u.port}` : ""}` };
}

function service(s) {
  if (typeof s !== "object" || s === null) return null;
  if (typeof s.slug !== "string" || !/^[a-z0-9-]{1,63}$/.test(s.slug)) return null;
  if (typeof s.service_id !== "string" || !s.service_id) return null;
  if (typeof s.sampling_rate !== "number" || !(s.sampling_rate >= 0 && s.sampling_rate <= 1)) return null;
  if (!Array.isArray(s.hosts) || s.hosts.some((h) => typeof h !== "string")) return null;
  if (typeof s.upstream !== "string" || /[?#]/.test(s.upstream)) return null;
  const up = parse(s.upstream);
  const r = rules(s);
  if (!up || !r) return null;
  const base = up.path.replace(/\/+$/, "");
  return { slug: s.slug, id: s.service_id, rate: s.sampling_rate, hosts: s.hosts.map((h) => h.replace(/\.$/, "").toLowerCase()), origin: up.origin, base, vendor: up.vendor + base, rules: r };
}

function load(now, catalog, salt) {
  let c, t;
  try { c = JSON.parse(catalog); t = JSON.parse(salt); } catch { return null; }
  if (!c || !Array.isArray(c.services) || !t || typeof t !== "object") return null;
  const iso = (v) => (typeof v === "string" && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(v) ? Date.parse(v) : NaN);
  const validUntil = iso(t.valid_until);
  const usable = t.accepted_until == null ? validUntil : iso(t.accepted_until);
  if (!Number.isFinite(validUntil) || !Number.isFinite(usable) || usable <= now) return null;
  if (typeof t.agent_id !== "string" || !t.agent_id || typeof t.salt !== "string" || !t.salt) return null;
  if (typeof t.salt_id !== "string" || !/^[\x21-\x7e]+$/.test(t.salt_id)) return null;
  const services = c.services.map(service).filter(Boolean);
  services.sort((a, b) => b.base.length - a.base.length);
  let refresh = Math.min(validUntil, now + TTL);
  if (refresh <= now) refresh = now + RETRY;
  return { services, agent: t.agent_id, saltId: t.salt_id, salt: t.salt, refresh, usable, decisions: new Map() };
}

const selected = (filter, slug, id) => {
  const f = (filter ?? "").trim();
  return !f || f.split(",").map((n) => n.trim()).some((n) => n && (n === slug || n === id));
};

function model({ agent_key, gateway_url, services }, steps) {
  const key = agent_key || null;
  const gateway = gateway_url ? gateway_url.replace(/\/+$/, "") || null : null;
  const on = Boolean(key && gateway);
  let selection = services ?? null;
  let state = null, fetching = false, retryAt = 0;
  const counts = { routed: 0, direct: 0, fetches: 0, fetch_failures: 0, refused: 0 };
  const failed = (now) => { fetching = false; counts.fetch_failures += 1; retryAt = now + RETRY; };
  const out = [];
  for (const s of steps) {
    const [op, a] = Object.entries(s)[0];
    if (op === "wants_fetch") {
      const want = on && !fetching && a >= retryAt && (!state || a >= state.refresh);
      if (want) { fetching = true; counts.fetches += 1; }
      out.push(want);
    } else if (op === "loaded") {
      const text = (v) => (typeof v === "string" ? v : JSON.stringify(v));
      const got = load(a[0], text(a[1]), text(a[2]));
      if (got) { state = got; fetching = false; retryAt = 0; } else failed(a[0]);
      out.push(Boolean(got));
    } else if (op === "fetch_failed") {
      failed(a);
      out.push(null);
    } else if (op === "select") {
      selection = a;
      out.push(null);
    } else if (op === "route") {
      const [now, method, url, names] = a;
      out.push(route(now, method, url, names));
    } else if (op === "refused") {
      const [now, status, reason] = a;
      if (!STATUSES.includes(status) || !REASONS.includes(reason)) out.push({ gateway: false, fetch_at: null });
      else {
        counts.refused += 1;
        state = null;
        retryAt = STALE.includes(reason) ? 0 : now + RETRY;
        out.push({ gateway: true, fetch_at: Math.max(retryAt, now) });
      }
    } else if (op === "status") {
      out.push({ ready: Boolean(state && a < state.usable), agent_id: state?.agent ?? null, salt_id: state?.saltId ?? null, services: state?.services.length ?? 0, counts: { ...counts } });
    } else throw new Error(op);
  }
  return out;

  function route(now, method, url, names) {
    if (!on || !state || now >= state.usable) return null;
    const p = parse(url);
    if (!p) return null;
    const { hostname: host, path, query } = p;
    for (const svc of state.services) {
      if (svc.origin !== p.origin || !svc.hosts.some((h) => host === h || host.endsWith(`.${h}`))) continue;
      if (svc.base && path !== svc.base && !path.startsWith(`${svc.base}/`)) continue;
      const target = (path.slice(svc.base.length) || "/") + (query ? `?${query}` : "");
      if (!selected(selection, svc.slug, svc.id) || !svc.rules.check(method, target)) continue;
      if (!state.decisions.has(svc.id)) {
        const roll = sha256([svc.id, state.agent, state.saltId, state.salt].join("|"));
        state.decisions.set(svc.id, parseInt(roll.slice(0, 8), 16) / 2 ** 32 < svc.rate ? roll : null);
      }
      const roll = state.decisions.get(svc.id);
      if (!roll) { counts.direct += 1; return null; }
      counts.routed += 1;
      return {
        url: `${gateway}/${svc.slug}${target}`, slug: svc.slug, service_id: svc.id,
        headers: [["x-agent-key", key], ["x-prowl-salt-id", state.saltId], ["x-prowl-sample-decision", roll]],
        keep: svc.rules.keep(names), vendor: svc.vendor,
      };
    }
    return null;
  }
}

// ---- the scripts ----------------------------------------------------------------------------
const T0 = Date.parse("2026-12-02T12:00:00Z");
const SETTINGS = { agent_key: "ak_test", gateway_url: "https://gw.example/", services: null };
const SALT = { salt_id: "s_20261202", salt: "ab".repeat(32), valid_until: "2026-12-03T00:00:00Z", accepted_until: "2026-12-03T01:00:00Z", agent_id: "ag_1" };
const svc = (slug, upstream, more = {}) => ({ slug, service_id: `svc_${slug}`, upstream, hosts: ["api.vendor.example"], sampling_rate: 1, allow: ["GET /", "POST /"], ...more });
const CATALOG = { services: [
  svc("root", "https://api.vendor.example"),
  svc("v1", "https://api.vendor.example/v1/", { allow: ["POST /charges", "GET /search"], mode: "inject", credential_header: "X-Vendor-Key" }),
  svc("never", "https://api.vendor.example/never", { sampling_rate: 0 }),
  svc("mine", "https://api.vendor.example/mine", { mode: "passthrough", credential_header: "Authorization" }),
  svc("plain", "http://api.vendor.example:8080/p"),
] };
const ready = [{ wants_fetch: T0 }, { loaded: [T0, CATALOG, SALT] }];
const H = ["Authorization", "Cookie", "Content-Type", "X-Custom", "Accept", "Transfer-Encoding", "X-Vendor-Key"];
const at = (ms) => T0 + ms;

const hostile = { services: [
  svc("bad-url", "not a url"),
  svc("ftp", "ftp://api.vendor.example/x"),
  svc("creds", "https://user:pw@api.vendor.example/c"),
  svc("query", "https://api.vendor.example/q?x=1"),
  svc("other", "https://other.example/o"),
  svc("huge", "https://api.vendor.example/huge", { sampling_rate: 1e308 }),
  svc("negative", "https://api.vendor.example/neg", { sampling_rate: -1 }),
  svc("textrate", "https://api.vendor.example/text", { sampling_rate: "1" }),
  { slug: "noid", upstream: "https://api.vendor.example/noid", hosts: ["api.vendor.example"], sampling_rate: 1, allow: ["GET /"] },
  { slug: "nohosts", service_id: "svc_nohosts", upstream: "https://api.vendor.example/nohosts", sampling_rate: 1, allow: ["GET /"] },
  svc("Bad/Slug", "https://api.vendor.example/slug"),
  svc("badrule", "https://api.vendor.example/rule", { allow: ["get /"] }),
  svc("badmode", "https://api.vendor.example/mode", { mode: "steal" }),
  svc("nopass", "https://api.vendor.example/nopass", { mode: "passthrough" }),
  svc("numhosts", "https://api.vendor.example/numhosts", { hosts: [7] }),
  svc("api", "https://api.vendor.example/api"),
  42,
  null,
] };

const cases = [
  ["off without an agent key: never fetches, never routes", { ...SETTINGS, agent_key: null },
    [{ wants_fetch: T0 }, { loaded: [T0, CATALOG, SALT] }, { route: [T0, "GET", "https://api.vendor.example/x", []] }, { status: T0 }]],
  ["off without a gateway URL", { ...SETTINGS, gateway_url: "" }, [{ wants_fetch: T0 }, { route: [T0, "GET", "https://api.vendor.example/x", []] }]],
  ["direct until the first fetch answers; one fetch at a time", SETTINGS,
    [{ route: [T0, "GET", "https://api.vendor.example/x", []] }, { wants_fetch: T0 }, { wants_fetch: T0 }, { status: T0 },
      { loaded: [T0, CATALOG, SALT] }, { wants_fetch: at(1) }, { status: at(1) }]],
  ["routed: the gateway URL, the three headers, the caller's headers the gateway forwards", SETTINGS,
    [...ready, { route: [at(1), "POST", "https://api.vendor.example/v1/charges?amount=5&x=%20", H] }, { route: [at(2), "GET", "https://API.Vendor.Example./other/thing", H] }, { status: at(2) }]],
  ["longest base first; a base continued without a slash is not under it", SETTINGS,
    [...ready, { route: [at(1), "GET", "https://api.vendor.example/v1/search", []] }, { route: [at(1), "GET", "https://api.vendor.example/v1x/search", []] },
      { route: [at(1), "GET", "https://api.vendor.example/v1", []] }, { route: [at(1), "GET", "https://api.vendor.example/neverland", []] }]],
  ["a service whose rules refuse a call leaves it to the next base (here the root); a bad path nowhere", SETTINGS,
    [...ready, { route: [at(1), "GET", "https://api.vendor.example/v1/charges", []] }, { route: [at(1), "GET", "https://api.vendor.example/v1/search/%2e%2e/admin", []] }, { status: at(1) }]],
  ["an unsampled service goes direct and counts, every time, from one decision", SETTINGS,
    [...ready, { route: [at(1), "GET", "https://api.vendor.example/never/x", []] }, { route: [at(2), "POST", "https://api.vendor.example/never/y", []] }, { status: at(2) }]],
  ["passthrough keeps the service's credential header", SETTINGS, [...ready, { route: [at(1), "POST", "https://api.vendor.example/mine/v1/customers", H] }]],
  ["origin: scheme, host and port all match; subdomains of a catalog host", SETTINGS,
    [...ready, { route: [at(1), "GET", "http://api.vendor.example/x", []] }, { route: [at(1), "GET", "https://api.vendor.example:8443/x", []] },
      { route: [at(1), "GET", "http://api.vendor.example:8080/p/x", []] }, { route: [at(1), "GET", "https://api.vendor.example:443/y", []] },
      { route: [at(1), "GET", "https://evil-api.vendor.example/x", []] }]],
  ["unusable call URLs go direct", SETTINGS,
    [...ready, { route: [at(1), "GET", "/relative", []] }, { route: [at(1), "GET", "ws://api.vendor.example/x", []] }, { route: [at(1), "GET", "https://u:p@api.vendor.example/x", []] }, { route: [at(1), "GET", "https://api.vendor.example/x#frag", []] }]],
  ["hostile catalog entries are dropped, the rest still route", SETTINGS,
    [{ wants_fetch: T0 }, { loaded: [T0, hostile, SALT] }, { status: T0 },
      ...["/bad-url/x", "/c/x", "/q/x", "/huge/x", "/neg/x", "/text/x", "/noid/x", "/nohosts/x", "/slug/x", "/rule/x", "/mode/x", "/nopass/x", "/numhosts/x", "/api/x", "/apix"].map((p) => ({ route: [at(1), "GET", `https://api.vendor.example${p}`, []] })),
      { route: [at(1), "GET", "https://other.example/o/x", []] }]],
  ["PROWL_GATEWAY_SERVICES names services by slug or id; a change applies at once", { ...SETTINGS, services: "v1, svc_mine" },
    [...ready, { route: [at(1), "GET", "https://api.vendor.example/x", []] }, { route: [at(1), "GET", "https://api.vendor.example/v1/search", []] },
      { select: "none" }, { route: [at(2), "GET", "https://api.vendor.example/v1/search", []] }, { select: null }, { route: [at(3), "GET", "https://api.vendor.example/x", []] }]],
  ["the catalog is fetched again after an hour, the salt at its valid_until", SETTINGS,
    [...ready, { wants_fetch: at(TTL - 1) }, { wants_fetch: at(TTL) }, { loaded: [at(TTL), CATALOG, { ...SALT, valid_until: "2026-12-02T13:30:00Z" }] }, { wants_fetch: at(TTL + 1_799_999) }, { wants_fetch: at(TTL + 1_800_000) }]],
  ["a salt is used until accepted_until, then nothing routes until the next one is in", SETTINGS,
    [{ wants_fetch: T0 }, { loaded: [T0, CATALOG, { ...SALT, valid_until: "2026-12-02T12:30:00Z", accepted_until: "2026-12-02T12:40:00.500Z" }] },
      { route: [at(2_400_499), "GET", "https://api.vendor.example/x", []] }, { route: [at(2_400_500), "GET", "https://api.vendor.example/x", []] }, { status: at(2_400_500) }]],
  ["without accepted_until, valid_until ends the salt", SETTINGS,
    [{ wants_fetch: T0 }, { loaded: [T0, CATALOG, { ...SALT, valid_until: "2026-12-02T14:00:00+01:00", accepted_until: undefined }] }, { status: T0 }, { wants_fetch: at(1) }]],
  ["an expired salt is not loaded: a failure, retried in a minute", SETTINGS,
    [{ wants_fetch: T0 }, { loaded: [T0, CATALOG, { ...SALT, valid_until: "2026-12-02T11:00:00Z", accepted_until: "2026-12-02T12:00:00Z" }] },
      { route: [at(1), "GET", "https://api.vendor.example/x", []] }, { wants_fetch: at(RETRY - 1) }, { wants_fetch: at(RETRY) }, { status: at(RETRY) }]],
  ["in the overlap hour the old salt routes and is asked for again each minute", SETTINGS,
    [{ wants_fetch: T0 }, { loaded: [T0, CATALOG, { ...SALT, valid_until: "2026-12-02T11:30:00Z", accepted_until: "2026-12-02T12:30:00Z" }] },
      { route: [at(1), "GET", "https://api.vendor.example/x", []] }, { wants_fetch: at(RETRY - 1) }, { wants_fetch: at(RETRY) }]],
  ["answers that are not the API's are failures", SETTINGS,
    [{ wants_fetch: T0 }, { loaded: [T0, "<html>", SALT] }, { wants_fetch: at(RETRY) }, { loaded: [at(RETRY), { items: [] }, SALT] },
      { wants_fetch: at(2 * RETRY) }, { loaded: [at(2 * RETRY), CATALOG, { ...SALT, agent_id: 5 }] }, { wants_fetch: at(3 * RETRY) }, { loaded: [at(3 * RETRY), CATALOG, { ...SALT, salt_id: "s 1\r\nX: y" }] },
      { wants_fetch: at(4 * RETRY) }, { loaded: [at(4 * RETRY), CATALOG, { ...SALT, valid_until: "tomorrow" }] }, { status: at(4 * RETRY) }]],
  ["a failed fetch is tried again after a minute; what was in stays in use", SETTINGS,
    [...ready, { wants_fetch: at(TTL) }, { fetch_failed: at(TTL) }, { route: [at(TTL + 1), "GET", "https://api.vendor.example/x", []] }, { wants_fetch: at(TTL + RETRY - 1) }, { wants_fetch: at(TTL + RETRY) }, { status: at(TTL + RETRY) }]],
  ["a stale refusal drops everything and fetches again at once", SETTINGS,
    [...ready, { route: [at(1), "GET", "https://api.vendor.example/x", []] }, { refused: [at(2), 403, "wrong_decision"] }, { route: [at(3), "GET", "https://api.vendor.example/x", []] }, { status: at(3) }, { wants_fetch: at(3) }]],
  ["every stale reason", SETTINGS, STALE.flatMap((r, i) => [...ready, { refused: [at(i), r === "bad_path" ? 400 : 403, r] }, { wants_fetch: at(i) }])],
  ["a limit or a missing credential: fetch again in a minute", SETTINGS,
    [...ready, { refused: [at(1), 429, "gateway_rate_limited"] }, { wants_fetch: at(RETRY) }, { wants_fetch: at(RETRY + 1) }, { loaded: [at(RETRY + 1), CATALOG, SALT] },
      { refused: [at(RETRY + 2), 503, "no_credential"] }, { refused: [at(RETRY + 3), 403, "below_min_reputation"] }, { refused: [at(RETRY + 4), 404, "unknown_service"] }, { status: at(RETRY + 4) }]],
  ["the vendor's own answers are not the gateway's refusals", SETTINGS,
    [...ready, { refused: [at(1), 403, "forbidden"] }, { refused: [at(1), 403, null] }, { refused: [at(1), 500, "expired_salt"] }, { refused: [at(1), 401, "unknown_agent_key"] }, { status: at(1) }]],
  ["a fetch under way when the refusal came is still taken", SETTINGS,
    [...ready, { wants_fetch: at(TTL) }, { refused: [at(TTL + 1), 403, "unknown_salt"] }, { wants_fetch: at(TTL + 1) }, { loaded: [at(TTL + 2), CATALOG, SALT] }, { status: at(TTL + 2) }]],
];

const routerCases = cases.map(([name, settings, steps]) => ({ name, input: { settings, steps: JSON.parse(JSON.stringify(steps)) }, expected: model(settings, JSON.parse(JSON.stringify(steps))) }));
writeVectors("gateway_router.json", "gateway_router",
  "Router::new(agent_key, gateway_url, services) driven by steps, one result each: wants_fetch now → bool; loaded [now, catalog, salt] (objects are sent as their JSON text) → bool; fetch_failed now → null; select services → null; route [now, method, url, header_names] → {url, slug, service_id, headers, keep, vendor} or null; refused [now, status, reason] → {gateway, fetch_at}; status now → {ready, agent_id, salt_id, services, counts}.",
  routerCases);

// ---- vendor_location ----------------------------------------------------------------------
function vendorLocation(gateway, vendor, slug, location) {
  const [, origin, base] = /^([a-z]+:\/\/[^/]*)(.*)$/.exec(gateway.replace(/\/+$/, ""));
  let path = location;
  if (/^https?:\/\//.test(location)) {
    if (!location.startsWith(origin) || !/^([/?]|$)/.test(location.slice(origin.length))) return location;
    path = location.slice(origin.length);
  }
  const prefix = `${base}/${slug}`;
  if (path === prefix) return `${vendor}/`;
  if (path.startsWith(`${prefix}/`) || path.startsWith(`${prefix}?`)) return vendor + path.slice(prefix.length);
  return location;
}
const V = "https://api.vendor.example/v1";
const locCases = [
  ["a path on the gateway", "https://gw.example", "/v1/landed", "/v1/charges/ch_1"],
  ["the service root", "https://gw.example", "/v1", "/v1"],
  ["a query on the service root", "https://gw.example", "/v1", "/v1?page=2"],
  ["absolute on the gateway", "https://gw.example", "/v1/landed", "https://gw.example/v1/landed?x=1"],
  ["a gateway under a path", "https://example.org/gw/", "/v1/landed", "https://example.org/gw/v1/landed"],
  ["a gateway under a path, relative", "https://example.org/gw", "/v1/landed", "/gw/v1/landed"],
  ["another service's path is left alone", "https://gw.example", "/v1x/landed", "/v1x/landed"],
  ["another host is left alone", "https://gw.example", "/v1/landed", "https://elsewhere.example/v1/landed"],
  ["a host that extends the gateway's is left alone", "https://gw.example", "/v1/landed", "https://gw.example.evil/v1/landed"],
].map(([name, gateway, _, location]) => ({ name, input: { gateway_url: gateway, vendor: V, slug: "v1", location }, expected: vendorLocation(gateway, V, "v1", location) }));
writeVectors("gateway_vendor_location.json", "gateway_vendor_location",
  "Router::new(key, gateway_url, None).vendor_location(vendor, slug, location): a redirect's Location on the gateway (/{slug}/… or absolute on it) as the vendor URL it stands for; any other location unchanged.",
  locCases);
