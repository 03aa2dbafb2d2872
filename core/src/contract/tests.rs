//! The contract and the code it describes cannot drift apart: every enumeration is its Rust
//! type's serde names, every field list what the type writes, every limit what the
//! validators enforce.

use super::*;
use crate::record::validate::validate_record;
use crate::record::{
    ErrorLayer, FailureType, InteractionRecord, Outcome, RequestKind, Source, TargetType,
};
use crate::telemetry::{validate_observation, Observation};
use serde::Serialize;

fn names<T: Serialize>(all: &[T]) -> Vec<String> {
    all.iter()
        .map(|v| {
            serde_json::to_value(v)
                .unwrap()
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[test]
fn enumerations_are_the_serde_names_of_their_types() {
    use ErrorLayer as E;
    use FailureType as F;
    // Each list of variants is exhaustive: a new variant breaks these matches first.
    let outcome = |o: Outcome| match o {
        Outcome::Success | Outcome::Partial | Outcome::Failure | Outcome::Cancelled => o,
    };
    let failure = |f: F| match f {
        F::InvalidArguments | F::Timeout | F::ServerError | F::ToolError | F::Unknown => f,
    };
    let layer = |l: E| match l {
        E::Tool | E::Request | E::Server => l,
    };
    let kind = |k: RequestKind| match k {
        RequestKind::Tool | RequestKind::Protocol => k,
    };
    let target = |t: TargetType| match t {
        TargetType::Tool | TargetType::Agent | TargetType::Service | TargetType::Human => t,
    };
    let source = |s: Source| match s {
        Source::Organic | Source::Seeded | Source::Synthetic => s,
    };
    use Outcome::*;
    assert_eq!(
        names(&[Success, Partial, Failure, Cancelled].map(outcome)),
        OUTCOMES
    );
    assert_eq!(
        names(
            &[
                F::InvalidArguments,
                F::Timeout,
                F::ServerError,
                F::ToolError,
                F::Unknown
            ]
            .map(failure)
        ),
        FAILURE_TYPES
    );
    assert_eq!(
        names(&[E::Tool, E::Request, E::Server].map(layer)),
        ERROR_LAYERS
    );
    assert_eq!(
        names(&[RequestKind::Tool, RequestKind::Protocol].map(kind)),
        REQUEST_KINDS
    );
    assert_eq!(
        names(
            &[
                TargetType::Tool,
                TargetType::Agent,
                TargetType::Service,
                TargetType::Human
            ]
            .map(target)
        ),
        TARGET_TYPES
    );
    assert_eq!(
        names(&[Source::Organic, Source::Seeded, Source::Synthetic].map(source)),
        SOURCES
    );
}

fn full_record() -> InteractionRecord {
    InteractionRecord {
        record_id: Some("r-1".into()),
        actor: "a".into(),
        target: "npm:x".into(),
        target_type: TargetType::Tool,
        task_type: "t".into(),
        outcome: Outcome::Failure,
        failure_type: Some(FailureType::ToolError),
        error_layer: Some(ErrorLayer::Tool),
        request_kind: RequestKind::Tool,
        latency_ms: Some(1.0),
        source: Source::Organic,
        node_id: Some("ld_0123456789ab".into()),
        server_version: Some("1.0".into()),
        schema_hash: Some("a".repeat(64)),
        recorder_version: Some("0.1.0".into()),
        protocol_version: Some("2025-06-18".into()),
        tools_has_more: Some(false),
    }
}

fn keys<T: Serialize>(v: &T) -> Vec<String> {
    serde_json::to_value(v)
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[test]
fn the_field_lists_are_what_the_types_write_in_order() {
    let written = {
        let mut k = keys(&full_record());
        // serde_json's maps are sorted; compare as sets, then the order by the struct.
        k.sort();
        k
    };
    let mut listed: Vec<String> = RECORD.fields.iter().map(|f| f.name.to_owned()).collect();
    listed.sort();
    assert_eq!(written, listed);
    let obs = Observation {
        host: "api.example.com".into(),
        method: "GET".into(),
        status: Some(200),
        latency_ms: 1.0,
        response_bytes: Some(1),
        source: Source::Organic,
        reporter: Some("w".into()),
        record_id: Some("r".into()),
    };
    let mut written = keys(&obs);
    written.retain(|k| k != "reporter"); // the server's: a wrapper name arrives as `source`
    written.sort();
    let mut listed: Vec<String> = OBSERVATION
        .fields
        .iter()
        .map(|f| f.name.to_owned())
        .collect();
    listed.sort();
    assert_eq!(written, listed);
}

#[test]
fn the_validators_enforce_the_listed_limits() {
    let base = serde_json::to_value(full_record()).unwrap();
    for f in RECORD.fields {
        let mut over = base.clone();
        match f.kind {
            Kind::Text { max, pattern } => {
                let fill = if pattern.is_some() { "0" } else { "x" };
                over[f.name] = json!(fill.repeat(max + 1));
            }
            Kind::Enum(_) => over[f.name] = json!("no-such-value"),
            Kind::Number { max, .. } => over[f.name] = json!(max * 2.0 + 1.0),
            Kind::Integer { max, .. } => over[f.name] = json!(max + 1),
            Kind::Bool => over[f.name] = json!("yes"),
        }
        let err = validate_record(&over).expect_err(f.name);
        assert_eq!(err.field, f.name, "{err}");
        if f.required {
            let mut absent = base.clone();
            absent.as_object_mut().unwrap().remove(f.name);
            assert!(validate_record(&absent).is_err(), "{} is required", f.name);
        }
    }
    let obs = json!({"host": "api.example.com", "method": "GET", "status": 200, "latency_ms": 1});
    for f in OBSERVATION.fields.iter().filter(|f| f.required) {
        let mut absent = obs.clone();
        absent.as_object_mut().unwrap().remove(f.name);
        assert!(
            validate_observation(&absent).is_err(),
            "{} is required",
            f.name
        );
    }
    let mut long = obs.clone();
    long["method"] = json!("M".repeat(MAX_METHOD + 1));
    assert!(validate_observation(&long).is_err());
}

#[test]
fn every_emitted_form_names_every_field() {
    let (ts, py, js, llms) = (typescript(), python_module(), js_module(), llms_fields());
    for c in CONTRACTS {
        for out in [&ts, &py, &js, &llms] {
            assert!(out.contains(c.name));
            for f in c.fields {
                assert!(out.contains(f.name), "{} in\n{out}", f.name);
            }
        }
        let schema = json_schema(c);
        assert_eq!(
            schema["properties"].as_object().unwrap().len(),
            c.fields.len()
        );
    }
    assert!(ts.contains("outcome: 'success' | 'partial' | 'failure' | 'cancelled'"));
    assert!(py.contains("OUTCOME_VALUES = (\"success\", \"partial\", \"failure\", \"cancelled\",)"));
    assert!(js.contains("target: { kind: 'text', max: 256, required: true"));
}
