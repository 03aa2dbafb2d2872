// How each vector file's `operation` maps onto the JavaScript binding (lowdown-core: the napi
// build and the WebAssembly build export the same names and shapes, so one table serves both).
//
// The binding exposes what its hosts use (the proxy, wrap, the editor extension, observe).
// Every other operation is listed in NOT_EXPOSED with the binding name it would have: the
// runner checks that the binding really has no such export, so an operation cannot be exposed
// without its vectors running. A vector file whose operation is in neither table fails.

import { bytes, string } from './load.mjs';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** logdiff.json: scripted steps against one LogDiff; the results of `offset` and `take`. */
function logdiff(api, { options, steps }) {
  const ld = new api.LogDiff(options == null ? null : JSON.stringify(options));
  const out = [];
  for (const s of steps) {
    if ('watch' in s) ld.watch(s.watch, s.size ?? null);
    else if ('feed' in s) ld.feed(s.feed, s.size, bytes(s.data));
    else if ('restart' in s) ld.restart(s.restart);
    else if ('offset' in s) out.push(ld.offset(s.offset));
    else if ('take' in s) out.push(ld.takeBlock(s.take));
    else throw new Error(`unknown logdiff step ${JSON.stringify(s)}`);
  }
  return out;
}

/** Vector numbers may be written as the strings NaN, Infinity and -Infinity. */
const number = (v) => (typeof v === 'string' ? Number(v) : v);
const json = (text) => (text == null ? null : JSON.parse(text));

/** telemetry_budget.json: scripted steps against one TelemetryBudget; take and wait results. */
function telemetryBudget(api, { with_agent_key, steps }) {
  const b = new api.TelemetryBudget(with_agent_key);
  const out = [];
  for (const s of steps) {
    if ('take' in s) out.push(b.take(s.take[0], s.take[1]));
    else if ('refused' in s) b.refused(s.refused[0], number(s.refused[1]));
    else if ('answered' in s) out.push(JSON.parse(b.answered(...s.answered)));
    else if ('wait' in s) out.push(b.waitMs(s.wait));
  }
  return out;
}

/** gateway_router.json: scripted steps against one Router, one result each. */
function gatewayRouter(api, { settings, steps }) {
  const r = new api.Router(settings.agent_key ?? null, settings.gateway_url ?? null, settings.services ?? null);
  const text = (v) => (typeof v === 'string' ? v : JSON.stringify(v));
  return steps.map((s) => {
    const [op, a] = Object.entries(s)[0];
    switch (op) {
      case 'wants_fetch': return r.wantsFetch(a);
      case 'loaded': return r.loaded(a[0], text(a[1]), text(a[2]));
      case 'fetch_failed': return r.fetchFailed(a) ?? null;
      case 'select': return r.select(a) ?? null;
      case 'route': { const got = r.route(...a); return got === null ? null : JSON.parse(got); }
      case 'refused': return JSON.parse(r.refused(...a));
      case 'status': return JSON.parse(r.status(a));
      default: throw new Error(`unknown step ${op}`);
    }
  });
}

/**
 * spool_claim.json, spool_write.json, node_identity_load.json: one plan, started, then fed
 * what the host saw (a listing, a read's text, an IO result, a delivery's finish); the step
 * after each.
 */
function plan(make) {
  return (api, { plan: p, feed }) => {
    const m = make(api, p);
    const out = [JSON.parse(m.start())];
    for (const f of feed) {
      if ('listing' in f) out.push(JSON.parse(m.listed(f.listing.map((e) => e[0]), f.listing.map((e) => e[1] ?? NaN))));
      else if ('finish' in f) out.push(JSON.parse(m.finish(f.finish)));
      else out.push(JSON.parse(m.feed(f.result ?? 'ok', f.text ?? null)));
    }
    return out;
  };
}

/** `operation` → `(api, expandedInput) => result` (throws the binding's error on failure). */
export const operations = {
  append_text_item: (api, i) => {
    const out = api.appendTextItem(bytes(i.message), string(i.text));
    return out == null ? null : utf8.decode(out);
  },
  delivery: (api, i) => JSON.parse(api.delivery(i.len, i.status ?? null, i.retry_after ?? null, i.body ?? null)),
  destination: (api, i) => JSON.parse(api.destination(JSON.stringify(i.settings), i.stored ?? null, i.announcement ?? null)),
  expand_path: (api, i) => api.expandPath(string(i.path), JSON.stringify(i.env), i.home ?? null),
  logdiff,
  node_identity_load: plan((api, p) => new api.NodeIdentityLoad(p.random_hex, p.now_iso, p.pid, p.token)),
  settings: (api, i) => JSON.parse(api.settingsFromEnv(JSON.stringify(i.env), i.user_home, i.client)),
  stored_settings: (api, i) => (i.op === 'get' ? api.storedGet(i.text ?? null, i.key) : api.storedSet(i.text ?? null, i.key, i.value ?? null)),
  prepare_observation: (api, i) =>
    json(api.prepareObservation(string(i.url), string(i.method), i.status ?? null, number(i.latency_ms),
      i.response_bytes ?? null, i.source, new api.HostPolicy(i.allowlist ?? null, i.allow_private ?? null))),
  spool_claim: plan((api, p) => new api.SpoolClaim(p.pid, p.now_ms)),
  spool_write: plan((api, p) => new api.SpoolWrite(p.records, p.seq, p.pid, p.now_ms, p.now_iso, p.token)),
  gateway_router: gatewayRouter,
  telemetry_budget: telemetryBudget,
  target_label: (api, i) => api.targetLabel(i.argv.map(string), i.facts == null ? null : JSON.stringify(i.facts)),
};

