//! `openapi.json` against the routes, `llms.txt`, `healthz`, CORS, JSON fallbacks and
//! hidden internals, over `oneshot`.

use crate::common;

use std::collections::BTreeSet;

use common::{call, get, get_as, TestDb};
use lowdown_server::routes::ROUTES;

async fn openapi_documents_exactly_the_routes(t: &TestDb) {
    let app = t.app();
    let doc = get(&app, "/openapi.json").await;
    assert_eq!(doc.status, 200);
    assert_eq!(doc.json["openapi"], "3.1.0");
    let mut documented = BTreeSet::new();
    for (path, ops) in doc.json["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            documented.insert((method.clone(), path.clone()));
            assert!(
                op["responses"].as_object().is_some_and(|r| !r.is_empty()),
                "{method} {path} has no responses"
            );
            assert!(op["summary"].is_string(), "{method} {path} has no summary");
        }
    }
    let routed: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    assert_eq!(documented, routed, "openapi.json and the router disagree");
    // Every $ref points at a defined schema.
    let text = doc.text.clone();
    for piece in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
        let name = &piece[..piece.find('"').unwrap()];
        assert!(
            doc.json["components"]["schemas"][name].is_object(),
            "dangling $ref {name}"
        );
    }
    // Every documented route exists (answers something other than the 404/405 fallbacks;
    // a route may still answer 404 for an id it does not know).
    for (method, path) in &routed {
        let uri = path
            .replace("{target}", "npm:x")
            .replace("{node_id}", "ld_abc");
        let r = call(&app, &method.to_uppercase(), &uri, &[], Some("{}".into())).await;
        assert!(
            r.status != 405 && !(r.status == 404 && r.text.contains("no such endpoint")),
            "{method} {uri}: {}",
            r.status
        );
    }
}
on_both!(openapi_documents_exactly_the_routes);

