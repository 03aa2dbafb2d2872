/* Types of the plain objects that cross the lowdown-core bindings (Node and WASM share them).
 * Keys are the core's serde names (snake_case). Hand-written from core/src; the vector
 * runners check the values, these declarations document them. */

/** Which way a message travelled. */
export type Direction = 'client_to_server' | 'server_to_client'
/** What an interaction came to (`cancelled`: withdrawn with notifications/cancelled). */
export type Outcome = 'success' | 'partial' | 'failure' | 'cancelled'
/** Why an interaction failed. */
export type FailureType = 'invalid_arguments' | 'timeout' | 'server_error' | 'tool_error' | 'unknown'
/** Where a failure happened. */
export type ErrorLayer = 'tool' | 'request' | 'server'
/** Tool interaction or protocol traffic. */
export type RequestKind = 'tool' | 'protocol'
/** What kind of thing the target is. */
export type TargetType = 'tool' | 'agent' | 'service' | 'human'
/** Where the data came from; sources are never mixed. */
export type Source = 'organic' | 'seeded' | 'synthetic'
/** Which counter one interaction goes to. */
export type OutcomeClass = 'success' | 'partial' | 'failure' | 'rejected' | 'protocol' | 'cancelled'
/** How a telemetry status counts. */
export type StatusClass = 'success' | 'failure' | 'throttled' | 'rejected'
/** Weight tier of an observation (SPEC §4). */
export type WeightTier = 'anonymous_unknown_host' | 'anonymous_known_host' | 'key_unknown_host' | 'key_known_host'
/** How much rated data stands behind a success rate. */
export type Confidence = 'none' | 'low' | 'medium' | 'high'

/** Hashes of one tools/list result (SPEC §3.3). */
export interface ToolHashes { schema_hash: string; desc_hash: string; tool_count: number; has_more: boolean }

/** One finished request and what it came to (SPEC §3.1). */
export interface Exchange {
  direction: Direction
  /** The request id's text as it was on the wire (`1` and `"1"` differ). */
  id: string
  method: string
  tool_name: string | null
  request_kind: RequestKind
  outcome: Outcome
  failure_type: FailureType | null
  error_layer: ErrorLayer | null
  error_code: number | null
  started_ms: number
  latency_ms: number
  /** A final result with a `content` array (the only kind --watch-log appends to). */
  has_content: boolean
}

/** What a Classifier has learnt about the session. */
export interface SessionFacts {
  server_name: string | null
  server_version: string | null
  protocol_version: string | null
  schema_hash: string | null
  desc_hash: string | null
  tools_has_more: boolean
  tool_count: number | null
}

/** Options of a LogDiff; `null` or absent means the default. Unknown keys are refused. */
export interface LogDiffOptions {
  /** Regex a line must match, case-insensitively. @default `\b(error|exception|fatal|uncaught|unhandled|failed)\b` */
  pattern?: string | null
  /** Most matching lines quoted per file per result. @default 20 */
  max_lines?: number | null
  /** Longest quoted line, in characters. @default 300 */
  max_line_chars?: number | null
}

/** Who records, for what, and how. Unknown keys are refused. */
export interface RecordContext {
  /** @default "anonymous" */
  actor?: string | null
  /** @default "" */
  target?: string | null
  /** @default "organic" */
  source?: Source | null
  /** @default null */
  node_id?: string | null
  /** @default null */
  recorder_version?: string | null
}

/** One interaction as recorded (SPEC §3.2); never arguments, results or messages. */
export interface InteractionRecord {
  record_id?: string
  actor: string
  target: string
  target_type: TargetType
  task_type: string
  outcome: Outcome
  failure_type: FailureType | null
  error_layer: ErrorLayer | null
  request_kind: RequestKind
  latency_ms: number | null
  source: Source
  node_id: string | null
  server_version: string | null
  schema_hash: string | null
  recorder_version: string | null
  protocol_version: string | null
}

/** What the privacy filter decided for one host. */
export type HostVerdict = { verdict: 'report'; host: string } | { verdict: 'blocked'; reason: string }

/** One telemetry observation: only the host leaves the machine. */
export interface Observation {
  host: string
  method: string
  status: number | null
  latency_ms: number
  response_bytes: number | null
  source: Source
  record_id?: string
}

