//! The pages, as a reader sees them: the home page and its search, a target page whose
//! charts carry the API answer's numbers (a broken release is a step between versions), a
//! Registry entry's Scanner strip, and hostile names that stay text. On SQLite and
//! PostgreSQL. (The browser test in tests/pages/ opens them in Chromium.)

use crate::common;
use crate::scanner_fixtures;

use common::TestDb;
use lowdown_server::scanner::run;
use scanner_fixtures::mcp::Mcp;
use scanner_fixtures::registry::{streamable, Registry};
use scanner_fixtures::{config, on_day, MapLookup};
use serde_json::{json, Value};

const NODE: &str = "ld_pagestest01";
const H1: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const H2: &str = "2222222222222222222222222222222222222222222222222222222222222222";

fn rec(target: &str, outcome: &str, version: &str, hash: &str, latency: f64) -> Value {
    let mut r = json!({"actor": "agent:test", "target": target, "target_type": "tool", "task_type": "search",
        "outcome": outcome, "server_version": version, "schema_hash": hash, "latency_ms": latency, "node_id": NODE});
    if outcome == "failure" {
        r["failure_type"] = json!("tool_error");
        r["error_layer"] = json!("tool");
    }
    r
}

/// The `data-*` attributes of every `<g class="bar">` in the figure with `id`.
fn bars(html: &str, id: &str) -> Vec<Vec<(String, String)>> {
    let start = html
        .find(&format!("<figure id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no figure {id}"));
    let fig = &html[start..start + html[start..].find("</figure>").unwrap()];
    fig.split("<g class=\"bar\" ")
        .skip(1)
        .map(|g| {
            let head = &g[..g.find('>').unwrap()];
            head.split("\" ")
                .filter_map(|kv| kv.split_once("=\""))
                .map(|(k, v)| {
                    (
                        k.trim_start_matches("data-").to_owned(),
                        v.trim_end_matches('"').to_owned(),
                    )
                })
                .collect()
        })
        .collect()
}

fn attr<'a>(bar: &'a [(String, String)], key: &str) -> &'a str {
    &bar.iter().find(|(k, _)| k == key).unwrap().1
}

