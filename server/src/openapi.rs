//! The OpenAPI 3.1 document served at `/openapi.json`. Its paths are a table per route
//! here (and in `gateway`, `provider` and `pages`), checked against
//! [`crate::routes::ROUTES`] by a test; its component schemas are derived from the answer
//! types ([`derived`]), but for the requests still read from a `Value` ([`hand_written`]).
//! A test validates real answers against the document.

use lowdown_core::record::validate::{MAX_BATCH, MAX_NAME, MAX_TARGET};
use lowdown_core::scanner::registry::MAX_NAME as REGISTRY_MAX_NAME;
use lowdown_core::telemetry::{
    RATE_LIMIT_PER_IP_PER_HOUR, RATE_LIMIT_PER_KEY_PER_HOUR, REGISTRATIONS_PER_CALLER_PER_HOUR,
};
use schemars::generate::{SchemaGenerator, SchemaSettings};

use crate::services::registry_view;
use serde_json::{json, Map, Value};

/// An answer of `Error`s.
pub(crate) fn error_response(description: &str) -> Value {
    ok(description, r("Error"))
}

/// A JSON answer of `schema`.
pub(crate) fn ok(description: &str, schema: Value) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": schema}}})
}

/// A reference to the component schema `name`.
pub(crate) fn r(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// Adds `paths` and the component `schemas` (objects both) to `doc`. Two different
/// schemas of one name are a bug (the second would replace the first).
pub(crate) fn merge(doc: &mut Value, paths: Value, schemas: Map<String, Value>) {
    for (at, add) in [
        ("/paths", paths),
        ("/components/schemas", Value::Object(schemas)),
    ] {
        if let (Some(Value::Object(target)), Value::Object(add)) = (doc.pointer_mut(at), add) {
            for (k, v) in add {
                assert!(target.get(&k).is_none_or(|old| *old == v), "{at}/{k} twice");
                target.insert(k, v);
            }
        }
    }
}

fn json_body(schema: Value) -> Value {
    json!({"required": true, "content": {"application/json": {"schema": schema}}})
}

/// Component schemas, each derived from the type its answer is serialised from (the types
/// `register` adds)
/// (`schemars`, serialisation contract: doc comments are the descriptions, serde
/// attributes are honoured, the core's types come from its `schemars` feature). `$ref`s
/// point into `#/components/schemas`. `hand`, an object, adds the schemas typed by hand.
pub(crate) fn derived(
    register: impl FnOnce(&mut SchemaGenerator),
    hand: Value,
) -> Map<String, Value> {
    let mut generator = SchemaSettings::draft2020_12()
        .for_serialize()
        .with(|s| s.definitions_path = "/components/schemas".into())
        .into_generator();
    register(&mut generator);
    let mut all = generator.take_definitions(true);
    if let Value::Object(hand) = hand {
        all.extend(hand);
    }
    all
}

/// The base document's components (the gateway, provider mode and the pages add theirs):
/// the derived ones; by hand, the requests read field by field from a `Value` (their errors
/// name each field); and the record and the observation from the core's one definition of
/// them, with what the server adds: it refuses private hosts.
fn schemas() -> Value {
    use lowdown_core::contract::{json_schema, OBSERVATION, RECORD};
    let mut all = derived(
        |generator| {
            generator.subschema_for::<crate::error::ErrorBody>();
            generator.subschema_for::<crate::routes::reputation::Answer>();
            generator.subschema_for::<crate::routes::reputation::Candidates>();
            generator.subschema_for::<crate::routes::preflight::Answer>();
            generator.subschema_for::<crate::routes::compare::Answer>();
            generator.subschema_for::<crate::routes::interactions::Ingested>();
            generator.subschema_for::<crate::routes::node::NodeAnswer>();
            generator.subschema_for::<crate::routes::telemetry::Single>();
            generator.subschema_for::<crate::routes::telemetry::Batch>();
            generator.subschema_for::<crate::routes::agents::Registered>();
            generator.subschema_for::<crate::routes::meta::Health>();
            generator.subschema_for::<crate::services::registry_view::ServerList>();
            generator.subschema_for::<crate::services::registry_view::ServerResponse>();
        },
        json!({
            // Read field by field in routes/agents.rs.
            "AgentRegistration": {"type": "object", "required": ["name", "model_provider", "model_id", "environment"], "properties": {
                "name": {"type": "string", "maxLength": MAX_NAME}, "model_provider": {"type": "string", "maxLength": MAX_NAME},
                "model_id": {"type": "string", "maxLength": MAX_NAME}, "environment": {"type": "string", "maxLength": MAX_NAME},
                "public_key": {"type": ["string", "null"], "description": "base64 Ed25519 public key verifying the agent's receipt signatures."}}}
        }),
    );
    let mut record = json_schema(&RECORD);
    record["properties"]["target"]["description"] = json!(format!(
        "{} A target naming a private or special-use host (`url:localhost`, `10.0.0.7`, `db.internal`) is refused.",
        record["properties"]["target"]["description"].as_str().unwrap_or_default()
    ));
    let mut observation = json_schema(&OBSERVATION);
    observation["properties"]["host"]["description"] = json!("Bare host only: no scheme, port, path or query. Private and special-use hosts (localhost, private addresses, .local, .internal, single labels, metadata endpoints) are refused, never stored.");
    all.insert("InteractionRecord".into(), record);
    all.insert("Observation".into(), observation);
    Value::Object(all)
}

/// The whole document (the sampling gateway's part comes from `crate::gateway::openapi`).
pub fn document() -> Value {
    let mut doc = base_document();
    crate::gateway::openapi::extend(&mut doc);
    crate::pages::openapi::extend(&mut doc);
    crate::provider::openapi::extend(&mut doc);
    otlp_paths(&mut doc);
    doc
}

/// `POST /v1/traces` and `POST /v1/metrics`: OTLP/HTTP, whose bodies are the
/// `opentelemetry-proto` messages (protobuf, or their OTLP/JSON form), not this document's
/// JSON; errors are a `google.rpc.Status` in the request's encoding, not `Error`.
fn otlp_paths(doc: &mut Value) {
    let bodies = |what: &str| {
        json!({"required": true, "description": format!("An OTLP `{what}`, protobuf or OTLP/JSON, optionally `Content-Encoding: gzip`; at most 1 MiB as sent and 4 MiB gunzipped."),
            "content": {"application/x-protobuf": {"schema": {"type": "string", "format": "binary"}},
                "application/json": {"schema": {"type": "object"}}}})
    };
    let answer = |description: &str, rejected: &str| {
        json!({"description": description,
            "content": {"application/x-protobuf": {"schema": {"type": "string", "format": "binary"}},
                "application/json": {"schema": {"type": "object", "properties": {"partialSuccess": {"type": "object", "properties": {
                    rejected: {"type": "string", "pattern": "^[0-9]+$"}, "errorMessage": {"type": "string"}}}}}}}})
    };
    let status = |description: &str| {
        json!({"description": description,
            "content": {"application/x-protobuf": {"schema": {"type": "string", "format": "binary"}},
                "application/json": {"schema": {"type": "object", "required": ["code", "message"], "properties": {"code": {"type": "integer"}, "message": {"type": "string"}}}}}})
    };
    let errors = |op: &mut Value| {
        op["responses"]["400"] = status(
            "Not an OTLP message of this type, or not valid gzip (`google.rpc.Status`, code 3).",
        );
        op["responses"]["413"] = status("Over 1 MiB as sent, or over 4 MiB gunzipped (code 8).");
        op["responses"]["415"] =
            status("Another content type or content encoding (code 3, in JSON).");
        op["responses"]["500"] =
            status("Internal error (code 13; details are logged, never returned).");
    };
    let mut traces = json!({"operationId": "otlpTraces", "summary": "OTLP/HTTP traces: MCP client spans become interaction records (see server/README.md, OpenTelemetry (OTLP) in).",
        "parameters": [{"name": "X-Agent-Key", "in": "header", "required": false, "schema": {"type": "string"}, "description": "Makes the records that agent's, as for POST /api/interactions."}],
        "requestBody": bodies("ExportTraceServiceRequest"),
        "responses": {"200": answer("`ExportTraceServiceResponse`: `partialSuccess` counts the spans that made no record and says why (not an MCP span, no target, over a quota, …); absent when every span was taken.", "rejectedSpans"),
            "429": status("Every MCP span was over a budget (code 8); `Retry-After` says when to send them again.")}});
    errors(&mut traces);
    let mut metrics = json!({"operationId": "otlpMetrics", "summary": "OTLP/HTTP metrics: decoded and acknowledged; no data point becomes a record (calls are counted from spans).",
        "requestBody": bodies("ExportMetricsServiceRequest"),
        "responses": {"200": answer("`ExportMetricsServiceResponse`, empty.", "rejectedDataPoints")}});
    errors(&mut metrics);
    doc["paths"]["/v1/traces"] = json!({"post": traces});
    doc["paths"]["/v1/metrics"] = json!({"post": metrics});
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
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Recorded", "required": ["error", "reason"]}}}}, "500": internal.clone()}}},
            "/api/reputation/{target}": {"get": {"operationId": "getReputation", "summary": "What the network has seen of a target.",
                "parameters": [{"name": "target", "in": "path", "required": true, "schema": {"type": "string", "maxLength": MAX_TARGET},
                    "description": "As recorded (a `/` raw or `%2F`); `pypi:` names also by PEP 503 and `npm:` names in any case; or a short name that matches one target."}, task_param.clone(), node_header],
                "responses": {"200": ok("The answer, or `candidates` (never a substitute).", json!({"oneOf": [r("Reputation"), r("Candidates")]})), "400": bad.clone(), "500": internal.clone()}}},
            "/api/preflight/{target}": {"get": {"operationId": "getPreflight", "summary": "Whether to ask the user before calling a tool of this server, with the facts why (the preflight hooks read it).",
                "parameters": [{"name": "target", "in": "path", "required": true, "schema": {"type": "string", "maxLength": MAX_TARGET},
                    "description": "Named as for /api/reputation; a name matching none or several targets gets `decision: none`."}],
                "responses": {"200": ok("`ask` with one fact per reason (the Registry marks it deleted; a package deprecated, yanked or missing; tool definitions changed in the last 7 days after 7 stable days; the newest version 25 points below the others over at least 10 rated calls each, the newest's from at least 3 networks), or `none`.", r("Preflight")), "400": bad.clone(), "500": internal.clone()}}},
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
                        "headers": {"Retry-After": retry_after.clone()}, "content": {"application/json": {"schema": {"oneOf": [r("Observed"), r("ObservedBatch")]}}}},
                    "400": error_response("The body is not an observation or an array of them, or nothing in it is valid (a private host is refused, never stored)."), "413": too_large.clone(),
                    "429": {"description": "Nothing accepted: the caller's budget is used up.", "headers": {"Retry-After": retry_after.clone()},
                        "content": {"application/json": {"schema": r("Error")}}}, "500": internal.clone()}}},
            "/v1/auth/agents/register": {"post": {"operationId": "registerAgent", "summary": "Get an agent key (shown once, stored hashed).",
                "requestBody": json_body(r("AgentRegistration")),
                "responses": {"201": ok("Registered.", r("AgentKey")), "400": bad.clone(), "413": too_large.clone(),
                    "429": {"description": format!("Over {REGISTRATIONS_PER_CALLER_PER_HOUR} registrations per sliding hour for this network (an IPv4 /24, an IPv6 /48)."), "headers": {"Retry-After": retry_after},
                        "content": {"application/json": {"schema": r("Error")}}}, "500": internal.clone()}}},
            "/v0.1/servers": {"get": {"operationId": "registryListServers", "summary": "The MCP Registry's servers in the Registry's own format (ServerList), each server.json as the Registry served it, with Lowdown's facts under `_meta[\"dev.lowdown/facts\"]`.",
                "parameters": [
                    {"name": "cursor", "in": "query", "required": false, "schema": {"type": "string", "maxLength": REGISTRY_MAX_NAME}, "description": "`metadata.nextCursor` of the page before, as given."},
                    {"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": registry_view::MAX_LIMIT, "default": registry_view::DEFAULT_LIMIT}},
                    {"name": "search", "in": "query", "required": false, "schema": {"type": "string", "maxLength": REGISTRY_MAX_NAME}, "description": "Names containing it, case-insensitively."},
                    {"name": "updated_since", "in": "query", "required": false, "schema": {"type": "string", "format": "date-time"}, "description": "Servers whose official updatedAt is at or after it."},
                    {"name": "version", "in": "query", "required": false, "schema": {"type": "string", "const": "latest"}, "description": "Only `latest`: Lowdown keeps each server's latest version."}],
                "responses": {"200": ok("One page, in name order.", r("RegistryServerList")), "400": bad.clone(), "500": internal.clone()}}},
            "/v0.1/servers/{name}": {"get": {"operationId": "registryGetServer", "summary": "One server in the Registry's ServerResponse format; `{name}/versions/latest` and `{name}/versions/{version}` answer the same, `{name}/versions` a ServerList of it.",
                "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}, "description": "The Registry name, its `/` raw or `%2F` (`io.github.user/server`)."}],
                "responses": {"200": ok("The server.", json!({"oneOf": [r("RegistryServerResponse"), r("RegistryServerList")]})), "400": bad.clone(),
                    "404": error_response("No such server (or version) in the Registry as Lowdown last read it."), "500": internal.clone()}}},
            "/openapi.json": {"get": {"operationId": "openapi", "summary": "This document.", "responses": {"200": ok("OpenAPI 3.1.", json!({"type": "object"}))}}},
            "/llms.txt": {"get": {"operationId": "llmsTxt", "summary": "How an agent uses this API, in plain text.",
                "responses": {"200": {"description": "Plain text.", "content": {"text/plain": {"schema": {"type": "string"}}}}}}},
            "/healthz": {"get": {"operationId": "healthz", "summary": "Liveness and a database round trip.", "responses": {"200": ok("Up.", r("Health")), "500": internal}}},
            "/hooks/{file}": {"get": {"operationId": "hook", "summary": "A drop-in Claude Code hook: one file, Python's standard library only, as the prowl wheel ships it (see docs/contribute-telemetry.md).",
                "parameters": [{"name": "file", "in": "path", "required": true, "schema": {"type": "string", "enum": crate::routes::hooks::HOOKS.iter().map(|(name, _)| *name).collect::<Vec<_>>()}}],
                "responses": {"200": {"description": "The hook's source, as an attachment.", "content": {"text/x-python": {"schema": {"type": "string"}}}},
                    "404": error_response("No hook of that name.")}}}
        },
        "components": {"schemas": schemas()}
    })
}
