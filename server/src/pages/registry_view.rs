//! The parts of a target page that come from the Registry Scanner: the Scanner's 30-day
//! strip, its latest observation, declared against observed, definition changes; the
//! Registry's declaration and its changes; the declared packages; and, for an `npm:` or
//! `pypi:` name, the Registry entries declaring it. All read from the answer.

use serde_json::Value;

use super::charts::{figure, strip_chart, table, StripDay};
use super::escape::{escape, path_segment};

fn s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "—".to_owned(),
        Value::Array(a) if a.is_empty() => "—".to_owned(),
        Value::Array(a) => a.iter().map(s).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

fn yes(v: &Value) -> String {
    match v.as_bool() {
        Some(true) => "yes".into(),
        Some(false) => "no".into(),
        None => "—".into(),
    }
}

const SCANNER_SOURCE: &str = "Source: Lowdown Scanner observations (initialize and tools/list, once a day; tools are never called), kept apart from interactions and never in any rate.";

fn strip(sc: &Value) -> String {
    let mut days: Vec<StripDay> = Vec::new();
    for d in sc["daily_30d"].as_array().into_iter().flatten() {
        days.push(StripDay {
            day: s(&d["day"]),
            level: d["reached_level"].as_u64().map(|l| l as u8),
            status: d["http_status"].as_u64().map(|x| x as u16),
            missing: None,
            changed: d["tools_changed"].as_bool().unwrap_or(false),
        });
    }
    for m in sc["missing_days"].as_array().into_iter().flatten() {
        days.push(StripDay {
            day: s(&m["day"]),
            level: None,
            status: None,
            missing: Some(s(&m["reason"])),
            changed: false,
        });
    }
    days.sort_by(|a, b| a.day.cmp(&b.day));
    if days.is_empty() {
        return "<p class=\"muted\">No day in the window yet.</p>".to_owned();
    }
    let rows: Vec<Vec<String>> = days
        .iter()
        .map(|d| {
            vec![
                d.day.clone(),
                d.level.map_or("—".into(), |l| l.to_string()),
                d.status.map_or("—".into(), |x| x.to_string()),
                if d.changed { "yes".into() } else { "no".into() },
                d.missing.clone().unwrap_or_else(|| "—".into()),
            ]
        })
        .collect();
    let observed = days.iter().filter(|d| d.level.is_some()).count();
    figure(
        "strip",
        &strip_chart("strip-chart", "The Scanner's last 30 days", "One cell per day: the highest level reached (2: initialize and tools/list, 1: initialize only, 0: neither) or – for a day without an observation; Δ marks a tool definition change.", &days),
        &format!("Highest level reached per day: 2 initialize and tools/list, 1 initialize only, 0 neither, – no observation (the table says why); Δ tool definitions changed. {observed} observed days of {}; {} observations in 30 days. {SCANNER_SOURCE}", days.len(), sc["observations_30d"].as_u64().unwrap_or(0)),
        &table("The Scanner's last 30 days", &["day", "level", "HTTP status", "definitions changed", "why no observation"], &rows),
    )
}

