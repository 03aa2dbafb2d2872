//! The OpenAPI description of provider mode, merged into `/openapi.json` by
//! [`crate::openapi::document`].

use lowdown_core::benchmark::directive::{
    MAX_EXPECTED, MAX_PRICE_CREDITS, MAX_PROMPT_CHARS, MAX_URL_CHARS,
};
use lowdown_core::benchmark::submission::{MAX_ERROR_CHARS, MAX_TEST_RESULTS, MAX_TOOL_COUNT};
use serde_json::{json, Map, Value};

use crate::openapi::{error_response as refusal, ok, r};

/// Provider mode's components: the answers with a type derived from it; by hand, the
/// requests the core checks from a `Value`.
fn schemas() -> Map<String, Value> {
    let dim = json!({"type": "number", "minimum": 0, "maximum": 10});
    let kind = json!({"type": "string", "enum": ["protocol", "agent"]});
    crate::openapi::derived(
        |g| {
            g.subschema_for::<super::auth::Registration>();
            g.subschema_for::<super::earnings::Earnings>();
            g.subschema_for::<super::directives::DirectiveView>();
            g.subschema_for::<super::directives::DirectiveList>();
            g.subschema_for::<super::directives::Lease>();
            g.subschema_for::<super::directives::Released>();
            g.subschema_for::<super::submit::SubmissionResult>();
            g.subschema_for::<super::operator::Posted>();
            g.subschema_for::<super::operator::OperatorDirective>();
        },
        json!({
            // Checked from a Value by the core (benchmark::directive::check_spec), limits and all.
            "DirectiveSpec": {"oneOf": [
                {"type": "object", "title": "protocol", "required": ["remote_url"], "additionalProperties": false, "properties": {
                    "remote_url": {"type": "string", "format": "uri", "description": "An MCP remote (streamable HTTP), https and public: the Scanner's SSRF rules."}}},
                {"type": "object", "title": "agent", "required": ["prompt", "mcp_server", "expect"], "additionalProperties": false, "properties": {
                    "prompt": {"type": "string", "maxLength": MAX_PROMPT_CHARS},
                    "mcp_server": {"type": "object", "required": ["url"], "additionalProperties": false,
                        "description": "A remote MCP server, never a program: {command, args} is refused (422 local_command_refused); the provider reaches it through its own stdio bridge.",
                        "properties": {"url": {"type": "string", "format": "uri", "pattern": "^[Hh][Tt][Tt][Pp][Ss]:", "maxLength": MAX_URL_CHARS,
                            "description": "Streamable HTTP, https only (422 mcp_server_not_https) and public: the Scanner's SSRF rules."}}},
                    "expect": {"type": "object", "required": ["contains"], "additionalProperties": false, "properties": {
                        "contains": {"type": "array", "minItems": 1, "maxItems": MAX_EXPECTED, "items": {"type": "string", "minLength": 1},
                            "description": "The run passes when the answer contains every string, exactly."}}}}}]},
            // Checked from a Value by the core (benchmark::directive::check_new), limits and all.
            "NewDirective": {"type": "object", "required": ["service_id", "kind", "spec", "price_credits"], "additionalProperties": false, "properties": {
                "service_id": {"type": "string", "description": "A catalog service (services.toml)."}, "kind": kind, "spec": r("DirectiveSpec"),
                "price_credits": {"type": "integer", "minimum": 1, "maximum": MAX_PRICE_CREDITS, "description": "What the vendor pays (outside Lowdown); the provider earns 70 %."},
                "critical": {"type": "boolean", "default": false, "description": "Reaches providers of higher agent reputation first."}}},
            // Checked from a Value by the core (benchmark::submission::check), limits and all.
            "TestResult": {"type": "object", "required": ["test_case_id", "passed"], "properties": {
                "test_case_id": {"type": "string", "maxLength": 128}, "passed": {"type": "boolean"},
                "actual_status": {"type": ["integer", "null"], "minimum": 100, "maximum": 599}, "latency_ms": {"type": ["number", "null"], "minimum": 0},
                "error": {"type": ["string", "null"], "maxLength": MAX_ERROR_CHARS, "description": "A stable kind (timeout, not_in_answer); secrets are redacted, control characters dropped."}}},
            // Checked from a Value by the core (benchmark::submission::check), limits and all.
            "Submission": {"type": "object", "required": ["directive_id", "dimensions", "overall_score", "test_results", "runner_id", "execution_time_ms"], "properties": {
                "directive_id": {"type": "string"},
                "dimensions": {"type": "object", "additionalProperties": dim.clone(), "description": "protocol: reachability, tool_discovery, tool_documentation, schema_quality, latency, agent_guidance; agent: expectations. Each 0-10."},
                "overall_score": {"type": "number", "minimum": 0, "maximum": 100, "description": "The weighted sum x 10 (protocol weights .20 .15 .20 .20 .15 .10); refused when more than 0.1 away from the server's recomputation."},
                "test_results": {"type": "array", "maxItems": MAX_TEST_RESULTS, "items": r("TestResult")},
                "runner_id": {"type": "string", "maxLength": 128}, "execution_time_ms": {"type": "number", "minimum": 0},
                "observed": {"type": "object", "additionalProperties": false, "required": ["reached_level"],
                    "description": "protocol only, and required there: what the probe observed, checked against the server's own probe of the remote.",
                    "properties": {"reached_level": {"type": "integer", "minimum": 0, "maximum": 2},
                        "tool_count": {"type": ["integer", "null"], "minimum": 0, "maximum": MAX_TOOL_COUNT, "description": "Tools over every page; level 2 only."},
                        "schema_hash": {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$", "description": "The §3.3 schema hash of the first tools/list page; level 2 only."}}}}}
        }),
    )
}

fn paths() -> Value {
    let bad = refusal("Bad input; the message names the field.");
    let key = json!({"name": "X-Agent-Key", "in": "header", "required": true, "schema": {"type": "string"}});
    let bearer = json!({"name": "Authorization", "in": "header", "required": true, "schema": {"type": "string"}, "description": "Bearer $LOWDOWN_ADMIN_TOKEN"});
    let id = json!({"name": "directive_id", "in": "path", "required": true, "schema": {"type": "string"}});
    let unauthorized = refusal("Missing or unknown agent key (agent_key).");
    let not_provider = refusal("The agent is not a provider (not_a_provider), or the directive is leased to another provider (foreign_directive), or a critical directive has not reached your rank yet (critical_held), or you are excluded for disagreements (provider_excluded), or your network is unknown for an agent directive (unknown_network).");
    let unknown = refusal("No such directive (unknown_directive).");
    json!({
        "/v1/benchmark/directives": {"post": {"operationId": "postDirective", "summary": "Post a benchmark directive for a paying vendor (operator only).",
            "parameters": [bearer.clone()],
            "requestBody": {"required": true, "content": {"application/json": {"schema": r("NewDirective")}}},
            "responses": {"201": ok("Stored, open.", r("PostedDirective")), "400": bad.clone(),
                "422": refusal("local_command_refused (spec.mcp_server names a program: {command, args}) or mcp_server_not_https (spec.mcp_server.url is not https): a directive never runs code on a provider's machine."),
                "401": refusal("Missing or wrong bearer token (admin_token)."), "403": refusal("The server runs without LOWDOWN_ADMIN_TOKEN (admin_disabled).")}}},
        "/v1/benchmark/directives/{directive_id}": {"get": {"operationId": "getDirective", "summary": "A directive with its status, lease and submission (operator only).",
            "parameters": [bearer, id.clone()],
            "responses": {"200": ok("The directive.", r("OperatorDirective")), "401": refusal("Missing or wrong bearer token."), "403": refusal("No admin token configured."), "404": unknown.clone()}}},
        "/v1/provider/register": {"post": {"operationId": "registerProvider", "summary": "Make a registered agent a provider (idempotent).",
            "parameters": [key.clone()],
            "responses": {"201": ok("Registered.", r("ProviderRegistration")), "200": ok("Already a provider.", r("ProviderRegistration")), "401": unauthorized.clone()}}},
        "/v1/provider/directives": {"get": {"operationId": "listDirectives", "summary": "Open directives: critical first (in reputation order across providers), then oldest first.",
            "parameters": [key.clone()],
            "responses": {"200": ok("Open directives.", r("DirectiveList")), "401": unauthorized.clone(), "403": not_provider.clone()}}},
        "/v1/provider/directives/{directive_id}/claim": {"post": {"operationId": "claimDirective", "summary": "Lease a directive for 30 minutes (one provider at a time, one lease per provider).",
            "parameters": [key.clone(), id.clone()],
            "responses": {"200": ok("Leased.", r("Lease")), "401": unauthorized.clone(), "403": not_provider.clone(), "404": unknown.clone(),
                "409": refusal("already_claimed (you hold it), lease_held (you hold another), directive_completed, already_submitted / same_network (an agent directive waits for a provider of another network)."),
                "422": refusal("local_command_refused / mcp_server_not_https: a directive stored before today's rules that they refuse; it is never leased.")}}},
        "/v1/provider/directives/{directive_id}/release": {"post": {"operationId": "releaseDirective", "summary": "Give a lease up; the directive is open again at once.",
            "parameters": [key.clone(), id],
            "responses": {"200": ok("Released.", r("Released")),
                "401": unauthorized.clone(), "403": not_provider.clone(), "404": unknown.clone(),
                "409": refusal("not_claimed, lease_expired, directive_completed.")}}},
        "/v1/provider/submit": {"post": {"operationId": "submitResult", "summary": "Submit the result of the directive you hold. protocol: checked against the server's own probe, then 70 % of the price is credited; agent: held until a provider of another network agrees.",
            "parameters": [key.clone()],
            "requestBody": {"required": true, "content": {"application/json": {"schema": r("Submission")}}},
            "responses": {"201": ok("Recorded.", r("SubmissionResult")), "400": bad, "401": unauthorized.clone(), "403": not_provider, "404": unknown,
                "409": refusal("not_claimed (submitting without a claim), lease_expired (your lease ended), directive_completed, probe_unverified (the server's own probe did not complete initialize: nothing recorded, the directive is back in the queue), already_submitted / same_network (agent)."),
                "422": refusal("contradicts_probe: a fact or dimension differs from the server's own probe of the remote, named with both values (e.g. tool_count (submitted 9, the server saw 13)); nothing recorded or credited, the directive is back in the queue, and it counts as a disagreement.")}}},
        "/v1/provider/earnings": {"get": {"operationId": "providerEarnings", "summary": "Your credit ledger (no real money).",
            "parameters": [key],
            "responses": {"200": ok("The ledger.", r("Earnings")), "401": unauthorized, "403": refusal("The agent is not a provider.")}}}
    })
}

/// Adds provider mode's paths and schemas to `doc`.
pub fn extend(doc: &mut Value) {
    crate::openapi::merge(doc, paths(), schemas());
}
