//! `GET /v0.1/servers` and `GET /v0.1/servers/{name}` (issue 26 item 5): after a Scanner
//! run over the fixture Registry, the answers are the Registry's own format, validated
//! against the schemas of the Registry's published OpenAPI document
//! (`registry_openapi.jsonc`, source and commit in its header) and against Lowdown's own
//! document; each server.json and official `_meta` is exactly what the Registry served;
//! paging, `search`, `updated_since` and the Registry's `/versions` paths work; hostile
//! cursors, limits, dates and names are refused or answer nothing, in the error shape.

use crate::common;
use crate::scanner_fixtures;

use common::{get, post, record, TestDb};
use lowdown_server::scanner::run;
use scanner_fixtures::mcp::Mcp;
use scanner_fixtures::registry::{entry, streamable, Registry};
use scanner_fixtures::{config, MapLookup};
use serde_json::{json, Value};

const FACTS: &str = "dev.lowdown/facts";
const OFFICIAL: &str = "io.modelcontextprotocol.registry/official";

/// The Registry's OpenAPI document (the fixture without its `//` header).
fn registry_doc() -> Value {
    let text = include_str!("registry_openapi.jsonc");
    let json: String = text
        .lines()
        .filter(|l| !l.starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    serde_json::from_str(&json).expect("the fixture is JSON after its header")
}

/// Why `body` is not what the Registry's document says `path` answers with `status`.
fn registry_violations(doc: &Value, path: &str, status: u16, body: &Value) -> Vec<String> {
    let escape = |s: &str| s.replace('~', "~0").replace('/', "~1");
    let at = format!(
        "#/paths/{}/get/responses/{status}/content/application~1json/schema",
        escape(path)
    );
    let mut root = doc.clone();
    root["$ref"] = json!(at.replace('{', "%7B").replace('}', "%7D"));
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&root)
        .unwrap_or_else(|e| panic!("{path} {status}: the schema does not compile: {e}"));
    validator
        .iter_errors(body)
        .map(|e| format!("{path} {status} at {}: {e}", e.instance_path()))
        .collect()
}

/// An entry with everything server.json can carry, as the Registry serves it.
fn rich(name: &str, url: &str) -> Value {
    let mut e = streamable(name, url);
    let s = &mut e["server"];
    s["title"] = json!("Rich Fixture");
    s["description"] = json!("Every server.json field the Registry serves");
    s["repository"] = json!({"url": "https://github.com/fixture/rich", "source": "github", "id": "123456", "subfolder": "src/rich"});
    s["websiteUrl"] = json!("https://fixture.example.com/docs");
    s["icons"] = json!([{"src": "https://fixture.example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"], "theme": "light"}]);
    s["remotes"][0]["headers"] = json!([{"name": "Authorization", "description": "Bearer token", "isRequired": true, "isSecret": true}]);
    s["packages"] = json!([{
        "registryType": "npm", "registryBaseUrl": "https://registry.npmjs.org",
        "identifier": "@fixture/rich", "version": "1.0.0", "runtimeHint": "npx",
        "transport": {"type": "stdio"},
        "packageArguments": [{"type": "positional", "valueHint": "target_dir", "isRequired": true}, {"type": "named", "name": "--port", "default": "8080"}],
        "environmentVariables": [{"name": "API_KEY", "isSecret": true, "isRequired": true}]
    }]);
    s["_meta"] = json!({"io.modelcontextprotocol.registry/publisher-provided": {"tool": "publisher-cli", "version": "1.2.3"}});
    e["_meta"][OFFICIAL]["updatedAt"] = json!("2026-10-05T08:00:00.123456Z");
    e
}

