//! Building an [`InteractionRecord`] from a classified [`Exchange`] (SPEC §3.2).
//!
//! Only what the classifier extracted goes in: outcome, failure fields, latency, the tool
//! name or method, and the session facts. Arguments, results and error messages never
//! reach an [`Exchange`], so they cannot reach a record.

use serde::{Deserialize, Serialize};

use super::validate::{is_version_char, MAX_LATENCY_MS, MAX_NAME, MAX_VERSION};
use super::{InteractionRecord, Source, TargetType};
use crate::classify::{Direction, Exchange, SessionFacts};

/// Who records, for what, and how: everything a record needs besides the exchange.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RecordContext {
    /// Who acted. @default `"anonymous"` (an empty actor also becomes `anonymous`).
    pub actor: String,
    /// The target label (`--target`, or SPEC §3.2's label from the command line).
    pub target: String,
    /// Where the data comes from. @default `organic` (`--test` means `synthetic`).
    pub source: Source,
    /// The recording node's id (`ld_<12 hex>`), if known.
    pub node_id: Option<String>,
    /// The recorder's package version.
    pub recorder_version: Option<String>,
}

impl Default for RecordContext {
    fn default() -> Self {
        RecordContext {
            actor: "anonymous".to_owned(),
            target: String::new(),
            source: Source::Organic,
            node_id: None,
            recorder_version: None,
        }
    }
}

/// The record for one exchange, or `None` for a server→client request (those are tracked
/// but are not tool interactions). `record_id` comes from the host: the core has no
/// randomness. `task_type` is the tool name for `tools/call` (the method when the name
/// is missing), else the method, made valid by [`task_type`]. `server_version` and
/// `protocol_version` are sanitised again here, so facts from any source are safe to
/// publish. `latency_ms` is kept to the microsecond and within the API's range (0 to one
/// day). `tools_has_more` is set when the facts hold a schema hash.
pub fn build_record(
    exchange: &Exchange,
    facts: &SessionFacts,
    ctx: &RecordContext,
    record_id: Option<String>,
) -> Option<InteractionRecord> {
    if exchange.direction == Direction::ServerToClient {
        return None;
    }
    let task_type = task_type(match (&exchange.tool_name, exchange.method.as_str()) {
        (Some(name), "tools/call") => name,
        (_, method) => method,
    });
    Some(InteractionRecord {
        record_id,
        actor: if ctx.actor.is_empty() {
            "anonymous".to_owned()
        } else {
            ctx.actor.clone()
        },
        target: ctx.target.clone(),
        target_type: TargetType::Tool,
        task_type,
        outcome: exchange.outcome,
        failure_type: exchange.failure_type,
        error_layer: exchange.error_layer,
        request_kind: exchange.request_kind,
        // Microseconds are the most a host clock means; more digits are float noise.
        latency_ms: exchange
            .latency_ms
            .is_finite()
            .then(|| (exchange.latency_ms.clamp(0.0, MAX_LATENCY_MS) * 1000.0).round() / 1000.0),
        source: ctx.source,
        node_id: ctx.node_id.clone(),
        server_version: facts
            .server_version
            .as_deref()
            .and_then(sanitize_server_version),
        schema_hash: facts.schema_hash.clone(),
        recorder_version: ctx.recorder_version.clone(),
        protocol_version: facts
            .protocol_version
            .as_deref()
            .and_then(sanitize_server_version),
        tools_has_more: facts.schema_hash.is_some().then_some(facts.tools_has_more),
    })
}

/// `task_type` as the API accepts it (SPEC §3.1): control characters removed, cut to 128
/// characters (never inside a character), and `(empty)` for a name with nothing left.
pub fn task_type(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_NAME)
        .collect();
    if cleaned.is_empty() {
        "(empty)".to_owned()
    } else {
        cleaned
    }
}

/// SPEC §3.2's published form of `serverInfo.version`: control characters removed, then
/// kept only if it matches `^[0-9A-Za-z.+_-]{1,32}$`, else `None`. Anything else (spaces,
/// prose, markup, prompt-injection text) is never published.
pub fn sanitize_server_version(raw: &str) -> Option<String> {
    let cleaned: String = raw.chars().filter(|c| !c.is_control()).collect();
    let ok = (1..=MAX_VERSION).contains(&cleaned.len()) && cleaned.chars().all(is_version_char);
    ok.then_some(cleaned)
}
