//! `lowdown-core`: the pure logic of Lowdown.
//!
//! Everything here is deterministic and free of IO: bytes, time, file contents and
//! configuration come in as parameters from the host (the npm proxy, the Python package,
//! the WASM build, the server). Each operation lives in its own module.

pub mod aggregate;
pub mod benchmark;
pub mod change_feed;
pub mod classify;
pub mod contract;
pub mod days;
pub mod defaults;
pub mod files;
pub mod gateway;
pub mod identity;
pub mod local_node;
pub mod logdiff;
pub mod otel_export;
pub mod otlp;
pub mod preflight;
pub mod quota;
pub mod record;
pub mod redact;
pub mod sample;
pub mod scanner;
pub mod schema_hash;
pub mod settings;
pub mod stored;
pub mod target_label;
pub mod telemetry;
