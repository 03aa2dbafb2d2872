//! `/openapi.json` against real answers: a server on a socket answers every documented
//! status these requests can produce, and each body is validated (JSON Schema 2020-12,
//! formats included) against the schema the document gives for its path and status. For
//! the check, every object schema is closed (`unevaluatedProperties: false`), so a field
//! the document does not name fails as surely as a missing or mistyped one.

use crate::common;
use crate::provider_fixtures;

use common::{record, TestDb};
use lowdown_server::AppState;
use provider_fixtures::{agent_result, honest, Bench, TOKEN};
use serde_json::{json, Value};

/// The document with every object schema that lists its properties closed.
fn closed(mut v: Value) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(m) => {
                let lists = m.get("properties").is_some_and(Value::is_object);
                if lists
                    && !m.contains_key("additionalProperties")
                    && !m.contains_key("unevaluatedProperties")
                {
                    m.insert("unevaluatedProperties".into(), Value::Bool(false));
                }
                m.iter_mut().for_each(|(_, v)| walk(v));
            }
            Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    // The paths and the components only: `properties` elsewhere is not a schema.
    for part in ["paths", "components"] {
        if let Some(p) = v.get_mut(part) {
            walk(p);
        }
    }
    v
}

/// What `doc` says `method path` answers with `status` (its one media type), as a JSON
/// pointer.
fn pointer(doc: &Value, path: &str, method: &str, status: u16) -> Option<String> {
    let escape = |s: &str| s.replace('~', "~0").replace('/', "~1");
    let at = format!(
        "/paths/{}/{method}/responses/{status}/content",
        escape(path)
    );
    let media = doc.pointer(&at)?.as_object()?.keys().next()?;
    Some(format!("#{at}/{}/schema", escape(media)))
}

/// Why `body` is not what `doc` documents for `method path` answering `status` (`None`
/// when it is).
pub fn violations(
    doc: &Value,
    method: &str,
    path: &str,
    status: u16,
    body: &Value,
) -> Option<String> {
    let Some(at) = pointer(doc, path, method, status) else {
        return Some(format!("{method} {path} {status}: not documented"));
    };
    // The whole document is the schema resource, so every `$ref` resolves in it.
    let mut root = closed(doc.clone());
    root["$ref"] = json!(at.replace('{', "%7B").replace('}', "%7D"));
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&root)
        .unwrap_or_else(|e| panic!("{method} {path} {status}: the schema does not compile: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(body)
        .map(|e| format!("  at {}: {e}", e.instance_path()))
        .collect();
    (!errors.is_empty()).then(|| format!("{method} {path} {status}:\n{}", errors.join("\n")))
}

/// Validates `body` like [`violations`], failing with what is wrong.
pub fn assert_documented(doc: &Value, method: &str, path: &str, status: u16, body: &Value) {
    if let Some(v) = violations(doc, method, path, status, body) {
        panic!("{v}\nbody: {body}");
    }
}

struct Server {
    served: common::Served,
    client: reqwest::Client,
}

impl Server {
    async fn start(t: &TestDb) -> Server {
        Server::on(AppState::new(t.db.clone(), "openapi-test")).await
    }

    /// The API of `state` on a fresh 127.0.0.1 port.
    async fn on(state: AppState) -> Server {
        Server {
            served: common::Served::start(state).await,
            client: reqwest::Client::new(),
        }
    }

    /// `method uri` with `headers` and a JSON `body`: the status and the parsed answer.
    async fn call(
        &self,
        method: &str,
        uri: &str,
        headers: &[(&str, &str)],
        body: Option<String>,
    ) -> (u16, Value) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut req = self.client.request(method, self.served.url(uri));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(b) = body {
            req = req.header("content-type", "application/json").body(b);
        }
        let res = req.send().await.unwrap();
        let status = res.status().as_u16();
        let text = res.text().await.unwrap();
        let json = serde_json::from_str(&text)
            .unwrap_or_else(|_| panic!("{uri} {status}: not JSON: {text}"));
        (status, json)
    }

    async fn stop(self) {
        self.served.stop().await;
    }
}