async fn a_target_page_draws_the_answer(t: &TestDb) {
    let app = t.app();
    let target = "npm:@fixture/pages";
    let mut records = Vec::new();
    for _ in 0..4 {
        records.push(rec(target, "success", "1.0.0", H1, 120.0));
    }
    records.push(rec(target, "success", "1.10.0", H2, 900.0));
    for _ in 0..3 {
        records.push(rec(target, "failure", "1.10.0", H2, 2400.0));
    }
    records.push(rec(target, "success", "1.9.0", H1, 130.0));
    let r = common::post(&app, "/api/interactions", &json!(records)).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let api = common::get_as(
        &app,
        &format!("/api/reputation/{target}"),
        &[("x-lowdown-node-id", NODE)],
    )
    .await
    .json;

    let page = common::get(&app, &format!("/t/{target}")).await;
    assert_eq!(page.status, 200);
    let html = &page.text;
    assert!(html.starts_with("<!doctype html>\n<html lang=\"en\">"));
    assert!(html.contains(&format!("<h1>{target}</h1>")));
    assert!(!html.contains("<script"), "no script on any page");
    assert!(
        !html.contains("http://") || !html.contains("src=\"http"),
        "no external asset"
    );

    // Versions in release order (1.9.0 before 1.10.0): the broken release is a step down.
    let v = bars(html, "by-version");
    let labels: Vec<&str> = v.iter().map(|b| attr(b, "label")).collect();
    assert_eq!(labels, ["1.0.0", "1.9.0", "1.10.0"]);
    for b in &v {
        let row = &api["by_server_version"][attr(b, "label")];
        assert_eq!(
            attr(b, "rate").parse::<f64>().unwrap(),
            row["success_rate"].as_f64().unwrap()
        );
        assert_eq!(attr(b, "n"), row["rated_interactions"].to_string());
        assert_eq!(attr(b, "interactions"), row["interactions"].to_string());
    }
    assert_eq!((attr(&v[1], "rate"), attr(&v[2], "rate")), ("1", "0.25"));
    let h = bars(html, "by-schema");
    assert_eq!(h.len(), 2);
    assert_eq!(
        attr(&h[1], "rate").parse::<f64>().unwrap(),
        api["by_schema_hash"][H2]["success_rate"].as_f64().unwrap()
    );
    let d = bars(html, "by-day");
    assert_eq!(d.len(), api["recent_trends"].as_array().unwrap().len());
    assert_eq!(
        attr(&d[0], "n"),
        api["recent_trends"][0]["count"].to_string()
    );
    let l = bars(html, "latency");
    assert_eq!(
        attr(&l[0], "value").parse::<f64>().unwrap(),
        api["latency_ms"]["p50"].as_f64().unwrap()
    );
    assert_eq!(
        attr(&l[2], "value").parse::<f64>().unwrap(),
        api["latency_ms"]["p95"].as_f64().unwrap()
    );
    assert!(
        html.contains("n = 9;"),
        "the latency sample is every rated call with a latency"
    );
    let f = bars(html, "failures");
    assert_eq!(
        (attr(&f[0], "label"), attr(&f[0], "value")),
        ("tool_error", "3")
    );
    assert!(html.contains("n = 3 failures"));
    // Every chart has a text equivalent and a caption naming its source.
    for id in ["by-day", "by-version", "by-schema", "latency", "failures"] {
        let start = html.find(&format!("<figure id=\"{id}\">")).unwrap();
        let fig = &html[start..start + html[start..].find("</figure>").unwrap()];
        assert!(
            fig.contains("role=\"img\"") && fig.contains("<title id=") && fig.contains("<desc id="),
            "{id}"
        );
        assert!(
            fig.contains("<table>") && fig.contains("Source: Lowdown records"),
            "{id}"
        );
    }
    assert!(html.contains(api["message"].as_str().unwrap()));
}
on_both!(a_target_page_draws_the_answer);

async fn a_registry_entry_shows_the_scanner_strip(t: &TestDb) {
    let mcp = Mcp::start(false).await;
    let registry = Registry::start().await;
    registry.set_entries(
        vec![streamable("io.fixture/weather", &mcp.url("ok", "w"))],
        5,
    );
    let cfg = config(&registry.url, MapLookup::default());
    run(&t.db, &on_day(&cfg, -3)).await.unwrap();
    run(&t.db, &on_day(&cfg, -1)).await.unwrap();
    run(&t.db, &cfg).await.unwrap();
    let app = t.app();
    let api = common::get(&app, "/api/reputation/mcp:io.fixture/weather")
        .await
        .json;
    let page = common::get(&app, "/t/mcp:io.fixture/weather").await;
    assert_eq!(page.status, 200);
    let html = &page.text;
    let start = html.find("<figure id=\"strip\">").unwrap();
    let fig = &html[start..start + html[start..].find("</figure>").unwrap()];
    let cells: Vec<&str> = fig.split("<g class=\"day\" ").skip(1).collect();
    let daily = api["scanner"]["daily_30d"].as_array().unwrap();
    let missing = api["scanner"]["missing_days"].as_array().unwrap();
    assert_eq!(cells.len(), daily.len() + missing.len());
    assert_eq!((daily.len(), missing.len()), (3, 1));
    for d in daily {
        assert!(
            fig.contains(&format!(
                "data-day=\"{}\" data-level=\"{}\" data-status=\"200\"",
                d["day"].as_str().unwrap(),
                d["reached_level"]
            )),
            "{d}"
        );
    }
    assert!(fig.contains(&format!(
        "data-day=\"{}\" data-level=\"\" data-status=\"\" data-missing=\"scanner_did_not_run\"",
        missing[0]["day"].as_str().unwrap()
    )));
    for section in [
        "What the Scanner observed",
        "Declared and observed",
        "What the MCP Registry declares",
        "Packages",
    ] {
        assert!(html.contains(section), "{section}");
    }
    assert!(
        html.contains("<td>1.0.0</td><td>1.4.2</td>"),
        "declared against observed version"
    );
}
on_both!(a_registry_entry_shows_the_scanner_strip);

