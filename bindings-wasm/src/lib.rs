//! WebAssembly binding of `lowdown-core` (wasm-bindgen + serde-wasm-bindgen).
//!
//! Each export is a thin wrapper: it converts host values, calls the core, and converts
//! the result (plain objects with the core's snake_case keys) or the error (see
//! [`errors`]). Rust names are prefixed `Js`/`js_` and exported without the prefix in
//! camelCase, exactly as the Node binding names them, so one script runs on both.
//! No logic lives here.

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

// The plain-object types the exports name (`Exchange`, `SessionFacts`, ...), declared once
// for both JavaScript bindings in bindings-node/types.d.ts and appended to the generated .d.ts.
#[wasm_bindgen::prelude::wasm_bindgen(typescript_custom_section)]
const TYPES: &str = include_str!("../../bindings-node/types.d.ts");
