//! Golden vectors for `identity` (node.json) and `settings` (the environment).
mod common;
use lowdown_core::identity;
use lowdown_core::settings::{self, Client};
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
