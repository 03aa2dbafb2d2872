//! Telemetry (SPEC §4, the Prowl mirror path): observations of HTTP calls, the host
//! privacy filter, status → outcome class, and the server's weight and rate rules.
//!
//! Only the host of a request leaves the machine: [`prepare_observation`] takes the full
//! URL on the client, keeps its host (if the privacy filter allows it) and drops the rest.

use crate::record::validate::{
    check_batch, opt_record_id, opt_u64_range, req_f64_range, req_text, Checked, ValidationError,
    ValidationErrorKind, MAX_LATENCY_MS,
};
use crate::record::Source;
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod budget;
mod host;
mod ip;
mod listed;
mod private;
mod standing;
mod summary;
mod url;

pub use budget::Budget;
pub use host::{host_verdict, BlockReason, HostPolicy, HostVerdict};
pub use listed::{unlisted_host, unlisted_target};
pub use private::{
    is_blocked_ip, is_private_name, METADATA_NAMES, PRIVATE_NAME_SUFFIXES, SPECIAL_USE_SUFFIXES,
};
pub use standing::{
    key_tier, KeyStanding, EARNED_ACCEPTED, EARNED_TENURE_MS, EARNING_ACCEPTED, EARNING_TENURE_MS,
};
pub(crate) use summary::percentile;
pub use summary::{
    latency_bucket, summarize_telemetry, StatusCounts, TelemetryRollup, TelemetrySummary,
    WeightMix, WeightTier, LATENCY_BUCKETS_MS,
};
pub use url::host_from_url;

/// Why an IP address must never be reached or reported (the blocked IPv4/IPv6 table of the
/// host filter, IPv4-mapped and other embedded forms included), or `None` for a public one.
/// The Scanner checks every resolved address with it at connect time.
pub fn address_block_reason(addr: std::net::IpAddr) -> Option<BlockReason> {
    match addr {
        std::net::IpAddr::V4(a) => ip::classify_v4(a),
        std::net::IpAddr::V6(a) => ip::classify_v6(a),
    }
}

/// Observations one agent key may send per hour.
pub const RATE_LIMIT_PER_KEY_PER_HOUR: u32 = 600;
/// Observations one network (an IPv4 /24, an IPv6 /48) may send per hour without an
/// agent key.
pub const RATE_LIMIT_PER_IP_PER_HOUR: u32 = 60;
/// Agent registrations one network (an IPv4 /24, an IPv6 /48) may make per hour.
pub const REGISTRATIONS_PER_CALLER_PER_HOUR: u32 = 10;
/// Longest HTTP method token accepted.
pub const MAX_METHOD: usize = 16;
/// Largest `response_bytes`: the largest integer every host (JavaScript included) holds exactly.
pub const MAX_RESPONSE_BYTES: u64 = (1 << 53) - 1;
/// Longest wrapper name accepted in an observation's `source` (SPEC §4).
pub const MAX_REPORTER: usize = 64;

/// One observed HTTP call: what a telemetry client sends, and all it sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// Canonical host (see [`host_verdict`]); never a path, query or port.
    pub host: String,
    /// Uppercase HTTP method.
    pub method: String,
    /// HTTP status, `None` when no response arrived (connect error, timeout).
    pub status: Option<u16>,
    /// Milliseconds until the end of the response body (or the error).
    pub latency_ms: f64,
    /// Size of the response body, when known.
    pub response_bytes: Option<u64>,
    /// Where the data came from.
    pub source: Source,
    /// The reporting wrapper's name, when `source` named one (`"source":"my-wrapper"`
    /// means organic data from `my-wrapper`, SPEC §4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reporter: Option<String>,
    /// Optional client idempotency key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_id: Option<String>,
}

fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Validates one observation object (SPEC §4) and returns it normalised: host canonical,
/// method uppercase. `status` must be present (`null` for a connect error) and in
/// `100..=599`; `latency_ms` finite in `0..=86_400_000`; `response_bytes` optional, a whole
/// number up to 2^53−1; unknown fields are ignored and dropped. `source` is provenance when
/// it is `organic|seeded|synthetic` (default organic); any other 1–64 characters of
/// `[A-Za-z0-9._-]` name the reporting wrapper (the seed's `"source":"your-wrapper-name"`),
/// kept as `reporter` with provenance organic.
///
/// The host is checked for shape only, not against the privacy filter: a client testing
/// against a local server with `PROWL_TELEMETRY_ALLOW_PRIVATE=1` may legitimately send
/// `localhost`. A server that wants to refuse such hosts calls [`host_verdict`] itself.
pub fn validate_observation(v: &Value) -> Result<Observation, ValidationError> {
    let Some(m) = v.as_object() else {
        return Err(ValidationError::new(
            ValidationErrorKind::WrongType,
            "",
            "must be a JSON object",
        ));
    };
    let raw_host = req_text(m, "host", 300)?;
    let host = host::parse_host(&raw_host).map_err(|r| {
        let why = if r == BlockReason::UnicodeHost {
            "must be ASCII (send the xn-- form of an international name)"
        } else {
            "must be a bare host name or IP address (no scheme, port, path or userinfo)"
        };
        ValidationError::new(ValidationErrorKind::InvalidFormat, "host", why)
    })?;
    let method = req_text(m, "method", MAX_METHOD)?;
    if !method.bytes().all(is_token_char) {
        return Err(ValidationError::new(
            ValidationErrorKind::InvalidFormat,
            "method",
            "must be an HTTP method token",
        ));
    }
    if !m.contains_key("status") {
        return Err(ValidationError::new(
            ValidationErrorKind::MissingField,
            "status",
            "is required (null when no response arrived)",
        ));
    }
    let status = opt_u64_range(m, "status", 100, 599)?.map(|s| s as u16);
    let latency_ms = req_f64_range(m, "latency_ms", 0.0, MAX_LATENCY_MS)?;
    let response_bytes = opt_u64_range(m, "response_bytes", 0, MAX_RESPONSE_BYTES)?;
    let (source, reporter) = source_or_reporter(m.get("source"))?;
    let record_id = opt_record_id(m)?;
    Ok(Observation {
        host: host.to_string(),
        method: method.to_ascii_uppercase(),
        status,
        latency_ms,
        response_bytes,
        source,
        reporter,
        record_id,
    })
}

