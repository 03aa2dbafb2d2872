use super::*;
use crate::scanner::changes::Pattern;

const URL: &str = "https://mcp.example.com/mcp";

fn obs(day: &str, level: u8, status: Option<u16>, schema: &str) -> StoredObservation {
    StoredObservation {
        day: day.into(),
        observed_at_ms: day_number(day).unwrap() * 86_400_000 + 6 * 3_600_000,
        remote_url: URL.into(),
        reached_level: level,
        http_status: status,
        tool_count: (level == 2).then_some(3),
        schema_hash: (level == 2).then(|| schema.to_owned()),
        desc_hash: (level == 2).then(|| "d".to_owned()),
        name_hash: (level == 2).then(|| "n".to_owned()),
        server_version: Some("1.0.0".into()),
        tool_names: if level == 2 {
            vec!["search".into()]
        } else {
            vec![]
        },
        ..StoredObservation::default()
    }
}

fn member(today: &str) -> ScannerFacts {
    ScannerFacts {
        today: today.into(),
        first_run_day: Some("2026-10-01".into()),
        joined_day: Some("2026-10-01".into()),
        declared_version: Some("1.0.0".into()),
        declared_hosts: vec!["mcp.example.com".into()],
        ..ScannerFacts::default()
    }
}

#[test]
fn outside_the_sample_the_block_says_nothing_about_the_server() {
    let b = scanner_block(&ScannerFacts {
        target: "mcp:io.example/x".into(),
        today: "2026-10-10".into(),
        ..ScannerFacts::default()
    });
    let v = serde_json::to_value(&b).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"target": "mcp:io.example/x", "observed": false, "in_sample": false, "note": NOT_IN_SAMPLE_NOTE})
    );
}

#[test]
fn a_member_gets_a_strip_missing_days_with_reasons_and_changes() {
    let mut f = member("2026-10-06");
    f.run_days = ["01", "02", "04", "05", "06"]
        .iter()
        .map(|d| (format!("2026-10-{d}"), *d != "05"))
        .collect();
    f.skips = vec![("2026-10-06".into(), MissingReason::NotListed)];
    f.observations = vec![
        obs("2026-10-01", 2, Some(200), "s1"),
        obs("2026-10-02", 2, Some(200), "s1"),
        obs("2026-10-04", 2, Some(200), "s2"),
    ];
    f.first_observed_at_ms = Some(f.observations[0].observed_at_ms);
    let b = scanner_block(&f);
    assert!(b.observed && b.in_sample);
    let seen = b.seen.unwrap();
    assert_eq!(seen.observations_30d, 3);
    assert_eq!(seen.schema_versions_30d, 2, "s1 and s2");
    assert_eq!(
        seen.status_distribution_30d,
        BTreeMap::from([("200".to_owned(), 3)])
    );
    let d = b.detail.unwrap();
    assert_eq!(
        d.first_observed_at.as_deref(),
        Some("2026-10-01T06:00:00.000Z")
    );
    assert!(!d.observation_method.calls_tools);
    assert_eq!(
        d.daily_30d
            .iter()
            .map(|x| (x.day.as_str(), x.tools_changed))
            .collect::<Vec<_>>(),
        [
            ("2026-10-01", false),
            ("2026-10-02", false),
            ("2026-10-04", true)
        ]
    );
    assert_eq!(
        d.missing_days,
        [
            Missing {
                day: "2026-10-03".into(),
                reason: MissingReason::ScannerDidNotRun
            },
            Missing {
                day: "2026-10-05".into(),
                reason: MissingReason::ScannerDidNotRun
            },
            Missing {
                day: "2026-10-06".into(),
                reason: MissingReason::NotListed
            },
        ]
    );
    assert_eq!(d.definition_changes.pattern, Pattern::Changed);
    assert_eq!(
        d.definition_changes.last_change.as_deref(),
        Some("2026-10-04")
    );
    assert_eq!(d.tool_names, ["search"]);
    assert_eq!(d.declared_vs_observed.observed_hosts, ["mcp.example.com"]);
    assert_eq!(
        d.declared_vs_observed.observed_server_version.as_deref(),
        Some("1.0.0")
    );
}

