//! The OpenAPI 3.1 document served at `/openapi.json`. Its paths are checked against
//! [`crate::routes::ROUTES`] by a test, and every documented status is exercised by the
//! HTTP tests.

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
    let nullable_enum = |v: &[&str]| json!({"type": ["string", "null"], "enum": v.iter().map(|s| json!(s)).chain([Value::Null]).collect::<Vec<_>>()});
    let count = json!({"type": "integer", "minimum": 0});
    let rate = json!({"type": ["number", "null"], "minimum": 0, "maximum": 1});
    json!({
        "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string", "description": "What is wrong, naming the field."}}},
        "InteractionRecord": {
            "type": "object",
            "required": ["target", "target_type", "task_type", "outcome"],
            "properties": {
                "record_id": {"type": ["string", "null"], "pattern": "^[A-Za-z0-9_-]{1,64}$", "description": "Client idempotency key: a repeated id is acknowledged, stored once."},
                "actor": {"type": "string", "maxLength": 128, "default": "anonymous"},
                "target": {"type": "string", "maxLength": 256},
                "target_type": enum_of(&["tool", "agent", "service", "human"]),
                "task_type": {"type": "string", "maxLength": 128},
                "outcome": enum_of(&["success", "partial", "failure", "cancelled"]),
                "failure_type": nullable_enum(&["invalid_arguments", "timeout", "server_error", "tool_error", "unknown"]),
                "error_layer": nullable_enum(&["tool", "request", "server"]),
                "request_kind": {"type": "string", "enum": ["tool", "protocol"], "default": "tool"},
                "latency_ms": {"type": ["number", "null"], "minimum": 0, "maximum": 86_400_000},
                "source": {"type": "string", "enum": ["organic", "seeded", "synthetic"], "default": "organic"},
                "node_id": {"type": ["string", "null"], "pattern": "^ld_[A-Za-z0-9_-]{1,64}$"},
                "server_version": {"type": ["string", "null"], "pattern": "^[0-9A-Za-z.+_-]{1,32}$"},
                "schema_hash": {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$"},
                "recorder_version": {"type": ["string", "null"], "pattern": "^[0-9A-Za-z.+_-]{1,32}$"},
                "protocol_version": {"type": ["string", "null"], "pattern": "^[0-9A-Za-z.+_-]{1,32}$"}
            }
        },
        "Accepted": {"type": "object", "required": ["ok", "accepted"], "properties": {
            "ok": {"const": true}, "accepted": count.clone(), "stored": {"type": "integer", "description": "Records new to the store (repeats of a record_id are not)."}}},
        "BySource": {"type": "object", "properties": {"organic": count.clone(), "seeded": count.clone(), "synthetic": count.clone()}},
        "Source": {"type": "object", "description": "Which deployment answered, from what data, when.", "properties": {
            "deployment": {"type": "string"}, "data": {"type": "string"}, "retrieved_at": {"type": "string", "format": "date-time"}}},
        "Brief": {"type": "object", "properties": {"interactions": count.clone(), "rated_interactions": count.clone(), "success_rate": rate.clone()}},
        "Telemetry": {"type": "object", "description": "Self-reported HTTP telemetry (organic); never changes success_rate.", "properties": {
            "observations": count.clone(), "weighted_success_rate": rate.clone(),
            "status_classes": {"type": "object", "properties": {"success": count.clone(), "failure": count.clone(), "throttled": count.clone(), "rejected": count.clone()}},
            "latency_p50_ms": {"type": ["number", "null"]}, "latency_p95_ms": {"type": ["number", "null"]},
            "status_codes": {"type": "object", "additionalProperties": count.clone()},
            "weight_mix": {"type": "object", "properties": {"anonymous_unknown_host": count.clone(), "anonymous_known_host": count.clone(), "key_unknown_host": count.clone(), "key_known_host": count.clone()}},
            "by_source": r("BySource"),
            "subject": {"type": "object", "properties": {"kind": enum_of(&["host", "service"]), "name": {"type": "string"}}},
            "note": {"type": "string"}}},
        "Reputation": {"type": "object", "required": ["target", "resolved_target", "message", "source"], "properties": {
            "target": {"type": "string", "description": "The name asked for."},
            "resolved_target": {"type": ["string", "null"], "description": "The stored target answered for; null when nothing matched."},
            "task_type": {"type": "string"},
            "candidates": {"type": "array", "items": {"type": "string"}, "description": "Present (and no numbers) when a short name matched several targets."},
            "message": {"type": "string"},
            "interactions": count.clone(), "rated_interactions": count.clone(), "success_rate": rate.clone(),
            "protocol_requests": count.clone(), "rejected_requests": count.clone(), "cancelled_requests": count.clone(),
            "by_source": r("BySource"),
            "confidence": enum_of(&["none", "low", "medium", "high"]),
            "telemetry": r("Telemetry"),
            "source": r("Source"),
            "task_breakdown": {"type": "object", "description": "Contributors only.", "additionalProperties": {"type": "object", "properties": {
                "success": count.clone(), "partial": count.clone(), "failure": count.clone(), "rejected": count.clone(), "cancelled": count.clone(),
                "failure_types": {"type": "object", "additionalProperties": count.clone()}, "interactions": count.clone(), "success_rate": rate.clone()}}},
            "recent_trends": {"type": "array", "description": "Contributors only; last 30 days with records.", "items": {"type": "object", "properties": {
                "date": {"type": "string", "format": "date"}, "count": count.clone(), "success_rate": rate.clone()}}},
            "by_server_version": {"type": "object", "description": "Contributors only; `(none)` for records without one.", "additionalProperties": r("Brief")},
            "by_schema_hash": {"type": "object", "description": "Contributors only; `(none)` for records without one.", "additionalProperties": r("Brief")}}},
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
        "Observation": {"type": "object", "required": ["host", "method", "status", "latency_ms"], "properties": {
            "host": {"type": "string", "description": "Bare host only: no scheme, port, path or query."},
            "method": {"type": "string", "maxLength": 16},
            "status": {"type": ["integer", "null"], "minimum": 100, "maximum": 599, "description": "null when no response arrived."},
            "latency_ms": {"type": "number", "minimum": 0, "maximum": 86_400_000},
            "response_bytes": {"type": ["integer", "null"], "minimum": 0},
            "source": {"type": "string", "enum": ["organic", "seeded", "synthetic"], "default": "organic"},
            "record_id": {"type": ["string", "null"], "pattern": "^[A-Za-z0-9_-]{1,64}$"}}},
        "ObserveResult": {"type": "object", "properties": {
            "ok": {"const": true}, "weight": {"type": "number", "enum": [0.1, 0.3, 0.5, 1.0]}, "service_id": {"type": ["string", "null"]},
            "accepted": count.clone(), "stored": count.clone(),
            "items": {"type": "array", "items": {"type": "object", "properties": {"weight": {"type": "number"}, "service_id": {"type": ["string", "null"]}}}}}},
        "AgentRegistration": {"type": "object", "required": ["name", "model_provider", "model_id", "environment"], "properties": {
            "name": {"type": "string", "maxLength": 128}, "model_provider": {"type": "string", "maxLength": 128},
            "model_id": {"type": "string", "maxLength": 128}, "environment": {"type": "string", "maxLength": 128},
            "public_key": {"type": ["string", "null"], "description": "base64 Ed25519 public key verifying the agent's receipt signatures."}}},
        "AgentKey": {"type": "object", "properties": {"agent_key": {"type": "string", "pattern": "^ak_[0-9a-f]{48}$"}, "agent_id": {"type": "string"}}},
        "Health": {"type": "object", "properties": {"ok": {"const": true}, "database": enum_of(&["sqlite", "postgres"]), "version": {"type": "string"}}}
    })
}

