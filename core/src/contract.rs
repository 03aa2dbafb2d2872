//! The wire contracts, defined once: the interaction record (SPEC §3.2) and the observation
//! (SPEC §4), with their enumerations and limits, as data next to the types they describe.
//!
//! Every other copy is made from here, never typed again:
//! - the server's OpenAPI components and the field table of `llms.txt`, at run time;
//! - the TypeScript declarations (`bindings-js/contract.d.ts`), the Python stub
//!   (`prowl/_contract.py`), and the defaults and limits the npm packages use
//!   (`src/contract.js` of lowdown-proxy and lowdown-observe), written by `make contracts` (the `contracts`
//!   example) and checked for drift by `make test`.
//!
//! The validators (`record::validate`, `telemetry::validate_observation`) apply the same
//! limits: the constants below are theirs. A unit test holds each enumeration's strings to
//! the serde names of its Rust type, and each field list to what the type serialises.

use crate::record::provenance::RECORDER_VERSION_PATTERN;
use crate::record::validate::{MAX_LATENCY_MS, MAX_NAME, MAX_RECORD_ID, MAX_TARGET, MAX_VERSION};
use crate::telemetry::{MAX_METHOD, MAX_REPORTER, MAX_RESPONSE_BYTES};
use serde_json::{json, Map, Value};

mod emit;

pub use emit::{js_module, llms_fields, python_module, typescript};

/// What a field holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// Text of 1..=`max` characters (no control characters), matching `pattern` if given.
    Text {
        /// Longest value, in characters.
        max: usize,
        /// A regular expression the whole value matches.
        pattern: Option<&'static str>,
    },
    /// One of these strings.
    Enum(&'static [&'static str]),
    /// A finite number within `min..=max`.
    Number {
        /// Smallest value.
        min: f64,
        /// Largest value.
        max: f64,
    },
    /// A whole number within `min..=max`.
    Integer {
        /// Smallest value.
        min: u64,
        /// Largest value.
        max: u64,
    },
    /// `true` or `false`.
    Bool,
}

/// One field of a contract.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Field {
    /// The JSON key.
    pub name: &'static str,
    /// What it holds.
    pub kind: Kind,
    /// A sender must give it.
    pub required: bool,
    /// `null` is accepted (and means "absent").
    pub nullable: bool,
    /// The value taken when it is absent, as JSON text.
    pub default: Option<&'static str>,
    /// What it means, in one line.
    pub doc: &'static str,
}

/// A named object shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contract {
    /// The type's name in every host (`InteractionRecord`, `Observation`).
    pub name: &'static str,
    /// The prefix of its constants (`RECORD`, `OBSERVATION`).
    pub short: &'static str,
    /// What it is.
    pub doc: &'static str,
    /// Its fields, in the order the core writes them.
    pub fields: &'static [Field],
}

/// `outcome` values (`record::Outcome`).
pub const OUTCOMES: &[&str] = &["success", "partial", "failure", "cancelled"];
/// `failure_type` values (`record::FailureType`).
pub const FAILURE_TYPES: &[&str] = &[
    "invalid_arguments",
    "timeout",
    "server_error",
    "tool_error",
    "unknown",
];
/// `error_layer` values (`record::ErrorLayer`).
pub const ERROR_LAYERS: &[&str] = &["tool", "request", "server"];
/// `request_kind` values (`record::RequestKind`).
pub const REQUEST_KINDS: &[&str] = &["tool", "protocol"];
/// `target_type` values (`record::TargetType`).
pub const TARGET_TYPES: &[&str] = &["tool", "agent", "service", "human"];
/// `source` values (`record::Source`).
pub const SOURCES: &[&str] = &["organic", "seeded", "synthetic"];

/// The pattern of a version the API publishes (SPEC §3.2).
pub const VERSION_PATTERN: &str = "^[0-9A-Za-z.+_-]{1,32}$";
/// The pattern of a client idempotency key.
pub const RECORD_ID_PATTERN: &str = "^[A-Za-z0-9_-]{1,64}$";
/// The pattern of a node id (SPEC §3.5).
pub const NODE_ID_PATTERN: &str = "^ld_[A-Za-z0-9_-]{1,64}$";
/// The pattern of a schema hash (SPEC §3.3).
pub const HASH_PATTERN: &str = "^[0-9a-f]{64}$";

const fn text(max: usize) -> Kind {
    Kind::Text { max, pattern: None }
}
const fn pattern(max: usize, p: &'static str) -> Kind {
    Kind::Text {
        max,
        pattern: Some(p),
    }
}
const fn field(name: &'static str, kind: Kind, doc: &'static str) -> Field {
    Field {
        name,
        kind,
        required: false,
        nullable: true,
        default: None,
        doc,
    }
}
const fn required(mut f: Field) -> Field {
    f.required = true;
    f.nullable = false;
    f
}
const fn or(mut f: Field, default: &'static str) -> Field {
    f.default = Some(default);
    f
}

