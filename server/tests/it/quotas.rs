//! Quotas kept in the database: one budget for every server sharing it (the scale-out
//! case), budgets that count observations with partial acceptance, 429 + `Retry-After`
//! only when nothing is accepted, an hour that slides, subjects stored as keyed hashes (one
//! network per IPv4 /24 and IPv6 /48), `X-Forwarded-For` believed only from a trusted
//! proxy, and limited registration. On SQLite and PostgreSQL. (Record quotas over real
//! sockets: `forgery.rs`.)

use crate::common;

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode};
use axum::Router;
use common::TestDb;
use lowdown_core::quota::Window;
use lowdown_server::caller::{network, subject, TrustedProxies};
use lowdown_server::db::quota::prune;
use lowdown_server::db::Db;
use lowdown_server::AppState;
use serde_json::{json, Value};
use sqlx::Row;
use tower::ServiceExt;

/// A batch of `n` observations.
fn batch(n: usize) -> String {
    let one = json!({"host": "api.example.com", "method": "get", "status": 200, "latency_ms": 80});
    Value::Array(vec![one; n]).to_string()
}

/// A request to `uri` from peer address `ip` carrying `headers`: (status, Retry-After, body).
async fn from_peer(
    app: &Router,
    uri: &str,
    ip: &str,
    headers: &[(&str, &str)],
    body: String,
) -> (StatusCode, Option<u64>, Value) {
    let addr = SocketAddr::new(ip.parse().unwrap(), 40000);
    let mut req = Request::post(uri).header("content-type", "application/json");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let mut req = req.body(Body::from(body)).unwrap();
    req.extensions_mut().insert(ConnectInfo(addr));
    let res = app.clone().oneshot(req).await.unwrap();
    let retry = res
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().parse().unwrap());
    let status = res.status();
    let bytes = axum::body::to_bytes(res.into_body(), 1 << 20)
        .await
        .unwrap();
    (status, retry, serde_json::from_slice(&bytes).unwrap())
}

/// `POST /v1/telemetry/observe` of `n` observations from client address `ip`: (status,
/// Retry-After).
async fn observe(app: &Router, ip: &str, n: usize) -> (StatusCode, Option<u64>) {
    let (status, retry, _) = from_peer(app, "/v1/telemetry/observe", ip, &[], batch(n)).await;
    (status, retry)
}

/// The stored subject of the anonymous observation budget of the network of `ip`.
fn observe_subject(t: &TestDb, ip: &str) -> String {
    subject(
        t.db.caller_secret(),
        "observe",
        &network(ip.parse().unwrap()),
    )
}

/// A second server on the same database: its own pool (and, on SQLite, its own writer).
async fn second_server(t: &TestDb) -> (Router, Db) {
    let db = Db::open(&t.url, 4).await.expect("second pool");
    (lowdown_server::app(AppState::new(db.clone(), "b")), db)
}

/// The anonymous observations the network of `ip` used in the hour before `now` (unix
/// ms), as stored; `None` when it has no row.
async fn used(t: &TestDb, ip: &str, now: i64) -> Option<u64> {
    sqlx::query("SELECT newest, counts FROM quotas WHERE subject = $1")
        .bind(observe_subject(t, ip))
        .fetch_optional(&t.check.pool)
        .await
        .unwrap()
        .map(|r| {
            Window::decode(r.try_get(0).unwrap(), &r.try_get::<String, _>(1).unwrap()).used(now)
        })
}

fn now() -> i64 {
    lowdown_server::clock::now_ms()
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
            observe(&app, "198.51.99.2", 5).await.0
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
    assert_eq!(used(t, "198.51.99.2", now()).await, Some(60));
    db_b.close().await;
}
on_both!(two_servers_share_one_limit);

