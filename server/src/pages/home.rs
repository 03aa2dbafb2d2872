//! `GET /`: a search box and the most-observed targets. `GET /?q=<name>` resolves the name
//! as the API does: one target → a redirect to its page; several → the candidates;
//! none → a page that says so.

use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::escape::{escape, path_segment};
use super::layout::{html, page};
use crate::clock;
use crate::db::lookup::{resolve, Resolution};
use crate::db::top;
use crate::error::AppResult;
use crate::state::AppState;

/// Targets listed per list.
const LISTED: usize = 20;

/// `?q=`.
#[derive(Debug, Deserialize)]
pub struct Params {
    /// The name searched for.
    pub q: Option<String>,
}

fn search_form(q: &str) -> String {
    format!(
        "<form class=\"search\" role=\"search\" action=\"/\" method=\"get\">\
         <label for=\"q\">Tool, MCP server or service:</label>\
         <input id=\"q\" name=\"q\" type=\"search\" value=\"{}\" placeholder=\"npm:@modelcontextprotocol/server-everything, brave-search, mcp:io.github.user/server\" required>\
         <button type=\"submit\">Look up</button></form>",
        escape(q)
    )
}

fn list(caption: &str, unit: &str, rows: &[(String, u64)], empty: &str) -> String {
    if rows.is_empty() {
        return format!("<p class=\"muted\">{}</p>", escape(empty));
    }
    let mut s = format!("<table><caption class=\"muted\">{}</caption><thead><tr><th scope=\"col\">target</th><th scope=\"col\">{}</th></tr></thead><tbody>", escape(caption), escape(unit));
    for (t, n) in rows {
        s.push_str(&format!(
            "<tr><th scope=\"row\"><a href=\"/t/{}\">{}</a></th><td class=\"n\">{n}</td></tr>",
            path_segment(t),
            escape(t)
        ));
    }
    s.push_str("</tbody></table>");
    s
}

/// `GET /`.
pub async fn get(
    State(state): State<AppState>,
    q: Result<Query<Params>, axum::extract::rejection::QueryRejection>,
) -> AppResult<Response> {
    let q = q
        .ok()
        .and_then(|Query(p)| p.q)
        .map(|q| q.trim().to_owned())
        .filter(|q| !q.is_empty());
    let deployment = state.deployment.clone();
    if let Some(q) = q {
        let valid = q.chars().count() <= lowdown_core::record::validate::MAX_TARGET
            && !q.chars().any(char::is_control);
        let found = if valid {
            resolve(&state.db, &q, state.allow_private_hosts).await?
        } else {
            Resolution::Nothing
        };
        return Ok(match found {
            Resolution::Found(t) => (
                StatusCode::SEE_OTHER,
                [(header::LOCATION, format!("/t/{}", path_segment(&t)))],
            )
                .into_response(),
            Resolution::Candidates(c) => {
                let items = super::target::target_links(&c);
                let body = format!("{}<h1>Several targets match <q>{}</q></h1><p>Lowdown never picks one for you; choose:</p><ul id=\"candidates\">{items}</ul>", search_form(&q), escape(&q));
                html(
                    StatusCode::OK,
                    page(&format!("Search: {q}"), &deployment, None, &body),
                )
            }
            Resolution::Nothing => {
                let body = format!("{}<h1>Nothing recorded under <q>{}</q></h1><p>No interaction, telemetry or Registry entry has this name (and no other name is substituted for it).</p>", search_form(&q), escape(&q));
                html(
                    StatusCode::NOT_FOUND,
                    page(&format!("Search: {q}"), &deployment, None, &body),
                )
            }
        });
    }
    let since = clock::day_before(state.now(), 29);
    let by_interactions =
        top::by_interactions(&state.db, LISTED, state.allow_private_hosts).await?;
    let by_observations = top::by_observations(&state.db, &since, LISTED).await?;
    let body = format!(
        "<h1>What has the network seen of this tool?</h1>\
         <p class=\"lead\">Look up an MCP server, tool or service before you choose it: what agents recorded when they used it, and what the Lowdown Scanner observed. Facts with their sources, never scores.</p>{}\
         <h2>Most recorded by agents</h2>{}<h2>Most observed by the Scanner (last 30 days)</h2>{}\
         <p>The <a href=\"/daily/latest\">daily record</a> lists what the Scanner recorded each day (also as <a href=\"/daily/feed.xml\">RSS</a> and <a href=\"/daily/feed.json\">JSON Feed</a>).</p>",
        search_form(""),
        list("Targets with the most agent-reported interactions (every source)", "interactions", &by_interactions, "No interaction recorded yet."),
        list(&format!("Targets with the most Scanner observations since {since}"), "observations", &by_observations, "The Scanner has not observed anything yet."),
    );
    Ok(html(
        StatusCode::OK,
        page("Lowdown", &deployment, Some("/"), &body),
    ))
}
