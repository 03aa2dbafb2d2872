//! The Scanner against the real `@modelcontextprotocol/server-everything` (npm), in its
//! streamable-HTTP mode (level 2, session ended with DELETE) and in its legacy SSE mode
//! (level 0, with the status it really answers), on SQLite and PostgreSQL.
//!
//! The server comes from the npm workspace's `node_modules` (`npm ci` at the root, which
//! `make setup` runs); this test installs nothing and fails when it is missing.

use crate::common;
use crate::scanner_fixtures;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::TestDb;
use scanner_fixtures::registry::{streamable, Registry};
use scanner_fixtures::{closed_port, config, MapLookup};
use serde_json::json;

/// A running server-everything; killed on drop.
struct Everything {
    child: Child,
    port: u16,
    lines: mpsc::Receiver<String>,
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn entry_point() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        p.exists(),
        "{} is missing: run `npm ci` at the root (make setup does)",
        p.display()
    );
    p
}

impl Everything {
    /// Starts `node index.js <mode>` on a free port and waits for its ready line.
    async fn start(mode: &str, ready: &str) -> Everything {
        let port = closed_port().await;
        let mut child = Command::new("node")
            .arg(entry_point())
            .arg(mode)
            .env("PORT", port.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node runs");
        let (tx, lines) = mpsc::channel();
        for out in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    let _ = tx.send(line);
                }
            });
        }
        let e = Everything { child, port, lines };
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match e.lines.recv_timeout(left) {
                Ok(line) if line.contains(ready) => return e,
                Ok(_) => {}
                Err(err) => panic!("server-everything {mode} did not start: {err}"),
            }
        }
    }

    /// Every line printed so far.
    fn printed(&self) -> Vec<String> {
        self.lines.try_iter().collect()
    }
}

async fn server_everything_over_streamable_http_and_legacy_sse(t: &TestDb) {
    let streamable_http = Everything::start("streamableHttp", "listening on port").await;
    let legacy = Everything::start("sse", "running on port").await;
    let registry = Registry::start().await;
    let legacy_url = format!("http://127.0.0.1:{}/sse", legacy.port);
    registry.set_entries(
        vec![
            streamable(
                "io.github.modelcontextprotocol/server-everything",
                &format!("http://127.0.0.1:{}/mcp", streamable_http.port),
            ),
            // Declared as streamable HTTP, but it only speaks the legacy HTTP+SSE transport.
            streamable("io.fixture/legacy-sse", &legacy_url),
        ],
        100,
    );
    let s = lowdown_server::scanner::run(&t.db, &config(&registry.url, MapLookup::default()))
        .await
        .unwrap();
    assert_eq!(s.status, "completed");

    let app = t.app();
    let r = common::get(
        &app,
        "/api/reputation/mcp:io.github.modelcontextprotocol/server-everything",
    )
    .await;
    let latest = &r.json["scanner"]["latest"];
    assert_eq!(latest["reached_level"], 2, "{}", r.text);
    assert_eq!(latest["http_status"], 200);
    assert_eq!(latest["server_version"], "2.0.0");
    assert!(latest["tool_count"].as_u64().unwrap() >= 10, "{latest}");
    let names = r.json["scanner"]["tool_names"].as_array().unwrap();
    assert!(
        names.contains(&json!("echo")) && names.contains(&json!("get-sum")),
        "{names:?}"
    );
    assert!(
        streamable_http
            .printed()
            .iter()
            .any(|l| l.contains("Received session termination request")),
        "the session is ended with DELETE"
    );

    // What the legacy server really answers to a streamable-HTTP POST, asked directly.
    let direct = reqwest::Client::new()
        .post(&legacy_url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16();
    let r = common::get(&app, "/api/reputation/mcp:io.fixture/legacy-sse").await;
    let latest = &r.json["scanner"]["latest"];
    assert_eq!(latest["reached_level"], 0, "{}", r.text);
    assert_eq!(latest["http_status"], direct);
    assert!(
        direct >= 400,
        "the legacy server refuses the POST ({direct})"
    );
}
on_both!(server_everything_over_streamable_http_and_legacy_sse);
