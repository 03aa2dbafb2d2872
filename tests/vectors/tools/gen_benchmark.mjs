// Generates provider mode's vectors (SPEC §11): conformance.json, agent_verdict.json,
// benchmark_displace.json, provider_order.json, provider_exclusion.json,
// benchmark_submission.json, benchmark_directive.json, benchmark_verify.json,
// benchmark_agreement.json. Every expected value is computed here, in JavaScript, from the
// SPEC's text and the rules written in core/src/benchmark.rs's module docs; the first
// conformance case replays a real server-everything probe (tests/recordings).
import { readFileSync } from "node:fs";
import path from "node:path";
import { VECTORS, writeVectors, assertEq, hashList, SCHEMA_KEYS } from "./common.mjs";

const DAY = 86400000;
const round = (x, places) => Math.round(x * 10 ** places) / 10 ** places;

// ---- conformance ------------------------------------------------------------------------
const WEIGHTS = [["reachability", 0.2], ["tool_discovery", 0.15], ["tool_documentation", 0.2], ["schema_quality", 0.2], ["latency", 0.15], ["agent_guidance", 0.1]];
const trim = (s) => s.replace(/^[ \t\n\r\f]+|[ \t\n\r\f]+$/g, "");
const chars = (s) => [...s].length;
const textChars = (v) => (typeof v === "string" ? chars(trim(v)) : null);
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** The JSON-RPC answer with `id` in a body (JSON, or an SSE stream of `data:` events). */
function answer(reply, id) {
  const texts = /^text\/event-stream/i.test(reply.content_type ?? "")
    ? reply.body.split(/\n\n/).map((ev) => ev.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n")).filter(Boolean)
    : [reply.body];
  for (const t of texts) {
    let v;
    try { v = JSON.parse(t); } catch { continue; }
    for (const m of Array.isArray(v) ? v : [v]) if (isObject(m) && m.id === id && ("result" in m || "error" in m)) return m;
  }
  return null;
}

/** What the Scanner's probe finds from a scripted sequence of replies (SPEC §8). */
function probe(replies) {
  const out = { level: 0, status: null, init_status: null, error: null, latency: null, server: { instructions: false, name: false, version: false }, tools: [], first_page: null, has_more: false };
  const q = [...replies];
  const init = q.shift();
  if (init.failed) { out.error = init.failed; return out; }
  out.status = init.status;
  out.latency = init.elapsed_ms ?? 0;
  const ok2xx = (r) => r.status >= 200 && r.status < 300;
  const m = ok2xx(init) ? answer(init, 1) : null;
  if (!ok2xx(init)) return out;
  if (!m) { out.error = "invalid_response"; return out; }
  if (!("result" in m) || "error" in m) return out;
  if (!isObject(m.result)) { out.error = "invalid_response"; return out; }
  out.level = 1;
  out.init_status = init.status;
  const info = m.result.serverInfo;
  const present = (v) => (textChars(v) ?? 0) > 0;
  out.server = { instructions: present(m.result.instructions), name: present(info?.name), version: present(info?.version) };
  q.shift(); // notifications/initialized
  let id = 2;
  const seen = new Set();
  for (let page = 0; ; page++, id++) {
    const r = q.shift();
    const first = page === 0;
    if (r.failed) { if (first) out.error = r.failed; else out.has_more = true; break; }
    out.status = r.status;
    const a = ok2xx(r) ? answer(r, id) : null;
    if (!a) { if (first && ok2xx(r)) out.error = "invalid_response"; if (!first) out.has_more = true; break; }
    if ("error" in a || !("result" in a)) { if (!first) out.has_more = true; break; }
    if (!Array.isArray(a.result?.tools)) { if (first) out.error = "invalid_response"; else out.has_more = true; break; }
    out.level = 2;
    if (first) out.first_page = a.result.tools;
    out.tools.push(...a.result.tools);
    out.has_more = a.result.nextCursor != null;
    const c = typeof a.result.nextCursor === "string" && a.result.nextCursor !== "" ? a.result.nextCursor : null;
    if (c === null) break;
    if (page + 1 >= 20 || seen.has(c)) { out.has_more = true; break; }
    seen.add(c);
  }
  return out;
}

function quality(tools) {
  const q = { tools: 0, documented: 0, with_schema: 0, properties: 0, described: 0, long_names: 0 };
  for (const t of tools) {
    q.tools++;
    if (!isObject(t)) continue;
    if ((textChars(t.description) ?? -1) >= 25) q.documented++;
    if (typeof t.name === "string" && chars(t.name) > 100) q.long_names++;
    if (!isObject(t.inputSchema)) continue;
    q.with_schema++;
    if (isObject(t.inputSchema.properties)) {
      for (const p of Object.values(t.inputSchema.properties)) {
        q.properties++;
        if ((textChars(isObject(p) ? p.description : undefined) ?? 0) > 0) q.described++;
      }
    }
  }
  return q;
}

/** What a probe observed (the submission's `observed`): level, tools over every page and
 * the §3.3 schema hash of the first page, both only at level 2. */
function observedOf(p) {
  const listed = p.level === 2;
  return { reached_level: p.level, tool_count: listed ? p.tools.length : null, schema_hash: listed ? hashList(p.first_page, SCHEMA_KEYS) : null };
}

function conformance(replies) {
  const p = probe(replies);
  const q = quality(p.tools);
  const latency = p.level >= 1 && p.latency !== null ? (p.latency <= 500 ? 10 : p.latency >= 5000 ? 1 : 10 - 9 * (p.latency - 500) / 4500) : 0;
  const values = {
    reachability: p.level >= 1 ? 10 : 0,
    tool_discovery: p.level === 2 ? (p.has_more ? 5 : 10) : 0,
    tool_documentation: q.tools ? 10 * (q.documented / q.tools) : 0,
    schema_quality: q.tools ? 10 * (0.7 * (q.with_schema / q.tools) + 0.3 * (q.properties ? q.described / q.properties : 1)) : 0,
    latency,
    agent_guidance: (p.server.instructions ? 6 : 0) + (p.server.name ? 2 : 0) + (p.server.version ? 2 : 0),
  };
  const dimensions = {};
  for (const [n] of [...WEIGHTS].sort(([a], [b]) => (a < b ? -1 : 1))) dimensions[n] = round(values[n], 2);
  let sum = 0;
  for (const [n, w] of WEIGHTS) sum = sum + w * dimensions[n];
  const findings = [
    ["long_tool_names", q.long_names], ["undocumented_tools", q.tools - q.documented], ["tools_without_schema", q.tools - q.with_schema],
    ["undescribed_properties", q.properties - q.described], ["tools_left_unread", p.level === 2 && p.has_more ? 1 : 0],
  ].filter(([, n]) => n > 0).map(([kind, count]) => ({ kind, count }));
  const t = (id, passed, status, latency_ms, error) => ({ test_case_id: id, passed, actual_status: status, latency_ms, error: passed ? null : error });
  const test_results = [
    t("initialize", p.level >= 1, p.level >= 1 ? p.init_status : p.status, p.latency, p.error ?? "no_result"),
    t("tools_list", p.level === 2, p.level >= 1 ? p.status : null, null, p.level === 1 ? p.error ?? "no_tool_list" : "not_reached"),
    t("tools_complete", p.level === 2 && !p.has_more, null, null, p.level === 2 ? "pages_left_unread" : "not_reached"),
    t("tool_names", p.level === 2 && q.long_names === 0, null, null, p.level === 2 ? "long_tool_names" : "not_reached"),
  ];
  return { dimensions, overall_score: round(10 * sum, 1), findings, test_results, observed: observedOf(p) };
}

const json = (v) => JSON.stringify(v);
const rpc = (id, result) => json({ jsonrpc: "2.0", id, result });
const init = (result, over = {}) => ({ status: 200, content_type: "application/json", session_id: "sess-1", elapsed_ms: 120, body: rpc(1, result), ...over });
const page = (id, result, over = {}) => ({ status: 200, content_type: "application/json", body: rpc(id, result), ...over });
const ACCEPTED = { status: 202 };
const DELETED = { status: 200 };
const INFO = { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "fixture", version: "1.4.0" }, instructions: "Call search before fetch; ids are stable for a day." };
const documented = (name, props = {}) => ({ name, description: `Looks up ${name} records by their stable identifier.`, inputSchema: { type: "object", properties: props } });
const described = { id: { type: "string", description: "The record id." } };

