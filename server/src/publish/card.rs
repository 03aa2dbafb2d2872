//! The texts beside the data: the repository's `LICENSE` (the CC BY 4.0 notice with the
//! attribution line every answer's `source.cite` uses) and the Hugging Face dataset card
//! (`README.md` with YAML front matter: licence, pretty name, size category, tags, and one
//! config whose `data_files` glob covers every month). Same inputs, same bytes.
//!
//! No `task_categories`: the rows are observations of MCP servers, not examples for a
//! machine-learning task, and a category would only mislead a search.

use std::fmt::Write;

use crate::export::report::SUBJECT;
use crate::export::HEADER;
use crate::services::source::{cite, dataset_of, LICENSE, LICENSE_URL};

/// The config name in the card (`load_dataset(DIR, "scanner_observations")`).
pub const CONFIG: &str = "scanner_observations";

/// The `LICENSE` file of the repository.
pub fn license(deployment: &str, retrieved: &str) -> String {
    let dataset = dataset_of(deployment);
    format!(
        "The data in this repository ({}, REPORT.md) and its copies (the Hugging Face \
         dataset) are licensed under the Creative Commons Attribution 4.0 International \
         licence ({LICENSE}).\n\nLicence: {LICENSE_URL}\nLegal code: {LICENSE_URL}legalcode\n\n\
         Attribution: when you republish the data or anything made from it, cite it as\n\n    {}\n\n\
         with the date of the version you used (the latest run it contains, as REPORT.md \
         states).\n",
        crate::export::OBSERVATIONS_DIR,
        cite(&dataset, SUBJECT, retrieved)
    )
}

/// The Hugging Face `size_categories` value for `rows`.
fn size_category(rows: u64) -> &'static str {
    match rows {
        0..1_000 => "n<1K",
        1_000..10_000 => "1K<n<10K",
        10_000..100_000 => "10K<n<100K",
        100_000..1_000_000 => "100K<n<1M",
        1_000_000..10_000_000 => "1M<n<10M",
        10_000_000..100_000_000 => "10M<n<100M",
        _ => "100M<n<1B",
    }
}

/// A YAML double-quoted scalar.
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The dataset card (`README.md`) of the layout holding `files` (relative paths).
pub fn card(deployment: &str, retrieved: &str, rows: u64, files: &[String]) -> String {
    let dataset = dataset_of(deployment);
    let mut out = String::from("---\n");
    let _ = writeln!(out, "license: cc-by-4.0");
    let _ = writeln!(
        out,
        "pretty_name: {}",
        quoted(&format!("Lowdown Scanner observations: {deployment}"))
    );
    let _ = writeln!(out, "size_categories:\n- {}", size_category(rows));
    out.push_str("tags:\n- mcp\n- model-context-protocol\n- mcp-registry\n- observations\n");
    let _ = writeln!(
        out,
        "configs:\n- config_name: {CONFIG}\n  default: true\n  data_files:\n  - split: train\n    path: {}/*.parquet",
        super::HF_DATA_DIR
    );
    out.push_str("---\n\n");
    let _ = writeln!(out, "# Lowdown Scanner observations: {deployment}\n");
    out.push_str(
        "One row per probe of one streamable-HTTP remote of an MCP Registry server by the \
         Lowdown Scanner, once a day (`initialize`, `notifications/initialized`, `tools/list`; \
         tools are never called). These are observations from one vantage point without \
         authentication, not agent-reported interactions; the scope, the sample and the \
         limits are in the daily report, `REPORT.md`, beside this card.\n\n",
    );
    let _ = writeln!(
        out,
        "{rows} rows in {} monthly Parquet files (`{}/YYYY-MM.parquet`, by the scan run's UTC day; rows in `id` order), the latest run {retrieved}. The same rows are in the repository's CSV files.\n",
        files.len(),
        super::HF_DATA_DIR
    );
    out.push_str("```python\nfrom datasets import load_dataset\nds = load_dataset(\"<this dataset>\", \"scanner_observations\", split=\"train\")\n```\n\n");
    out.push_str("## Columns\n\n| column | type | null |\n|---|---|---|\n");
    let types = [
        ("int64", "never"),
        ("string", "never"),
        ("string (`mcp:<name>`)", "never"),
        ("timestamp (ms, UTC)", "never"),
        ("string", "never"),
        ("int64", "no HTTP response"),
        ("int64 (0, 1 or 2)", "never"),
        ("float64 (ms of `initialize`)", "no answer"),
        ("string", "an HTTP response came"),
        ("int64", "`tools/list` not reached"),
        ("string", "not reported"),
        ("string (sha256, hex)", "`tools/list` not reached"),
    ];
    for (name, (ty, null)) in HEADER.split(',').zip(types) {
        let _ = writeln!(out, "| `{name}` | {ty} | {null} |");
    }
    out.push_str("\nText is as observed (the CSV files prefix a `'` to a cell a spreadsheet would run as a formula; these files do not).\n\n");
    let _ = write!(
        out,
        "## Licence and citation\n\n{LICENSE} ({LICENSE_URL}). Cite as:\n\n> {}\n",
        cite(&dataset, SUBJECT, retrieved)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_card_names_the_licence_the_config_and_every_column() {
        let c = card(
            "Lowdown \"public\"",
            "2026-11-30T06:45:00.000Z",
            12_345,
            &["data/scanner_observations/2026-11.parquet".into()],
        );
        assert!(c.starts_with("---\nlicense: cc-by-4.0\npretty_name: \"Lowdown Scanner observations: Lowdown \\\"public\\\"\"\n"));
        assert!(c.contains("- 10K<n<100K\n"));
        assert!(c.contains("- config_name: scanner_observations\n  default: true\n  data_files:\n  - split: train\n    path: data/scanner_observations/*.parquet\n---\n"));
        assert_eq!(c.matches("\n| `").count(), 12, "one row per column");
        assert!(c.ends_with("> Lowdown records: Lowdown \"public\", Scanner observations, retrieved 2026-11-30T06:45:00.000Z. CC BY 4.0, https://creativecommons.org/licenses/by/4.0/\n"));
        let l = license("x", "2026-11-30T06:45:00.000Z");
        assert!(l.contains("    Lowdown records: x, Scanner observations, retrieved 2026-11-30T06:45:00.000Z. CC BY 4.0, https://creativecommons.org/licenses/by/4.0/\n"));
        assert_eq!(size_category(999), "n<1K");
        assert_eq!(size_category(1_000), "1K<n<10K");
    }
}
