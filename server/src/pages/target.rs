//! `GET /t/{target}`: one target's story, rendered from the very answer
//! `GET /api/reputation/{target}` gives (with the contributor detail, which is public
//! here), plus the latency histogram behind its p50/p95. Interactions first, then
//! telemetry, then what the Scanner and the Registry recorded ([`super::registry_view`]).

use std::cmp::Ordering;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use std::collections::BTreeMap;

use lowdown_core::aggregate::OrganicRow;

use super::charts::{figure, label, pct, rate_chart, table, value_chart, RateBar, ValueBar};
use super::escape::{escape, path_segment};
use super::layout::{html, page};
use crate::db::lookup::{resolve, Resolution};
use crate::error::AppResult;
use crate::routes::reputation::{reply, Answer, Candidates, Reply};
use crate::state::AppState;

/// Version order: numeric runs compared as numbers, text runs as text; `(none)` last.
pub fn version_order(a: &str, b: &str) -> Ordering {
    fn parts(s: &str) -> Vec<(bool, String)> {
        let mut out: Vec<(bool, String)> = Vec::new();
        for c in s.chars() {
            let digit = c.is_ascii_digit();
            match out.last_mut() {
                Some((d, run)) if *d == digit => run.push(c),
                _ => out.push((digit, c.to_string())),
            }
        }
        out
    }
    match (a == "(none)", b == "(none)") {
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    let (pa, pb) = (parts(a), parts(b));
    for (x, y) in pa.iter().zip(&pb) {
        let o = match (x.0, y.0) {
            (true, true) => {
                let (nx, ny) = (x.1.trim_start_matches('0'), y.1.trim_start_matches('0'));
                nx.len().cmp(&ny.len()).then_with(|| nx.cmp(ny))
            }
            _ => x.1.cmp(&y.1),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    pa.len().cmp(&pb.len())
}

fn rows_chart(
    id: &str,
    title: &str,
    table_title: &str,
    key: &str,
    map: &BTreeMap<String, OrganicRow>,
    order_by_version: bool,
) -> String {
    if map.is_empty() {
        return String::new();
    }
    let mut keys: Vec<&String> = map.keys().collect();
    if order_by_version {
        keys.sort_by(|a, b| version_order(a, b));
    }
    let bars: Vec<RateBar> = keys
        .iter()
        .map(|k| RateBar {
            label: (*k).clone(),
            rate: map[*k].success_rate,
            n: map[*k].rated_interactions,
            interactions: map[*k].interactions,
        })
        .collect();
    let rows: Vec<Vec<String>> = bars
        .iter()
        .map(|b| {
            vec![
                b.label.clone(),
                b.interactions.to_string(),
                b.n.to_string(),
                pct(b.rate),
            ]
        })
        .collect();
    let rated: u64 = bars.iter().map(|b| b.n).sum();
    format!(
        "<h3>{}</h3>{}",
        escape(title),
        figure(
            id,
            &rate_chart(id, title, &format!("Organic success rate per {key}; each bar is labelled with its rate and n, its rated interactions."), &bars),
            &format!("Organic success rate per {key}, in {} order. n = rated organic interactions ({rated} in all). Source: Lowdown records (agent-reported interactions, organic).",
                if order_by_version { "version" } else { "hash" }),
            &table(table_title, &[key, "interactions", "rated (n)", "success rate"], &rows),
        )
    )
}

fn trends(a: &Answer) -> String {
    let days = a.contributor.as_ref().map_or(&[][..], |c| &c.recent_trends);
    if days.is_empty() {
        return "<p class=\"muted\">No organic tool interaction in the last 30 days.</p>"
            .to_owned();
    }
    let bars: Vec<RateBar> = days
        .iter()
        .map(|d| RateBar {
            label: d.date.clone(),
            rate: d.success_rate,
            n: d.count,
            interactions: d.count,
        })
        .collect();
    let rows: Vec<Vec<String>> = bars
        .iter()
        .map(|b| vec![b.label.clone(), b.n.to_string(), pct(b.rate)])
        .collect();
    let total: u64 = bars.iter().map(|b| b.n).sum();
    figure(
        "by-day",
        &rate_chart("by-day-chart", "Success rate by day", "Organic success rate per UTC day over the last 30 days; days without an organic tool interaction are left out.", &bars),
        &format!("Organic success rate per UTC day (last 30 days). n = organic tool interactions that day ({total} in all). Source: Lowdown records (agent-reported interactions, organic)."),
        &table("Success rate by day", &["day", "interactions (n)", "success rate"], &rows),
    )
}

fn latency(a: &Answer, hist: &[(f64, u64)]) -> String {
    let Some(l) = &a.latency_ms else {
        return "<p class=\"muted\">No rated organic call carried a latency.</p>".to_owned();
    };
    let n: u64 = hist.iter().map(|h| h.1).sum();
    let (p50, avg, p95) = (l.p50, l.avg, l.p95);
    let bars = [
        ValueBar {
            label: "p50".into(),
            value: p50,
            text: format!("≤ {p50} ms"),
        },
        ValueBar {
            label: "average".into(),
            value: avg,
            text: format!("{avg} ms"),
        },
        ValueBar {
            label: "p95".into(),
            value: p95,
            text: format!("≤ {p95} ms"),
        },
    ];
    let mut rows = vec![
        vec!["p50".into(), format!("≤ {p50} ms")],
        vec!["average".into(), format!("{avg} ms")],
        vec!["p95".into(), format!("≤ {p95} ms")],
    ];
    rows.extend(
        hist.iter()
            .filter(|h| h.1 > 0)
            .map(|(bound, c)| vec![format!("calls ≤ {bound} ms"), c.to_string()]),
    );
    figure(
        "latency",
        &value_chart("latency-chart", "Latency p50, average and p95", "Latency of rated organic tool calls: median and 95th percentile as bucket upper bounds, and the mean.", &bars, false),
        &format!("Latency of rated organic tool calls that carried one, n = {n}; p50 and p95 are upper bounds of the latency buckets. Source: Lowdown records (agent-reported interactions, organic)."),
        &table("Latency", &["figure", "value"], &rows),
    )
}

fn failures(a: &Answer) -> String {
    let obj = &a.failure_breakdown;
    if obj.is_empty() {
        return "<p class=\"muted\">No rated organic failure.</p>".to_owned();
    }
    let (bars, rows) = counts(obj);
    let total: u64 = obj.values().sum();
    figure(
        "failures",
        &value_chart("failures-chart", "Failure breakdown", "Rated organic failures per failure type.", &bars, true),
        &format!("Rated organic failures per type, n = {total} failures (request-layer rejections are not failures). Source: Lowdown records (agent-reported interactions, organic)."),
        &table("Failure breakdown", &["failure type", "failures"], &rows),
    )
}

/// The bars and table rows of a count per key.
fn counts(map: &BTreeMap<String, u64>) -> (Vec<ValueBar>, Vec<Vec<String>>) {
    let bars = map
        .iter()
        .map(|(k, v)| ValueBar {
            label: k.clone(),
            value: *v as f64,
            text: v.to_string(),
        })
        .collect();
    let rows = map
        .iter()
        .map(|(k, v)| vec![k.clone(), v.to_string()])
        .collect();
    (bars, rows)
}

fn telemetry(a: &Answer) -> String {
    let Some(t) = &a.telemetry else {
        return String::new();
    };
    let mut out = format!(
        "<h2 id=\"telemetry\">Telemetry</h2><p>{} (subject: {} {}).</p><ul class=\"facts\"><li><b>{}</b>observations</li><li><b>{}</b>weighted success rate</li><li><b>{}</b>latency p50 (ms, ≤)</li><li><b>{}</b>latency p95 (ms, ≤)</li></ul>",
        escape(t.note),
        escape(t.subject.kind),
        escape(&t.subject.name),
        t.observations,
        escape(&pct(t.weighted_success_rate)),
        escape(&label(&t.latency_p50_ms)),
        escape(&label(&t.latency_p95_ms)),
    );
    if !t.status_codes.is_empty() {
        let (bars, rows) = counts(&t.status_codes);
        out.push_str(&figure(
            "telemetry-status",
            &value_chart("telemetry-status-chart", "Telemetry by HTTP status", "Organic telemetry observations per HTTP status code (none: no response).", &bars, false),
            &format!("Organic telemetry observations per status, n = {}. Source: self-reported HTTP telemetry, weighted by reporter; never part of the success rate.", t.observations),
            &table("Telemetry by status", &["status", "observations"], &rows),
        ));
    }
    out
}

fn tasks(a: &Answer) -> String {
    let Some(obj) = a
        .contributor
        .as_ref()
        .map(|c| &c.task_breakdown)
        .filter(|o| !o.is_empty())
    else {
        return String::new();
    };
    let rows: Vec<Vec<String>> = obj
        .iter()
        .map(|(k, t)| {
            vec![
                k.clone(),
                t.row.interactions.to_string(),
                t.success.to_string(),
                t.partial.to_string(),
                t.failure.to_string(),
                t.rejected.to_string(),
                pct(t.row.success_rate),
            ]
        })
        .collect();
    format!(
        "<h3>Per task</h3>{}",
        table(
            "Organic interactions per task",
            &[
                "task",
                "interactions",
                "success",
                "partial",
                "failure",
                "rejected",
                "success rate"
            ],
            &rows
        )
    )
}

fn summary_facts(a: &Answer) -> String {
    let f = |n: String, label: &str| format!("<li><b>{}</b>{}</li>", escape(&n), escape(label));
    let bs = &a.by_source;
    let bound = |v: Option<f64>| v.map_or("—".into(), |v| format!("≤ {v} ms"));
    format!(
        "<ul class=\"facts\" id=\"summary\">{}{}{}{}{}{}{}{}</ul><p class=\"muted\">By source: organic {}, seeded {}, synthetic {} (only organic counts in rates). Not in any rate: {} protocol requests, {} rejected requests, {} cancelled, {} capped (one network counts at most 20 rated calls a day per target). The largest share one network holds of the rated calls: {}.</p>",
        f(a.interactions.to_string(), "interactions (every source)"),
        f(a.rated_interactions.to_string(), "rated organic interactions"),
        f(a.networks.to_string(), "networks behind them"),
        f(a.contributors.to_string(), "contributors (nodes or agent keys)"),
        f(pct(a.success_rate), "organic success rate"),
        f(label(&a.confidence), "confidence"),
        f(bound(a.latency_ms.map(|l| l.p50)), "latency p50"),
        f(bound(a.latency_ms.map(|l| l.p95)), "latency p95"),
        bs.organic, bs.seeded, bs.synthetic,
        a.protocol_requests, a.rejected_requests, a.cancelled_requests,
        a.capped, pct(a.top_network_share),
    )
}

/// The body of a target page from its answer and latency histogram.
pub(crate) fn body(asked: &str, a: &Answer, hist: &[(f64, u64)]) -> String {
    let name = a.resolved_target.as_deref().unwrap_or(asked);
    let mut out = format!(
        "<h1>{}</h1><p class=\"lead\" id=\"message\">{}</p>",
        escape(name),
        escape(&a.message)
    );
    if name != asked {
        out.push_str(&format!(
            "<p class=\"muted\">Asked as <code>{}</code>.</p>",
            escape(asked)
        ));
    }
    // In the answer's order: what the Registry, the package registries and the Scanner
    // say, then the interactions, the source last.
    out.push_str(&super::registry_view::sections(a));
    out.push_str("<h2 id=\"interactions\">What agents recorded</h2>");
    out.push_str(&summary_facts(a));
    let none = BTreeMap::new();
    let (versions, hashes) = a.contributor.as_ref().map_or((&none, &none), |c| {
        (&c.by_server_version, &c.by_schema_hash)
    });
    if a.interactions > 0 || a.protocol_requests > 0 {
        out.push_str("<h3>Success rate by day</h3>");
        out.push_str(&trends(a));
        out.push_str(&rows_chart(
            "by-version",
            "Success rate by server version",
            "By server version",
            "server version",
            versions,
            true,
        ));
        out.push_str(&rows_chart(
            "by-schema",
            "Success rate by tool schema hash",
            "By tool schema hash",
            "schema hash",
            hashes,
            false,
        ));
        out.push_str("<h3>Latency</h3>");
        out.push_str(&latency(a, hist));
        out.push_str("<h3>Failure breakdown</h3>");
        out.push_str(&failures(a));
        out.push_str(&tasks(a));
    } else {
        out.push_str("<p>No agent-reported interactions.</p>");
    }
    out.push_str(&telemetry(a));
    out.push_str(&format!(
        "<p class=\"source\">Source: {}. The same answer as JSON: <a href=\"/api/reputation/{}\">/api/reputation/{}</a>.</p>",
        escape(&a.source.cite),
        path_segment(name),
        escape(name)
    ));
    out
}

/// The `<li>` links to the target pages of `targets`, for a list of candidates.
pub fn target_links(targets: &[String]) -> String {
    targets
        .iter()
        .map(|t| {
            format!(
                "<li><a href=\"/t/{}\">{}</a></li>",
                path_segment(t),
                escape(t)
            )
        })
        .collect()
}

fn candidates_body(asked: &str, c: &Candidates) -> String {
    let items = target_links(&c.candidates);
    format!(
        "<h1>{}</h1><p class=\"lead\">{}</p><ul>{items}</ul>",
        escape(asked),
        escape(&c.message)
    )
}

/// `GET /t/{*target}`.
pub async fn get(State(state): State<AppState>, Path(target): Path<String>) -> AppResult<Response> {
    let deployment = state.deployment.clone();
    if target.is_empty()
        || target.chars().count() > lowdown_core::record::validate::MAX_TARGET
        || target.chars().any(char::is_control)
    {
        let body = page(
            "Not a target name",
            &deployment,
            None,
            "<h1>Not a target name</h1><p>Search from <a href=\"/\">the home page</a>.</p>",
        );
        return Ok(html(StatusCode::BAD_REQUEST, body));
    }
    let now = state.now();
    // `<target>/changes[.rss|.json]`, unless the whole path is a target of its own.
    if let Some((name, view)) = super::changes::View::split(&target) {
        let whole = resolve(&state.db, &target, state.allow_private_hosts).await?;
        if !matches!(whole, Resolution::Found(_)) {
            if let Resolution::Found(t) =
                resolve(&state.db, name, state.allow_private_hosts).await?
            {
                let changes = crate::services::changes::of(&state.db, &t, now).await?;
                return super::changes::render(
                    &state,
                    &t,
                    view,
                    &changes,
                    &lowdown_core::scanner::days::day_of(now),
                );
            }
        }
    }
    match reply(&state, target.clone(), None, true, now).await? {
        Reply::Candidates(c) => Ok(html(
            StatusCode::OK,
            page(&target, &deployment, None, &candidates_body(&target, &c)),
        )),
        Reply::Answer(a) => {
            let known = a.resolved_target.is_some() || a.registry.is_some() || a.package.is_some();
            let name = a.resolved_target.clone().unwrap_or_else(|| target.clone());
            let hist = crate::db::latency::histogram(&state.db, &name, None).await?;
            let status = if known {
                StatusCode::OK
            } else {
                StatusCode::NOT_FOUND
            };
            let canonical = format!("/t/{}", path_segment(&name));
            Ok(html(
                status,
                page(
                    &name,
                    &deployment,
                    Some(&canonical),
                    &body(&target, &a, &hist),
                ),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::version_order;

    #[test]
    fn versions_in_release_order() {
        let mut v = vec![
            "1.10.0",
            "(none)",
            "1.9.2",
            "1.9.10",
            "2.0.0-rc.1",
            "1.0",
            "v3",
        ];
        v.sort_by(|a, b| version_order(a, b));
        assert_eq!(
            v,
            [
                "1.0",
                "1.9.2",
                "1.9.10",
                "1.10.0",
                "2.0.0-rc.1",
                "v3",
                "(none)"
            ]
        );
    }
}
