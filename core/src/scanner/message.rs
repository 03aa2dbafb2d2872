//! The `message` of an answer for an MCP Registry entry (SPEC §8).
//!
//! The first sentence states what the Registry and the Scanner recorded; interactions
//! follow, as their own sentence, or `no agent-reported interactions` when there are none:
//! `MCP Registry declaration recorded; observed daily by Lowdown Scanner since
//! 2026-10-06; no agent-reported interactions.` An entry that is no longer listed, or not
//! active, says so in the first clause. Package findings (a deprecated or yanked latest
//! version, an archived, quarantined or deprecated project, a 404: see
//! [`super::packages::findings`]) lead the first sentence.

/// What the first sentence states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageFacts {
    /// In the latest successful Registry read.
    pub listed: bool,
    /// The Registry status.
    pub status: String,
    /// A cohort member.
    pub in_sample: bool,
    /// UTC day of the first observation, when observed.
    pub observed_since: Option<String>,
    /// Package findings, in block order.
    pub packages: Vec<String>,
}

/// The message; `interactions` is the interaction message when any interaction was
/// recorded, `None` otherwise.
pub fn message(f: &MessageFacts, interactions: Option<&str>) -> String {
    let registry = if !f.listed {
        "MCP Registry declaration recorded (no longer listed)".to_owned()
    } else if f.status != "active" {
        format!("MCP Registry declaration recorded (status: {})", f.status)
    } else {
        "MCP Registry declaration recorded".to_owned()
    };
    let scanner = match (&f.observed_since, f.in_sample) {
        (Some(day), _) => format!("observed daily by Lowdown Scanner since {day}"),
        (None, true) => "in the Lowdown Scanner sample, not observed yet".to_owned(),
        (None, false) => "not in the Lowdown Scanner sample".to_owned(),
    };
    let lead: String = f.packages.iter().map(|p| format!("{p}; ")).collect();
    match interactions {
        None => format!("{lead}{registry}; {scanner}; no agent-reported interactions."),
        Some(m) => format!("{lead}{registry}; {scanner}. {m}"),
    }
}

/// `message` with package findings as its first sentence (an answer for an `npm:` or
/// `pypi:` name that is not a Registry entry); unchanged without findings.
pub fn lead(findings: &[String], message: &str) -> String {
    if findings.is_empty() {
        message.to_owned()
    } else {
        format!("{}. {message}", findings.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(listed: bool, status: &str, in_sample: bool, since: Option<&str>) -> MessageFacts {
        MessageFacts {
            listed,
            status: status.into(),
            in_sample,
            observed_since: since.map(str::to_owned),
            packages: Vec::new(),
        }
    }

    #[test]
    fn the_seed_sentence_and_its_variants() {
        assert_eq!(
            message(&facts(true, "active", true, Some("2026-10-06")), None),
            "MCP Registry declaration recorded; observed daily by Lowdown Scanner since 2026-10-06; no agent-reported interactions."
        );
        assert_eq!(
            message(&facts(true, "active", false, None), None),
            "MCP Registry declaration recorded; not in the Lowdown Scanner sample; no agent-reported interactions."
        );
        assert_eq!(
            message(&facts(true, "deprecated", true, None), Some("mcp:a/b: 3 organic tool calls rated, 100.0% succeeded.")),
            "MCP Registry declaration recorded (status: deprecated); in the Lowdown Scanner sample, not observed yet. mcp:a/b: 3 organic tool calls rated, 100.0% succeeded."
        );
        assert!(
            message(&facts(false, "active", true, Some("2026-10-06")), None)
                .starts_with("MCP Registry declaration recorded (no longer listed); observed")
        );
    }

    #[test]
    fn package_findings_lead_the_first_sentence() {
        let mut f = facts(true, "active", true, Some("2026-10-06"));
        f.packages = vec![
            "npm:a 2.0.0 is deprecated on npm".into(),
            "pypi:b is archived on PyPI".into(),
        ];
        assert_eq!(
            message(&f, None),
            "npm:a 2.0.0 is deprecated on npm; pypi:b is archived on PyPI; MCP Registry declaration recorded; observed daily by Lowdown Scanner since 2026-10-06; no agent-reported interactions."
        );
        assert_eq!(
            lead(&f.packages[..1], "npm:a: 3 organic tool calls rated, 100.0% succeeded."),
            "npm:a 2.0.0 is deprecated on npm. npm:a: 3 organic tool calls rated, 100.0% succeeded."
        );
        assert_eq!(lead(&[], "x."), "x.");
    }
}
