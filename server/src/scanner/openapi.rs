//! OpenAPI components of the `registry` and `scanner` answer blocks (merged into
//! `/openapi.json` by [`crate::openapi`]).

use serde_json::{json, Map, Value};

/// The component schemas, by name.
pub fn schemas() -> Map<String, Value> {
    let count = json!({"type": "integer", "minimum": 0});
    let day = json!({"type": "string", "format": "date"});
    let level = json!({"type": "integer", "enum": [0, 1, 2],
        "description": "0: initialize did not complete; 1: initialize ok, tools/list did not; 2: both, and tools is an array."});
    let status = json!({"type": ["integer", "null"], "minimum": 100, "maximum": 599,
        "description": "Status of the last initialize or tools/list that got a response, as observed (a 401 is a 401, not \"down\")."});
    let error_type = json!({"type": ["string", "null"], "enum": ["timeout", "dns", "tls", "conn_refused", "conn_reset", "network_error", "invalid_response", "blocked_url", null],
        "description": "Why the level stopped: a transport kind when no response arrived, invalid_response for a 2xx that is not the JSON-RPC answer, blocked_url for a URL the SSRF rules refuse (nothing was sent)."});
    let version = json!({"type": ["string", "null"], "pattern": "^[0-9A-Za-z.+_-]{1,32}$"});
    let hosts = json!({"type": "array", "items": {"type": "string"}});
    let schemas = json!({
        "RegistryBlock": {"type": "object", "description": "What the MCP Registry declares about this server, recorded by this deployment at every scan (CC BY 4.0 when republished).",
            "required": ["listed", "declared_version", "status", "remote_hosts", "recorded_since_baseline", "changes_30d"], "properties": {
            "listed": {"type": "boolean", "description": "In the latest successful Registry read (any status)."},
            "declared_version": version.clone(),
            "status": {"type": "string", "description": "Registry status: active, deprecated, deleted, ..."},
            "remote_hosts": hosts.clone(),
            "recorded_since_baseline": {"type": "boolean", "description": "Recorded since this deployment's first Registry read, so changes_30d is complete since then."},
            "changes_30d": {"type": "array", "items": {"type": "object", "properties": {
                "day": day.clone(), "field": {"type": "string", "enum": ["listed", "version", "status", "remote_hosts"]},
                "from": {}, "to": {}}}}}},
        "ScannerLatest": {"type": "object", "properties": {
            "reached_level": level.clone(), "http_status": status.clone(), "tool_count": {"type": ["integer", "null"], "minimum": 0},
            "server_version": version.clone(), "latency_ms": {"type": ["number", "null"], "description": "The initialize exchange."},
            "error_type": error_type.clone(), "www_authenticate": {"type": "boolean"}, "observed_at": {"type": "string", "format": "date-time"}}},
        "ScannerBlock": {"type": "object", "required": ["observed", "in_sample"],
            "description": "What the Lowdown Scanner observed when it connected (initialize and tools/list only; tools are never called). Observations, kept apart from interactions: never in success_rate or rankings. Outside the sample only {observed:false, in_sample:false, note}: that says nothing about the server.",
            "properties": {
            "observed": {"type": "boolean"}, "in_sample": {"type": "boolean"},
            "note": {"type": "string"},
            "first_observed_at": {"type": ["string", "null"], "format": "date-time"},
            "last_observed_at": {"type": ["string", "null"], "format": "date-time"},
            "latest": {"oneOf": [{"$ref": "#/components/schemas/ScannerLatest"}, {"type": "null"}], "description": "The latest observed day's highest level (several remotes) and its status."},
            "daily_30d": {"type": "array", "items": {"type": "object", "properties": {
                "day": day.clone(), "reached_level": level, "http_status": status, "tool_count": {"type": ["integer", "null"]},
                "tools_changed": {"type": "boolean"}, "error_type": error_type}}},
            "observations_30d": count.clone(),
            "tool_names": {"type": "array", "items": {"type": "string"}, "description": "Names from the latest tools/list (all pages); descriptions and schemas are never answered."},
            "missing_days": {"type": "array", "items": {"type": "object", "properties": {
                "day": day.clone(),
                "reason": {"type": "string", "enum": ["not_in_sample", "not_listed", "no_probeable_remote", "scanner_did_not_run"]}}}},
            "declared_vs_observed": {"type": "object", "properties": {
                "declared_version": version.clone(), "observed_server_version": version,
                "declared_hosts": hosts.clone(), "observed_hosts": hosts}},
            "definition_changes": {"type": "object", "description": "Tool definition changes over 30 days: each day compared with the previous observation of the same remote URL by schema, description and name hashes.", "properties": {
                "pattern": {"type": "string", "enum": ["not_enough_observations", "no_change_observed", "changes_on_most_days", "changed"]},
                "last_change": {"type": ["string", "null"], "format": "date"},
                "stable_days_before_last_change": {"type": ["integer", "null"], "minimum": 0},
                "events": {"type": "array", "maxItems": 5, "items": {"type": "object", "properties": {
                    "day": day, "remote_url": {"type": "string"},
                    "changed": {"type": "array", "items": {"type": "string", "enum": ["schema", "description", "names"]}},
                    "tool_count": {"type": "object", "properties": {"from": {"type": ["integer", "null"]}, "to": {"type": ["integer", "null"]}}},
                    "tools_added": {"type": "array", "items": {"type": "string"}},
                    "tools_removed": {"type": "array", "items": {"type": "string"}}}}}}}}}
    });
    match schemas {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}
