// Generates the sampling gateway's vectors (SPEC §10): salt_days.json, decision_check.json,
// live_score.json, audit.json, probe_health.json, receipt.json, reputation.json.
// Every expected value is computed here, in JavaScript, from the SPEC's text.
import { createPrivateKey, createPublicKey, sign } from "node:crypto";
import { writeVectors, sha256, assertEq, canon } from "./common.mjs";

const DAY = 86400000, HOUR = 3600000;

// ---- salt days ------------------------------------------------------------------------
const saltId = (epoch) => "s_" + new Date(epoch * DAY).toISOString().slice(0, 10).replaceAll("-", "");
function saltEpoch(id) {
  const m = /^s_(\d{4})(\d{2})(\d{2})$/.exec(id);
  if (!m) return null;
  const [y, mo, d] = [+m[1], +m[2], +m[3]];
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  if (t.getUTCFullYear() !== y || t.getUTCMonth() !== mo - 1 || t.getUTCDate() !== d) return null;
  return Math.floor(t.getTime() / DAY);
}
function saltState(id, now) {
  const e = saltEpoch(id);
  if (e === null) return "malformed";
  const cur = Math.floor(now / DAY);
  if (e > cur) return "future";
  if (e === cur) return "current";
  return now < (e + 1) * DAY + HOUR ? "overlap" : "expired";
}
const T = Date.UTC(2026, 11, 1); // 2026-12-01T00:00Z
const saltCases = [
  ["the current day", "s_20261201", T + 5 * HOUR],
  ["first millisecond of the day", "s_20261201", T],
  ["yesterday inside the overlap", "s_20261130", T + 59 * 60000],
  ["yesterday at the end of the overlap", "s_20261130", T + HOUR],
  ["yesterday after the overlap", "s_20261130", T + 2 * HOUR],
  ["two days ago inside the first hour", "s_20261129", T + 30 * 60000],
  ["tomorrow", "s_20261202", T + 23 * HOUR],
  ["leap day", "s_20280229", Date.UTC(2028, 1, 29, 12)],
  ["not a date", "s_20261131", T],
  ["no prefix", "20261201", T],
  ["short", "s_2026121", T],
  ["unix epoch day", "s_19700101", 0],
].map(([name, salt_id, now_ms]) => {
  const e = saltEpoch(salt_id);
  return {
    name, input: { salt_id, now_ms },
    expected: {
      state: saltState(salt_id, now_ms),
      epoch: e,
      id_of_epoch: e === null ? null : saltId(e),
      window: e === null ? null : { valid_from: e * DAY, valid_until: (e + 1) * DAY, accepted_until: (e + 1) * DAY + HOUR },
      published: saltState(salt_id, now_ms) === "expired",
    },
  };
});
assertEq(saltId(Math.floor(T / DAY)), "s_20261201", "salt id of 2026-12-01");
writeVectors("salt_days.json", "salt_days",
  "{state: salt_state(salt_id, now_ms), epoch: salt_id_epoch(salt_id), id_of_epoch: salt_id(epoch), window: salt_window(epoch), published: salt_published(salt_id, now_ms)}; state is malformed|future|current|overlap|expired.",
  saltCases);

