// spool_claim.json, spool_write.json, node_identity_load.json: the spool's and node.json's
// plans (SPEC §3, §3.5; core record::spool::{Claim, Write}, identity::Load) as scripted
// steps: each case starts the plan, feeds it what the host saw (a listing with mtimes, a
// read's text, an IO result, whether a delivery was taken) and expects the next step after
// each. The expectations come from this independent model: each plan written again as a
// JavaScript generator (the proxy's record/spool.js and record/home.js as they were before
// the plans moved into the core), the names matched with regular expressions, and a line
// taken as a record when it is one of the fixture records below (what a valid record is,
// spool.json's decode cases prove).
import { spoolName as name, writeVectors } from "./common.mjs";

const MAX_FILES = 100;
const PER_FILE = 500;
const STALE = 60_000;
const GOOD = '{"target":"npm:x","target_type":"tool","task_type":"t","outcome":"success","request_kind":"tool","record_id":"a-1"}';
const GOOD2 = '{"target":"npm:y","target_type":"tool","task_type":"u","outcome":"failure","failure_type":"tool_error","error_layer":"tool","request_kind":"tool","record_id":"a-2"}';
const RECORDS = new Set([GOOD, GOOD2]);
const WAITING = /^\d{15}-\d{8}-\d+-[0-9A-Za-z]*\.jsonl$/;
const CLAIMED = /^(\d{15}-\d{8}-\d+-[0-9A-Za-z]*\.jsonl)\.(\d+)\.sending$/;
const records = (text) => text.split("\n").map((l) => l.trim()).filter((l) => RECORDS.has(l));
const end = { step: "done" };

function* claim({ pid, now_ms }) {
  const listed = yield { step: "list" };
  const files = (listed.listing ?? [])
    .slice()
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .flatMap(([n, mtime]) => {
      if (WAITING.test(n)) return [[n, n]];
      const m = CLAIMED.exec(n);
      return m && mtime !== null && now_ms - mtime >= STALE ? [[n, m[1]]] : [];
    });
  for (const [from, original] of files) {
    const to = `${original}.${pid}.sending`;
    if ((yield { step: "claim", from, to }).result !== "ok") continue; // another host took it
    const read = yield { step: "read", name: to };
    if (read.text === undefined) continue; // unreadable: left claimed, stale later
    const recs = records(read.text);
    if (recs.length === 0) {
      yield { step: "delete", name: to };
      continue;
    }
    const { finish } = yield { step: "deliver", records: recs };
    yield finish ? { step: "delete", name: to } : { step: "rename", from: to, to: original };
    return end;
  }
  return end;
}

function* write({ records: recs, seq, pid, now_ms, now_iso, token }) {
  if (recs.length === 0) return end;
  for (let i = 0; i < recs.length; i += PER_FILE) {
    seq += 1;
    const file = name(now_ms, seq, pid, token.toLowerCase());
    const tmp = `.${file}.tmp`;
    const text = recs.slice(i, i + PER_FILE).map((r) => `${r}\n`).join("");
    const wrote = yield { step: "write", name: tmp, text };
    if (wrote.result !== "ok" || (yield { step: "rename", from: tmp, to: file }).result !== "ok") {
      yield { step: "delete", name: tmp };
      return { step: "failed" };
    }
  }
  const listed = yield { step: "list" };
  if (!listed.listing) return end;
  const spool = listed.listing.map(([n]) => n).filter((n) => WAITING.test(n) || CLAIMED.test(n)).sort();
  let dropped = 0;
  for (const n of spool.slice(0, Math.max(0, spool.length - MAX_FILES))) {
    const read = yield { step: "read", name: n };
    if (read.text === undefined) continue;
    dropped += records(read.text).length;
    yield { step: "delete", name: n };
  }
  if (dropped === 0) return end;
  const previous = yield { step: "read", name: "dropped.json" };
  let before = 0;
  try {
    const n = JSON.parse(previous.text).dropped_records;
    if (Number.isInteger(n) && n >= 0) before = n;
  } catch {
    before = 0;
  }
  yield { step: "write", name: "dropped.json", text: `${JSON.stringify({ dropped_records: before + dropped, last_dropped_at: now_iso })}\n` };
  return end;
}

const ID = /^ld_[0-9a-f]{12}$/;
function parseId(text) {
  if (text === undefined) return null;
  try {
    const v = JSON.parse(text);
    return v && typeof v.node_id === "string" && ID.test(v.node_id) && typeof v.created_at === "string" ? { node_id: v.node_id, created_at: v.created_at } : null;
  } catch {
    return null;
  }
}

