//! `lowdown-server`: the Lowdown HTTP API (SPEC §4-§5) over SQLite or PostgreSQL.
//!
//! [`app`] builds the router from an [`AppState`]; [`serve`] runs it with graceful
//! shutdown. Business rules (validation, classification, summaries, weights, sampling)
//! come from `lowdown-core`; this crate only stores and serves.

// The OpenAPI document is one large `json!` literal.
#![recursion_limit = "512"]

pub mod caller;
pub mod clock;
pub mod daily;
pub mod db;
pub mod drain;
pub mod error;
pub mod export;
pub mod extract;
pub mod files;
pub mod gateway;
pub mod listen;
pub mod local_node;
pub mod names;
pub mod openapi;
pub mod pages;
pub mod provider;
pub mod publish;
pub mod retention;
pub mod routes;
pub mod scanner;
pub mod services;
pub mod state;

pub use routes::app;
pub use state::AppState;
pub mod config;
pub mod serve;

pub use serve::{serve, serve_within};
