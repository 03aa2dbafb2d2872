//! The server over a real socket: HTTP round trips, graceful shutdown, restart, many
//! concurrent writers, and the binary itself.

use crate::common;

use std::time::Duration;

use common::{free_port, record, Served, TestDb};
use lowdown_server::db::Db;
use lowdown_server::AppState;
use serde_json::{json, Value};

async fn start(db: Db) -> Served {
    Served::start(AppState::new(db, "socket-test")).await
}

/// GET `url` and parse the answer as JSON.
async fn get_json(c: &reqwest::Client, url: impl reqwest::IntoUrl) -> Value {
    c.get(url).send().await.unwrap().json().await.unwrap()
}

async fn round_trips_over_a_socket(t: &TestDb) {
    let s = start(t.db.clone()).await;
    let c = reqwest::Client::new();
    let r = c
        .post(s.url("/api/interactions"))
        .json(&record("mcp:io.github.acme/weather", "success"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let rep: Value = get_json(&c, s.url("/api/reputation/mcp:io.github.acme%2Fweather")).await;
    assert_eq!(rep["interactions"], 1);
    let big = format!("[{}]", "1,".repeat(600_000) + "1");
    // Its own client: the server answers 413 without reading the body and closes that
    // connection, which a pooled connection would then trip over.
    let r = reqwest::Client::new()
        .post(s.url("/api/interactions"))
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    // The anonymous limit is per peer address and counts observations; the socket gives a
    // real address. 61 in one request: 60 stored, one refused, and the answer says so.
    let batch: Vec<Value> = (0..61)
        .map(
            |_| json!({"host": "api.example.com", "method": "GET", "status": 200, "latency_ms": 5}),
        )
        .collect();
    let r = c
        .post(s.url("/v1/telemetry/observe"))
        .json(&batch)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().contains_key("retry-after"));
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        (body["accepted"].as_u64(), body["rate_limited"].as_u64()),
        (Some(60), Some(1))
    );
    let r = c
        .post(s.url("/v1/telemetry/observe"))
        .json(&batch[0])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    assert!(r.headers().contains_key("retry-after"));
    s.stop().await;
}
on_both!(round_trips_over_a_socket);

fn batch(prefix: &str, n: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|i| {
                let mut r = record(
                    &format!("npm:load-{}", i % 7),
                    if i % 5 == 0 { "failure" } else { "success" },
                );
                r["record_id"] = json!(format!("{prefix}-{i}"));
                r["node_id"] = json!(format!("ld_node{}", i % 3));
                r["task_type"] = json!(format!("task{}", i % 4));
                r
            })
            .collect(),
    )
}

async fn many_concurrent_writers_count_exactly(t: &TestDb) {
    let s = start(t.db.clone()).await;
    let c = reqwest::Client::new();
    let (writers, requests, per) = (16, 8, 50);
    let mut tasks = vec![];
    for w in 0..writers {
        let (c, url) = (c.clone(), s.url("/api/interactions"));
        tasks.push(tokio::spawn(async move {
            let mut shared_stored = 0;
            for r in 0..requests {
                let res = c
                    .post(&url)
                    .json(&batch(&format!("w{w}-r{r}"), per))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(res.status(), 201, "{}", res.text().await.unwrap());
                // Every writer also re-sends one shared batch: stored once in total.
                let res = c
                    .post(&url)
                    .json(&batch("shared", 20))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(res.status(), 201);
                let body: Value = res.json().await.unwrap();
                assert_eq!(body["accepted"], 20);
                shared_stored +=
                    body["accepted"].as_i64().unwrap() - body["duplicates"].as_i64().unwrap();
            }
            shared_stored
        }));
    }
    let mut shared_stored = 0;
    for task in tasks {
        shared_stored += task.await.unwrap();
    }
    // Copies of one id in requests committed together count for exactly one request.
    assert_eq!(
        shared_stored, 20,
        "each shared record is reported stored once"
    );
    let expected = (writers * requests * per + 20) as i64;
    assert_eq!(t.count("interactions").await, expected);
    let mut total = 0;
    for i in 0..7 {
        let rep: Value = get_json(&c, s.url(&format!("/api/reputation/npm:load-{i}"))).await;
        total += rep["interactions"].as_i64().unwrap();
    }
    assert_eq!(
        total, expected,
        "reputation counts are exact under concurrency"
    );
    common::assert_rollups_match_raw(t).await;
    s.stop().await;
}
on_both!(many_concurrent_writers_count_exactly);

