//! Provider mode under test: the gateway rig (catalog, clock, recording upstream) with an
//! operator token, the Scanner's fixture MCP servers on loopback as `protocol` remotes,
//! providers registered as real agents, and submissions as a provider's runner would send
//! them: honest ones from a real probe of the remote, forged ones typed in.
#![allow(dead_code)] // each test file takes a different part

pub use crate::scanner_fixtures::everything::Everything;
pub use crate::scanner_fixtures::mcp;

use std::time::Duration;

use axum::Router;
use lowdown_core::benchmark::{conformance, overall, Kind};
use lowdown_server::db::agents::{register, NewAgent};
use serde_json::{json, Value};

use crate::common::prowl::{Rig, CATALOG};
use crate::common::{call, get_as, post_as, Resp, TestDb};

/// The operator's token in these tests.
pub const TOKEN: &str = "operator-token-0123456789abcdef";
/// Thirty minutes, the lease.
pub const LEASE_MS: i64 = 30 * 60_000;

/// The rig with `LOWDOWN_ADMIN_TOKEN` set, and fixture MCP servers (requests logged).
pub struct Bench {
    pub rig: Rig,
    pub app: Router,
    pub mcp: mcp::Mcp,
}

/// A registered provider: its agent key and ids.
#[derive(Debug, Clone)]
pub struct Pv {
    pub key: String,
    pub agent_id: String,
    pub provider_id: String,
}

impl Bench {
    pub async fn start(t: &TestDb) -> Bench {
        let rig = Rig::start(t, CATALOG, Duration::from_secs(20)).await;
        let app = lowdown_server::app(rig.state.clone().with_admin_token(Some(TOKEN.into())));
        let mcp = mcp::Mcp::start(true).await;
        Bench { rig, app, mcp }
    }

    /// The `ok` fixture: two tools, neither documented, one undescribed property each,
    /// a name and a version but no instructions.
    pub fn remote(&self) -> String {
        self.mcp.url("ok", "")
    }

    /// How many times a fixture was sent `initialize` (each probe sends one).
    pub fn initializes(&self) -> usize {
        self.mcp
            .hits()
            .iter()
            .filter(|h| h.method == "initialize")
            .count()
    }

    /// Moves the server's clock.
    pub fn shift(&self, ms: i64) {
        self.rig.state.clock.shift(ms);
    }

    /// The operator posts `body`.
    pub async fn post_directive(&self, body: &Value) -> Resp {
        let auth = format!("Bearer {TOKEN}");
        post_as(
            &self.app,
            "/v1/benchmark/directives",
            &[("authorization", &auth)],
            body,
        )
        .await
    }