// ---- decision check -------------------------------------------------------------------
const roll = (s, a, id, salt) => sha256([s, a, id, salt].join("|"));
const bucket = (r) => parseInt(r.slice(0, 8), 16) / 2 ** 32;
function check(i) {
  if (i.salt_id == null) return { error: "missing_salt_id" };
  if (i.decision == null) return { error: "missing_decision" };
  if (!/^[0-9a-fA-F]{64}$/.test(i.decision)) return { error: "malformed_decision" };
  const st = saltState(i.salt_id, i.now_ms);
  if (st === "malformed" || st === "future") return { error: "unknown_salt" };
  if (st === "expired") return { error: "expired_salt" };
  if (i.salt == null) return { error: "unknown_salt" };
  const r = roll(i.service_id, i.agent_id, i.salt_id, i.salt);
  if (r !== i.decision.toLowerCase()) return { error: "wrong_decision" };
  const b = bucket(r);
  if (!(b < i.sampling_rate)) return { error: "not_sampled" };
  return { expected: { roll: r, bucket: b, sampled: true } };
}
const SALT = "9f2c4e1a7b3d5f60829ab4c6d8e0f1325476a8b9c0d1e2f30415263748596a7b";
const base = { service_id: "svc_stripe", agent_id: "ag_0123456789abcdef", sampling_rate: 1, salt_id: "s_20261201", salt: SALT, now_ms: T + 3 * HOUR };
const good = roll(base.service_id, base.agent_id, base.salt_id, SALT);
const yesterday = roll(base.service_id, base.agent_id, "s_20261130", SALT);
const decisionCases = [
  ["sampled at rate 1", {}],
  ["uppercase roll accepted", { decision: good.toUpperCase() }],
  ["rate 0 is not sampled", { sampling_rate: 0 }],
  ["another agent's roll", { agent_id: "ag_fedcba9876543210" }],
  ["another service's roll", { service_id: "svc_resend" }],
  ["missing salt id", { salt_id: null }],
  ["missing decision", { decision: null }],
  ["malformed decision", { decision: "abc" }],
  ["salt not stored", { salt: null }],
  ["malformed salt id", { salt_id: "2026-12-01" }],
  ["future salt id", { salt_id: "s_20261202" }],
  ["yesterday inside the overlap", { salt_id: "s_20261130", decision: yesterday, now_ms: T + 30 * 60000 }],
  ["yesterday after the overlap", { salt_id: "s_20261130", decision: yesterday, now_ms: T + HOUR }],
].map(([name, over]) => {
  const input = { ...base, decision: good, ...over };
  return { name, input, ...check(input) };
});
writeVectors("decision_check.json", "decision_check",
  "check_decision(service_id, agent_id, sampling_rate, salt_id?, salt?, decision?, now_ms) -> the recomputed decision, or the refusal's type.",
  decisionCases);

