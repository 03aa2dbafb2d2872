//! The spool: records a host could not deliver, kept on disk under `LOWDOWN_HOME/spool/` and
//! sent by whichever host starts next (SPEC §3). One format for every host (the proxy,
//! prowl); the hosts only read, write, rename and delete files, as these rules say.
//!
//! - **Files**: `<ms:15>-<seq:8>-<pid>-<token>.jsonl` (names sort oldest first), one record
//!   per line as JSON, `\n` after each, written to a `.tmp` name and renamed, mode 0600.
//!   At most [`MAX_RECORDS_PER_FILE`] records a file and [`MAX_FILES`] files: past that the
//!   oldest files go, and `dropped.json` counts their records
//!   (`{"dropped_records": N, "last_dropped_at": "<ISO-8601>"}`).
//! - **Claims**: a host delivering a file first renames it to `<name>.<pid>.sending` (atomic,
//!   so two hosts never send one file); a claim older than [`STALE_CLAIM_MS`] was left by a
//!   host that died and may be taken over. Records carry a `record_id`, so a batch that
//!   reached the API before a failure was noticed is still counted once.
//! - **Reading**: every line is checked as the API would check it; a line that is not a
//!   record (a torn write, a foreign file) is skipped and counted, never sent, and the good
//!   lines of the same file still are.

use super::validate::validate_record;

/// The spool's directory under `LOWDOWN_HOME`.
pub const DIR_NAME: &str = "spool";
/// Most spool files kept.
pub const MAX_FILES: usize = 100;
/// Most records per spool file.
pub const MAX_RECORDS_PER_FILE: usize = 500;
/// Age after which another host's unfinished claim is taken over, in milliseconds.
pub const STALE_CLAIM_MS: u64 = 60_000;
/// The file counting what the bound dropped.
pub const DROPPED_FILE: &str = "dropped.json";

/// What a directory entry of the spool is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A spool file waiting to be sent.
    Waiting,
    /// A spool file claimed by the host with this process id.
    Claimed {
        /// The claimant's process id.
        pid: u32,
        /// The file's name before it was claimed.
        original: String,
    },
    /// Anything else (temporary files, `dropped.json`).
    Other,
}

/// The name of a new spool file, from the host's clock, a per-process sequence number, its
/// process id and a random token (≤ 16 of `[0-9a-z]`).
pub fn file_name(now_ms: u64, seq: u64, pid: u32, token: &str) -> String {
    let token: String = token
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(16)
        .collect();
    format!(
        "{now_ms:015}-{seq:08}-{pid}-{}.jsonl",
        token.to_ascii_lowercase()
    )
}

/// The name a claim by `pid` gives the spool file `name`.
pub fn claim_name(name: &str, pid: u32) -> String {
    format!("{name}.{pid}.sending")
}

/// What the directory entry `name` is.
pub fn entry(name: &str) -> Entry {
    if is_spool_file(name) {
        return Entry::Waiting;
    }
    let Some(rest) = name.strip_suffix(".sending") else {
        return Entry::Other;
    };
    match rest.rsplit_once('.') {
        Some((original, pid)) if is_spool_file(original) => match pid.parse() {
            Ok(pid) => Entry::Claimed {
                pid,
                original: original.to_owned(),
            },
            Err(_) => Entry::Other,
        },
        _ => Entry::Other,
    }
}

fn is_spool_file(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".jsonl") else {
        return false;
    };
    let parts: Vec<&str> = stem.split('-').collect();
    parts.len() == 4
        && parts[0].len() == 15
        && parts[1].len() == 8
        && parts[..3]
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        && parts[3].bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The text of a spool file holding `records` (each one record's JSON, without newlines).
pub fn encode<S: AsRef<str>>(records: &[S]) -> String {
    let mut out = String::new();
    for r in records {
        out.push_str(r.as_ref());
        out.push('\n');
    }
    out
}

/// What a spool file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decoded {
    /// The records to send, each as its line's JSON text.
    pub records: Vec<String>,
    /// Lines that are not records (skipped, never sent).
    pub corrupt: usize,
}

