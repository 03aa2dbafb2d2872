//! services.toml (SPEC §10): what parses, and errors that name the line and the key;
//! `catalog add|list` on the file.

use lowdown_server::gateway::catalog::{append, load, parse};

const GOOD: &str = r#"# Prowl catalog
[[service]]
slug = "stripe"
service_id = "svc_stripe"
upstream = "https://api.stripe.com/"
hosts = ["API.Stripe.com", "stripe.com"]
sampling_rate = 0.05
credential = { header = "Authorization", env = "STRIPE_API_KEY", format = "Bearer {}" }

[[service]]
slug = "resend"
service_id = "svc_resend"
name = "Resend"
upstream = "https://api.resend.com/v1"
hosts = ["api.resend.com"]
sampling_rate = 1
public_key = "ir1zfSIsTFL5ZMgLnyWUtjAK9xZcZ0x9zNS0hZb1nS4="
min_reputation = { consistency = 0.8, tenure_days = 7 }
"#;

fn err(text: &str) -> String {
    parse(text, "services.toml", false).unwrap_err().to_string()
}

#[test]
fn a_valid_catalog_parses_and_normalises() {
    let s = parse(GOOD, "services.toml", false).unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(
        s[0].upstream, "https://api.stripe.com",
        "trailing slash trimmed"
    );
    assert_eq!(s[0].hosts, vec!["api.stripe.com", "stripe.com"]);
    assert_eq!(s[0].name, "stripe");
    assert_eq!(
        s[0].credential.as_ref().unwrap().env.as_deref(),
        Some("STRIPE_API_KEY")
    );
    assert_eq!(s[1].sampling_rate, 1.0);
    assert_eq!(s[1].min_reputation["tenure_days"], 7.0);
    let listed = serde_json::to_string(&s).unwrap();
    assert!(
        !listed.contains("STRIPE_API_KEY")
            && !listed.contains("\"credential\"")
            && !listed.contains("Bearer"),
        "never listed: {listed}"
    );
}

#[test]
fn errors_name_the_line_and_the_key() {
    let cases: &[(&str, &str)] = &[
        ("[[services]]\nid = \"stripe\"\nhosts = [\"api.stripe.com\"]\n", "services.toml:1: [[services]] is the old catalog shape: write [[service]]"),
        ("{\"services\":[{\"id\":\"stripe\",\"hosts\":[\"api.stripe.com\"]}]}", "services.toml:1: this is a JSON catalog, the old shape"),
        ("[[service]]\nslug = \"s\"\nid = \"stripe\"\n", "services.toml:3: service[0].id: `id` is the old key: write `service_id`"),
        (&GOOD.replace("sampling_rate = 0.05", "sampling = 0.05"), "services.toml:7: unknown field `sampling`"),
        (&GOOD.replace("sampling_rate = 0.05", "sampling_rate = 1.5"), "services.toml:7: service[0].sampling_rate: must be a number from 0 to 1"),
        (&GOOD.replace("https://api.stripe.com/", "http://api.stripe.com"), "services.toml:5: service[0].upstream: must be an https:// URL"),
        (&GOOD.replace("https://api.stripe.com/", "http://127.0.0.1:9000"), "services.toml:5: service[0].upstream: must be an https:// URL (http:// only for a loopback host with --unsafe-allow-loopback)"),
        (&GOOD.replace("https://api.stripe.com/", "https://user:pw@api.stripe.com"), "services.toml:5: service[0].upstream: must have no credentials"),
        (&GOOD.replace("\"stripe.com\"", "\"https://stripe.com/x\""), "services.toml:6: service[0].hosts: list at least one bare DNS name"),
        (&GOOD.replace("STRIPE_API_KEY", "stripe key"), "services.toml:8: service[0].credential.env: must be an environment variable name"),
        (&GOOD.replace("ir1zfSIsTFL5ZMgLnyWUtjAK9xZcZ0x9zNS0hZb1nS4=", "bm90IGEga2V5"), "services.toml:17: service[1].public_key: must be a base64 Ed25519 public key"),
        (&GOOD.replace("consistency = 0.8", "charm = 0.8"), "services.toml:18: service[1].min_reputation.charm: not a dimension"),
        (&GOOD.replace("slug = \"resend\"", "slug = \"stripe\""), "services.toml:10: service[1]: slug or service_id repeats stripe"),
        (&GOOD.replace("slug = \"resend\"", "slug = \"Re Send\""), "services.toml:11: service[1].slug: must match"),
        ("[[service]]\nslug = \"a\"\nservice_id = \"svc_a\"\nupstream = \"https://a.example\"\nhosts = [\"a.example\"]\n", "services.toml:1: service[0].sampling_rate: missing"),
        ("[[service]]\nslug = \"a\"\nservice_id = \"svc_a\"\nupstream = \"https://a.example\"\nhosts = [\"a.example\"]\nsampling_rate = 0.1\ncredential = { header = \"X-Key\" }\n", "services.toml:7: service[0].credential.env: missing"),
        ("[[service]\n", "services.toml:1:"),
    ];
    for (text, want) in cases {
        let got = err(text);
        assert!(got.starts_with(want), "wanted {want:?}\n   got {got:?}");
    }
}

#[test]
fn loopback_http_needs_the_unsafe_flag_and_stays_on_loopback() {
    let local = GOOD.replace("https://api.stripe.com/", "http://127.0.0.1:9000/base");
    assert_eq!(
        parse(&local, "f", true).unwrap()[0].upstream,
        "http://127.0.0.1:9000/base"
    );
    let remote = GOOD.replace("https://api.stripe.com/", "http://api.stripe.com");
    assert!(
        parse(&remote, "f", true).is_err(),
        "the flag admits loopback only"
    );
}

