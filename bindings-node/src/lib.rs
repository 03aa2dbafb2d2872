//! Node.js binding of `lowdown-core` (napi-rs).
//!
//! Each export is a thin wrapper: it converts host values, calls the core, and converts
//! the result (plain objects with the core's snake_case keys) or the error (see
//! [`errors`]). Rust names are prefixed `Js`/`js_` and exported without the prefix in
//! camelCase. No logic lives here.

pub mod aggregate;
pub mod classify;
mod convert;
mod errors;
pub mod functions;
pub mod logdiff;
pub mod options;
pub mod record;
pub mod sample;
pub mod telemetry;