// ---- score, audit, probe health --------------------------------------------------------
const cls = (s) => (s === 429 ? "err" : s !== null && s >= 400 && s <= 499 ? null : s !== null && s >= 100 && s <= 399 ? "ok" : "err");
const r3 = (x) => Math.sign(x) * Math.round(Math.abs(x) * 1000) / 1000;
const counted = (calls) => calls.filter((c) => cls(c.status) !== null).map((c) => ({ ...c, weight: c.weight ?? 1, path: c.path ?? "gateway", ok: cls(c.status) === "ok" }));
const net = (x) => x.network ?? "";
const agentOf = (x) => (x.agent != null ? "agent:" + x.agent : "anonymous:" + net(x));
// Counted samples with weight, and their weights once each network's, then each agent's,
// share is capped.
function weighted(calls) {
  const c = counted(calls).filter((x) => x.weight > 0);
  let w = c.map((x) => x.weight);
  w = capGroups(c, w, net);
  w = capGroups(c, w, agentOf);
  return [c, w];
}
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const errRate = (c, w) => (c.length ? sum(w.filter((_, i) => !c[i].ok)) / sum(w) : null);
// Weighted nearest rank: the smallest latency at which the running weight reaches p % of the total.
function wpct(c, w, p) {
  if (!c.length) return null;
  const order = c.map((_, i) => i).sort((a, b) => c[a].latency_ms - c[b].latency_ms);
  const total = sum(w);
  let run = 0;
  for (const i of order) { run += w[i]; if (run >= (total * p) / 100 - 1e-9 * total) return c[i].latency_ms; }
  return c[order[order.length - 1]].latency_ms;
}
function sources(c) {
  const out = { gateway: 0, telemetry: 0, receipts_single: 0, receipts_cosigned: 0 };
  for (const x of c) {
    if (x.path === "receipt") out[x.weight >= 1 ? "receipts_cosigned" : "receipts_single"] += 1;
    else out[x.path] += 1;
  }
  return out;
}
function figures(calls) {
  const [c, w] = weighted(calls);
  const rate = errRate(c, w);
  const spread = c.length ? wpct(c, w, 95) / Math.max(wpct(c, w, 5), 1) : null;
  return { flagged: c.length >= 10 && (rate >= 0.5 || spread >= 5), error_rate: rate === null ? null : r3(rate), p95_p5: spread === null ? null : r3(spread), n: c.length };
}
const onPath = (calls, path) => calls.filter((c) => (c.path ?? "gateway") === path);
function audit(calls) {
  const kept = calls.filter((c) => c.path !== "receipt");
  const both = figures(kept), gateway = figures(onPath(kept, "gateway")), telemetry = figures(onPath(kept, "telemetry"));
  return { flagged: both.flagged || gateway.flagged || telemetry.flagged, error_rate: both.error_rate, p95_p5: both.p95_p5, n: both.n, gateway, telemetry };
}
function probe(calls) {
  const [c, w] = weighted(calls.filter((x) => x.path !== "receipt"));
  const rate = errRate(c, w);
  return { error_rate: rate === null ? null : r3(rate), n: c.length, cap: rate === null ? null : rate > 0.8 ? 30 : rate > 0.3 ? 50 : null, from: sources(c) };
}
const speed = (p) => (p <= 500 ? 1 : p >= 5000 ? 0.1 : 1 - (0.9 * (p - 500)) / 4500);
// The share cap (SPEC §10), found by bisection rather than the core's closed form: the
// largest level T at which the heaviest group, cut to T, holds at most max(0.2, 1/n).
function shareFactors(weights) {
  const present = weights.filter((w) => w > 0);
  if (present.length <= 1) return weights.map(() => 1);
  const cap = Math.max(0.2, 1 / present.length);
  const ratio = (T) => T / present.reduce((a, w) => a + Math.min(w, T), 0);
  let lo = Math.min(...present), hi = Math.max(...present);
  if (ratio(hi) <= cap) return weights.map(() => 1);
  for (let k = 0; k < 200; k++) { const mid = (lo + hi) / 2; if (ratio(mid) <= cap) lo = mid; else hi = mid; }
  return weights.map((w) => (w > lo ? lo / w : 1));
}
function capGroups(c, weights, key) {
  const totals = new Map();
  c.forEach((x, i) => totals.set(key(x), (totals.get(key(x)) ?? 0) + weights[i]));
  const names = [...totals.keys()], f = new Map();
  shareFactors(names.map((n) => totals.get(n))).forEach((v, i) => f.set(names[i], v));
  return c.map((x, i) => weights[i] * f.get(key(x)));
}
function score(samples, cap) {
  const [c, w] = weighted(samples);
  if (!c.length) return { value: null, n: 0, success: null, speed: null, capped_by: null, agents: 0, networks: 0, from: sources([]) };
  const s = 1 - errRate(c, w), sp = speed(wpct(c, w, 50));
  const raw = Math.round(100 * (0.7 * s + 0.3 * sp));
  const capped = cap !== null && cap < raw;
  return { value: capped ? cap : raw, n: c.length, success: r3(s), speed: r3(sp), capped_by: capped ? "probe_health" : null,
    agents: new Set(c.map(agentOf)).size, networks: new Set(c.filter((x) => x.network != null).map((x) => x.network)).size, from: sources(c) };
}
const calls = (n, f) => Array.from({ length: n }, (_, i) => f(i));
const auditInputs = [
  ["no calls", []],
  ["nine failures are too few to flag", calls(9, () => ({ status: 503, latency_ms: 100 }))],
  ["ten failures flag", calls(10, () => ({ status: 503, latency_ms: 100 }))],
  ["half errors flag", calls(20, (i) => ({ status: i % 2 ? 200 : null, latency_ms: 100 }))],
  ["just under half errors, steady latency", calls(21, (i) => ({ status: i % 2 ? 500 : 200, latency_ms: 100 }))],
  ["fast samples, slow rest: p95/p5 of 5", calls(20, (i) => ({ status: 200, latency_ms: i === 0 ? 40 : i < 18 ? 100 : 200 }))],
  ["spread just under 5", calls(20, (i) => ({ status: 200, latency_ms: i === 0 ? 40 : i < 18 ? 100 : 199.9 }))],
  ["4xx not counted, 429 counted as error", calls(30, (i) => ({ status: i < 15 ? 404 : i < 22 ? 429 : 200, latency_ms: 80 }))],
  ["sub-millisecond p5 is taken as 1 ms", calls(12, (i) => ({ status: 200, latency_ms: i < 2 ? 0.2 : 3 }))],
  // The mirror path: agents' reports of a service no gateway call reached.
  ["bimodal telemetry alone flags", calls(12, (i) => ({ status: 200, latency_ms: i % 2 ? 40 : 4000, weight: 0.3, network: "n" + i, path: "telemetry" }))],
  ["telemetry flags while the gateway's calls look fine", [
    ...calls(12, () => ({ status: 200, latency_ms: 100, agent: "ag_g", network: "g" })),
    ...calls(12, (i) => ({ status: i < 8 ? 503 : 200, latency_ms: 100, weight: 0.5, agent: "ag_" + i, network: "n" + i, path: "telemetry" }))]],
  ["anonymous reports weigh less than the gateway's calls together", [
    ...calls(12, () => ({ status: 200, latency_ms: 100 })),
    ...calls(6, (i) => ({ status: 500, latency_ms: 100, weight: 0.1, network: "n" + i, path: "telemetry" }))]],
  ["one network's many reports count a fifth at most", [
    ...calls(10, (i) => ({ status: 200, latency_ms: 100, weight: 1, agent: "ag_" + i, network: "n" + i, path: "telemetry" })),
    ...calls(40, (i) => ({ status: 503, latency_ms: 100, weight: 1, agent: "ag_bad" + i, network: "bad", path: "telemetry" }))]],
  ["receipts are not audited", calls(12, () => ({ status: null, latency_ms: 100, weight: 1, agent: "ag_r", path: "receipt" }))],
];
writeVectors("audit.json", "audit",
  "audit(calls[{status, latency_ms, weight?, agent?, network?, path?}]) -> {flagged, error_rate, p95_p5, n, gateway, telemetry}: the figures of both paths together, then of each ({flagged, error_rate, p95_p5, n}); receipts left out; 4xx except 429 not counted; errors are no status, 5xx, 429; weights share-capped per network then per agent; weighted nearest-rank p95 over max(p5, 1 ms); a set flags with n >= 10 and error_rate >= 0.5 or p95_p5 >= 5; flagged when any does.",
  auditInputs.map(([name, calls]) => ({ name, input: { calls }, expected: audit(calls) })));
