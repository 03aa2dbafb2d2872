//! The Registry Scanner's rules (SPEC §8): everything about a daily scan that is a rule
//! rather than IO.
//!
//! The server reads the MCP Registry, keeps the cohort, drives the probes over HTTP and
//! stores observations; every decision it makes on the way comes from here:
//! - [`registry`]: one Registry page → entries; the read's loop guards; which entries are
//!   kept and which remotes are probeable; declaration changes between two reads.
//! - [`cohort`]: the fixed sample (`sha256("mcp:"+name)` order) and how it may grow.
//! - [`dispatch`]: which probe starts next, under a total and a per-host limit.
//! - [`target`]: which remote URLs and resolved addresses may be reached (SSRF rules).
//! - [`probe`]: the probe of one remote as a state machine: it says which request to send
//!   next and turns the answers into an [`Observation`].
//! - [`rpc`] and [`sse`]: reading a JSON or SSE answer up to the matching id, under a cap.
//! - [`tools`]: `tool_count`, `name_hash`, tool names and definitions over every page.
//! - [`quality`]: the counts conformance scoring needs (SPEC §11), never the text.
//! - [`history`] and [`message`]: the `registry` and `scanner` answer blocks from stored rows.
//! - [`packages`]: what npm and PyPI say about the packages an entry declares.
//!
//! Nothing here does IO or reads a clock: times and days come in as parameters.

pub mod changes;
pub mod cohort;
pub use crate::days;
pub mod dispatch;
pub mod history;
pub mod message;
pub mod packages;
pub mod probe;
pub mod quality;
pub mod registry;
pub mod rpc;
pub mod sse;
pub mod target;
pub mod tools;

use serde::{Deserialize, Serialize};

pub use dispatch::{DEFAULT_CONCURRENCY, DEFAULT_PER_HOST_CONCURRENCY};
pub use probe::{Observation, Probe, ProbeResult, Reply, Request, Step};
pub use tools::ToolDefinition;

/// The product name the Scanner announces (`clientInfo.name`, user agent).
pub const CLIENT_NAME: &str = "lowdown-scanner";
/// The protocol version `initialize` asks for.
pub const PROTOCOL_VERSION: &str = "2025-06-18";
/// The stateless revision tried first with `--modern` (`server/discover`).
pub const MODERN_PROTOCOL_VERSION: &str = "2026-07-28";
/// Milliseconds one probe request may take, answer included.
pub const REQUEST_TIMEOUT_MS: u64 = 10_000;
/// Largest answer to `initialize` (and `server/discover`) read.
pub const INITIALIZE_BODY_CAP: usize = 1 << 20;
/// Largest answer to one `tools/list` page read.
pub const TOOLS_BODY_CAP: usize = 4 << 20;
/// Most `tools/list` pages followed per remote.
pub const MAX_TOOLS_PAGES: usize = 20;
/// Default cohort size for a new cohort.
pub const DEFAULT_COHORT_SIZE: u64 = 5_000;
/// Days covered by the answer's 30-day blocks, today included.
pub const WINDOW_DAYS: i64 = 30;

/// Why a probe got no usable answer (SPEC §8 `error_type`). Transport kinds are set only
/// when no HTTP response arrived; `invalid_response` is a 2xx that is not the JSON-RPC
/// answer asked for; `blocked_url` is a URL or address the SSRF rules refuse (no byte is
/// sent to it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    /// No answer within [`REQUEST_TIMEOUT_MS`].
    Timeout,
    /// The name did not resolve.
    Dns,
    /// The TLS handshake failed (certificate, protocol).
    Tls,
    /// The connection was refused.
    ConnRefused,
    /// The connection was reset or closed mid-exchange.
    ConnReset,
    /// Any other transport failure.
    NetworkError,
    /// A 2xx answer that is not the JSON-RPC answer asked for (HTML, wrong id, too large).
    InvalidResponse,
    /// Refused by the SSRF rules before any byte was sent.
    BlockedUrl,
}

/// Why a day of a cohort member has no observation (SPEC §8 `missing_days[].reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum MissingReason {
    /// The target was not a cohort member that day.
    NotInSample,
    /// A member whose entry was not active and latest in that day's Registry read.
    NotListed,
    /// A listed member that declared no streamable-HTTP remote the Scanner may probe.
    NoProbeableRemote,
    /// No scan ran that day, its Registry read failed, or it stopped before this member.
    ScannerDidNotRun,
}
