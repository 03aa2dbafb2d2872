//! Node.js binding of `lowdown-core` (napi-rs).
//!
//! Each export is a thin wrapper: it converts host values, calls the core, and converts
//! the result (plain objects with the core's snake_case keys) or the error (see
//! [`errors`]). Rust names are prefixed `Js`/`js_` and exported without the prefix in
//! camelCase. No logic lives here.

mod aggregate;
mod classify;
mod convert;
mod errors;
mod functions;
mod logdiff;
mod options;
mod record;
mod sample;
mod telemetry;
