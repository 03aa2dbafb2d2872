//! What the ASCII-only pattern engine means for a user's `--log-pattern` (module docs).

use super::{LogDiff, LogDiffError, LogDiffOptions};

/// Whether the one line `line` is quoted under `pattern` (`None`: the default pattern).
fn quoted(pattern: Option<&str>, line: &str) -> bool {
    let mut diff = LogDiff::new(LogDiffOptions {
        pattern: pattern.map(str::to_owned),
        ..LogDiffOptions::default()
    })
    .expect("valid pattern");
    diff.watch("/abs/app.log", Some(0));
    let bytes = format!("{line}\n");
    diff.feed("/abs/app.log", bytes.len() as u64, bytes.as_bytes());
    diff.take_block("00:00:00")
        .is_some_and(|block| block.ends_with(&format!("  | {line}")))
}

#[test]
fn ascii_letters_match_in_any_case() {
    assert!(quoted(None, "2026-01-01 FATAL: disk full"));
    assert!(quoted(None, "Uncaught TypeError in handler"));
    assert!(quoted(Some("timeout"), "upstream TimeOut after 30s"));
    assert!(!quoted(None, "no errors today"));
}

#[test]
fn non_ascii_text_is_matched_literally() {
    // Literals and `.` match any character; only case folding is ASCII.
    assert!(quoted(Some("échec"), "2026 échec de connexion"));
    assert!(quoted(Some("d.sque"), "disque plein"));
    assert!(!quoted(Some("échec"), "2026 ÉCHEC DE CONNEXION"));
    assert!(quoted(Some("[ée]chec"), "2026 ECHEC"));
}

#[test]
fn word_boundaries_are_ascii() {
    // A non-ASCII letter is not a word character, so the default words are found after it.
    assert!(quoted(None, "Ωerror in module"));
    assert!(!quoted(None, "xerror in module"));
}

#[test]
fn unicode_classes_are_rejected_with_a_clear_error() {
    for pattern in [r"\p{L}+error", r"[a-z&&[^x]]"] {
        let err = LogDiff::new(LogDiffOptions {
            pattern: Some(pattern.to_owned()),
            ..LogDiffOptions::default()
        })
        .expect_err(pattern);
        let LogDiffError::InvalidPattern { message } = err;
        assert!(!message.is_empty(), "{pattern}: empty message");
    }
}
