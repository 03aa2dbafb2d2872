//! The server's integration tests, one crate so that a change links once: each module is
//! what was a test binary of its own (`cargo test -p lowdown-server --test it <module>::`).

#[macro_use]
mod common;
mod provider_fixtures;
mod scanner_fixtures;

mod catalog_file;
mod changes;
mod daily_export;
mod forgery;
mod gateway_api;
mod gateway_carry;
mod gateway_proxy;
mod gateway_refused;
mod ingest;
mod instances;
mod layers;
mod listeners;
mod local_node;
mod meta;
mod migrate;
mod migrate_rollups;
mod mirror_path;
mod openapi;
mod otlp;
mod packages;
mod pages;
mod preflight;
mod printed_answers;
mod provider_api;
mod provider_checks;
mod provider_everything;
mod provider_local_code;
mod provider_race;
mod publish;
mod quotas;
mod registry_view;
mod reputation;
mod retention;
mod roll_up;
mod rollups_file;
mod scanner_cli;
mod scanner_days;
mod scanner_everything;
mod scanner_hosts;
mod scanner_probe;
mod scanner_registry;
mod scanner_runs;
mod seed;
mod socket;
mod telemetry;