async fn the_limit_counts_observations_and_accepts_part_of_a_request(t: &TestDb) {
    let app = t.app();
    assert_eq!(observe(&app, "198.51.100.3", 58).await.0, StatusCode::OK);
    // 58 + 3 > 60: the first two are stored, the third refused, and the answer says so.
    let (status, retry, body) =
        from_peer(&app, "/v1/telemetry/observe", "198.51.100.3", &[], batch(3)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["accepted"], 2);
    assert_eq!(body["rate_limited"], 1);
    let items = body["items"].as_array().unwrap();
    assert_eq!(items[0]["weight"], 0.1);
    assert_eq!(items[1]["weight"], 0.1);
    let refusal = items[2]["error"].as_str().unwrap();
    assert!(
        refusal.starts_with("rate limited: 60 observations per hour"),
        "{refusal}"
    );
    let retry = retry.expect("Retry-After on a partial acceptance");
    assert!((3500..=3600).contains(&retry), "{retry}");
    assert_eq!(t.count("observations").await, 60);
    assert_eq!(used(t, "198.51.100.3", now()).await, Some(60));
    // Now nothing fits: 429, and nothing is written, not even the count.
    let before = (
        t.count("observations").await,
        t.count("telemetry_rollups").await,
        used(t, "198.51.100.3", now()).await,
    );
    let (status, retry, body) =
        from_peer(&app, "/v1/telemetry/observe", "198.51.100.3", &[], batch(4)).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert!(retry.is_some());
    assert!(body["error"]
        .as_str()
        .unwrap()
        .contains("60 observations per hour"));
    let after = (
        t.count("observations").await,
        t.count("telemetry_rollups").await,
        used(t, "198.51.100.3", now()).await,
    );
    assert_eq!(before, after, "no rows, no rollups, no count");
    // Another address of the same /24 shares the budget; another network has its own.
    assert_eq!(
        observe(&app, "198.51.100.4", 1).await.0,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(observe(&app, "198.51.101.4", 60).await.0, StatusCode::OK);
}
on_both!(the_limit_counts_observations_and_accepts_part_of_a_request);

async fn the_hour_slides(t: &TestDb) {
    let state = t.state();
    let app = lowdown_server::app(state.clone());
    // 40 now, 20 half an hour later: full.
    assert_eq!(observe(&app, "198.51.100.5", 40).await.0, StatusCode::OK);
    state.clock.shift(30 * 60_000);
    assert_eq!(observe(&app, "198.51.100.5", 20).await.0, StatusCode::OK);
    let (status, retry) = observe(&app, "198.51.100.5", 1).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    // The first 40 leave the hour about 30 minutes from now (the minute they were sent
    // in ends up to a minute earlier), not at the top of some clock hour.
    let retry = retry.unwrap();
    assert!((1740..=1800).contains(&retry), "{retry}");
    // 29 minutes on: still full (a fixed window opened by the first request would have
    // reset at the hour).
    state.clock.shift(29 * 60_000);
    assert_eq!(
        observe(&app, "198.51.100.5", 1).await.0,
        StatusCode::TOO_MANY_REQUESTS
    );
    // Past the first 40's hour: those 40 are free again, the later 20 are not.
    state.clock.shift(2 * 60_000);
    let (status, _, body) = from_peer(
        &app,
        "/v1/telemetry/observe",
        "198.51.100.5",
        &[],
        batch(50),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (body["accepted"].as_u64(), body["rate_limited"].as_u64()),
        (Some(40), Some(10))
    );
    assert_eq!(t.count("observations").await, 100);
    // Idle subjects are pruned an hour after their last use; busy ones are kept.
    assert_eq!(observe(&app, "198.51.200.6", 1).await.0, StatusCode::OK);
    let later = state.now() + 61 * 60_000;
    assert_eq!(prune(&t.db, later).await.unwrap(), 2);
    assert!(used(t, "198.51.100.5", later).await.is_none());
    assert_eq!(prune(&t.db, state.now()).await.unwrap(), 0);
}
on_both!(the_hour_slides);

async fn callers_are_stored_as_keyed_hashes(t: &TestDb) {
    let app = t.app();
    assert_eq!(observe(&app, "203.0.113.77", 1).await.0, StatusCode::OK);
    let rows: Vec<(String,)> = t.rows("SELECT subject FROM quotas").await;
    assert_eq!(rows.len(), 1);
    let stored = rows[0].0.clone();
    assert!(!stored.contains("203.0.113"), "{stored}");
    // Not an unkeyed hash anyone could recompute by trying every address...
    use sha2::Digest;
    for plain in ["203.0.113.77", "203.0.113.0/24", "ip4:203.0.113.0/24"] {
        assert_ne!(stored, hex::encode(sha2::Sha256::digest(plain.as_bytes())));
    }
    // ...but an HMAC under the deployment's secret, which the database keeps and every
    // server on it shares.
    let (secret,): (String,) = t
        .row("SELECT value FROM server_meta WHERE key = 'caller_secret'")
        .await;
    assert_eq!(secret.len(), 64, "32 random bytes");
    assert_eq!(hex::decode(&secret).unwrap(), t.db.caller_secret());
    assert_eq!(stored, observe_subject(t, "203.0.113.77"));
    let (_, db_b) = second_server(t).await;
    assert_eq!(
        db_b.caller_secret(),
        t.db.caller_secret(),
        "one secret per deployment"
    );
    db_b.close().await;
    let other = TestDb::new(t.kind).await.unwrap();
    assert_ne!(
        other.db.caller_secret(),
        t.db.caller_secret(),
        "each deployment makes its own"
    );
    other.cleanup().await;
}
on_both!(callers_are_stored_as_keyed_hashes);

async fn ipv6_callers_share_one_budget_per_48(t: &TestDb) {
    let app = t.app();
    assert_eq!(observe(&app, "2001:db8:7:1::1", 40).await.0, StatusCode::OK);
    let (status, _, body) = from_peer(
        &app,
        "/v1/telemetry/observe",
        "2001:db8:7:ffff:ffff::2",
        &[],
        batch(40),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (body["accepted"].as_u64(), body["rate_limited"].as_u64()),
        (Some(20), Some(20)),
        "another /64 of the same /48 draws from the same 60"
    );
    assert_eq!(
        observe(&app, "2001:db8:8::1", 60).await.0,
        StatusCode::OK,
        "the next /48 has its own budget"
    );
}
on_both!(ipv6_callers_share_one_budget_per_48);

async fn forwarded_for_counts_only_behind_a_trusted_proxy(t: &TestDb) {
    let proxied = lowdown_server::app(
        AppState::new(t.db.clone(), "proxied")
            .with_trusted_proxies(TrustedProxies::parse(&["10.0.0.0/8"]).unwrap()),
    );
    // Behind the trusted proxy, each forwarded client has its own budget...
    for client in ["198.51.100.21", "198.51.102.22"] {
        let xff = format!("{client}, 10.0.0.9");
        let (status, _, body) = from_peer(
            &proxied,
            "/v1/telemetry/observe",
            "10.0.0.2",
            &[("x-forwarded-for", &xff)],
            batch(60),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{client}: {body}");
        assert_eq!(body["accepted"], 60);
    }
    assert!(used(t, "198.51.100.21", now()).await.is_some());
    assert!(
        used(t, "10.0.0.2", now()).await.is_none(),
        "the proxy is not the caller"
    );
    // ...while a peer outside the trusted range cannot pick its bucket with a header.
    for forged in ["192.0.2.50", "192.0.2.51"] {
        let (status, _, _) = from_peer(
            &proxied,
            "/v1/telemetry/observe",
            "203.0.113.40",
            &[("x-forwarded-for", forged)],
            batch(30),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
    }
    assert_eq!(used(t, "203.0.113.40", now()).await, Some(60));
    assert!(used(t, "192.0.2.50", now()).await.is_none());
    // A server without --trusted-proxy ignores the header altogether.
    let (status, _, _) = from_peer(
        &t.app(),
        "/v1/telemetry/observe",
        "10.0.0.2",
        &[("x-forwarded-for", "198.51.104.99")],
        batch(1),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(used(t, "10.0.0.2", now()).await, Some(1));
    assert!(used(t, "198.51.104.99", now()).await.is_none());
}
on_both!(forwarded_for_counts_only_behind_a_trusted_proxy);

async fn registration_is_limited_per_network(t: &TestDb) {
    let app = t.app();
    let body =
        json!({"name": "bot", "model_provider": "acme", "model_id": "m-1", "environment": "test"})
            .to_string();
    let register = |ip: &'static str| {
        let (app, body) = (app.clone(), body.clone());
        async move { from_peer(&app, "/v1/auth/agents/register", ip, &[], body).await }
    };
    for _ in 0..10 {
        assert_eq!(register("198.51.100.30").await.0, StatusCode::CREATED);
    }
    let (status, retry, answer) = register("198.51.100.30").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{answer}");
    let retry = retry.expect("Retry-After");
    assert!((3500..=3600).contains(&retry), "{retry}");
    assert!(answer["error"]
        .as_str()
        .unwrap()
        .contains("10 registrations per hour"));
    assert_eq!(t.count("agents").await, 10, "the refused one wrote nothing");
    assert_eq!(
        register("198.51.100.31").await.0,
        StatusCode::TOO_MANY_REQUESTS,
        "another address of the same /24 shares the budget"
    );
    assert_eq!(
        register("198.51.103.31").await.0,
        StatusCode::CREATED,
        "another network has its own budget"
    );
    // Registrations and observations are separate budgets of one network.
    assert_eq!(observe(&app, "198.51.100.30", 60).await.0, StatusCode::OK);
}
on_both!(registration_is_limited_per_network);
