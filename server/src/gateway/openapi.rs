//! The OpenAPI description of the gateway's API answers, merged into `/openapi.json` by
//! [`crate::openapi::document`]. The gateway listener itself (`/{slug}/{path}` on
//! `--gateway-listen`) is another server; its protocol is in server/README.md and llms.txt.

use serde_json::{json, Value};

fn r(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn ok(description: &str, schema: Value) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": schema}}})
}

fn refusal(description: &str) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": r("Error")}}})
}

fn schemas() -> Value {
    let count = json!({"type": "integer", "minimum": 0});
    let rate = json!({"type": ["number", "null"], "minimum": 0, "maximum": 1});
    let dim = json!({"type": "object", "required": ["value", "n"], "properties": {"value": {"type": ["number", "null"]}, "n": count.clone()}});
    json!({
        // typed on branch typed (gateway/api.rs, gateway/services.rs)
        "Audit": {"type": "object", "required": ["flagged", "error_rate", "p95_p5", "n", "checked_at"], "description": "Once per 24 h over the last 1,000 ProxyCalls; flagged (prowl_capped_audit) with at least 10 counted calls and an error rate >= 0.5 or p95/p5 latency >= 5.", "properties": {
            "flagged": {"type": "boolean"}, "flag": {"type": ["string", "null"], "enum": ["prowl_capped_audit", null]},
            "error_rate": rate.clone(), "p95_p5": {"type": ["number", "null"], "minimum": 0}, "n": count.clone(),
            "checked_at": {"type": ["string", "null"], "format": "date-time"}}},
        // typed on branch typed (gateway/api.rs, gateway/services.rs)
        "ProbeHealth": {"type": "object", "required": ["error_rate", "n", "cap"], "description": "Over the last 100 ProxyCalls, on every read: cap 50 above 30 % errors, 30 above 80 %.", "properties": {
            "error_rate": rate.clone(), "n": count.clone(), "cap": {"type": ["integer", "null"], "enum": [50, 30, null]}}},
        // typed on branch typed (gateway/api.rs, gateway/services.rs)
        "LiveScore": {"type": "object", "required": ["value", "n", "success", "speed", "capped_by", "agents", "networks"], "description": "round(100 x (0.7 success + 0.3 speed)) over the last 1,000 ProxyCalls and 24 h of weighted telemetry, no network and then no agent holding more than max(20 %, 1/groups) of the weight, limited by probe_health.cap; computed on read.", "properties": {
            "value": {"type": ["integer", "null"], "minimum": 0, "maximum": 100}, "n": count.clone(), "success": rate.clone(),
            "speed": {"type": ["number", "null"], "minimum": 0.1, "maximum": 1}, "capped_by": {"type": ["string", "null"], "enum": ["probe_health", null]},
            "agents": {"type": "integer", "minimum": 0, "description": "Distinct agents behind the counted samples (anonymous telemetry: one per network)."},
            "networks": {"type": "integer", "minimum": 0, "description": "Distinct networks behind the counted samples."}}},
        // typed on branch typed (gateway/api.rs, gateway/services.rs)
        "Service": {"type": "object", "required": ["slug", "service_id", "hosts", "sampling_rate", "allow", "mode", "audit", "probe_health"], "description": "A catalog entry (services.toml) without its credential. A client routes a sampled call only when an allow entry matches it, and sends the gateway only the allowlisted request headers (plus the credential header when mode is passthrough).", "properties": {
            "slug": {"type": "string", "description": "The gateway serves /{slug}/{path}."}, "service_id": {"type": "string"}, "name": {"type": "string"},
            "upstream": {"type": "string", "format": "uri"}, "hosts": {"type": "array", "items": {"type": "string"}},
            "sampling_rate": {"type": "number", "minimum": 0, "maximum": 1},
            "allow": {"type": "array", "items": {"type": "string", "pattern": "^[A-Z]{1,16} /"}, "description": "The calls the gateway carries: a method, a space, a path prefix under the upstream's base, matched at a / boundary (\"GET /v1/search\" carries GET /v1/search and /v1/search/x, never /v1/searchy). Empty: none; any other call is refused 403 not_allowed."},
            "mode": {"type": "string", "enum": ["inject", "passthrough"], "description": "Whose credential the vendor sees: inject, the operator's (the call runs on the operator's vendor account); passthrough, the agent's own credential_header, forwarded and never stored."},
            "credential_header": {"type": ["string", "null"], "description": "The header the credential is in (a name; never a value)."},
            "public_key": {"type": ["string", "null"], "description": "base64 Ed25519; verifies service_signature on receipts."},
            "min_reputation": {"type": ["object", "null"], "additionalProperties": {"type": "number"}},
            "audit": r("Audit"), "probe_health": r("ProbeHealth"), "score": r("LiveScore")}},
        // typed on branch typed (gateway/api.rs, gateway/services.rs)
        "Salt": {"type": "object", "required": ["salt_id", "salt", "valid_until"], "properties": {
            "salt_id": {"type": "string", "pattern": "^s_[0-9]{8}$"}, "salt": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
            "valid_until": {"type": "string", "format": "date-time", "description": "The next rotation (00:00 UTC): fetch the new salt from then on."},
            "accepted_until": {"type": "string", "format": "date-time", "description": "The gateway accepts decisions under this salt until here (60 minutes after rotation)."},
            "agent_id": {"type": "string", "description": "The agent the key belongs to: the agent_id of every decision made with this key."}}},
        // typed on branch typed (gateway/api.rs, gateway/services.rs)
        "PublishedSalt": {"type": "object", "properties": {
            "salt_id": {"type": "string"}, "salt": {"type": "string"}, "valid_from": {"type": "string", "format": "date-time"},
            "valid_until": {"type": "string", "format": "date-time"}, "retired_at": {"type": "string", "format": "date-time"}}},
        // typed on branch typed (gateway/api.rs, gateway/services.rs)
        "SamplingVerifyRequest": {"type": "object", "required": ["service_id", "agent_id", "salt_id", "sample_decision"], "properties": {
            "service_id": {"type": "string"}, "agent_id": {"type": "string"}, "salt_id": {"type": "string", "pattern": "^s_[0-9]{8}$"},
            "sample_decision": {"type": "string", "pattern": "^[0-9a-fA-F]{64}$", "description": "The X-Prowl-Sample-Decision the agent sent (the roll)."}}},
        // typed on branch typed (gateway/api.rs, gateway/services.rs)
        "SamplingVerifyResult": {"type": "object", "required": ["valid", "sampled", "bucket"], "properties": {
            "valid": {"type": "boolean", "description": "The decision is the roll of this service, agent and salt."},
            "sampled": {"type": "boolean"}, "bucket": {"type": "number", "minimum": 0, "exclusiveMaximum": 1}}},
        // typed on branch typed (gateway/api.rs, gateway/services.rs)
        "Statement": {"type": "object", "required": ["service_id", "agent_id", "call_at", "outcome", "latency_ms", "nonce"], "additionalProperties": false, "properties": {
            "service_id": {"type": "string"}, "agent_id": {"type": "string"}, "call_at": {"type": "string", "format": "date-time"},
            "outcome": {"type": "string", "enum": ["success", "partial", "failure", "cancelled"]},
            "latency_ms": {"type": "number", "minimum": 0, "maximum": 86_400_000}, "nonce": {"type": "string", "pattern": "^[A-Za-z0-9_-]{8,128}$"}}},
        // typed on branch typed (gateway/api.rs, gateway/services.rs)
        "ReceiptSubmission": {"type": "object", "required": ["statement"], "description": "Signatures are base64 Ed25519 over the statement's canonical JSON (sorted keys, no whitespace, JavaScript number and string forms).", "properties": {
            "statement": r("Statement"), "agent_signature": {"type": ["string", "null"]}, "service_signature": {"type": ["string", "null"]}}},
        // typed on branch typed (gateway/api.rs, gateway/services.rs)
        "Receipt": {"type": "object", "properties": {
            "ok": {"const": true}, "receipt_id": {"type": "string", "description": "sha256 of the canonical statement."},
            "weight": {"type": "number", "enum": [0.3, 1.0]}, "agent_signed": {"type": "boolean"}, "service_signed": {"type": "boolean"}}},
        // typed on branch typed (gateway/api.rs, gateway/services.rs)
        "AgentReputation": {"type": "object", "description": "Seven dimensions over 30 days, never folded into one number.", "properties": {
            "agent_id": {"type": "string"}, "window_days": {"const": 30}, "since": {"type": "string", "format": "date-time"},
            "volume": dim.clone(), "tenure_days": dim.clone(), "consistency": dim.clone(), "receipt_cosign_rate": dim.clone(),
            "diversity": dim.clone(), "error_report_balance": dim.clone(), "abuse_flags": dim,
            "compared_agents": {"type": "integer", "minimum": 0, "description": "Other agents error_report_balance compares with (each holding at most max(20 %, 1/agents) of their reports)."}}}
    })
}

