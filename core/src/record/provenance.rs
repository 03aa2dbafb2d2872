//! Who made a record: the `recorder_version` each recorder writes, and how a reader tells
//! the recorders that counted `isError` results as successes.
//!
//! Every package of a release carries one version, the workspace's (`Cargo.toml`), and it
//! reaches every host from here: the generated contract copies (`RECORDERS` in the npm
//! packages' `src/contract.js`, `prowl/_contract.py`) hold the finished values, so no host
//! assembles one. `make test-contracts` fails when a package's manifest says another version.
//!
//! The rule (the seeds': "every record carries `recorder_version`, so records made before
//! 0.1.17, which counted `isError` results as successes, can be told apart"): a recorder
//! writes `<recorder>/<version>`; a bare version (what recorders before 0.2.0 wrote) or a
//! version before 0.1.17 is an older recorder's.

/// The release: every package's version, and so every recorder's.
pub const RELEASE: &str = env!("CARGO_PKG_VERSION");

/// `lowdown-proxy`'s records (the stdio proxy).
pub const PROXY: &str = concat!("lowdown-proxy/", env!("CARGO_PKG_VERSION"));
/// `lowdown-mcp`'s records (its `record_interaction` tool).
pub const MCP: &str = concat!("lowdown-mcp/", env!("CARGO_PKG_VERSION"));
/// prowl's records (its LangChain callback).
pub const PROWL: &str = concat!("prowl/", env!("CARGO_PKG_VERSION"));

/// The first recorder version that records an `isError` result as a failure (`tool_error`).
pub const IS_ERROR_COUNTED_SINCE: &str = "0.1.17";

/// The pattern `recorder_version` matches: SPEC §3.2's version characters and `/`, which
/// separates the recorder's name from its version. It bounds what a client may send; it is
/// not proof of who sent it (any client can write any name).
pub const RECORDER_VERSION_PATTERN: &str = "^[0-9A-Za-z.+_/-]{1,32}$";

/// A character [`RECORDER_VERSION_PATTERN`] allows.
pub(crate) fn is_recorder_version_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '_' | '-' | '/')
}

/// Whether a record's `recorder_version` says it was made by a recorder from before 0.1.17,
/// which counted `isError` results as successes: `Some(true)` for a bare version (no
/// `<recorder>/`) or a version before 0.1.17, `Some(false)` for `<recorder>/<version>` at
/// 0.1.17 or later, `None` when there is no value or its version is not `MAJOR.MINOR.PATCH`
/// (with an optional `-pre`/`+build` tail), so nothing can be said.
pub fn counts_is_error_as_success(recorder_version: Option<&str>) -> Option<bool> {
    let v = recorder_version?;
    let (named, version) = match v.rsplit_once('/') {
        Some((name, version)) if !name.is_empty() => (true, version),
        Some(_) => return None,
        None => (false, v),
    };
    let before = triple(version)? < triple(IS_ERROR_COUNTED_SINCE)?;
    Some(!named || before)
}

/// `MAJOR.MINOR.PATCH` of a version, ignoring a `-pre` or `+build` tail.
fn triple(v: &str) -> Option<(u64, u64, u64)> {
    let core = v.split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            None
        } else {
            p.parse::<u64>().ok()
        }
    });
    let t = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_recorder_writes_its_name_and_the_release() {
        for (name, value) in [
            ("lowdown-proxy", PROXY),
            ("lowdown-mcp", MCP),
            ("prowl", PROWL),
        ] {
            assert_eq!(value, format!("{name}/{RELEASE}"));
            assert!(value.len() <= 32 && value.chars().all(is_recorder_version_char));
            assert_eq!(
                counts_is_error_as_success(Some(value)),
                Some(false),
                "{value}"
            );
        }
    }

    #[test]
    fn bare_and_old_versions_are_older_recorders() {
        let old = |v| counts_is_error_as_success(Some(v));
        assert_eq!(old("0.1.0"), Some(true), "bare, as before 0.2.0");
        assert_eq!(old("0.2.0"), Some(true), "bare is old whatever the number");
        assert_eq!(old("lowdown-proxy/0.1.16"), Some(true));
        assert_eq!(old("lowdown-proxy/0.1.17"), Some(false));
        assert_eq!(
            old("lowdown-proxy/0.1.17-beta.1"),
            Some(false),
            "the tail is ignored"
        );
        assert_eq!(
            old("lowdown-proxy/0.10.0"),
            Some(false),
            "numbers, not text"
        );
        assert_eq!(old("prowl/1.0.0+abc"), Some(false));
    }

    #[test]
    fn what_cannot_be_read_says_nothing() {
        for v in [
            "",
            "x/",
            "/0.2.0",
            "x/latest",
            "x/1.2",
            "x/1.2.3.4",
            "x/01a.2.3",
            "x/1..3",
        ] {
            assert_eq!(counts_is_error_as_success(Some(v)), None, "{v:?}");
        }
        assert_eq!(counts_is_error_as_success(None), None);
    }
}