async fn llms_txt_and_healthz_answer(t: &TestDb) {
    let app = t.app();
    let r = get(&app, "/llms.txt").await;
    assert_eq!(r.status, 200);
    assert!(r.headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/plain"));
    for route in [
        "/api/reputation/",
        "/api/interactions",
        "/v1/telemetry/observe",
        "/v1/traces",
        "/api/compare",
        "/v0.1/servers",
    ] {
        assert!(r.text.contains(route), "llms.txt does not explain {route}");
    }
    // The field table is the core's contract: every field with its limits.
    for c in lowdown_core::contract::CONTRACTS {
        for f in c.fields {
            assert!(
                r.text.contains(&format!("  {} (", f.name)),
                "llms.txt lists no {}.{}",
                c.name,
                f.name
            );
        }
    }
    assert!(r
        .text
        .contains("target (required): string of 1 to 256 characters"));
    let h = get(&app, "/healthz").await;
    assert_eq!(h.json["ok"], true);
    let expected = if t.kind == common::Kind::Sqlite {
        "sqlite"
    } else {
        "postgres"
    };
    assert_eq!(h.json["database"], expected);
}
on_both!(llms_txt_and_healthz_answer);

async fn cors_is_open_and_fallbacks_are_json(t: &TestDb) {
    let app = t.app();
    let pre = call(
        &app,
        "OPTIONS",
        "/api/interactions",
        &[
            ("origin", "https://agent.example"),
            ("access-control-request-method", "POST"),
            (
                "access-control-request-headers",
                "content-type,x-lowdown-node-id",
            ),
        ],
        None,
    )
    .await;
    assert!(pre.status.is_success(), "{}", pre.status);
    assert_eq!(pre.headers["access-control-allow-origin"], "*");
    let r = get_as(&app, "/healthz", &[("origin", "https://agent.example")]).await;
    assert_eq!(r.headers["access-control-allow-origin"], "*");
    let r = get(&app, "/nope").await;
    assert_eq!(r.status, 404);
    assert!(r.json["error"].is_string());
    let r = call(&app, "DELETE", "/api/interactions", &[], None).await;
    assert_eq!(r.status, 405);
    assert!(r.json["error"].is_string());
}
on_both!(cors_is_open_and_fallbacks_are_json);

async fn server_errors_hide_internals(t: &TestDb) {
    let app = t.app();
    // Break the database under the running app: every query now fails inside sqlx.
    t.db.pool.close().await;
    for (method, uri, body) in [
        ("GET", "/api/reputation/npm:x", None),
        (
            "POST",
            "/api/interactions",
            Some(common::record("npm:x", "success").to_string()),
        ),
        ("GET", "/healthz", None),
    ] {
        let r = call(&app, method, uri, &[], body).await;
        assert_eq!(r.status, 500, "{uri}");
        assert_eq!(
            r.json,
            serde_json::json!({"error": "internal error", "reason": "internal"}),
            "{uri}: {}",
            r.text
        );
    }
}
on_both!(server_errors_hide_internals);

/// Every field of the interaction record has its column: the storage cannot drift from the
/// core's contract (a field added there and not stored fails here).
async fn every_record_field_is_stored(t: &TestDb) {
    let app = t.app();
    let mut record = common::record("npm:stored", "success");
    record["tools_has_more"] = serde_json::json!(true);
    let r = common::post(&app, "/api/interactions", &record).await;
    assert_eq!(r.status, 201, "{}", r.text);
    use sqlx::{Column, Row};
    t.check.roll_up().await.unwrap();
    let row = sqlx::query("SELECT * FROM interactions")
        .fetch_one(&t.check.pool)
        .await
        .unwrap();
    let columns: Vec<String> = row.columns().iter().map(|c| c.name().to_owned()).collect();
    for f in lowdown_core::contract::RECORD.fields {
        assert!(
            columns.iter().any(|c| c == f.name),
            "no column for {}",
            f.name
        );
    }
    let more: Option<i64> = row.try_get("tools_has_more").unwrap();
    assert_eq!(more, Some(1));
}
on_both!(every_record_field_is_stored);

/// Asserts that an error answer is `{"error": <text>, "reason": <snake_case>}` (plus
/// `rejected` when no item of a batch was valid).
fn assert_error_shape(what: &str, r: &common::Resp) {
    let body = r.json.as_object();
    let body =
        body.unwrap_or_else(|| panic!("{what}: {} is not a JSON object: {}", r.status, r.text));
    assert!(
        body["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{what}: no error text: {}",
        r.text
    );
    let reason = body.get("reason").and_then(|v| v.as_str()).unwrap_or("");
    assert!(
        !reason.is_empty()
            && reason
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
        "{what}: reason {reason:?} is not stable snake_case: {}",
        r.text
    );
    for key in body.keys() {
        assert!(
            ["error", "reason", "rejected"].contains(&key.as_str()),
            "{what}: unexpected key {key}: {}",
            r.text
        );
    }
}

async fn every_error_answer_has_one_shape(t: &TestDb) {
    let app = t.app();
    let mut seen = BTreeSet::new();
    let json = [("content-type", "application/json")];
    // Every route, with an empty object, a body that is not JSON, and a method it lacks;
    // then the fallbacks. Pages answer HTML and are left to the page tests.
    // OTLP's routes answer errors as OTLP/HTTP says (a `google.rpc.Status`), checked in
    // `tests/it/otlp.rs`.
    for (method, path) in ROUTES
        .iter()
        .filter(|(_, p)| !["/v1/traces", "/v1/metrics"].contains(p))
    {
        let uri = path
            .replace("{target}", "npm:x")
            .replace("{node_id}", "not%20a%20node")
            .replace("{slug}", "nope")
            .replace("{directive_id}", "bd_nope")
            .replace("{agent_id}", "ag_nope")
            .replace("{day}", "2026-13-40");
        let other = if *method == "get" { "DELETE" } else { "GET" };
        for (m, body) in [
            (method.to_uppercase(), Some("{}".to_owned())),
            (method.to_uppercase(), Some("not json".to_owned())),
            (other.to_owned(), None),
        ] {
            let r = call(&app, &m, &uri, &json, body).await;
            let is_json = r
                .headers
                .get("content-type")
                .is_some_and(|v| v.to_str().unwrap_or("").starts_with("application/json"));
            if r.status.as_u16() >= 400 && is_json {
                assert_error_shape(&format!("{m} {uri}"), &r);
                seen.insert(r.status.as_u16());
            }
        }
    }
    for (m, uri) in [("GET", "/no/such/path"), ("PUT", "/api/interactions")] {
        let r = call(&app, m, uri, &[], None).await;
        assert_error_shape(&format!("{m} {uri}"), &r);
        seen.insert(r.status.as_u16());
    }
    let invalid = call(
        &app,
        "POST",
        "/api/interactions",
        &json,
        Some("[{}]".into()),
    )
    .await;
    assert_eq!(invalid.status, 400);
    assert_error_shape("no valid record", &invalid);
    assert!(invalid.json["rejected"].is_array());
    // The refusals of the gateway's API and provider mode, and the fallbacks, are all here.
    for status in [400, 401, 404, 405] {
        assert!(seen.contains(&status), "no {status} answer seen: {seen:?}");
    }
}
on_both!(every_error_answer_has_one_shape);
