//! Golden vectors for `telemetry::host_from_url`.
mod common;
use lowdown_core::telemetry::host_from_url;

#[test]
fn host_from_url_vectors() {
    common::check("host_from_url.json", |input| {
        let url = common::string(&input["url"]);
        let host = host_from_url(&url);
        if let Some(h) = &host {
            assert!(
                !h.contains("CANARY"),
                "a URL part other than the host leaked: {h}"
            );
        }
        Ok(serde_json::to_value(host).unwrap())
    });
}
