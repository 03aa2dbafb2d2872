// Generated from lowdown-core's contract (core/src/contract.rs) by `make contracts`: do not edit.

/** The defaults every host shares (SPEC §2). */
export const DEFAULTS = Object.freeze({
  API_URL: "http://127.0.0.1:7077",
  API_URL_ENV: "LOWDOWN_API_URL",
  PROWL_API_URL_ENV: "PROWL_API_URL",
  HOME_ENV: "LOWDOWN_HOME",
  HOME_DIR_NAME: ".lowdown",
  NODE_ID_HEADER: "x-lowdown-node-id",
  AGENT_KEY_HEADER: "x-agent-key",
  AUTOSTART_ENV: "LOWDOWN_AUTOSTART",
});

/** How every host delivers (SPEC §3, §5): the batch size, the request timeout, the exit budget, the answer's size bound, the pauses. */
export const DELIVERY = Object.freeze({
  BATCH_MAX: 100,
  SEND_TIMEOUT_MS: 1000,
  EXIT_BUDGET_MS: 100,
  ANSWER_MAX_BYTES: 65536,
  BACKOFF_MS: 30000,
  MAX_PAUSE_MS: 3600000,
});

/** The files every host shares under LOWDOWN_HOME (SPEC §3.5), and the spool's bounds (SPEC §3). */
export const FILES = Object.freeze({
  NODE_FILE: "node.json",
  SPOOL_DIR: "spool",
  DROPPED_FILE: "dropped.json",
  SPOOL_MAX_FILES: 100,
  SPOOL_MAX_RECORDS_PER_FILE: 500,
  SPOOL_STALE_CLAIM_MS: 60000,
  LOCAL_NODE_FILE: "local-node.json",
  LOCAL_NODE_LOCK: "local-node.lock",
  LOCAL_NODE_LOG: "local-node.log",
  CONFIG_FILE: "config.json",
});

/** What a client routing through the sampling gateway shares (SPEC §10): the gateway's own refusals (a status and a reason of these), and how long a catalog or salt fetch may take. */
export const GATEWAY = Object.freeze({
  REFUSAL_STATUSES: [400,403,404,429,503],
  REFUSAL_REASONS: ["unknown_service","missing_agent_key","unknown_agent_key","missing_salt_id","missing_decision","malformed_decision","unknown_salt","expired_salt","wrong_decision","not_sampled","below_min_reputation","no_credential","not_allowed","bad_path","gateway_rate_limited"],
  FETCH_TIMEOUT_MS: 5000,
});

/** Who made a record (SPEC §3.2): the release every package carries, and the recorder_version each recorder writes (<recorder>/<version>; a bare version, or one before IS_ERROR_COUNTED_SINCE, is an older recorder's). */
export const RECORDERS = Object.freeze({
  RELEASE: "0.2.0",
  PROXY_RECORDER: "lowdown-proxy/0.2.0",
  MCP_RECORDER: "lowdown-mcp/0.2.0",
  PROWL_RECORDER: "prowl/0.2.0",
  IS_ERROR_COUNTED_SINCE: "0.1.17",
});

