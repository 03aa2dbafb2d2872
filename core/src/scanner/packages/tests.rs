use super::*;

const DAY: i64 = 86_400_000;
const T0: i64 = 1_795_942_400_000; // 2026-11-29T08:53:20Z
const TODAY: &str = "2026-11-29";

fn declared(kind: &str, id: &str, version: Option<&str>) -> Package {
    Package {
        registry_type: kind.into(),
        identifier: id.into(),
        version: version.map(str::to_owned),
    }
}

fn found(latest: &str) -> Check {
    Check::Found(Facts {
        latest: Some(latest.into()),
        ..Facts::default()
    })
}

#[test]
fn keys_are_the_lookup_forms_of_the_targets() {
    let k = PackageKey::of(&declared("pypi", "Mcp_Server.Fetch", None)).unwrap();
    assert_eq!(
        (k.ecosystem, k.name.as_str()),
        (Ecosystem::Pypi, "mcp-server-fetch")
    );
    assert_eq!(k.target(), lookup_form("pypi:Mcp_Server.Fetch"));
    let k = PackageKey::of(&declared("npm", "@Scope/Pkg", None)).unwrap();
    assert_eq!(k.target(), "npm:@scope/pkg");
    assert_eq!(PackageKey::of_target("npm:@scope/PKG"), Some(k));
    assert_eq!(
        PackageKey::of(&declared("oci", "ghcr.io/x/y", None)),
        Err(Unchecked::RegistryType)
    );
    assert_eq!(
        PackageKey::of(&declared("npm", "not a name", None)),
        Err(Unchecked::InvalidName)
    );
    assert_eq!(PackageKey::of_target("mcp:io.github.x/y"), None);
}

#[test]
fn not_found_since_is_the_first_day_of_a_run_of_404s() {
    let gone = Check::NotFound { kind: None };
    let s1 = PackageState::next(None, &found("1.0.0"), T0);
    assert_eq!((s1.not_found, s1.checked_at_ms), (false, Some(T0)));
    let s2 = PackageState::next(Some(&s1), &gone, T0 + DAY);
    assert_eq!(
        (s2.not_found, s2.not_found_since.as_deref()),
        (true, Some("2026-11-30"))
    );
    assert_eq!(s2.facts.latest, None, "a 404 leaves no latest version");
    let s3 = PackageState::next(Some(&s2), &gone, T0 + 2 * DAY);
    assert_eq!(s3.not_found_since.as_deref(), Some("2026-11-30"));
    // A failed check keeps every fact, and says it failed.
    let failed = Check::Failed {
        reason: "timeout".into(),
    };
    let s4 = PackageState::next(Some(&s3), &failed, T0 + 3 * DAY);
    assert_eq!(s4.not_found_since.as_deref(), Some("2026-11-30"));
    assert_eq!(s4.checked_at_ms, Some(T0 + 2 * DAY));
    assert!(s4.last_check_failed);
    let s5 = PackageState::next(Some(&s4), &found("2.0.0"), T0 + 4 * DAY);
    assert_eq!(
        (
            s5.not_found,
            s5.not_found_since.clone(),
            s5.last_check_failed
        ),
        (false, None, false)
    );
    let s6 = PackageState::next(Some(&s5), &gone, T0 + 5 * DAY);
    assert_eq!(
        s6.not_found_since.as_deref(),
        Some("2026-12-04"),
        "a new run of 404s starts again"
    );
}

#[test]
fn a_package_missing_since_the_first_check_says_so_until_it_appears() {
    let gone = Check::NotFound { kind: None };
    let failed = Check::Failed {
        reason: "timeout".into(),
    };
    // A failed first check is no check: the first answer is still the first check.
    let s0 = PackageState::next(None, &failed, T0);
    let s1 = PackageState::next(Some(&s0), &gone, T0 + DAY);
    assert_eq!(s1.not_found_since.as_deref(), Some(FIRST_CHECK));
    let s2 = PackageState::next(Some(&s1), &gone, T0 + 2 * DAY);
    assert_eq!(s2.not_found_since.as_deref(), Some(FIRST_CHECK));
    assert!(s2.changes.is_empty(), "404 then 404 changes nothing");
    let s3 = PackageState::next(Some(&s2), &found("1.0.0"), T0 + 3 * DAY);
    let s4 = PackageState::next(Some(&s3), &gone, T0 + 4 * DAY);
    assert_eq!(
        s4.not_found_since.as_deref(),
        Some("2026-12-03"),
        "once found, a 404 has a day"
    );
    let v = serde_json::to_value(&s4.changes).unwrap();
    assert_eq!(
        v,
        serde_json::json!([
            {"day": "2026-12-02", "field": "not_found", "from": true, "to": false},
            {"day": "2026-12-03", "field": "not_found", "from": false, "to": true}
        ])
    );
}

