//! Telemetry rate limits kept in the database: one limit for every server sharing it
//! (the scale-out case), 429 + `Retry-After`, nothing written when refused, windows that
//! reset, and callers stored as hashes. On SQLite and PostgreSQL.

mod common;

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode};
use axum::Router;
use common::TestDb;
use lowdown_server::db::Db;
use lowdown_server::ratelimit::{prune, subject_hash, WINDOW_MS};
use lowdown_server::AppState;
use serde_json::{json, Value};
use sqlx::Row;
use tower::ServiceExt;

/// A batch of `n` observations.
fn batch(n: usize) -> String {
    let one = json!({"host": "api.example.com", "method": "get", "status": 200, "latency_ms": 80});
    Value::Array(vec![one; n]).to_string()
}

/// `POST /v1/telemetry/observe` from client address `ip`: (status, Retry-After).
async fn observe(app: &Router, ip: &str, n: usize) -> (StatusCode, Option<u64>) {
    let addr: SocketAddr = format!("{ip}:40000").parse().unwrap();
    let mut req = Request::post("/v1/telemetry/observe")
        .header("content-type", "application/json")
        .body(Body::from(batch(n)))
        .unwrap();
    req.extensions_mut().insert(ConnectInfo(addr));
    let res = app.clone().oneshot(req).await.unwrap();
    let retry = res
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().parse().unwrap());
    (res.status(), retry)
}

/// A second server on the same database: its own pool (and, on SQLite, its own writer).
async fn second_server(t: &TestDb) -> (Router, Db) {
    let db = Db::open(&t.url, 4).await.expect("second pool");
    (lowdown_server::app(AppState::new(db.clone(), "b")), db)
}

/// `(window_start, n)` stored for client address `ip`.
async fn window(t: &TestDb, ip: &str) -> Option<(i64, i64)> {
    sqlx::query("SELECT window_start, n FROM rate_limits WHERE subject = $1")
        .bind(subject_hash(&format!("ip:{ip}")))
        .fetch_optional(&t.check.pool)
        .await
        .unwrap()
        .map(|r| (r.try_get(0).unwrap(), r.try_get(1).unwrap()))
}

/// Moves the stored window of `ip` to open at `start` (time passing, without waiting).
async fn open_window_at(t: &TestDb, ip: &str, start: i64) {
    sqlx::query("UPDATE rate_limits SET window_start = $1 WHERE subject = $2")
        .bind(start)
        .bind(subject_hash(&format!("ip:{ip}")))
        .execute(&t.check.pool)
        .await
        .unwrap();
}

async fn two_servers_share_one_limit(t: &TestDb) {
    let (a, (b, db_b)) = (t.app(), second_server(t).await);
    assert_eq!(observe(&a, "198.51.100.1", 30).await.0, StatusCode::OK);
    assert_eq!(observe(&b, "198.51.100.1", 30).await.0, StatusCode::OK);
    for app in [&a, &b] {
        let (status, retry) = observe(app, "198.51.100.1", 1).await;
        assert_eq!(
            status,
            StatusCode::TOO_MANY_REQUESTS,
            "61st on either server"
        );
        let retry = retry.expect("Retry-After");
        assert!((3500..=3600).contains(&retry), "{retry}");
    }
    assert_eq!(t.count("observations").await, 60);

    // Concurrent requests spread over both servers: exactly 60 observations get in.
    let mut tasks = Vec::new();
    for i in 0..20 {
        let app = if i % 2 == 0 { a.clone() } else { b.clone() };
        tasks.push(tokio::spawn(async move {
            observe(&app, "198.51.100.2", 5).await.0
        }));
    }
    let mut ok = 0;
    for task in tasks {
        match task.await.unwrap() {
            StatusCode::OK => ok += 1,
            StatusCode::TOO_MANY_REQUESTS => {}
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!(
        ok, 12,
        "60 per hour in batches of 5, whichever server answers"
    );
    assert_eq!(t.count("observations").await, 120);
    assert_eq!(window(t, "198.51.100.2").await.map(|w| w.1), Some(60));
    db_b.close().await;
}
on_both!(two_servers_share_one_limit);

async fn a_refused_request_writes_nothing(t: &TestDb) {
    let app = t.app();
    assert_eq!(observe(&app, "198.51.100.3", 58).await.0, StatusCode::OK);
    let before = (
        t.count("observations").await,
        t.count("telemetry_rollups").await,
        window(t, "198.51.100.3").await,
    );
    let (status, retry) = observe(&app, "198.51.100.3", 3).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "58 + 3 > 60");
    assert!(retry.is_some());
    let after = (
        t.count("observations").await,
        t.count("telemetry_rollups").await,
        window(t, "198.51.100.3").await,
    );
    assert_eq!(before, after, "no rows, no rollups, no count");
    // What still fits is accepted and counted exactly.
    assert_eq!(observe(&app, "198.51.100.3", 2).await.0, StatusCode::OK);
    assert_eq!(window(t, "198.51.100.3").await.map(|w| w.1), Some(60));
    assert_eq!(t.count("observations").await, 60);
    // Another address has its own budget.
    assert_eq!(observe(&app, "198.51.100.4", 60).await.0, StatusCode::OK);
}
on_both!(a_refused_request_writes_nothing);

async fn the_window_resets_after_an_hour(t: &TestDb) {
    let app = t.app();
    assert_eq!(observe(&app, "198.51.100.5", 60).await.0, StatusCode::OK);
    assert_eq!(
        observe(&app, "198.51.100.5", 1).await.0,
        StatusCode::TOO_MANY_REQUESTS
    );
    // An hour passes: move the stored window back instead of waiting.
    let (start, _) = window(t, "198.51.100.5").await.unwrap();
    open_window_at(t, "198.51.100.5", start - WINDOW_MS).await;
    assert_eq!(observe(&app, "198.51.100.5", 60).await.0, StatusCode::OK);
    let (new_start, n) = window(t, "198.51.100.5").await.unwrap();
    assert_eq!(n, 60, "the new window counts only what was sent in it");
    assert!(new_start >= start, "a new window opened now");
    assert_eq!(t.count("observations").await, 120);
    // Ended windows are pruned; current ones are kept. The first window is moved 1 ms
    // back rather than sleeping, so it ended strictly before the second even when both
    // opened in the same millisecond.
    assert_eq!(observe(&app, "198.51.100.6", 1).await.0, StatusCode::OK);
    let ended = new_start - 1;
    open_window_at(t, "198.51.100.5", ended).await;
    let pruned = prune(&t.db, ended + WINDOW_MS).await.unwrap();
    assert_eq!(pruned, 1, "only the window that opened at {ended} ended");
    assert!(window(t, "198.51.100.5").await.is_none());
    assert!(window(t, "198.51.100.6").await.is_some());
}
on_both!(the_window_resets_after_an_hour);

async fn callers_are_stored_as_hashes(t: &TestDb) {
    let app = t.app();
    assert_eq!(observe(&app, "203.0.113.77", 1).await.0, StatusCode::OK);
    let rows = sqlx::query("SELECT subject FROM rate_limits")
        .fetch_all(&t.check.pool)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let subject: String = rows[0].try_get(0).unwrap();
    assert!(!subject.contains("203.0.113"), "{subject}");
    assert!(!subject.contains("113.77"), "{subject}");
    assert_eq!(subject.len(), 64, "a sha256");
}
on_both!(callers_are_stored_as_hashes);
