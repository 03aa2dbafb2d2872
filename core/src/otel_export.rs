//! The proxy as an MCP instrumentation (issue 27): each exchange the [`crate::record::Recorder`]
//! classifies becomes an OpenTelemetry client span and a point of the
//! `mcp.client.operation.duration` histogram, following the GenAI/MCP semantic conventions,
//! exported over OTLP/HTTP (protobuf or JSON) to the user's own collector.
//!
//! Everything is decided here and the host only does the IO:
//! - [`config`]: whether export is on (`LOWDOWN_OTEL=1` plus the standard `OTEL_*` exporter
//!   variables, read as the OTel specification defines them) and where each signal goes;
//! - [`span`]: the span of one exchange (name, attributes, status), a pure function of what
//!   the classifier learnt; never arguments, results or error text;
//! - [`exporter`]: the bounded queue, the histogram, when a batch is due, what an answer
//!   means (a collector that is down or hangs costs a dropped count, nothing else);
//! - [`encode`]: OTLP protobuf and OTLP JSON bytes, written by hand (small: no protobuf crate
//!   in the WebAssembly fallback).

pub mod config;
pub mod encode;
pub mod exporter;
pub mod span;

pub use config::{decide, from_env, Decision, ExportConfig, Protocol};
pub use exporter::{Exporter, Signal};
pub use span::{exchange_span, ExchangeSpan};

/// The histogram's bucket boundaries in seconds, as the conventions advise for
/// `mcp.client.operation.duration`.
pub const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The metric's name, unit and description (the conventions').
pub const DURATION_METRIC: &str = "mcp.client.operation.duration";
/// The metric's unit (UCUM).
pub const DURATION_UNIT: &str = "s";
/// The metric's description.
pub const DURATION_DESCRIPTION: &str = "The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received.";