/** Counts per outcome class. */
export interface ClassCounts { success: number; partial: number; failure: number; rejected: number; protocol: number; cancelled: number }
/** Counts per source; missing sources and classes are 0. */
export interface SourceCounts { organic?: Partial<ClassCounts>; seeded?: Partial<ClassCounts>; synthetic?: Partial<ClassCounts> }
/** Reputation summary of one target (SPEC §5). */
export interface Summary {
  interactions: number
  rated_interactions: number
  success_rate: number | null
  protocol_requests: number
  rejected_requests: number
  cancelled_requests: number
  by_source: { organic: ClassCounts; seeded: ClassCounts; synthetic: ClassCounts }
  confidence: Confidence
}
/** A ranked comparison of 2–5 targets. */
export interface Comparison {
  ranked: Array<{ target: string; success_rate: number | null; rated_interactions: number; confidence: Confidence }>
  recommendation: { target: string | null; reason: string }
}

/** Public telemetry block of one host. */
export interface TelemetrySummary {
  observations: number
  weighted_success_rate: number | null
  status_classes: { success: number; failure: number; throttled: number; rejected: number }
  latency_p50_ms: number | null
  latency_p95_ms: number | null
  status_codes: Record<string, number>
  weight_mix: Record<WeightTier, number>
}

/** One sampling decision (SPEC §4). */
export interface SamplingDecision { roll: string; bucket: number; sampled: boolean }

/** What every thrown core error carries: `code` is the stable kind, `details` its fields. */
export interface LowdownError extends Error { code: string; details: { type: string; [field: string]: unknown } | null }

/**
 * Which binding artifact the generated loader actually loaded: `'native'` for
 * a native addon, otherwise the `platformArchABI` of the WASI flavor. Every
 * flavor napi-rs can build is listed, because `NAPI_RS_NATIVE_LIBRARY_PATH`
 * can point the loader at a WASI artifact this package does not build itself.
 */
export declare const __napiBindingTarget: 'native' | 'wasm32-wasi' | 'wasm32-wasip1'

/**
 * Classifies one MCP stdio session: feed it the bytes of both directions as they arrive,
 * with your clock; it returns every exchange that finished.
 */
export declare class Classifier {
  /** A classifier for a new session. */
  constructor()
  /**
   * Feeds bytes that travelled `direction` (`"client_to_server"` or `"server_to_client"`)
   * at `nowMs`; returns the exchanges that finished. Throws `invalid_argument` on a bad direction.
   */
  feed(direction: Direction, bytes: Uint8Array, nowMs: number): Exchange[]
  /**
   * `feed`, with the finished exchanges as JSON text (`"[]"` when none): one string
   * crosses instead of an object per exchange, and `JSON.parse` of it gives what `feed`
   * gives. For hosts that usually find nothing finished, or pass exchanges on as text.
   */
  feedJson(direction: Direction, bytes: Uint8Array, nowMs: number): string
  /**
   * Ends the session at `nowMs` (child exited, pipe closed): frames unterminated last
   * lines and fails every pending request as a server error.
   */
  close(nowMs: number): Exchange[]
  /** What the classifier has learnt: server name and version, protocol version, schema hashes. */
  facts(): SessionFacts
  /** Number of requests still waiting for a response (both directions). */
  pending(): number
  /** Bytes held for lines not yet terminated (both directions). */
  buffered(): number
}
export type JsClassifier = Classifier

/**
 * The reporting policy, from the raw `PROWL_TELEMETRY_ALLOWLIST` and
 * `PROWL_TELEMETRY_ALLOW_PRIVATE` values (`null` when unset).
 */
export declare class HostPolicy {
  /**
   * The policy for these two environment values (`null`/absent = unset): a comma-separated
   * allowlist of hosts (with subdomains), and `1`/`true`/`yes`/`on` to lift the private block.
   */
  constructor(allowlist?: string | undefined | null, allowPrivate?: string | undefined | null)
  /** The canonical allowlisted hosts; empty means no restriction. */
  get allowlist(): Array<string>
  /** Whether local and private hosts may be reported (local testing only). */
  get allowPrivate(): boolean
  /** The plain form: `{allowlist, allow_private}`. */
  toJSON(): { allowlist: string[]; allow_private: boolean }
}
export type JsHostPolicy = HostPolicy

/**
 * Watches log files for new matching lines. The host reads the files (from `offset(path)`)
 * and supplies the time; this holds cursors, partial lines and pending matches.
 */
