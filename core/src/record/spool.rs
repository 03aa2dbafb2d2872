//! The spool: records a host could not deliver, kept on disk under `LOWDOWN_HOME/spool/` and
//! sent by whichever host starts next (SPEC §3). One format for every host (the proxy,
//! prowl); the hosts only read, write, rename and delete files, as the plans [`Claim`] and
//! [`Write`] say.
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

use std::collections::VecDeque;

use super::validate::validate_record;
pub use crate::files::{Outcome, Step};

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
    let before = dropped_records(previous.unwrap_or_default());
    serde_json::json!({"dropped_records": before + records, "last_dropped_at": now_iso}).to_string()
        + "\n"
}

/// The count a `dropped.json` text holds (0 when it is unreadable).
fn dropped_records(text: &str) -> u64 {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.get("dropped_records").and_then(serde_json::Value::as_u64))
        .unwrap_or(0)
}

/// What a spool holds, as a status line tells it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Tally {
    /// Spool files waiting or claimed (a claim whose host died is sent again).
    pub files: usize,
    /// The records in them, as [`decode`] reads them.
    pub records: usize,
    /// Records the bound dropped (`dropped.json`).
    pub dropped: u64,
}

/// What the spool directory's entries `(name, text)` hold; a file that could not be read
/// comes with an empty text.
pub fn tally<S: AsRef<str>>(entries: &[(S, S)]) -> Tally {
    let mut out = Tally::default();
    for (name, text) in entries {
        let (name, text) = (name.as_ref(), text.as_ref());
        if name == DROPPED_FILE {
            out.dropped = dropped_records(text);
        } else if entry(name) != Entry::Other {
            out.files += 1;
            out.records += decode(text).records.len();
        }
    }
    out
}

#[derive(Debug)]
enum ClaimAt {
    Listing,
    Claiming,
    Reading,
    Emptying,
    Delivering,
    Finishing,
    Over,
}

/// Which spool file a host delivers next, as a sans-IO plan (see [`crate::files`]): list the
/// directory; take the oldest waiting file, or a claim older than [`STALE_CLAIM_MS`] (its
/// claimant died), by renaming it to this host's claim name; another host claiming it first
/// is the next file's turn. A claimed file is read: its records are delivered
/// ([`Step::Deliver`]), then [`Claim::finish`] deletes it (taken) or puts it back (not
/// taken); a file with no record in it is deleted, and one that cannot be read is left
/// claimed (it goes stale and is tried again later), and the next file is tried.
#[derive(Debug)]
pub struct Claim {
    pid: u32,
    now_ms: f64,
    /// (current name, original name), oldest first.
    files: VecDeque<(String, String)>,
    claimed: String,
    original: String,
    at: ClaimAt,
}

impl Claim {
    /// A plan for the host with process id `pid` at `now_ms` (Unix milliseconds).
    pub fn new(pid: u32, now_ms: f64) -> Claim {
        Claim {
            pid,
            now_ms,
            files: VecDeque::new(),
            claimed: String::new(),
            original: String::new(),
            at: ClaimAt::Listing,
        }
    }

    /// The first step: [`Step::List`].
    pub fn start(&mut self) -> Step {
        self.at = ClaimAt::Listing;
        Step::List
    }

    /// What the last step did; the next step.
    pub fn feed(&mut self, outcome: Outcome) -> Step {
        match (std::mem::replace(&mut self.at, ClaimAt::Over), outcome) {
            (ClaimAt::Listing, Outcome::Listing(mut entries)) => {
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                let stale = STALE_CLAIM_MS as f64;
                self.files = entries
                    .into_iter()
                    .filter_map(|(name, mtime)| match entry(&name) {
                        Entry::Waiting => Some((name.clone(), name)),
                        Entry::Claimed { original, .. }
                            if mtime.is_some_and(|m| self.now_ms - m >= stale) =>
                        {
                            Some((name, original))
                        }
                        _ => None,
                    })
                    .collect();
                self.next_file()
            }
            (ClaimAt::Claiming, Outcome::Ok) => {
                self.at = ClaimAt::Reading;
                Step::Read {
                    name: self.claimed.clone(),
                }
            }
            (ClaimAt::Reading, Outcome::Text(text)) => {
                let records = decode(&text).records;
                if records.is_empty() {
                    self.at = ClaimAt::Emptying;
                    return Step::Delete {
                        name: self.claimed.clone(),
                    };
                }
                self.at = ClaimAt::Delivering;
                Step::Deliver { records }
            }
            (ClaimAt::Claiming | ClaimAt::Reading | ClaimAt::Emptying, _) => self.next_file(),
            (ClaimAt::Delivering, _) => {
                // Only finish() moves a delivery on.
                self.at = ClaimAt::Delivering;
                Step::Failed
            }
            _ => Step::Done,
        }
    }

    /// After [`Step::Deliver`]: the records were taken (`true`: the file is deleted) or not
    /// (`false`: it is put back under its original name, for a later delivery).
    pub fn finish(&mut self, taken: bool) -> Step {
        if !matches!(self.at, ClaimAt::Delivering) {
            return Step::Failed;
        }
        self.at = ClaimAt::Finishing;
        let name = self.claimed.clone();
        if taken {
            Step::Delete { name }
        } else {
            Step::Rename {
                from: name,
                to: self.original.clone(),
            }
        }
    }

