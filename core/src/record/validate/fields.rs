//! Field readers shared by record and observation validation: each reads one key of a
//! JSON object, checks it and returns a typed value or a [`ValidationError`] naming the key.
//! Messages never echo the submitted value (it may be huge or hostile).

use super::{ValidationError, ValidationErrorKind as K, MAX_RECORD_ID};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The value of `key`, treating JSON `null` as absent.
fn get<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    m.get(key).filter(|v| !v.is_null())
}

/// Checks a string: non-empty, no control characters, at most `max` characters.
pub(crate) fn check_text(key: &str, s: &str, max: usize) -> Result<(), ValidationError> {
    if s.is_empty() {
        return Err(ValidationError::new(K::Empty, key, "must not be empty"));
    }
    // Counting stops early so a 12 MB string costs no more than a short one.
    if s.chars().take(max + 1).count() > max {
        return Err(ValidationError::new(
            K::TooLong,
            key,
            format!("must be at most {max} characters"),
        ));
    }
    if s.chars().any(char::is_control) {
        return Err(ValidationError::new(
            K::ControlCharacter,
            key,
            "must not contain control characters",
        ));
    }
    Ok(())
}

/// An optional string field (absent or `null` → `None`).
pub(crate) fn opt_text(
    m: &Map<String, Value>,
    key: &str,
    max: usize,
) -> Result<Option<String>, ValidationError> {
    match get(m, key) {
        None => Ok(None),
        Some(Value::String(s)) => check_text(key, s, max).map(|()| Some(s.clone())),
        Some(_) => Err(ValidationError::new(K::WrongType, key, "must be a string")),
    }
}

/// An optional boolean field (absent or `null` → `None`).
pub(crate) fn opt_bool(m: &Map<String, Value>, key: &str) -> Result<Option<bool>, ValidationError> {
    match get(m, key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(ValidationError::new(
            K::WrongType,
            key,
            "must be true or false",
        )),
    }
}

/// A required string field.
pub(crate) fn req_text(
    m: &Map<String, Value>,
    key: &str,
    max: usize,
) -> Result<String, ValidationError> {
    opt_text(m, key, max)?.ok_or_else(|| ValidationError::new(K::MissingField, key, "is required"))
}

/// The optional client idempotency key: at most 64 of `[A-Za-z0-9_-]`.
pub(crate) fn opt_record_id(m: &Map<String, Value>) -> Result<Option<String>, ValidationError> {
    let id = opt_text(m, "record_id", MAX_RECORD_ID)?;
    if let Some(s) = &id {
        if !s
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(ValidationError::new(
                K::InvalidFormat,
                "record_id",
                "must match ^[A-Za-z0-9_-]{1,64}$",
            ));
        }
    }
    Ok(id)
}

/// An optional enumeration field; `allowed` is the `a|b|c` list quoted in the message.
pub(crate) fn enum_field<T: DeserializeOwned>(
    m: &Map<String, Value>,
    key: &str,
    allowed: &str,
) -> Result<Option<T>, ValidationError> {
    match get(m, key) {
        None => Ok(None),
        Some(v @ Value::String(_)) => T::deserialize(v).map(Some).map_err(|_| {
            ValidationError::new(K::UnknownValue, key, format!("must be one of {allowed}"))
        }),
        Some(_) => Err(ValidationError::new(
            K::WrongType,
            key,
            format!("must be a string, one of {allowed}"),
        )),
    }
}

/// An optional finite number within `lo..=hi`.
pub(crate) fn opt_f64_range(
    m: &Map<String, Value>,
    key: &str,
    lo: f64,
    hi: f64,
) -> Result<Option<f64>, ValidationError> {
    match get(m, key) {
        None => Ok(None),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(x) if x.is_finite() && (lo..=hi).contains(&x) => Ok(Some(x)),
            _ => Err(ValidationError::new(
                K::OutOfRange,
                key,
                format!("must be a number from {lo} to {hi}"),
            )),
        },
        Some(_) => Err(ValidationError::new(K::WrongType, key, "must be a number")),
    }
}

/// A required finite number within `lo..=hi`.
pub(crate) fn req_f64_range(
    m: &Map<String, Value>,
    key: &str,
    lo: f64,
    hi: f64,
) -> Result<f64, ValidationError> {
    opt_f64_range(m, key, lo, hi)?
        .ok_or_else(|| ValidationError::new(K::MissingField, key, "is required"))
}

/// An optional whole number within `lo..=hi` (`2.0` counts as whole; `2.5` does not).
pub(crate) fn opt_u64_range(
    m: &Map<String, Value>,
    key: &str,
    lo: u64,
    hi: u64,
) -> Result<Option<u64>, ValidationError> {
    match get(m, key) {
        None => Ok(None),
        Some(Value::Number(n)) => {
            let whole = n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|x| x.fract() == 0.0 && *x >= 0.0 && *x <= hi as f64)
                    .map(|x| x as u64)
            });
            match whole {
                Some(x) if (lo..=hi).contains(&x) => Ok(Some(x)),
                _ => Err(ValidationError::new(
                    K::OutOfRange,
                    key,
                    format!("must be a whole number from {lo} to {hi}"),
                )),
            }
        }
        Some(_) => Err(ValidationError::new(K::WrongType, key, "must be a number")),
    }
}
