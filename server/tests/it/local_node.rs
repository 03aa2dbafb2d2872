//! `serve --local-node` (SPEC §2): one node per LOWDOWN_HOME however many start at once,
//! announced where hosts look, on another port when the default one is taken, trusting
//! loopback, and gone (announcement too) after `--idle-exit`; the idle timer on tokio's
//! paused clock.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use axum::routing::get;
use axum::Router;
use lowdown_server::local_node::{idle, track, Activity};
use serde_json::{json, Value};
use tower::ServiceExt;

use crate::common;

/// `lowdown-server serve --local-node ARGS` on `home`, its output captured.
fn node(home: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_lowdown-server"))
        .args(["serve", "--local-node"])
        .args(args)
        .env("LOWDOWN_HOME", home)
        .env_remove("DATABASE_URL")
        .env("RUST_LOG", "off")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The announcement in `home`, once there is one that answers.
async fn announced(home: &Path) -> Value {
    let file = home.join(lowdown_core::local_node::FILE_NAME);
    for _ in 0..400 {
        if let Some(node) = std::fs::read_to_string(&file)
            .ok()
            .and_then(|t| lowdown_core::local_node::parse(&t))
        {
            if reqwest::get(format!("{}/healthz", node.url)).await.is_ok() {
                return serde_json::to_value(node).unwrap();
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no local node announced in {}", home.display());
}

/// Waits (off the runtime) for `child` to end, at most a minute; its exit code and stderr.
async fn ended(mut child: Child) -> (Option<i32>, String) {
    tokio::task::spawn_blocking(move || {
        for _ in 0..1200 {
            if let Some(status) = child.try_wait().unwrap() {
                let mut err = String::new();
                std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
                return (status.code(), err);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        panic!("lowdown-server did not end");
    })
    .await
    .unwrap()
}

fn home(name: &str) -> PathBuf {
    let home = std::env::temp_dir().join(format!("lowdown-node-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    home
}

#[tokio::test]
async fn two_starts_at_once_make_one_node_which_trusts_loopback_and_ends_when_idle() {
    let home = home("two");
    let port = common::free_port().to_string();
    let listen = format!("127.0.0.1:{port}");
    let args = ["--listen", listen.as_str(), "--idle-exit", "3"];
    let (a, b) = (node(&home, &args), node(&home, &args));
    let node_json = announced(&home).await;
    let url = node_json["url"].as_str().unwrap().to_owned();
    assert_eq!(url, format!("http://127.0.0.1:{port}"));
    // Whichever lost the lock said so and ended at once; the other serves.
    let pid = node_json["pid"].as_u64().unwrap() as u32;
    let (winner, loser) = if a.id() == pid { (a, b) } else { (b, a) };
    let (code, said) = ended(loser).await;
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("a local node already runs for"), "{said}");
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&home).unwrap().permissions())
            & 0o777,
        0o700,
        "a LOWDOWN_HOME the node made is the user's alone"
    );

    // Loopback is trusted: 30 records of one target from one network all count as rated
    // (an untrusted network counts 20 a day), and draw on no quota.
    let client = reqwest::Client::new();
    let body: Vec<Value> = (0..30)
        .map(|i| {
            let mut r = common::record("npm:own-server", "success");
            r["record_id"] = json!(format!("own-{i}"));
            r["node_id"] = json!("ld_0123456789ab");
            r
        })
        .collect();
    let posted = client
        .post(format!("{url}/api/interactions"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), 201);
    let answer: Value = client
        .get(format!("{url}/api/reputation/npm:own-server"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (
            answer["rated_interactions"].as_u64(),
            answer["capped"].as_u64()
        ),
        (Some(30), Some(0)),
        "{answer}"
    );

    // Three seconds without a request: it ends, and takes its announcement with it.
    let (code, said) = ended(winner).await;
    assert_eq!(code, Some(0), "{said}");
    assert!(!home.join(lowdown_core::local_node::FILE_NAME).exists());
    let _ = std::fs::remove_dir_all(&home);
}

#[tokio::test]
async fn on_the_default_port_taken_the_node_takes_another_and_announces_it() {
    let home = home("taken");
    // Held here, or by something else already: taken either way.
    let _held = std::net::TcpListener::bind(lowdown_server::config::DEFAULT_LISTEN);
    let child = node(&home, &["--idle-exit", "600"]);
    let node_json = announced(&home).await;
    let url = node_json["url"].as_str().unwrap();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert_ne!(url, "http://127.0.0.1:7077");
    let _ = Command::new("kill").arg(child.id().to_string()).status();
    let (code, _) = ended(child).await;
    assert_eq!(code, Some(0), "SIGTERM ends the node gracefully");
    assert!(!home.join(lowdown_core::local_node::FILE_NAME).exists());
    let _ = std::fs::remove_dir_all(&home);
}

#[tokio::test]
async fn another_command_with_local_node_flags_is_refused_and_a_foreign_announcement_is_left_alone()
{
    let home = home("flags");
    let out = common::lowdown_server_at(&home, &["scan", "--local-node"]);
    assert!(!out.status.success());
    // An announcement that is no longer this node's (another replaced it) stays when it ends.
    let child = node(&home, &["--listen", "127.0.0.1:0", "--idle-exit", "2"]);
    announced(&home).await;
    let file = home.join(lowdown_core::local_node::FILE_NAME);
    let foreign =
        "{\"url\":\"http://127.0.0.1:9\",\"pid\":1,\"started_at\":\"2026-01-01T00:00:00Z\"}\n";
    std::fs::write(&file, foreign).unwrap();
    let (code, said) = ended(child).await;
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), foreign);
    let _ = std::fs::remove_dir_all(&home);
}

#[tokio::test(start_paused = true)]
async fn the_idle_timer_counts_from_the_end_of_the_last_request_and_never_cuts_one() {
    let activity = Arc::new(Activity::default());
    let app = Router::new()
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(100)).await;
                "done"
            }),
        )
        .layer(axum::middleware::from_fn_with_state(
            activity.clone(),
            track,
        ));
    let timer = tokio::spawn(idle(activity.clone(), Duration::from_secs(30)));
    tokio::time::sleep(Duration::from_secs(20)).await;
    let request = tokio::spawn(
        app.oneshot(
            axum::http::Request::get("/slow")
                .body(axum::body::Body::empty())
                .unwrap(),
        ),
    );
    // 20 s in, a request of 100 s starts: at 50 s (30 s after the start) the timer waits on.
    tokio::time::sleep(Duration::from_secs(80)).await;
    assert!(!timer.is_finished(), "idle while a request was in flight");
    // It ends at 120 s; 30 s later, at 150 s, the node is idle, not before.
    tokio::time::sleep(Duration::from_secs(45)).await;
    assert!(request.is_finished());
    assert!(
        !timer.is_finished(),
        "idle before 30 s had passed since the last request"
    );
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(timer.is_finished());
}