const recording = JSON.parse(readFileSync(path.resolve(VECTORS, "../recordings/probe-everything-http.json"), "utf8"));
const everything = recording.replies.map((r) => {
  const out = { status: r.status };
  if (r.content_type) out.content_type = r.content_type;
  if (r.session_id) out.session_id = r.session_id;
  out.elapsed_ms = r.elapsed_ms;
  if (r.body) out.body = r.body;
  return out;
});

const conformanceCases = [
  [`${recording.server} over streamable HTTP (recorded)`, everything],
  ["a well documented server answering in 2.75 s", [init(INFO, { elapsed_ms: 2750 }), ACCEPTED, page(2, { tools: [documented("alpha", described), documented("beta", {})] }), DELETED]],
  ["at 500 ms latency is still 10", [init(INFO, { elapsed_ms: 500, session_id: undefined }), ACCEPTED, page(2, { tools: [documented("alpha", described)] })]],
  ["past 5 s latency is 1", [init(INFO, { elapsed_ms: 5001 }), ACCEPTED, page(2, { tools: [documented("alpha", described)] }), DELETED]],
  ["undocumented tools over two pages, no schemas, a long name", [
    init({ serverInfo: { name: "thin" } }), ACCEPTED,
    page(2, { tools: [{ name: "a", description: "short" }, { name: "n".repeat(101), description: "   " + "x".repeat(24) + "   ", inputSchema: { type: "object" } }], nextCursor: "p2" }),
    page(3, { tools: [{ name: "b" }, 7, { name: "c", inputSchema: "not an object" }] }), DELETED]],
  ["descriptions count code points after trimming ASCII whitespace", [init(INFO), ACCEPTED, page(2, { tools: [
    { name: "e", description: "\t " + "é".repeat(25) + "\n" }, { name: "s", description: "a".repeat(24) + "\ud800" },
    { name: "n", description: "\u00a0" + "b".repeat(24) }, { name: "m", description: "c".repeat(24) }] }), DELETED]],
  ["properties: top level only, blank descriptions do not count", [init(INFO), ACCEPTED, page(2, { tools: [{ name: "p", description: "Property counting fixture tool.", inputSchema: { type: "object", properties: {
    a: { type: "string", description: "first" }, b: { type: "object", properties: { c: { description: "nested" } } }, d: { description: " \n " }, e: "not an object" } } }] }), DELETED]],
  ["a later page fails: pages left unread", [init(INFO), ACCEPTED, page(2, { tools: [documented("alpha")], nextCursor: "next" }), { failed: "timeout" }, DELETED]],
  ["a repeated cursor stops the read", [init(INFO), ACCEPTED, page(2, { tools: [documented("alpha")], nextCursor: "same" }), page(3, { tools: [documented("beta")], nextCursor: "same" }), DELETED]],
  ["no tools at all", [init(INFO), ACCEPTED, page(2, { tools: [] }), DELETED]],
  ["tools/list answers with a JSON-RPC error", [init(INFO), ACCEPTED, { status: 200, content_type: "application/json", body: json({ jsonrpc: "2.0", id: 2, error: { code: -32601, message: "Method not found" } }) }, DELETED]],
  ["tools/list answers 500", [init(INFO), ACCEPTED, { status: 500 }, DELETED]],
  ["initialize refused with 401", [{ status: 401, elapsed_ms: 15 }]],
  ["initialize times out", [{ failed: "timeout" }]],
  ["initialize answers an HTML page", [{ status: 200, content_type: "text/html", elapsed_ms: 30, body: "<html>hello</html>" }]],
  ["only a name, no version or instructions", [init({ serverInfo: { name: "bare", version: " " } }), ACCEPTED, page(2, { tools: [documented("alpha")] }), DELETED]],
].map(([name, replies]) => ({ name, input: { replies }, expected: conformance(replies) }));
const ev = conformanceCases[0].expected;
assertEq([ev.dimensions.tool_documentation, ev.dimensions.schema_quality, ev.dimensions.agent_guidance], [10, 7, 10], "server-everything documents every tool, describes no property, gives instructions");
writeVectors("conformance.json", "conformance",
  "Drive the Scanner's Probe (modern off) with `replies` in order (each request takes the next: {status, content_type?, session_id?, elapsed_ms?, body?} or {failed: error_type}; a body is read only for a 2xx answer the request expects), then score the ProbeResult: {dimensions, overall_score, findings, test_results, observed}.",
  conformanceCases);

