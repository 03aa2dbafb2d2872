use super::*;
use crate::scanner::changes::FromTo;
use serde_json::json;

const DAY: i64 = 86_400_000;
// 2026-12-07T00:00:00Z
const TODAY_MS: i64 = 1_796_601_600_000;

fn change(day: &str, field: &str, from: serde_json::Value, to: serde_json::Value) -> DayChange {
    DayChange {
        day: day.into(),
        field: field.into(),
        from,
        to,
    }
}

fn daily(day: &str, level: u8, status: Option<u16>) -> Daily {
    Daily {
        day: day.into(),
        reached_level: level,
        http_status: status,
        tool_count: None,
        tools_changed: false,
        error_type: None,
    }
}

fn seen(value: &str, days_ago: i64, rated: u64, successes: u64) -> FirstSeen {
    FirstSeen {
        value: value.into(),
        first_seen_ms: TODAY_MS - days_ago * DAY + 3_600_000,
        rated,
        successes,
    }
}

#[test]
fn every_kind_dated_newest_first_with_facts_and_sources() {
    assert_eq!(day_of(TODAY_MS), "2026-12-07");
    let f = ChangeFacts {
        today: "2026-12-07".into(),
        registry: vec![change(
            "2026-12-05",
            "status",
            json!("active"),
            json!("deprecated"),
        )],
        packages: vec![(
            "npm:@x/y".into(),
            vec![change(
                "2026-12-06",
                "latest_deprecated",
                json!(false),
                json!(true),
            )],
        )],
        daily: vec![
            daily("2026-12-01", 2, Some(200)),
            daily("2026-12-02", 2, Some(200)),
            daily("2026-12-04", 0, Some(503)),
            daily("2026-12-05", 0, None),
        ],
        definitions: vec![Event {
            day: "2026-12-03".into(),
            remote_url: "https://x.example.com/mcp".into(),
            changed: vec!["schema".into(), "names".into()],
            tool_count: FromTo {
                from: Some(3),
                to: Some(4),
            },
            tools_added: vec!["delete_all".into()],
            tools_removed: vec![],
        }],
        versions: vec![seen("1.0.0", 60, 400, 390), seen("1.1.0", 2, 40, 20)],
        schemas: vec![seen("abcdef0123456789", 2, 3, 3), seen("old", 45, 100, 99)],
    };
    let c = changes("mcp:io.x/y", &f);
    let rows: Vec<(&str, &str, &str)> = c
        .iter()
        .map(|c| (c.day.as_str(), c.kind.as_str(), c.title.as_str()))
        .collect();
    assert_eq!(
        rows,
        [
            ("2026-12-06", "package", "npm:@x/y latest_deprecated: false → true"),
            ("2026-12-05", "registry", "MCP Registry status: active → deprecated"),
            ("2026-12-05", "schema", "new tool schema hash abcdef012345…: 3 rated calls so far"),
            ("2026-12-05", "version", "new server version 1.1.0: 50.0% of 40 rated calls succeeded; version before, 1.0.0: 97.5% of 400 rated calls succeeded"),
            ("2026-12-04", "reachability", "reachability: level 2 (HTTP 200) on 2026-12-02 → level 0 (HTTP 503)"),
            ("2026-12-03", "definitions", "tool definitions changed (schema, names): 3 → 4 tools; added delete_all"),
        ],
        "1.0.0 and the old hash were first seen before the window; 503 → no response is no level change"
    );
    assert_eq!(
        c[3].id,
        "lowdown-change:mcp:io.x/y:2026-12-05:version:1.1.0"
    );
    assert_eq!(c[3].source, "records of Lowdown nodes (organic)");
    // The id holds as the counts in a title grow.
    let mut more = f.clone();
    more.versions[1].rated = 90;
    let again = changes("mcp:io.x/y", &more);
    assert_ne!(again[3].title, c[3].title);
    assert_eq!(again[3].id, c[3].id);
    let recent: Vec<&str> = recent(&c, "2026-12-07").map(|c| c.kind.as_str()).collect();
    assert_eq!(recent.len(), 6);
    assert_eq!(
        super::recent(&c, "2026-12-11").count(),
        4,
        "from the 5th: 7 days"
    );
}

#[test]
fn nothing_recorded_is_no_change() {
    assert!(changes(
        "t",
        &ChangeFacts {
            today: "2026-12-07".into(),
            ..ChangeFacts::default()
        }
    )
    .is_empty());
}

#[test]
fn made_up_versions_cannot_flood_the_feed() {
    let f = ChangeFacts {
        today: "2026-12-07".into(),
        registry: vec![change(
            "2026-12-01",
            "status",
            json!("active"),
            json!("deleted"),
        )],
        versions: (0..500)
            .map(|i| seen(&format!("0.0.{i}"), i % 20, 1, 0))
            .collect(),
        schemas: (0..500).map(|i| seen(&format!("h{i}"), 3, 1, 1)).collect(),
        ..ChangeFacts::default()
    };
    let c = changes("t", &f);
    let count = |k: &str| c.iter().filter(|c| c.kind == k).count();
    assert_eq!(
        (count("version"), count("schema"), count("registry")),
        (MAX_FIRSTS, MAX_FIRSTS, 1)
    );
    assert!(
        c.iter()
            .filter(|c| c.kind == "version")
            .all(|c| c.day.as_str() >= "2026-12-06"),
        "the newest kept"
    );
}