function* load({ random_hex, now_iso, pid, token }) {
  const tmp = `node.json.${pid}.${token}.tmp`;
  const fresh = { node_id: `ld_${random_hex}`, created_at: now_iso };
  const read = yield { step: "read", name: "node.json" };
  const found = parseId(read.text);
  if (found) return { step: "identity", ...found, created: false };
  const failed = function* () {
    yield { step: "delete", name: tmp };
    return { step: "failed" };
  };
  if ((yield { step: "write", name: tmp, text: `${JSON.stringify(fresh)}\n` }).result !== "ok") return yield* failed();
  if (read.result === "missing") {
    const linked = (yield { step: "link", from: tmp, to: "node.json" }).result;
    if (linked === "ok") {
      yield { step: "delete", name: tmp };
      return { step: "identity", ...fresh, created: true };
    }
    if (linked !== "exists") return yield* failed();
    const winner = parseId((yield { step: "read", name: "node.json" }).text);
    if (winner) {
      yield { step: "delete", name: tmp };
      return { step: "identity", ...winner, created: false };
    }
  }
  if ((yield { step: "rename", from: tmp, to: "node.json" }).result !== "ok") return yield* failed();
  return { step: "identity", ...fresh, created: true };
}

/** Runs a plan model over the feeds: the first step, then the step after each feed. */
function run(model, plan, feed) {
  const g = model(plan);
  const out = [g.next().value];
  let over = false;
  for (const f of feed) {
    if (over) {
      out.push(end);
      continue;
    }
    const r = g.next(f);
    out.push(r.value);
    over = r.done;
  }
  return out;
}

const cases = (model, list) => list.map(([n, plan, feed]) => ({ name: n, input: { plan, feed }, expected: run(model, plan, feed) }));
const ok = { result: "ok" };
const missing = { result: "missing" };
const failed = { result: "failed" };
const exists = { result: "exists" };
const text = (t) => ({ text: t });
const NOW = 1_764_590_000_000;
const A = name(1000, 1, 7, "aa");
const B = name(2000, 1, 7, "bb");
const C = name(3000, 1, 8, "cc");
const P = { pid: 42, now_ms: NOW };

writeVectors("spool_claim.json", "spool_claim", "Which spool file a host delivers next (core record::spool::Claim): input.plan is {pid, now_ms}; input.feed lists what the host saw after each step ({listing: [[name, mtime_ms|null]]}, {text}, {result: ok|missing|exists|failed}, {finish: taken}); expected is the first step and the step after each feed ({step: list|claim|read|delete|rename|deliver|done, ...}).", cases(claim, [
  ["no spool directory: nothing to deliver", P, [missing]],
  ["an empty spool: nothing to deliver", P, [{ listing: [] }]],
  ["the oldest file is claimed, delivered and deleted once taken", P, [{ listing: [[B, NOW], [A, NOW]] }, ok, text(`${GOOD}\n${GOOD2}\n`), { finish: true }, ok]],
  ["records not taken put the file back under its name", P, [{ listing: [[A, NOW]] }, ok, text(`${GOOD}\n`), { finish: false }, ok]],
  ["another host's fresh claim is left alone", P, [{ listing: [[`${A}.77.sending`, NOW - 1000], [B, NOW - 999_999]] }, ok, text(GOOD), { finish: true }, ok]],
  ["a claim a minute old is stale and taken over under this pid", P, [{ listing: [[`${A}.77.sending`, NOW - STALE]] }, ok, text(GOOD), { finish: false }, ok]],
  ["a claim that vanished before its mtime was read is skipped", P, [{ listing: [[`${A}.77.sending`, null]] }]],
  ["a claim racing another host moves on to the next file", P, [{ listing: [[A, NOW], [B, NOW], [C, NOW]] }, missing, failed, ok, text(GOOD), { finish: true }, ok]],
  ["every claim lost to another host: nothing to deliver", P, [{ listing: [[A, NOW], [B, NOW]] }, missing, missing]],
  ["a corrupt file is deleted and the next one claimed", P, [{ listing: [[A, NOW], [B, NOW]] }, ok, text('{"torn\n[1]\n'), ok, ok, text(GOOD2), { finish: true }, ok]],
  ["an empty file is deleted", P, [{ listing: [[A, NOW]] }, ok, text(""), ok]],
  ["an unreadable file stays claimed (it goes stale) and the next one is tried", P, [{ listing: [[A, NOW], [B, NOW]] }, ok, failed, ok, text(GOOD), { finish: true }, ok]],
  ["a claimed file gone before it was read is skipped", P, [{ listing: [[A, NOW]] }, ok, missing]],
  ["torn lines are left out of the delivery", P, [{ listing: [[A, NOW]] }, ok, text(`${GOOD}\n{"tor\n\n  ${GOOD2}\r\n`), { finish: true }, ok]],
  ["temporary files, dropped.json and foreign files are never claimed", P, [{ listing: [[`.${A}.tmp`, NOW], ["dropped.json", NOW], ["notes.jsonl", NOW], ["notes.jsonl.5.sending", 0], ["x.sending", 0]] }]],
  ["after the plan is over every step is done", P, [{ listing: [] }, ok, text(GOOD)]],
]));

