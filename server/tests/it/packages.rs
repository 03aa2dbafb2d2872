//! The `packages` block and `npm:`/`pypi:` lookups, as a user reads them: scans against a
//! fixture Registry whose entries declare npm, PyPI and other packages, checked at fixture
//! npm and PyPI registries that answer in the real formats; day over day with a shifted
//! clock; the binary's flags. On SQLite and PostgreSQL.

use crate::common;
use crate::scanner_fixtures;
use common::day;

use common::{record, TestDb};
use lowdown_core::scanner::packages::{Check, PackageKey};
use lowdown_core::scanner::registry::Package;
use lowdown_core::scanner::target::Policy;
use lowdown_server::scanner::net::{Net, SystemLookup};
use lowdown_server::scanner::{packages, run, ScanConfig};
use scanner_fixtures::mcp::Mcp;
use scanner_fixtures::packages::{npm_doc, pypi_json, simple_doc, Answer, Packages};
use scanner_fixtures::registry::{entry, streamable, with_packages, Registry};
use scanner_fixtures::{config, on_day, MapLookup};
use serde_json::{json, Value};

async fn answer(t: &TestDb, name: &str) -> Value {
    common::reputation(&t.app(), name).await
}

fn cfg(registry: &Registry, pkgs: &Packages) -> ScanConfig {
    ScanConfig {
        packages: Some(pkgs.sources()),
        ..config(&registry.url, MapLookup::default())
    }
}

/// One entry per case, each declaring what a Registry entry declares.
fn entries(mcp: &Mcp) -> Vec<Value> {
    let e = |name: &str, pkgs: &[(&str, &str, &str)]| {
        with_packages(streamable(name, &mcp.url("ok", name)), pkgs)
    };
    vec![
        e(
            "io.fixture/weather",
            &[
                ("npm", "@fixture/weather", "1.0.0"),
                ("oci", "ghcr.io/fixture/weather", "1.0.0"),
            ],
        ),
        e(
            "io.fixture/current",
            &[("npm", "@fixture/current", "3.1.0")],
        ),
        e("io.fixture/gone", &[("npm", "@fixture/gone", "0.1.0")]),
        e("io.fixture/flaky", &[("npm", "@fixture/flaky", "1.0.0")]),
        e("io.fixture/py", &[("pypi", "Fixture_Py", "0.2.0")]),
        e("io.fixture/nopy", &[("pypi", "fixture-nothing", "1.0")]),
        e("io.fixture/empty", &[("pypi", "fixture-empty", "1.0")]),
        e("io.fixture/quarantined", &[("pypi", "fixture-q", "1.0")]),
        e("io.fixture/bad-name", &[("npm", "not a name", "1.0")]),
        // Two entries declaring one package: a lookup lists both, never chooses.
        e(
            "io.fixture/shared-a",
            &[("npm", "@fixture/shared", "1.0.0")],
        ),
        e(
            "io.fixture/shared-b",
            &[("npm", "@fixture/shared", "1.0.0")],
        ),
    ]
}

/// The fixtures of [`entries`] (`page` entries a Registry page) and their packages.
async fn fixtures(page: usize) -> (Mcp, Registry, Packages) {
    let (mcp, registry, pkgs) = (
        Mcp::start(false).await,
        Registry::start().await,
        Packages::start().await,
    );
    registry.set_entries(entries(&mcp), page);
    serve_packages(&pkgs);
    (mcp, registry, pkgs)
}

