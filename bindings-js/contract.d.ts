/* Generated from lowdown-core's contract (core/src/contract.rs) by `make contracts`: do not edit. */

/** One interaction: what was used, what it came to, how long it took. Never arguments, results, error text or log lines. */
export interface InteractionRecord {
  /** Client idempotency key: a repeated id is acknowledged, stored once. (string, at most 64 characters, matching ^[A-Za-z0-9_-]{1,64}$) */
  record_id?: string | null
  /** Who acted. (string of 1 to 128 characters) @default "anonymous" */
  actor?: string | null
  /** What was used, e.g. npm:@scope/pkg, pypi:pkg, mcp:io.github.x/y, url:host. (string of 1 to 256 characters) */
  target: string
  /** What kind of thing the target is. (tool | agent | service | human) */
  target_type: 'tool' | 'agent' | 'service' | 'human'
  /** The tool name for tools/call, else the method. (string of 1 to 128 characters) */
  task_type: string
  /** What the interaction came to. (success | partial | failure | cancelled) */
  outcome: 'success' | 'partial' | 'failure' | 'cancelled'
  /** Why it failed (failure and partial only). (invalid_arguments | timeout | server_error | tool_error | unknown) */
  failure_type?: 'invalid_arguments' | 'timeout' | 'server_error' | 'tool_error' | 'unknown' | null
  /** Where it failed: tool and server failures count in success_rate, request-layer rejections do not. (tool | request | server) */
  error_layer?: 'tool' | 'request' | 'server' | null
  /** A tool call, or protocol traffic (never rated). (tool | protocol) @default "tool" */
  request_kind?: 'tool' | 'protocol' | null
  /** Milliseconds from request to response. (number from 0 to 86400000) */
  latency_ms?: number | null
  /** Where the data came from: organic (real use), seeded, synthetic (tests). (organic | seeded | synthetic) @default "organic" */
  source?: 'organic' | 'seeded' | 'synthetic' | null
  /** The recording node. (string, at most 67 characters, matching ^ld_[A-Za-z0-9_-]{1,64}$) */
  node_id?: string | null
  /** The server's serverInfo.version. (string, at most 32 characters, matching ^[0-9A-Za-z.+_-]{1,32}$) */
  server_version?: string | null
  /** SPEC §3.3 hash of the tools/list the server gave. (string, at most 64 characters, matching ^[0-9a-f]{64}$) */
  schema_hash?: string | null
  /** Who made the record: <recorder>/<version> (lowdown-proxy/0.2.0); a bare version, or one before 0.1.17, is an older recorder's, which counted isError results as successes. (string, at most 32 characters, matching ^[0-9A-Za-z.+_/-]{1,32}$) */
  recorder_version?: string | null
  /** The negotiated MCP protocol version. (string, at most 32 characters, matching ^[0-9A-Za-z.+_-]{1,32}$) */
  protocol_version?: string | null
  /** That tools/list had more pages than the one hashed. (true | false) */
  tools_has_more?: boolean | null
}

/** One HTTP call a client made: the host only, never a path, query, body or headers. */
export interface Observation {
  /** The bare host: no scheme, port, path or query. (string of 1 to 253 characters) */
  host: string
  /** The HTTP method. (string of 1 to 16 characters) */
  method: string
  /** The HTTP status; null when no response arrived (a connect error, a timeout). (whole number from 100 to 599) */
  status: number | null
  /** Milliseconds until the end of the response (or the error). (number from 0 to 86400000) */
  latency_ms: number
  /** The response body's size, when known. (whole number from 0 to 9007199254740991) */
  response_bytes?: number | null
  /** organic, seeded or synthetic, or the reporting wrapper's name (1-64 of A-Za-z0-9._-), kept as reporter of organic data. (string of 1 to 64 characters) @default "organic" */
  source?: string | null
  /** Client idempotency key. (string, at most 64 characters, matching ^[A-Za-z0-9_-]{1,64}$) */
  record_id?: string | null
}
