//! `GET /daily/{day}`, `/daily/latest` (HTML), `/daily/feed.xml` (RSS 2.0) and
//! `/daily/feed.json` (JSON Feed 1.1): the daily record of [`crate::daily`].

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use lowdown_core::scanner::days::day_number;

use super::charts::{figure, table, value_chart, ValueBar};
use super::escape::{escape, path_segment};
use super::layout::{html, page};
use crate::daily::feed::{json_feed, rss, FeedMeta};
use crate::daily::{self, summary, Counted, DailyRecord, FEED_DAYS};
use crate::error::AppResult;
use crate::state::AppState;

fn link(target: &str) -> String {
    format!(
        "<a href=\"/t/{}\">{}</a>",
        path_segment(target),
        escape(target)
    )
}

fn listed<T>(c: &Counted<T>, what: &str, item: impl Fn(&T) -> String) -> String {
    if c.total == 0 {
        return format!("<p>No {}.</p>", escape(what));
    }
    let more = if c.total as usize > c.items.len() {
        format!(" (the first {} listed)", c.items.len())
    } else {
        String::new()
    };
    let items: String = c
        .items
        .iter()
        .map(|i| format!("<li>{}</li>", item(i)))
        .collect();
    format!("<p>{} {}{more}:</p><ul>{items}</ul>", c.total, escape(what))
}

fn counts_figure(
    id: &str,
    title: &str,
    map: &std::collections::BTreeMap<String, u64>,
    denominator: u64,
    what: &str,
) -> String {
    if map.is_empty() {
        return format!("<p>{}: none.</p>", escape(title));
    }
    let bars: Vec<ValueBar> = map
        .iter()
        .map(|(k, n)| ValueBar {
            label: k.clone(),
            value: *n as f64,
            text: format!("{n} of {denominator}"),
        })
        .collect();
    let rows: Vec<Vec<String>> = map
        .iter()
        .map(|(k, n)| vec![k.clone(), n.to_string(), denominator.to_string()])
        .collect();
    figure(
        id,
        &value_chart(
            &format!("{id}-chart"),
            title,
            &format!("{title}: counts out of {denominator} {what}."),
            &bars,
            false,
        ),
        &format!("{title}, out of {denominator} {what}. Source: Lowdown Scanner observations."),
        &table(title, &["value", "count", "out of"], &rows),
    )
}

/// The body of a day's page.
pub fn body(r: &DailyRecord, prev: Option<&str>, next: Option<&str>) -> String {
    let o = &r.observations;
    let mut out = format!("<h1>Daily record: {}</h1>", escape(&r.day));
    let nav: Vec<String> = [
        (prev, "← previous day with a scan"),
        (next, "next day with a scan →"),
    ]
    .iter()
    .filter_map(|(d, label)| {
        d.map(|d| format!("<a href=\"/daily/{}\">{}</a>", escape(d), escape(label)))
    })
    .collect();
    if !nav.is_empty() {
        out.push_str(&format!(
            "<nav aria-label=\"Days\"><p>{}</p></nav>",
            nav.join(" · ")
        ));
    }
    out.push_str("<div id=\"summary\">");
    for line in summary(r) {
        out.push_str(&format!("<p>{}</p>", escape(&line)));
    }
    out.push_str("</div>");
    out.push_str("<h2>Scan runs</h2>");
    let runs: Vec<Vec<String>> = r
        .runs
        .iter()
        .map(|x| {
            let n = |v: Option<u64>| v.map_or("—".into(), |n| n.to_string());
            vec![
                x.scan_run_id.clone(),
                x.status.clone(),
                x.started_at.clone(),
                x.finished_at.clone().unwrap_or_else(|| "—".into()),
                n(x.entries),
                n(x.active_latest),
                n(x.probeable),
                n(x.members),
                n(x.remotes),
            ]
        })
        .collect();
    out.push_str(&table(
        "Scan runs of the day",
        &[
            "run",
            "status",
            "started",
            "finished",
            "Registry entries",
            "active and latest",
            "probeable",
            "cohort members",
            "remotes",
        ],
        &runs,
    ));
    out.push_str(&format!(
        "<h2>Observations</h2><p>{} observations: {} probe attempts on {} servers, and {} URLs the SSRF rules refused (nothing sent, counted apart).</p>",
        o.total, o.probe_attempts, o.targets, o.blocked
    ));
    out.push_str(&counts_figure(
        "levels",
        "Reached level",
        &o.by_level,
        o.probe_attempts,
        "probe attempts",
    ));
    out.push_str(&counts_figure(
        "statuses",
        "HTTP status",
        &o.by_status,
        o.probe_attempts,
        "probe attempts",
    ));
    out.push_str(&counts_figure(
        "errors",
        "Error type",
        &o.by_error_type,
        o.probe_attempts,
        "probe attempts",
    ));
    let skips: Vec<Vec<String>> = r
        .not_probed
        .iter()
        .map(|(k, n)| vec![k.clone(), n.to_string()])
        .collect();
    out.push_str("<h3>Members not probed</h3>");
    out.push_str(&if skips.is_empty() {
        "<p>None.</p>".to_owned()
    } else {
        table(
            "Cohort members not probed, by reason",
            &["reason", "members"],
            &skips,
        )
    });
    out.push_str("<h2>Registry declaration changes</h2>");
    out.push_str(&listed(&r.registry_changes, "declaration changes", |c| {
        format!(
            "{}: {} {} → {}",
            link(&format!("mcp:{}", c.name)),
            escape(&c.field),
            escape(&c.from.to_string()),
            escape(&c.to.to_string())
        )
    }));
    out.push_str(&format!(
        "<h2>Tool definitions</h2><p>{} of {} servers compared with their previous level-2 observation changed their tool definitions (schema, description or names).</p>",
        r.definition_changes.changed.total, r.definition_changes.compared
    ));
    out.push_str(&listed(
        &r.definition_changes.changed,
        "servers with changed definitions",
        |t| link(t),
    ));
    out.push_str("<h2>First observed</h2>");
    let f = &r.first_observed;
    out.push_str(&listed(
        &f.targets,
        "servers observed for the first time",
        |t| link(t),
    ));
    out.push_str(&listed(
        &f.server_versions,
        "server versions reported for the first time",
        |v| format!("{} <code>{}</code>", link(&v.target), escape(&v.value)),
    ));
    out.push_str(&listed(
        &f.schema_hashes,
        "tool schema hashes seen for the first time",
        |v| format!("{} <code>{}</code>", link(&v.target), escape(&v.value)),
    ));
    out.push_str(&format!(
        "<p class=\"source\">Source: Lowdown Scanner runs of {} (UTC). Feeds: <a href=\"/daily/feed.xml\">RSS</a>, <a href=\"/daily/feed.json\">JSON Feed</a>. Counts only.</p>",
        escape(&r.day)
    ));
    out
}