fn serve_packages(pkgs: &Packages) {
    pkgs.npm(
        "@fixture/weather",
        Answer::Json(npm_doc(
            "@fixture/weather",
            "2.0.0",
            &[
                ("1.0.0", ""),
                ("2.0.0", "CANARY_deprecation: use @fixture/forecast"),
            ],
        )),
    );
    pkgs.npm(
        "@fixture/current",
        Answer::Json(npm_doc(
            "@fixture/current",
            "3.1.0",
            &[("3.0.0", "old"), ("3.1.0", "")],
        )),
    );
    pkgs.npm("@fixture/flaky", Answer::Status(503));
    pkgs.npm(
        "@fixture/shared",
        Answer::Json(npm_doc("@fixture/shared", "1.0.0", &[("1.0.0", "")])),
    );
    pkgs.pypi(
        "fixture-py",
        Answer::Json(simple_doc(
            "fixture-py",
            Some("archived"),
            &["0.2.0", "0.3.0"],
        )),
        Answer::Json(pypi_json("Fixture_Py", "0.3.0", true)),
    );
    pkgs.pypi(
        "fixture-empty",
        Answer::Json(simple_doc("fixture-empty", None, &[])),
        Answer::Status(404),
    );
    pkgs.pypi(
        "fixture-q",
        Answer::Json(simple_doc("fixture-q", Some("quarantined"), &[])),
        Answer::Status(404),
    );
}

fn item<'a>(a: &'a Value, registry_type: &str) -> &'a Value {
    a["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["registry_type"] == registry_type)
        .unwrap_or_else(|| panic!("no {registry_type} item in {a}"))
}

