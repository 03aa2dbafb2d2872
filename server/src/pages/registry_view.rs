//! The parts of a target page that come from the Registry Scanner: the Scanner's 30-day
//! strip, its latest observation, declared against observed, definition changes; the
//! Registry's declaration and its changes; the declared packages; and, for an `npm:` or
//! `pypi:` name, the Registry entries declaring it. All read from the answer.

use lowdown_core::scanner::history::{
    ObservationMethod, RegistryBlock, ScannerBlock, ScannerDetail, ScannerSeen,
};
use lowdown_core::scanner::packages::{PackageItem, FIRST_CHECK};

use super::charts::{figure, label as s, strip_chart, table, yes, StripDay};
use super::escape::{escape, path_segment};
use crate::routes::reputation::Answer;

const SCANNER_SOURCE: &str = "Source: Lowdown Scanner observations (initialize and tools/list, once a day; tools are never called), kept apart from interactions and never in any rate.";

fn strip(seen: &ScannerSeen, sc: &ScannerDetail) -> String {
    let mut days: Vec<StripDay> = Vec::new();
    for d in &sc.daily_30d {
        days.push(StripDay {
            day: d.day.clone(),
            level: Some(d.reached_level),
            status: d.http_status,
            missing: None,
            changed: d.tools_changed,
        });
    }
    for m in &sc.missing_days {
        days.push(StripDay {
            day: m.day.clone(),
            level: None,
            status: None,
            missing: Some(s(&m.reason)),
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
        &format!("Highest level reached per day: 2 initialize and tools/list, 1 initialize only, 0 neither, – no observation (the table says why); Δ tool definitions changed. {observed} observed days of {}; {} observations in 30 days. {SCANNER_SOURCE}", days.len(), seen.observations_30d),
        &table("The Scanner's last 30 days", &["day", "level", "HTTP status", "definitions changed", "why no observation"], &rows),
    )
}

fn scanner(block: &ScannerBlock) -> String {
    let mut out = String::from("<h2 id=\"scanner\">What the Scanner observed</h2>");
    let (Some(seen), Some(sc)) = (block.seen.as_ref(), block.detail.as_ref()) else {
        out.push_str(&format!("<p>{}</p>", escape(&s(&block.note))));
        return out;
    };
    out.push_str(&format!(
        "<p>First observed {}, last observed {}.</p>",
        escape(&s(&sc.first_observed_at)),
        escape(&s(&seen.last_observed_at))
    ));
    out.push_str(&strip(seen, sc));
    if let Some(l) = &seen.latest {
        out.push_str(&table(
            "Latest observation",
            &["field", "value"],
            &[
                vec!["observed at".into(), l.observed_at.clone()],
                vec!["reached level".into(), l.reached_level.to_string()],
                vec!["HTTP status".into(), s(&l.http_status)],
                vec!["error type".into(), s(&l.error_type)],
                vec!["tools".into(), s(&l.tool_count)],
                vec!["server version".into(), s(&l.server_version)],
                vec![
                    "initialize latency (ms)".into(),
                    l.latency_ms.map_or("—".into(), |v| format!("{v:.1}")),
                ],
                vec![
                    "asks for authentication (WWW-Authenticate)".into(),
                    yes(Some(l.www_authenticate)),
                ],
            ],
        ));
    }
    let statuses: Vec<String> = seen
        .status_distribution_30d
        .iter()
        .map(|(k, n)| format!("{} {n}", k.replace('_', " ")))
        .collect();
    out.push_str(&format!(
        "<p>Last 30 days: {} distinct tool schema {}; HTTP statuses as observed: {}.</p>",
        seen.schema_versions_30d,
        if seen.schema_versions_30d == 1 {
            "version"
        } else {
            "versions"
        },
        escape(&s(&statuses))
    ));
    let dv = &sc.declared_vs_observed;
    out.push_str("<h3>Declared and observed</h3>");
    out.push_str(&table(
        "Declared in the MCP Registry, observed by the Scanner",
        &["", "declared (Registry)", "observed (Scanner)"],
        &[
            vec![
                "version".into(),
                s(&dv.declared_version),
                s(&dv.observed_server_version),
            ],
            vec!["hosts".into(), s(&dv.declared_hosts), s(&dv.observed_hosts)],
        ],
    ));
    let dc = &sc.definition_changes;
    let last = match &dc.last_change {
        Some(day) => format!(
            "; last change {day}, after {} stable days",
            s(&dc.stable_days_before_last_change)
        ),
        None => "; no change recorded".to_owned(),
    };
    out.push_str(&format!(
        "<h3>Tool definitions</h3><p>Over 30 days, each day compared with the previous observation of the same remote: <b>{}</b>{}.</p>",
        escape(&s(&dc.pattern).replace('_', " ")),
        escape(&last)
    ));
    if !dc.events.is_empty() {
        let rows: Vec<Vec<String>> = dc
            .events
            .iter()
            .map(|e| {
                vec![
                    e.day.clone(),
                    e.remote_url.clone(),
                    s(&e.changed),
                    format!("{} → {}", s(&e.tool_count.from), s(&e.tool_count.to)),
                    s(&e.tools_added),
                    s(&e.tools_removed),
                ]
            })
            .collect();
        out.push_str(&table(
            "Definition changes (newest first)",
            &["day", "remote", "changed", "tools", "added", "removed"],
            &rows,
        ));
    }
    if !sc.tool_names.is_empty() {
        out.push_str(&format!(
            "<p>Tool names ({}): {}</p>",
            sc.tool_names.len(),
            sc.tool_names
                .iter()
                .map(|n| format!("<code>{}</code>", escape(n)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out.push_str(&method(&sc.observation_method));
    out.push_str(&format!("<p class=\"source\">{SCANNER_SOURCE}</p>"));
    out
}

fn method(m: &ObservationMethod) -> String {
    let levels: Vec<String> = m.levels.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    format!(
        "<h3>Observation method</h3><p>{}, {}: {}. Requests: {} (each within {} ms); tools called: {}. Levels: {}. HTTP status: {}.</p>",
        escape(&m.observer),
        escape(&m.schedule),
        escape(&m.remotes),
        escape(&m.requests.join(", ")),
        m.request_timeout_ms,
        yes(Some(m.calls_tools)),
        escape(&levels.join("; ")),
        escape(&m.http_status)
    )
}

fn registry(r: &RegistryBlock) -> String {
    let mut out = String::from("<h2 id=\"registry\">What the MCP Registry declares</h2>");
    out.push_str(&table(
        "Registry declaration",
        &["field", "value"],
        &[
            vec!["listed".into(), yes(Some(r.listed))],
            vec!["status".into(), r.status.clone()],
            vec!["declared version".into(), s(&r.declared_version)],
            vec!["remote hosts".into(), s(&r.remote_hosts)],
            vec![
                "recorded since this deployment's first Registry read".into(),
                yes(Some(r.recorded_since_baseline)),
            ],
        ],
    ));
    match r.changes_30d.as_slice() {
        [] => out.push_str("<p>No declaration change in the last 30 days.</p>"),
        changes => {
            let rows: Vec<Vec<String>> = changes
                .iter()
                .map(|c| vec![c.day.clone(), c.field.clone(), s(&c.from), s(&c.to)])
                .collect();
            out.push_str(&table(
                "Declaration changes, last 30 days",
                &["day", "field", "from", "to"],
                &rows,
            ));
        }
    }
    out.push_str("<p class=\"source\">Source: the official MCP Registry, read by the Lowdown Scanner at every scan.</p>");
    out
}

fn packages(items: &[PackageItem]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let rows: Vec<Vec<String>> = items
        .iter()
        .map(|i| {
            let f = i.facts.as_ref();
            let flag = match (
                f.and_then(|f| f.latest_deprecated),
                f.and_then(|f| f.latest_yanked),
            ) {
                (Some(true), _) => "deprecated".to_owned(),
                (_, Some(true)) => "yanked".to_owned(),
                (Some(false), _) | (_, Some(false)) => "no".to_owned(),
                _ => "—".to_owned(),
            };
            let found = match f {
                _ if !i.checked => {
                    format!("not checked ({})", s(&i.unchecked_reason).replace('_', " "))
                }
                Some(f) if f.not_found => format!(
                    "not found ({}) since {}",
                    s(&f.not_found_kind).replace("—", "404"),
                    match f.not_found_since.as_deref() {
                        Some(FIRST_CHECK) => "Lowdown's first check".to_owned(),
                        since => s(&since),
                    }
                ),
                _ => "found".to_owned(),
            };
            vec![
                format!("{}:{}", i.registry_type, i.identifier),
                s(&i.declared_version),
                s(&f.map(|f| &f.latest)),
                yes(f.and_then(|f| f.declared_is_latest.flatten())),
                flag,
                s(&f.map(|f| f.project_status)),
                found,
                format!(
                    "{}{}",
                    s(&f.map(|f| &f.checked_at)),
                    if f.is_some_and(|f| f.last_check_failed) {
                        " (the latest check failed)"
                    } else {
                        ""
                    }
                ),
            ]
        })
        .collect();
    let changes: Vec<Vec<String>> = items
        .iter()
        .filter_map(|i| Some((i, i.facts.as_ref()?)))
        .flat_map(|(i, f)| {
            f.changes_30d.iter().map(move |c| {
                vec![
                    c.day.clone(),
                    format!("{}:{}", i.registry_type, i.identifier),
                    c.field.clone(),
                    s(&c.from),
                    s(&c.to),
                ]
            })
        })
        .collect();
    let changes = match changes.is_empty() {
        true => "<p>No package change in the last 30 days.</p>".to_owned(),
        false => table(
            "Package changes, last 30 days",
            &["day", "package", "field", "from", "to"],
            &changes,
        ),
    };
    format!(
        "<h2 id=\"packages\">Packages</h2>{}{changes}<p class=\"source\">Source: npm (package metadata) and PyPI (Index API with PEP 792 status, JSON API), checked daily with the scan; other registries are listed as declared.</p>",
        table("Declared packages", &["package", "declared", "latest", "declared is latest", "latest deprecated or yanked", "project status", "found", "checked at"], &rows)
    )
}

/// The Registry, package and Scanner sections of an answer, in its order (empty for
/// other targets).
pub(crate) fn sections(a: &Answer) -> String {
    let mut out = String::new();
    if let Some(b) = &a.registry {
        out.push_str(&registry(&b.registry));
    }
    if let Some(p) = a
        .package
        .as_ref()
        .filter(|p| !p.registry_entries.is_empty())
    {
        out.push_str(
            "<h2 id=\"registry-entries\">MCP Registry entries declaring this package</h2><ul>",
        );
        for e in &p.registry_entries {
            out.push_str(&format!(
                "<li><a href=\"/t/{}\">{}</a></li>",
                path_segment(e),
                escape(e)
            ));
        }
        out.push_str("</ul>");
    }
    let items = match (&a.registry, &a.package) {
        (Some(b), _) => b.packages.as_slice(),
        (None, Some(p)) => p.packages.as_slice(),
        (None, None) => &[],
    };
    out.push_str(&packages(items));
    if let Some(b) = &a.registry {
        out.push_str(&scanner(&b.scanner));
    }
    out
}
