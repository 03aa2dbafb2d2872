//! Provider mode's rules (SPEC §11), free of IO: what a benchmark directive may ask, how a
//! `protocol` run is scored, when an `agent` run passes, what a submission must hold, when
//! a benchmark score replaces the displayed one, and in which order providers see
//! critical directives.
//!
//! - [`directive`]: the two kinds and their `spec` shapes.
//! - [`conformance`]: the six dimensions of a `protocol` run, from the Scanner's probe.
//! - [`agent`]: the verdict of an `agent` run from the answer text.
//! - [`submission`]: checking a provider's submission and the score the server records.
//! - [`verify`]: a `protocol` submission against the server's own probe of the remote.
//! - [`agreement`]: when an `agent` result counts (two networks agreeing), and who earns.
//! - [`displace`]: the displacement rule (≥ 2 providers, higher, or older than 14 days).
//! - [`priority`]: the order of providers (disagreements, then reputation), the head start
//!   it buys on critical directives, and exclusion past three disagreements.

pub mod agent;
pub mod agreement;
pub mod conformance;
pub mod directive;
pub mod displace;
pub mod priority;
pub mod submission;
pub mod verify;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Minutes a claim holds a directive.
pub const LEASE_MS: i64 = 30 * 60_000;
/// The provider's share of a directive's price, in thousandths (70 %).
pub const PROVIDER_SHARE_PER_MILLE: i64 = 700;

/// What a directive asks a provider to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The Scanner's probe of an MCP remote plus conformance scoring; no LLM.
    Protocol,
    /// A prompt run by the provider's `claude --print` with an MCP server configured.
    Agent,
}

/// The dimensions of a `protocol` run and their weights, in the SPEC's order.
pub const PROTOCOL_WEIGHTS: [(&str, f64); 6] = [
    ("reachability", 0.20),
    ("tool_discovery", 0.15),
    ("tool_documentation", 0.20),
    ("schema_quality", 0.20),
    ("latency", 0.15),
    ("agent_guidance", 0.10),
];

/// The one dimension of an `agent` run: 10 × the share of expected strings found.
pub const AGENT_WEIGHTS: [(&str, f64); 1] = [("expectations", 1.0)];

impl Kind {
    /// The kind named `name` (`protocol`, `agent`).
    pub fn parse(name: &str) -> Option<Kind> {
        match name {
            "protocol" => Some(Kind::Protocol),
            "agent" => Some(Kind::Agent),
            _ => None,
        }
    }

    /// Its name as stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Protocol => "protocol",
            Kind::Agent => "agent",
        }
    }

    /// Its dimensions with their weights (summing to 1).
    pub fn weights(self) -> &'static [(&'static str, f64)] {
        match self {
            Kind::Protocol => &PROTOCOL_WEIGHTS,
            Kind::Agent => &AGENT_WEIGHTS,
        }
    }
}

/// Dimensions by name, each 0–10.
pub type Dimensions = BTreeMap<String, f64>;

/// Rounds to `places` decimals, halves away from zero.
pub(crate) fn round_to(x: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (x * f).round() / f
}

/// The overall score of `dims` for `kind`: the weighted sum × 10 (0–100), summed in the
/// order of [`Kind::weights`], rounded to one decimal. A missing dimension counts 0.
pub fn overall(kind: Kind, dims: &Dimensions) -> f64 {
    let sum = kind.weights().iter().fold(0.0, |acc, (name, w)| {
        acc + w * dims.get(*name).copied().unwrap_or(0.0)
    });
    round_to(10.0 * sum, 1)
}

/// The provider's credit for a directive of `price_credits`, in thousandths of a credit.
pub fn provider_share_millicredits(price_credits: i64) -> i64 {
    price_credits.saturating_mul(PROVIDER_SHARE_PER_MILLE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overall_is_the_weighted_sum_times_ten() {
        let all = |v: f64| -> Dimensions {
            PROTOCOL_WEIGHTS
                .iter()
                .map(|(n, _)| (n.to_string(), v))
                .collect()
        };
        assert_eq!(overall(Kind::Protocol, &all(10.0)), 100.0);
        assert_eq!(overall(Kind::Protocol, &all(0.0)), 0.0);
        let mut d = all(0.0);
        d.insert("reachability".into(), 10.0);
        d.insert("agent_guidance".into(), 6.0);
        assert_eq!(overall(Kind::Protocol, &d), 26.0);
        let agent: Dimensions = [("expectations".to_owned(), 5.0)].into();
        assert_eq!(overall(Kind::Agent, &agent), 50.0);
        assert_eq!(provider_share_millicredits(1), 700);
        let sum: f64 = PROTOCOL_WEIGHTS.iter().map(|(_, w)| w).sum();
        assert!((sum - 1.0).abs() < 1e-12);
    }
}
