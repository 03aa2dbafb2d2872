//! `lowdown-server scan` as a user runs it: against a fixture Registry and fixture MCP
//! servers on loopback, on SQLite and PostgreSQL; the summary on stdout, progress lines on
//! stderr, the answers filled; and refusals without the unsafe flag.

use crate::common;
use crate::scanner_fixtures;

use std::process::Command;

use common::{lowdown_server, TestDb};
use scanner_fixtures::mcp::Mcp;
use scanner_fixtures::registry::{entry, streamable, Registry};
use serde_json::Value;

async fn the_scan_command_fills_the_answers(t: &TestDb) {
    let mcp = Mcp::start(false).await;
    let registry = Registry::start().await;
    registry.set_entries(
        vec![
            streamable("io.fixture/paged", &mcp.url("paged", "")),
            streamable("io.fixture/auth", &mcp.url("auth", "")),
            entry("io.fixture/stdio", "0.3.0", "active", true, &[]),
        ],
        2,
    );
    let args = |extra: &[&str]| -> Vec<String> {
        [
            "scan",
            "--db",
            &t.url,
            "--registry-url",
            &registry.url,
            "--concurrency",
            "4",
            // The fixture entries declare npm packages; tests/it/packages.rs checks them.
            "--skip-packages",
        ]
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
    };

    // Without the unsafe flag the fixture Registry on 127.0.0.1 is out of reach.
    let out = lowdown_server(args(&[])).await;
    assert_eq!(out.status.code(), Some(1));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["status"], "registry_failed");
    assert!(
        summary["error"].as_str().unwrap().contains("refused"),
        "{summary}"
    );
    assert!(registry.seen().is_empty(), "nothing was sent to it");

    let out = lowdown_server(args(&["--unsafe-allow-loopback"])).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    for (field, want) in [
        ("status", Value::from("completed")),
        ("pages", 2.into()),
        ("entries", 3.into()),
        ("active_latest", 3.into()),
        ("probeable", 2.into()),
        ("members", 3.into()),
        ("probed", 2.into()),
        ("no_probeable_remote", 1.into()),
    ] {
        assert_eq!(summary[field], want, "{field} in {summary}");
    }
    assert_eq!(summary["by_level"], serde_json::json!({"0": 1, "2": 1}));
    // Not a terminal: plain lines, no bar redraws.
    assert!(stderr.contains("scan: run sr_"), "{stderr}");
    assert!(stderr.contains("scan: done, 2/2 remotes"), "{stderr}");
    assert!(!stderr.contains('\r'), "{stderr}");

    let app = t.app();
    let paged = common::get(&app, "/api/reputation/mcp:io.fixture/paged")
        .await
        .json;
    assert_eq!(paged["scanner"]["latest"]["tool_count"], 5);
    assert_eq!(paged["registry"]["declared_version"], "1.0.0");
    let auth = common::get(&app, "/api/reputation/mcp:io.fixture/auth")
        .await
        .json;
    assert_eq!(auth["scanner"]["latest"]["http_status"], 401);
    let stdio = common::get(&app, "/api/reputation/mcp:io.fixture/stdio")
        .await
        .json;
    assert_eq!(
        stdio["scanner"]["missing_days"][0]["reason"],
        "no_probeable_remote"
    );

    // A smaller cohort is refused with a clear message and nothing recorded.
    let out = lowdown_server(args(&["--unsafe-allow-loopback", "--cohort-size", "1"])).await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("smaller than the cohort's size 5000"),
        "{stderr}"
    );
    assert_eq!(t.count("scan_runs").await, 2);
}
on_both!(the_scan_command_fills_the_answers);

#[tokio::test]
async fn the_unsafe_flag_says_so_and_bad_options_are_refused() {
    let out = lowdown_server(vec!["scan".into(), "--help".into()]).await;
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("--unsafe-allow-loopback") && help.contains("UNSAFE"),
        "{help}"
    );
    let out = lowdown_server(vec!["serve".into(), "--scan-at".into(), "7:00".into()]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected HH:MM"));
    for (args, says) in [
        (
            &["--concurrency", "0"][..],
            "expected a number from 1 to 1024",
        ),
        (
            &["--per-host-concurrency", "0"],
            "expected a number from 1 to 1024",
        ),
        (
            &["--per-host-concurrency", "many"],
            "expected a number from 1 to 1024",
        ),
        (&["--cohort", "everything"], "[possible values: fixed, all]"),
        (
            &["--cohort", "all", "--cohort-size", "10"],
            "cannot be used with",
        ),
    ] {
        let mut argv = vec!["scan".to_owned()];
        argv.extend(args.iter().map(|a| a.to_string()));
        let out = lowdown_server(argv).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    let out = lowdown_server(vec![
        "--registry-url".into(),
        "https://r.example.com".into(),
        "scan".into(),
    ])
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("after the subcommand"));
}

/// `serve --scan-at` and the bare command with `--scan-at` both serve the API.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_with_a_daily_scan_serves_and_the_bare_command_is_serve() {
    let dir = std::env::temp_dir().join(format!("lowdown-scan-at-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, first) in [Some("serve"), None].into_iter().enumerate() {
        let port = scanner_fixtures::closed_port().await;
        let db = dir.join(format!("s{i}.db"));
        let mut args: Vec<String> = first.into_iter().map(str::to_owned).collect();
        args.extend(
            [
                "--scan-at",
                "03:17",
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--db",
                db.to_str().unwrap(),
            ]
            .map(str::to_owned),
        );
        let mut child = Command::new(env!("CARGO_BIN_EXE_lowdown-server"))
            .args(&args)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut up = false;
        for _ in 0..200 {
            if reqwest::get(format!("http://127.0.0.1:{port}/healthz"))
                .await
                .is_ok_and(|r| r.status() == 200)
            {
                up = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        assert!(up, "{:?}: {}", args, String::from_utf8_lossy(&out.stderr));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("daily scan enabled"),
            "{args:?}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}