// ---- agent verdict ----------------------------------------------------------------------
function verdict(answer, contains, latency_ms) {
  const found = contains.map((s) => answer.includes(s));
  const hits = found.filter(Boolean).length;
  const expectations = round(contains.length ? (10 * hits) / contains.length : 0, 2);
  return {
    passed: contains.length > 0 && hits === contains.length,
    dimensions: { expectations },
    overall_score: round(10 * (1 * expectations), 1),
    test_results: found.map((ok, i) => ({ test_case_id: `contains[${i}]`, passed: ok, actual_status: null, latency_ms, error: ok ? null : "not_in_answer" })),
  };
}
const agentCases = [
  ["every string found", "The server offers echo, get-sum and get-env.", ["echo", "get-sum"]],
  ["case matters", "The server offers Echo.", ["echo"]],
  ["two of three", "echo and add", ["echo", "add", "sum"]],
  ["one of three rounds to two decimals", "only echo", ["echo", "add", "sum"]],
  ["non-ASCII text", "Résumé: ok ✓", ["Résumé", "✓"]],
  ["an empty answer", "", ["anything"]],
].map(([name, answer, contains]) => ({ name, input: { answer, contains, latency_ms: 1234.5 }, expected: verdict(answer, contains, 1234.5) }));
writeVectors("agent_verdict.json", "agent_verdict", "verdict(answer, contains, latency_ms): passes when every string is in the answer.", agentCases);

// ---- displacement -----------------------------------------------------------------------
function displace(current, readings, now) {
  const latest = new Map();
  for (const r of readings) { latest.delete(r.provider_id); latest.set(r.provider_id, r.score); }
  const providers = latest.size;
  const rep = (value, reason) => ({ replace: true, value, reason, providers });
  const keep = { replace: false, value: null, reason: null, providers };
  const n = readings[readings.length - 1];
  if (!n) return keep;
  if (!current) return rep(n.score, "first");
  if (n.score > current.value) return rep(n.score, "higher");
  if (providers >= 2) { let s = 0; for (const v of [...latest.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, v]) => v)) s += v; return rep(round(s / providers, 1), "providers"); }
  if (now - current.set_at_ms > 14 * DAY) return rep(n.score, "stale");
  return keep;
}
const T0 = Date.UTC(2026, 11, 1);
const rd = (provider_id, score, at) => ({ provider_id, score, at_ms: T0 + at });
const shown = { value: 80, set_at_ms: T0 };
const displaceCases = [
  ["nothing displayed: the first reading stands", null, [rd("pv_a", 42.5, 10)], 10],
  ["a higher reading replaces at once", shown, [rd("pv_a", 80.1, 10)], 10],
  ["an equal reading waits", shown, [rd("pv_a", 80, 10)], 10],
  ["one provider cannot lower it", shown, [rd("pv_a", 40, 10)], 10],
  ["one provider twice still cannot", shown, [rd("pv_a", 40, 10), rd("pv_a", 30, 20)], 20],
  ["two providers lower it to the mean of their latest", shown, [rd("pv_a", 40, 10), rd("pv_a", 30, 20), rd("pv_b", 55, 30)], 30],
  ["three providers, means rounded to one decimal", shown, [rd("pv_a", 70, 10), rd("pv_b", 60, 20), rd("pv_c", 61, 30)], 30],
  ["exactly 14 days old is not stale", shown, [rd("pv_a", 10, 14 * DAY)], 14 * DAY],
  ["older than 14 days: any reading stands", shown, [rd("pv_a", 10, 14 * DAY + 1)], 14 * DAY + 1],
  ["no readings", shown, [], 10],
].map(([name, current, readings, now]) => ({ name, input: { current, readings, now_ms: T0 + now }, expected: displace(current, readings, T0 + now) }));
writeVectors("benchmark_displace.json", "benchmark_displace", "decide(current?, readings since current was set (oldest first, the new one last), now_ms) -> {replace, value, reason, providers}.", displaceCases);