#[test]
fn changes_between_checks_are_kept_thirty_days_and_the_first_check_is_the_baseline() {
    let facts = |latest: &str, deprecated: bool, status: Option<ProjectStatus>| {
        Check::Found(Facts {
            latest: Some(latest.into()),
            latest_deprecated: deprecated,
            project_status: status,
            ..Facts::default()
        })
    };
    let s1 = PackageState::next(None, &facts("1.0.0", false, None), T0);
    assert!(s1.changes.is_empty(), "the first check is the baseline");
    let s2 = PackageState::next(Some(&s1), &facts("1.1.0", true, None), T0 + DAY);
    let failed = Check::Failed {
        reason: "HTTP 503".into(),
    };
    let s3 = PackageState::next(Some(&s2), &failed, T0 + 2 * DAY);
    assert_eq!(s3.changes, s2.changes, "a failed check compares nothing");
    let s4 = PackageState::next(
        Some(&s3),
        &facts("1.1.0", true, Some(ProjectStatus::Archived)),
        T0 + 3 * DAY,
    );
    let fields: Vec<(&str, &str)> = s4
        .changes
        .iter()
        .map(|c| (c.day.as_str(), c.field.as_str()))
        .collect();
    assert_eq!(
        fields,
        [
            ("2026-11-30", "latest"),
            ("2026-11-30", "latest_deprecated"),
            ("2026-12-02", "project_status")
        ]
    );
    assert_eq!(s4.changes[0].from, "1.0.0");
    assert_eq!(s4.changes[2].to, "archived");
    let npm = declared("npm", "x", Some("1.1.0"));
    assert_eq!(
        item(&npm, Some(&s4), "2026-12-02")
            .facts
            .unwrap()
            .changes_30d
            .len(),
        3
    );
    // 30 days on, the item shows none of them; the next check forgets them.
    let later = item(&npm, Some(&s4), "2026-12-30").facts.unwrap();
    assert_eq!(
        later.changes_30d.len(),
        1,
        "only 2026-12-02 is within 30 days"
    );
    let s5 = PackageState::next(
        Some(&s4),
        &facts("1.1.0", true, Some(ProjectStatus::Archived)),
        T0 + 40 * DAY,
    );
    assert!(s5.changes.is_empty());
}

#[test]
fn items_say_what_each_registry_said() {
    let npm = declared("npm", "@fixture/weather", Some("1.0.0"));
    let state = PackageState::next(
        None,
        &Check::Found(Facts {
            latest: Some("2.0.0".into()),
            latest_deprecated: true,
            ..Facts::default()
        }),
        T0,
    );
    let it = item(&npm, Some(&state), TODAY);
    let v = serde_json::to_value(&it).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"registry_type": "npm", "identifier": "@fixture/weather", "name": "@fixture/weather",
            "declared_version": "1.0.0", "checked": true, "latest": "2.0.0", "latest_deprecated": true,
            "declared_is_latest": false, "not_found": false, "not_found_since": null,
            "checked_at": "2026-11-29T08:53:20.000Z", "last_check_failed": false, "changes_30d": []})
    );
    // Not checked yet: the facts are there, empty, with checked_at null.
    let v = serde_json::to_value(item(&declared("pypi", "X_Y", None), None, TODAY)).unwrap();
    assert_eq!(v["name"], "x-y");
    assert_eq!(v["checked_at"], serde_json::Value::Null);
    assert!(v.get("latest_yanked").is_none() && v.get("declared_is_latest").is_none());
    let v = serde_json::to_value(item(
        &declared("oci", "ghcr.io/x/y", Some("1")),
        None,
        TODAY,
    ))
    .unwrap();
    assert_eq!(
        v,
        serde_json::json!({"registry_type": "oci", "identifier": "ghcr.io/x/y", "declared_version": "1",
            "checked": false, "unchecked_reason": "registry_type"})
    );
}

#[test]
fn findings_lead_with_what_a_user_must_know() {
    let items = [
        item(
            &declared("npm", "a", None),
            Some(&PackageState::next(
                None,
                &Check::Found(Facts {
                    latest: Some("1.2.0".into()),
                    latest_deprecated: true,
                    ..Facts::default()
                }),
                T0,
            )),
            TODAY,
        ),
        item(
            &declared("npm", "gone", None),
            Some(&PackageState::next(
                None,
                &Check::NotFound { kind: None },
                T0,
            )),
            TODAY,
        ),
        item(
            &declared("pypi", "Old_Pkg", None),
            Some(&PackageState::next(
                None,
                &Check::Found(Facts {
                    latest: Some("0.3".into()),
                    latest_yanked: true,
                    project_status: Some(ProjectStatus::Archived),
                    ..Facts::default()
                }),
                T0,
            )),
            TODAY,
        ),
        item(
            &declared("pypi", "empty", None),
            Some(&PackageState::next(
                None,
                &Check::NotFound {
                    kind: Some(NotFoundKind::NoReleases),
                },
                T0,
            )),
            TODAY,
        ),
        item(
            &declared("pypi", "fine", None),
            Some(&PackageState::next(
                None,
                &Check::Found(Facts {
                    latest: Some("1.0".into()),
                    project_status: Some(ProjectStatus::Active),
                    ..Facts::default()
                }),
                T0,
            )),
            TODAY,
        ),
        item(&declared("oci", "x", None), None, TODAY),
    ];
    assert_eq!(
        findings(&items),
        [
            "npm:a 1.2.0 is deprecated on npm",
            "npm:gone not found on npm (404 since Lowdown's first check)",
            "pypi:old-pkg 0.3 is yanked on PyPI",
            "pypi:old-pkg is archived on PyPI",
            "pypi:empty has no releases on PyPI (since Lowdown's first check)",
        ]
    );
}