/** One interaction: what was used, what it came to, how long it took. Never arguments, results, error text or log lines. */
export const InteractionRecord = Object.freeze({
  record_id: { kind: 'text', max: 64, pattern: "^[A-Za-z0-9_-]{1,64}$", required: false, nullable: true, default: undefined, doc: "Client idempotency key: a repeated id is acknowledged, stored once." },
  actor: { kind: 'text', max: 128, required: false, nullable: true, default: "anonymous", doc: "Who acted." },
  target: { kind: 'text', max: 256, required: true, nullable: false, default: undefined, doc: "What was used, e.g. npm:@scope/pkg, pypi:pkg, mcp:io.github.x/y, url:host." },
  target_type: { kind: 'enum', values: ["tool", "agent", "service", "human"], required: true, nullable: false, default: undefined, doc: "What kind of thing the target is." },
  task_type: { kind: 'text', max: 128, required: true, nullable: false, default: undefined, doc: "The tool name for tools/call, else the method." },
  outcome: { kind: 'enum', values: ["success", "partial", "failure", "cancelled"], required: true, nullable: false, default: undefined, doc: "What the interaction came to." },
  failure_type: { kind: 'enum', values: ["invalid_arguments", "timeout", "server_error", "tool_error", "unknown"], required: false, nullable: true, default: undefined, doc: "Why it failed (failure and partial only)." },
  error_layer: { kind: 'enum', values: ["tool", "request", "server"], required: false, nullable: true, default: undefined, doc: "Where it failed: tool and server failures count in success_rate, request-layer rejections do not." },
  request_kind: { kind: 'enum', values: ["tool", "protocol"], required: false, nullable: true, default: "tool", doc: "A tool call, or protocol traffic (never rated)." },
  latency_ms: { kind: 'number', min: 0, max: 86400000, required: false, nullable: true, default: undefined, doc: "Milliseconds from request to response." },
  source: { kind: 'enum', values: ["organic", "seeded", "synthetic"], required: false, nullable: true, default: "organic", doc: "Where the data came from: organic (real use), seeded, synthetic (tests)." },
  node_id: { kind: 'text', max: 67, pattern: "^ld_[A-Za-z0-9_-]{1,64}$", required: false, nullable: true, default: undefined, doc: "The recording node." },
  server_version: { kind: 'text', max: 32, pattern: "^[0-9A-Za-z.+_-]{1,32}$", required: false, nullable: true, default: undefined, doc: "The server's serverInfo.version." },
  schema_hash: { kind: 'text', max: 64, pattern: "^[0-9a-f]{64}$", required: false, nullable: true, default: undefined, doc: "SPEC §3.3 hash of the tools/list the server gave." },
  recorder_version: { kind: 'text', max: 32, pattern: "^[0-9A-Za-z.+_/-]{1,32}$", required: false, nullable: true, default: undefined, doc: "Who made the record: <recorder>/<version> (lowdown-proxy/0.2.0); a bare version, or one before 0.1.17, is an older recorder's, which counted isError results as successes." },
  protocol_version: { kind: 'text', max: 32, pattern: "^[0-9A-Za-z.+_-]{1,32}$", required: false, nullable: true, default: undefined, doc: "The negotiated MCP protocol version." },
  tools_has_more: { kind: 'bool', required: false, nullable: true, default: undefined, doc: "That tools/list had more pages than the one hashed." },
});

/** One HTTP call a client made: the host only, never a path, query, body or headers. */
export const Observation = Object.freeze({
  host: { kind: 'text', max: 253, required: true, nullable: false, default: undefined, doc: "The bare host: no scheme, port, path or query." },
  method: { kind: 'text', max: 16, required: true, nullable: false, default: undefined, doc: "The HTTP method." },
  status: { kind: 'integer', min: 100, max: 599, required: true, nullable: true, default: undefined, doc: "The HTTP status; null when no response arrived (a connect error, a timeout)." },
  latency_ms: { kind: 'number', min: 0, max: 86400000, required: true, nullable: false, default: undefined, doc: "Milliseconds until the end of the response (or the error)." },
  response_bytes: { kind: 'integer', min: 0, max: 9007199254740991, required: false, nullable: true, default: undefined, doc: "The response body's size, when known." },
  source: { kind: 'text', max: 64, required: false, nullable: true, default: "organic", doc: "organic, seeded or synthetic, or the reporting wrapper's name (1-64 of A-Za-z0-9._-), kept as reporter of organic data." },
  record_id: { kind: 'text', max: 64, pattern: "^[A-Za-z0-9_-]{1,64}$", required: false, nullable: true, default: undefined, doc: "Client idempotency key." },
});