async fn served_as_the_registry_serves(t: &TestDb) {
    let mcp = Mcp::start(false).await;
    let registry = Registry::start().await;
    let ok = mcp.url("ok", "");
    let mut entries = vec![
        streamable("io.fixture/alpha", &ok),
        rich("io.fixture/rich", &mcp.url("ok", "rich")),
        entry("io.fixture/old", "2.0.0", "deprecated", true, &[]),
        // Not the latest version: the Scanner records latest entries only.
        entry("io.fixture/alpha", "0.9.0", "active", false, &[]),
    ];
    for i in 1..=5 {
        entries.push(entry(
            &format!("io.fixture/p{i:02}"),
            "1.0.0",
            "active",
            true,
            &[],
        ));
    }
    registry.set_entries(entries.clone(), 4);
    let s = run(&t.db, &config(&registry.url, MapLookup::default()))
        .await
        .unwrap();
    assert_eq!(s.status, "completed", "{:?}", s.error);
    let app = t.app();
    let mut records: Vec<Value> = (0..3)
        .map(|_| record("mcp:io.fixture/alpha", "success"))
        .collect();
    records.push(record("mcp:io.fixture/alpha", "failure"));
    assert_eq!(
        post(&app, "/api/interactions", &json!(records))
            .await
            .status,
        201
    );

    let doc = registry_doc();
    let ours = get(&app, "/openapi.json").await.json;
    let served = |name: &str| {
        entries
            .iter()
            .find(|e| e["server"]["name"] == name && e["_meta"][OFFICIAL]["isLatest"] == true)
            .unwrap()
            .clone()
    };
    let mut checked: Vec<(&str, &str, u16, Value)> = Vec::new();

    // The whole list, one page.
    let r = get(&app, "/v0.1/servers?limit=100").await;
    assert_eq!(r.status, 200, "{}", r.text);
    let names: Vec<&str> = r.json["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["server"]["name"].as_str().unwrap())
        .collect();
    let mut want: Vec<String> = ["alpha", "old", "rich", "p01", "p02", "p03", "p04", "p05"]
        .map(|n| format!("io.fixture/{n}"))
        .to_vec();
    want.sort();
    assert_eq!(
        names, want,
        "every latest entry, in name order, nothing else"
    );
    assert_eq!(r.json["metadata"]["count"], 8);
    assert!(
        r.json["metadata"].get("nextCursor").is_none(),
        "{}",
        r.json["metadata"]
    );
    for item in r.json["servers"].as_array().unwrap() {
        let name = item["server"]["name"].as_str().unwrap();
        let e = served(name);
        assert_eq!(
            item["server"], e["server"],
            "{name}: server.json as the Registry served it"
        );
        assert_eq!(
            item["_meta"][OFFICIAL], e["_meta"][OFFICIAL],
            "{name}: official _meta"
        );
        assert_eq!(item["_meta"][FACTS]["target"], format!("mcp:{name}"));
        assert_eq!(item["_meta"][FACTS]["source"]["license"], "CC BY 4.0");
    }
    let alpha = &r.json["servers"][0]["_meta"][FACTS];
    assert_eq!(alpha["scanner"]["observed"], true, "{alpha}");
    assert_eq!(alpha["scanner"]["latest"]["reached_level"], 2, "{alpha}");
    assert!(
        alpha["scanner"]["definition_changes"]["pattern"].is_string(),
        "{alpha}"
    );
    assert_eq!(alpha["interactions"]["interactions"], 4, "{alpha}");
    assert_eq!(alpha["interactions"]["rated_interactions"], 4, "{alpha}");
    assert_eq!(alpha["interactions"]["success_rate"], 0.75, "{alpha}");
    assert_eq!(alpha["interactions"]["confidence"], "low", "{alpha}");
    assert_eq!(
        alpha["interactions"]["by_source"],
        json!({"organic": 4, "seeded": 0, "synthetic": 0})
    );
    assert_eq!(
        alpha["packages"][0]["identifier"], "@fixture/alpha",
        "{alpha}"
    );
    assert!(
        alpha.get("score").is_none() && !alpha.to_string().contains("score"),
        "facts, never scores"
    );
    let old = r.json["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["server"]["name"] == "io.fixture/old")
        .unwrap();
    assert_eq!(old["_meta"][OFFICIAL]["status"], "deprecated");
    assert_eq!(
        old["_meta"][FACTS]["scanner"]["latest"],
        Value::Null,
        "never probed"
    );
    checked.push(("/v0.1/servers", "/v0.1/servers", 200, r.json.clone()));

    // Paging: 3 at a time, following nextCursor, gives the same names once each.
    let mut paged = Vec::new();
    let mut uri = "/v0.1/servers?limit=3".to_owned();
    loop {
        let r = get(&app, &uri).await;
        assert_eq!(r.status, 200, "{uri}: {}", r.text);
        let page = r.json["servers"].as_array().unwrap();
        assert_eq!(r.json["metadata"]["count"], page.len());
        paged.extend(
            page.iter()
                .map(|s| s["server"]["name"].as_str().unwrap().to_owned()),
        );
        checked.push(("/v0.1/servers", "/v0.1/servers", 200, r.json.clone()));
        match r.json["metadata"]["nextCursor"].as_str() {
            Some(c) => uri = format!("/v0.1/servers?limit=3&cursor={}", urlencode(c)),
            None => break,
        }
    }
    assert_eq!(paged, want);
    let r = get(&app, "/v0.1/servers").await;
    assert_eq!(
        r.json["metadata"]["count"], 8,
        "the default limit (30) holds them all"
    );

    // search (case-insensitive substring; LIKE wildcards literal), updated_since, version.
    let r = get(&app, "/v0.1/servers?search=RICH").await;
    assert_eq!(r.json["servers"].as_array().unwrap().len(), 1, "{}", r.text);
    assert_eq!(r.json["servers"][0]["server"]["name"], "io.fixture/rich");
    for wildcard in ["%25", "_", "p0_", "%5C"] {
        let r = get(&app, &format!("/v0.1/servers?search={wildcard}")).await;
        assert_eq!(
            (r.status.as_u16(), r.json["metadata"]["count"].clone()),
            (200, json!(0)),
            "{wildcard}: {}",
            r.text
        );
    }
    let r = get(&app, "/v0.1/servers?updated_since=2026-10-01T00:00:00Z").await;
    let names: Vec<&Value> = r.json["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["server"]["name"])
        .collect();
    assert_eq!(names, vec!["io.fixture/rich"], "{}", r.text);
    let r = get(
        &app,
        "/v0.1/servers?updated_since=2026-10-05T08:00:00.123%2B00:00",
    )
    .await;
    assert_eq!(
        r.json["metadata"]["count"], 1,
        "at the same millisecond: {}",
        r.text
    );
    let r = get(&app, "/v0.1/servers?updated_since=2026-10-05T08:00:00.124Z").await;
    assert_eq!(r.json["metadata"]["count"], 0, "{}", r.text);
    checked.push(("/v0.1/servers", "/v0.1/servers", 200, r.json.clone()));
    assert_eq!(
        get(&app, "/v0.1/servers?version=latest&limit=2").await.json["metadata"]["count"],
        2
    );

    // One server, its `/` raw or %2F, and the Registry's own paths.
    let one = get(&app, "/v0.1/servers/io.fixture/rich").await;
    assert_eq!(one.status, 200, "{}", one.text);
    assert_eq!(one.json["server"], served("io.fixture/rich")["server"]);
    assert_eq!(one.json["_meta"][FACTS]["target"], "mcp:io.fixture/rich");
    for uri in [
        "/v0.1/servers/io.fixture%2Frich",
        "/v0.1/servers/io.fixture%2frich/versions/latest",
        "/v0.1/servers/io.fixture/rich/versions/1.0.0",
    ] {
        let r = get(&app, uri).await;
        assert_eq!(r.status, 200, "{uri}: {}", r.text);
        assert_eq!(r.json["server"], one.json["server"], "{uri}");
        checked.push((
            "/v0.1/servers/{name}",
            "/v0.1/servers/{serverName}/versions/{version}",
            200,
            r.json,
        ));
    }
    let versions = get(&app, "/v0.1/servers/io.fixture%2Frich/versions").await;
    assert_eq!(versions.status, 200, "{}", versions.text);
    assert_eq!(versions.json["servers"][0]["server"], one.json["server"]);
    checked.push((
        "/v0.1/servers/{name}",
        "/v0.1/servers/{serverName}/versions",
        200,
        versions.json,
    ));

    // Names that are not there: 404 in the Registry's error shape.
    for uri in [
        "/v0.1/servers/io.fixture/nobody",
        "/v0.1/servers/io.fixture/alpha/versions/0.9.0",
        "/v0.1/servers/io.fixture/rich/versions/9.9.9",
        "/v0.1/servers/../openapi.json",
        "/v0.1/servers/io.fixture/../../etc/passwd",
        "/v0.1/servers/io.fixture%2F..%2F..%2Fopenapi.json",
        "/v0.1/servers/%2e%2e%2f%2e%2e%2fhealthz",
        "/v0.1/servers/io.fixture%252Frich",
        "/v0.1/servers/io.fixture/rich'%20OR%20'1'='1",
        "/v0.1/servers/io.fixture/%25",
    ] {
        let r = get(&app, uri).await;
        assert_eq!(r.refusal(), (404, Some("not_found")), "{uri}: {}", r.text);
        assert!(r.json["error"].is_string(), "{uri}");
        checked.push((
            "/v0.1/servers/{name}",
            "/v0.1/servers/{serverName}/versions/{version}",
            404,
            r.json,
        ));
    }

    // Every answer is what the Registry's document and Lowdown's own say (and the check
    // does refuse what the Registry would not serve: no description, a bad name).
    let wrong = json!({"servers": [{"server": {"name": "no slash", "version": "1"}}]});
    assert_eq!(
        registry_violations(&doc, "/v0.1/servers", 200, &wrong).len(),
        2
    );
    let mut failures = Vec::new();
    for (ours_path, theirs, status, body) in &checked {
        failures.extend(registry_violations(&doc, theirs, *status, body));
        failures.extend(crate::openapi::violations(
            &ours, "get", ours_path, *status, body,
        ));
    }
    assert!(
        failures.is_empty(),
        "answers the documents do not describe:\n{}",
        failures.join("\n")
    );
}
on_both!(served_as_the_registry_serves);

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

async fn hostile_input_is_refused_or_finds_nothing(t: &TestDb) {
    let registry = Registry::start().await;
    registry.set_entries(
        vec![
            entry("io.fixture/a", "1.0.0", "active", true, &[]),
            entry("io.fixture/b", "1.0.0", "active", true, &[]),
        ],
        10,
    );
    let s = run(&t.db, &config(&registry.url, MapLookup::default()))
        .await
        .unwrap();
    assert_eq!(s.status, "completed", "{:?}", s.error);
    let app = t.app();
    let ours = get(&app, "/openapi.json").await.json;
    let huge = "c".repeat(60_000);
    let refused = [
        ("limit=0", "limit:"),
        ("limit=-1", "limit:"),
        ("limit=101", "limit:"),
        ("limit=99999999999999999999999", "limit:"),
        ("limit=abc", "limit:"),
        ("limit=1.5", "limit:"),
        ("limit=", "limit:"),
        ("cursor=", "cursor:"),
        (
            "cursor=%27%3B%20DROP%20TABLE%20registry_entries%3B%20--",
            "cursor:",
        ),
        ("cursor=a%00b", "cursor:"),
        (&*format!("cursor={huge}"), "cursor:"),
        ("updated_since=yesterday", "updated_since:"),
        ("updated_since=2026-13-45T99:99:99Z", "updated_since:"),
        ("updated_since=2026-10-05", "updated_since:"),
        ("updated_since=", "updated_since:"),
        ("version=1.0.0", "version:"),
        ("search=%00", "search:"),
    ];
    for (query, field) in refused {
        let r = get(&app, &format!("/v0.1/servers?{query}")).await;
        let shown = &query[..query.len().min(60)];
        assert_eq!(
            r.refusal(),
            (400, Some("bad_request")),
            "{shown}: {}",
            r.text
        );
        assert!(
            r.json["error"].as_str().unwrap().starts_with(field),
            "{shown}: {}",
            r.text
        );
        if let Some(why) = crate::openapi::violations(&ours, "get", "/v0.1/servers", 400, &r.json) {
            panic!("{why}");
        }
    }
    // Cursors that are not ours but harmless: bound as a value, they find what sorts after.
    for (cursor, n) in [
        ("zzz", 0),
        ("x'OR'1'='1", 0),
        ("io.fixture/a", 1),
        ("%27--", 2),
    ] {
        let r = get(&app, &format!("/v0.1/servers?cursor={}", urlencode(cursor))).await;
        assert_eq!(r.status, 200, "{cursor}: {}", r.text);
        assert_eq!(r.json["metadata"]["count"], n, "{cursor}: {}", r.text);
    }
    assert_eq!(t.count("registry_entries").await, 2, "nothing was dropped");
    let r = get(&app, &format!("/v0.1/servers/{huge}")).await;
    assert_eq!(r.refusal(), (400, Some("bad_request")), "a huge name");
    let r = get(&app, "/v0.1/servers/io.fixture%2Fa%00").await;
    assert_eq!(r.refusal(), (400, Some("bad_request")), "{}", r.text);
    let r = get(&app, "/v0.1/servers/io.fixture/a?limit=0").await;
    assert_eq!(
        r.status, 200,
        "the list's parameters mean nothing to one server"
    );

    // An entry stored before migration 20 has no server.json: left out, never made up,
    // until the next Registry read stores it.
    sqlx::query("UPDATE registry_entries SET server_json = NULL, official_json = NULL WHERE name = 'io.fixture/b'")
        .execute(&t.db.pool)
        .await
        .unwrap();
    assert_eq!(
        get(&app, "/v0.1/servers").await.json["metadata"]["count"],
        1
    );
    assert_eq!(get(&app, "/v0.1/servers/io.fixture/b").await.status, 404);
    let s = run(&t.db, &config(&registry.url, MapLookup::default()))
        .await
        .unwrap();
    assert_eq!(s.status, "completed", "{:?}", s.error);
    assert_eq!(
        get(&app, "/v0.1/servers").await.json["metadata"]["count"],
        2
    );
    assert_eq!(get(&app, "/v0.1/servers/io.fixture/b").await.status, 200);
}
on_both!(hostile_input_is_refused_or_finds_nothing);