const probeInputs = [
  ["no calls", []],
  ["healthy", calls(100, (i) => ({ status: i < 10 ? 500 : 200, latency_ms: 50 }))],
  ["exactly 30 % errors: no cap", calls(10, (i) => ({ status: i < 3 ? 502 : 200, latency_ms: 50 }))],
  ["above 30 %: cap 50", calls(10, (i) => ({ status: i < 4 ? 502 : 200, latency_ms: 50 }))],
  ["exactly 80 %: cap 50", calls(10, (i) => ({ status: i < 8 ? null : 200, latency_ms: 50 }))],
  ["above 80 %: cap 30", calls(10, (i) => ({ status: i < 9 ? null : 200, latency_ms: 50 }))],
  ["one failure alone", [{ status: 500, latency_ms: 10 }]],
  ["only rejections: nothing counted", calls(5, () => ({ status: 400, latency_ms: 10 }))],
  ["telemetry alone, weighted", calls(10, (i) => ({ status: i < 4 ? 502 : 200, latency_ms: 50, weight: 0.3, network: "n" + i, path: "telemetry" }))],
  ["both paths: reports weigh by their weight", [
    ...calls(10, () => ({ status: 200, latency_ms: 50 })),
    ...calls(10, (i) => ({ status: null, latency_ms: 50, weight: 0.5, agent: "ag_" + i, network: "n" + i, path: "telemetry" }))]],
  ["a flood from one network cannot cap a healthy service", [
    ...calls(20, (i) => ({ status: 200, latency_ms: 50, weight: 1, agent: "ag_" + i, network: "n" + i, path: "telemetry" })),
    ...calls(80, (i) => ({ status: 503, latency_ms: 50, weight: 1, agent: "ag_bad" + i, network: "bad", path: "telemetry" }))]],
];
writeVectors("probe_health.json", "probe_health",
  "probe_health(calls[{status, latency_ms, weight?, agent?, network?, path?}]) -> {error_rate, n, cap, from}: the weighted (share-capped) error rate of ProxyCalls and observations (receipts left out); cap 50 above 30 % errors, 30 above 80 %, else null; from counts the counted samples of each path.",
  probeInputs.map(([name, calls]) => ({ name, input: { calls }, expected: probe(calls) })));