fn scanner(sc: &Value) -> String {
    let mut out = String::from("<h2 id=\"scanner\">What the Scanner observed</h2>");
    if sc["in_sample"].as_bool() != Some(true) {
        out.push_str(&format!("<p>{}</p>", escape(&s(&sc["note"]))));
        return out;
    }
    out.push_str(&format!(
        "<p>First observed {}, last observed {}.</p>",
        escape(&s(&sc["first_observed_at"])),
        escape(&s(&sc["last_observed_at"]))
    ));
    out.push_str(&strip(sc));
    let l = &sc["latest"];
    if !l.is_null() {
        out.push_str(&table(
            "Latest observation",
            &["field", "value"],
            &[
                vec!["observed at".into(), s(&l["observed_at"])],
                vec!["reached level".into(), s(&l["reached_level"])],
                vec!["HTTP status".into(), s(&l["http_status"])],
                vec!["error type".into(), s(&l["error_type"])],
                vec!["tools".into(), s(&l["tool_count"])],
                vec!["server version".into(), s(&l["server_version"])],
                vec![
                    "initialize latency (ms)".into(),
                    l["latency_ms"]
                        .as_f64()
                        .map_or("—".into(), |v| format!("{v:.1}")),
                ],
                vec![
                    "asks for authentication (WWW-Authenticate)".into(),
                    yes(&l["www_authenticate"]),
                ],
            ],
        ));
    }
    let dv = &sc["declared_vs_observed"];
    out.push_str("<h3>Declared and observed</h3>");
    out.push_str(&table(
        "Declared in the MCP Registry, observed by the Scanner",
        &["", "declared (Registry)", "observed (Scanner)"],
        &[
            vec![
                "version".into(),
                s(&dv["declared_version"]),
                s(&dv["observed_server_version"]),
            ],
            vec![
                "hosts".into(),
                s(&dv["declared_hosts"]),
                s(&dv["observed_hosts"]),
            ],
        ],
    ));
    let dc = &sc["definition_changes"];
    let last = match dc["last_change"].as_str() {
        Some(day) => format!(
            "; last change {day}, after {} stable days",
            s(&dc["stable_days_before_last_change"])
        ),
        None => "; no change recorded".to_owned(),
    };
    out.push_str(&format!(
        "<h3>Tool definitions</h3><p>Over 30 days, each day compared with the previous observation of the same remote: <b>{}</b>{}.</p>",
        escape(&s(&dc["pattern"]).replace('_', " ")),
        escape(&last)
    ));
    if let Some(events) = dc["events"].as_array().filter(|e| !e.is_empty()) {
        let rows: Vec<Vec<String>> = events
            .iter()
            .map(|e| {
                vec![
                    s(&e["day"]),
                    s(&e["remote_url"]),
                    s(&e["changed"]),
                    format!(
                        "{} → {}",
                        s(&e["tool_count"]["from"]),
                        s(&e["tool_count"]["to"])
                    ),
                    s(&e["tools_added"]),
                    s(&e["tools_removed"]),
                ]
            })
            .collect();
        out.push_str(&table(
            "Definition changes (newest first)",
            &["day", "remote", "changed", "tools", "added", "removed"],
            &rows,
        ));
    }
    if let Some(names) = sc["tool_names"].as_array().filter(|n| !n.is_empty()) {
        out.push_str(&format!(
            "<p>Tool names ({}): {}</p>",
            names.len(),
            names
                .iter()
                .map(|n| format!("<code>{}</code>", escape(&s(n))))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out.push_str(&format!("<p class=\"source\">{SCANNER_SOURCE}</p>"));
    out
}

fn registry(r: &Value) -> String {
    let mut out = String::from("<h2 id=\"registry\">What the MCP Registry declares</h2>");
    out.push_str(&table(
        "Registry declaration",
        &["field", "value"],
        &[
            vec!["listed".into(), yes(&r["listed"])],
            vec!["status".into(), s(&r["status"])],
            vec!["declared version".into(), s(&r["declared_version"])],
            vec!["remote hosts".into(), s(&r["remote_hosts"])],
            vec![
                "recorded since this deployment's first Registry read".into(),
                yes(&r["recorded_since_baseline"]),
            ],
        ],
    ));
    match r["changes_30d"].as_array().filter(|c| !c.is_empty()) {
        Some(changes) => {
            let rows: Vec<Vec<String>> = changes
                .iter()
                .map(|c| vec![s(&c["day"]), s(&c["field"]), s(&c["from"]), s(&c["to"])])
                .collect();
            out.push_str(&table(
                "Declaration changes, last 30 days",
                &["day", "field", "from", "to"],
                &rows,
            ));
        }
        None => out.push_str("<p>No declaration change in the last 30 days.</p>"),
    }
    out.push_str("<p class=\"source\">Source: the official MCP Registry, read by the Lowdown Scanner at every scan.</p>");
    out
}

fn packages(p: &Value) -> String {
    let Some(items) = p.as_array().filter(|i| !i.is_empty()) else {
        return String::new();
    };
    let rows: Vec<Vec<String>> = items
        .iter()
        .map(|i| {
            let flag = match (
                i["latest_deprecated"].as_bool(),
                i["latest_yanked"].as_bool(),
            ) {
                (Some(true), _) => "deprecated".to_owned(),
                (_, Some(true)) => "yanked".to_owned(),
                (Some(false), _) | (_, Some(false)) => "no".to_owned(),
                _ => "—".to_owned(),
            };
            let found = if i["checked"].as_bool() != Some(true) {
                format!(
                    "not checked ({})",
                    s(&i["unchecked_reason"]).replace('_', " ")
                )
            } else if i["not_found"].as_bool() == Some(true) {
                format!(
                    "not found ({}) since {}",
                    s(&i["not_found_kind"]).replace("—", "404"),
                    s(&i["not_found_since"])
                )
            } else {
                "found".to_owned()
            };
            vec![
                format!("{}:{}", s(&i["registry_type"]), s(&i["identifier"])),
                s(&i["declared_version"]),
                s(&i["latest"]),
                yes(&i["declared_is_latest"]),
                flag,
                s(&i["project_status"]),
                found,
                format!(
                    "{}{}",
                    s(&i["checked_at"]),
                    if i["last_check_failed"].as_bool() == Some(true) {
                        " (the latest check failed)"
                    } else {
                        ""
                    }
                ),
            ]
        })
        .collect();
    format!(
        "<h2 id=\"packages\">Packages</h2>{}<p class=\"source\">Source: npm (package metadata) and PyPI (Index API with PEP 792 status, JSON API), checked daily with the scan; other registries are listed as declared.</p>",
        table("Declared packages", &["package", "declared", "latest", "declared is latest", "latest deprecated or yanked", "project status", "found", "checked at"], &rows)
    )
}

/// The Scanner, Registry and package sections of an answer (empty for other targets).
pub fn sections(a: &Value) -> String {
    let mut out = String::new();
    if a.get("scanner").is_some() {
        out.push_str(&scanner(&a["scanner"]));
    }
    if a.get("registry").is_some() {
        out.push_str(&registry(&a["registry"]));
    }
    if let Some(entries) = a["registry_entries"].as_array().filter(|e| !e.is_empty()) {
        out.push_str(
            "<h2 id=\"registry-entries\">MCP Registry entries declaring this package</h2><ul>",
        );
        for e in entries.iter().filter_map(Value::as_str) {
            out.push_str(&format!(
                "<li><a href=\"/t/{}\">{}</a></li>",
                path_segment(e),
                escape(e)
            ));
        }
        out.push_str("</ul>");
    }
    out.push_str(&packages(&a["packages"]));
    out
}