export declare class LogDiff {
  /** A watcher; throws `code: "invalid_pattern"` when `options.pattern` is not a valid regex. */
  constructor(options?: LogDiffOptions | null)
  /**
   * Starts watching `path` (expanded, absolute); `initialSize` is its size now, `null`
   * when it does not exist yet. Watching a path again changes nothing.
   */
  watch(path: string, initialSize?: number | undefined | null): void
  /** Takes `bytes` read from `offset(path)` of a file whose size is now `fileSize`. */
  feed(path: string, fileSize: number, bytes: Uint8Array): 'read' | 'restarted' | 'not_watched'
  /** The file at `path` was replaced (rotation): read it again from its start. */
  restart(path: string): void
  /** Where to read `path` from next (0 when it is not watched). */
  offset(path: string): number
  /** Whether any file has matching lines waiting. */
  hasPending(): boolean
  /** Watched paths, in the order they were added. */
  paths(): Array<string>
  /**
   * The `[lowdown] Since HH:MM:SS, ...` block of every file with lines waiting (which are
   * then cleared), or `null` when nothing matched.
   */
  takeBlock(sinceHhmmss: string): string | null
}
export type JsLogDiff = LogDiff

/**
 * What the server stores per host: status classes per weight tier, exact status codes and
 * the latency histogram. Rollups merge, so stored ones can be combined.
 */
export declare class TelemetryRollup {
  /** An empty rollup, or one read back from its stored plain form (`toJSON()`). */
  constructor(stored?: object | null)
  /** Adds one observation: its status (`null` for no response), latency and weight tier. */
  add(status: number | null, latencyMs: number, tier: WeightTier): void
  /** Adds every count of `other` to this rollup. */
  merge(other: TelemetryRollup): void
  /** The plain, storable form (what `new TelemetryRollup(stored)` reads back). */
  toJSON(): object
  /** The public telemetry block of this rollup (`summarizeTelemetry`). */
  summary(): TelemetrySummary
}
export type JsTelemetryRollup = TelemetryRollup

/**
 * The epochs whose salts are accepted at `nowMs`, current first (the previous one during
 * the first hour after a rotation).
 */
export declare function acceptedEpochs(nowMs: number): Array<number>

/**
 * Appends one `text` content item to a JSON-RPC result line, keeping every other byte;
 * `null` when the message has no result `content` array to carry it.
 */
export declare function appendTextItem(message: Uint8Array, text: string): Buffer | null

/**
 * The SPEC §3.2 record for one exchange (from `Classifier.feed`), with the session's facts;
 * `null` for a server→client request. `recordId` is the host's idempotency key.
 */
export declare function buildRecord(exchange: Exchange, facts: SessionFacts, ctx?: RecordContext | null, recordId?: string | null): InteractionRecord | null

/**
 * The SPEC §3.3 canonical JSON text of any JSON document (keys sorted by UTF-16 code
 * units, JavaScript number formatting). Throws `code: "invalid_json" | "too_deep"`.
 */
export declare function canonicalJson(json: Uint8Array): string

/**
 * Ranks 2–5 `[target, summary]` pairs by success rate (nulls last) with the recommendation
 * rule; throws `candidate_count` or `duplicate_candidate`.
 */
export declare function compare(candidates: Array<[string, Summary]>): Comparison

/** The decision for one (service, agent) pair under one salt: `{roll, bucket, sampled}`. */
export declare function decide(serviceId: string, agentId: string, saltId: string, salt: string, samplingRate: number): SamplingDecision

/**
 * The core's shared defaults (SPEC §2): `API_URL`, `API_URL_ENV`, `PROWL_API_URL_ENV`,
 * `HOME_ENV`, `HOME_DIR_NAME`, `NODE_ID_HEADER`, `AGENT_KEY_HEADER`.
 */
export declare function defaults(): Record<'API_URL' | 'API_URL_ENV' | 'PROWL_API_URL_ENV' | 'HOME_ENV' | 'HOME_DIR_NAME' | 'NODE_ID_HEADER' | 'AGENT_KEY_HEADER', string>

/**
 * Expands `%VAR%`, `$VAR`, `${VAR}` and a leading `~` in a `--watch-log` path; unknown
 * variables are left as written.
 */
export declare function expandPath(path: string, env: Record<string, string>, home?: string | undefined | null): string

/**
 * Hashes the JSON text of a `tools` array (SPEC §3.3); same result and errors as
 * `hashToolsResult` (`has_more` is always false).
 */
export declare function hashTools(toolsJson: Uint8Array): ToolHashes