const R = (n) => Array.from({ length: n }, (_, i) => `{"r":${i}}`);
const W = { seq: 0, pid: 42, now_ms: NOW, now_iso: "2026-12-01T12:00:00.000Z", token: "9f3a0c" };
const full = (extra) => [...Array.from({ length: 100 }, (_, i) => [name(5000 + i, 1, 9, "zz"), NOW]), ...extra, ["dropped.json", NOW]];
writeVectors("spool_write.json", "spool_write", "How a host spools records (core record::spool::Write): input.plan is {records, seq (the last one used), pid, now_ms, now_iso, token}; input.feed lists what the host saw after each step ({listing: [[name, mtime_ms|null]]}, {text}, {result: ok|missing|failed}); expected is the first step and the step after each feed ({step: write|rename|list|read|delete|done|failed, ...}).", cases(write, [
  ["nothing to spool: nothing done", { ...W, records: [] }, []],
  ["records go to a temporary file renamed into the spool, then the bound is checked", { ...W, records: [GOOD, GOOD2] }, [ok, ok, { listing: [[name(NOW, 1, 42, "9f3a0c"), NOW]] }]],
  ["the sequence number follows the host's last one and the token is lower-cased", { ...W, seq: 41, token: "AbC", records: [GOOD] }, [ok, ok, missing]],
  ["501 records make two files", { ...W, records: R(501) }, [ok, ok, ok, ok, { listing: [] }]],
  ["a file that cannot be written ends the plan and leaves no temporary file", { ...W, records: [GOOD] }, [failed, ok]],
  ["a rename that fails ends the plan and leaves no temporary file", { ...W, records: R(501) }, [ok, ok, ok, failed, ok]],
  ["past 100 files the oldest is read, deleted and counted into dropped.json", { ...W, records: [GOOD] }, [ok, ok, { listing: full([[name(1, 0, 1, "a"), NOW]]) }, text(`${GOOD}\n${GOOD2}\n{"torn\n`), ok, text('{"dropped_records":40,"last_dropped_at":"x"}'), ok]],
  ["claims count toward the bound and a missing dropped.json starts at the count", { ...W, records: [GOOD] }, [ok, ok, { listing: full([[name(1, 0, 1, "a"), NOW], [`${name(2, 0, 1, "a")}.5.sending`, NOW]]) }, text(GOOD), ok, text(GOOD2), ok, missing, ok]],
  ["a file past the bound another host took meanwhile is not counted", { ...W, records: [GOOD] }, [ok, ok, { listing: full([[name(1, 0, 1, "a"), NOW]]) }, missing]],
  ["a corrupt dropped.json counts from zero", { ...W, records: [GOOD] }, [ok, ok, { listing: full([[name(1, 0, 1, "a"), NOW]]) }, text(GOOD), ok, text("{oops"), ok]],
  ["a spool directory that cannot be listed ends the plan", { ...W, records: [GOOD] }, [ok, ok, failed]],
]));

const L = { random_hex: "ab00010203ff", now_iso: "2026-12-01T00:00:00.000Z", pid: 42, token: "t0k3n" };
const THEIRS = '{"node_id":"ld_00aa11bb22cc","created_at":"2026-01-02T03:04:05.678Z"}\n';
writeVectors("node_identity_load.json", "node_identity_load", "How a host loads LOWDOWN_HOME/node.json (core identity::Load): input.plan is {random_hex (12 hex digits), now_iso, pid, token}; input.feed lists what the host saw after each step ({text}, {result: ok|missing|exists|failed}); expected is the first step and the step after each feed ({step: read|write|link|rename|delete|identity|failed|done, ...}).", cases(load, [
  ["an identity on file is this node's", L, [text(THEIRS)]],
  ["first run: the fresh identity is created exclusively", L, [missing, ok, ok, ok]],
  ["two hosts racing: the one that linked first wins", L, [missing, ok, exists, text(THEIRS), ok]],
  ["racing a host that left a corrupt file: it is replaced", L, [missing, ok, exists, text("{"), ok]],
  ["racing a file that is gone again: the fresh one replaces it", L, [missing, ok, exists, missing, ok]],
  ["a corrupt node.json is replaced atomically", L, [text("not json"), ok, ok]],
  ["an upper-case id is corrupt", L, [text('{"node_id":"ld_AB00010203FF","created_at":"x"}'), ok, ok]],
  ["an unreadable node.json is replaced", L, [failed, ok, ok]],
  ["an unwritable home fails and leaves no temporary file", L, [missing, failed, ok]],
  ["a link failing for another reason fails", L, [missing, ok, failed, ok]],
  ["a replacement that cannot be renamed fails", L, [text(""), ok, failed, ok]],
  ["after the identity every step is done", L, [text(THEIRS), ok]],
]));