async fn shutdown_drains_in_flight_requests_and_loses_nothing_acknowledged(t: &TestDb) {
    let s = start(t.db.clone()).await;
    let c = reqwest::Client::new();
    let mut tasks = vec![];
    for i in 0..24 {
        let (c, url) = (c.clone(), s.url("/api/interactions"));
        tasks.push(tokio::spawn(async move {
            match c
                .post(&url)
                .json(&batch(&format!("drain{i}"), 200))
                .send()
                .await
            {
                Ok(r) if r.status() == 201 => 200,
                _ => 0,
            }
        }));
    }
    // Stop once the first batch is committed (not after a fixed delay, which a loaded
    // machine can outlast before any request arrives): the others are still in flight.
    for _ in 0..500 {
        if t.count("interactions").await > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    s.stop().await;
    let mut acknowledged = 0;
    for task in tasks {
        acknowledged += task.await.unwrap();
    }
    assert!(
        acknowledged > 0,
        "some requests were in flight and finished"
    );
    assert_eq!(
        t.count("interactions").await,
        acknowledged as i64,
        "every acknowledged record is stored, nothing else"
    );
}
on_both!(shutdown_drains_in_flight_requests_and_loses_nothing_acknowledged);

async fn records_survive_a_restart_and_rollups_match_raw_rows(t: &TestDb) {
    let s = start(t.db.clone()).await;
    let c = reqwest::Client::new();
    for i in 0..5 {
        let r = c
            .post(s.url("/api/interactions"))
            .json(&batch(&format!("restart{i}"), 100))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
    }
    let obs =
        json!([{"host": "api.example.com", "method": "GET", "status": 200, "latency_ms": 40}]);
    c.post(s.url("/v1/telemetry/observe"))
        .json(&obs)
        .send()
        .await
        .unwrap();
    let before: Value = get_json(&c, s.url("/api/reputation/npm:load-3")).await;
    s.stop().await;

    let reopened = Db::open(&t.url, 4).await.expect("reopen after restart");
    let s = start(reopened.clone()).await;
    let after: Value = get_json(&c, s.url("/api/reputation/npm:load-3")).await;
    for k in [
        "interactions",
        "rated_interactions",
        "success_rate",
        "by_source",
        "message",
    ] {
        assert_eq!(before[k], after[k], "{k} changed across the restart");
    }
    assert_eq!(t.count("interactions").await, 500);
    common::assert_rollups_match_raw(t).await;
    s.stop().await;
    reopened.close().await;
}
on_both!(records_survive_a_restart_and_rollups_match_raw_rows);

#[tokio::test]
async fn the_binary_starts_with_one_command_and_stops_on_sigterm() {
    let bin = env!("CARGO_BIN_EXE_lowdown-server");
    let help = std::process::Command::new(bin)
        .arg("--help")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&help.stdout);
    for flag in [
        "--listen",
        "--db",
        "--catalog",
        "catalog",
        "--trusted-proxy",
        "--unsafe-allow-private-hosts",
    ] {
        assert!(
            text.contains(flag),
            "--help does not explain {flag}:\n{text}"
        );
    }
    let private_flag = text
        .split("--unsafe-allow-private-hosts")
        .nth(1)
        .unwrap_or_default();
    assert!(
        private_flag.trim_start().starts_with("UNSAFE"),
        "--help must name the private-host flag unsafe:\n{text}"
    );
    let bad = std::process::Command::new(bin)
        .args(["--trusted-proxy", "10.0.0.0/33", "catalog", "list"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--trusted-proxy"));
    let home = std::env::temp_dir().join(format!("lowdown-bin-{}", free_port()));
    let _ = std::fs::remove_dir_all(&home);
    let catalog = home.with_extension("json");
    std::fs::write(
        &catalog,
        r#"{"services":[{"id":"resend","hosts":["api.resend.com"]}]}"#,
    )
    .unwrap();
    let run = |args: &[&str]| common::lowdown_server_at(&home, args);
    let out = run(&[
        "catalog",
        "add",
        "stripe",
        "--service-id",
        "stripe",
        "--upstream",
        "https://api.stripe.com",
        "--host",
        "api.stripe.com",
        "--sampling-rate",
        "0.05",
        "--service-name",
        "Stripe",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        home.join("services.toml").exists(),
        "the catalog lives in LOWDOWN_HOME"
    );
    let out = run(&["catalog", "list"]);
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["services"][0]["hosts"], json!(["api.stripe.com"]));
    let old = run(&["--catalog", catalog.to_str().unwrap(), "catalog", "list"]);
    assert!(!old.status.success());
    assert!(
        String::from_utf8_lossy(&old.stderr).contains(":1: this is a JSON catalog, the old shape"),
        "{}",
        String::from_utf8_lossy(&old.stderr)
    );

    let port = free_port();
    let gateway_port = free_port();
    let mut child = std::process::Command::new(bin)
        .args([
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--gateway-listen",
            &format!("127.0.0.1:{gateway_port}"),
        ])
        .env("LOWDOWN_HOME", &home)
        .env_remove("DATABASE_URL")
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let c = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    let mut up = false;
    for _ in 0..100 {
        if c.get(format!("{base}/healthz")).send().await.is_ok() {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(up, "server did not come up");
    let obs = json!({"host": "api.stripe.com", "method": "POST", "status": 200, "latency_ms": 12});
    let r: Value = c
        .post(format!("{base}/v1/telemetry/observe"))
        .json(&obs)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        r["service_id"], "stripe",
        "catalog added by the CLI is used"
    );
    let services: Value = c
        .get(format!("{base}/v1/services"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(services["services"][0]["slug"], "stripe");
    let gw = c
        .get(format!("http://127.0.0.1:{gateway_port}/nope/v1/x"))
        .send()
        .await
        .unwrap();
    assert_eq!(gw.status(), 404, "the gateway listens beside the API");
    assert!(home.join("lowdown.db").exists());
    assert!(
        home.join("lowdown.db-wal").exists(),
        "SQLite runs in WAL mode"
    );
    #[cfg(unix)]
    for (f, want) in [
        ("", 0o700),
        ("lowdown.db", 0o600),
        ("lowdown.db-wal", 0o600),
        ("lowdown.db-shm", 0o600),
    ] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.join(f))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(
            mode, want,
            "LOWDOWN_HOME/{f} holds the server's secrets: mode {mode:o}"
        );
    }
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let mut status = None;
    for _ in 0..100 {
        if let Some(s) = child.try_wait().unwrap() {
            status = Some(s);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let status = status.unwrap_or_else(|| {
        let _ = child.kill();
        panic!("server ignored SIGTERM")
    });
    assert!(status.success(), "exit {status:?}");
    let _ = std::fs::remove_dir_all(&home);
    let _ = std::fs::remove_file(&catalog);
}
