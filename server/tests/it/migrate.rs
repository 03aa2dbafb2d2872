//! Upgrading a database written by the previous version (migrations 0001-0002) to 0003, on
//! SQLite and PostgreSQL: lookup forms and latency rollups filled for the rows already
//! there, old unkeyed rate-limit rows dropped, and every answer right afterwards.

use crate::common;

use common::{empty_database, get, Kind, TestDb};
use serde_json::json;

/// The database as the previous version left it: its two migrations, then rows written
/// the way it wrote them (targets without a lookup form, no latency rollup).
async fn previous_version(url: &str) {
    let migrations = lowdown_server::db::migrations_through(true, 2);
    let pool = common::migrated_as_before(url, &migrations).await;
    let rows = [
        (
            "r1",
            "pypi:Mcp_Server_Fetch",
            "fetch",
            "success",
            None,
            40.0,
        ),
        (
            "r2",
            "pypi:Mcp_Server_Fetch",
            "fetch",
            "failure",
            Some("timeout"),
            900.0,
        ),
        (
            "r3",
            "pypi:Mcp_Server_Fetch",
            "fetch",
            "success",
            None,
            60.0,
        ),
    ];
    for (id, target, task, outcome, failure, ms) in rows {
        sqlx::query(
            "INSERT INTO interactions (record_id, actor, target, target_type, task_type, outcome, \
             failure_type, error_layer, request_kind, outcome_class, latency_ms, source, day, created_at) \
             VALUES ($1, 'a', $2, 'tool', $3, $4, $5, $6, 'tool', $4, $7, 'organic', '2026-11-01', 0)",
        )
        .bind(id)
        .bind(target)
        .bind(task)
        .bind(outcome)
        .bind(failure)
        .bind(failure.map(|_| "server"))
        .bind(ms)
        .execute(&pool)
        .await
        .unwrap();
    }
    for (class, failure, n) in [("success", "", 2i64), ("failure", "timeout", 1)] {
        sqlx::query("INSERT INTO rollup_targets (target, source, outcome_class, n) VALUES ('pypi:Mcp_Server_Fetch', 'organic', $1, $2)")
            .bind(class)
            .bind(n)
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query("INSERT INTO rollup_tasks (target, task_type, source, outcome_class, failure_type, n) VALUES ('pypi:Mcp_Server_Fetch', 'fetch', 'organic', $1, $2, $3)")
            .bind(class)
            .bind(failure)
            .bind(n)
            .execute(&pool)
            .await
            .unwrap();
    }
    sqlx::query("INSERT INTO targets (target, name_key, first_seen) VALUES ('pypi:Mcp_Server_Fetch', 'mcp_server_fetch', 0)")
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("INSERT INTO rate_limits (subject, window_start, n) VALUES ('5e0f', 0, 60)")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
}

async fn upgrade_from_the_previous_version(kind: Kind) {
    let Some((url, dir, pg)) = empty_database(kind).await else {
        return;
    };
    previous_version(&url).await;
    let t = TestDb::open(kind, url, dir, pg).await;
    assert_eq!(
        t.count("quotas").await,
        0,
        "old fixed windows are dropped; budgets start afresh"
    );
    let (key,): (String,) = t.row("SELECT lookup_key FROM targets").await;
    assert_eq!(key, "pypi:mcp-server-fetch");
    common::assert_latency_matches_raw(&t).await;
    let app = t.app();
    let r = get(&app, "/api/reputation/pypi:mcp-server-fetch").await;
    assert_eq!(
        r.json["resolved_target"], "pypi:Mcp_Server_Fetch",
        "{}",
        r.text
    );
    assert_eq!(
        r.json["latency_ms"],
        json!({"avg": 333.3, "p50": 75.0, "p95": 1000.0})
    );
    assert_eq!(r.json["failure_breakdown"], json!({"timeout": 1}));
    // A second server opening the upgraded database fills nothing twice.
    let again = lowdown_server::db::Db::open(&t.url, 2).await.unwrap();
    again.close().await;
    common::assert_latency_matches_raw(&t).await;
    t.cleanup().await;
}
on_both!(kind upgrade_from_the_previous_version);