// ---- provider order ---------------------------------------------------------------------
const d = (value, n = 1) => ({ value, n });
function rep(o) {
  return { volume: d(o.volume ?? 0), tenure_days: d(o.tenure_days ?? 0), consistency: d(o.consistency ?? null), receipt_cosign_rate: d(o.receipt_cosign_rate ?? null),
    diversity: d(o.diversity ?? 0), error_report_balance: d(o.error_report_balance ?? null), abuse_flags: d(o.abuse_flags ?? 0) };
}
function cmp(a, b) {
  const v = (x, worst) => (x.value === null ? worst : x.value);
  const higher = (x, y) => v(y, -Infinity) - v(x, -Infinity) || 0;
  const lower = (x, y) => v(x, Infinity) - v(y, Infinity) || 0;
  const bal = (x) => (x.value === null ? Infinity : Math.abs(x.value));
  const sign = (x) => (x < 0 ? -1 : x > 0 ? 1 : 0);
  const steps = [
    () => lower(a.abuse_flags, b.abuse_flags), () => higher(a.consistency, b.consistency), () => higher(a.receipt_cosign_rate, b.receipt_cosign_rate),
    () => (bal(a.error_report_balance) === bal(b.error_report_balance) ? 0 : bal(a.error_report_balance) - bal(b.error_report_balance)),
    () => higher(a.tenure_days, b.tenure_days), () => higher(a.diversity, b.diversity), () => higher(a.volume, b.volume),
  ];
  for (const s of steps) { const r = s(); if (Number.isNaN(r)) continue; if (r !== 0) return sign(r); }
  return 0;
}
/** Fewer disagreements first, then the seven dimensions. */
function cmpCandidate(a, b) {
  const d = (a.disagreements ?? 0) - (b.disagreements ?? 0);
  return d !== 0 ? Math.sign(d) : cmp(a.reputation, b.reputation);
}
function order(providers, posted) {
  const n = providers.length;
  return providers.map((p) => {
    const rank = providers.filter((o) => cmpCandidate(o, p) < 0).length;
    return { id: p.id, rank, opens_at_ms: posted + Math.trunc((15 * 60000 * Math.min(rank, n - 1)) / n) };
  }).sort((x, y) => x.rank - y.rank || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
}
const orderCases = [
  ["abuse flags first, then consistency, volume last", [
    { id: "ag_busy", reputation: rep({ volume: 9000, consistency: 0.5, tenure_days: 40 }) },
    { id: "ag_clean", reputation: rep({ volume: 5, consistency: 0.95, tenure_days: 2 }) },
    { id: "ag_flagged", reputation: rep({ volume: 90000, consistency: 1, abuse_flags: 1 }) },
    { id: "ag_new", reputation: rep({ volume: 0 }) }]],
  ["ties share a rank", [
    { id: "ag_b", reputation: rep({ volume: 10, consistency: 0.9 }) },
    { id: "ag_a", reputation: rep({ volume: 10, consistency: 0.9 }) },
    { id: "ag_c", reputation: rep({ volume: 1, consistency: 0.9 }) }]],
  ["co-signed receipts, then a balance near zero, then tenure", [
    { id: "ag_1", reputation: rep({ consistency: 0.9, receipt_cosign_rate: 0.2, error_report_balance: 0.01, tenure_days: 90 }) },
    { id: "ag_2", reputation: rep({ consistency: 0.9, receipt_cosign_rate: 0.8, error_report_balance: -0.3, tenure_days: 1 }) },
    { id: "ag_3", reputation: rep({ consistency: 0.9, receipt_cosign_rate: 0.8, error_report_balance: 0.05, tenure_days: 1 }) },
    { id: "ag_4", reputation: rep({ consistency: 0.9, receipt_cosign_rate: 0.8, error_report_balance: 0.05, tenure_days: 7 }) }]],
  ["a single provider sees it at once", [{ id: "ag_only", reputation: rep({}) }]],
  ["a disagreement ranks after every provider with fewer, flags and all", [
    { id: "ag_clean", disagreements: 0, reputation: rep({ volume: 5, consistency: 0.95 }) },
    { id: "ag_flagged", disagreements: 0, reputation: rep({ volume: 9000, consistency: 1, abuse_flags: 2 }) },
    { id: "ag_liar", disagreements: 1, reputation: rep({ volume: 9000, consistency: 1, tenure_days: 400 }) },
    { id: "ag_worse", disagreements: 2, reputation: rep({ volume: 9000, consistency: 1, tenure_days: 400 }) }]],
].map(([name, providers]) => ({ name, input: { providers, posted_at_ms: T0 }, expected: order(providers, T0) }));
writeVectors("provider_order.json", "provider_order", "For each provider {id, disagreements?, reputation}: rank (how many rank strictly ahead: fewer disagreements first, then the seven dimensions compared in turn) and opens_at(posted_at_ms, rank, n); sorted by rank, then id.", orderCases);

// ---- exclusion --------------------------------------------------------------------------
const WINDOW = 30 * DAY;
function excludedUntil(times, now) {
  const recent = times.filter((t) => now - t < WINDOW).sort((a, b) => a - b);
  if (recent.length < 3) return null;
  // From then on, fewer than three remain inside the window.
  return recent[recent.length - 3] + WINDOW;
}
const exclusionCases = [
  ["two disagreements do not exclude", [T0, T0 + DAY], T0 + 2 * DAY],
  ["three within thirty days exclude until the oldest is thirty days old", [T0 + DAY, T0, T0 + 5 * DAY], T0 + 6 * DAY],
  ["with four, until the second oldest ages out", [T0, T0 + DAY, T0 + 2 * DAY, T0 + 3 * DAY], T0 + 4 * DAY],
  ["exactly thirty days old no longer counts", [T0, T0 + DAY, T0 + 5 * DAY], T0 + WINDOW],
  ["none at all", [], T0],
].map(([name, times, now]) => ({ name, input: { times, now_ms: now }, expected: excludedUntil(times, now) }));
writeVectors("provider_exclusion.json", "provider_exclusion", "excluded_until(times of a provider's disagreements, now_ms) -> unix ms from which fewer than 3 fall inside the last 30 days, or null when fewer than 3 do now.", exclusionCases);

// ---- submissions ------------------------------------------------------------------------
function checkSubmission(kind, b) {
  const err = (field) => ({ error: "invalid", error_path: field });
  if (!isObject(b)) return err("body");
  const idOk = (s) => typeof s === "string" && s.length > 0 && [...s].length <= 128 && !/[\u0000-\u001f\u007f-\u009f]/.test(s);
  if (b.directive_id == null) return err("directive_id");
  if (!idOk(b.directive_id)) return err("directive_id");
  const names = (kind === "protocol" ? WEIGHTS : [["expectations", 1]]).map(([n]) => n);
  if (!isObject(b.dimensions)) return err("dimensions");
  const extra = Object.keys(b.dimensions).sort().find((k) => !names.includes(k));
  if (extra) return err(`dimensions.${extra}`);
  const dims = {};
  for (const n of names) {
    const v = b.dimensions[n];
    if (typeof v !== "number" || v < 0 || v > 10) return err(`dimensions.${n}`);
    dims[n] = v;
  }
  let sum = 0;
  for (const [n, w] of kind === "protocol" ? WEIGHTS : [["expectations", 1]]) sum = sum + w * dims[n];
  const recorded = round(10 * sum, 1);
  if (typeof b.overall_score !== "number" || b.overall_score < 0 || b.overall_score > 100 || Math.abs(b.overall_score - recorded) > 0.1) return err("overall_score");
  if (!Array.isArray(b.test_results) || b.test_results.length > 100) return err("test_results");
  const tests = [];
  for (const [i, t] of b.test_results.entries()) {
    const at = (k) => `test_results[${i}].${k}`;
    if (!isObject(t)) return err(`test_results[${i}]`);
    if (typeof t.passed !== "boolean") return err(at("passed"));
    if (t.actual_status != null && !(Number.isInteger(t.actual_status) && t.actual_status >= 100 && t.actual_status <= 599)) return err(at("actual_status"));
    if (t.error != null && typeof t.error !== "string") return err(at("error"));
    if (!idOk(t.test_case_id)) return err(at("test_case_id"));
    if (t.latency_ms != null && !(typeof t.latency_ms === "number" && t.latency_ms >= 0 && t.latency_ms <= 86400000)) return err(at("latency_ms"));
    const error = t.error == null ? null : [...t.error].filter((c) => !/[\u0000-\u001f\u007f-\u009f]/.test(c)).slice(0, 200).join("");
    tests.push({ test_case_id: t.test_case_id, passed: t.passed, actual_status: t.actual_status ?? null, latency_ms: t.latency_ms ?? null, error });
  }
  if (!idOk(b.runner_id)) return err("runner_id");
  if (typeof b.execution_time_ms !== "number" || b.execution_time_ms < 0 || b.execution_time_ms > 86400000) return err("execution_time_ms");
  let observed = null;
  if (kind === "agent") {
    if (b.observed != null) return err("observed");
  } else {
    const o = b.observed;
    if (!isObject(o)) return err("observed");
    const extraKey = Object.keys(o).sort().find((k) => !["reached_level", "tool_count", "schema_hash"].includes(k));
    if (extraKey) return err(`observed.${extraKey}`);
    if (!Number.isInteger(o.reached_level) || o.reached_level < 0 || o.reached_level > 2) return err("observed.reached_level");
    const listed = o.reached_level === 2;
    if (listed ? !(Number.isInteger(o.tool_count) && o.tool_count >= 0 && o.tool_count <= 1e6) : o.tool_count != null) return err("observed.tool_count");
    if (listed ? !(typeof o.schema_hash === "string" && /^[0-9a-f]{64}$/.test(o.schema_hash)) : o.schema_hash != null) return err("observed.schema_hash");
    observed = { reached_level: o.reached_level, tool_count: listed ? o.tool_count : null, schema_hash: listed ? o.schema_hash : null };
  }
  const sortedDims = Object.fromEntries(Object.entries(dims).sort(([a], [c]) => (a < c ? -1 : 1)));
  return { expected: { directive_id: b.directive_id, dimensions: sortedDims, recorded_score: recorded, test_results: tests, runner_id: b.runner_id, execution_time_ms: b.execution_time_ms, observed } };
}
const goodProtocol = { directive_id: "bd_0123456789abcdef", dimensions: { reachability: 10, tool_discovery: 10, tool_documentation: 10, schema_quality: 7, latency: 9.21, agent_guidance: 10 },
  overall_score: 92.8, test_results: [{ test_case_id: "initialize", passed: true, actual_status: 200, latency_ms: 640.2, error: null }], runner_id: "prowl-provider-hook/0.1.0", execution_time_ms: 812,
  observed: { reached_level: 2, tool_count: 13, schema_hash: "5f".repeat(32) } };
const goodAgent = { directive_id: "bd_1", dimensions: { expectations: 6.67 }, overall_score: 66.7, runner_id: "r", execution_time_ms: 4000,
  test_results: [{ test_case_id: "contains[0]", passed: false, error: "not_in_answer\u0007" + "x".repeat(300) }] };
const withField = (base, path, value) => {
  const b = structuredClone(base);
  const keys = path.split(".");
  let o = b;
  for (const k of keys.slice(0, -1)) o = o[k];
  if (value === undefined) delete o[keys[keys.length - 1]]; else o[keys[keys.length - 1]] = value;
  return b;
};
const submissionCases = [
  ["a protocol submission is recorded at the recomputed score", "protocol", goodProtocol],
  ["within 0.1 of the weighted sum is accepted", "protocol", withField(goodProtocol, "overall_score", 92.85)],
  ["further off is refused", "protocol", withField(goodProtocol, "overall_score", 93)],
  ["an agent submission; errors lose control characters and are cut to 200", "agent", goodAgent],
  ["a protocol dimension on an agent directive", "agent", goodProtocol],
  ["a dimension above 10", "protocol", withField(goodProtocol, "dimensions.latency", 10.5)],
  ["a missing dimension", "protocol", withField(goodProtocol, "dimensions.latency", undefined)],
  ["an unknown dimension", "protocol", withField(goodProtocol, "dimensions.speed", 3)],
  ["a status out of range", "protocol", withField(goodProtocol, "test_results", [{ test_case_id: "x", passed: true, actual_status: 99 }])],
  ["passed must be a boolean", "protocol", withField(goodProtocol, "test_results", [{ test_case_id: "x", passed: 1 }])],
  ["no runner id", "protocol", withField(goodProtocol, "runner_id", undefined)],
  ["negative execution time", "protocol", withField(goodProtocol, "execution_time_ms", -1)],
  ["not an object", "protocol", [goodProtocol]],
  ["a protocol submission without observed", "protocol", withField(goodProtocol, "observed", undefined)],
  ["observed must be an object", "protocol", withField(goodProtocol, "observed", [2, 13])],
  ["observed has three facts only", "protocol", withField(goodProtocol, "observed.desc_hash", "5f".repeat(32))],
  ["level 3 does not exist", "protocol", withField(goodProtocol, "observed.reached_level", 3)],
  ["level 1: no tools counted", "protocol", withField(withField(goodProtocol, "observed.reached_level", 1), "observed.schema_hash", null)],
  ["level 1 with nulls left out", "protocol", { ...goodProtocol, observed: { reached_level: 1 } }],
  ["level 2 needs the tool count", "protocol", withField(goodProtocol, "observed.tool_count", null)],
  ["a schema hash is 64 lowercase hex", "protocol", withField(goodProtocol, "observed.schema_hash", "5F".repeat(32))],
  ["an agent submission carries no observed", "agent", { ...goodAgent, observed: { reached_level: 2 } }],
].map(([name, kind, body]) => ({ name, input: { kind, body }, ...checkSubmission(kind, body) }));
writeVectors("benchmark_submission.json", "benchmark_submission", "check(body, kind) -> {directive_id, dimensions, recorded_score, test_results, runner_id, execution_time_ms, observed}, or error `invalid` naming error_path.", submissionCases);

// ---- directives -------------------------------------------------------------------------
function checkDirective(b) {
  const err = (field) => ({ error: "invalid", error_path: field });
  const keysOk = (o, keys, field) => { const k = Object.keys(o).find((x) => !keys.includes(x)); return k === undefined ? null : `${field}.${k}`; };
  if (!isObject(b)) return err("body");
  let bad = keysOk(b, ["service_id", "kind", "spec", "price_credits", "critical"], "body");
  if (bad) return err(bad);
  const text = (v, max) => typeof v === "string" && v.trim() !== "" && [...v].length <= max;
  if (!text(b.service_id, 64)) return err("service_id");
  if (b.kind !== "protocol" && b.kind !== "agent") return err("kind");
  if (!Number.isInteger(b.price_credits) || b.price_credits < 1 || b.price_credits > 1e9) return err("price_credits");
  if (b.critical != null && typeof b.critical !== "boolean") return err("critical");
  const url = (v) => text(v, 2048) && !/[\s\u0000-\u001f\u007f-\u009f]/.test(v);
  const s = b.spec;
  if (!isObject(s)) return err("spec");
  if (b.kind === "protocol") {
    if ((bad = keysOk(s, ["remote_url"], "spec"))) return err(bad);
    if (!url(s.remote_url)) return err("spec.remote_url");
    return { expected: { service_id: b.service_id, kind: b.kind, spec: { remote_url: s.remote_url }, price_credits: b.price_credits, critical: b.critical ?? false } };
  }
  if ((bad = keysOk(s, ["prompt", "mcp_server", "expect"], "spec"))) return err(bad);
  // A directive never runs local code: a program to start is refused by name, before any
  // other fault of the server, and the remote's URL must be https (SPEC §11).
  const m = s.mcp_server;
  if (isObject(m)) for (const k of ["command", "args"]) if (k in m) return { error: "local_command_refused", error_path: `spec.mcp_server.${k}` };
  if (!isObject(m)) return err("spec.mcp_server");
  if ((bad = keysOk(m, ["url"], "spec.mcp_server"))) return err(bad);
  if (!url(m.url)) return err("spec.mcp_server.url");
  if (!/^https:/i.test(m.url)) return { error: "mcp_server_not_https", error_path: "spec.mcp_server.url" };
  const server = { url: m.url };
  if (!text(s.prompt, 20000)) return err("spec.prompt");
  const e = s.expect;
  if (!isObject(e)) return err("spec.expect");
  if ((bad = keysOk(e, ["contains"], "spec.expect"))) return err(bad);
  if (!Array.isArray(e.contains) || e.contains.length < 1 || e.contains.length > 20) return err("spec.expect.contains");
  for (const [i, c] of e.contains.entries()) if (typeof c !== "string" || c === "" || [...c].length > 1000) return err(`spec.expect.contains[${i}]`);
  return { expected: { service_id: b.service_id, kind: b.kind, spec: { prompt: s.prompt, mcp_server: server, expect: { contains: e.contains } }, price_credits: b.price_credits, critical: b.critical ?? false } };
}
const protocolPost = { service_id: "svc_everything", kind: "protocol", spec: { remote_url: "https://mcp.example.com/mcp" }, price_credits: 1 };
const agentPost = { service_id: "svc_everything", kind: "agent", critical: true, price_credits: 100, spec: { prompt: "Which tools does the server offer?", mcp_server: { url: "https://mcp.example.com/mcp" }, expect: { contains: ["echo"] } } };
const directiveCases = [
  ["a protocol directive", protocolPost],
  ["an agent directive over an https URL", agentPost],
  ["the scheme is case-insensitive", withField(agentPost, "spec.mcp_server", { url: "HTTPS://mcp.example.com/mcp" })],
  ["a stdio server is a program on the provider's machine", withField(agentPost, "spec.mcp_server", { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] })],
  ["npx running a shell", withField(agentPost, "spec.mcp_server", { command: "npx", args: ["-y", "-c", "touch /tmp/canary"] })],
  ["uvx without args", withField(agentPost, "spec.mcp_server", { command: "uvx" })],
  ["args alone", withField(agentPost, "spec.mcp_server", { args: ["-c", "id"] })],
  ["a command beside a URL", withField(agentPost, "spec.mcp_server", { url: "https://mcp.example.com/mcp", command: "sh" })],
  ["a command with env, named as a command", withField(agentPost, "spec.mcp_server", { command: "npx", args: [], env: { A: "1" } })],
  ["a local command is named before an empty prompt", withField(withField(agentPost, "spec.mcp_server", { command: "npx" }), "spec.prompt", "")],
  ["a plain http URL", withField(agentPost, "spec.mcp_server", { url: "http://mcp.example.com/mcp" })],
  ["a file URL", withField(agentPost, "spec.mcp_server", { url: "file:///etc/passwd" })],
  ["a scheme-relative URL", withField(agentPost, "spec.mcp_server", { url: "//mcp.example.com/mcp" })],
  ["headers are not accepted", withField(agentPost, "spec.mcp_server", { url: "https://mcp.example.com/mcp", headers: { A: "1" } })],
  ["an agent URL with a space", withField(agentPost, "spec.mcp_server", { url: "https://mcp.example.com/ x" })],
  ["an unknown kind", withField(protocolPost, "kind", "llm")],
  ["a fractional price", withField(protocolPost, "price_credits", 1.5)],
  ["a zero price", withField(protocolPost, "price_credits", 0)],
  ["critical must be a boolean", withField(protocolPost, "critical", "yes")],
  ["a URL with a space", withField(protocolPost, "spec.remote_url", "https://mcp.example.com/ x")],
  ["an unknown spec key", withField(protocolPost, "spec.headers", {})],
  ["an empty prompt", withField(agentPost, "spec.prompt", "  ")],
  ["no expected strings", withField(agentPost, "spec.expect.contains", [])],
  ["an empty expected string", withField(agentPost, "spec.expect.contains", ["echo", ""])],
  ["a missing service id", withField(protocolPost, "service_id", undefined)],
  ["an unknown top-level key", withField(protocolPost, "vendor", "x")],
].map(([name, body]) => ({ name, input: { body }, ...checkDirective(body) }));
writeVectors("benchmark_directive.json", "benchmark_directive", "check_new(body) -> {service_id, kind, spec, price_credits, critical}, or error `invalid`, `local_command_refused` or `mcp_server_not_https` naming error_path.", directiveCases);

