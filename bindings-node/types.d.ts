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
