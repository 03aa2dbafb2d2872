//! OpenAPI components of the `registry`, `scanner` and `packages` answer blocks (merged
//! into `/openapi.json` by [`crate::openapi`]).

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
    let maybe_bool = json!({"type": ["boolean", "null"]});
    let schemas = json!({
        "PackageItem": {"type": "object", "required": ["registry_type", "identifier", "declared_version", "checked"],
            "description": "One declared package. npm: from its public metadata (GET {registry}/{name}); PyPI: from the Index API (PEP 691, PEP 792 status) and the JSON API; checked daily with the scan. Versions follow the server-version rule; deprecation messages and yank reasons are never published.",
            "properties": {
            "registry_type": {"type": "string", "description": "As declared: npm, pypi, oci, nuget, mcpb, ..."},
            "identifier": {"type": "string", "description": "The package name as declared."},
            "name": {"type": "string", "description": "The name asked for: npm lower case, PyPI by PEP 503. Checked packages only."},
            "declared_version": version.clone(),
            "checked": {"type": "boolean", "description": "npm and PyPI packages with a valid name are checked; others are listed as declared."},
            "unchecked_reason": {"type": "string", "enum": ["registry_type", "invalid_name"]},
            "latest": {"type": ["string", "null"], "description": "npm dist-tags.latest; PyPI info.version."},
            "latest_deprecated": {"type": "boolean", "description": "npm: the latest version (only it) carries a deprecation. Absent before the first answer and after a 404."},
            "latest_yanked": {"type": "boolean", "description": "PyPI: the latest version is yanked (PyPI shows one only when every release is)."},
            "project_status": {"type": ["string", "null"], "enum": ["active", "archived", "quarantined", "deprecated", null], "description": "PyPI: the PEP 792 project status (active when the index states none)."},
            "declared_is_latest": maybe_bool,
            "not_found": {"type": "boolean", "description": "The last successful check was a real 404 (never set by a timeout or a 5xx)."},
            "not_found_kind": {"type": ["string", "null"], "enum": ["no_project", "no_releases", null], "description": "PyPI, from the Index API."},
            "not_found_since": {"type": ["string", "null"], "format": "date", "description": "First day of the current run of 404s."},
            "checked_at": {"type": ["string", "null"], "format": "date-time", "description": "The last successful check; null before the first."},
            "last_check_failed": {"type": "boolean", "description": "The latest check got no usable answer; the facts are from checked_at."}}},
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
