//! The answers the lowdown-proxy pages print (issue 26 item 1), held against real ones:
//! after a Scanner run over a fixture Registry and recorded calls, each printed example in
//! `printed_answers.json` has every field in the real answer, with the same JSON type
//! (a printed null or placeholder accepts any), in the printed order. Seed 000 prints its
//! scanner example with `scanner` after the interaction fields; seed 001's order (the
//! Registry, the packages and the Scanner before the interaction fields) is the one served,
//! so that example's top level is held for its fields, its scanner block for their order.

use std::fmt;

use crate::common;
use crate::scanner_fixtures;

use common::{get, get_as, post, record, TestDb};
use lowdown_server::scanner::run;
use scanner_fixtures::mcp::Mcp;
use scanner_fixtures::registry::{streamable, Registry};
use scanner_fixtures::{config, MapLookup};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{json, Value};

/// JSON with its object keys in document order (the crate's `Value` sorts them).
#[derive(Debug)]
enum Ordered {
    Object(Vec<(String, Ordered)>),
    Array(Vec<Ordered>),
    Scalar(Value),
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("JSON")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Ordered, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, Ordered>()? {
                    out.push((k, v));
                }
                Ok(Ordered::Object(out))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Ordered, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = s.next_element()? {
                    out.push(v);
                }
                Ok(Ordered::Array(out))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(json!(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(json!(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(json!(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(json!(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(json!(v)))
            }
            fn visit_unit<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(Value::Null))
            }
        }
        d.deserialize_any(V)
    }
}

impl Ordered {
    fn parse(text: &str) -> Ordered {
        serde_json::from_str(text).expect("JSON")
    }

    fn get(&self, key: &str) -> Option<&Ordered> {
        match self {
            Ordered::Object(kv) => kv.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        match self {
            Ordered::Object(kv) => kv.iter().map(|(k, _)| k.as_str()).collect(),
            _ => Vec::new(),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Ordered::Object(_) => "object",
            Ordered::Array(_) => "array",
            Ordered::Scalar(Value::Null) => "null",
            Ordered::Scalar(Value::Bool(_)) => "boolean",
            Ordered::Scalar(Value::Number(_)) => "number",
            Ordered::Scalar(_) => "string",
        }
    }
}

/// Where `real` differs from the printed `example` at `path`: a missing field, another
/// type, another order (unless `ordered` is false at this level only).
fn differences(
    path: &str,
    example: &Ordered,
    real: &Ordered,
    ordered: bool,
    out: &mut Vec<String>,
) {
    if example.kind() == "null" {
        return;
    }
    if real.kind() != example.kind() && real.kind() != "null" {
        out.push(format!(
            "{path}: printed {}, served {}",
            example.kind(),
            real.kind()
        ));
        return;
    }
    match (example, real) {
        (Ordered::Object(fields), Ordered::Object(_)) => {
            let served = real.keys();
            let mut last = None;
            for (k, v) in fields {
                let at = format!("{path}.{k}");
                let Some(i) = served.iter().position(|s| s == k) else {
                    out.push(format!("{at}: missing"));
                    continue;
                };
                if ordered && last.is_some_and(|l| i < l) {
                    out.push(format!(
                        "{at}: out of the printed order (served {served:?})"
                    ));
                }
                last = Some(i);
                differences(&at, v, real.get(k).unwrap(), true, out);
            }
        }
        (Ordered::Array(printed), Ordered::Array(items)) => {
            if let Some(first) = printed.first() {
                for (i, item) in items.iter().enumerate() {
                    differences(&format!("{path}[{i}]"), first, item, true, out);
                }
            }
        }
        _ => {}
    }
}

fn printed(name: &str) -> Ordered {
    match Ordered::parse(include_str!("printed_answers.json")) {
        Ordered::Object(kv) => kv
            .into_iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("no printed example {name}")),
        _ => unreachable!(),
    }
}

fn holds(name: &str, served: &str, top_ordered: bool) {
    let mut out = Vec::new();
    differences(
        name,
        &printed(name),
        &Ordered::parse(served),
        top_ordered,
        &mut out,
    );
    assert!(out.is_empty(), "{}\nserved: {served}", out.join("\n"));
}

const NODE: &str = "ld_0123456789ab";

async fn every_printed_answer_holds_against_a_real_one(t: &TestDb) {
    let mcp = Mcp::start(false).await;
    let registry = Registry::start().await;
    registry.set_entries(
        vec![streamable("io.fixture/printed", &mcp.url("ok", "printed"))],
        10,
    );
    let s = run(&t.db, &config(&registry.url, MapLookup::default()))
        .await
        .unwrap();
    assert_eq!(s.status, "completed", "{:?}", s.error);
    let app = t.app();
    let records: Vec<Value> = (0..30)
        .map(|i| {
            let mut r = record(
                "mcp:modelcontextprotocol/brave-search",
                if i < 28 { "success" } else { "failure" },
            );
            r["node_id"] = json!(NODE);
            r
        })
        .collect();
    assert_eq!(
        post(&app, "/api/interactions", &json!(records))
            .await
            .status,
        201
    );

    let basic = get(&app, "/api/reputation/brave-search").await;
    assert_eq!(basic.status, 200, "{}", basic.text);
    assert_eq!(
        basic.json["resolved_target"],
        "mcp:modelcontextprotocol/brave-search"
    );
    holds("seed000_basic", &basic.text, true);
    let node = get_as(
        &app,
        "/api/reputation/brave-search",
        &[("x-lowdown-node-id", NODE)],
    )
    .await;
    holds("seed000_contributor", &node.text, true);
    assert!(
        node.json["task_breakdown"]["search"].is_object(),
        "{}",
        node.text
    );

    let full = get(&app, "/api/reputation/mcp:io.fixture%2Fprinted").await;
    assert_eq!(full.status, 200, "{}", full.text);
    holds("seed000_scanner", &full.text, false);
    holds("seed001_full", &full.text, true);
    // The served order around the printed fields (SPEC §5): name, message, the Registry,
    // the packages and the Scanner, the interaction fields, `source` last.
    let keys = Ordered::parse(&full.text).keys().join(",");
    assert!(
        keys.starts_with("target,resolved_target,message,registry,packages,scanner,interactions,")
            && keys.ends_with(",source"),
        "{keys}"
    );
    let sc = &full.json["scanner"];
    assert_eq!(sc["target"], "mcp:io.fixture/printed");
    assert_eq!(sc["status_distribution_30d"], json!({"200": 1}));
    assert_eq!(sc["schema_versions_30d"], 1);
    assert_eq!(sc["observation_method"]["calls_tools"], false);
    assert_eq!(
        full.json["message"],
        format!(
            "MCP Registry declaration recorded; observed daily by Lowdown Scanner since {}; no agent-reported interactions.",
            &sc["first_observed_at"].as_str().unwrap()[..10]
        )
    );
    // A change to one printed field is caught: the check can fail.
    let mut out = Vec::new();
    let renamed = full
        .text
        .replace("\"schema_versions_30d\"", "\"schema_versions\"");
    differences(
        "x",
        &printed("seed000_scanner"),
        &Ordered::parse(&renamed),
        false,
        &mut out,
    );
    assert_eq!(out, ["x.scanner.schema_versions_30d: missing"]);
    let swapped = basic
        .text
        .replacen("\"interactions\"", "\"interactions_\"", 1)
        .replacen("\"confidence\"", "\"interactions\"", 1);
    out.clear();
    differences(
        "y",
        &printed("seed000_basic"),
        &Ordered::parse(&swapped),
        true,
        &mut out,
    );
    assert!(
        out.iter().any(|d| d.contains("out of the printed order")),
        "{out:?}"
    );
}
on_both!(every_printed_answer_holds_against_a_real_one);