    fn next_file(&mut self) -> Step {
        let Some((from, original)) = self.files.pop_front() else {
            self.at = ClaimAt::Over;
            return Step::Done;
        };
        self.claimed = claim_name(&original, self.pid);
        self.original = original;
        self.at = ClaimAt::Claiming;
        Step::Claim {
            from,
            to: self.claimed.clone(),
        }
    }
}

#[derive(Debug)]
enum WriteAt {
    Files,
    Cleaning,
    Listing,
    Reading(String),
    Deleting,
    Counting,
    Recording,
    Over,
}

/// How a host spools records, as a sans-IO plan (see [`crate::files`]): at most
/// [`MAX_RECORDS_PER_FILE`] a file, each written to a `.tmp` name and renamed; then the
/// directory is listed and the files past [`MAX_FILES`] (the oldest) are read and deleted,
/// their records counted into `dropped.json`. A file that cannot be written ends the plan
/// ([`Step::Failed`], its temporary file deleted); a file past the bound that cannot be
/// read is left (another host took it); a `dropped.json` that cannot be read counts from 0.
#[derive(Debug)]
pub struct Write {
    files: VecDeque<Step>,
    tmp: String,
    bound: VecDeque<String>,
    seq: u64,
    now_iso: String,
    dropped: u64,
    at: WriteAt,
}

impl Write {
    /// A plan for `records` (JSON texts) at `now_ms` / `now_iso`, by the host with process id
    /// `pid`; `seq` is the last sequence number the host's process used in a file name (0 at
    /// first; [`Write::seq`] is the next call's), `token` a random token.
    pub fn new(
        records: &[String],
        seq: u64,
        pid: u32,
        now_ms: u64,
        now_iso: &str,
        token: &str,
    ) -> Write {
        let mut files = VecDeque::new();
        let mut seq = seq;
        for chunk in records.chunks(MAX_RECORDS_PER_FILE) {
            seq += 1;
            let name = file_name(now_ms, seq, pid, token);
            let tmp = format!(".{name}.tmp");
            files.push_back(Step::Write {
                name: tmp.clone(),
                text: encode(chunk),
            });
            files.push_back(Step::Rename {
                from: tmp,
                to: name,
            });
        }
        Write {
            files,
            tmp: String::new(),
            bound: VecDeque::new(),
            seq,
            now_iso: now_iso.to_owned(),
            dropped: 0,
            at: WriteAt::Files,
        }
    }

    /// The last sequence number this plan's file names use.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// How many records past the bound this plan dropped (so far).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The first step ([`Step::Done`] when there is nothing to write).
    pub fn start(&mut self) -> Step {
        if self.files.is_empty() {
            self.at = WriteAt::Over;
            return Step::Done;
        }
        self.next_file()
    }

    /// What the last step did; the next step.
    pub fn feed(&mut self, outcome: Outcome) -> Step {
        match (std::mem::replace(&mut self.at, WriteAt::Over), outcome) {
            (WriteAt::Files, Outcome::Ok) => self.next_file(),
            (WriteAt::Files, _) => {
                self.at = WriteAt::Cleaning;
                Step::Delete {
                    name: self.tmp.clone(),
                }
            }
            (WriteAt::Cleaning, _) => Step::Failed,
            (WriteAt::Listing, Outcome::Listing(entries)) => {
                let names: Vec<String> = entries.into_iter().map(|(n, _)| n).collect();
                self.bound = over_bound(&names).into();
                self.next_drop()
            }
            (WriteAt::Reading(name), Outcome::Text(text)) => {
                self.dropped += decode(&text).records.len() as u64;
                self.at = WriteAt::Deleting;
                Step::Delete { name }
            }
            (WriteAt::Reading(_) | WriteAt::Deleting, _) => self.next_drop(),
            (WriteAt::Counting, outcome) => {
                let previous = match outcome {
                    Outcome::Text(t) => Some(t),
                    _ => None,
                };
                self.at = WriteAt::Recording;
                Step::Write {
                    name: DROPPED_FILE.to_owned(),
                    text: dropped(previous.as_deref(), self.dropped, &self.now_iso),
                }
            }
            _ => Step::Done,
        }
    }

    fn next_file(&mut self) -> Step {
        let Some(step) = self.files.pop_front() else {
            self.at = WriteAt::Listing;
            return Step::List;
        };
        if let Step::Write { name, .. } = &step {
            self.tmp = name.clone();
        }
        self.at = WriteAt::Files;
        step
    }

    fn next_drop(&mut self) -> Step {
        if let Some(name) = self.bound.pop_front() {
            self.at = WriteAt::Reading(name.clone());
            return Step::Read { name };
        }
        if self.dropped > 0 {
            self.at = WriteAt::Counting;
            return Step::Read {
                name: DROPPED_FILE.to_owned(),
            };
        }
        Step::Done
    }
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
    fn a_tally_counts_waiting_and_claimed_files_their_records_and_the_dropped() {
        let waiting = file_name(1, 1, 7, "ab");
        let claimed = claim_name(&file_name(2, 1, 7, "cd"), 9);
        let entries = [
            (waiting.clone(), format!("{GOOD}\nnot json\n")),
            (claimed, String::new()),
            (format!("{waiting}.tmp"), format!("{GOOD}\n")),
            (DROPPED_FILE.to_owned(), dropped(None, 3, "t")),
            ("notes.jsonl".to_owned(), format!("{GOOD}\n")),
        ];
        let t = tally(&entries);
        assert_eq!((t.files, t.records, t.dropped), (2, 1, 3));
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
