//! Golden vectors for `gateway::router::Router`: scripted steps, one result each.
mod common;
use lowdown_core::gateway::router::Router;
use serde_json::Value;

/// A vector's catalog or salt: a string is sent as it is, anything else as its JSON text.
fn text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

fn ms(v: &Value) -> i64 {
    v.as_i64().unwrap()
}

#[test]
fn gateway_router_vectors() {
    common::check("gateway_router.json", |input| {
        let s = &input["settings"];
        let mut r = Router::new(
            s["agent_key"].as_str(),
            s["gateway_url"].as_str(),
            s["services"].as_str(),
        );
        let mut out = Vec::new();
        for step in input["steps"].as_array().unwrap() {
            let (op, a) = step.as_object().unwrap().iter().next().unwrap();
            let got = match op.as_str() {
                "wants_fetch" => Value::from(r.wants_fetch(ms(a))),
                "loaded" => Value::from(r.loaded(ms(&a[0]), &text(&a[1]), &text(&a[2]))),
                "fetch_failed" => {
                    r.fetch_failed(ms(a));
                    Value::Null
                }
                "select" => {
                    r.select(a.as_str());
                    Value::Null
                }
                "route" => {
                    let names: Vec<&str> = a[3]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|n| n.as_str().unwrap())
                        .collect();
                    let route = r.route(
                        ms(&a[0]),
                        a[1].as_str().unwrap(),
                        a[2].as_str().unwrap(),
                        &names,
                    );
                    serde_json::to_value(route).unwrap()
                }
                "refused" => serde_json::to_value(r.refused(
                    ms(&a[0]),
                    a[1].as_u64().unwrap() as u16,
                    a[2].as_str(),
                ))
                .unwrap(),
                "status" => serde_json::to_value(r.status(ms(a))).unwrap(),
                other => return Err(format!("unknown step {other}")),
            };
            out.push(got);
        }
        Ok(Value::Array(out))
    });
}

#[test]
fn gateway_vendor_location_vectors() {
    common::check("gateway_vendor_location.json", |i| {
        let r = Router::new(Some("ak"), i["gateway_url"].as_str(), None);
        let s = |k: &str| i[k].as_str().unwrap();
        Ok(Value::from(r.vendor_location(
            s("vendor"),
            s("slug"),
            s("location"),
        )))
    });
}
