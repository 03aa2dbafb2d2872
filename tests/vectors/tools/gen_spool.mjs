// spool.json: the spool's names, claims, reading and bound (SPEC §3, core record::spool),
// which every host uses to write and drain the same files. Expectations are written here by
// hand from the format: <ms:15>-<seq:8>-<pid>-<token>.jsonl, claims <name>.<pid>.sending.
import { spoolName as name, writeVectors } from "./common.mjs";

const GOOD = '{"target":"npm:x","target_type":"tool","task_type":"t","outcome":"success","request_kind":"tool","record_id":"a-1"}';
const GOOD2 = '{"target":"npm:y","target_type":"tool","task_type":"u","outcome":"failure","failure_type":"tool_error","error_layer":"tool","request_kind":"tool","record_id":"a-2"}';
const BAD_OUTCOME = '{"target":"npm:x","target_type":"tool","task_type":"t","outcome":"maybe","request_kind":"tool"}';

const cases = [
  { name: "a file name sorts by time, then sequence", input: { op: "file_name", now_ms: 1764590000123, seq: 7, pid: 4242, token: "9f3a0c" }, expected: name(1764590000123, 7, 4242, "9f3a0c") },
  { name: "the token keeps only lower-case letters and digits, at most 16", input: { op: "file_name", now_ms: 0, seq: 0, pid: 1, token: "AB-cd_ef/0123456789abcdefXYZ" }, expected: name(0, 0, 1, "abcdef0123456789") },
  { name: "a claim appends the pid and .sending", input: { op: "claim_name", name: name(5, 1, 42, "ab"), pid: 99 }, expected: `${name(5, 1, 42, "ab")}.99.sending` },
  { name: "a spool file waits", input: { op: "entry", name: name(5, 1, 42, "ab") }, expected: { kind: "waiting" } },
  { name: "a claimed file names its claimant and original", input: { op: "entry", name: `${name(5, 1, 42, "ab")}.77.sending` }, expected: { kind: "claimed", pid: 77, original: name(5, 1, 42, "ab") } },
  { name: "temporary files, dropped.json and foreign files are other", input: { op: "entry", name: `.${name(5, 1, 42, "ab")}.tmp` }, expected: { kind: "other" } },
  { name: "dropped.json is other", input: { op: "entry", name: "dropped.json" }, expected: { kind: "other" } },
  { name: "a name of the wrong shape is other", input: { op: "entry", name: "5-1-42-ab.jsonl" }, expected: { kind: "other" } },
  { name: "a claim of a foreign file is other", input: { op: "entry", name: "notes.jsonl.12.sending" }, expected: { kind: "other" } },
  { name: "records encode one per line", input: { op: "encode", records: [GOOD, GOOD2] }, expected: `${GOOD}\n${GOOD2}\n` },
  { name: "decoding keeps valid records and counts the rest", input: { op: "decode", text: `${GOOD}\n{"torn\n\n${BAD_OUTCOME}\n[1]\n${GOOD2}` }, expected: { records: [GOOD, GOOD2], corrupt: 3 } },
  { name: "an empty file holds nothing", input: { op: "decode", text: "" }, expected: { records: [], corrupt: 0 } },
  { name: "CRLF lines and surrounding blanks are read", input: { op: "decode", text: `  ${GOOD}\r\n` }, expected: { records: [GOOD], corrupt: 0 } },
  { name: "within the bound nothing goes", input: { op: "over_bound", names: [name(1, 0, 1, "a"), "dropped.json"] }, expected: [] },
  {
    name: "past 100 files the oldest go, claims included",
    input: { op: "over_bound", names: [...Array.from({ length: 100 }, (_, i) => name(1000 + i, 0, 1, "a")), `${name(3, 0, 1, "a")}.5.sending`, name(2, 0, 1, "a"), "dropped.json"] },
    expected: [name(2, 0, 1, "a"), `${name(3, 0, 1, "a")}.5.sending`],
  },
  { name: "dropped.json starts at the dropped count", input: { op: "dropped", previous: null, records: 3, now_iso: "2026-12-01T00:00:00.000Z" }, expected: '{"dropped_records":3,"last_dropped_at":"2026-12-01T00:00:00.000Z"}\n' },
  { name: "dropped.json adds up", input: { op: "dropped", previous: '{"dropped_records":40,"last_dropped_at":"x"}', records: 2, now_iso: "2026-12-02T00:00:00.000Z" }, expected: '{"dropped_records":42,"last_dropped_at":"2026-12-02T00:00:00.000Z"}\n' },
  { name: "an unreadable dropped.json counts from zero", input: { op: "dropped", previous: "{oops", records: 1, now_iso: "t" }, expected: '{"dropped_records":1,"last_dropped_at":"t"}\n' },
];

writeVectors("spool.json", "spool", "The spool format (core record::spool): input.op is file_name(now_ms, seq, pid, token), claim_name(name, pid), entry(name) → {kind, pid?, original?}, encode(records), decode(text) → {records, corrupt}, over_bound(names), dropped(previous, records, now_iso).", cases);