/// Reads a spool file's text: every non-empty line that is a valid record.
pub fn decode(text: &str) -> Decoded {
    let mut out = Decoded::default();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match serde_json::from_str(line).ok().map(|v| validate_record(&v)) {
            Some(Ok(_)) => out.records.push(line.to_owned()),
            _ => out.corrupt += 1,
        }
    }
    out
}

/// Which of the spool files `names` (any order) go to keep at most [`MAX_FILES`] waiting or
/// claimed files: the oldest, by name.
pub fn over_bound(names: &[String]) -> Vec<String> {
    let mut files: Vec<(&str, &String)> = names
        .iter()
        .filter_map(|n| match entry(n) {
            Entry::Waiting => Some((n.as_str(), n)),
            Entry::Claimed { .. } => Some((n.as_str(), n)),
            Entry::Other => None,
        })
        .collect();
    files.sort();
    let excess = files.len().saturating_sub(MAX_FILES);
    files
        .into_iter()
        .take(excess)
        .map(|(_, n)| n.clone())
        .collect()
}

/// The new text of `dropped.json` once `records` more were dropped at `now_iso`, from its
/// previous text (absent or unreadable counts as 0).
pub fn dropped(previous: Option<&str>, records: u64, now_iso: &str) -> String {
    let before = previous
        .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
        .and_then(|v| v.get("dropped_records").and_then(serde_json::Value::as_u64))
        .unwrap_or(0);
    serde_json::json!({"dropped_records": before + records, "last_dropped_at": now_iso}).to_string()
        + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"target":"npm:x","target_type":"tool","task_type":"t","outcome":"success","request_kind":"tool","record_id":"a-1"}"#;

    #[test]
    fn names_sort_oldest_first_and_claims_are_recognised() {
        let a = file_name(5, 1, 42, "Ab-c9");
        let b = file_name(12, 0, 7, "zz");
        assert_eq!(a, "000000000000005-00000001-42-abc9.jsonl");
        assert!(a < b);
        assert_eq!(entry(&a), Entry::Waiting);
        assert_eq!(
            entry(&claim_name(&a, 99)),
            Entry::Claimed {
                pid: 99,
                original: a.clone()
            }
        );
        for other in [".x.jsonl.tmp", DROPPED_FILE, "notes.jsonl", "a.b.sending"] {
            assert_eq!(entry(other), Entry::Other, "{other}");
        }
    }

    #[test]
    fn decoding_keeps_good_records_and_counts_the_rest() {
        let text = format!("{GOOD}\n{{\"torn\n\n[1,2]\n{GOOD}");
        let d = decode(&text);
        assert_eq!(d.records, vec![GOOD.to_owned(), GOOD.to_owned()]);
        assert_eq!(d.corrupt, 2);
        assert_eq!(decode(&encode(&[GOOD])).records, vec![GOOD]);
    }

    #[test]
    fn the_bound_drops_the_oldest_and_dropped_json_adds_up() {
        let names: Vec<String> = (0..MAX_FILES as u64 + 3)
            .rev()
            .map(|i| file_name(i, 0, 1, "t"))
            .chain([DROPPED_FILE.to_owned()])
            .collect();
        let gone = over_bound(&names);
        assert_eq!(
            gone,
            (0..3).map(|i| file_name(i, 0, 1, "t")).collect::<Vec<_>>()
        );
        let once = dropped(None, 3, "2026-12-01T00:00:00Z");
        let twice = dropped(Some(&once), 2, "2026-12-02T00:00:00Z");
        assert_eq!(
            twice,
            "{\"dropped_records\":5,\"last_dropped_at\":\"2026-12-02T00:00:00Z\"}\n"
        );
        assert!(dropped(Some("garbage"), 1, "x").starts_with("{\"dropped_records\":1"));
    }
}
