//! `/t/{target}/changes` and its RSS and JSON feeds (issue 28 item 2), after Scanner runs on
//! past days and records of two server versions: each kind of change dated, with its
//! source and sample sizes; ids that hold as counts grow; feeds in their formats; a path
//! that is a target of its own stays that target's page. On SQLite and PostgreSQL.

use crate::common;
use crate::scanner_fixtures;
use common::day;

use common::{get, post, record, TestDb};
use lowdown_server::scanner::run;
use scanner_fixtures::mcp::Mcp;
use scanner_fixtures::registry::{entry, streamable, Registry};
use scanner_fixtures::{config, on_day, MapLookup};
use serde_json::{json, Value};

const URL: &str = "/t/mcp:io.fixture/weather/changes";

fn versioned(version: &str, outcome: &str) -> Value {
    let mut r = record("mcp:io.fixture/weather", outcome);
    r["server_version"] = json!(version);
    r
}

async fn a_targets_changes_as_a_page_and_two_feeds(t: &TestDb) {
    let mcp = Mcp::start(false).await;
    let registry = Registry::start().await;
    let weather = streamable("io.fixture/weather", &mcp.url("ok", "weather"));
    registry.set_entries(vec![weather.clone()], 10);
    let cfg = config(&registry.url, MapLookup::default());
    for d in [-3, -2] {
        assert_eq!(
            run(&t.db, &on_day(&cfg, d)).await.unwrap().status,
            "completed"
        );
    }
    // Yesterday: a new declared version; today: new tool descriptions.
    let mut newer = weather.clone();
    newer["server"]["version"] = json!("1.1.0");
    // And a target whose Registry name ends in /changes, which keeps its own page.
    registry.set_entries(
        vec![
            newer,
            entry("io.fixture/changes", "1.0.0", "active", true, &[]),
        ],
        10,
    );
    run(&t.db, &on_day(&cfg, -1)).await.unwrap();
    mcp.set_description("Search the web, now with rain");
    run(&t.db, &cfg).await.unwrap();

    let app = t.app();
    let mut records: Vec<Value> = (0..12).map(|_| versioned("1.0.0", "success")).collect();
    assert_eq!(
        post(&app, "/api/interactions", &json!(records))
            .await
            .status,
        201
    );
    records = vec![versioned("1.1.0", "success"), versioned("1.1.0", "failure")];
    assert_eq!(
        post(&app, "/api/interactions", &json!(records))
            .await
            .status,
        201
    );

    let feed = get(&app, &format!("{URL}.json")).await;
    assert_eq!(feed.status, 200, "{}", feed.text);
    assert_eq!(
        feed.headers["content-type"],
        "application/feed+json; charset=utf-8"
    );
    assert_eq!(feed.json["version"], "https://jsonfeed.org/version/1.1");
    let items = feed.json["items"].as_array().unwrap();
    let kinds: Vec<(&str, &str)> = items
        .iter()
        .map(|i| {
            (
                i["date_published"].as_str().unwrap(),
                i["tags"][0].as_str().unwrap(),
            )
        })
        .collect();
    let (today, yesterday) = (
        format!("{}T00:00:00Z", day(0)),
        format!("{}T00:00:00Z", day(-1)),
    );
    assert_eq!(
        kinds,
        [
            (today.as_str(), "definitions"),
            (today.as_str(), "version"),
            (today.as_str(), "version"),
            (yesterday.as_str(), "registry"),
        ],
        "{}",
        feed.text
    );
    assert_eq!(
        items[3]["_lowdown"],
        json!({"day": day(-1), "kind": "registry", "source": "the official MCP Registry", "recent": true})
    );
    let titles: Vec<&str> = items.iter().map(|i| i["title"].as_str().unwrap()).collect();
    assert_eq!(
        titles[1],
        "new server version 1.0.0: 100.0% of 12 rated calls succeeded"
    );
    assert_eq!(
        titles[2],
        "new server version 1.1.0: 2 rated calls so far; version before, 1.0.0: 100.0% of 12 rated calls succeeded"
    );
    assert_eq!(titles[3], "MCP Registry version: 1.0.0 → 1.1.0");
    assert!(
        titles[0].starts_with("tool definitions changed (description)"),
        "{}",
        titles[0]
    );
    assert_eq!(
        items[2]["id"],
        format!(
            "lowdown-change:mcp:io.fixture/weather:{}:version:1.1.0",
            day(0)
        )
    );
    // More calls: the title grows, the id holds.
    post(
        &app,
        "/api/interactions",
        &json!([versioned("1.1.0", "success")]),
    )
    .await;
    let again = get(&app, &format!("{URL}.json")).await.json;
    assert_eq!(again["items"][2]["id"], items[2]["id"]);
    assert_ne!(again["items"][2]["title"], items[2]["title"]);

    let rss = get(&app, &format!("{URL}.rss")).await;
    assert_eq!(
        rss.headers["content-type"],
        "application/rss+xml; charset=utf-8"
    );
    assert!(rss.text.starts_with("<?xml") && rss.text.contains("<rss version=\"2.0\""));
    assert_eq!(rss.text.matches("<item>").count(), 4);
    assert!(rss.text.contains(&format!(
        "<guid isPermaLink=\"false\">lowdown-change:mcp:io.fixture/weather:{}:registry:version</guid>",
        day(-1)
    )));
    let page = get(&app, URL).await;
    assert_eq!(page.status, 200);
    assert!(page
        .text
        .contains("<h1>Changes: mcp:io.fixture/weather</h1>"));
    assert!(page.text.contains("MCP Registry version: 1.0.0 → 1.1.0"));

    // `io.fixture/changes` is a Registry entry: its own page, not a change list.
    let own = get(&app, "/t/mcp:io.fixture/changes").await;
    assert!(
        own.text.contains("<h1>mcp:io.fixture/changes</h1>"),
        "{}",
        own.status
    );
    // Nothing recorded: a 404 page, as for any unknown target.
    assert_eq!(
        get(&app, "/t/mcp:io.fixture/nothing/changes").await.status,
        404
    );
}
on_both!(a_targets_changes_as_a_page_and_two_feeds);
