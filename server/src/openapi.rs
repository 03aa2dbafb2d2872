//! The OpenAPI 3.1 document served at `/openapi.json`. Its paths are checked against
//! [`crate::routes::ROUTES`] by a test, and every documented status is exercised by the
//! HTTP tests.

use lowdown_core::record::validate::{MAX_BATCH, MAX_NAME, MAX_TARGET};
use lowdown_core::telemetry::{
    RATE_LIMIT_PER_IP_PER_HOUR, RATE_LIMIT_PER_KEY_PER_HOUR, REGISTRATIONS_PER_CALLER_PER_HOUR,
};
use serde_json::{json, Value};

fn error_response(description: &str) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

fn ok(description: &str, schema: Value) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": schema}}})
}

fn r(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn json_body(schema: Value) -> Value {
    json!({"required": true, "content": {"application/json": {"schema": schema}}})
}

fn schemas() -> Value {
    let enum_of = |v: &[&str]| json!({"type": "string", "enum": v});
    let count = json!({"type": "integer", "minimum": 0});
    let rate = json!({"type": ["number", "null"], "minimum": 0, "maximum": 1});
    let mut all = json!({
        "Error": {"type": "object", "required": ["error", "reason"], "properties": {
            "error": {"type": "string", "description": "What is wrong, naming the field."},
            "reason": {"type": "string", "description": "Stable snake_case kind, for programs: bad_request, not_found, payload_too_large, rate_limited, request_timeout, method_not_allowed, internal, or a refusal's own (e.g. expired_salt, salt_not_published, agent_key)."},
            "rejected": {"type": "array", "items": r("Rejection"), "description": "When no item of an array is valid: every refused item by index."}}},
        "Rejection": {"type": "object", "required": ["index", "error"], "properties": {
            "index": {"type": "integer", "minimum": 0, "description": "Position of the item in the submitted array (0 for a single object)."},
            "error": {"type": "string", "description": "`field: what is wrong` (`record: …` when the item is not an object); never echoes the value."}}},
        "Recorded": {"type": "object", "required": ["ok", "accepted", "duplicates", "rejected", "rate_limited"], "properties": {
            "ok": {"type": "boolean", "description": "true when any record was accepted (false only in a 429)."},
            "accepted": {"type": "integer", "minimum": 0, "description": "Valid records taken, each now stored (new or already)."},
            "duplicates": {"type": "integer", "minimum": 0, "description": "Accepted records whose record_id was already stored or repeated: acknowledged, never counted twice, free of every quota."},
            "rejected": {"type": "array", "items": r("Rejection"), "description": "Refused records by index (invalid); sending them again fails again."},
            "rate_limited": {"type": "array", "items": {"type": "integer", "minimum": 0}, "description": "Indices of valid records refused over a quota (their node id's, the agent key's or the network's records per sliding hour): send them again after Retry-After."}}},
        "BySource": {"type": "object", "properties": {"organic": count.clone(), "seeded": count.clone(), "synthetic": count.clone()}},
        "Source": {"type": "object", "required": ["dataset", "license", "retrieved_at", "cite"], "description": "Always the answer's last field: where the numbers come from and how to cite them.", "properties": {
            "dataset": {"type": "string", "description": "`Lowdown records: <deployment name>`."},
            "license": {"const": "CC BY 4.0"},
            "retrieved_at": {"type": "string", "format": "date-time"},
            "cite": {"type": "string", "description": "`<dataset>, <subject>, retrieved <retrieved_at>. CC BY 4.0, https://creativecommons.org/licenses/by/4.0/`: include it when republishing."}}},
        "OrganicRow": {"type": "object", "description": "One row of a breakdown, organic only; rows with no organic tool interaction are left out.", "properties": {
            "interactions": {"type": "integer", "minimum": 1, "description": "Organic tool interactions (rated, rejected, cancelled)."},
            "rated_interactions": count.clone(), "success_rate": rate.clone()}},
        "Latency": {"type": ["object", "null"], "description": "Rated organic tool calls that carried a latency; null when none did. p50/p95 are latency-bucket upper bounds.", "properties": {
            "avg": {"type": "number"}, "p50": {"type": "number"}, "p95": {"type": "number"}}},
        "FailureCounts": {"type": "object", "description": "Rated organic failures per failure_type (`unspecified` when none was recorded); sums to the failures; rejections are never in it.",
            "additionalProperties": {"type": "integer", "minimum": 1}},
        "Telemetry": {"type": "object", "description": "Self-reported HTTP telemetry (organic); never changes success_rate.", "properties": {
            "observations": count.clone(), "weighted_success_rate": rate.clone(),
            "status_classes": {"type": "object", "properties": {"success": count.clone(), "failure": count.clone(), "throttled": count.clone(), "rejected": count.clone()}},
            "latency_p50_ms": {"type": ["number", "null"]}, "latency_p95_ms": {"type": ["number", "null"]},
            "status_codes": {"type": "object", "additionalProperties": count.clone()},
            "contributors": {"type": "integer", "minimum": 0, "description": "Distinct agent keys among the organic observations."},
            "networks": {"type": "integer", "minimum": 0, "description": "Distinct client networks (IPv4 /24, IPv6 /48) among the organic observations."},
            "top_network_share": {"type": ["number", "null"], "minimum": 0, "maximum": 1, "description": "The largest share of the organic observations one network sent."},
            "weight_mix": {"type": "object", "properties": {"anonymous_unknown_host": count.clone(), "anonymous_known_host": count.clone(), "key_unknown_host": count.clone(), "key_known_host": count.clone()}},
            "by_source": r("BySource"),
            "subject": {"type": "object", "properties": {"kind": enum_of(&["host", "service"]), "name": {"type": "string"}}},
            "note": {"type": "string"}}},
        "Reputation": {"type": "object", "required": ["target", "resolved_target", "message", "source"], "properties": {
            "target": {"type": "string", "description": "The name asked for."},
            "resolved_target": {"type": ["string", "null"], "description": "The stored target answered for; null when nothing matched."},
            "task_type": {"type": "string"},
            "candidates": {"type": "array", "items": {"type": "string"}, "description": "Present (and no numbers) when a short name matched several targets, or a namespaced name (npm:, pypi:, mcp:, url:) matched none exactly: similar names are listed, never substituted."},
            "message": {"type": "string"},
            "interactions": count.clone(), "rated_interactions": count.clone(),
            "capped": {"type": "integer", "minimum": 0, "description": "Rated organic calls past their network's cap (20 per target per UTC day): counted in interactions, never rated."},
            "contributors": {"type": "integer", "minimum": 0, "description": "Distinct node ids or agent keys among the rated organic records."},
            "networks": {"type": "integer", "minimum": 0, "description": "Distinct client networks (IPv4 /24, IPv6 /48) among the rated organic records."},
            "top_network_share": {"type": ["number", "null"], "minimum": 0, "maximum": 1, "description": "The largest share of the rated records one network holds; null when nothing is rated."},
            "success_rate": rate.clone(),
            "protocol_requests": count.clone(), "rejected_requests": count.clone(), "cancelled_requests": count.clone(),
            "by_source": r("BySource"),
            "confidence": {"type": "string", "enum": ["none", "low", "medium", "high"], "description": "none with 0 rated; low below 10 rated or 3 networks; medium below 100 rated or 10 networks; else high."},
            "latency_ms": r("Latency"),
            "failure_breakdown": r("FailureCounts"),
            "telemetry": r("Telemetry"),
            "registry": r("RegistryBlock"),
            "scanner": r("ScannerBlock"),
            "packages": {"type": "array", "items": r("PackageItem"), "description": "An MCP Registry entry: every package it declares, npm and PyPI ones checked daily with the scan, others listed as unchecked. An npm:/pypi: name: that package's facts, when Lowdown checked it."},
            "registry_entries": {"type": "array", "items": {"type": "string"}, "description": "An npm:/pypi: name with records of its own: the MCP Registry entries (mcp:<name>) declaring that package. Without records of its own the name resolves to the one declaring entry, or lists several as candidates."},
            "task_breakdown": {"type": "object", "description": "Contributors only; organic; tasks with an organic tool interaction.", "additionalProperties": {"type": "object", "properties": {
                "success": count.clone(), "partial": count.clone(), "failure": count.clone(), "rejected": count.clone(), "cancelled": count.clone(),
                "failure_types": r("FailureCounts"), "interactions": count.clone(), "rated_interactions": count.clone(), "success_rate": rate.clone()}}},
            "recent_trends": {"type": "array", "description": "Contributors only; organic; the last 30 days that had an organic tool interaction.", "items": {"type": "object", "properties": {
                "date": {"type": "string", "format": "date"}, "count": {"type": "integer", "minimum": 1, "description": "Organic tool interactions that day."}, "success_rate": rate.clone()}}},
            "by_server_version": {"type": "object", "description": "Contributors only; `(none)` for records without one.", "additionalProperties": r("OrganicRow")},
            "by_schema_hash": {"type": "object", "description": "Contributors only; `(none)` for records without one.", "additionalProperties": r("OrganicRow")},
            "source": r("Source")}},
        "Comparison": {"type": "object", "properties": {
            "ranked": {"type": "array", "items": {"type": "object", "properties": {"target": {"type": "string"}, "success_rate": rate.clone(), "rated_interactions": count.clone(), "confidence": enum_of(&["none", "low", "medium", "high"])}}},
            "recommendation": {"type": "object", "properties": {"target": {"type": ["string", "null"]}, "reason": {"type": "string"}}},
            "task_type": {"type": ["string", "null"]},
            "source": r("Source")}},
        "Node": {"type": "object", "required": ["node_id", "status", "contribution", "network"], "properties": {
            "node_id": {"type": "string"}, "status": enum_of(&["unknown", "active"]),
            "contribution": {"type": ["object", "null"], "properties": {"interactions": count.clone(), "targets_observed": count.clone(), "active_days": count.clone(),
                "first_seen": {"type": "string", "format": "date-time"}, "last_seen": {"type": "string", "format": "date-time"}}},
            "network": {"type": "object", "properties": {"total_nodes": count.clone(), "total_interactions": count.clone()}},
            "rank": {"type": "object", "properties": {"percentile": {"type": "number", "minimum": 0, "maximum": 100, "description": "Share of nodes that contributed no more than this one."}}}}},
        "Weighed": {"type": "object", "required": ["weight", "service_id"], "properties": {
            "weight": {"type": "number", "enum": [0.1, 0.3, 0.5, 1.0]}, "service_id": {"type": ["string", "null"]}}},
        "ObserveResult": {"oneOf": [
            {"type": "object", "description": "One observation.", "required": ["ok", "weight", "service_id"], "properties": {
                "ok": {"const": true}, "weight": {"type": "number", "enum": [0.1, 0.3, 0.5, 1.0]}, "service_id": {"type": ["string", "null"]}}},
            {"type": "object", "description": "An array: one item per observation, in order.", "required": ["ok", "accepted", "rate_limited", "items"], "properties": {
                "ok": {"const": true},
                "accepted": {"type": "integer", "minimum": 1, "description": "Items stored now plus acknowledged duplicates."},
                "rate_limited": {"type": "integer", "minimum": 0, "description": "Items refused past the caller's remaining budget (the last ones)."},
                "items": {"type": "array", "items": {"oneOf": [r("Weighed"), {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}]}}}}]},
        "AgentRegistration": {"type": "object", "required": ["name", "model_provider", "model_id", "environment"], "properties": {
            "name": {"type": "string", "maxLength": MAX_NAME}, "model_provider": {"type": "string", "maxLength": MAX_NAME},
            "model_id": {"type": "string", "maxLength": MAX_NAME}, "environment": {"type": "string", "maxLength": MAX_NAME},
            "public_key": {"type": ["string", "null"], "description": "base64 Ed25519 public key verifying the agent's receipt signatures."}}},
        "AgentKey": {"type": "object", "properties": {"agent_key": {"type": "string", "pattern": "^ak_[0-9a-f]{48}$"}, "agent_id": {"type": "string"}}},
        "Health": {"type": "object", "properties": {"ok": {"const": true}, "database": enum_of(&["sqlite", "postgres"]), "version": {"type": "string"}}}
    });
    contract_components(&mut all);
    all
}

/// The record and the observation, from the core's one definition of them, with what the
/// server adds: it refuses private hosts.
fn contract_components(all: &mut Value) {
    use lowdown_core::contract::{json_schema, OBSERVATION, RECORD};
    let mut record = json_schema(&RECORD);
    record["properties"]["target"]["description"] = json!(format!(
        "{} A target naming a private or special-use host (`url:localhost`, `10.0.0.7`, `db.internal`) is refused.",
        record["properties"]["target"]["description"].as_str().unwrap_or_default()
    ));
    let mut observation = json_schema(&OBSERVATION);
    observation["properties"]["host"]["description"] = json!("Bare host only: no scheme, port, path or query. Private and special-use hosts (localhost, private addresses, .local, .internal, single labels, metadata endpoints) are refused, never stored.");
    all["InteractionRecord"] = record;
    all["Observation"] = observation;
}

/// `schemas` plus the Scanner's answer blocks.
fn with_scanner(mut schemas: Value) -> Value {
    if let Value::Object(m) = &mut schemas {
        m.extend(crate::scanner::openapi::schemas());
    }
    schemas
}

/// The whole document (the sampling gateway's part comes from `crate::gateway::openapi`).
pub fn document() -> Value {
    let mut doc = base_document();
    crate::gateway::openapi::extend(&mut doc);
    crate::pages::openapi::extend(&mut doc);
    crate::provider::openapi::extend(&mut doc);
    doc
}

fn base_document() -> Value {
    let bad = error_response("Bad input; the message names the field.");
    let too_large = error_response("Body over 1 MiB.");
    let internal = error_response("Internal error (details are logged, never returned).");
    let node_header = json!({"name": "x-lowdown-node-id", "in": "header", "required": false, "schema": {"type": "string", "pattern": "^ld_[A-Za-z0-9_-]{1,64}$"},
        "description": "Id of a node that has contributed records: adds the contributor detail."});
    let retry_after = json!({"schema": {"type": "integer", "minimum": 1}, "description": "Seconds until the budgets that refused items have room again (sent when something was refused over a quota)."});
    let task_param = json!({"name": "task_type", "in": "query", "required": false, "schema": {"type": "string", "maxLength": MAX_NAME}, "description": "Narrow to one task."});
    json!({
        "openapi": "3.1.0",
        "info": {"title": "Lowdown API", "version": env!("CARGO_PKG_VERSION"),
            "description": "What agents have seen of tools and services: facts, not scores. No auth for reads or recording; CORS open; errors are {\"error\": \"...\"}."},
        "servers": [{"url": lowdown_core::defaults::API_URL}],
        "paths": {
            "/api/interactions": {"post": {"operationId": "recordInteractions", "summary": "Record one interaction or an array of them; each is accepted or refused on its own.",
                "requestBody": json_body(json!({"oneOf": [r("InteractionRecord"), {"type": "array", "minItems": 1, "maxItems": MAX_BATCH, "items": r("InteractionRecord")}]})),
                "parameters": [{"name": "X-Agent-Key", "in": "header", "required": false, "schema": {"type": "string"}, "description": "A registered ak_ key: the records then count as that agent's and draw on its quota."}],
                "responses": {"201": {"description": "The valid records are stored (repeated record_ids acknowledged, never counted twice); the invalid ones are refused by index (`rejected`), and those over a quota too (`rate_limited`, with Retry-After).",
                        "headers": {"Retry-After": retry_after.clone()}, "content": {"application/json": {"schema": r("Recorded")}}},
                    "400": error_response("The body is not a record or an array of records, or no record is valid (then `rejected` lists each by index)."), "413": too_large.clone(),
                    "429": {"description": "Valid records, none taken: every one is over a quota (`rate_limited` lists them; `error` names the quota).", "headers": {"Retry-After": retry_after.clone()},
                        "content": {"application/json": {"schema": {"allOf": [r("Recorded"), {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}]}}}}, "500": internal.clone()}}},
            "/api/reputation/{target}": {"get": {"operationId": "getReputation", "summary": "What the network has seen of a target.",
                "parameters": [{"name": "target", "in": "path", "required": true, "schema": {"type": "string", "maxLength": MAX_TARGET},
                    "description": "As recorded (a `/` raw or `%2F`); `pypi:` names also by PEP 503 and `npm:` names in any case; or a short name that matches one target."}, task_param.clone(), node_header],
                "responses": {"200": ok("The answer, or `candidates` (never a substitute).", r("Reputation")), "400": bad.clone(), "500": internal.clone()}}},
            "/api/compare": {"get": {"operationId": "compareTargets", "summary": "Rank 2-5 targets by organic success rate.",
                "parameters": [{"name": "targets", "in": "query", "required": true, "schema": {"type": "string"}, "description": "2 to 5 names, comma-separated."}, task_param],
                "responses": {"200": ok("Ranked, with a recommendation only when the evidence allows.", r("Comparison")), "400": bad.clone(), "500": internal.clone()}}},
            "/api/node/{node_id}": {"get": {"operationId": "getNode", "summary": "A node's contribution and rank.",
                "parameters": [{"name": "node_id", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^ld_[A-Za-z0-9_-]{1,64}$"}}],
                "responses": {"200": ok("Known (`active`) or `unknown`.", r("Node")), "400": bad.clone(), "500": internal.clone()}}},
            "/v1/telemetry/observe": {"post": {"operationId": "observe", "summary": "Report HTTP observations (host only); the limit counts observations.",
                "parameters": [{"name": "X-Agent-Key", "in": "header", "required": false, "schema": {"type": "string"}, "description": "A registered ak_ key raises the weight and the rate limit."}],
                "requestBody": json_body(json!({"oneOf": [r("Observation"), {"type": "array", "minItems": 1, "maxItems": MAX_BATCH, "items": r("Observation")}]})),
                "responses": {"200": {"description": format!("Weighed and stored. Past the limit ({RATE_LIMIT_PER_KEY_PER_HOUR} observations per sliding hour per agent key, {RATE_LIMIT_PER_IP_PER_HOUR} per network without one) an array is partly accepted: the first items up to the remaining budget, the rest refused (`rate_limited`)."),
                        "headers": {"Retry-After": retry_after.clone()}, "content": {"application/json": {"schema": r("ObserveResult")}}},
                    "400": error_response("The body is not an observation or an array of them, or nothing in it is valid (a private host is refused, never stored)."), "413": too_large.clone(),
                    "429": {"description": "Nothing accepted: the caller's budget is used up.", "headers": {"Retry-After": retry_after.clone()},
                        "content": {"application/json": {"schema": r("Error")}}}, "500": internal.clone()}}},
            "/v1/auth/agents/register": {"post": {"operationId": "registerAgent", "summary": "Get an agent key (shown once, stored hashed).",
                "requestBody": json_body(r("AgentRegistration")),
                "responses": {"201": ok("Registered.", r("AgentKey")), "400": bad.clone(), "413": too_large.clone(),
                    "429": {"description": format!("Over {REGISTRATIONS_PER_CALLER_PER_HOUR} registrations per sliding hour for this network (an IPv4 /24, an IPv6 /48)."), "headers": {"Retry-After": retry_after},
                        "content": {"application/json": {"schema": r("Error")}}}, "500": internal.clone()}}},
            "/openapi.json": {"get": {"operationId": "openapi", "summary": "This document.", "responses": {"200": ok("OpenAPI 3.1.", json!({"type": "object"}))}}},
            "/llms.txt": {"get": {"operationId": "llmsTxt", "summary": "How an agent uses this API, in plain text.",
                "responses": {"200": {"description": "Plain text.", "content": {"text/plain": {"schema": {"type": "string"}}}}}}},
            "/healthz": {"get": {"operationId": "healthz", "summary": "Liveness and a database round trip.", "responses": {"200": ok("Up.", r("Health")), "500": internal}}}
        },
        "components": {"schemas": with_scanner(schemas())}
    })
}
