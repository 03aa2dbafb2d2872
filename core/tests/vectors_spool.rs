//! Golden vectors for `record::spool`.
mod common;
use lowdown_core::record::spool::{self, Entry};
use serde_json::{json, Value};

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn spool_vectors() {
    common::check("spool.json", |i| {
        let s = |k: &str| i[k].as_str().unwrap();
        Ok(match s("op") {
            "file_name" => json!(spool::file_name(
                i["now_ms"].as_u64().unwrap(),
                i["seq"].as_u64().unwrap(),
                i["pid"].as_u64().unwrap() as u32,
                s("token")
            )),
            "claim_name" => json!(spool::claim_name(
                s("name"),
                i["pid"].as_u64().unwrap() as u32
            )),
            "entry" => match spool::entry(s("name")) {
                Entry::Waiting => json!({"kind": "waiting"}),
                Entry::Claimed { pid, original } => {
                    json!({"kind": "claimed", "pid": pid, "original": original})
                }
                Entry::Other => json!({"kind": "other"}),
            },
            "encode" => json!(spool::encode(&strings(&i["records"]))),
            "decode" => {
                let d = spool::decode(s("text"));
                json!({"records": d.records, "corrupt": d.corrupt})
            }
            "over_bound" => json!(spool::over_bound(&strings(&i["names"]))),
            "dropped" => json!(spool::dropped(
                i["previous"].as_str(),
                i["records"].as_u64().unwrap(),
                s("now_iso")
            )),
            other => panic!("unknown spool op {other}"),
        })
    });
}