#[test]
fn catalog_add_appends_only_a_valid_entry_and_list_shows_no_credentials() {
    let dir = std::env::temp_dir().join(format!("lowdown-catalog-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("services.toml");
    assert!(
        load(&path, false, false).unwrap().is_empty(),
        "a missing default file is an empty catalog"
    );
    assert!(
        load(&path, true, false)
            .unwrap_err()
            .contains("cannot read"),
        "a named file must exist"
    );
    let bin = env!("CARGO_BIN_EXE_lowdown-server");
    let run = |args: &[&str]| crate::common::lowdown_server_at(&dir, args);
    let out = run(&[
        "catalog",
        "add",
        "stripe",
        "--service-id",
        "svc_stripe",
        "--upstream",
        "https://api.stripe.com",
        "--host",
        "api.stripe.com",
        "--sampling-rate",
        "0.05",
        "--credential-header",
        "Authorization",
        "--credential-env",
        "STRIPE_API_KEY",
        "--credential-format",
        "Bearer {}",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let before = std::fs::read_to_string(&path).unwrap();
    let bad = run(&[
        "catalog",
        "add",
        "resend",
        "--service-id",
        "svc_resend",
        "--upstream",
        "http://api.resend.com",
        "--host",
        "api.resend.com",
        "--sampling-rate",
        "0.1",
    ]);
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr)
            .contains("service[1].upstream: must be an https:// URL"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        before,
        "a refused entry changes nothing"
    );
    let list = run(&["catalog", "list"]);
    let v: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(v["services"][0]["service_id"], "svc_stripe");
    assert!(!String::from_utf8_lossy(&list.stdout).contains("STRIPE_API_KEY"));
    let parsed = parse(&before, "f", false).unwrap();
    assert_eq!(parsed[0].credential.as_ref().unwrap().format, "Bearer {}");
    // The library's append keeps what was there.
    let mut second = parsed[0].clone();
    second.slug = "stripe2".into();
    second.service_id = "svc_stripe2".into();
    assert_eq!(append(&path, &second, false).unwrap().len(), 2);
    let help = std::process::Command::new(bin)
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("--gateway-listen") && help.contains("--unsafe-allow-loopback"),
        "{help}"
    );
    assert!(
        help.contains("UNSAFE"),
        "the loopback flag is named unsafe: {help}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

const ALLOWED: &str = "[[service]]\nslug = \"search\"\nservice_id = \"svc_search\"\nupstream = \"https://api.search.example\"\nhosts = [\"api.search.example\"]\nsampling_rate = 0.1\n";

#[test]
fn allow_rules_and_modes_are_checked_at_start_naming_the_service_and_entry() {
    let ok = format!("{ALLOWED}allow = [\"GET /v1/search\", \"POST /v1/embed\"]\ncredential = {{ mode = \"passthrough\", header = \"Authorization\" }}\n");
    let s = &parse(&ok, "services.toml", false).unwrap()[0];
    assert_eq!(s.allow, ["GET /v1/search", "POST /v1/embed"]);
    assert_eq!(s.mode, lowdown_core::gateway::allow::Mode::Passthrough);
    let absent = &parse(ALLOWED, "services.toml", false).unwrap()[0];
    assert!(absent.allow.is_empty(), "no allow key: nothing is carried");
    assert_eq!(absent.mode, lowdown_core::gateway::allow::Mode::Inject);
    let cases: &[(&str, &str)] = &[
        ("allow = [\"GET/v1\"]", "services.toml:7: service[0].allow (search): allow entry \"GET/v1\": write a method, one space"),
        ("allow = [\"get /v1\"]", "services.toml:7: service[0].allow (search): allow entry \"get /v1\": the method is upper-case"),
        ("allow = [\"GET v1\"]", "services.toml:7: service[0].allow (search): allow entry \"GET v1\": the prefix starts with /"),
        ("allow = [\"GET /v1/../admin\"]", "services.toml:7: service[0].allow (search): allow entry \"GET /v1/../admin\": the prefix has no . or .."),
        ("allow = [\"GET /v1\\\\x\"]", "services.toml:7: service[0].allow (search): allow entry \"GET /v1\\\\x\": the prefix has no \\"),
        ("credential = { mode = \"proxy\", header = \"X-Key\", env = \"K\" }", "services.toml:7: service[0].credential (search): credential.mode \"proxy\": must be inject or passthrough"),
        ("credential = { mode = \"passthrough\", header = \"X-Key\", env = \"K\" }", "services.toml:7: service[0].credential.env: a passthrough service"),
        ("credential = { mode = \"inject\", header = \"X-Key\" }", "services.toml:7: service[0].credential.env: missing"),
        ("credential = { header = \"bad header\", env = \"K\" }", "services.toml:7: service[0].credential.header: not a valid header name"),
    ];
    for (line, want) in cases {
        let got = err(&format!("{ALLOWED}{line}\n"));
        assert!(got.starts_with(want), "wanted {want:?}\n   got {got:?}");
    }
}

#[test]
fn the_example_catalog_parses_and_every_service_allows_something() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/server/services.toml"
    );
    let services = load(std::path::Path::new(path), true, false).unwrap();
    assert!(services.len() >= 3);
    assert!(services.iter().all(|s| !s.allow.is_empty()));
}