const scoreInputs = [
  ["nothing counted", [], null],
  ["all fast successes", calls(10, () => ({ status: 200, latency_ms: 120 })), null],
  ["all successes at 2.75 s", calls(4, () => ({ status: 200, latency_ms: 2750 })), null],
  ["slow beyond 5 s", calls(3, () => ({ status: 201, latency_ms: 9000 })), null],
  ["half failures, fast", calls(10, (i) => ({ status: i % 2 ? 500 : 200, latency_ms: 100 })), null],
  ["cap lowers the value", calls(10, (i) => ({ status: i % 2 ? 500 : 200, latency_ms: 100 })), 50],
  ["cap above the value changes nothing", calls(10, (i) => ({ status: i < 9 ? 503 : 200, latency_ms: 100 })), 50],
  ["weighted telemetry beside ProxyCalls", [
    { status: 200, latency_ms: 300, weight: 1 }, { status: 500, latency_ms: 900, weight: 0.1 },
    { status: 500, latency_ms: 1200, weight: 0.3 }, { status: 200, latency_ms: 700, weight: 0.5 },
    { status: 404, latency_ms: 5, weight: 1 }, { status: 429, latency_ms: 20, weight: 1 }], null],
  ["weighted p50 falls on a heavy slow call", [
    { status: 200, latency_ms: 100, weight: 0.1 }, { status: 200, latency_ms: 200, weight: 0.3 },
    { status: 200, latency_ms: 3000, weight: 1 }], null],
  // Twenty agents on twenty networks saw a healthy service; three fresh keys on one network
  // report failures at full weight. The network's share is cut to a fifth, then each key's.
  ["three keys of one network move the score a fifth at most", [
    ...calls(20, (i) => ({ status: 200, latency_ms: 120, weight: 1, agent: "ag_" + i, network: "net" + i })),
    ...calls(60, (i) => ({ status: 503, latency_ms: 120, weight: 1, agent: "ag_bad" + (i % 3), network: "net_bad" }))], null],
  ["one agent's many calls weigh as much as another's one", [
    ...calls(50, () => ({ status: 500, latency_ms: 100, agent: "ag_a", network: "n1" })),
    { status: 200, latency_ms: 100, agent: "ag_b", network: "n2" }], null],
  ["receipts weigh 0.3 signed once and 1.0 co-signed", [
    ...calls(4, () => ({ status: 200, latency_ms: 100, agent: "ag_a", network: "n1" })),
    { status: null, latency_ms: 100, weight: 0.3, agent: "ag_b", path: "receipt" },
    { status: null, latency_ms: 100, weight: 1, agent: "ag_c", path: "receipt" },
    { status: 200, latency_ms: 100, weight: 0.3, agent: "ag_d", path: "receipt" }], null],
  ["anonymous telemetry counts as one agent per network", [
    ...calls(10, () => ({ status: 200, latency_ms: 100, weight: 0.1, network: "n1" })),
    ...calls(10, () => ({ status: 500, latency_ms: 100, weight: 0.1, network: "n2" })),
    { status: 200, latency_ms: 100, agent: "ag_a", network: "n3" }], null],
];
writeVectors("live_score.json", "live_score",
  "live_score(samples[{status, latency_ms, weight, agent?, network?, path?}], cap) -> {value, n, success, speed, capped_by, agents, networks, from}: value = round(100 (0.7 success + 0.3 speed)) limited by cap; success weighted over counted samples after the share cap (each network's weight, then each agent's, at most max(0.2, 1/groups) of the total; anonymous samples are one agent per network); speed from the weighted p50.",
  scoreInputs.map(([name, samples, cap]) => ({ name, input: { samples, cap }, expected: score(samples, cap) })));