#[tokio::test]
async fn a_starting_node_drains_the_spool_sessions_left_before_it_answered() {
    use lowdown_core::record::spool;
    let home = home("drain");
    let dir = home.join(spool::DIR_NAME);
    std::fs::create_dir_all(&dir).unwrap();
    let line = |i: usize| {
        let mut r = common::record("npm:spooled-server", "success");
        r["record_id"] = json!(format!("spooled-{i}"));
        r.to_string()
    };
    // Two sessions' files (one with a torn last line), a claim another host holds right now
    // (left alone) and a file of another kind.
    let old = spool::file_name(1, 0, 7, "aa");
    let torn = format!(
        "{}{{\"target\":\"npm:spool",
        spool::encode(&[line(0), line(1)])
    );
    std::fs::write(dir.join(&old), torn).unwrap();
    let newer = spool::file_name(2, 0, 8, "bb");
    std::fs::write(dir.join(&newer), spool::encode(&[line(2), line(1)])).unwrap();
    let held = spool::claim_name(&spool::file_name(3, 0, 9, "cc"), 9);
    std::fs::write(dir.join(&held), spool::encode(&[line(9)])).unwrap();
    std::fs::write(dir.join(spool::DROPPED_FILE), "{\"dropped_records\":1}\n").unwrap();

    let port = common::free_port().to_string();
    let listen = format!("127.0.0.1:{port}");
    let child = node(&home, &["--listen", listen.as_str(), "--idle-exit", "5"]);
    let url = announced(&home).await["url"].as_str().unwrap().to_owned();
    let mut answer = Value::Null;
    for _ in 0..200 {
        answer = reqwest::get(format!("{url}/api/reputation/npm:spooled-server"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if answer["interactions"] == json!(3) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        answer["interactions"],
        json!(3),
        "each record once: {answer}"
    );
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [held, spool::DROPPED_FILE.to_owned()],
        "what was taken is gone"
    );
    let (code, said) = ended(child).await;
    assert_eq!(code, Some(0), "{said}");
    let _ = std::fs::remove_dir_all(&home);
}
