//! Loads the golden vectors in `tests/vectors/` and expands their compact forms
//! (`$repeat`, `$concat`, `$seq`, `$bytes_hex`, `$bytes`) exactly as every other host does.

#![allow(dead_code, reason = "each test binary uses a different subset")]
#![allow(
    clippy::disallowed_methods,
    reason = "the test harness reads the vector files; the core itself does no IO"
)]

use serde_json::Value;
use std::path::PathBuf;

/// One case of a vector file.
pub struct Case {
    /// Unique, readable name.
    pub name: String,
    /// Expanded input object.
    pub input: Value,
    /// Expected output, when the case expects success.
    pub expected: Option<Value>,
    /// Expected error `type`, when the case expects an error.
    pub error: Option<String>,
}

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors")
}

/// Names of cases the Rust host is known to fail in `file`, from `xfail.json`.
pub fn xfail(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(vectors_dir().join("xfail.json")).expect("xfail.json");
    let v: Value = serde_json::from_str(&text).expect("xfail.json is JSON");
    v["rust"][file]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Every case of `tests/vectors/<file>`, inputs expanded (byte forms become
/// `{"$bytes_hex": ...}`-free strings only where valid UTF-8; use [`bytes`] for byte inputs).
pub fn load(file: &str) -> Vec<Case> {
    let text = std::fs::read_to_string(vectors_dir().join(file)).expect("vector file");
    let v: Value = serde_json::from_str(&text).expect("vector file is JSON");
    let skip = xfail(file);
    v["cases"]
        .as_array()
        .expect("cases array")
        .iter()
        .filter(|c| !skip.iter().any(|s| Some(s.as_str()) == c["name"].as_str()))
        .map(|c| Case {
            name: c["name"].as_str().expect("case name").to_owned(),
            input: expand(&c["input"]),
            expected: c.get("expected").cloned(),
            error: c.get("error").and_then(|e| e.as_str()).map(str::to_owned),
        })
        .collect()
}

/// Expands `$repeat`, `$concat` and `$seq` into strings; leaves `$bytes*` forms for [`bytes`].
pub fn expand(v: &Value) -> Value {
    match v {
        Value::Object(m)
            if m.len() == 1
                && (m.contains_key("$repeat")
                    || m.contains_key("$concat")
                    || m.contains_key("$seq")) =>
        {
            Value::String(string(v))
        }
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), expand(x))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(expand).collect()),
        other => other.clone(),
    }
}

/// A string input, from a plain string or a `$repeat`/`$concat` form.
pub fn string(v: &Value) -> String {
    String::from_utf8(bytes(v)).expect("string input must be UTF-8; use bytes()")
}

/// A byte input, from a string or any `$` form.
pub fn bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::String(s) => s.as_bytes().to_vec(),
        Value::Object(m) if m.contains_key("$repeat") => {
            let a = m["$repeat"].as_array().expect("$repeat: [text, times]");
            let unit = bytes(&a[0]);
            unit.repeat(a[1].as_u64().expect("$repeat count") as usize)
        }
        Value::Object(m) if m.contains_key("$concat") || m.contains_key("$bytes") => {
            let parts = m
                .get("$concat")
                .or_else(|| m.get("$bytes"))
                .and_then(Value::as_array);
            parts.expect("parts array").iter().flat_map(bytes).collect()
        }
        Value::Object(m) if m.contains_key("$seq") => {
            let a = m["$seq"]
                .as_array()
                .expect("$seq: [prefix, from, to, suffix]");
            let (prefix, suffix) = (bytes(&a[0]), bytes(&a[3]));
            let (from, to) = (
                a[1].as_u64().expect("$seq from"),
                a[2].as_u64().expect("$seq to"),
            );
            (from..=to)
                .flat_map(|n| [prefix.clone(), n.to_string().into_bytes(), suffix.clone()])
                .flatten()
                .collect()
        }
        Value::Object(m) if m.contains_key("$bytes_hex") => {
            hex::decode(m["$bytes_hex"].as_str().expect("hex string")).expect("valid hex")
        }
        other => panic!("not a string or byte form: {other}"),
    }
}

/// The stable `type` tag an error serialises with, as the vectors' `error` field names it.
pub fn error_kind(e: &impl serde::Serialize) -> String {
    serde_json::to_value(e).expect("error serialises")["type"]
        .as_str()
        .expect("error has a type tag")
        .to_owned()
}

/// Runs `run` on every case of `file`, comparing results as JSON, and fails listing
/// every mismatching case by name.
pub fn check(file: &str, run: impl Fn(&Value) -> Result<Value, String>) {
    let cases = load(file);
    assert!(!cases.is_empty(), "{file} has no cases");
    let mut failures = Vec::new();
    for case in &cases {
        let got = run(&case.input);
        match (&case.expected, &case.error, got) {
            (Some(want), _, Ok(got)) if &got == want => {}
            (_, Some(kind), Err(got)) if &got == kind => {}
            (want, kind, got) => failures.push(format!(
                "{}: wanted {} got {:?}",
                case.name,
                want.as_ref()
                    .map(Value::to_string)
                    .or(kind.as_ref().map(|k| format!("error {k}")))
                    .unwrap_or_default(),
                got
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed in {file}:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The input field `key` deserialised, or its type's default when the case leaves it out.
pub fn optional<T: serde::de::DeserializeOwned + Default>(
    input: &Value,
    key: &str,
) -> Result<T, String> {
    match input.get(key) {
        None => Ok(T::default()),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| format!("{key}: {e}")),
    }
}

/// Writes whole floats as integers: JSON has one number type, and the generator's `1` is
/// the core's `1.0`.
pub fn num(v: Value) -> Value {
    match v {
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0 && n.is_f64()) => {
            serde_json::json!(n.as_f64().unwrap() as i64)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(num).collect()),
        Value::Object(m) => Value::Object(m.into_iter().map(|(k, x)| (k, num(x))).collect()),
        other => other,
    }
}