/// The whole document (the sampling gateway's part comes from `crate::gateway::openapi`).
pub fn document() -> Value {
    let mut doc = base_document();
    crate::gateway::openapi::extend(&mut doc);
    doc
}

fn base_document() -> Value {
    let bad = error_response("Bad input; the message names the field.");
    let too_large = error_response("Body over 1 MiB.");
    let internal = error_response("Internal error (details are logged, never returned).");
    let node_header = json!({"name": "x-lowdown-node-id", "in": "header", "required": false, "schema": {"type": "string", "pattern": "^ld_[A-Za-z0-9_-]{1,64}$"},
        "description": "Id of a node that has contributed records: adds the contributor detail."});
    let task_param = json!({"name": "task_type", "in": "query", "required": false, "schema": {"type": "string", "maxLength": 128}, "description": "Narrow to one task."});
    json!({
        "openapi": "3.1.0",
        "info": {"title": "Lowdown API", "version": env!("CARGO_PKG_VERSION"),
            "description": "What agents have seen of tools and services: facts, not scores. No auth for reads or recording; CORS open; errors are {\"error\": \"...\"}."},
        "servers": [{"url": lowdown_core::defaults::API_URL}],
        "paths": {
            "/api/interactions": {"post": {"operationId": "recordInteractions", "summary": "Record one interaction or up to 1000 (all-or-nothing).",
                "requestBody": json_body(json!({"oneOf": [r("InteractionRecord"), {"type": "array", "minItems": 1, "maxItems": 1000, "items": r("InteractionRecord")}]})),
                "responses": {"201": ok("Stored (repeated record_ids acknowledged, stored once).", r("Accepted")), "400": bad.clone(), "413": too_large.clone(), "500": internal.clone()}}},
            "/api/reputation/{target}": {"get": {"operationId": "getReputation", "summary": "What the network has seen of a target.",
                "parameters": [{"name": "target", "in": "path", "required": true, "schema": {"type": "string", "maxLength": 256}, "description": "As recorded (a `/` raw or `%2F`), or a short name."}, task_param.clone(), node_header],
                "responses": {"200": ok("The answer, or `candidates` for an ambiguous short name.", r("Reputation")), "400": bad.clone(), "500": internal.clone()}}},
            "/api/compare": {"get": {"operationId": "compareTargets", "summary": "Rank 2-5 targets by organic success rate.",
                "parameters": [{"name": "targets", "in": "query", "required": true, "schema": {"type": "string"}, "description": "2 to 5 names, comma-separated."}, task_param],
                "responses": {"200": ok("Ranked, with a recommendation only when the evidence allows.", r("Comparison")), "400": bad.clone(), "500": internal.clone()}}},
            "/api/node/{node_id}": {"get": {"operationId": "getNode", "summary": "A node's contribution and rank.",
                "parameters": [{"name": "node_id", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^ld_[A-Za-z0-9_-]{1,64}$"}}],
                "responses": {"200": ok("Known (`active`) or `unknown`.", r("Node")), "400": bad.clone(), "500": internal.clone()}}},
            "/v1/telemetry/observe": {"post": {"operationId": "observe", "summary": "Report HTTP observations (host only).",
                "parameters": [{"name": "X-Agent-Key", "in": "header", "required": false, "schema": {"type": "string"}, "description": "A registered ak_ key raises the weight and the rate limit."}],
                "requestBody": json_body(json!({"oneOf": [r("Observation"), {"type": "array", "minItems": 1, "maxItems": 1000, "items": r("Observation")}]})),
                "responses": {"200": ok("Weighed and stored.", r("ObserveResult")), "400": bad.clone(), "413": too_large.clone(),
                    "429": {"description": "Over 600/h per agent key or 60/h per IP.", "headers": {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait."}},
                        "content": {"application/json": {"schema": r("Error")}}}, "500": internal.clone()}}},
            "/v1/auth/agents/register": {"post": {"operationId": "registerAgent", "summary": "Get an agent key (shown once, stored hashed).",
                "requestBody": json_body(r("AgentRegistration")),
                "responses": {"201": ok("Registered.", r("AgentKey")), "400": bad.clone(), "413": too_large.clone(), "500": internal.clone()}}},
            "/openapi.json": {"get": {"operationId": "openapi", "summary": "This document.", "responses": {"200": ok("OpenAPI 3.1.", json!({"type": "object"}))}}},
            "/llms.txt": {"get": {"operationId": "llmsTxt", "summary": "How an agent uses this API, in plain text.",
                "responses": {"200": {"description": "Plain text.", "content": {"text/plain": {"schema": {"type": "string"}}}}}}},
            "/healthz": {"get": {"operationId": "healthz", "summary": "Liveness and a database round trip.", "responses": {"200": ok("Up.", r("Health")), "500": internal}}}
        },
        "components": {"schemas": schemas()}
    })
}
