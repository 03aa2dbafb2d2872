//! A directive never runs local code on a provider's machine (SPEC §11), on SQLite and
//! PostgreSQL: an `agent` directive naming a program (`{command, args}`, e.g. `npx -y -c
//! <shell>`) or a non-https MCP server is refused by name on create, and a row stored
//! before that rule (or written straight into the database) is never listed, leased or
//! scored, while the operator sees why.

use crate::common;
use crate::provider_fixtures;

use common::TestDb;
use provider_fixtures::Bench;
use serde_json::{json, Value};

fn agent_body(server: Value, critical: bool) -> Value {
    json!({"service_id": "svc_vendor", "kind": "agent", "price_credits": 5, "critical": critical,
        "spec": {"prompt": "Which tools does the server offer?", "mcp_server": server,
            "expect": {"contains": ["echo"]}}})
}

async fn a_program_or_a_plain_url_is_refused_on_create_by_name(t: &TestDb) {
    let b = Bench::start(t).await;
    for (server, status, reason, field) in [
        (
            json!({"command": "npx", "args": ["-y", "-c", "touch /tmp/lowdown-canary"]}),
            422,
            "local_command_refused",
            "spec.mcp_server.command",
        ),
        (
            json!({"command": "uvx", "args": ["evil-package"]}),
            422,
            "local_command_refused",
            "spec.mcp_server.command",
        ),
        (
            json!({"command": "/bin/sh"}),
            422,
            "local_command_refused",
            "spec.mcp_server.command",
        ),
        (
            json!({"args": ["-c", "id"]}),
            422,
            "local_command_refused",
            "spec.mcp_server.args",
        ),
        (
            json!({"url": "https://mcp.vendor-fixture.com/mcp", "command": "npx"}),
            422,
            "local_command_refused",
            "spec.mcp_server.command",
        ),
        (
            json!({"url": "http://mcp.vendor-fixture.com/mcp"}),
            422,
            "mcp_server_not_https",
            "spec.mcp_server.url",
        ),
        (
            json!({"url": "file:///etc/passwd"}),
            422,
            "mcp_server_not_https",
            "spec.mcp_server.url",
        ),
        // https, but the Scanner's SSRF rules refuse the host (a fault of the value, 400).
        (
            json!({"url": "https://10.0.0.7/mcp"}),
            400,
            "bad_request",
            "spec.mcp_server.url",
        ),
        (
            json!({"url": "https://169.254.169.254/latest/meta-data"}),
            400,
            "bad_request",
            "spec.mcp_server.url",
        ),
    ] {
        let r = b.post_directive(&agent_body(server.clone(), false)).await;
        assert_eq!(r.refusal(), (status, Some(reason)), "{server}: {}", r.text);
        let error = r.json["error"].as_str().unwrap();
        assert!(
            error.starts_with(&format!("{field}: ")),
            "{server}: {error}"
        );
    }
    assert_eq!(
        t.count("benchmark_directives").await,
        0,
        "nothing refused was stored"
    );
    let ok = b
        .post_directive(&agent_body(
            json!({"url": "https://everything.vendor-fixture.com/mcp"}),
            false,
        ))
        .await;
    assert_eq!(ok.status, 201, "{}", ok.text);
    assert_eq!(
        ok.json["spec"]["mcp_server"],
        json!({"url": "https://everything.vendor-fixture.com/mcp"})
    );
}
on_both!(a_program_or_a_plain_url_is_refused_on_create_by_name);

/// Writes a directive row as an old server (or anyone with the database) would have.
async fn store_raw(t: &TestDb, id: &str, spec: Value, critical: bool) {
    sqlx::query(
        "INSERT INTO benchmark_directives (directive_id, seq, service_id, kind, spec, price_credits, critical, created_at, status) \
         SELECT $1, COALESCE(MAX(seq), 0) + 1, 'svc_vendor', 'agent', $2, 9, $3, 0, 'open' FROM benchmark_directives",
    )
    .bind(id)
    .bind(spec.to_string())
    .bind(i64::from(critical))
    .execute(&t.db.pool)
    .await
    .unwrap();
}

async fn a_stored_hostile_directive_is_never_listed_leased_or_scored(t: &TestDb) {
    let b = Bench::start(t).await;
    // A protocol directive: an agent one is listed only to a caller of a known network.
    let good = b.protocol(2, false).await;
    let hostile = [
        (
            "bd_00000000000000a1",
            json!({"command": "npx", "args": ["-y", "-c", "touch /tmp/lowdown-canary"]}),
            "local_command_refused",
        ),
        (
            "bd_00000000000000a2",
            json!({"command": "uvx", "args": ["evil-package"]}),
            "local_command_refused",
        ),
        (
            "bd_00000000000000a3",
            json!({"url": "http://mcp.vendor-fixture.com/mcp"}),
            "mcp_server_not_https",
        ),
    ];
    for (id, server, _) in &hostile {
        let spec = agent_body(server.clone(), true)["spec"].clone();
        // Critical and older than the good one: it would be listed first.
        store_raw(t, id, spec, true).await;
    }
    let p = b.provider().await;
    let (ids, _) = b.listed(&p).await;
    assert_eq!(
        ids,
        vec![good.clone()],
        "only the directive today's rules accept is listed"
    );
    for (id, _, reason) in &hostile {
        let r = b.claim(&p, id).await;
        assert_eq!(r.refusal(), (422, Some(*reason)), "{}", r.text);
        assert!(
            r.json["error"]
                .as_str()
                .unwrap()
                .starts_with("spec.mcp_server."),
            "{}",
            r.text
        );
        let r = b
            .submit(
                &p,
                json!({"directive_id": id, "dimensions": {"expectations": 10}, "overall_score": 100,
                "test_results": [], "runner_id": "old-hook/1", "execution_time_ms": 5}),
            )
            .await;
        assert_eq!(r.refusal(), (422, Some(*reason)), "{}", r.text);
        let seen = b.directive(id).await;
        assert_eq!(seen["status"], "refused", "{seen}");
        assert_eq!(seen["refused"]["reason"], *reason, "{seen}");
        assert_eq!(seen["lease"], Value::Null);
    }
    assert_eq!(
        t.count("benchmark_claims").await,
        0,
        "no lease was ever taken"
    );
    assert_eq!(t.count("benchmark_submissions").await, 0);
    assert_eq!(b.directive(&good).await["refused"], Value::Null);
}
on_both!(a_stored_hostile_directive_is_never_listed_leased_or_scored);
