//! Upgrading a populated database from version 8 to 9 (`rollup_storage`: one
//! `rollup_releases` table behind views, rebuilt rollup tables, one raw-row index fewer), on
//! SQLite and PostgreSQL: afterwards every rollup equals a recomputation from the raw rows,
//! and every answer is the one a database written by this version gives for the same
//! records.

use crate::common;

use common::{call, empty_database, post, Kind, TestDb};
use serde_json::{json, Value};
use sqlx::any::AnyArguments;
use sqlx::{Arguments, Row};

pub(crate) const TARGETS: [&str; 3] = ["npm:alpha", "pypi:Beta_Server", "mcp:gamma"];
const NODES: [&str; 2] = ["ld_0123456789ab", "ld_aaaaaaaaaaaa"];

/// 120 records over 3 targets, 2 tasks, 3 server versions (one missing), 2 schema hashes
/// (one missing), 3 sources, every outcome class, 2 nodes and none.
pub(crate) fn records() -> Vec<Value> {
    (0..120usize)
        .map(|i| {
            let outcome = ["success", "success", "failure", "partial"][i % 4];
            let task = ["search", "fetch"][(i / 3) % 2];
            let source = ["organic", "organic", "seeded", "synthetic"][(i / 5) % 4];
            let mut r = json!({
                "record_id": format!("rec-{i}"),
                "actor": "agent:test",
                "target": TARGETS[i % 3],
                "target_type": "tool",
                "task_type": task,
                "outcome": outcome,
                "latency_ms": (i * 37 % 1500) as f64 + 0.25,
                "source": source,
            });
            if let Some(v) = [Some("1.0.0"), Some("1.1.0"), None][(i / 7) % 3] {
                r["server_version"] = json!(v);
            }
            if i % 2 == 0 {
                r["schema_hash"] = json!(["a", "b"][(i / 11) % 2].repeat(64));
            }
            if let Some(n) = [Some(NODES[0]), Some(NODES[1]), None][(i / 2) % 3] {
                r["node_id"] = json!(n);
            }
            if outcome == "failure" {
                r["failure_type"] = json!(["timeout", "server_error"][(i / 4) % 2]);
                r["error_layer"] = json!("server");
            }
            r
        })
        .collect()
}

/// Migrations 0001-0008: the database version 8 of the server left.
async fn migrate_to_version_8(url: &str) {
    let migrations = lowdown_server::db::migrations_through(true, 8);
    common::migrated_as_before(url, &migrations)
        .await
        .close()
        .await;
}

/// Copies `table`'s rows from `from` to `to`; each column is `(name, kind)`, kind `t` text,
/// `i` bigint, `f` double precision, all nullable.
async fn copy(from: &sqlx::AnyPool, to: &sqlx::AnyPool, table: &str, cols: &[(&str, char)]) {
    let names = cols.iter().map(|c| c.0).collect::<Vec<_>>().join(", ");
    let marks = (1..=cols.len())
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {names} FROM {table}")))
        .fetch_all(from)
        .await
        .unwrap();
    let insert = format!("INSERT INTO {table} ({names}) VALUES ({marks})");
    for row in rows {
        let mut args = AnyArguments::default();
        for (i, (_, kind)) in cols.iter().enumerate() {
            match kind {
                't' => args.add(row.try_get::<Option<String>, _>(i).unwrap()),
                'i' => args.add(row.try_get::<Option<i64>, _>(i).unwrap()),
                _ => args.add(row.try_get::<Option<f64>, _>(i).unwrap()),
            }
            .unwrap();
        }
        sqlx::query_with(sqlx::AssertSqlSafe(insert.clone()), args)
            .execute(to)
            .await
            .unwrap();
    }
}

/// Version 8's `rollup_tasks`, `rollup_versions` and `rollup_schemas`, as its ingest kept
/// them: counts of the raw rows.
const VERSION_8_ROLLUPS: [&str; 3] = [
    "INSERT INTO rollup_tasks (target, task_type, source, outcome_class, failure_type, n) \
     SELECT target, task_type, source, outcome_class, COALESCE(failure_type, ''), COUNT(*) \
     FROM interactions GROUP BY target, task_type, source, outcome_class, COALESCE(failure_type, '')",
    "INSERT INTO rollup_versions (target, task_type, server_version, source, outcome_class, n) \
     SELECT target, task_type, COALESCE(server_version, ''), source, outcome_class, COUNT(*) \
     FROM interactions GROUP BY target, task_type, COALESCE(server_version, ''), source, outcome_class",
    "INSERT INTO rollup_schemas (target, task_type, schema_hash, source, outcome_class, n) \
     SELECT target, task_type, COALESCE(schema_hash, ''), source, outcome_class, COUNT(*) \
     FROM interactions GROUP BY target, task_type, COALESCE(schema_hash, ''), source, outcome_class",
];

