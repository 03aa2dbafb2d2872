//! Golden vectors for `identity` (node.json), `settings` (the environment) and `stored`
//! (config.json, and where a host delivers).
mod common;
use lowdown_core::settings::{self, Client};
use lowdown_core::{identity, stored};
use serde_json::{json, Value};

#[test]
fn node_identity_vectors() {
    common::check("node_identity.json", |i| {
        let s = |k: &str| i[k].as_str().unwrap();
        Ok(match s("op") {
            "parse" => serde_json::to_value(identity::parse(s("text"))).unwrap(),
            "format" => json!(identity::format(&identity::NodeIdentity {
                node_id: s("node_id").into(),
                created_at: s("created_at").into(),
            })),
            "new" => {
                let mut random = [0u8; 6];
                random.copy_from_slice(&hex::decode(s("random_hex")).unwrap());
                serde_json::to_value(identity::new_identity(random, s("now_iso"))).unwrap()
            }
            other => panic!("unknown op {other}"),
        })
    });
}

#[test]
fn settings_vectors() {
    common::check("settings.json", |i| {
        let env = i["env"].as_object().unwrap().clone();
        let lookup = move |k: &str| env.get(k).and_then(Value::as_str).map(str::to_owned);
        let client = match i["client"].as_str().unwrap() {
            "proxy" => Client::Proxy,
            _ => Client::Telemetry,
        };
        Ok(serde_json::to_value(settings::from_env(
            &lookup,
            i["user_home"].as_str().unwrap(),
            client,
        ))
        .unwrap())
    });
}

/// The value, or the refusal's kind.
fn or_error<T: serde::Serialize>(r: Result<T, stored::Invalid>) -> Result<Value, String> {
    r.map(|v| serde_json::to_value(v).unwrap())
        .map_err(|e| common::error_kind(&e))
}

#[test]
fn stored_settings_vectors() {
    common::check("stored_settings.json", |i| {
        let text = i["text"].as_str();
        let key = i["key"].as_str().unwrap();
        match i["op"].as_str().unwrap() {
            "get" => or_error(stored::get(text, key)),
            "set" => or_error(stored::set(text, key, i["value"].as_str())),
            other => panic!("unknown op {other}"),
        }
    });
}

#[test]
fn destination_vectors() {
    common::check("destination.json", |i| {
        let settings = serde_json::from_value(i["settings"].clone()).unwrap();
        Ok(serde_json::to_value(stored::destination(
            &settings,
            i["stored"].as_str(),
            i["announcement"].as_str(),
        ))
        .unwrap())
    });
}
