//! Golden vectors for the sampling gateway's rules (expected values from
//! tests/vectors/tools/gen_gateway.mjs, never from this code).
mod common;
use common::num;
use lowdown_core::gateway::receipt::{
    parse_statement, receipt_weight, verify_signature, ReceiptError,
};
use lowdown_core::gateway::reputation::{reputation, ReputationInputs};
use lowdown_core::gateway::score::{audit, live_score, probe_health, CallSample};
use lowdown_core::sample::{
    check_decision, salt_id, salt_id_epoch, salt_published, salt_state, salt_window,
};
use serde_json::{json, Value};

fn calls(v: &Value) -> Vec<CallSample> {
    serde_json::from_value(v.clone()).expect("calls")
}

fn opt_str(v: &Value) -> Option<String> {
    v.as_str().map(str::to_owned)
}

#[test]
fn salt_days_vectors() {
    common::check("salt_days.json", |i| {
        let id = i["salt_id"].as_str().unwrap();
        let now = i["now_ms"].as_i64().unwrap();
        let epoch = salt_id_epoch(id);
        Ok(json!({
            "state": salt_state(id, now),
            "epoch": epoch,
            "id_of_epoch": epoch.map(salt_id),
            "window": epoch.map(salt_window),
            "published": salt_published(id, now),
        }))
    });
}

#[test]
fn decision_check_vectors() {
    common::check("decision_check.json", |i| {
        let s = |k: &str| opt_str(&i[k]);
        check_decision(
            &s("service_id").unwrap(),
            &s("agent_id").unwrap(),
            i["sampling_rate"].as_f64().unwrap(),
            s("salt_id").as_deref(),
            s("salt").as_deref(),
            s("decision").as_deref(),
            i["now_ms"].as_i64().unwrap(),
        )
        .map(|d| serde_json::to_value(d).unwrap())
        .map_err(|e| common::error_kind(&e))
    });
}

#[test]
fn audit_vectors() {
    common::check("audit.json", |i| {
        Ok(num(
            serde_json::to_value(audit(&calls(&i["calls"]))).unwrap()
        ))
    });
}

#[test]
fn probe_health_vectors() {
    common::check("probe_health.json", |i| {
        Ok(num(
            serde_json::to_value(probe_health(&calls(&i["calls"]))).unwrap()
        ))
    });
}

#[test]
fn live_score_vectors() {
    common::check("live_score.json", |i| {
        let cap = i["cap"].as_u64().map(|c| c as u32);
        Ok(num(serde_json::to_value(live_score(
            &calls(&i["samples"]),
            cap,
        ))
        .unwrap()))
    });
}

#[test]
fn receipt_vectors() {
    let cases = common::load("receipt.json");
    for c in &cases {
        let i = &c.input;
        let got = parse_statement(&i["statement"]);
        if let Some(kind) = &c.error {
            let e = got.expect_err(&c.name);
            assert_eq!(&common::error_kind(&e), kind, "{}", c.name);
            continue;
        }
        let st = got.unwrap_or_else(|e| panic!("{}: {e}", c.name));
        let check = |key: &str, sig: &str| match i[sig].as_str() {
            None => None,
            Some(s) => Some(
                verify_signature(sig, i[key].as_str().unwrap(), s, st.canonical.as_bytes()).is_ok(),
            ),
        };
        let (a, s) = (
            check("agent_public_key", "agent_signature"),
            check("service_public_key", "service_signature"),
        );
        let got = json!({
            "hash": st.hash, "canonical": st.canonical, "agent_valid": a, "service_valid": s,
            "weight": receipt_weight(a == Some(true), s == Some(true)),
        });
        assert_eq!(num(got), c.expected.clone().unwrap(), "{}", c.name);
    }
}

#[test]
#[allow(
    clippy::disallowed_methods,
    reason = "the harness reads the vector file for error_path, which common::Case omits"
)]
fn receipt_error_paths() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/vectors/receipt.json"
    ))
    .unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    for c in v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c.get("error_path").is_some())
    {
        let e = parse_statement(&c["input"]["statement"]).unwrap_err();
        let ReceiptError::InvalidStatement { field, .. } = e else {
            panic!()
        };
        assert_eq!(field, c["error_path"].as_str().unwrap(), "{}", c["name"]);
    }
}

#[test]
fn reputation_vectors() {
    common::check("reputation.json", |i| {
        let inputs: ReputationInputs = serde_json::from_value(i.clone()).expect("inputs");
        Ok(num(serde_json::to_value(reputation(&inputs)).unwrap()))
    });
}
