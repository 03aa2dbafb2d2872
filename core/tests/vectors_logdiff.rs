//! Runs `tests/vectors/logdiff.json`: scripted steps against one `LogDiff`.

mod common;

use lowdown_core::logdiff::{Feed, LogDiff, LogDiffOptions};
use serde_json::{json, Value};

fn run(input: &Value) -> Result<Value, String> {
    let opts: LogDiffOptions = serde_json::from_value(input["options"].clone()).expect("options");
    let mut ld = LogDiff::new(opts).map_err(|e| common::error_kind(&e))?;
    let mut out = Vec::new();
    for step in input["steps"].as_array().expect("steps") {
        if let Some(path) = step["watch"].as_str() {
            ld.watch(path, step["size"].as_u64());
        } else if let Some(path) = step["feed"].as_str() {
            ld.feed(
                path,
                step["size"].as_u64().expect("size"),
                &common::bytes(&step["data"]),
            );
        } else if let Some(path) = step["restart"].as_str() {
            ld.restart(path);
        } else if let Some(path) = step["offset"].as_str() {
            out.push(json!(ld.offset(path)));
        } else if let Some(since) = step["take"].as_str() {
            out.push(json!(ld.take_block(since)));
        } else {
            panic!("unknown step {step}");
        }
    }
    Ok(Value::Array(out))
}

#[test]
fn logdiff_vectors() {
    common::check("logdiff.json", run);
}

#[test]
fn feed_reports_truncation_so_the_host_reads_again() {
    let mut ld = LogDiff::new(LogDiffOptions::default()).unwrap();
    ld.watch("/a.log", Some(0));
    assert_eq!(ld.feed("/a.log", 6, b"hello\n"), Feed::Read);
    assert_eq!(ld.feed("/a.log", 2, b""), Feed::Restarted);
    assert_eq!(ld.offset("/a.log"), 0);
    assert_eq!(ld.feed("/b.log", 2, b"x"), Feed::NotWatched);
}

#[test]
fn log_lines_with_canary_secrets_never_reach_the_block() {
    let canary = "CANARY0123456789abcdef0123456789abcdef";
    let mut ld = LogDiff::new(LogDiffOptions::default()).unwrap();
    ld.watch("/a.log", None);
    let text = format!(
        "ERROR password={canary}\nERROR Bearer {canary}\nERROR {}\n",
        &canary[6..]
    );
    ld.feed("/a.log", text.len() as u64, text.as_bytes());
    let block = ld.take_block("00:00:00").unwrap();
    assert!(
        !block.contains("CANARY") && !block.contains(&canary[6..]),
        "{block}"
    );
    assert_eq!(block.matches("[REDACTED]").count(), 3);
}

#[test]
fn invalid_pattern_names_the_problem() {
    let err = LogDiff::new(LogDiffOptions {
        pattern: Some("(".into()),
        ..Default::default()
    })
    .unwrap_err();
    assert!(err.to_string().starts_with("invalid log pattern"), "{err}");
}