// ---- verification of a protocol submission by the server's own probe -------------------
const CHECKED = ["reachability", "tool_discovery", "tool_documentation", "schema_quality", "agent_guidance"];
const weighted = (dims) => { let s = 0; for (const [n, w] of WEIGHTS) s = s + w * dims[n]; return round(10 * s, 1); };
/** What the server's probe (over `replies`) says of a submission `body` (already checked). */
function verify(body, replies) {
  const p = probe(replies);
  const own = conformance(replies);
  const claimed = { tool_count: null, schema_hash: null, ...body.observed };
  if (p.level === 0 && claimed.reached_level > 0) return { verdict: "unverifiable", reached_level: p.level, http_status: p.status, error_type: p.error };
  for (const f of ["reached_level", "tool_count", "schema_hash"]) {
    if (claimed[f] !== own.observed[f]) return { verdict: "contradicts", field: f, submitted: claimed[f], seen: own.observed[f] };
  }
  for (const n of CHECKED) {
    const [mine, theirs] = [body.dimensions[n], own.dimensions[n]];
    if (!(Math.abs(mine - theirs) <= 0.01)) return { verdict: "contradicts", field: `dimensions.${n}`, submitted: mine, seen: theirs };
  }
  return { verdict: "agrees" };
}
/** The submission an honest provider sends after seeing `replies`, with its own latency
 * and any `change` to its dimensions or observed facts. */
