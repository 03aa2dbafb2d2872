//! `GET /api/reputation/{target}`, `GET /api/compare` and `GET /api/node/{id}` over
//! `oneshot`, on SQLite and PostgreSQL.

use crate::common;

use common::{call, get, get_as, post, record, TestDb};
use serde_json::{json, Value};

async fn seed(app: &axum::Router, records: Vec<Value>) {
    let r = post(app, "/api/interactions", &Value::Array(records)).await;
    assert_eq!(r.status, 201, "{}", r.text);
}

/// `source` is the answer's last field: the text after `,"source":` is exactly that block.
fn assert_source_last(r: &common::Resp) {
    let at = r.text.rfind(",\"source\":").expect("a source block") + ",\"source\":".len();
    let tail: Value = serde_json::from_str(&r.text[at..r.text.len() - 1])
        .unwrap_or_else(|e| panic!("source is not the last field ({e}): {}", r.text));
    assert_eq!(tail, r.json["source"]);
    let order: Vec<usize> = ["\"dataset\"", "\"license\"", "\"retrieved_at\"", "\"cite\""]
        .iter()
        .map(|k| r.text[at..].find(k).expect(k))
        .collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "source{{dataset, license, retrieved_at, cite}}: {}",
        &r.text[at..]
    );
}

fn rec(target: &str, task: &str, outcome: &str, extra: Value) -> Value {
    let mut r = record(target, outcome);
    r["task_type"] = json!(task);
    if let Value::Object(m) = extra {
        for (k, v) in m {
            r[k] = v;
        }
    }
    r
}

async fn names_resolve_exactly_with_raw_or_encoded_slashes(t: &TestDb) {
    let app = t.app();
    seed(
        &app,
        vec![
            record("mcp:io.github.user/server", "success"),
            record("npm:@scope/pkg", "failure"),
        ],
    )
    .await;
    for uri in [
        "/api/reputation/mcp:io.github.user/server",
        "/api/reputation/mcp:io.github.user%2Fserver",
    ] {
        let r = get(&app, uri).await;
        assert_eq!(r.status, 200, "{uri}");
        assert_eq!(
            r.json["resolved_target"], "mcp:io.github.user/server",
            "{uri}"
        );
        assert_eq!(r.json["interactions"], 1);
    }
    let r = get(&app, "/api/reputation/npm:@scope%2Fpkg").await;
    assert_eq!(r.json["resolved_target"], "npm:@scope/pkg");
    assert_eq!(r.json["success_rate"], 0.0);
    assert_source_last(&r);
    assert_eq!(r.json["source"]["dataset"], "Lowdown records: lowdown-test");
    assert_eq!(r.json["source"]["license"], "CC BY 4.0");
    let at = r.json["source"]["retrieved_at"].as_str().unwrap();
    assert!(at.ends_with('Z'));
    assert_eq!(
        r.json["source"]["cite"],
        format!("Lowdown records: lowdown-test, npm:@scope/pkg, retrieved {at}. CC BY 4.0, https://creativecommons.org/licenses/by/4.0/")
    );
    assert_eq!(
        r.json["message"],
        "npm:@scope/pkg: 1 organic tool call rated, 0.0% succeeded."
    );
}
on_both!(names_resolve_exactly_with_raw_or_encoded_slashes);

async fn short_names_resolve_or_list_candidates(t: &TestDb) {
    let app = t.app();
    seed(
        &app,
        vec![
            record("npm:@modelcontextprotocol/server-brave-search", "success"),
            record("npm:fetch", "success"),
            record("pypi:fetch", "failure"),
        ],
    )
    .await;
    let r = get(&app, "/api/reputation/server-brave-search").await;
    assert_eq!(
        r.json["resolved_target"],
        "npm:@modelcontextprotocol/server-brave-search"
    );
    let r = get(&app, "/api/reputation/brave").await;
    assert_eq!(
        r.json["resolved_target"], "npm:@modelcontextprotocol/server-brave-search",
        "unique substring resolves"
    );
    let r = get(&app, "/api/reputation/fetch").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json["candidates"], json!(["npm:fetch", "pypi:fetch"]));
    assert!(
        r.json.get("success_rate").is_none(),
        "candidates carry no numbers"
    );
    let r = get(&app, "/api/reputation/never-seen").await;
    assert_eq!(r.json["resolved_target"], Value::Null);
    assert_eq!(r.json["interactions"], 0);
    assert_eq!(r.json["confidence"], "none");
    assert_eq!(
        r.json["message"],
        "never-seen: no interactions recorded yet."
    );
}
on_both!(short_names_resolve_or_list_candidates);

