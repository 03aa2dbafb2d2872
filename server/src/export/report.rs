//! `REPORT.md` of the dataset: scope and limits, the files, the latest run with its
//! denominators, its levels, statuses and error types, the last 7 runs, and the CC BY 4.0
//! source block. Every date comes from the data (`retrieved_at` is the latest run's end,
//! or its start if it never ended); nothing reads the clock.

use std::collections::BTreeMap;
use std::fmt::Write;

use lowdown_core::scanner::days::iso;
use serde_json::Value;

use super::{Exported, HEADER, OBSERVATIONS_DIR};
use crate::db::{Db, DbResult};
use crate::services::source::{cite, dataset_of, LICENSE, LICENSE_URL};

/// What the dataset is about, in its attribution line.
pub const SUBJECT: &str = "Scanner observations";

struct RunRow {
    id: String,
    day: String,
    status: String,
    started: i64,
    finished: Option<i64>,
    summary: Value,
}

struct Counts {
    total: u64,
    blocked: u64,
    by_level: BTreeMap<String, u64>,
    by_status: BTreeMap<String, u64>,
    by_error: BTreeMap<String, u64>,
}

async fn counts(db: &Db, run: &str) -> DbResult<Counts> {
    let rows = crate::db::export::run_counts(db, run).await?;
    let mut c = Counts {
        total: 0,
        blocked: 0,
        by_level: BTreeMap::new(),
        by_status: BTreeMap::new(),
        by_error: BTreeMap::new(),
    };
    for r in rows {
        let n = r.n;
        let error = r.error_type;
        c.total += n;
        if error.as_deref() == Some("blocked_url") {
            c.blocked += n;
            continue;
        }
        *c.by_level.entry(r.reached_level.to_string()).or_default() += n;
        let status = r
            .http_status
            .map_or("none (no response)".to_owned(), |s| s.to_string());
        *c.by_status.entry(status).or_default() += n;
        if let Some(e) = error {
            *c.by_error.entry(e).or_default() += n;
        }
    }
    Ok(c)
}

fn share(n: u64, of: u64) -> String {
    if of == 0 {
        "—".to_owned()
    } else {
        format!("{:.1}%", n as f64 * 100.0 / of as f64)
    }
}

fn count_table(out: &mut String, title: &str, key: &str, m: &BTreeMap<String, u64>, of: u64) {
    let _ = writeln!(out, "\n### {title}\n");
    if m.is_empty() {
        let _ = writeln!(out, "None.");
        return;
    }
    let _ = writeln!(
        out,
        "| {key} | observations | share of {of} probe attempts |\n|---|---:|---:|"
    );
    for (k, n) in m {
        let _ = writeln!(out, "| {k} | {n} | {} |", share(*n, of));
    }
}

fn n(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_u64)
        .map_or("—".to_owned(), |x| x.to_string())
}