async fn the_packages_block_says_what_npm_and_pypi_said(t: &TestDb) {
    let (_mcp, registry, pkgs) = fixtures(4).await;
    let s = run(&t.db, &cfg(&registry, &pkgs)).await.unwrap();
    assert_eq!(s.status, "completed");
    // weather, current, gone, flaky, shared; py, nothing, empty, q (bad-name is never asked).
    assert_eq!(
        (
            s.packages.checked,
            s.packages.found,
            s.packages.not_found,
            s.packages.failed
        ),
        (9, 5, 3, 1)
    );

    let w = answer(t, "mcp:io.fixture/weather").await;
    assert_eq!(
        w["message"],
        format!("npm:@fixture/weather 2.0.0 is deprecated on npm; MCP Registry declaration recorded; observed daily by Lowdown Scanner since {}; no agent-reported interactions.", day(0))
    );
    let npm = item(&w, "npm");
    assert_eq!(
        (
            &npm["latest"],
            &npm["latest_deprecated"],
            &npm["declared_is_latest"],
            &npm["not_found"]
        ),
        (&json!("2.0.0"), &json!(true), &json!(false), &json!(false))
    );
    assert!(npm["checked_at"].as_str().unwrap().starts_with(&day(0)));
    assert_eq!(
        item(&w, "oci"),
        &json!({"registry_type": "oci", "identifier": "ghcr.io/fixture/weather", "declared_version": "1.0.0",
                "checked": false, "unchecked_reason": "registry_type"})
    );
    assert!(
        !w.to_string().contains("CANARY"),
        "deprecation messages are never answered"
    );

    // Only the latest counts: 3.0.0 is deprecated, 3.1.0 is not.
    let c = answer(t, "mcp:io.fixture/current").await;
    assert_eq!(
        (
            &item(&c, "npm")["latest_deprecated"],
            &item(&c, "npm")["declared_is_latest"]
        ),
        (&json!(false), &json!(true))
    );
    assert!(c["message"]
        .as_str()
        .unwrap()
        .starts_with("MCP Registry declaration recorded;"));

    let g = answer(t, "mcp:io.fixture/gone").await;
    assert_eq!(
        (
            &item(&g, "npm")["not_found"],
            &item(&g, "npm")["not_found_since"]
        ),
        (&json!(true), &json!("first_check")),
        "404 at every check since the first"
    );
    assert!(g["message"]
        .as_str()
        .unwrap()
        .starts_with("npm:@fixture/gone not found on npm (404 since Lowdown's first check)"));

    // A 503 is not a 404: nothing is known yet, and the check says it failed.
    let f = item(&answer(t, "mcp:io.fixture/flaky").await, "npm").clone();
    assert_eq!(
        (
            &f["not_found"],
            &f["checked_at"],
            &f["last_check_failed"],
            &f["latest"]
        ),
        (&json!(false), &Value::Null, &json!(true), &Value::Null)
    );

    let p = answer(t, "mcp:io.fixture/py").await;
    let py = item(&p, "pypi");
    assert_eq!(
        (
            &py["name"],
            &py["latest"],
            &py["latest_yanked"],
            &py["project_status"],
            &py["not_found"]
        ),
        (
            &json!("fixture-py"),
            &json!("0.3.0"),
            &json!(true),
            &json!("archived"),
            &json!(false)
        )
    );
    assert!(p["message"].as_str().unwrap().starts_with("pypi:fixture-py 0.3.0 is yanked on PyPI; pypi:fixture-py is archived on PyPI; MCP Registry"));
    assert!(
        !p.to_string().contains("CANARY"),
        "yank reasons are never answered"
    );
    let kind = |a: &Value| {
        (
            item(a, "pypi")["not_found"].clone(),
            item(a, "pypi")["not_found_kind"].clone(),
        )
    };
    assert_eq!(
        kind(&answer(t, "mcp:io.fixture/nopy").await),
        (json!(true), json!("no_project"))
    );
    assert_eq!(
        kind(&answer(t, "mcp:io.fixture/empty").await),
        (json!(true), json!("no_releases"))
    );
    let q = answer(t, "mcp:io.fixture/quarantined").await;
    assert_eq!(
        (kind(&q), &item(&q, "pypi")["project_status"]),
        ((json!(false), Value::Null), &json!("quarantined"))
    );
    assert!(q["message"]
        .as_str()
        .unwrap()
        .starts_with("pypi:fixture-q is quarantined on PyPI; "));
    let b = answer(t, "mcp:io.fixture/bad-name").await;
    assert_eq!(
        (
            &item(&b, "npm")["checked"],
            &item(&b, "npm")["unchecked_reason"]
        ),
        (&json!(false), &json!("invalid_name"))
    );

    // What the registries were asked: normalised names, the formats' Accept headers, the
    // Scanner's user agent, each package once, and the JSON API only for projects with
    // releases.
    let seen = pkgs.seen();
    let paths: Vec<&str> = seen.iter().map(|s| s.path.as_str()).collect();
    for p in [
        "/@fixture/weather",
        "/simple/fixture-py/",
        "/pypi/fixture-py/json",
        "/simple/fixture-nothing/",
        "/simple/fixture-empty/",
    ] {
        assert!(paths.contains(&p), "{p} not asked: {paths:?}");
    }
    assert!(
        !paths.contains(&"/pypi/fixture-empty/json")
            && !paths.contains(&"/pypi/fixture-nothing/json")
    );
    assert_eq!(
        paths.iter().filter(|p| **p == "/@fixture/shared").count(),
        1
    );
    assert_eq!(
        paths.iter().filter(|p| **p == "/@fixture/flaky").count(),
        2,
        "a 503 is tried twice"
    );
    assert!(seen
        .iter()
        .all(|s| s.user_agent.starts_with("lowdown-scanner/")));
    for s in &seen {
        let expected = if s.path.starts_with("/simple/") {
            "application/vnd.pypi.simple.v1+json"
        } else if s.path.starts_with("/pypi/") {
            "application/json"
        } else {
            "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8"
        };
        assert_eq!(s.accept, expected, "{}", s.path);
    }

    // Every answer is what /openapi.json says it is.
    let doc = common::get(&t.app(), "/openapi.json").await.json;
    for a in [&w, &p, &g, &q, &b] {
        crate::openapi::assert_documented(&doc, "get", "/api/reputation/{target}", 200, a);
    }
}
on_both!(the_packages_block_says_what_npm_and_pypi_said);