// ---- receipts ---------------------------------------------------------------------------
const keyOf = (seedHex) => createPrivateKey({ key: Buffer.from("302e020100300506032b657004220420" + seedHex, "hex"), format: "der", type: "pkcs8" });
const pub = (k) => createPublicKey(k).export({ format: "der", type: "spki" }).subarray(-32).toString("base64");
const agentKey = keyOf("11".repeat(32)), serviceKey = keyOf("22".repeat(32)), otherKey = keyOf("33".repeat(32));
const sig = (k, text) => sign(null, Buffer.from(text, "utf8"), k).toString("base64");
const stmt = { service_id: "svc_stripe", agent_id: "ag_0123456789abcdef", call_at: "2026-12-01T10:00:00.250Z", outcome: "success", latency_ms: 182.5, nonce: "n-000000000001" };
const reordered = { nonce: stmt.nonce, outcome: "success", latency_ms: 182.5, call_at: stmt.call_at, agent_id: stmt.agent_id, service_id: "svc_stripe" };
const ok = (s) => ({ hash: sha256(canon(s)), canonical: canon(s) });
const receiptCases = [
  ["signed by the agent", stmt, { agent: sig(agentKey, canon(stmt)) }, { ...ok(stmt), agent_valid: true, service_valid: null, weight: 0.3 }],
  ["co-signed", stmt, { agent: sig(agentKey, canon(stmt)), service: sig(serviceKey, canon(stmt)) }, { ...ok(stmt), agent_valid: true, service_valid: true, weight: 1 }],
  ["key order does not change hash or signature", reordered, { service: sig(serviceKey, canon(stmt)) }, { ...ok(stmt), agent_valid: null, service_valid: true, weight: 0.3 }],
  ["signed by another key", stmt, { agent: sig(otherKey, canon(stmt)) }, { ...ok(stmt), agent_valid: false, service_valid: null, weight: 0 }],
  ["signature over the non-canonical text", stmt, { agent: sig(agentKey, JSON.stringify(stmt)) }, { ...ok(stmt), agent_valid: false, service_valid: null, weight: 0 }],
  ["service signature used as the agent's", stmt, { agent: sig(serviceKey, canon(stmt)), service: sig(serviceKey, canon(stmt)) }, { ...ok(stmt), agent_valid: false, service_valid: true, weight: 0.3 }],
].map(([name, statement, s, expected]) => ({
  name, input: { statement, agent_public_key: pub(agentKey), service_public_key: pub(serviceKey), agent_signature: s.agent ?? null, service_signature: s.service ?? null }, expected,
}));
for (const [name, patch, error_path] of [
  ["unknown field", { extra: 1 }, "statement.extra"],
  ["bad outcome", { outcome: "ok" }, "statement.outcome"],
  ["bad time", { call_at: "yesterday" }, "statement.call_at"],
  ["short nonce", { nonce: "abc" }, "statement.nonce"],
  ["negative latency", { latency_ms: -1 }, "statement.latency_ms"],
]) receiptCases.push({ name, input: { statement: { ...stmt, ...patch }, agent_public_key: pub(agentKey), service_public_key: pub(serviceKey), agent_signature: null, service_signature: null }, error: "invalid_statement", error_path });
writeVectors("receipt.json", "receipt",
  "parse_statement(statement) -> {hash: sha256 of canonical JSON, canonical}; each given signature verified with verify_signature(base64 key, base64 signature, canonical) -> agent_valid|service_valid (null when not given); weight = receipt_weight(valid agent, valid service).",
  receiptCases);

