//! `classify`: the streaming MCP session state machine (SPEC §3.1).
//!
//! Feed it the bytes of an MCP stdio session as they arrive, from both directions, with
//! the caller's clock; it frames lines, pairs requests with their responses and emits one
//! [`Exchange`] per finished request, classified as SPEC §3.1 says. It also learns
//! [`SessionFacts`]: the server's name and version, the protocol version, and the schema
//! hash of the latest `tools/list`.
//!
//! # Framing and cost
//!
//! Lines end at `\n` (a trailing `\r` is dropped); partial tails are kept per direction
//! across feeds, one feed may hold many lines, and [`Classifier::close`] frames an
//! unterminated last line. There is no size limit. A line lying inside one feed is parsed
//! in place in a single pass that also finds its end; only a line cut across feeds is
//! copied, once, into that direction's tail buffer. Parsing checks the whole line's JSON
//! grammar without building values (nesting depth is unlimited), so the work is linear in
//! message size and a message is never held twice.
//!
//! # Decisions (SPEC §3.1 leaves these open)
//!
//! * **Pairing.** Requests are keyed by (direction, id). Ids compare as JavaScript would
//!   see them after `JSON.parse`: `1` and `"1"` differ, `"a"` and `"\u0061"` are the same,
//!   and so are `1`, `1.0` and `1e0` (a Node peer echoes all three as `1`).
//!   [`Exchange::id`] keeps the request's id text as it was on the wire.
//! * **A reused id.** A request that reuses the id of one still pending in the same
//!   direction ends the earlier one at once as `failure / unknown / request` (a protocol
//!   mistake, not counted). The answer that follows is the new request's, but it may be
//!   the earlier one's, so it teaches no facts (server info, protocol version, hashes).
//! * **Bounds.** At most [`MAX_PENDING`] (10,000) requests wait per direction, and apart
//!   from them at most 10,000 tasks; past that the oldest is given up as
//!   `failure / timeout / server`.
//! * **Request-layer failures.** JSON-RPC errors -32700, -32600, -32601 and -32602 are
//!   `error_layer: request`; -32602 has `failure_type: invalid_arguments`, the others
//!   `unknown`.
//! * **`isError` results that are the caller's mistake.** Real SDKs answer bad calls with
//!   `isError: true` results; the first text item tells them apart:
//!   - the TypeScript SDK's `MCP error -32602…` / `MCP error -32601…` (unknown tool,
//!     input validation) is classified as that JSON-RPC code, with it in `error_code`;
//!   - except `MCP error -32602: Output validation error…`: the *tool's own output* broke
//!     its `outputSchema`, a `tool_error` that counts;
//!   - the Python SDK's `Error executing tool NAME: N validation error(s) for
//!     FUNCArguments` (FastMCP, `MCPServer`; NAME must be the called tool) and
//!     `Input validation error…` (the 1.x low-level server) are `invalid_arguments`,
//!     request layer, with no `error_code`.
//!
//!   Any other `isError` result of a `tools/call` is `tool_error`, tool layer; `isError`
//!   on any other method's result is a success.
//! * **Server-layer failures.** Every other error code is `error_layer: server`,
//!   `failure_type: server_error`, except -32001 (the TypeScript SDK's request timeout),
//!   which is `timeout`. An error without an integral code is a server error too.
//! * **Cancellation.** `notifications/cancelled` naming a pending request of the same
//!   direction ends it with `outcome: cancelled` and no failure fields; a response that
//!   arrives later is ignored like any response with an unknown id.
//! * **`input_required`** (2026-07-28): a result with `resultType: "input_required"` is
//!   not an outcome. The request is forgotten without an exchange, because the client
//!   retries it under a new id and that retry is what gets classified.
//! * **Tasks.** A `tools/call` answered with a task is not finished by that answer; its
//!   outcome is credited to the tool's name when the task's outcome arrives. Both shapes
//!   are followed:
//!   - 2025-11-25 (`params.task` on the call, answer `{"task": {"taskId", "status", …}}`):
//!     the outcome is the answer to `tasks/result` for that task, a `CallToolResult`
//!     (classified like any tool result, SDK quirks included) or a JSON-RPC error;
//!   - 2026-07-28 draft, the `io.modelcontextprotocol/tasks` extension (answer with
//!     `resultType: "task"` and the task's fields, `taskId` among them): the outcome is the
//!     first `tasks/get` answer whose status is terminal, `completed` with its `result`
//!     (a `CallToolResult`) or `failed` with its `error` (a JSON-RPC error);
//!   - in both, a task answer or status notification (`notifications/tasks/status`,
//!     `notifications/tasks`) with status `cancelled` ends it as `cancelled`, and a
//!     2026-07-28 notification carrying `completed` + `result` or `failed` + `error` ends
//!     it like the `tasks/get` answer would.
//!
//!   The request whose answer carries the outcome is reported once, as the tool call: one
//!   exchange with `method: "tools/call"`, the tool's name, the `tools/call`'s id, timed
//!   from the `tools/call` to that answer, and `has_content: false` (task results never
//!   carry the log block, SPEC §3.4). The creation answer, and `tasks/get` polls that are
//!   not terminal, are not outcomes: the polls are protocol traffic. Without a string
//!   `taskId` the answer is classified as an ordinary result.
//! * **Results and errors together**: when a response carries both, the error wins.
//! * **End of session** ([`Classifier::close`] with a [`CloseReason`]): unterminated last
//!   lines are framed, then every request and task still waiting (both directions, oldest
//!   first) is reported, timed at the close: `cancelled` when the client ended the session
//!   (stdin EOF, a signal to the proxy), `failure / server_error / server` when the server
//!   died or broke its pipe on its own. A request that was waiting for a task's outcome
//!   is reported as that task, once.
//! * **Latency** is `now_ms - started_ms`, never negative.
//! * **Facts.** `server_version` and `protocol_version` are published only when, with
//!   control characters removed, they match `^[0-9A-Za-z.+_-]{1,32}$`
//!   ([`crate::record::build::sanitize_server_version`]); `server_name` has control
//!   characters removed and is kept when 1 to 128 characters long. Only results of
//!   client→server requests teach facts:
//!   - a successful `initialize` sets them from `serverInfo` and `protocolVersion`;
//!     `server/discover` from `_meta["io.modelcontextprotocol/serverInfo"]` (or
//!     `serverInfo`) and `protocolVersion` when present;
//!   - 2026-07-28: a request whose `_meta["io.modelcontextprotocol/protocolVersion"]`
//!     names a version, answered with a result (not an error: a refused `server/discover`
//!     probe teaches nothing), sets `protocol_version`; `_meta["io.modelcontextprotocol/serverInfo"]`
//!     in *any* result sets the server name and version;
//!   - a successful first-page `tools/list` (no `cursor`) replaces the hashes,
//!     `tool_count` and `tools_has_more`; a list that cannot be hashed leaves the previous
//!     ones.
//! * **Ignored, never fatal**: lines that are not JSON (including invalid UTF-8 outside
//!   strings), other notifications, responses with unknown ids, batch elements that are not
//!   objects. Invalid UTF-8 inside strings is read as U+FFFD, as a Node peer reads it.

