//! The Scanner against the real `@modelcontextprotocol/server-everything` (npm), in its
//! streamable-HTTP mode (level 2, session ended with DELETE) and in its legacy SSE mode
//! (level 0, with the status it really answers), on SQLite and PostgreSQL.
//!
//! The server comes from the npm workspace's `node_modules` (`scanner_fixtures::everything`);
//! this test installs nothing and fails when it is missing.

use crate::common;
use crate::scanner_fixtures;

use common::TestDb;
use scanner_fixtures::everything::Everything;
use scanner_fixtures::registry::{streamable, Registry};
use scanner_fixtures::{config, MapLookup};
use serde_json::json;

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
    // server-everything prints the line before it answers the DELETE, but the fixture's
    // reader thread passes it on in its own time: wait for it rather than look once.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut printed = streamable_http.printed();
    while !printed
        .iter()
        .any(|l| l.contains("Received session termination request"))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the session is ended with DELETE: {printed:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        printed.extend(streamable_http.printed());
    }

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