/// One request and the documented path it answers for; `expect` is the status it must get.
struct Case<'a> {
    method: &'a str,
    path: &'a str,
    uri: String,
    headers: Vec<(&'a str, String)>,
    body: Option<Value>,
    expect: u16,
}

fn case<'a>(
    method: &'a str,
    path: &'a str,
    uri: &str,
    body: Option<Value>,
    expect: u16,
) -> Case<'a> {
    Case {
        method,
        path,
        uri: uri.to_owned(),
        headers: Vec::new(),
        body,
        expect,
    }
}

impl<'a> Case<'a> {
    fn header(mut self, k: &'a str, v: &str) -> Self {
        self.headers.push((k, v.to_owned()));
        self
    }
}

/// Sends every case in order, checking each gets its expected status.
async fn answers<'a>(s: &Server, cases: Vec<Case<'a>>) -> Vec<(&'a str, &'a str, u16, Value)> {
    let mut out = Vec::new();
    for c in cases {
        let headers: Vec<(&str, &str)> = c.headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let body = c.body.as_ref().map(Value::to_string);
        let (status, answer) = s
            .call(&c.method.to_uppercase(), &c.uri, &headers, body)
            .await;
        assert_eq!(status, c.expect, "{} {}: {answer}", c.method, c.uri);
        out.push((c.method, c.path, status, answer));
    }
    out
}