async fn not_found_since_and_a_failed_check_keep_what_was_known(t: &TestDb) {
    let (_mcp, registry, pkgs) = fixtures(20).await;
    let cfg = cfg(&registry, &pkgs);
    run(&t.db, &on_day(&cfg, -3)).await.unwrap();
    // Two days later flaky answers, and gone still 404s.
    pkgs.npm(
        "@fixture/flaky",
        Answer::Json(npm_doc("@fixture/flaky", "1.0.0", &[("1.0.0", "")])),
    );
    run(&t.db, &on_day(&cfg, -2)).await.unwrap();
    // Yesterday flaky fails again, and gone comes back.
    pkgs.npm("@fixture/flaky", Answer::Status(500));
    pkgs.npm(
        "@fixture/gone",
        Answer::Json(npm_doc("@fixture/gone", "0.2.0", &[("0.2.0", "")])),
    );
    run(&t.db, &on_day(&cfg, -1)).await.unwrap();
    // Today gone is gone again: a new run of 404s starts today.
    pkgs.npm("@fixture/gone", Answer::Status(404));
    run(&t.db, &cfg).await.unwrap();

    let f = item(&answer(t, "mcp:io.fixture/flaky").await, "npm").clone();
    assert_eq!(
        (
            &f["latest"],
            &f["declared_is_latest"],
            &f["last_check_failed"]
        ),
        (&json!("1.0.0"), &json!(true), &json!(true))
    );
    assert!(
        f["checked_at"].as_str().unwrap().starts_with(&day(-2)),
        "{f}"
    );
    assert_eq!(
        f["changes_30d"],
        json!([]),
        "the first answer is the baseline"
    );
    let g = item(&answer(t, "mcp:io.fixture/gone").await, "npm").clone();
    assert_eq!(
        (&g["not_found"], &g["not_found_since"], &g["latest"]),
        (&json!(true), &json!(day(0)), &Value::Null),
        "once found, a 404 has a day"
    );
    assert_eq!(
        g["changes_30d"],
        json!([
            {"day": day(-1), "field": "not_found", "from": true, "to": false},
            {"day": day(0), "field": "not_found", "from": false, "to": true}
        ])
    );
    let nopy = item(&answer(t, "mcp:io.fixture/nopy").await, "pypi").clone();
    assert_eq!(
        (&nopy["not_found_since"], &nopy["changes_30d"]),
        (&json!("first_check"), &json!([]))
    );
}
on_both!(not_found_since_and_a_failed_check_keep_what_was_known);