fn paths() -> Value {
    let bad = json!({"description": "Bad input; the message names the field.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}});
    let key = json!({"name": "X-Agent-Key", "in": "header", "required": true, "schema": {"type": "string"}});
    json!({
        "/v1/services": {"get": {"operationId": "listServices", "summary": "The Prowl catalog with each service's audit and probe health (no credentials).",
            "responses": {"200": ok("The catalog.", json!({"type": "object", "properties": {"services": {"type": "array", "items": r("Service")}}}))}}},
        "/v1/services/{slug}": {"get": {"operationId": "getService", "summary": "One service with its live score, audit and probe health.",
            "parameters": [{"name": "slug", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {"200": ok("The service.", r("Service")), "404": refusal("No such slug.")}}},
        "/v1/sampling/salt": {"get": {"operationId": "currentSalt", "summary": "Today's salt, for registered agents (decisions use the agent_id registration returned).",
            "parameters": [key.clone()],
            "responses": {"200": ok("The current salt.", r("Salt")), "401": refusal("Missing or unknown agent key.")}}},
        "/v1/sampling/salts": {"get": {"operationId": "publishedSalts", "summary": "Retired salts, newest first (a salt is published once no longer accepted).",
            "parameters": [{"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 366, "default": 30}}],
            "responses": {"200": ok("Published salts.", json!({"type": "object", "properties": {"salts": {"type": "array", "items": r("PublishedSalt")}}})), "400": bad.clone()}}},
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
    for (section, add) in [
        ("paths", paths()),
        ("components", json!({"schemas": schemas()})),
    ] {
        let (Some(target), Value::Object(add)) =
            (doc.get_mut(section).and_then(Value::as_object_mut), add)
        else {
            continue;
        };
        for (k, v) in add {
            match (target.get_mut(&k), v) {
                (Some(Value::Object(existing)), Value::Object(more)) => existing.extend(more),
                (_, v) => {
                    target.insert(k, v);
                }
            }
        }
    }
}
