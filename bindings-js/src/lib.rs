//! The JavaScript binding of `lowdown-core`, one crate for both JavaScript hosts: napi-rs on
//! native targets (the `lowdown-core` npm package and its per-platform packages) and
//! wasm-bindgen on `wasm32` (the WebAssembly fallback and `lowdown-observe`).
//!
//! Each export is written once, with `#[cfg_attr]` choosing the napi or the wasm-bindgen
//! attribute, so both builds export the same names with the same shapes. Only what the hosts
//! use is exported (features `proxy` and `observe`); every other core operation is proven by
//! the Rust vectors and the server's tests. Structured values cross as JSON text, so no
//! serde glue is compiled into the WebAssembly module. Rust names are prefixed `Js`/`js_` and
//! exported without the prefix. No logic lives here.

mod errors;
pub mod host;

#[cfg(feature = "observe")]
pub mod gateway;
#[cfg(feature = "observe")]
pub mod observe;
#[cfg(feature = "proxy")]
pub mod otel;
#[cfg(feature = "proxy")]
pub mod plans;
#[cfg(feature = "proxy")]
pub mod proxy;