async fn like_wildcards_and_sql_in_targets_are_literal(t: &TestDb) {
    let app = t.app();
    seed(
        &app,
        vec![
            record("npm:alpha", "success"),
            record("npm:beta", "success"),
            record("npm:100%_real", "failure"),
        ],
    )
    .await;
    // `%` and `_` match only targets that contain them literally, never everything.
    for q in ["%25", "_", "%25_"] {
        let r = get(&app, &format!("/api/reputation/{q}")).await;
        assert_eq!(r.status, 200, "{q}: {}", r.text);
        assert_eq!(
            r.json["resolved_target"], "npm:100%_real",
            "{q} was a wildcard: {}",
            r.text
        );
    }
    for q in [
        "a%25",
        "b_ta",
        "%25%25",
        "'%20OR%201=1%20--",
        "%5C",
        "alpha'--",
    ] {
        let r = get(&app, &format!("/api/reputation/{q}")).await;
        assert_eq!(r.status, 200, "{q}: {}", r.text);
        assert!(
            r.json.get("candidates").is_none(),
            "{q} matched as a wildcard: {}",
            r.text
        );
        assert_eq!(r.json["resolved_target"], Value::Null, "{q}");
        assert_eq!(r.json["interactions"], 0, "{q}");
    }
    assert_eq!(t.count("interactions").await, 3, "nothing was dropped");
}
on_both!(like_wildcards_and_sql_in_targets_are_literal);

async fn sources_and_classes_are_reported_apart(t: &TestDb) {
    let app = t.app();
    let target = "npm:mixed";
    let mut records = vec![];
    for _ in 0..9 {
        records.push(rec(target, "search", "success", json!({})));
    }
    records.push(rec(
        target,
        "search",
        "failure",
        json!({"failure_type": "timeout", "error_layer": "server"}),
    ));
    records.push(rec(
        target,
        "search",
        "failure",
        json!({"failure_type": "invalid_arguments", "error_layer": "request"}),
    ));
    records.push(rec(
        target,
        "initialize",
        "success",
        json!({"request_kind": "protocol"}),
    ));
    records.push(rec(
        target,
        "search",
        "failure",
        json!({"source": "synthetic"}),
    ));
    records.push(rec(
        target,
        "search",
        "success",
        json!({"source": "seeded"}),
    ));
    seed(&app, records).await;
    let r = get(&app, "/api/reputation/npm:mixed").await;
    assert_eq!(
        r.json["rated_interactions"], 10,
        "organic success + failure only"
    );
    assert_eq!(r.json["success_rate"], 0.9);
    assert_eq!(r.json["rejected_requests"], 1);
    assert_eq!(r.json["protocol_requests"], 1);
    assert_eq!(
        r.json["by_source"],
        json!({"organic": 11, "seeded": 1, "synthetic": 1})
    );
    assert_eq!(r.json["interactions"], 13);
    // Ten rated, but sent with no address (oneshot): no network is known, so nothing
    // shows the records are independent (confidence over real sockets: forgery.rs).
    assert_eq!(r.json["networks"], 0);
    assert_eq!(r.json["confidence"], "low");
}
on_both!(sources_and_classes_are_reported_apart);