/// The answers a user sees for these records: reputation (plain, per task, as a
/// contributor), compare, and each node's stats.
pub(crate) async fn answers(t: &TestDb) -> Vec<(String, Value)> {
    let app = t.app();
    let mut uris: Vec<(String, Option<&str>)> = Vec::new();
    for target in TARGETS {
        let base = format!("/api/reputation/{target}");
        uris.push((base.clone(), None));
        uris.push((format!("{base}?task_type=search"), None));
        uris.push((base.clone(), Some(NODES[0])));
        uris.push((format!("{base}?task_type=fetch"), Some(NODES[1])));
    }
    uris.push((format!("/api/compare?targets={}", TARGETS.join(",")), None));
    uris.push((
        format!(
            "/api/compare?targets={}&task_type=search",
            TARGETS.join(",")
        ),
        None,
    ));
    for node in NODES {
        uris.push((format!("/api/node/{node}"), None));
    }
    let mut out = Vec::new();
    for (uri, node) in uris {
        let headers: Vec<(&str, &str)> =
            node.map(|n| ("x-lowdown-node-id", n)).into_iter().collect();
        let r = call(&app, "GET", &uri, &headers, None).await;
        assert_eq!(r.status, 200, "{uri}: {}", r.text);
        let mut answer = r.json;
        // The citation carries the time of the request; everything else must match.
        if let Some(source) = answer.get_mut("source").and_then(Value::as_object_mut) {
            source.remove("retrieved_at");
            source.remove("cite");
        }
        out.push((format!("{uri} as {node:?}"), answer));
    }
    out
}

async fn upgrade_a_populated_version_8_database(kind: Kind) {
    // The same records, written by this version.
    let Some(fresh) = TestDb::new(kind).await else {
        return;
    };
    let app = fresh.app();
    for batch in records().chunks(40) {
        let r = post(&app, "/api/interactions", &Value::Array(batch.to_vec())).await;
        assert_eq!(r.status, 201, "{}", r.text);
        assert_eq!(r.json["accepted"], 40, "{}", r.text);
    }
    let expected = answers(&fresh).await;
    assert!(
        expected
            .iter()
            .any(|(_, a)| a.get("task_breakdown").is_some()),
        "a contributor answer is among those compared"
    );

    // A database at version 8 holding them as version 8 stored them.
    let (url, dir, pg) = empty_database(kind).await.unwrap();
    migrate_to_version_8(&url).await;
    let old = sqlx::AnyPool::connect(&url).await.unwrap();
    let from = &fresh.check.pool;
    let tables: &[(&str, &[(&str, char)])] = &[
        (
            "interactions",
            &[
                ("record_id", 't'),
                ("actor", 't'),
                ("target", 't'),
                ("target_type", 't'),
                ("task_type", 't'),
                ("outcome", 't'),
                ("failure_type", 't'),
                ("error_layer", 't'),
                ("request_kind", 't'),
                ("outcome_class", 't'),
                ("latency_ms", 'f'),
                ("source", 't'),
                ("node_id", 't'),
                ("server_version", 't'),
                ("schema_hash", 't'),
                ("recorder_version", 't'),
                ("protocol_version", 't'),
                ("tools_has_more", 'i'),
                ("day", 't'),
                ("created_at", 'i'),
            ],
        ),
        (
            "targets",
            &[
                ("target", 't'),
                ("name_key", 't'),
                ("first_seen", 'i'),
                ("lookup_key", 't'),
            ],
        ),
        ("server_meta", &[("key", 't'), ("value", 't')]),
        (
            "rollup_targets",
            &[
                ("target", 't'),
                ("source", 't'),
                ("outcome_class", 't'),
                ("n", 'i'),
            ],
        ),
        (
            "rollup_days",
            &[
                ("target", 't'),
                ("task_type", 't'),
                ("day", 't'),
                ("source", 't'),
                ("outcome_class", 't'),
                ("n", 'i'),
            ],
        ),
        (
            "rollup_latency",
            &[
                ("target", 't'),
                ("task_type", 't'),
                ("bucket", 'i'),
                ("n", 'i'),
                ("sum_ms", 'f'),
            ],
        ),
        (
            "nodes",
            &[
                ("node_id", 't'),
                ("interactions", 'i'),
                ("first_seen", 'i'),
                ("last_seen", 'i'),
            ],
        ),
        ("node_days", &[("node_id", 't'), ("day", 't')]),
        ("node_targets", &[("node_id", 't'), ("target", 't')]),
    ];
    for (table, cols) in tables {
        copy(from, &old, table, cols).await;
    }
    for sql in VERSION_8_ROLLUPS {
        sqlx::query(sql).execute(&old).await.unwrap();
    }
    old.close().await;

    // Opening it with this version runs 0009.
    let upgraded = TestDb::open(kind, url, dir, pg).await;
    assert_eq!(upgraded.count("interactions").await, 120);
    assert_eq!(upgraded.count("node_days").await, 2);
    common::assert_rollups_match_raw(&upgraded).await;
    let got = answers(&upgraded).await;
    for ((uri, want), (_, have)) in expected.iter().zip(&got) {
        assert_eq!(have, want, "{uri} changed across the upgrade");
    }
    // Ingest keeps counting on the upgraded storage.
    let more: Vec<Value> = records()
        .into_iter()
        .map(|mut r| {
            r["record_id"] = json!(format!("again-{}", r["record_id"].as_str().unwrap()));
            r
        })
        .collect();
    let app = upgraded.app();
    for batch in more.chunks(40) {
        let r = post(&app, "/api/interactions", &Value::Array(batch.to_vec())).await;
        assert_eq!(r.json["accepted"], 40, "{}", r.text);
    }
    common::assert_rollups_match_raw(&upgraded).await;
    fresh.cleanup().await;
    upgraded.cleanup().await;
}
on_both!(kind upgrade_a_populated_version_8_database);
