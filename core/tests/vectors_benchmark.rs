//! Golden vectors for provider mode's rules (expected values from
//! tests/vectors/tools/gen_benchmark.mjs, never from this code; conformance.json's first
//! case replays a recorded probe of the real server-everything).
mod common;
use common::num;
use lowdown_core::benchmark::agreement::{self, Run};
use lowdown_core::benchmark::directive::check_new;
use lowdown_core::benchmark::displace::{decide, Displayed, Reading};
use lowdown_core::benchmark::priority::Candidate;
use lowdown_core::benchmark::submission::{check, SubmissionError};
use lowdown_core::benchmark::{agent, conformance, priority, verify, Kind};
use lowdown_core::scanner::probe::{BodyError, Method};
use lowdown_core::scanner::rpc::AnswerReader;
use lowdown_core::scanner::ProbeResult;
use lowdown_core::scanner::{ErrorType, Probe, Reply, Step};
use serde_json::{json, Value};

fn to_json(v: impl serde::Serialize) -> Value {
    num(serde_json::to_value(v).unwrap())
}

/// The reply a scripted entry stands for, read as the server's probe driver reads it.
fn reply(r: &Value, answer: Option<(u64, usize)>) -> Reply {
    if let Some(kind) = r.get("failed") {
        return Reply::Failed(serde_json::from_value::<ErrorType>(kind.clone()).unwrap());
    }
    let status = r["status"].as_u64().unwrap() as u16;
    let body = match answer {
        Some((id, cap)) if (200..300).contains(&status) => {
            let mut reader = AnswerReader::new(r["content_type"].as_str(), id, cap);
            reader.feed(r["body"].as_str().unwrap_or("").as_bytes());
            reader.finish().map_err(BodyError::Answer)
        }
        _ => Err(BodyError::NotRead),
    };
    Reply::Http {
        status,
        session_id: r["session_id"].as_str().map(str::to_owned),
        www_authenticate: false,
        elapsed_ms: r["elapsed_ms"].as_f64().unwrap_or(0.0),
        answer: body,
    }
}

/// Drives the Scanner's probe with scripted `replies`, in order.
fn replay(replies: &Value) -> Result<ProbeResult, String> {
    let mut next = replies.as_array().unwrap().iter();
    let mut probe = Probe::new(false, "0.1.0");
    let mut step = probe.start();
    let result = loop {
        match step {
            Step::Done(r) => break r,
            Step::Send(req) => {
                let r = next
                    .next()
                    .ok_or("the probe sent more requests than replies")?;
                if req.method == Method::Delete && r.get("failed").is_none() {
                    assert_eq!(req.answer, None);
                }
                step = probe.on_reply(reply(r, req.answer));
            }
        }
    };
    if next.next().is_some() {
        return Err("replies left over: the probe stopped early".into());
    }
    Ok(result)
}

#[test]
fn conformance_vectors() {
    common::check("conformance.json", |i| {
        Ok(to_json(conformance::score(&replay(&i["replies"])?)))
    });
}

#[test]
fn verify_vectors() {
    common::check("benchmark_verify.json", |i| {
        let checked = check(&i["body"], Kind::Protocol).map_err(|e| e.to_string())?;
        Ok(to_json(verify::verify(&checked, &replay(&i["replies"])?)))
    });
}

#[test]
fn agreement_vectors() {
    common::check("benchmark_agreement.json", |i| {
        let runs = |v: &Value| -> Vec<Run> { serde_json::from_value(v.clone()).unwrap() };
        Ok(match i["op"].as_str().unwrap() {
            "settle" => {
                let new: Run = serde_json::from_value(i["new"].clone()).unwrap();
                to_json(agreement::settle(&runs(&i["pending"]), &new))
            }
            "may_run" => {
                let verdict = agreement::may_run(
                    &runs(&i["pending"]),
                    i["provider"].as_str().unwrap(),
                    i["network"].as_str(),
                );
                verdict.map_or_else(to_json, |()| json!("ok"))
            }
            "split" => to_json(agreement::split_millicredits(
                i["total"].as_i64().unwrap(),
                i["n"].as_u64().unwrap() as usize,
            )),
            other => return Err(format!("unknown op {other}")),
        })
    });
}

#[test]
fn exclusion_vectors() {
    common::check("provider_exclusion.json", |i| {
        let times: Vec<i64> = serde_json::from_value(i["times"].clone()).unwrap();
        Ok(to_json(priority::excluded_until(
            &times,
            i["now_ms"].as_i64().unwrap(),
        )))
    });
}

#[test]
fn agent_verdict_vectors() {
    common::check("agent_verdict.json", |i| {
        let contains: Vec<String> = serde_json::from_value(i["contains"].clone()).unwrap();
        Ok(to_json(agent::verdict(
            i["answer"].as_str().unwrap(),
            &contains,
            i["latency_ms"].as_f64().unwrap(),
        )))
    });
}

#[test]
fn displace_vectors() {
    common::check("benchmark_displace.json", |i| {
        let current: Option<Displayed> = serde_json::from_value(i["current"].clone()).unwrap();
        let readings: Vec<Reading> = serde_json::from_value(i["readings"].clone()).unwrap();
        Ok(to_json(decide(
            current.as_ref(),
            &readings,
            i["now_ms"].as_i64().unwrap(),
        )))
    });
}

#[test]
fn provider_order_vectors() {
    common::check("provider_order.json", |i| {
        let providers = i["providers"].as_array().unwrap();
        let reps: Vec<Candidate> = providers
            .iter()
            .map(|p| serde_json::from_value(p.clone()).unwrap())
            .collect();
        let posted = i["posted_at_ms"].as_i64().unwrap();
        let mut out: Vec<(usize, String, i64)> = providers
            .iter()
            .zip(&reps)
            .map(|(p, r)| {
                let rank = priority::rank(r, &reps);
                let id = p["id"].as_str().unwrap().to_owned();
                (rank, id, priority::opens_at(posted, rank, reps.len()))
            })
            .collect();
        out.sort();
        Ok(json!(out
            .into_iter()
            .map(|(rank, id, at)| json!({"id": id, "rank": rank, "opens_at_ms": at}))
            .collect::<Vec<_>>()))
    });
}

/// Errors carry the field they name; the vectors' `error_path` is checked with the kind.
#[allow(
    clippy::disallowed_methods,
    reason = "the test reads the vector file; the core itself does no IO"
)]
fn check_paths(file: &str, field_of: impl Fn(&Value) -> Option<String>) {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/vectors")
            .join(file),
    )
    .unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    for c in v["cases"].as_array().unwrap() {
        if let Some(path) = c.get("error_path").and_then(Value::as_str) {
            assert_eq!(
                field_of(&c["input"]).as_deref(),
                Some(path),
                "{}",
                c["name"]
            );
        }
    }
}

#[test]
fn submission_vectors() {
    let run = |i: &Value| {
        check(
            &i["body"],
            Kind::parse(i["kind"].as_str().unwrap()).unwrap(),
        )
    };
    common::check("benchmark_submission.json", |i| {
        run(i).map(to_json).map_err(|e| common::error_kind(&e))
    });
    check_paths("benchmark_submission.json", |i| match run(i) {
        Err(SubmissionError::Invalid { field, .. }) => Some(field),
        Ok(_) => None,
    });
}

#[test]
fn directive_vectors() {
    common::check("benchmark_directive.json", |i| {
        check_new(&i["body"])
            .map(to_json)
            .map_err(|e| common::error_kind(&e))
    });
    check_paths("benchmark_directive.json", |i| {
        check_new(&i["body"]).err().map(|e| e.field().to_owned())
    });
}
