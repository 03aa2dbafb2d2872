//! The gateway's check of a client's sampling decision (SPEC §10): the client sends the salt
//! id and the roll it computed; the gateway recomputes the roll from the agent the key
//! belongs to and accepts the call only when it matches, the salt is still accepted and
//! the roll falls inside the service's sampling rate.

use serde::{Deserialize, Serialize};

use super::salt::{salt_state, SaltState};
use super::{decide, SamplingDecision};

/// Header carrying the salt id a decision was computed with.
pub const SALT_ID_HEADER: &str = "x-prowl-salt-id";
/// Header carrying the decision: the roll as 64 lowercase hex digits.
pub const DECISION_HEADER: &str = "x-prowl-sample-decision";

/// Why the gateway refuses a call (403, or the kind a client reads from the answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DecisionRefusal {
    /// No `X-Agent-Key`.
    #[error("X-Agent-Key is required: the gateway only serves registered agents")]
    MissingAgentKey,
    /// The key belongs to no registered agent.
    #[error("X-Agent-Key is not the key of a registered agent")]
    UnknownAgentKey,
    /// No `X-Prowl-Salt-Id`.
    #[error("X-Prowl-Salt-Id is required: the id of the salt the decision was computed with")]
    MissingSaltId,
    /// No `X-Prowl-Sample-Decision`.
    #[error("X-Prowl-Sample-Decision is required: the roll, as 64 lowercase hex digits")]
    MissingDecision,
    /// The decision is not 64 hex digits.
    #[error("X-Prowl-Sample-Decision must be the roll as 64 lowercase hex digits")]
    MalformedDecision,
    /// The salt id names no salt this gateway issued (or a day not yet begun).
    #[error("X-Prowl-Salt-Id names no salt this gateway issued; fetch GET /v1/sampling/salt")]
    UnknownSalt,
    /// The salt is past its 60-minute overlap.
    #[error(
        "X-Prowl-Salt-Id names an expired salt; fetch the current one from GET /v1/sampling/salt"
    )]
    ExpiredSalt,
    /// The roll is not the one this agent, service and salt give.
    #[error("X-Prowl-Sample-Decision is not the roll of this agent, service and salt")]
    WrongDecision,
    /// The roll is right but falls outside the service's sampling rate.
    #[error("this call is not sampled for this service today: send it straight to the vendor")]
    NotSampled,
}

impl DecisionRefusal {
    /// The abuse flag a refusal raises against the agent (SPEC §10 `abuse_flags`), if any:
    /// `forged_decision` for a roll or salt the agent could not honestly hold,
    /// `replayed_decision` for an expired one. Missing headers are mistakes, not abuse.
    pub fn abuse_flag(self) -> Option<&'static str> {
        match self {
            DecisionRefusal::UnknownSalt
            | DecisionRefusal::WrongDecision
            | DecisionRefusal::NotSampled => Some("forged_decision"),
            DecisionRefusal::ExpiredSalt => Some("replayed_decision"),
            _ => None,
        }
    }
}

/// Whether the gateway should look the salt up at all: only salts still accepted.
pub fn salt_accepted(salt_id: &str, now_ms: i64) -> bool {
    matches!(
        salt_state(salt_id, now_ms),
        SaltState::Current | SaltState::Overlap
    )
}

/// Checks a client's decision for `service_id` (sampled at `sampling_rate`) by `agent_id`.
/// `salt` is the stored salt of `salt_id`, `None` when the gateway has none (or did not
/// look it up because [`salt_accepted`] said no). Returns the recomputed decision when the
/// call may go through.
pub fn check_decision(
    service_id: &str,
    agent_id: &str,
    sampling_rate: f64,
    salt_id: Option<&str>,
    salt: Option<&str>,
    decision: Option<&str>,
    now_ms: i64,
) -> Result<SamplingDecision, DecisionRefusal> {
    let salt_id = salt_id.ok_or(DecisionRefusal::MissingSaltId)?;
    let claimed = decision.ok_or(DecisionRefusal::MissingDecision)?;
    if claimed.len() != 64 || !claimed.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(DecisionRefusal::MalformedDecision);
    }
    match salt_state(salt_id, now_ms) {
        SaltState::Malformed | SaltState::Future => return Err(DecisionRefusal::UnknownSalt),
        SaltState::Expired => return Err(DecisionRefusal::ExpiredSalt),
        SaltState::Current | SaltState::Overlap => {}
    }
    let salt = salt.ok_or(DecisionRefusal::UnknownSalt)?;
    let d = decide(service_id, agent_id, salt_id, salt, sampling_rate);
    if !d.roll.eq_ignore_ascii_case(claimed) {
        return Err(DecisionRefusal::WrongDecision);
    }
    if !d.sampled {
        return Err(DecisionRefusal::NotSampled);
    }
    Ok(d)
}
