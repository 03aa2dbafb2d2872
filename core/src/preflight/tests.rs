use super::*;

fn calls(version: &str, rated: u64, successes: u64) -> VersionCalls {
    VersionCalls {
        version: version.into(),
        rated,
        successes,
        networks: 3,
    }
}

fn changes(pattern: Pattern, last: Option<&str>, stable: Option<i64>) -> DefinitionChanges {
    DefinitionChanges {
        pattern,
        last_change: last.map(str::to_owned),
        stable_days_before_last_change: stable,
        events: Vec::new(),
    }
}

fn facts() -> PreflightFacts {
    PreflightFacts {
        today: "2026-12-07".into(),
        registry_status: Some("active".into()),
        ..PreflightFacts::default()
    }
}

#[test]
fn nothing_recorded_and_a_healthy_server_say_nothing() {
    let v = verdict("mcp:io.x/y", &PreflightFacts::default());
    assert_eq!((v.decision, v.reasons.len()), (Decision::None, 0));
    let mut f = facts();
    f.definitions = Some(changes(Pattern::NoChangeObserved, None, None));
    f.versions = vec![calls("1.0.0", 200, 190), calls("1.1.0", 50, 47)];
    assert_eq!(verdict("mcp:io.x/y", &f).decision, Decision::None);
}

#[test]
fn a_deleted_entry_and_package_findings_ask_with_the_facts() {
    let mut f = facts();
    f.registry_status = Some("deleted".into());
    f.package_findings = vec!["npm:x 2.0.0 is deprecated on npm".into()];
    let v = verdict("mcp:io.x/y", &f);
    assert_eq!(v.decision, Decision::Ask);
    assert_eq!(
        v.reasons,
        [
            "the MCP Registry marks mcp:io.x/y deleted",
            "npm:x 2.0.0 is deprecated on npm"
        ]
    );
    assert_eq!(
        serde_json::to_value(&v).unwrap()["decision"],
        serde_json::json!("ask")
    );
}

#[test]
fn a_recent_change_after_stable_days_asks_and_a_usual_one_does_not() {
    let mut f = facts();
    f.definitions = Some(changes(Pattern::Changed, Some("2026-12-05"), Some(20)));
    assert_eq!(
        verdict("t", &f).reasons,
        ["its tool definitions changed on 2026-12-05 after 20 stable days (Lowdown Scanner, daily)"]
    );
    for (pattern, day, stable) in [
        (Pattern::Changed, "2026-11-30", 20), // 8 days ago: not recent
        (Pattern::Changed, "2026-12-05", 3),  // not stable before
        (Pattern::ChangesOnMostDays, "2026-12-06", 7),
    ] {
        f.definitions = Some(changes(pattern, Some(day), Some(stable)));
        assert_eq!(
            verdict("t", &f).decision,
            Decision::None,
            "{pattern:?} {day}"
        );
    }
    f.definitions = Some(changes(Pattern::Changed, Some("2026-12-01"), Some(7)));
    assert_eq!(
        verdict("t", &f).decision,
        Decision::Ask,
        "6 days ago is recent"
    );
}

#[test]
fn a_sharp_drop_of_the_newest_version_asks_with_both_samples() {
    let mut f = facts();
    f.versions = vec![
        calls("1.9.0", 100, 95),
        calls("1.10.0", 20, 10),
        calls("1.2.0", 100, 97),
    ];
    assert_eq!(
        verdict("t", &f).reasons,
        ["version 1.10.0 succeeded in 50.0% of 20 rated calls, other versions in 96.0% of 200 (organic records)"],
        "1.10.0 is newer than 1.9.0 by number"
    );
    // The declared version is the newest when it has enough calls.
    f.current_version = Some("1.9.0".into());
    assert_eq!(verdict("t", &f).decision, Decision::None);
    // Too few calls on either side: nothing is said.
    f.current_version = None;
    f.versions = vec![calls("1.0.0", 100, 95), calls("2.0.0", 9, 0)];
    assert_eq!(verdict("t", &f).decision, Decision::None);
    f.versions = vec![calls("1.0.0", 9, 9), calls("2.0.0", 100, 10)];
    assert_eq!(verdict("t", &f).decision, Decision::None);
    // One or two networks cannot make a version look broken, however many calls.
    f.versions = vec![calls("1.0.0", 100, 100), calls("2.0.0", 100, 0)];
    f.versions[1].networks = 2;
    assert_eq!(verdict("t", &f).decision, Decision::None);
    // A drop just under the threshold is not sharp.
    f.versions = vec![calls("1.0.0", 100, 100), calls("2.0.0", 100, 76)];
    assert_eq!(verdict("t", &f).decision, Decision::None);
    f.versions = vec![calls("1.0.0", 100, 100), calls("2.0.0", 100, 75)];
    assert_eq!(verdict("t", &f).decision, Decision::Ask);
}