/// The report's text.
pub async fn report(db: &Db, deployment: &str, exported: &Exported) -> DbResult<String> {
    let runs: Vec<RunRow> = crate::db::export::latest_runs(db, 7)
        .await?
        .into_iter()
        .map(|r| RunRow {
            id: r.scan_run_id,
            day: r.day,
            status: r.status,
            started: r.started_ms,
            finished: r.finished_ms,
            summary: r
                .summary
                .and_then(|s| serde_json::from_str(&s).ok())
                .unwrap_or_default(),
        })
        .collect();
    let (first, last, servers) = crate::db::export::span(db).await?;
    let retrieved = runs.first().map(|r| iso(r.finished.unwrap_or(r.started)));

    let mut out = format!("# Lowdown Scanner observations: {deployment}\n\n");
    out.push_str("## Scope and limits\n\n");
    out.push_str("- **What a row is**: one probe of one streamable-HTTP remote of an MCP Registry server by the Lowdown Scanner, once a day: `initialize`, `notifications/initialized`, `tools/list` (every page). Tools are never called.\n");
    out.push_str("- **Sample**: the Scanner's cohort, the first N active, latest Registry entries ordered by sha256 of `mcp:<name>`, fixed once chosen (it only grows). A server outside the cohort is not in this dataset, which says nothing about it.\n");
    out.push_str("- **Fields**: `reached_level` 0 (initialize did not complete), 1 (initialize only), 2 (initialize and tools/list with a tools array); `http_status` as observed (a 401 is a 401); `error_type` only without an HTTP response (`timeout`, `dns`, `tls`, `conn_refused`, `conn_reset`, `network_error`), or `invalid_response` (a 2xx that is not the JSON-RPC answer), or `blocked_url` (a URL the SSRF rules refused: nothing was sent, so it is no probe attempt); `latency_ms` of `initialize`; `server_version` under the published-version rule; `schema_hash` of the first `tools/list` page.\n");
    out.push_str("- **Limits**: one vantage point, one probe per remote per day; a probe sees the public interface only (no authentication), so many servers answer 401 by design. These are observations, not interactions: they never enter any success rate.\n");
    out.push_str("- **Not in this dataset**: tool definitions and descriptions (only their hashes), agent-reported interactions, telemetry.\n");
    let _ = writeln!(
        out,
        "- **Files**: `{OBSERVATIONS_DIR}/YYYY-MM.csv`, one per month of the run's UTC day; header `{HEADER}`; RFC 4180 quoting, LF line ends, UTF-8; a null is an empty field (an empty string is `\"\"`); `observed_at` in ISO-8601 UTC; rows in `id` order (time order)."
    );
    out.push_str("\n## Dataset\n\n");
    match (&first, &last) {
        (Some(f), Some(l)) => {
            let _ = writeln!(
                out,
                "{} observations of {servers} servers, {f} to {l}, in {} files:\n",
                exported.rows,
                exported.files.len()
            );
        }
        _ => out.push_str("No observation yet.\n"),
    }
    if !exported.files.is_empty() {
        out.push_str("| file |\n|---|\n");
        for f in &exported.files {
            let _ = writeln!(out, "| `{f}` |");
        }
    }
    out.push_str("\n## Latest run\n\n");
    match runs.first() {
        None => out.push_str("No scan has run.\n"),
        Some(r) => {
            let c = counts(db, &r.id).await?;
            let attempts = c.total - c.blocked;
            let _ = writeln!(
                out,
                "Run `{}` for {} ({}), started {}, finished {}.\n",
                r.id,
                r.day,
                r.status,
                iso(r.started),
                r.finished.map_or("—".to_owned(), iso)
            );
            out.push_str("| denominator | count |\n|---|---:|\n");
            for (label, key) in [
                ("Registry entries read", "entries"),
                ("active and latest entries", "active_latest"),
                ("with a probeable remote", "probeable"),
                ("cohort members", "members"),
                ("members not listed", "not_listed"),
                ("members without a probeable remote", "no_probeable_remote"),
                ("remotes to probe", "remotes"),
            ] {
                let _ = writeln!(out, "| {label} | {} |", n(&r.summary, key));
            }
            let _ = writeln!(out, "| observations | {} |\n| probe attempts | {attempts} |\n| blocked URLs (nothing sent) | {} |", c.total, c.blocked);
            count_table(&mut out, "Reached level", "level", &c.by_level, attempts);
            count_table(&mut out, "HTTP status", "status", &c.by_status, attempts);
            count_table(&mut out, "Error types", "error type", &c.by_error, attempts);
        }
    }
    out.push_str("\n## Last 7 runs\n\n");
    if !runs.is_empty() {
        out.push_str("| day | run | status | Registry entries | members | observations | probe attempts | level 2 | level 1 | level 0 | blocked |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for r in &runs {
            let c = counts(db, &r.id).await?;
            let l = |k: &str| c.by_level.get(k).copied().unwrap_or(0);
            let _ = writeln!(
                out,
                "| {} | `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                r.day,
                r.id,
                r.status,
                n(&r.summary, "entries"),
                n(&r.summary, "members"),
                c.total,
                c.total - c.blocked,
                l("2"),
                l("1"),
                l("0"),
                c.blocked
            );
        }
    }
    let retrieved = retrieved.unwrap_or_else(|| "—".to_owned());
    let dataset = dataset_of(deployment);
    let cite = cite(&dataset, SUBJECT, &retrieved);
    let _ = write!(
        out,
        "\n## Source\n\n- Dataset: {dataset}, {SUBJECT}\n- License: {LICENSE}, {LICENSE_URL}\n- Retrieved at: {retrieved} (the latest run)\n- Cite: {cite}\n"
    );
    Ok(out)
}