async fn contributors_get_detail_and_task_type_narrows(t: &TestDb) {
    let app = t.app();
    let node = json!({"node_id": "ld_0123456789ab", "server_version": "1.2.0"});
    seed(
        &app,
        vec![
            rec("npm:tools", "search", "success", node.clone()),
            rec("npm:tools", "search", "failure", json!({"failure_type": "timeout", "error_layer": "server", "schema_hash": "a".repeat(64)})),
            rec("npm:tools", "fetch", "success", json!({})),
        ],
    )
    .await;
    let plain = get(&app, "/api/reputation/npm:tools").await;
    assert!(plain.json.get("task_breakdown").is_none());
    let stranger = get_as(
        &app,
        "/api/reputation/npm:tools",
        &[("x-lowdown-node-id", "ld_neversent")],
    )
    .await;
    assert_eq!(stranger.status, 200);
    assert!(
        stranger.json.get("task_breakdown").is_none(),
        "a node that never contributed gets the basic answer"
    );
    let bad = get_as(
        &app,
        "/api/reputation/npm:tools",
        &[("x-lowdown-node-id", "node-1")],
    )
    .await;
    assert_eq!(bad.status, 400);
    assert!(bad.json["error"]
        .as_str()
        .unwrap()
        .contains("x-lowdown-node-id"));

    let hdr = [("x-lowdown-node-id", "ld_0123456789ab")];
    let r = call(&app, "GET", "/api/reputation/npm:tools", &hdr, None).await;
    let tb = &r.json["task_breakdown"];
    assert_eq!(tb["search"]["success"], 1);
    assert_eq!(tb["search"]["failure"], 1);
    assert_eq!(tb["search"]["failure_types"], json!({"timeout": 1}));
    assert_eq!(tb["fetch"]["success"], 1);
    let trends = r.json["recent_trends"].as_array().unwrap();
    assert_eq!(trends.len(), 1);
    assert_eq!(trends[0]["count"], 3);
    assert_eq!(trends[0]["success_rate"], 0.667);
    assert_eq!(r.json["by_server_version"]["1.2.0"]["interactions"], 1);
    assert_eq!(r.json["by_server_version"]["(none)"]["interactions"], 2);
    assert_eq!(
        r.json["by_schema_hash"]["a".repeat(64)]["success_rate"],
        0.0
    );

    let r = get_as(&app, "/api/reputation/npm:tools?task_type=search", &hdr).await;
    assert_eq!(r.json["task_type"], "search");
    assert_eq!(r.json["interactions"], 2);
    assert_eq!(r.json["success_rate"], 0.5);
    assert!(r.json["task_breakdown"].get("fetch").is_none());
    assert_eq!(r.json["recent_trends"][0]["count"], 2);

    let long = format!("/api/reputation/npm:tools?task_type={}", "t".repeat(129));
    let r = get(&app, &long).await;
    assert_eq!(r.status, 400);
    assert!(r.json["error"].as_str().unwrap().starts_with("task_type"));
    let r = get(&app, &format!("/api/reputation/{}", "x".repeat(257))).await;
    assert_eq!(r.status, 400);
    assert!(r.json["error"].as_str().unwrap().starts_with("target"));
    let r = get(&app, "/api/reputation/a%00b").await;
    assert_eq!(r.status, 400);
}
on_both!(contributors_get_detail_and_task_type_narrows);