/**
 * Operations the JavaScript binding does not expose: `operation` → [the export it would
 * have, why no host needs it]. The Rust vectors (and Python's, where prowl uses them) run them.
 */
export const NOT_EXPOSED = {
  spool: ['spoolEntry', 'SpoolClaim and SpoolWrite apply the spool format themselves'],
  node_identity: ['parseNodeIdentity', 'NodeIdentityLoad reads and writes node.json itself'],
  build_record: ['buildRecord', 'hosts get finished records from Recorder'],
  canonical_json: ['canonicalJson', 'the hash rules run inside the core (Recorder, Scanner)'],
  classify: ['Classifier', 'hosts get finished records from Recorder'],
  compare: ['compare', 'the server ranks'],
  host_from_url: ['hostFromUrl', 'prepareObservation keeps only the host itself'],
  host_policy: ['hostPolicy', 'HostPolicy is opaque to hosts'],
  host_verdict: ['hostVerdict', 'prepareObservation applies the verdict itself'],
  is_blocked_ip: ['isBlockedIp', 'prepareObservation applies the host rules itself'],
  is_private_name: ['isPrivateName', 'prepareObservation applies the host rules itself'],
  latency_bucket: ['latencyBucket', 'the server keeps latency histograms'],
  message: ['message', 'the server writes answers'],
  outcome_class: ['outcomeClass', 'the server counts'],
  redact: ['redact', 'LogDiff redacts what it quotes'],
  salt_epochs: ['saltEpoch', 'the server rotates salts'],
  sample_verify: ['verify', 'the server verifies'],
  sanitize_server_version: ['sanitizeServerVersion', 'Recorder sanitises what it records'],
  schema_hash: ['hashTools', 'Recorder hashes tools/list itself'],
  status_class: ['statusClass', 'the server counts'],
  summarize: ['summarize', 'the server writes answers'],
  summarize_telemetry: ['summarizeTelemetry', 'the server writes answers'],
  validate_node_id: ['validateNodeId', 'the server validates'],
  validate_observations: ['validateObservations', 'the server validates'],
  validate_records: ['validateRecords', 'the server validates'],
  weight: ['weight', 'the server weighs'],
  key_weight: ['keyTier', 'the server weighs'],
  // The sampling gateway's rules run in the server; clients route with Router, which applies
  // the decision, the allow rules, the header allowlist and PROWL_GATEWAY_SERVICES itself.
  sample_decide: ['decide', 'Router decides'],
  gateway_route: ['GatewayRules', 'Router applies the allow rules'],
  gateway_request_headers: ['GatewayRules', 'Router says which request headers go to the gateway'],
  gateway_service_selected: ['gatewayServiceSelected', 'Router applies PROWL_GATEWAY_SERVICES'],
  gateway_vendor_location: ['vendorLocation', 'fetch follows redirects itself'],
  salt_days: ['saltState', 'the gateway checks salt days; clients follow valid_until'],
  decision_check: ['checkDecision', 'the gateway checks decisions'],
  gateway_forward_headers: ['forwardRequestHeader', 'the gateway filters what crosses it; observe sends what Router.route keeps'],
  audit: ['audit', 'the server audits services'],
  probe_health: ['probeHealth', 'the server computes probe health'],
  live_score: ['liveScore', 'the server computes the live score'],
  receipt: ['parseStatement', 'the server verifies receipts'],
  reputation: ['reputation', 'the server computes agent reputation'],
  // Provider mode's rules run in the server and in the Python provider hook.
  conformance: ['conformanceScore', 'the Python provider hook scores protocol directives'],
  agent_verdict: ['agentVerdict', 'the Python provider hook judges agent directives'],
  benchmark_displace: ['displace', 'the server keeps the displayed benchmark score'],
  provider_order: ['providerRank', 'the server orders providers for critical directives'],
  benchmark_submission: ['checkSubmission', 'the server checks submissions'],
  benchmark_directive: ['checkDirective', 'the server checks directives'],
  benchmark_verify: ['verifySubmission', 'the server checks protocol submissions against its own probe'],
  benchmark_agreement: ['settleAgreement', 'the server settles agent results across networks'],
  provider_exclusion: ['excludedUntil', 'the server excludes providers that keep disagreeing'],
};