    /// The operator reads a directive.
    pub async fn directive(&self, id: &str) -> Value {
        let auth = format!("Bearer {TOKEN}");
        let r = get_as(
            &self.app,
            &format!("/v1/benchmark/directives/{id}"),
            &[("authorization", &auth)],
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.json
    }

    /// Posts a `protocol` directive for svc_vendor against [`Bench::remote`]; its id.
    pub async fn protocol(&self, price: i64, critical: bool) -> String {
        let r = self
            .post_directive(
                &json!({"service_id": "svc_vendor", "kind": "protocol", "price_credits": price,
                "critical": critical, "spec": {"remote_url": self.remote()}}),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        r.json["directive_id"].as_str().unwrap().to_owned()
    }

    /// Posts an `agent` directive for `service_id`; its id.
    pub async fn agent(&self, service_id: &str, price: i64) -> String {
        let r = self
            .post_directive(
                &json!({"service_id": service_id, "kind": "agent", "price_credits": price,
                "spec": {"prompt": "Which tools does the server offer?",
                    "mcp_server": {"url": "https://everything.vendor-fixture.com/mcp"},
                    "expect": {"contains": ["echo", "get-sum"]}}}),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        r.json["directive_id"].as_str().unwrap().to_owned()
    }

    /// A new agent (straight into storage: no registration quota) made a provider.
    pub async fn provider(&self) -> Pv {
        let agent = NewAgent {
            name: "runner".into(),
            model_provider: "acme".into(),
            model_id: "m-1".into(),
            environment: "test".into(),
            public_key: None,
        };
        let now = self.rig.state.now();
        let a = register(&self.rig.state.db, agent, now, None)
            .await
            .unwrap();
        let r = self
            .as_(&a.agent_key, "POST", "/v1/provider/register", None)
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        Pv {
            key: a.agent_key,
            agent_id: a.agent_id,
            provider_id: r.json["provider_id"].as_str().unwrap().to_owned(),
        }
    }

    /// A request with `X-Agent-Key: key`.
    pub async fn as_(&self, key: &str, method: &str, path: &str, body: Option<Value>) -> Resp {
        call(
            &self.app,
            method,
            path,
            &[("x-agent-key", key)],
            body.map(|b| b.to_string()),
        )
        .await
    }

    pub async fn claim(&self, p: &Pv, id: &str) -> Resp {
        self.as_(
            &p.key,
            "POST",
            &format!("/v1/provider/directives/{id}/claim"),
            None,
        )
        .await
    }

    pub async fn release(&self, p: &Pv, id: &str) -> Resp {
        self.as_(
            &p.key,
            "POST",
            &format!("/v1/provider/directives/{id}/release"),
            None,
        )
        .await
    }

    pub async fn submit(&self, p: &Pv, body: Value) -> Resp {
        self.as_(&p.key, "POST", "/v1/provider/submit", Some(body))
            .await
    }

    /// The ids a provider sees listed.
    pub async fn listed(&self, p: &Pv) -> (Vec<String>, Value) {
        let r = self
            .as_(&p.key, "GET", "/v1/provider/directives", None)
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        let ids = r.json["directives"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["directive_id"].as_str().unwrap().to_owned())
            .collect();
        (ids, r.json)
    }
}

/// A `protocol` submission typed in, never probed: every dimension `each` (overall = 10 ×
/// each), nine tools with an all-zero schema hash.
pub fn uniform(id: &str, each: f64) -> Value {
    json!({"directive_id": id, "overall_score": 10.0 * each, "runner_id": "test-runner/1", "execution_time_ms": 420,
        "dimensions": {"reachability": each, "tool_discovery": each, "tool_documentation": each,
            "schema_quality": each, "latency": each, "agent_guidance": each},
        "observed": {"reached_level": 2, "tool_count": 9, "schema_hash": "0".repeat(64)},
        "test_results": [{"test_case_id": "initialize", "passed": each > 0.0, "actual_status": 200, "latency_ms": 35.5, "error": null}]})
}

/// The submission an honest provider sends for `url`: the Scanner's probe of it, scored by
/// the core, with `latency` (0-10) as measured from the provider's vantage.
pub async fn honest(id: &str, url: &str, latency: f64) -> Value {
    let net = crate::scanner_fixtures::loopback_net();
    let result = lowdown_server::scanner::http::probe(&net, url, false).await;
    let c = conformance::score(&result);
    let mut dims = c.dimensions.clone();
    dims.insert("latency".into(), latency);
    json!({"directive_id": id, "dimensions": dims, "overall_score": overall(Kind::Protocol, &dims),
        "test_results": c.test_results, "observed": c.observed, "runner_id": "test-runner/1",
        "execution_time_ms": 250})
}

/// An `agent` submission: `found` of the two expected strings were in the answer.
pub fn agent_result(id: &str, found: usize) -> Value {
    let expectations = 5.0 * found as f64;
    json!({"directive_id": id, "dimensions": {"expectations": expectations}, "overall_score": 10.0 * expectations,
        "runner_id": "test-runner/1", "execution_time_ms": 4000,
        "test_results": (0..2).map(|i| json!({"test_case_id": format!("contains[{i}]"), "passed": i < found,
            "latency_ms": 4000, "error": if i < found { Value::Null } else { json!("not_in_answer") }})).collect::<Vec<_>>()})
}