// One request a line reads best as a table.
#[rustfmt::skip]
async fn real_answers_are_what_the_document_says(t: &TestDb) {
    let s = Server::start(t).await;
    let (status, doc) = s.call("GET", "/openapi.json", &[], None).await;
    assert_eq!(status, 200);
    let node = "ld_0123456789ab";
    let mut failing = record("api.stripe.com", "failure");
    failing["node_id"] = json!(node);
    failing["latency_ms"] = json!(12);
    failing["failure_type"] = json!("timeout");
    let mut ok = record("api.stripe.com", "success");
    ok["node_id"] = json!(node);
    ok["latency_ms"] = json!(30);
    let obs = obs_for("api.stripe.com");
    let registration = json!({"name": "bot", "model_provider": "acme", "model_id": "m-1", "environment": "test"});
    let mut big = record("npm:big", "success");
    big["padding"] = json!("p".repeat(1024 * 1024));
    let (rec, observe, register) = ("/api/interactions", "/v1/telemetry/observe", "/v1/auth/agents/register");
    let reputation = "/api/reputation/{target}";

    // What the first requests store is what the later answers are about, in this order.
    let mut seen = answers(&s, vec![
        case("post", rec, rec, Some(json!([failing, ok, 5])), 201),
        case("post", rec, rec, Some(record("npm:search-a", "success")), 201),
        case("post", rec, rec, Some(record("npm:search-b", "partial")), 201),
        case("post", rec, rec, Some(json!([5])), 400),
        case("post", rec, rec, Some(big), 413),
        case("post", observe, observe, Some(obs.clone()), 200),
        case("post", observe, observe, Some(json!([obs, {"host": "x"}])), 200),
        case("post", observe, observe, Some(json!({"host": "localhost"})), 400),
        case("get", reputation, "/api/reputation/api.stripe.com?task_type=search", None, 200).header("x-lowdown-node-id", node),
        case("get", reputation, "/api/reputation/api.stripe.com", None, 200),
        case("get", reputation, "/api/reputation/search", None, 200),
        case("get", reputation, "/api/reputation/nothing.example.com", None, 200),
        case("get", reputation, "/api/reputation/x", None, 400).header("x-lowdown-node-id", "bad"),
        case("get", "/api/compare", "/api/compare?targets=api.stripe.com,npm:search-a", None, 200),
        case("get", "/api/compare", "/api/compare?targets=api.stripe.com", None, 400),
        case("get", "/api/node/{node_id}", &format!("/api/node/{node}"), None, 200),
        case("get", "/api/node/{node_id}", "/api/node/ld_unknown", None, 200),
        case("get", "/api/node/{node_id}", "/api/node/nope", None, 400),
        case("post", register, register, Some(json!({"name": 5})), 400),
        case("get", "/healthz", "/healthz", None, 200),
        case("get", "/hooks/{file}", "/hooks/..%2Fprowl_provider_state.json", None, 404),
        case("get", "/v1/services", "/v1/services", None, 200),
        case("get", "/v1/services/{slug}", "/v1/services/nope", None, 404),
        case("get", "/v1/sampling/salt", "/v1/sampling/salt", None, 401),
        case("get", "/v1/sampling/salts", "/v1/sampling/salts", None, 200),
        case("get", "/v1/sampling/salts", "/v1/sampling/salts?limit=0", None, 400),
        case("post", "/v1/sampling/verify", "/v1/sampling/verify", Some(json!({})), 400),
        case("get", "/v1/agents/{agent_id}/reputation", "/v1/agents/nobody/reputation", None, 404),
        case("get", "/v1/provider/directives", "/v1/provider/directives", None, 401),
        case("get", "/v1/benchmark/directives/{directive_id}", "/v1/benchmark/directives/d", None, 403).header("authorization", "Bearer x"),
    ]).await;

    // A registered agent: its key, the salt, provider mode.
    let (_, a) = s.call("POST", register, &[], Some(registration.to_string())).await;
    let key = a["agent_key"].as_str().unwrap().to_owned();
    let agent = a["agent_id"].as_str().unwrap().to_owned();
    let path = format!("/v1/agents/{agent}/reputation");
    seen.extend(answers(&s, vec![
        case("post", register, register, Some(registration.clone()), 201),
        case("get", "/v1/sampling/salt", "/v1/sampling/salt", None, 200).header("x-agent-key", &key),
        case("post", "/v1/provider/register", "/v1/provider/register", None, 201).header("x-agent-key", &key),
        case("post", "/v1/provider/register", "/v1/provider/register", None, 200).header("x-agent-key", &key),
        case("get", "/v1/provider/directives", "/v1/provider/directives", None, 200).header("x-agent-key", &key),
        case("get", "/v1/provider/earnings", "/v1/provider/earnings", None, 200).header("x-agent-key", &key),
        case("get", "/v1/agents/{agent_id}/reputation", &path, None, 200),
    ]).await);

    // Over the limits: the network's observations (60 an hour, 2 used above) and its
    // registrations (10 an hour, 2 used above).
    let fill = Value::Array((0..58).map(|_| obs_for("api.example.com")).collect());
    let mut over = vec![
        case("post", observe, observe, Some(fill), 200),
        case("post", observe, observe, Some(obs_for("api.example.com")), 429),
    ];
    over.extend((0..8).map(|_| case("post", register, register, Some(registration.clone()), 201)));
    over.push(case("post", register, register, Some(registration), 429));
    seen.extend(answers(&s, over).await);
    s.stop().await;

    // The answers that carry the most, so that an empty answer cannot pass for them.
    let full = &seen[8].3;
    for field in ["telemetry", "latency_ms", "task_breakdown", "recent_trends", "by_server_version"] {
        assert!(!full[field].is_null(), "the contributor answer has no {field}: {full}");
    }
    assert!(seen[10].3["candidates"].is_array(), "{}", seen[10].3);
    let failures: Vec<String> = seen
        .iter()
        .filter_map(|(m, p, status, body)| violations(&doc, m, p, *status, body))
        .collect();
    assert!(failures.is_empty(), "answers the document does not describe:\n{}", failures.join("\n"));
}
on_both!(real_answers_are_what_the_document_says);

