//! A `protocol` directive end to end against the real `@modelcontextprotocol/server-everything`
//! (streamable HTTP) on SQLite and PostgreSQL: posted, claimed, probed with the Scanner's
//! probe, scored by the core, submitted, checked by the server's own probe of the same
//! server, displayed; no tool definition is stored.

use crate::common;
use crate::provider_fixtures;

use common::TestDb;
use lowdown_core::benchmark::conformance;
use lowdown_server::scanner::http::probe;
use provider_fixtures::{Bench, Everything};
use serde_json::json;

async fn a_protocol_directive_against_server_everything(t: &TestDb) {
    let everything = Everything::start("streamableHttp", "listening on port").await;
    let b = Bench::start(t).await;
    let r = b
        .post_directive(
            &json!({"service_id": "svc_vendor", "kind": "protocol", "price_credits": 1,
            "spec": {"remote_url": everything.url()}}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let id = r.json["directive_id"].as_str().unwrap().to_owned();
    let p = b.provider().await;
    let lease = b.claim(&p, &id).await;
    assert_eq!(lease.status, 200);
    let url = lease.json["directive"]["spec"]["remote_url"]
        .as_str()
        .unwrap()
        .to_owned();

    let net = crate::scanner_fixtures::loopback_net();
    let result = probe(&net, &url, false).await;
    let c = conformance::score(&result);
    assert_eq!(result.reached_level, 2, "{result:?}");
    let d = &c.dimensions;
    assert_eq!(
        (d["reachability"], d["tool_discovery"], d["tool_documentation"], d["schema_quality"], d["agent_guidance"]),
        (10.0, 10.0, 10.0, 7.0, 10.0),
        "server-everything documents its tools and gives instructions, but describes no property: {c:?}"
    );
    assert!(c
        .findings
        .iter()
        .any(|f| f.kind == "undescribed_properties"));

    let body = json!({"directive_id": id, "dimensions": c.dimensions, "overall_score": c.overall_score,
        "test_results": c.test_results, "observed": c.observed, "runner_id": "lowdown-test", "execution_time_ms": 250});
    let r = b.submit(&p, body).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.json["verification"], "probe");
    assert_eq!(r.json["recorded_score"].as_f64(), Some(c.overall_score));
    let s = b.rig.service("vendor").await;
    assert_eq!(
        s["benchmark"]["protocol"]["value"].as_f64(),
        Some(c.overall_score)
    );

    // What was stored: counts and kinds, never a tool's text.
    let rows: Vec<(String, String)> = t
        .rows(
            "SELECT dimensions, test_results || COALESCE(observed, '') FROM benchmark_submissions",
        )
        .await;
    for (dimensions, rest) in rows {
        let text = format!("{dimensions}{rest}");
        for canary in ["Echoes back", "get-sum", "inputSchema", "Everything Server"] {
            assert!(!text.contains(canary), "{canary} stored: {text}");
        }
    }
}
on_both!(a_protocol_directive_against_server_everything);