async fn compare_ranks_and_recommends_only_with_evidence(t: &TestDb) {
    let app = t.app();
    let mut records = vec![];
    for i in 0..6 {
        records.push(rec(
            "npm:good",
            "search",
            if i < 5 { "success" } else { "failure" },
            json!({}),
        ));
    }
    records.push(rec("npm:thin", "search", "success", json!({})));
    seed(&app, records).await;
    let r = get(&app, "/api/compare?targets=npm:thin,npm:good,npm:unknown").await;
    assert_eq!(r.status, 200, "{}", r.text);
    let ranked: Vec<&str> = r.json["ranked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["target"].as_str().unwrap())
        .collect();
    assert_eq!(
        ranked,
        ["npm:thin", "npm:good", "npm:unknown"],
        "by success_rate, nulls last"
    );
    assert_eq!(
        r.json["recommendation"]["target"],
        Value::Null,
        "the leader has 1 rated interaction"
    );
    assert_eq!(
        r.json["recommendation"]["reason"],
        "Insufficient interaction history for a reliable comparison."
    );

    let r = get(&app, "/api/compare?targets=npm:good,npm:unknown").await;
    assert_eq!(r.json["recommendation"]["target"], "npm:good");

    for (q, needle) in [
        ("", "targets"),
        ("?targets=npm:good", "2 to 5"),
        ("?targets=a,b,c,d,e,f", "2 to 5"),
        ("?targets=npm:good,npm:good", "more than once"),
        ("?targets=npm:good,", "targets"),
    ] {
        let r = get(&app, &format!("/api/compare{q}")).await;
        assert_eq!(r.status, 400, "{q}: {}", r.text);
        assert!(
            r.json["error"].as_str().unwrap().contains(needle),
            "{q}: {}",
            r.text
        );
    }
}
on_both!(compare_ranks_and_recommends_only_with_evidence);

async fn node_stats_count_distinct_nodes_and_rank(t: &TestDb) {
    let app = t.app();
    let unknown = get(&app, "/api/node/ld_nobody").await;
    assert_eq!(unknown.status, 200);
    assert_eq!(unknown.json["status"], "unknown");
    assert_eq!(unknown.json["contribution"], Value::Null);
    assert_eq!(unknown.json["network"]["total_nodes"], 0);

    let by = |node: &str, target: &str| rec(target, "search", "success", json!({"node_id": node}));
    seed(
        &app,
        vec![
            by("ld_big", "npm:a"),
            by("ld_big", "npm:b"),
            by("ld_big", "npm:b"),
            by("ld_small", "npm:a"),
        ],
    )
    .await;
    seed(
        &app,
        vec![by("ld_big", "npm:c"), record("npm:a", "success")],
    )
    .await;
    let r = get(&app, "/api/node/ld_big").await;
    assert_eq!(r.json["status"], "active");
    assert_eq!(r.json["contribution"]["interactions"], 4);
    assert_eq!(r.json["contribution"]["targets_observed"], 3);
    assert_eq!(r.json["contribution"]["active_days"], 1);
    assert_eq!(
        r.json["network"]["total_nodes"], 2,
        "distinct nodes, not records"
    );
    assert_eq!(r.json["network"]["total_interactions"], 6);
    assert_eq!(r.json["rank"]["percentile"], 100.0);
    let r = get(&app, "/api/node/ld_small").await;
    assert_eq!(r.json["rank"]["percentile"], 50.0);
    for bad in [
        "node-1",
        "ld_",
        "ld_has%20space",
        &format!("ld_{}", "a".repeat(65)),
    ] {
        let r = get(&app, &format!("/api/node/{bad}")).await;
        assert_eq!(r.status, 400, "{bad}");
        assert!(
            r.json["error"].as_str().unwrap().starts_with("node_id"),
            "{}",
            r.text
        );
    }
    common::assert_rollups_match_raw(t).await;
}
on_both!(node_stats_count_distinct_nodes_and_rank);

async fn namespaced_names_are_never_substituted(t: &TestDb) {
    let app = t.app();
    seed(
        &app,
        vec![
            record("npm:foo-bar", "success"),
            record("pypi:mcp-server-fetch", "success"),
            record("npm:@Acme/Tool", "failure"),
            record("mcp:io.github.user/server", "success"),
        ],
    )
    .await;
    // An unknown package with one similar name: listed, never answered for.
    let r = get(&app, "/api/reputation/npm:foo").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json["resolved_target"], Value::Null);
    assert_eq!(r.json["candidates"], json!(["npm:foo-bar"]), "{}", r.text);
    assert!(
        r.json.get("success_rate").is_none(),
        "no numbers of another package"
    );
    assert_source_last(&r);
    // PEP 503 and npm lower case find the recorded name.
    for q in [
        "pypi:Mcp_Server_Fetch",
        "pypi:mcp.server..fetch",
        "pypi:MCP-SERVER-FETCH",
    ] {
        let r = get(&app, &format!("/api/reputation/{q}")).await;
        assert_eq!(
            r.json["resolved_target"], "pypi:mcp-server-fetch",
            "{q}: {}",
            r.text
        );
        assert_eq!(r.json["interactions"], 1);
    }
    let r = get(&app, "/api/reputation/npm:@acme%2Ftool").await;
    assert_eq!(r.json["resolved_target"], "npm:@Acme/Tool");
    // Other namespaces and unknown names without a similar one: nothing, not a neighbour.
    for q in [
        "mcp:io.github.user/serve",
        "mcp:io.github.User/server",
        "pypi:foo-bar",
        "npm:zzz",
        "url:foo-bar",
    ] {
        let r = get(&app, &format!("/api/reputation/{q}")).await;
        assert_eq!(r.status, 200, "{q}");
        assert_ne!(r.json["resolved_target"], "npm:foo-bar", "{q}");
        assert_ne!(
            r.json["resolved_target"], "mcp:io.github.user/server",
            "{q}"
        );
    }
    let r = get(&app, "/api/reputation/mcp:io.github.user/serve").await;
    assert_eq!(r.json["candidates"], json!(["mcp:io.github.user/server"]));
    let r = get(&app, "/api/reputation/npm:zzz").await;
    assert_eq!(r.json["interactions"], 0);
    assert_eq!(r.json["message"], "npm:zzz: no interactions recorded yet.");
    // LIKE wildcards in a namespaced name are literal.
    let r = get(&app, "/api/reputation/npm:f%25").await;
    assert!(r.json.get("candidates").is_none(), "{}", r.text);
    let r = get(&app, "/api/reputation/npm:foo_bar").await;
    assert!(
        r.json.get("candidates").is_none(),
        "_ is no wildcard: {}",
        r.text
    );
    // A short name still resolves when exactly one target matches it.
    let r = get(&app, "/api/reputation/foo-bar").await;
    assert_eq!(r.json["resolved_target"], "npm:foo-bar");
}
on_both!(namespaced_names_are_never_substituted);

