//! Reputation summaries from counters (SPEC §5): the server keeps counts per
//! (target, source, outcome class) and this module turns them into the answer's numbers,
//! its one-line message, and the `compare` ranking.
//!
//! Decisions:
//! - Every record falls in exactly one [`OutcomeClass`] ([`outcome_class`]).
//! - `interactions` counts tool interactions of **every** source and class except
//!   `protocol` (protocol traffic is reported as `protocol_requests`). `by_source` shows the
//!   split, so nothing is mixed silently.
//! - `rated_interactions` and `success_rate` are **organic only**: success, partial and
//!   failure. A partial counts as rated but not as a success. Rejected (request-layer),
//!   protocol and cancelled records are never rated.
//! - `protocol_requests`, `rejected_requests` and `cancelled_requests` count every source.
//! - No single network moves a figure far: per network, target and UTC day at most
//!   [`NETWORK_DAILY_CAP`] rated organic records count as rated; the server stores the rest
//!   as [`OutcomeClass::Capped`], counted in `interactions` and reported as `capped`.
//! - `confidence` weighs independence as well as volume ([`Confidence::of`]): many records
//!   from one network are one participant's view, however many node ids or keys it uses.
//! - `success_rate` is rounded half-up to 3 decimals with integer arithmetic, so every host
//!   gets the same digits; `None` when nothing is rated.

use crate::record::{ErrorLayer, Outcome, RequestKind, Source};
use serde::{Deserialize, Serialize};

mod breakdown;
mod compare;
mod message;

pub use breakdown::{
    latency_summary, organic_row, LatencySummary, OrganicRow, UNSPECIFIED_FAILURE,
};
pub use compare::{
    compare, CompareError, Comparison, Ranked, Recommendation, CANDIDATES, INSUFFICIENT_HISTORY,
    MIN_RATED_FOR_RECOMMENDATION,
};
pub use message::message;

/// The one bucket a record is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum OutcomeClass {
    /// A tool interaction that succeeded. Rated.
    Success,
    /// A tool interaction that partly succeeded. Rated, not a success.
    Partial,
    /// A tool interaction that failed at the tool or server layer. Rated.
    Failure,
    /// A request rejected as malformed or unknown (request layer). Not rated.
    Rejected,
    /// Protocol traffic (`initialize`, `tools/list`, ...). Not rated.
    Protocol,
    /// A request the client cancelled. Not rated.
    Cancelled,
    /// A rated organic tool call past [`NETWORK_DAILY_CAP`] for its network, target and
    /// day: counted in `interactions`, never rated. The server decides it at ingest; a
    /// record never arrives as one.
    Capped,
}

/// Rated organic records one network may add to one target's rated figures per UTC day.
pub const NETWORK_DAILY_CAP: u64 = 20;

/// Of `n` more rated organic records from one network for one target and day, of which
/// `before` were already stored, how many still count as rated: the first up to
/// [`NETWORK_DAILY_CAP`]; the rest are [`OutcomeClass::Capped`].
pub fn under_cap(before: u64, n: u64) -> u64 {
    NETWORK_DAILY_CAP.saturating_sub(before).min(n)
}

/// Classifies a record (SPEC §3.1), first rule that applies wins: a `protocol` request is
/// `Protocol` whatever its outcome; then a cancellation is `Cancelled`; then a request-layer
/// error is `Rejected`; otherwise the outcome itself.
pub fn outcome_class(
    request_kind: RequestKind,
    outcome: Outcome,
    error_layer: Option<ErrorLayer>,
) -> OutcomeClass {
    match (request_kind, outcome, error_layer) {
        (RequestKind::Protocol, _, _) => OutcomeClass::Protocol,
        (_, Outcome::Cancelled, _) => OutcomeClass::Cancelled,
        (_, _, Some(ErrorLayer::Request)) => OutcomeClass::Rejected,
        (_, Outcome::Success, _) => OutcomeClass::Success,
        (_, Outcome::Partial, _) => OutcomeClass::Partial,
        (_, Outcome::Failure, _) => OutcomeClass::Failure,
    }
}

/// Counts per outcome class, for one source. Missing keys deserialise as 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClassCounts {
    /// Successful tool interactions.
    pub success: u64,
    /// Partly successful tool interactions.
    pub partial: u64,
    /// Failed tool interactions (tool or server layer).
    pub failure: u64,
    /// Request-layer rejections.
    pub rejected: u64,
    /// Protocol requests.
    pub protocol: u64,
    /// Cancelled requests.
    pub cancelled: u64,
    /// Rated organic calls past their network's daily cap.
    pub capped: u64,
}

impl ClassCounts {
    /// Adds `n` to the counter of `class` (saturating: counters never wrap).
    pub fn add(&mut self, class: OutcomeClass, n: u64) {
        let c = match class {
            OutcomeClass::Success => &mut self.success,
            OutcomeClass::Partial => &mut self.partial,
            OutcomeClass::Failure => &mut self.failure,
            OutcomeClass::Rejected => &mut self.rejected,
            OutcomeClass::Protocol => &mut self.protocol,
            OutcomeClass::Cancelled => &mut self.cancelled,
            OutcomeClass::Capped => &mut self.capped,
        };
        *c = c.saturating_add(n);
    }

    /// Success + partial + failure: what a success rate is computed over.
    pub fn rated(&self) -> u64 {
        self.success
            .saturating_add(self.partial)
            .saturating_add(self.failure)
    }