#[test]
fn the_window_ends_yesterday_until_today_runs_and_joins_late_are_not_in_sample() {
    let mut f = member("2026-10-03");
    f.joined_day = Some("2026-10-02".into());
    f.run_days = vec![("2026-10-01".into(), true), ("2026-10-02".into(), true)];
    let d = scanner_block(&f).detail.unwrap();
    assert_eq!(
        d.missing_days,
        [
            Missing {
                day: "2026-10-01".into(),
                reason: MissingReason::NotInSample
            },
            Missing {
                day: "2026-10-02".into(),
                reason: MissingReason::ScannerDidNotRun
            },
        ],
        "today has no run yet, so it is not listed"
    );
    assert!(!scanner_block(&f).observed);
}

#[test]
fn several_remotes_show_the_days_best_and_its_status() {
    let mut f = member("2026-10-01");
    f.run_days = vec![("2026-10-01".into(), true)];
    let mut down = obs("2026-10-01", 0, Some(503), "");
    down.remote_url = "https://b.example.com/mcp".into();
    down.observed_at_ms += 1000;
    let mut silent = obs("2026-10-01", 0, None, "");
    silent.remote_url = "https://c.example.com/mcp".into();
    f.observations = vec![down, obs("2026-10-01", 1, Some(401), ""), silent];
    let b = scanner_block(&f);
    let seen = b.seen.unwrap();
    assert_eq!(
        seen.status_distribution_30d,
        BTreeMap::from([
            ("401".to_owned(), 1),
            ("503".to_owned(), 1),
            ("no_response".to_owned(), 1)
        ]),
        "statuses as observed, one per observation"
    );
    assert_eq!(seen.schema_versions_30d, 0, "no tools/list answered");
    let d = b.detail.unwrap();
    assert_eq!(d.daily_30d[0].reached_level, 1);
    assert_eq!(d.daily_30d[0].http_status, Some(401));
    let latest = seen.latest.unwrap();
    assert_eq!((latest.reached_level, latest.http_status), (1, Some(401)));
    assert_eq!(
        d.declared_vs_observed.observed_hosts,
        ["b.example.com", "mcp.example.com"]
    );
}

/// Where each of `keys` first appears in `json`, in order (none nested here repeats them).
fn positions(json: &str, keys: &[&str]) -> Vec<usize> {
    keys.iter()
        .map(|k| {
            json.find(&format!("\"{k}\":"))
                .unwrap_or_else(|| panic!("{k} missing"))
        })
        .collect()
}

#[test]
fn a_members_block_keeps_the_order_of_both_printed_answers() {
    let mut f = member("2026-10-01");
    f.target = "mcp:io.example/x".into();
    f.run_days = vec![("2026-10-01".into(), true)];
    f.observations = vec![obs("2026-10-01", 2, Some(200), "s1")];
    f.first_observed_at_ms = Some(f.observations[0].observed_at_ms);
    let b = scanner_block(&f);
    let json = serde_json::to_string(&b).unwrap();
    // Seed 000 prints target, last_observed_at, observations_30d, latest,
    // schema_versions_30d, status_distribution_30d; seed 001 prints last_observed_at,
    // latest, in_sample, first_observed_at, daily_30d, missing_days, declared_vs_observed.
    let order = [
        "target",
        "observed",
        "last_observed_at",
        "observations_30d",
        "latest",
        "schema_versions_30d",
        "status_distribution_30d",
        "in_sample",
        "first_observed_at",
        "daily_30d",
        "tool_names",
        "missing_days",
        "declared_vs_observed",
        "definition_changes",
        "observation_method",
    ];
    let at = positions(&json, &order);
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{json}");
    let v = serde_json::to_value(&b).unwrap();
    assert_eq!(v.as_object().unwrap().len(), order.len());
    assert_eq!(v["observation_method"]["requests"][2], "tools/list");
}

#[test]
fn the_registry_block_keeps_thirty_days_of_changes() {
    let change = |field: &str| Change {
        field: field.into(),
        from: "1.0.0".into(),
        to: "1.1.0".into(),
    };
    let b = registry_block(&RegistryFacts {
        today: "2026-11-15".into(),
        declaration: Declaration {
            version: Some("1.1.0".into()),
            status: "active".into(),
            remote_hosts: vec!["a.example.com".into()],
            listed: true,
        },
        first_seen_day: "2026-10-01".into(),
        baseline_day: Some("2026-10-01".into()),
        changes: vec![
            ("2026-11-14".into(), change("version")),
            ("2026-10-02".into(), change("version")),
        ],
    });
    assert!(b.recorded_since_baseline);
    assert_eq!(b.changes_30d.len(), 1);
    assert_eq!(b.changes_30d[0].day, "2026-11-14");
}