function submitted(replies, { latency = null, dims = {}, observed = {} } = {}) {
  const c = conformance(replies);
  const dimensions = { ...c.dimensions, ...(latency === null ? {} : { latency }), ...dims };
  return { directive_id: "bd_0123456789abcdef", dimensions, overall_score: weighted(dimensions), test_results: c.test_results,
    runner_id: "prowl-provider-hook/0.1.0", execution_time_ms: 900, observed: { ...c.observed, ...observed } };
}
const perfect = Object.fromEntries(WEIGHTS.map(([n]) => [n, 10]));
const thirteen = [init(INFO), ACCEPTED, page(2, { tools: Array.from({ length: 13 }, (_, i) => documented(`t${i}`, described)) }), DELETED];
const verifyCases = [
  ["an honest submission agrees, whatever latency it measured", submitted(everything, { latency: 3.25 }), everything],
  ["a perfect result nobody probed: the tool count gives it away", { ...submitted(everything), dimensions: perfect, overall_score: 100, observed: { reached_level: 2, tool_count: 9, schema_hash: "0".repeat(64) } }, everything],
  ["the right count with another schema hash", submitted(thirteen, { observed: { schema_hash: "ab".repeat(32) } }), thirteen],
  ["true facts, inflated documentation", submitted(everything, { dims: { schema_quality: 10 } }), everything],
  ["a dimension within 0.01 agrees", submitted(thirteen, { dims: { tool_documentation: 9.995 } }), thirteen],
  ["the server's probe times out: it cannot confirm level 2", submitted(thirteen), [{ failed: "timeout" }]],
  ["the server is refused with 403: it cannot confirm level 2", submitted(thirteen), [{ status: 403, elapsed_ms: 20 }]],
  ["both were refused with 401: that agrees", submitted([{ status: 401, elapsed_ms: 15 }]), [{ status: 401, elapsed_ms: 15 }]],
  ["the server reached level 2 where the provider claims 0", submitted([{ status: 401, elapsed_ms: 15 }]), thirteen],
  ["the server's tools/list failed: level 2 is a contradiction", submitted(thirteen), [init(INFO), ACCEPTED, { status: 500 }, DELETED]],
].map(([name, body, replies]) => ({ name, input: { body, replies }, expected: verify(body, replies) }));
assertEq(verifyCases[1].expected.field, "tool_count", "the forged perfect result is caught by its tool count");
writeVectors("benchmark_verify.json", "benchmark_verify",
  "check(body, protocol), then drive the Scanner's Probe with `replies` as in conformance.json (the server's own probe) and verify(checked, probe result) -> {verdict: agrees} | {verdict: contradicts, field, submitted, seen} | {verdict: unverifiable, reached_level, http_status, error_type}.",
  verifyCases);

