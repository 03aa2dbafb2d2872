//! Golden vectors for `record::delivery::delivery` (what an ingest answer means for a batch).
mod common;
use lowdown_core::record::delivery::delivery;

#[test]
fn delivery_vectors() {
    common::check("delivery.json", |i| {
        let d = delivery(
            i["len"].as_u64().unwrap() as u32,
            i["status"].as_u64().map(|s| s as u16),
            i["retry_after"].as_str(),
            i["body"].as_str(),
        );
        Ok(serde_json::to_value(d).unwrap())
    });
}
