//! Golden vectors for what the gateway carries: allow rules, path refusals and the header
//! allowlists (expected values from tests/vectors/tools/gen_gateway_rules.mjs).
mod common;
use lowdown_core::gateway::allow::{service_selected, GatewayRules};
use lowdown_core::gateway::headers::{
    connection_listed, forward_request_header, forward_response_header,
};
use serde_json::{json, Value};

fn rules(i: &Value) -> Result<GatewayRules, String> {
    let allow: Vec<String> = common::optional(i, "allow")?;
    GatewayRules::new(&allow, i["mode"].as_str(), i["credential_header"].as_str())
        .map_err(|e| common::error_kind(&e))
}

fn names(i: &Value) -> Vec<String> {
    common::optional(i, "names").expect("names")
}

#[test]
fn gateway_route_vectors() {
    common::check("gateway_route.json", |i| {
        let verdict = rules(i)?.check(i["method"].as_str().unwrap(), &common::string(&i["target"]));
        Ok(serde_json::to_value(verdict).unwrap())
    });
}

#[test]
fn gateway_request_headers_vectors() {
    common::check("gateway_request_headers.json", |i| {
        Ok(json!(rules(i)?.keep_request_headers(&names(i))))
    });
}

#[test]
fn gateway_forward_headers_vectors() {
    common::check("gateway_forward_headers.json", |i| {
        let lines: Vec<String> = common::optional(i, "connection")?;
        let listed = connection_listed(lines.iter().map(String::as_str));
        let pass = i["passthrough"].as_str();
        let keep = |n: &String| {
            let n = n.to_ascii_lowercase();
            match i["direction"].as_str() {
                Some("request") => forward_request_header(&n, &listed, pass),
                _ => forward_response_header(&n, &listed),
            }
        };
        Ok(json!(names(i).into_iter().filter(keep).collect::<Vec<_>>()))
    });
}

#[test]
fn gateway_service_selected_vectors() {
    common::check("gateway_service_selected.json", |i| {
        let s = |k: &str| i[k].as_str().unwrap();
        Ok(json!(service_selected(
            i["filter"].as_str(),
            s("slug"),
            s("service_id")
        )))
    });
}
