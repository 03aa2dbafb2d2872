//! The OpenAPI description of the gateway's API answers, merged into `/openapi.json` by
//! [`crate::openapi::document`]. The gateway listener itself (`/{slug}/{path}` on
//! `--gateway-listen`) is another server; its protocol is in server/README.md and llms.txt.

use serde_json::{json, Map, Value};

use crate::openapi::{error_response as refusal, ok, r};

/// The gateway's components: the answers derived from their types; by hand, the requests
/// (read field by field from a `Value`, so their errors name each field).
fn schemas() -> Map<String, Value> {
    use super::api;
    crate::openapi::derived(
        |g| {
            g.subschema_for::<api::ServiceList>();
            g.subschema_for::<super::services::ServiceView>();
            g.subschema_for::<api::CurrentSalt>();
            g.subschema_for::<api::RetiredSalts>();
            g.subschema_for::<api::Verified>();
            g.subschema_for::<api::ReceiptTaken>();
            g.subschema_for::<api::AgentReputation>();
        },
        json!({
            // Read field by field in gateway/api.rs.
            "SamplingVerifyRequest": {"type": "object", "required": ["service_id", "agent_id", "salt_id", "sample_decision"], "properties": {
                "service_id": {"type": "string"}, "agent_id": {"type": "string"}, "salt_id": {"type": "string", "pattern": "^s_[0-9]{8}$"},
                "sample_decision": {"type": "string", "pattern": "^[0-9a-fA-F]{64}$", "description": "The X-Prowl-Sample-Decision the agent sent (the roll)."}}},
            // Parsed from a Value by the core (gateway::receipt::parse_statement): no type derives it.
            "Statement": {"type": "object", "required": ["service_id", "agent_id", "call_at", "outcome", "latency_ms", "nonce"], "additionalProperties": false, "properties": {
                "service_id": {"type": "string"}, "agent_id": {"type": "string"}, "call_at": {"type": "string", "format": "date-time"},
                "outcome": {"type": "string", "enum": ["success", "partial", "failure", "cancelled"]},
                "latency_ms": {"type": "number", "minimum": 0, "maximum": 86_400_000}, "nonce": {"type": "string", "pattern": "^[A-Za-z0-9_-]{8,128}$"}}},
            // Read field by field in gateway/api.rs.
            "ReceiptSubmission": {"type": "object", "required": ["statement"], "description": "Signatures are base64 Ed25519 over the statement's canonical JSON (sorted keys, no whitespace, JavaScript number and string forms).", "properties": {
                "statement": r("Statement"), "agent_signature": {"type": ["string", "null"]}, "service_signature": {"type": ["string", "null"]}}}
        }),
    )
}

fn paths() -> Value {
    let bad = refusal("Bad input; the message names the field.");
    let key = json!({"name": "X-Agent-Key", "in": "header", "required": true, "schema": {"type": "string"}});
    json!({
        "/v1/services": {"get": {"operationId": "listServices", "summary": "The Prowl catalog with each service's audit and probe health (no credentials).",
            "responses": {"200": ok("The catalog.", r("ServiceList"))}}},
        "/v1/services/{slug}": {"get": {"operationId": "getService", "summary": "One service with its live score, audit and probe health.",
            "parameters": [{"name": "slug", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {"200": ok("The service.", r("Service")), "404": refusal("No such slug.")}}},
        "/v1/sampling/salt": {"get": {"operationId": "currentSalt", "summary": "Today's salt, for registered agents (decisions use the agent_id registration returned).",
            "parameters": [key.clone()],
            "responses": {"200": ok("The current salt.", r("Salt")), "401": refusal("Missing or unknown agent key.")}}},
        "/v1/sampling/salts": {"get": {"operationId": "publishedSalts", "summary": "Retired salts, newest first (a salt is published once no longer accepted).",
            "parameters": [{"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 366, "default": 30}}],
            "responses": {"200": ok("Published salts.", r("RetiredSalts")), "400": bad.clone()}}},
        "/v1/sampling/verify": {"post": {"operationId": "verifySampling", "summary": "Recompute a past decision from its published salt.",
            "requestBody": {"required": true, "content": {"application/json": {"schema": r("SamplingVerifyRequest")}}},
            "responses": {"200": ok("The recomputed decision.", r("SamplingVerifyResult")), "400": bad.clone(),
                "404": refusal("No such salt was ever issued."), "409": refusal("salt not yet published (the salt is still accepted).")}}},
        "/v1/receipts/submit": {"post": {"operationId": "submitReceipt", "summary": "A signed delivery statement: 0.3 with one valid signature, 1.0 with both.",
            "parameters": [{"name": "X-Agent-Key", "in": "header", "required": false, "schema": {"type": "string"}, "description": "The submitter; forged or replayed receipts count against it."}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": r("ReceiptSubmission")}}},
            "responses": {"201": ok("Stored.", r("Receipt")), "400": bad.clone(), "409": refusal("A receipt with this statement was submitted before.")}}},
        "/v1/agents/{agent_id}/reputation": {"get": {"operationId": "agentReputation", "summary": "An agent's seven reputation dimensions over 30 days.",
            "parameters": [{"name": "agent_id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {"200": ok("The dimensions.", r("AgentReputation")), "404": refusal("No such agent.")}}}
    })
}

/// Adds the gateway's paths and schemas to `doc`.
pub fn extend(doc: &mut Value) {
    crate::openapi::merge(doc, paths(), schemas());
}