async fn npm_and_pypi_names_find_the_entries_that_declare_them(t: &TestDb) {
    let (_mcp, registry, pkgs) = fixtures(20).await;
    run(&t.db, &cfg(&registry, &pkgs)).await.unwrap();

    // No records of its own: the one declaring entry answers, in any spelling.
    for asked in [
        "npm:@fixture/weather",
        "npm:@Fixture/Weather",
        "npm%3A%40fixture%2Fweather",
    ] {
        let a = answer(t, asked).await;
        assert_eq!(a["resolved_target"], "mcp:io.fixture/weather", "{asked}");
        assert!(a["message"]
            .as_str()
            .unwrap()
            .starts_with("npm:@fixture/weather 2.0.0 is deprecated on npm; MCP Registry"));
    }
    let a = answer(t, "pypi:FIXTURE.py").await;
    assert_eq!(a["resolved_target"], "mcp:io.fixture/py");
    // Several declaring entries: candidates, never a choice.
    let a = answer(t, "npm:@fixture/shared").await;
    assert_eq!(
        a["candidates"],
        json!(["mcp:io.fixture/shared-a", "mcp:io.fixture/shared-b"])
    );
    assert_eq!(a["resolved_target"], Value::Null);
    assert!(a.get("interactions").is_none());
    // Not declared anywhere: nothing is substituted.
    let a = answer(t, "npm:@fixture/weath").await;
    assert_eq!(
        (&a["resolved_target"], &a["interactions"]),
        (&Value::Null, &json!(0))
    );

    // With records of its own: its answer, plus the declaring entries and its facts.
    let r = common::post(
        &t.app(),
        "/api/interactions",
        &json!([
            record("npm:@fixture/weather", "success"),
            record("npm:@fixture/shared", "failure")
        ]),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let a = answer(t, "npm:@fixture/weather").await;
    assert_eq!(a["resolved_target"], "npm:@fixture/weather");
    assert_eq!(a["registry_entries"], json!(["mcp:io.fixture/weather"]));
    assert_eq!(
        (&a["interactions"], &a["packages"][0]["latest_deprecated"]),
        (&json!(1), &json!(true))
    );
    assert_eq!(
        a["message"],
        "npm:@fixture/weather 2.0.0 is deprecated on npm. npm:@fixture/weather: 1 organic tool call rated, 100.0% succeeded."
    );
    let a = answer(t, "npm:@fixture/shared").await;
    assert_eq!(
        a["registry_entries"],
        json!(["mcp:io.fixture/shared-a", "mcp:io.fixture/shared-b"])
    );
    assert!(
        a.get("registry").is_none(),
        "an npm: answer carries no Registry block of its own"
    );
    let doc = common::get(&t.app(), "/openapi.json").await.json;
    crate::openapi::assert_documented(&doc, "get", "/api/reputation/{target}", 200, &a);
}
on_both!(npm_and_pypi_names_find_the_entries_that_declare_them);

/// The package URLs follow the Scanner's SSRF rules: a loopback registry is refused without
/// the unsafe flag, and nothing is sent to it.
#[tokio::test]
async fn a_refused_registry_url_is_a_failed_check_and_sends_nothing() {
    let pkgs = Packages::start().await;
    pkgs.npm("x", Answer::Json(npm_doc("x", "1.0.0", &[("1.0.0", "")])));
    let net = Net::new(Policy::default(), std::sync::Arc::new(SystemLookup), "test").unwrap();
    let key = PackageKey::of(&Package {
        registry_type: "npm".into(),
        identifier: "x".into(),
        version: None,
    })
    .unwrap();
    let c = packages::check(&net, &pkgs.sources(), &key).await;
    assert!(
        matches!(&c, Check::Failed { reason } if reason.contains("refused")),
        "{c:?}"
    );
    assert!(pkgs.seen().is_empty());
    let loopback = crate::scanner_fixtures::loopback_net();
    assert!(matches!(
        packages::check(&loopback, &pkgs.sources(), &key).await,
        Check::Found(_)
    ));
}

async fn the_binary_checks_packages_where_its_flags_point(t: &TestDb) {
    let (mcp, registry, pkgs) = (
        Mcp::start(false).await,
        Registry::start().await,
        Packages::start().await,
    );
    registry.set_entries(
        vec![
            with_packages(
                streamable("io.fixture/weather", &mcp.url("ok", "w")),
                &[("npm", "@fixture/weather", "1.0.0")],
            ),
            entry("io.fixture/stdio", "0.3.0", "active", true, &[]),
        ],
        10,
    );
    serve_packages(&pkgs);
    let args = [
        "scan",
        "--db",
        &t.url,
        "--registry-url",
        &registry.url,
        "--unsafe-allow-loopback",
        "--npm-registry-url",
        &pkgs.npm_url,
        "--pypi-url",
        &pkgs.pypi_url,
    ]
    .map(str::to_owned);
    let out = common::lowdown_server(args).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The stdio entry's own fixture package (@fixture/stdio) is not served: a 404.
    assert_eq!(
        summary["packages"],
        json!({"checked": 2, "found": 1, "not_found": 1, "failed": 0})
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("checking 2 npm and PyPI packages"));
    let a = answer(t, "mcp:io.fixture/weather").await;
    assert_eq!(item(&a, "npm")["latest"], "2.0.0");
}
on_both!(the_binary_checks_packages_where_its_flags_point);
