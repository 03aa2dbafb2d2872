//! The interaction record (SPEC §3.2): its type, how one is built from a classified
//! exchange (`build`), and validation of records arriving at the API (`validate`).

use serde::{Deserialize, Serialize};

pub mod build;
pub mod delivery;
pub mod provenance;
pub mod recorder;
pub mod spool;
pub mod validate;

pub use recorder::Recorder;

/// What an interaction came to.
///
/// `Cancelled` is Lowdown's answer to SPEC §3.1's "cancelled-style data": a request the
/// client withdrew with `notifications/cancelled` before it finished. It is recorded so
/// that volume is honest, but it never counts in `success_rate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The call did what was asked.
    Success,
    /// The call did some of what was asked.
    Partial,
    /// The call failed; `error_layer` says where.
    Failure,
    /// The client cancelled the request before it finished.
    Cancelled,
}

/// Why an interaction failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FailureType {
    /// The caller sent arguments the tool rejected.
    InvalidArguments,
    /// No answer in time.
    Timeout,
    /// The server (or the process behind it) failed.
    ServerError,
    /// The tool ran and reported an error (`isError: true`).
    ToolError,
    /// Failed for a reason not known.
    Unknown,
}

/// Where a failure happened (SPEC §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ErrorLayer {
    /// The tool itself reported failure; counts in `success_rate`.
    Tool,
    /// The request was rejected as malformed or unknown; does not count in `success_rate`.
    Request,
    /// The server failed; counts in `success_rate`.
    Server,
}

/// Whether an exchange was a tool interaction or protocol traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RequestKind {
    /// A `tools/call` (or a non-MCP interaction reported directly).
    Tool,
    /// `initialize`, `tools/list`, `ping` and every other non-`tools/call` method.
    Protocol,
}

/// What kind of thing the target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TargetType {
    /// An MCP server or other tool (the proxy records these).
    Tool,
    /// Another agent.
    Agent,
    /// An HTTP API or other service.
    Service,
    /// A person.
    Human,
}

/// Where the data came from. Sources are reported apart and never mixed.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Real use by real agents.
    #[default]
    Organic,
    /// Data planted to bootstrap a target.
    Seeded,
    /// Tests and probes (`--test`).
    Synthetic,
}

/// One interaction as recorded and sent to the API (SPEC §3.2).
///
/// Never holds arguments, results, error messages or log lines. `created_at` is set by
/// the server and is not part of what a client sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InteractionRecord {
    /// Client-generated idempotency key; a repeated id is counted once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_id: Option<String>,
    /// Who acted (default `anonymous`).
    pub actor: String,
    /// What was used, e.g. `npm:@modelcontextprotocol/server-everything`.
    pub target: String,
    /// What kind of thing the target is.
    pub target_type: TargetType,
    /// Tool name for `tools/call`, else the method.
    pub task_type: String,
    /// What the interaction came to.
    pub outcome: Outcome,
    /// Why it failed, when it did.
    #[serde(default)]
    pub failure_type: Option<FailureType>,
    /// Where it failed, when it did.
    #[serde(default)]
    pub error_layer: Option<ErrorLayer>,
    /// Tool interaction or protocol traffic.
    pub request_kind: RequestKind,
    /// Milliseconds from request to response.
    #[serde(default)]
    pub latency_ms: Option<f64>,
    /// Where the data came from.
    #[serde(default)]
    pub source: Source,
    /// The recording node (`ld_<12 hex>`).
    #[serde(default)]
    pub node_id: Option<String>,
    /// The server's `serverInfo.version`, sanitised; null when unsafe.
    #[serde(default)]
    pub server_version: Option<String>,
    /// SPEC §3.3 hash of the latest `tools/list`.
    #[serde(default)]
    pub schema_hash: Option<String>,
    /// Version of the recorder that built this record.
    #[serde(default)]
    pub recorder_version: Option<String>,
    /// Negotiated MCP protocol version.
    #[serde(default)]
    pub protocol_version: Option<String>,
    /// The `tools/list` behind `schema_hash` had a `nextCursor` (more pages than the one
    /// hashed); absent when no `tools/list` was seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_has_more: Option<bool>,
}