// ---- agreement of agent results ----------------------------------------------------------
const passed = (r) => r.overall_score >= 100;
const agree = (a, b) => passed(a) === passed(b) && Math.abs(a.overall_score - b.overall_score) <= 10;
function settle(pending, n) {
  const independent = (r) => r.network !== n.network && r.provider_id !== n.provider_id;
  const agreeing = pending.filter((r) => independent(r) && agree(r, n));
  if (!agreeing.length) return { outcome: "pending" };
  return { outcome: "agreed", counted: [...agreeing.map((r) => r.submission_id), n.submission_id], disagreed: pending.filter((r) => !agreeing.includes(r)).map((r) => r.submission_id) };
}
function mayRun(pending, provider, network) {
  if (network === null) return "unknown_network";
  if (pending.some((r) => r.provider_id === provider)) return "already_submitted";
  if (pending.some((r) => r.network === network)) return "same_network";
  return "ok";
}
function split(total, n) {
  if (n === 0) return [];
  const each = Math.trunc(total / n), left = total % n;
  return Array.from({ length: n }, (_, i) => each + (i < left ? 1 : 0));
}
const run = (id, provider, network, score) => ({ submission_id: id, provider_id: `pv_${provider}`, network: `nw_${network}`, overall_score: score });
const [A, L, C] = [run("bs_a", "a", "1", 100), run("bs_l", "l", "2", 0), run("bs_c", "c", "3", 100)];
const agreementCases = [
  ["settle", "the first result waits", { pending: [], new: A }],
  ["settle", "a second network agreeing completes it", { pending: [A], new: run("bs_b", "b", "2", 100) }],
  ["settle", "the same network never agrees with itself", { pending: [A], new: run("bs_s", "s", "1", 100) }],
  ["settle", "the same provider from another network neither", { pending: [A], new: run("bs_a2", "a", "9", 100) }],
  ["settle", "a fail never agrees with a pass", { pending: [A], new: run("bs_f", "f", "2", 95) }],
  ["settle", "scores ten points apart agree", { pending: [run("bs_x", "x", "1", 50)], new: run("bs_y", "y", "2", 60) }],
  ["settle", "just over ten points apart do not", { pending: [run("bs_x", "x", "1", 50)], new: run("bs_y", "y", "2", 60.1) }],
  ["settle", "a disagreement waits for a third network; the odd one out disagrees", { pending: [A, L], new: C }],
  ["settle", "every pending result that agrees with the new one counts", { pending: [A, L, run("bs_d", "d", "4", 100)], new: C }],
  ["may_run", "another provider on another network may run it", { pending: [A], provider: "pv_b", network: "nw_2" }],
  ["may_run", "a provider with a result on it may not", { pending: [A], provider: "pv_a", network: "nw_7" }],
  ["may_run", "a provider from a pending result's network may not", { pending: [A], provider: "pv_b", network: "nw_1" }],
  ["may_run", "nobody from an unknown network", { pending: [], provider: "pv_b", network: null }],
  ["split", "two providers share the credit", { total: 700, n: 2 }],
  ["split", "three: the thousandths left over go to the earliest", { total: 700, n: 3 }],
  ["split", "nobody counts: nothing is paid", { total: 700, n: 0 }],
].map(([op, name, args]) => ({ name, input: { op, ...args },
  expected: op === "settle" ? settle(args.pending, args.new) : op === "may_run" ? mayRun(args.pending, args.provider, args.network) : split(args.total, args.n) }));
writeVectors("benchmark_agreement.json", "benchmark_agreement",
  "op settle(pending runs oldest first, new) -> {outcome: pending} | {outcome: agreed, counted, disagreed}; op may_run(pending, provider, network|null) -> ok | already_submitted | same_network | unknown_network; op split(total millicredits, n) -> shares. Runs are {submission_id, provider_id, network, overall_score}.",
  agreementCases);