use serde::{Deserialize, Serialize};

use crate::record::{ErrorLayer, FailureType, Outcome, RequestKind};

mod framing;
mod learn;
mod message;
mod outcome;
mod pending;
mod scan;
mod session;
mod swar;
mod text;

pub use outcome::error_code_class;
pub use pending::MAX_PENDING;
pub use session::Classifier;

/// Who ended the session, which decides what requests still waiting come to (SPEC §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CloseReason {
    /// The client ended it: its stdin reached EOF, or the proxy got a signal. Requests
    /// still waiting are `cancelled` and do not count.
    ClientEnded,
    /// The server ended it on its own: the child exited or broke its pipe. Requests still
    /// waiting are `failure / server_error / server`, and count.
    ServerEnded,
}

/// Which way a message travelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// From the MCP client to the server (the proxy's stdin side).
    ClientToServer,
    /// From the server to the client (the child's stdout side).
    ServerToClient,
}

impl Direction {
    /// The other direction (where responses to this direction's requests travel).
    pub fn opposite(self) -> Direction {
        match self {
            Direction::ClientToServer => Direction::ServerToClient,
            Direction::ServerToClient => Direction::ClientToServer,
        }
    }
}

/// One finished request and what it came to.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Exchange {
    /// Direction of the request (server→client requests are tracked but not recorded).
    pub direction: Direction,
    /// The request's id text as it was on the wire (`1` and `"1"` differ); for a tool call
    /// that ran as a task, the `tools/call`'s id.
    pub id: String,
    /// The request's method.
    pub method: String,
    /// `params.name` of a `tools/call`.
    pub tool_name: Option<String>,
    /// `tool` for `tools/call`, else `protocol`.
    pub request_kind: RequestKind,
    /// What the request came to.
    pub outcome: Outcome,
    /// Why it failed, when it did.
    pub failure_type: Option<FailureType>,
    /// Where it failed, when it did.
    pub error_layer: Option<ErrorLayer>,
    /// The JSON-RPC error code, or -32602/-32601 from the TypeScript SDK `isError` quirk.
    pub error_code: Option<i64>,
    /// Caller's clock when the request line was complete.
    pub started_ms: f64,
    /// Milliseconds from request to response (never negative).
    pub latency_ms: f64,
    /// The response was a final result object with a `content` array (the only kind the
    /// proxy's `--watch-log` appends to).
    pub has_content: bool,
}

/// What the classifier has learnt about the session so far. Missing fields deserialize to
/// their defaults (nothing learnt).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(default)]
pub struct SessionFacts {
    /// `serverInfo.name`, control characters removed (1–128 characters, else null).
    pub server_name: Option<String>,
    /// `serverInfo.version`, sanitised per SPEC §3.2 (null when unsafe).
    pub server_version: Option<String>,
    /// Negotiated protocol version, sanitised like the server version.
    pub protocol_version: Option<String>,
    /// SPEC §3.3 schema hash of the latest first-page `tools/list`.
    pub schema_hash: Option<String>,
    /// SPEC §3.3 description hash of the same list.
    pub desc_hash: Option<String>,
    /// That list had a `nextCursor` (only its first page was hashed).
    pub tools_has_more: bool,
    /// Number of tools on that first page.
    pub tool_count: Option<usize>,
}