/// Reads an observation's `source`: provenance, or the name of the reporting wrapper.
fn source_or_reporter(v: Option<&Value>) -> Result<(Source, Option<String>), ValidationError> {
    const EXPECTED: &str =
        "must be organic|seeded|synthetic or a wrapper name of 1 to 64 characters [A-Za-z0-9._-]";
    match v {
        None | Some(Value::Null) => Ok((Source::Organic, None)),
        Some(Value::String(s)) => {
            if let Ok(source) = Source::deserialize(Value::String(s.clone())) {
                return Ok((source, None));
            }
            let name_ok = !s.is_empty()
                && s.len() <= MAX_REPORTER
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
            if name_ok {
                Ok((Source::Organic, Some(s.clone())))
            } else {
                Err(ValidationError::new(
                    ValidationErrorKind::InvalidFormat,
                    "source",
                    EXPECTED,
                ))
            }
        }
        Some(_) => Err(ValidationError::new(
            ValidationErrorKind::WrongType,
            "source",
            EXPECTED,
        )),
    }
}

/// Validates one observation object or an array of 1..=1000, strictly (the first bad item
/// fails the batch; errors name `observations[i].field`).
pub fn validate_observations(v: &Value) -> Result<Vec<Observation>, ValidationError> {
    check_observations(v)?.strict("observations")
}

/// Checks one observation object or an array of 1..=1000 item by item, as the API accepts
/// them: `Err` only for a body of the wrong shape.
pub fn check_observations(v: &Value) -> Result<Checked<Observation>, ValidationError> {
    check_batch(v, "observations", validate_observation)
}

/// Builds the observation of one request on the client, or `None` when nothing may be sent.
///
/// One call per request for the Python and WASM hosts: extracts the host from `url`
/// ([`host_from_url`]), applies the privacy filter ([`host_verdict`]) and normalises the
/// rest. `None` when the host is blocked or unreadable, or `latency_ms` is not finite.
/// A negative latency (clock step) becomes 0 and one over a day becomes a day; a method
/// that is not an HTTP token (or is longer than 16) is sent as `OTHER`; a status outside
/// `100..=599` is sent as `null` (no valid HTTP response).
pub fn prepare_observation(
    url: &str,
    method: &str,
    status: Option<u16>,
    latency_ms: f64,
    response_bytes: Option<u64>,
    source: Source,
    policy: &HostPolicy,
) -> Option<Observation> {
    if !latency_ms.is_finite() {
        return None;
    }
    let host = match host_verdict(&host_from_url(url)?, policy) {
        HostVerdict::Report { host } => host,
        HostVerdict::Blocked { .. } => return None,
    };
    let method =
        if !method.is_empty() && method.len() <= MAX_METHOD && method.bytes().all(is_token_char) {
            method.to_ascii_uppercase()
        } else {
            "OTHER".to_owned()
        };
    Some(Observation {
        host,
        method,
        status: status.filter(|s| (100..=599).contains(s)),
        latency_ms: latency_ms.clamp(0.0, MAX_LATENCY_MS),
        response_bytes: response_bytes.map(|b| b.min(MAX_RESPONSE_BYTES)),
        source,
        reporter: None,
        record_id: None,
    })
}

/// How a telemetry status counts (SPEC §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum StatusClass {
    /// 1xx–3xx. Counts in the rate as a success.
    Success,
    /// No response (`null`) or 5xx: a server-layer failure. Counts in the rate.
    Failure,
    /// 429: reported apart, not in the rate.
    Throttled,
    /// Other 4xx: a request-layer rejection, not in the rate.
    Rejected,
}

/// Maps a status to its class: `None` or 5xx → failure, 429 → throttled, other 4xx →
/// rejected, 1xx–3xx → success. A code outside `100..=599` is no valid HTTP response and
/// counts as a failure.
pub fn status_class(status: Option<u16>) -> StatusClass {
    match status {
        Some(429) => StatusClass::Throttled,
        Some(400..=499) => StatusClass::Rejected,
        Some(100..=399) => StatusClass::Success,
        _ => StatusClass::Failure,
    }
}

/// The weight of one observation on the server (SPEC §4): 0.1 anonymous with a host
/// outside the catalog, 0.3 anonymous with a known host, 0.5 valid agent key with an
/// unknown host, 1.0 valid agent key with a known host.
pub fn weight(valid_agent_key: bool, known_host: bool) -> f64 {
    WeightTier::of(valid_agent_key, known_host).weight()
}
