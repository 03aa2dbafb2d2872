use super::*;

const DAY: i64 = 86_400_000;
const T0: i64 = 1_795_942_400_000; // 2026-11-29T08:53:20Z

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
    let it = item(&npm, Some(&state));
    let v = serde_json::to_value(&it).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"registry_type": "npm", "identifier": "@fixture/weather", "name": "@fixture/weather",
            "declared_version": "1.0.0", "checked": true, "latest": "2.0.0", "latest_deprecated": true,
            "declared_is_latest": false, "not_found": false, "not_found_since": null,
            "checked_at": "2026-11-29T08:53:20.000Z", "last_check_failed": false})
    );
    // Not checked yet: the facts are there, empty, with checked_at null.
    let v = serde_json::to_value(item(&declared("pypi", "X_Y", None), None)).unwrap();
    assert_eq!(v["name"], "x-y");
    assert_eq!(v["checked_at"], serde_json::Value::Null);
    assert!(v.get("latest_yanked").is_none() && v.get("declared_is_latest").is_none());
    let v = serde_json::to_value(item(&declared("oci", "ghcr.io/x/y", Some("1")), None)).unwrap();
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
        ),
        item(
            &declared("npm", "gone", None),
            Some(&PackageState::next(
                None,
                &Check::NotFound { kind: None },
                T0,
            )),
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
        ),
        item(&declared("oci", "x", None), None),
    ];
    assert_eq!(
        findings(&items),
        [
            "npm:a 1.2.0 is deprecated on npm",
            "npm:gone not found on npm (404 since 2026-11-29)",
            "pypi:old-pkg 0.3 is yanked on PyPI",
            "pypi:old-pkg is archived on PyPI",
            "pypi:empty has no releases on PyPI (since 2026-11-29)",
        ]
    );
}
