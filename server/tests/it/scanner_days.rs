//! Day over day: runs on past days (a shifted clock) and today, as a user reads them in
//! the answer: the daily strip, missing days and why, definition changes, Registry
//! changes, the message, and that Scanner data never touches the interaction numbers.
//! On SQLite and PostgreSQL.

use crate::common;
use crate::scanner_fixtures;
use common::day;

use common::{mcp_answer, record, TestDb};
use lowdown_server::scanner::run;
use scanner_fixtures::mcp::Mcp;
use scanner_fixtures::registry::{entry, streamable, Registry};
use scanner_fixtures::{config, on_day, MapLookup};
use serde_json::{json, Value};

async fn a_changed_description_and_a_removed_entry_show_up_day_over_day(t: &TestDb) {
    let mcp = Mcp::start(false).await;
    let registry = Registry::start().await;
    let weather = streamable("io.fixture/weather", &mcp.url("ok", "weather"));
    let maps = streamable("io.fixture/maps", &mcp.url("ok", "maps"));
    let local = entry(
        "io.fixture/local",
        "1.0.0",
        "active",
        true,
        &[("stdio", "file:///x")],
    );
    registry.set_entries(vec![weather.clone(), maps.clone(), local.clone()], 2);
    let cfg = config(&registry.url, MapLookup::default());

    // Three days ago and yesterday: same definitions. Two days ago: no run.
    assert_eq!(
        run(&t.db, &on_day(&cfg, -3)).await.unwrap().status,
        "completed"
    );
    assert_eq!(
        run(&t.db, &on_day(&cfg, -1)).await.unwrap().status,
        "completed"
    );
    // Today: `search` has a new description, and `maps` left the Registry.
    mcp.set_description("Search the web, now with maps");
    registry.set_entries(vec![weather, local], 2);
    let s = run(&t.db, &cfg).await.unwrap();
    assert_eq!(
        (s.status.as_str(), s.not_listed, s.probed),
        ("completed", 1, 1)
    );

    let w = mcp_answer(t, "io.fixture/weather").await;
    assert_eq!(
        w["message"],
        format!("MCP Registry declaration recorded; observed daily by Lowdown Scanner since {}; no agent-reported interactions.", day(-3))
    );
    let sc = &w["scanner"];
    assert_eq!(
        (&sc["observed"], &sc["in_sample"]),
        (&json!(true), &json!(true))
    );
    let strip: Vec<(String, bool)> = sc["daily_30d"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["day"].as_str().unwrap().to_owned(),
                d["tools_changed"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(strip, [(day(-3), false), (day(-1), false), (day(0), true)]);
    assert_eq!(sc["daily_30d"][2]["reached_level"], 2);
    assert_eq!(
        sc["missing_days"],
        json!([{"day": day(-2), "reason": "scanner_did_not_run"}])
    );
    assert_eq!(sc["observations_30d"], 3);
    let dc = &sc["definition_changes"];
    assert_eq!(dc["pattern"], "changed");
    assert_eq!(dc["last_change"], day(0));
    assert_eq!(dc["stable_days_before_last_change"], 3);
    assert_eq!(dc["events"][0]["changed"], json!(["description"]));
    assert_eq!(dc["events"][0]["tools_added"], json!([]));
    assert!(
        !w.to_string().contains("now with maps"),
        "descriptions are never answered"
    );
    assert_eq!(
        sc["declared_vs_observed"],
        json!({"declared_version": "1.0.0", "observed_server_version": "1.4.2",
               "declared_hosts": ["127.0.0.1"], "observed_hosts": ["127.0.0.1"]})
    );
    assert_eq!(w["registry"]["recorded_since_baseline"], true);
    assert_eq!(w["registry"]["changes_30d"], json!([]));
    assert_eq!(w["interactions"], 0);
    assert_eq!(w["success_rate"], Value::Null);
    assert_eq!(w["confidence"], "none");

    // The answer is what /openapi.json says it is.
    let doc = common::get(&t.app(), "/openapi.json").await.json;
    crate::openapi::assert_documented(&doc, "get", "/api/reputation/{target}", 200, &w);

    let m = mcp_answer(t, "io.fixture/maps").await;
    assert_eq!(m["registry"]["listed"], false);
    assert_eq!(
        m["registry"]["changes_30d"],
        json!([{"day": day(0), "field": "listed", "from": true, "to": false}])
    );
    assert_eq!(
        m["scanner"]["missing_days"],
        json!([{"day": day(-2), "reason": "scanner_did_not_run"}, {"day": day(0), "reason": "not_listed"}])
    );
    assert_eq!(
        m["scanner"]["definition_changes"]["pattern"],
        "not_enough_observations"
    );
    assert!(m["message"]
        .as_str()
        .unwrap()
        .starts_with("MCP Registry declaration recorded (no longer listed);"));

    let l = mcp_answer(t, "io.fixture/local").await;
    assert_eq!(l["scanner"]["observed"], false);
    assert_eq!(
        l["scanner"]["missing_days"],
        json!([
            {"day": day(-3), "reason": "no_probeable_remote"},
            {"day": day(-2), "reason": "scanner_did_not_run"},
            {"day": day(-1), "reason": "no_probeable_remote"},
            {"day": day(0), "reason": "no_probeable_remote"}
        ])
    );
    assert_eq!(
        l["message"],
        "MCP Registry declaration recorded; in the Lowdown Scanner sample, not observed yet; no agent-reported interactions."
    );
}
on_both!(a_changed_description_and_a_removed_entry_show_up_day_over_day);

async fn scanner_data_never_changes_rates_or_rankings(t: &TestDb) {
    let mcp = Mcp::start(false).await;
    let registry = Registry::start().await;
    registry.set_entries(
        vec![
            streamable("io.fixture/up", &mcp.url("ok", "up")),
            streamable("io.fixture/down", &mcp.url("auth", "down")),
        ],
        10,
    );
    run(&t.db, &config(&registry.url, MapLookup::default()))
        .await
        .unwrap();
    let app = t.app();
    // `down` answers 401 to the Scanner but has agent-reported successes; `up` reaches
    // level 2 with one agent-reported failure.
    let records = json!([
        record("mcp:io.fixture/down", "success"),
        record("mcp:io.fixture/down", "success"),
        record("mcp:io.fixture/up", "failure"),
    ]);
    assert_eq!(
        common::post(&app, "/api/interactions", &records)
            .await
            .status,
        201
    );
    let down = mcp_answer(t, "io.fixture/down").await;
    assert_eq!(down["success_rate"], 1.0);
    assert_eq!(down["rated_interactions"], 2);
    assert_eq!(down["scanner"]["latest"]["http_status"], 401);
    assert!(
        down["message"].as_str().unwrap().ends_with(
            "since {}. mcp:io.fixture/down: 2 organic tool calls rated, 100.0% succeeded."
                .replace("{}", &day(0))
                .as_str()
        ),
        "{}",
        down["message"]
    );
    let up = mcp_answer(t, "io.fixture/up").await;
    assert_eq!(up["success_rate"], 0.0);
    let c = common::get(
        &app,
        "/api/compare?targets=mcp:io.fixture/up,mcp:io.fixture/down",
    )
    .await;
    let ranked: Vec<&str> = c.json["ranked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["target"].as_str().unwrap())
        .collect();
    assert_eq!(
        ranked,
        ["mcp:io.fixture/down", "mcp:io.fixture/up"],
        "{}",
        c.text
    );
    // The source block stays last.
    let text = common::get(&app, "/api/reputation/mcp:io.fixture/up")
        .await
        .text;
    assert!(text.rfind("\"source\"").unwrap() > text.rfind("\"scanner\"").unwrap());
    // A short name resolves to a Registry entry with no interactions.
    let short = common::get(&app, "/api/reputation/up").await;
    assert_eq!(
        short.json["resolved_target"], "mcp:io.fixture/up",
        "{}",
        short.text
    );
}
on_both!(scanner_data_never_changes_rates_or_rankings);
