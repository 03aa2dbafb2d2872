"""The wire contracts of Lowdown (SPEC §3.2, §4). Generated from lowdown-core's contract (core/src/contract.rs) by `make contracts`: do not edit."""

from typing import Literal, Optional, TypedDict

TARGET_TYPE_VALUES = ("tool", "agent", "service", "human",)
OUTCOME_VALUES = ("success", "partial", "failure", "cancelled",)
FAILURE_TYPE_VALUES = ("invalid_arguments", "timeout", "server_error", "tool_error", "unknown",)
ERROR_LAYER_VALUES = ("tool", "request", "server",)
REQUEST_KIND_VALUES = ("tool", "protocol",)
SOURCE_VALUES = ("organic", "seeded", "synthetic",)

# DELIVERY: How every host delivers (SPEC §3, §5): the batch size, the request timeout, the exit budget, the answer's size bound, the pauses.
BATCH_MAX = 100
SEND_TIMEOUT_MS = 1000
EXIT_BUDGET_MS = 100
ANSWER_MAX_BYTES = 65536
BACKOFF_MS = 30000
MAX_PAUSE_MS = 3600000

# FILES: The files every host shares under LOWDOWN_HOME (SPEC §3.5), and the spool's bounds (SPEC §3).
NODE_FILE = "node.json"
SPOOL_DIR = "spool"
DROPPED_FILE = "dropped.json"
SPOOL_MAX_FILES = 100
SPOOL_MAX_RECORDS_PER_FILE = 500
SPOOL_STALE_CLAIM_MS = 60000
LOCAL_NODE_FILE = "local-node.json"
LOCAL_NODE_LOCK = "local-node.lock"
LOCAL_NODE_LOG = "local-node.log"
CONFIG_FILE = "config.json"

# GATEWAY: What a client routing through the sampling gateway shares (SPEC §10): the gateway's own refusals (a status and a reason of these), and how long a catalog or salt fetch may take.
REFUSAL_STATUSES = (400, 403, 404, 429, 503,)
REFUSAL_REASONS = ("unknown_service", "missing_agent_key", "unknown_agent_key", "missing_salt_id", "missing_decision", "malformed_decision", "unknown_salt", "expired_salt", "wrong_decision", "not_sampled", "below_min_reputation", "no_credential", "not_allowed", "bad_path", "gateway_rate_limited",)
FETCH_TIMEOUT_MS = 5000

# RECORDERS: Who made a record (SPEC §3.2): the release every package carries, and the recorder_version each recorder writes (<recorder>/<version>; a bare version, or one before IS_ERROR_COUNTED_SINCE, is an older recorder's).
RELEASE = "0.2.0"
PROXY_RECORDER = "lowdown-proxy/0.2.0"
MCP_RECORDER = "lowdown-mcp/0.2.0"
PROWL_RECORDER = "prowl/0.2.0"
IS_ERROR_COUNTED_SINCE = "0.1.17"

RECORD_RECORD_ID_MAX = 64
RECORD_ACTOR_MAX = 128
RECORD_TARGET_MAX = 256
RECORD_TASK_TYPE_MAX = 128
RECORD_NODE_ID_MAX = 67
RECORD_SERVER_VERSION_MAX = 32
RECORD_SCHEMA_HASH_MAX = 64
RECORD_RECORDER_VERSION_MAX = 32
RECORD_PROTOCOL_VERSION_MAX = 32
OBSERVATION_HOST_MAX = 253
OBSERVATION_METHOD_MAX = 16
OBSERVATION_SOURCE_MAX = 64
OBSERVATION_RECORD_ID_MAX = 64


class InteractionRecord(TypedDict, total=False):
    """One interaction: what was used, what it came to, how long it took. Never arguments, results, error text or log lines. Required: target, target_type, task_type, outcome."""

    record_id: Optional[str]
    """Client idempotency key: a repeated id is acknowledged, stored once. (string, at most 64 characters, matching ^[A-Za-z0-9_-]{1,64}$)"""
    actor: Optional[str]
    """Who acted. (string of 1 to 128 characters)"""
    target: str
    """What was used, e.g. npm:@scope/pkg, pypi:pkg, mcp:io.github.x/y, url:host. (string of 1 to 256 characters)"""
    target_type: Literal["tool", "agent", "service", "human"]
    """What kind of thing the target is. (tool | agent | service | human)"""
    task_type: str
    """The tool name for tools/call, else the method. (string of 1 to 128 characters)"""
    outcome: Literal["success", "partial", "failure", "cancelled"]
    """What the interaction came to. (success | partial | failure | cancelled)"""
    failure_type: Optional[Literal["invalid_arguments", "timeout", "server_error", "tool_error", "unknown"]]
    """Why it failed (failure and partial only). (invalid_arguments | timeout | server_error | tool_error | unknown)"""
    error_layer: Optional[Literal["tool", "request", "server"]]
    """Where it failed: tool and server failures count in success_rate, request-layer rejections do not. (tool | request | server)"""
    request_kind: Optional[Literal["tool", "protocol"]]
    """A tool call, or protocol traffic (never rated). (tool | protocol)"""
    latency_ms: Optional[float]
    """Milliseconds from request to response. (number from 0 to 86400000)"""
    source: Optional[Literal["organic", "seeded", "synthetic"]]
    """Where the data came from: organic (real use), seeded, synthetic (tests). (organic | seeded | synthetic)"""
    node_id: Optional[str]
    """The recording node. (string, at most 67 characters, matching ^ld_[A-Za-z0-9_-]{1,64}$)"""
    server_version: Optional[str]
    """The server's serverInfo.version. (string, at most 32 characters, matching ^[0-9A-Za-z.+_-]{1,32}$)"""
    schema_hash: Optional[str]
    """SPEC §3.3 hash of the tools/list the server gave. (string, at most 64 characters, matching ^[0-9a-f]{64}$)"""
    recorder_version: Optional[str]
    """Who made the record: <recorder>/<version> (lowdown-proxy/0.2.0); a bare version, or one before 0.1.17, is an older recorder's, which counted isError results as successes. (string, at most 32 characters, matching ^[0-9A-Za-z.+_/-]{1,32}$)"""
    protocol_version: Optional[str]
    """The negotiated MCP protocol version. (string, at most 32 characters, matching ^[0-9A-Za-z.+_-]{1,32}$)"""
    tools_has_more: Optional[bool]
    """That tools/list had more pages than the one hashed. (true | false)"""


class Observation(TypedDict, total=False):
    """One HTTP call a client made: the host only, never a path, query, body or headers. Required: host, method, status, latency_ms."""

    host: str
    """The bare host: no scheme, port, path or query. (string of 1 to 253 characters)"""
    method: str
    """The HTTP method. (string of 1 to 16 characters)"""
    status: Optional[int]
    """The HTTP status; null when no response arrived (a connect error, a timeout). (whole number from 100 to 599)"""
    latency_ms: float
    """Milliseconds until the end of the response (or the error). (number from 0 to 86400000)"""
    response_bytes: Optional[int]
    """The response body's size, when known. (whole number from 0 to 9007199254740991)"""
    source: Optional[str]
    """organic, seeded or synthetic, or the reporting wrapper's name (1-64 of A-Za-z0-9._-), kept as reporter of organic data. (string of 1 to 64 characters)"""
    record_id: Optional[str]
    """Client idempotency key. (string, at most 64 characters, matching ^[A-Za-z0-9_-]{1,64}$)"""