/**
 * Hashes the JSON text of a `tools/list` result (SPEC §3.3): `{schema_hash, desc_hash,
 * tool_count, has_more}`. Throws `code: "invalid_json" | "too_deep"`.
 */
export declare function hashToolsResult(resultJson: Uint8Array): ToolHashes

/** The canonical host a WHATWG URL parser would give for `url` (lowercase, no port), or `null`. */
export declare function hostFromUrl(url: string): string | null

/**
 * Whether `host` may be reported under `policy`: `{verdict: "report", host}` or
 * `{verdict: "blocked", reason}`.
 */
export declare function hostVerdict(host: string, policy: HostPolicy): HostVerdict

/** Index of the latency histogram bucket `latencyMs` falls in. */
export declare function latencyBucket(latencyMs: number): number

/** The one-sentence reading of a summary for `target`. */
export declare function message(target: string, summary: Summary): string

/**
 * Which counter one interaction goes to: `protocol` first, then `cancelled`, then a
 * request-layer `rejected`, else its outcome.
 */
export declare function outcomeClass(requestKind: RequestKind, outcome: Outcome, errorLayer: ErrorLayer | null): OutcomeClass

/**
 * The observation to send for one HTTP request, or `null` when nothing may be sent (host
 * blocked or unreadable, latency not finite). Only the host of `url` is kept.
 */
export declare function prepareObservation(url: string, method: string, status: number | null, latencyMs: number, responseBytes: number | null, source: Source, policy: HostPolicy): Observation | null

/**
 * Masks secrets (bearer tokens, API keys, JWTs, `token=`-style values, URL passwords, long
 * hex runs) in `text` with `[REDACTED]`.
 */
export declare function redact(text: string): string

/** The salt epoch (whole UTC days since 1970) in force at `nowMs`. */
export declare function saltEpoch(nowMs: number): number

/**
 * SPEC §3.2's published form of `serverInfo.version`: control characters removed, kept
 * only when it matches `^[0-9A-Za-z.+_-]{1,32}$`, else `null`.
 */
export declare function sanitizeServerVersion(raw: string): string | null

/** How a status counts: `null`/5xx `failure`, 429 `throttled`, other 4xx `rejected`, 1xx–3xx `success`. */
export declare function statusClass(status?: number | undefined | null): StatusClass

/**
 * The reputation summary (success rate from organic data only, confidence, counts by
 * source) from per-source counters.
 */
export declare function summarize(counts: SourceCounts): Summary

/** The public telemetry block of one host from its stored rollup. */
export declare function summarizeTelemetry(rollup: TelemetryRollup): TelemetrySummary

/**
 * The SPEC §3.2 target label of a command line (`argv[0]` is the command): `npm:pkg`,
 * `pypi:pkg`, `oci:image` or a file's basename; `null` when none is safe to publish.
 */
export declare function targetLabel(argv: Array<string>): string | null

/** Checks a node id (`^ld_[A-Za-z0-9_-]{1,64}$`); throws `code: "invalid_format"` otherwise. */
export declare function validateNodeId(nodeId: string): void

/**
 * Validates one observation object, as the API receives it; throws `code` = the problem's
 * kind with `details.path` naming the field.
 */
export declare function validateObservation(body: unknown): Observation

/** Validates one observation or an array of 1..=1000 (all-or-nothing; errors name `observations[i].field`). */
export declare function validateObservations(body: unknown): Observation[]

/**
 * Validates one interaction record as the API receives it; throws `code` = the problem's
 * kind with `details.path` naming the field.
 */
export declare function validateRecord(body: unknown): InteractionRecord

/** Validates one record or an array of 1..=1000 (all-or-nothing; errors name `records[i].field`). */
export declare function validateRecords(body: unknown): InteractionRecord[]

/** Whether a claimed roll (hex, any case) and sampled flag are what these inputs give. */
export declare function verify(serviceId: string, agentId: string, saltId: string, salt: string, samplingRate: number, claimedRoll: string, claimedSampled: boolean): boolean

/** The server-side weight of one observation: 0.1, 0.3, 0.5 or 1.0 (SPEC §4). */
export declare function weight(validAgentKey: boolean, knownHost: boolean): number

/**
 * The weight tier of one observation: `anonymous_unknown_host`, `anonymous_known_host`,
 * `key_unknown_host` or `key_known_host`.
 */
export declare function weightTier(validAgentKey: boolean, knownHost: boolean): WeightTier
