//! `POST /v1/sampling/verify`: anyone can recompute a past sampling decision once its salt
//! is published (SPEC §4). Stateless: the salt comes in the request.

use axum::Json;
use lowdown_core::sample::{decide, verify as core_verify};
use serde_json::{json, Value};

use crate::error::{AppError, AppResult};
use crate::extract::JsonBody;

/// Longest id or salt accepted, in characters.
pub const MAX_INPUT: usize = 256;

fn text<'a>(body: &'a Value, key: &str) -> AppResult<&'a str> {
    match body.get(key) {
        None | Some(Value::Null) => Err(AppError::bad_request(format!("{key}: missing"))),
        Some(Value::String(s)) => {
            super::check_name(key, s, MAX_INPUT)?;
            Ok(s)
        }
        Some(_) => Err(AppError::bad_request(format!("{key}: must be a string"))),
    }
}

/// Recomputes `{roll, bucket, sampled}`; with a claimed `roll` and `sampled`, also says
/// whether they match (`matches`).
pub async fn verify(JsonBody(body): JsonBody) -> AppResult<Json<Value>> {
    if !body.is_object() {
        return Err(AppError::bad_request("body: must be a JSON object"));
    }
    let (service, agent) = (text(&body, "service_id")?, text(&body, "agent_id")?);
    let (salt_id, salt) = (text(&body, "salt_id")?, text(&body, "salt")?);
    let rate = match body.get("sampling_rate") {
        None | Some(Value::Null) => return Err(AppError::bad_request("sampling_rate: missing")),
        Some(v) => v
            .as_f64()
            .filter(|r| (0.0..=1.0).contains(r))
            .ok_or_else(|| AppError::bad_request("sampling_rate: must be a number from 0 to 1"))?,
    };
    let claimed_roll = match body.get("roll") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Some(s.as_str())
        }
        Some(_) => return Err(AppError::bad_request("roll: must be 64 hex digits")),
    };
    let claimed_sampled = match body.get("sampled") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => return Err(AppError::bad_request("sampled: must be true or false")),
    };
    let d = decide(service, agent, salt_id, salt, rate);
    let matches = match (claimed_roll, claimed_sampled) {
        (Some(r), Some(s)) => Some(core_verify(service, agent, salt_id, salt, rate, r, s)),
        (None, None) => None,
        _ => {
            return Err(AppError::bad_request(
                "roll, sampled: give both to check a decision, or neither",
            ))
        }
    };
    Ok(Json(
        json!({"roll": d.roll, "bucket": d.bucket, "sampled": d.sampled, "matches": matches}),
    ))
}
