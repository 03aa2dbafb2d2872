//! Golden vectors for `telemetry::Budget`.
mod common;
use lowdown_core::telemetry::Budget;
use serde_json::Value;

fn num(v: &Value) -> f64 {
    v.as_f64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .unwrap()
}

#[test]
fn telemetry_budget_vectors() {
    common::check("telemetry_budget.json", |input| {
        let mut b = Budget::new(input["with_agent_key"].as_bool().unwrap());
        let mut out = Vec::new();
        for step in input["steps"].as_array().unwrap() {
            if let Some(t) = step.get("take") {
                out.push(Value::from(b.take(num(&t[0]), num(&t[1]) as u32)));
            } else if let Some(r) = step.get("refused") {
                b.refused(num(&r[0]), num(&r[1]));
            } else if let Some(a) = step.get("answered") {
                let status = a[2].as_u64().map(|s| s as u16);
                let answered = b.answered(
                    num(&a[0]),
                    num(&a[1]) as u32,
                    status,
                    a[3].as_str(),
                    a[4].as_str(),
                );
                out.push(serde_json::to_value(answered).unwrap());
            } else if let Some(w) = step.get("wait") {
                // JSON writes whole milliseconds as integers, as JavaScript does.
                let ms = b.wait_ms(num(w));
                out.push(if ms.fract() == 0.0 {
                    Value::from(ms as i64)
                } else {
                    Value::from(ms)
                });
            }
        }
        Ok(Value::Array(out))
    });
}