async fn answers_have_no_zero_rows_and_one_population_per_figure(t: &TestDb) {
    let app = t.app();
    let node = json!({"node_id": "ld_0123456789ab"});
    let with = |task: &str, outcome: &str, extra: Value| {
        let mut r = rec("npm:rows", task, outcome, node.clone());
        for (k, v) in extra.as_object().unwrap() {
            r[k] = v.clone();
        }
        r
    };
    seed(
        &app,
        vec![
            with("initialize", "success", json!({"request_kind": "protocol"})),
            with("tools/list", "success", json!({"request_kind": "protocol", "schema_hash": "b".repeat(64)})),
            with("search", "success", json!({"latency_ms": 40, "server_version": "2.0.0"})),
            with("search", "success", json!({"latency_ms": 60, "server_version": "2.0.0"})),
            with("search", "failure", json!({"failure_type": "timeout", "error_layer": "server", "latency_ms": 5000})),
            with("search", "failure", json!({"error_layer": "tool", "latency_ms": 120})),
            with("search", "failure", json!({"failure_type": "invalid_arguments", "error_layer": "request", "latency_ms": 2})),
            with("search", "cancelled", json!({"latency_ms": 90000})),
            with("search", "success", json!({"source": "seeded", "latency_ms": 1, "server_version": "9.9.9"})),
            with("seeded_only", "success", json!({"source": "synthetic"})),
        ],
    )
    .await;
    let hdr = [("x-lowdown-node-id", "ld_0123456789ab")];
    let r = call(&app, "GET", "/api/reputation/npm:rows", &hdr, None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let j = &r.json;
    assert_eq!(j["rated_interactions"], 4);
    assert_eq!(j["success_rate"], 0.5);
    assert_eq!(
        j["by_source"],
        json!({"organic": 6, "seeded": 1, "synthetic": 1})
    );
    // Rated organic failures by type; the rejection is not a failure; sums to the failures.
    assert_eq!(
        j["failure_breakdown"],
        json!({"timeout": 1, "unspecified": 1})
    );
    // Latency of the four rated organic calls (40, 60, 5000, 120 ms): not the rejection,
    // the cancellation or the seeded call.
    assert_eq!(
        j["latency_ms"],
        json!({"avg": 1305.0, "p50": 75.0, "p95": 5000.0})
    );
    let tasks: Vec<&String> = j["task_breakdown"].as_object().unwrap().keys().collect();
    assert_eq!(tasks, ["search"], "no protocol-only or non-organic task");
    let search = &j["task_breakdown"]["search"];
    assert_eq!(
        search["failure_types"],
        json!({"timeout": 1, "unspecified": 1})
    );
    assert_eq!(
        (
            search["success"].as_u64(),
            search["failure"].as_u64(),
            search["rejected"].as_u64()
        ),
        (Some(2), Some(2), Some(1))
    );
    assert_eq!(search["interactions"], 6, "organic tool interactions only");
    assert_eq!(search["success_rate"], 0.5);
    let trends = j["recent_trends"].as_array().unwrap();
    assert_eq!(trends.len(), 1);
    assert_eq!(trends[0]["count"], 6, "organic, like its success_rate");
    assert_eq!(
        j["by_server_version"],
        json!({
            "2.0.0": {"interactions": 2, "rated_interactions": 2, "success_rate": 1.0},
            "(none)": {"interactions": 4, "rated_interactions": 2, "success_rate": 0.0}
        }),
        "no row for the seeded-only version"
    );
    assert_eq!(
        j["by_schema_hash"],
        json!({"(none)": {"interactions": 6, "rated_interactions": 4, "success_rate": 0.5}}),
        "no row for the hash seen only on protocol traffic"
    );
    assert_source_last(&r);
    let r = get_as(&app, "/api/reputation/npm:rows?task_type=initialize", &hdr).await;
    assert_eq!(r.json["task_breakdown"], json!({}), "{}", r.text);
    assert_eq!(r.json["recent_trends"], json!([]));
    assert_eq!(r.json["by_server_version"], json!({}));
    assert_eq!(r.json["latency_ms"], Value::Null);
    assert_eq!(r.json["failure_breakdown"], json!({}));
    assert_eq!(r.json["protocol_requests"], 1);
}
on_both!(answers_have_no_zero_rows_and_one_population_per_figure);