/// The interaction record (SPEC §3.2): what a recorder sends to `POST /api/interactions`.
pub const RECORD: Contract = Contract {
    name: "InteractionRecord",
    short: "RECORD",
    doc: "One interaction: what was used, what it came to, how long it took. Never arguments, results, error text or log lines.",
    fields: &[
        field("record_id", pattern(MAX_RECORD_ID, RECORD_ID_PATTERN), "Client idempotency key: a repeated id is acknowledged, stored once."),
        or(field("actor", text(MAX_NAME), "Who acted."), "\"anonymous\""),
        required(field("target", text(MAX_TARGET), "What was used, e.g. npm:@scope/pkg, pypi:pkg, mcp:io.github.x/y, url:host.")),
        required(field("target_type", Kind::Enum(TARGET_TYPES), "What kind of thing the target is.")),
        required(field("task_type", text(MAX_NAME), "The tool name for tools/call, else the method.")),
        required(field("outcome", Kind::Enum(OUTCOMES), "What the interaction came to.")),
        field("failure_type", Kind::Enum(FAILURE_TYPES), "Why it failed (failure and partial only)."),
        field("error_layer", Kind::Enum(ERROR_LAYERS), "Where it failed: tool and server failures count in success_rate, request-layer rejections do not."),
        or(field("request_kind", Kind::Enum(REQUEST_KINDS), "A tool call, or protocol traffic (never rated)."), "\"tool\""),
        field("latency_ms", Kind::Number { min: 0.0, max: MAX_LATENCY_MS }, "Milliseconds from request to response."),
        or(field("source", Kind::Enum(SOURCES), "Where the data came from: organic (real use), seeded, synthetic (tests)."), "\"organic\""),
        field("node_id", pattern(67, NODE_ID_PATTERN), "The recording node."),
        field("server_version", pattern(MAX_VERSION, VERSION_PATTERN), "The server's serverInfo.version."),
        field("schema_hash", pattern(64, HASH_PATTERN), "SPEC §3.3 hash of the tools/list the server gave."),
        field("recorder_version", pattern(MAX_VERSION, RECORDER_VERSION_PATTERN), "Who made the record: <recorder>/<version> (lowdown-proxy/0.2.0); a bare version, or one before 0.1.17, is an older recorder's, which counted isError results as successes."),
        field("protocol_version", pattern(MAX_VERSION, VERSION_PATTERN), "The negotiated MCP protocol version."),
        field("tools_has_more", Kind::Bool, "That tools/list had more pages than the one hashed."),
    ],
};

/// The observation (SPEC §4): what a telemetry client sends to `POST /v1/telemetry/observe`.
pub const OBSERVATION: Contract = Contract {
    name: "Observation",
    short: "OBSERVATION",
    doc: "One HTTP call a client made: the host only, never a path, query, body or headers.",
    fields: &[
        required(field("host", text(253), "The bare host: no scheme, port, path or query.")),
        required(field("method", text(MAX_METHOD), "The HTTP method.")),
        Field {
            required: true,
            ..field("status", Kind::Integer { min: 100, max: 599 }, "The HTTP status; null when no response arrived (a connect error, a timeout).")
        },
        required(field("latency_ms", Kind::Number { min: 0.0, max: MAX_LATENCY_MS }, "Milliseconds until the end of the response (or the error).")),
        field("response_bytes", Kind::Integer { min: 0, max: MAX_RESPONSE_BYTES }, "The response body's size, when known."),
        or(field("source", text(MAX_REPORTER), "organic, seeded or synthetic, or the reporting wrapper's name (1-64 of A-Za-z0-9._-), kept as reporter of organic data."), "\"organic\""),
        field("record_id", pattern(MAX_RECORD_ID, RECORD_ID_PATTERN), "Client idempotency key."),
    ],
};

/// Every contract, in the order the generated files list them.
pub const CONTRACTS: &[Contract] = &[RECORD, OBSERVATION];

/// The JSON Schema (OpenAPI 3.1) of `c`.
pub fn json_schema(c: &Contract) -> Value {
    let mut props = Map::new();
    for f in c.fields {
        let mut s = match f.kind {
            Kind::Text { max, pattern } => {
                let mut s = json!({"type": "string", "minLength": 1, "maxLength": max});
                if let Some(p) = pattern {
                    s["pattern"] = json!(p);
                }
                s
            }
            Kind::Enum(values) => json!({"type": "string", "enum": values}),
            Kind::Number { min, max } => json!({"type": "number", "minimum": min, "maximum": max}),
            Kind::Integer { min, max } => {
                json!({"type": "integer", "minimum": min, "maximum": max})
            }
            Kind::Bool => json!({"type": "boolean"}),
        };
        if f.nullable {
            let t = s["type"].as_str().unwrap_or("string").to_owned();
            s["type"] = json!([t, "null"]);
            if let Some(values) = s.get_mut("enum").and_then(Value::as_array_mut) {
                values.push(Value::Null);
            }
        }
        if let Some(d) = f.default {
            s["default"] = serde_json::from_str(d).unwrap_or(Value::Null);
        }
        s["description"] = json!(f.doc);
        props.insert(f.name.to_owned(), s);
    }
    let required: Vec<&str> = c
        .fields
        .iter()
        .filter(|f| f.required)
        .map(|f| f.name)
        .collect();
    json!({"type": "object", "description": c.doc, "required": required, "properties": props})
}

#[cfg(test)]
mod tests;