// ---- reputation ----------------------------------------------------------------------------
function rep(i) {
  const ratio = (a, b) => (b > 0 ? a / b : null);
  const comp = i.buckets.filter((b) => b.reported.counted > 0 && b.gateway.counted > 0);
  const agree = comp.filter((b) => {
    const a = (b.reported.counted - b.reported.errors) / b.reported.counted, g = (b.gateway.counted - b.gateway.errors) / b.gateway.counted;
    // 0.2 tolerance decided on exact fractions: |a - g| <= 1/5.
    return Math.abs((b.reported.counted - b.reported.errors) * b.gateway.counted - (b.gateway.counted - b.gateway.errors) * b.reported.counted) * 5 <= b.reported.counted * b.gateway.counted && Math.abs(a - g) <= 0.2 + 1e-12;
  }).length;
  const f = shareFactors(i.others.map((o) => o.weight));
  const nErr = i.others.reduce((a, o, k) => a + Math.min(o.errors, o.weight) * f[k], 0), nCnt = i.others.reduce((a, o, k) => a + o.weight * f[k], 0);
  const ra = i.reported.weight > 0 ? Math.min(i.reported.errors, i.reported.weight) / i.reported.weight : null, rn = nCnt > 0 ? nErr / nCnt : null;
  const opt = (x) => (x === null ? null : r3(x));
  return {
    volume: { value: i.volume, n: i.volume },
    tenure_days: { value: Math.floor(Math.max(0, i.now_ms - i.registered_at_ms) / DAY), n: 1 },
    consistency: { value: opt(ratio(agree, comp.length)), n: comp.length },
    receipt_cosign_rate: { value: opt(ratio(i.receipts_cosigned, i.receipts)), n: i.receipts },
    diversity: { value: i.services, n: i.service_samples },
    error_report_balance: { value: ra === null || rn === null ? null : r3(ra - rn), n: i.reported.n },
    abuse_flags: { value: i.abuse_flags, n: i.attempts },
    compared_agents: i.others.filter((o) => o.n > 0).length,
    receipts: { single: Math.max(0, i.receipts - i.receipts_cosigned), cosigned: Math.min(i.receipts_cosigned, i.receipts) },
  };
}
const t = (counted, errors) => ({ counted, errors });
// Reports: n observations (1.0 each), e of them errors, plus receipts [weight, failed] each.
const r = (n, e, receipts = []) => ({
  weight: n + receipts.reduce((a, [w]) => a + w, 0),
  errors: e + receipts.reduce((a, [w, failed]) => a + (failed ? w : 0), 0),
  n: n + receipts.length,
});
const repBase = { volume: 0, registered_at_ms: T, now_ms: T, buckets: [], receipts: 0, receipts_cosigned: 0, services: 0, service_samples: 0, reported: r(0, 0), others: [], abuse_flags: 0, attempts: 0 };
const repCases = [
  ["a new agent", {}],
  ["a seasoned agent", { volume: 420, now_ms: T + 9 * DAY + 5, buckets: [
      { reported: t(10, 1), gateway: t(20, 2) }, { reported: t(5, 0), gateway: t(5, 1) },
      { reported: t(4, 4), gateway: t(10, 0) }, { reported: t(3, 0), gateway: t(0, 0) }],
    receipts: 8, receipts_cosigned: 6, services: 3, service_samples: 300, reported: r(200, 30), others: Array.from({ length: 10 }, () => r(500, 50)), abuse_flags: 2, attempts: 150 }],
  ["exactly 0.2 apart is consistent", { buckets: [{ reported: t(5, 1), gateway: t(1, 0) }, { reported: t(5, 0), gateway: t(5, 1) }] }],
  ["just over 0.2 apart is not", { buckets: [{ reported: t(100, 21), gateway: t(1, 0) }] }],
  ["reports fewer errors than the network", { reported: r(10, 0), others: [r(4, 2), r(6, 3)] }],
  ["one other agent's flood counts as one agent", { reported: r(10, 1), others: [r(1000, 1000), r(10, 1), r(10, 1), r(10, 1), r(10, 1)] }],
  ["a failed delivery co-signed weighs 1.0, signed once 0.3", { reported: r(2, 0, [[1, true], [0.3, true]]), others: [r(10, 1), r(10, 1)] }],
  ["receipts alone are reports", { reported: r(0, 0, [[0.3, false], [0.3, true]]), others: [r(0, 0, [[1, false]]), r(5, 0)] }],
  ["one day minus a millisecond", { now_ms: T + DAY - 1 }],
];
writeVectors("reputation.json", "reputation",
  "reputation(inputs) -> the seven dimensions {value, n}, compared_agents and receipts {single, cosigned}; consistency: share of buckets with counts on both sides whose success rates are within 0.2; error_report_balance: the agent's weighted error rate (reported {weight, errors, n}: observations 1.0 each, receipts 0.3 signed once, 1.0 co-signed) minus the other agents' (others[], one per agent), each agent's share of them capped at max(0.2, 1/agents); rates to 3 decimals.",
  repCases.map(([name, over]) => { const input = { ...repBase, ...over }; return { name, input, expected: rep(input) }; }));
