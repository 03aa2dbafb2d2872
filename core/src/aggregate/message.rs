//! The one-line, facts-only message of a reputation answer.

use super::{permille, Summary, NETWORK_DAILY_CAP};

/// `n` followed by `singular` or its plural (`plural`).
fn count(n: u64, singular: &str, plural: &str) -> String {
    format!("{n} {}", if n == 1 { singular } else { plural })
}

/// One sentence stating the facts behind `s`, for `target`; never a score or advice.
///
/// Shape: `<target>: <N> organic tool call(s) rated from <K> network(s), <P>% succeeded;
/// <M> more capped (one network counts at most 20 a day); <R> rejected request(s); <C>
/// cancelled; <X> seeded and <Y> synthetic not counted; <Q> protocol request(s).` Clauses
/// whose count is zero are left out (`from <K> network(s)` too, for records stored before
/// networks were counted). `X` and `Y` are the seeded and
/// synthetic tool calls that would have been rated (success, partial, failure); rejected,
/// cancelled and protocol counts already include every source. `P` is the 3-decimal
/// `success_rate` as a percentage with one decimal (`0.972` → `97.2`). With nothing rated
/// the first clause reads `no organic tool calls rated yet`; with nothing recorded at all
/// the whole message is `<target>: no interactions recorded yet.`
pub fn message(target: &str, s: &Summary) -> String {
    if s.interactions == 0 && s.protocol_requests == 0 {
        return format!("{target}: no interactions recorded yet.");
    }
    let o = &s.by_source.organic;
    let mut parts = Vec::new();
    match permille(o.success, s.rated_interactions) {
        Some(p) => parts.push(format!(
            "{} rated{}, {}.{}% succeeded",
            count(
                s.rated_interactions,
                "organic tool call",
                "organic tool calls"
            ),
            match s.networks {
                0 => String::new(),
                n => format!(" from {}", count(n, "network", "networks")),
            },
            p / 10,
            p % 10
        )),
        None => parts.push("no organic tool calls rated yet".to_owned()),
    }
    if s.capped > 0 {
        parts.push(format!(
            "{} more capped (one network counts at most {NETWORK_DAILY_CAP} a day)",
            s.capped
        ));
    }
    if s.rejected_requests > 0 {
        parts.push(count(
            s.rejected_requests,
            "rejected request",
            "rejected requests",
        ));
    }
    if s.cancelled_requests > 0 {
        parts.push(format!("{} cancelled", s.cancelled_requests));
    }
    let seeded = s.by_source.seeded.rated();
    let synthetic = s.by_source.synthetic.rated();
    match (seeded, synthetic) {
        (0, 0) => {}
        (n, 0) => parts.push(format!("{n} seeded not counted")),
        (0, n) => parts.push(format!("{n} synthetic not counted")),
        (a, b) => parts.push(format!("{a} seeded and {b} synthetic not counted")),
    }
    if s.protocol_requests > 0 {
        parts.push(count(
            s.protocol_requests,
            "protocol request",
            "protocol requests",
        ));
    }
    format!("{target}: {}.", parts.join("; "))
}
