//! Runs `tests/vectors/expand_path.json` against `lowdown_core::logdiff::expand_path`.

mod common;

use lowdown_core::logdiff::expand_path;
use serde_json::Value;

#[test]
fn expand_path_vectors() {
    common::check("expand_path.json", |input| {
        let env = input["env"].as_object().expect("env").clone();
        let lookup = move |name: &str| env.get(name).and_then(Value::as_str).map(str::to_owned);
        Ok(Value::String(expand_path(
            input["path"].as_str().expect("path"),
            &lookup,
            input["home"].as_str(),
        )))
    });
}