fn missing(state: &AppState, status: StatusCode, title: &str, text: &str) -> Response {
    let body = format!(
        "<h1>{}</h1><p>{}</p><p><a href=\"/daily/latest\">The latest daily record</a>.</p>",
        escape(title),
        escape(text)
    );
    html(status, page(title, &state.deployment, None, &body))
}

async fn render(state: &AppState, day: &str) -> AppResult<Response> {
    let Some(record) = state.daily.record(&state.db, day).await? else {
        return Ok(missing(
            state,
            StatusCode::NOT_FOUND,
            &format!("No scan on {day}"),
            "The Scanner did not run on this day (UTC).",
        ));
    };
    let days = daily::days(&state.db, i64::MAX / 2).await?;
    let pos = days.iter().position(|d| d == day);
    let next = pos
        .and_then(|i| i.checked_sub(1))
        .and_then(|i| days.get(i))
        .map(String::as_str);
    let prev = pos.and_then(|i| days.get(i + 1)).map(String::as_str);
    let canonical = format!("/daily/{day}");
    Ok(html(
        StatusCode::OK,
        page(
            &format!("Daily record {day}"),
            &state.deployment,
            Some(&canonical),
            &body(&record, prev, next),
        ),
    ))
}

/// `GET /daily/{day}`.
pub async fn day(State(state): State<AppState>, Path(day): Path<String>) -> AppResult<Response> {
    if day_number(&day).is_none() {
        return Ok(missing(
            &state,
            StatusCode::BAD_REQUEST,
            "Not a day",
            "Days are written YYYY-MM-DD (UTC), e.g. /daily/2026-11-30.",
        ));
    }
    render(&state, &day).await
}

/// `GET /daily/latest`.
pub async fn latest(State(state): State<AppState>) -> AppResult<Response> {
    match daily::days(&state.db, 1).await?.first() {
        Some(day) => render(&state, &day.clone()).await,
        None => Ok(missing(
            &state,
            StatusCode::NOT_FOUND,
            "No daily record yet",
            "The Scanner has not run on this deployment yet.",
        )),
    }
}

async fn records(state: &AppState) -> AppResult<Vec<Arc<DailyRecord>>> {
    let mut out = Vec::new();
    for d in daily::days(&state.db, FEED_DAYS).await? {
        if let Some(r) = state.daily.record(&state.db, &d).await? {
            out.push(r);
        }
    }
    Ok(out)
}

fn meta(state: &AppState) -> FeedMeta {
    FeedMeta {
        base: super::public_base(state),
        deployment: state.deployment.clone(),
    }
}

/// `GET /daily/feed.xml`.
pub async fn feed_xml(State(state): State<AppState>) -> AppResult<Response> {
    let body = rss(&meta(&state), &records(&state).await?);
    Ok((
        [(header::CONTENT_TYPE, "application/rss+xml; charset=utf-8")],
        body,
    )
        .into_response())
}

/// `GET /daily/feed.json`.
pub async fn feed_json(State(state): State<AppState>) -> AppResult<Response> {
    let (meta, records) = (meta(&state), records(&state).await?);
    Ok((
        [(header::CONTENT_TYPE, "application/feed+json; charset=utf-8")],
        serde_json::to_string(&json_feed(&meta, &records))
            .map_err(crate::error::AppError::internal)?,
    )
        .into_response())
}