    /// Every tool interaction: all classes except protocol.
    pub fn interactions(&self) -> u64 {
        self.rated()
            .saturating_add(self.rejected)
            .saturating_add(self.cancelled)
            .saturating_add(self.capped)
    }
}

/// Counts per source and class for one target: what the server keeps (or sums from rows).
/// Missing sources deserialise as all zeros.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SourceCounts {
    /// Real use.
    pub organic: ClassCounts,
    /// Bootstrapping data.
    pub seeded: ClassCounts,
    /// Tests and probes.
    pub synthetic: ClassCounts,
}

/// The `by_source` block of a reputation answer: the raw counts per source.
pub type BySource = SourceCounts;

impl SourceCounts {
    /// Adds `n` records of `class` from `source`.
    pub fn add(&mut self, source: Source, class: OutcomeClass, n: u64) {
        self.get_mut(source).add(class, n);
    }

    /// The counts of one source.
    pub fn get(&self, source: Source) -> &ClassCounts {
        match source {
            Source::Organic => &self.organic,
            Source::Seeded => &self.seeded,
            Source::Synthetic => &self.synthetic,
        }
    }

    fn get_mut(&mut self, source: Source) -> &mut ClassCounts {
        match source {
            Source::Organic => &mut self.organic,
            Source::Seeded => &mut self.seeded,
            Source::Synthetic => &mut self.synthetic,
        }
    }

    fn sum(&self, f: impl Fn(&ClassCounts) -> u64) -> u64 {
        [&self.organic, &self.seeded, &self.synthetic]
            .into_iter()
            .map(f)
            .fold(0, u64::saturating_add)
    }
}

/// How much independent organic evidence stands behind a `success_rate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// No rated interactions.
    None,
    /// Below 10 rated, or from fewer than 3 networks.
    Low,
    /// Below 100 rated, or from fewer than 10 networks.
    Medium,
    /// 100 or more rated from 10 or more networks.
    High,
}

impl Confidence {
    /// The confidence for `rated` organic rated interactions from `networks` distinct
    /// networks. The seeds read confidence off `rated_interactions` alone; here networks
    /// count too, since anyone can write many records (under many node ids and keys), but
    /// not from many networks.
    pub fn of(rated: u64, networks: u64) -> Self {
        if rated == 0 {
            Self::None
        } else if rated < 10 || networks < 3 {
            Self::Low
        } else if rated < 100 || networks < 10 {
            Self::Medium
        } else {
            Self::High
        }
    }
}

/// Who stands behind a target's rated organic records: what the server counts beside the
/// classes (SPEC §5). Missing keys deserialise as 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Independence {
    /// Distinct node ids or agent keys.
    pub contributors: u64,
    /// Distinct client networks (IPv4 /24, IPv6 /48).
    pub networks: u64,
    /// Rated records of the network that holds the most.
    pub top_network: u64,
}

/// The numbers of a reputation answer (SPEC §5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Tool interactions of every source (all classes but protocol).
    pub interactions: u64,
    /// Organic success + partial + failure (past the network caps: see `capped`).
    pub rated_interactions: u64,
    /// Rated organic calls past their network's daily cap: in `interactions`, not rated.
    pub capped: u64,
    /// Distinct node ids or agent keys among the rated organic records.
    pub contributors: u64,
    /// Distinct networks among the rated organic records.
    pub networks: u64,
    /// The largest share of the rated records one network holds (3 decimals); `None`
    /// when nothing is rated.
    pub top_network_share: Option<f64>,
    /// Organic successes / rated, 3 decimals; `None` when nothing is rated.
    pub success_rate: Option<f64>,
    /// Protocol requests, every source.
    pub protocol_requests: u64,
    /// Request-layer rejections, every source.
    pub rejected_requests: u64,
    /// Cancelled requests, every source.
    pub cancelled_requests: u64,
    /// Counts per source.
    pub by_source: BySource,
    /// From `rated_interactions` and `networks` ([`Confidence::of`]).
    pub confidence: Confidence,
}

/// `num / den` rounded half-up to thousandths, as an integer count of thousandths.
pub(crate) fn permille(num: u64, den: u64) -> Option<u64> {
    if den == 0 {
        return None;
    }
    let (n, d) = (u128::from(num), u128::from(den));
    // Half-up: floor((2000·n + d) / 2d). Fits: u64 · 2000 < u128.
    Some(((2000 * n + d) / (2 * d)) as u64)
}

/// `part / whole` as a share with 3 decimals (half-up, `part` at most `whole`); `None`
/// when `whole` is 0. What `top_network_share` is, here and in the telemetry block.
pub fn share(part: u64, whole: u64) -> Option<f64> {
    permille(part.min(whole), whole).map(|p| p as f64 / 1000.0)
}

/// Turns counters, and who stands behind them, into the reputation numbers.
pub fn summarize(counts: &SourceCounts, who: &Independence) -> Summary {
    let o = &counts.organic;
    let rated = o.rated();
    Summary {
        interactions: counts.sum(ClassCounts::interactions),
        rated_interactions: rated,
        capped: counts.sum(|c| c.capped),
        contributors: who.contributors,
        networks: who.networks,
        top_network_share: share(who.top_network, rated),
        success_rate: permille(o.success, rated).map(|p| p as f64 / 1000.0),
        protocol_requests: counts.sum(|c| c.protocol),
        rejected_requests: counts.sum(|c| c.rejected),
        cancelled_requests: counts.sum(|c| c.cancelled),
        by_source: *counts,
        confidence: Confidence::of(rated, who.networks),
    }
}
