// How each vector file's `operation` maps onto the JavaScript API. The napi binding and the
// WASM binding export the same names and shapes, so one table serves both runners.
// Adding an operation to tests/vectors/ without adding it here fails both runners.

import { bytes, string } from './load.mjs';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const DIRECTIONS = { c2s: 'client_to_server', s2c: 'server_to_client' };

/** classify.json: events fed in order to one Classifier; every exchange, then the facts. */
function classify(api, { events }) {
  const c = new api.Classifier();
  const exchanges = [];
  for (const e of events) {
    if (e.close === true) exchanges.push(...c.close(e.at_ms));
    else exchanges.push(...c.feed(DIRECTIONS[e.dir] ?? e.dir, bytes(e.data), e.at_ms));
  }
  return { exchanges, facts: c.facts() };
}

/** logdiff.json: scripted steps against one LogDiff; the results of `offset` and `take`. */
function logdiff(api, { options, steps }) {
  const ld = new api.LogDiff(options);
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
const policy = (api, i) => new api.HostPolicy(i.allowlist ?? null, i.allow_private ?? null);

/** summarize_telemetry.json: observations added to one rollup, then its summary. */
function summarizeTelemetry(api, { observations }) {
  const r = new api.TelemetryRollup();
  for (const o of observations) r.add(o.status ?? null, o.latency_ms, api.weightTier(o.valid_agent_key, o.known_host));
  const summary = r.summary();
  // The stored (plain) form must summarise the same, as the server reads it back.
  const again = api.summarizeTelemetry(new api.TelemetryRollup(r.toJSON()).toJSON());
  if (JSON.stringify(again) !== JSON.stringify(summary)) throw new Error('stored rollup summarises differently');
  return summary;
}

/** `operation` → `(api, expandedInput) => result` (throws the binding's error on failure). */
export const operations = {
  append_text_item: (api, i) => {
    const out = api.appendTextItem(bytes(i.message), string(i.text));
    return out == null ? null : utf8.decode(out);
  },
  build_record: (api, i) => api.buildRecord(i.exchange, i.facts, i.ctx ?? null, i.record_id ?? null),
  compare: (api, i) => api.compare(i.candidates.map((c) => [c.target, api.summarize(c.counts)])),
  message: (api, i) => api.message(string(i.target), api.summarize(i.counts)),
  salt_epochs: (api, i) => ({ epoch: api.saltEpoch(i.now_ms), accepted: api.acceptedEpochs(i.now_ms) }),
  sample_decide: (api, i) =>
    api.decide(i.service_id, i.agent_id, i.salt_id, i.salt, number(i.sampling_rate)),
  sample_verify: (api, i) =>
    api.verify(i.service_id, i.agent_id, i.salt_id, i.salt, number(i.sampling_rate), i.claimed_roll, i.claimed_sampled),
  summarize: (api, i) => api.summarize(i.counts),
  summarize_telemetry: summarizeTelemetry,
  canonical_json: (api, i) => api.canonicalJson(bytes(i.json)),
  classify,
  host_from_url: (api, i) => api.hostFromUrl(string(i.url)),
  host_policy: (api, i) => policy(api, i).toJSON(),
  latency_bucket: (api, i) => api.latencyBucket(number(i.latency_ms)),
  host_verdict: (api, i) => api.hostVerdict(string(i.host), policy(api, i)),
  outcome_class: (api, i) => api.outcomeClass(i.request_kind, i.outcome, i.error_layer ?? null),
  prepare_observation: (api, i) =>
    api.prepareObservation(string(i.url), string(i.method), i.status ?? null, number(i.latency_ms),
      i.response_bytes ?? null, i.source, policy(api, i)),
  status_class: (api, i) => api.statusClass(i.status ?? null),
  target_label: (api, i) => api.targetLabel(i.argv.map(string)),
  validate_node_id: (api, i) => api.validateNodeId(string(i.node_id)) ?? null,
  validate_observations: (api, i) => api.validateObservations(i.body),
  validate_records: (api, i) => api.validateRecords(i.body),
  weight: (api, i) => api.weight(i.valid_agent_key, i.known_host),
  expand_path: (api, i) => api.expandPath(string(i.path), i.env, i.home ?? null),
  logdiff,
  redact: (api, i) => api.redact(string(i.text)),
  sanitize_server_version: (api, i) => api.sanitizeServerVersion(string(i.raw)),
  schema_hash: (api, i) =>
    'tools_json' in i ? api.hashTools(bytes(i.tools_json)) : api.hashToolsResult(bytes(i.result_json)),
};
