//! Golden vectors for the spool's and node.json's plans (`record::spool::{Claim, Write}`,
//! `identity::Load`): scripted feeds, the step after each.
mod common;
use lowdown_core::files::{Outcome, Step};
use lowdown_core::identity::{self, Load};
use lowdown_core::record::spool::{Claim, Write};
use serde_json::Value;

/// One feed of a vector as the core's outcome, or `finish` for a claim's delivery.
enum Feed {
    Outcome(Outcome),
    Finish(bool),
}

fn feed(f: &Value) -> Feed {
    if let Some(taken) = f.get("finish") {
        return Feed::Finish(taken.as_bool().unwrap());
    }
    if let Some(entries) = f.get("listing") {
        let entries = entries
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e[0].as_str().unwrap().to_owned(), e[1].as_f64()))
            .collect();
        return Feed::Outcome(Outcome::Listing(entries));
    }
    let text = f.get("text").and_then(Value::as_str).map(str::to_owned);
    let result = f.get("result").and_then(Value::as_str).unwrap_or("");
    Feed::Outcome(Outcome::named(result, text).expect("a known result"))
}

fn run(
    input: &Value,
    start: &mut dyn FnMut() -> Step,
    step: &mut dyn FnMut(Feed) -> Step,
) -> Result<Value, String> {
    let mut out = vec![start()];
    for f in input["feed"].as_array().unwrap() {
        out.push(step(feed(f)));
    }
    serde_json::to_value(out).map_err(|e| e.to_string())
}

#[test]
fn spool_claim_vectors() {
    common::check("spool_claim.json", |i| {
        let p = &i["plan"];
        let claim = std::cell::RefCell::new(Claim::new(
            p["pid"].as_u64().unwrap() as u32,
            p["now_ms"].as_f64().unwrap(),
        ));
        run(i, &mut || claim.borrow_mut().start(), &mut |f| match f {
            Feed::Outcome(o) => claim.borrow_mut().feed(o),
            Feed::Finish(taken) => claim.borrow_mut().finish(taken),
        })
    });
}

#[test]
fn spool_write_vectors() {
    common::check("spool_write.json", |i| {
        let p = &i["plan"];
        let records: Vec<String> = p["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap().to_owned())
            .collect();
        let write = std::cell::RefCell::new(Write::new(
            &records,
            p["seq"].as_u64().unwrap(),
            p["pid"].as_u64().unwrap() as u32,
            p["now_ms"].as_u64().unwrap(),
            p["now_iso"].as_str().unwrap(),
            p["token"].as_str().unwrap(),
        ));
        run(i, &mut || write.borrow_mut().start(), &mut |f| match f {
            Feed::Outcome(o) => write.borrow_mut().feed(o),
            Feed::Finish(_) => Step::Failed,
        })
    });
}

#[test]
fn node_identity_load_vectors() {
    common::check("node_identity_load.json", |i| {
        let p = &i["plan"];
        let fresh = identity::new_identity_hex(
            p["random_hex"].as_str().unwrap(),
            p["now_iso"].as_str().unwrap(),
        )
        .ok_or_else(|| "random_hex".to_owned())?;
        let load = std::cell::RefCell::new(Load::new(
            fresh,
            p["pid"].as_u64().unwrap() as u32,
            p["token"].as_str().unwrap(),
        ));
        run(i, &mut || load.borrow_mut().start(), &mut |f| match f {
            Feed::Outcome(o) => load.borrow_mut().feed(o),
            Feed::Finish(_) => Step::Failed,
        })
    });
}