/// Provider mode's answers with something in them: the operator's directives, a listing
/// with open ones, a lease, a release, an agent result waiting for agreement, a protocol
/// result the probe agreed with, and the operator's view of each stage.
#[rustfmt::skip]
async fn provider_answers_are_what_the_document_says(t: &TestDb) {
    let b = Bench::start(t).await;
    let s = Server::on(b.rig.state.clone().with_admin_token(Some(TOKEN.into()))).await;
    let (status, doc) = s.call("GET", "/openapi.json", &[], None).await;
    assert_eq!(status, 200);
    let p = b.provider().await;
    let auth = format!("Bearer {TOKEN}");
    let posted = "/v1/benchmark/directives";
    let agent = json!({"service_id": "svc_vendor", "kind": "agent", "price_credits": 2,
        "spec": {"prompt": "Which tools does the server offer?", "mcp_server": {"url": "https://everything.vendor-fixture.com/mcp"},
            "expect": {"contains": ["echo", "get-sum"]}}});
    let protocol = json!({"service_id": "svc_vendor", "kind": "protocol", "price_credits": 1, "spec": {"remote_url": b.remote()}});
    let mut seen = answers(&s, vec![
        case("post", posted, posted, Some(agent), 201).header("authorization", &auth),
        case("post", posted, posted, Some(protocol), 201).header("authorization", &auth),
        case("get", "/v1/provider/directives", "/v1/provider/directives", None, 200).header("x-agent-key", &p.key),
    ]).await;
    let (a, pr) = (seen[0].3["directive_id"].as_str().unwrap().to_owned(), seen[1].3["directive_id"].as_str().unwrap().to_owned());
    assert_eq!(seen[2].3["directives"].as_array().map(Vec::len), Some(2), "{}", seen[2].3);
    let (claim, release, one) = ("/v1/provider/directives/{directive_id}/claim", "/v1/provider/directives/{directive_id}/release", "/v1/benchmark/directives/{directive_id}");
    let (submit, key) = ("/v1/provider/submit", p.key.as_str());
    seen.extend(answers(&s, vec![
        case("post", claim, &format!("/v1/provider/directives/{a}/claim"), None, 200).header("x-agent-key", key),
        case("post", release, &format!("/v1/provider/directives/{a}/release"), None, 200).header("x-agent-key", key),
        case("post", claim, &format!("/v1/provider/directives/{a}/claim"), None, 200).header("x-agent-key", key),
        case("post", submit, submit, Some(agent_result(&a, 2)), 201).header("x-agent-key", key),
        case("get", one, &format!("/v1/benchmark/directives/{a}"), None, 200).header("authorization", &auth),
        case("post", claim, &format!("/v1/provider/directives/{pr}/claim"), None, 200).header("x-agent-key", key),
        case("get", one, &format!("/v1/benchmark/directives/{pr}"), None, 200).header("authorization", &auth),
    ]).await);
    seen.extend(answers(&s, vec![
        case("post", submit, submit, Some(honest(&pr, &b.remote(), 10.0).await), 201).header("x-agent-key", key),
        case("get", one, &format!("/v1/benchmark/directives/{pr}"), None, 200).header("authorization", &auth),
    ]).await);
    s.stop().await;

    // The answers that carry the most, so that an empty answer cannot pass for them.
    assert_eq!(seen[6].3["verification"], "pending", "{}", seen[6].3);
    assert_eq!(seen[7].3["submissions"].as_array().map(Vec::len), Some(1), "{}", seen[7].3);
    assert!(seen[9].3["lease"].is_object(), "{}", seen[9].3);
    assert_eq!(seen[10].3["displaced_reason"], "first", "{}", seen[10].3);
    assert!(seen[11].3["submission"].is_object(), "{}", seen[11].3);
    let failures: Vec<String> = seen
        .iter()
        .filter_map(|(m, p, status, body)| violations(&doc, m, p, *status, body))
        .collect();
    assert!(failures.is_empty(), "answers the document does not describe:\n{}", failures.join("\n"));
}
on_both!(provider_answers_are_what_the_document_says);

fn obs_for(host: &str) -> Value {
    json!({"host": host, "method": "GET", "status": 200, "latency_ms": 3})
}