async fn the_home_page_searches_and_lists(t: &TestDb) {
    let app = t.app();
    let evil = "npm:evil\"><script>alert(1)</script>";
    let batch = json!([
        common::record("npm:@fixture/alpha-search", "success"),
        common::record("npm:@fixture/alpha-search", "success"),
        common::record("npm:@fixture/beta-search", "failure"),
        common::record(evil, "success"),
        {"actor": "a", "target": "npm:@fixture/beta-search", "target_type": "tool", "task_type": "<img src=x onerror=alert(2)>", "outcome": "success"},
    ]);
    let r = common::post(&app, "/api/interactions", &batch).await;
    assert_eq!(r.json["accepted"], 5, "{}", r.text);
    let home = common::get(&app, "/").await;
    assert_eq!(home.status, 200);
    assert!(home
        .text
        .contains("<form class=\"search\" role=\"search\" action=\"/\" method=\"get\">"));
    assert!(home.text.contains("<label for=\"q\">"));
    let alpha = home
        .text
        .find("npm:@fixture/alpha-search</a></th><td class=\"n\">2</td>")
        .expect("alpha listed with 2");
    let beta = home
        .text
        .find("npm:@fixture/beta-search</a></th><td class=\"n\">2</td>")
        .expect("beta listed with 2");
    assert!(alpha < beta, "ties by name");

    let one = common::get(&app, "/?q=alpha-search").await;
    assert_eq!(one.status, 303);
    assert_eq!(one.headers["location"], "/t/npm:@fixture/alpha-search");
    let many = common::get(&app, "/?q=search").await;
    assert_eq!(many.status, 200);
    assert!(many
        .text
        .contains("<ul id=\"candidates\"><li><a href=\"/t/npm:@fixture/alpha-search\">"));
    let none = common::get(&app, "/?q=nothing-like-it").await;
    assert_eq!(none.status, 404);
    assert!(none
        .text
        .contains("Nothing recorded under <q>nothing-like-it</q>"));
    let unknown = common::get(&app, "/t/npm:never-recorded").await;
    assert_eq!(unknown.status, 404);

    // Hostile names are text everywhere they appear.
    let hostile = common::get(&app, "/?q=%3Cscript%3Ealert(3)%3C%2Fscript%3E").await;
    let evil_page = common::get(&app, "/t/npm:evil%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E").await;
    assert_eq!(evil_page.status, 200);
    let beta_page = common::get(&app, "/t/npm:@fixture/beta-search").await;
    for text in [&home.text, &hostile.text, &evil_page.text, &beta_page.text] {
        assert!(
            !text.contains("<script>alert") && !text.contains("<img src=x"),
            "{text}"
        );
    }
    assert!(evil_page
        .text
        .contains("npm:evil&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(home
        .text
        .contains("href=\"/t/npm:evil%22%3E%3Cscript%3Ealert%281%29%3C/script%3E\""));
    assert!(beta_page
        .text
        .contains("&lt;img src=x onerror=alert(2)&gt;"));
}
on_both!(the_home_page_searches_and_lists);

#[tokio::test]
async fn openapi_and_llms_txt_describe_the_pages_and_blocks() {
    let t = TestDb::new(common::Kind::Sqlite).await.unwrap();
    let doc = common::get(&t.app(), "/openapi.json").await.json;
    for p in [
        "/",
        "/t/{target}",
        "/daily/{day}",
        "/daily/latest",
        "/daily/feed.xml",
        "/daily/feed.json",
    ] {
        assert!(doc["paths"][p]["get"].is_object(), "{p}");
    }
    let llms = common::get(&t.app(), "/llms.txt").await.text;
    for said in [
        "GET /t/{target}",
        "/daily/{YYYY-MM-DD}",
        "/daily/feed.xml",
        "/daily/feed.json",
        "registry_entries",
        "`packages`",
        "latest_deprecated",
        "latest_yanked",
        "export --out",
    ] {
        assert!(llms.contains(said), "llms.txt does not explain {said}");
    }
    t.cleanup().await;
}
