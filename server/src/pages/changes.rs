//! `/t/{target}/changes` and its feeds, `changes.rss` (RSS 2.0) and `changes.json` (JSON
//! Feed 1.1): what changed about a target in 30 days, newest first, each item with its
//! source (`lowdown_core::change_feed`). Item ids never change, whatever the host the feed
//! is read from or the counts its title gives.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use lowdown_core::change_feed::{recent, Change};
use serde::Serialize;

use super::escape::{escape, path_segment};
use super::layout::{html, page};
use crate::daily::feed::rfc822;
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// Which view of the changes was asked for, by the path's last segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum View {
    Page,
    Rss,
    Json,
}

impl View {
    /// The target and the view a `/t/` path names, when it ends in a changes segment.
    pub(crate) fn split(path: &str) -> Option<(&str, View)> {
        [
            ("/changes", View::Page),
            ("/changes.rss", View::Rss),
            ("/changes.json", View::Json),
        ]
        .into_iter()
        .find_map(|(suffix, view)| Some((path.strip_suffix(suffix)?, view)))
        .filter(|(target, _)| !target.is_empty())
    }
}

const DESCRIPTION: &str = "What changed about this target in the last 30 days: MCP Registry declaration, packages, reachability and tool definitions seen by the Lowdown Scanner, new server versions and tool schemas recorded by nodes, with success rates and sample sizes. Facts, not scores.";

fn day_ms(day: &str) -> i64 {
    lowdown_core::scanner::days::day_number(day).unwrap_or(0) * 86_400_000
}

#[derive(Serialize)]
struct JsonFeed<'a> {
    version: &'static str,
    title: String,
    home_page_url: String,
    feed_url: String,
    description: &'static str,
    language: &'static str,
    items: Vec<JsonItem<'a>>,
}

#[derive(Serialize)]
struct JsonItem<'a> {
    id: &'a str,
    url: String,
    title: &'a str,
    content_text: String,
    date_published: String,
    tags: [&'a str; 1],
    /// Lowdown's extension: whether the change is recent (`get_lowdown` reads it).
    #[serde(rename = "_lowdown")]
    lowdown: Ext<'a>,
}

#[derive(Serialize)]
struct Ext<'a> {
    day: &'a str,
    kind: &'a str,
    source: &'a str,
    /// Within the last `RECENT_DAYS` (7) days, today included.
    recent: bool,
}

/// The view of `target`'s `changes`.
pub(crate) fn render(
    state: &AppState,
    target: &str,
    view: View,
    changes: &[Change],
    today: &str,
) -> AppResult<Response> {
    let base = super::public_base(state);
    let page_url = format!("{base}/t/{}/changes", path_segment(target));
    let title = format!("Lowdown changes: {target}");
    Ok(match view {
        View::Page => {
            let rows: String = changes
                .iter()
                .map(|c| {
                    format!(
                        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                        escape(&c.day),
                        escape(&c.kind),
                        escape(&c.title),
                        escape(&c.source)
                    )
                })
                .collect();
            let list = match changes.is_empty() {
                true => "<p>No change recorded in the last 30 days.</p>".to_owned(),
                false => format!("<table><caption>Changes, newest first</caption><thead><tr><th scope=\"col\">day</th><th scope=\"col\">kind</th><th scope=\"col\">what changed</th><th scope=\"col\">source</th></tr></thead><tbody>{rows}</tbody></table>"),
            };
            let seg = path_segment(target);
            let body = format!(
                "<h1>Changes: {}</h1><p class=\"lead\">{}</p>{list}<p class=\"source\">Feeds: <a href=\"/t/{seg}/changes.rss\">RSS</a>, <a href=\"/t/{seg}/changes.json\">JSON Feed</a>. The target's page: <a href=\"/t/{seg}\">/t/{}</a>.</p>",
                escape(target),
                escape(DESCRIPTION),
                escape(target)
            );
            html(
                StatusCode::OK,
                page(
                    &title,
                    &state.deployment,
                    Some(&format!("/t/{seg}/changes")),
                    &body,
                ),
            )
        }
        View::Rss => {
            let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rss version=\"2.0\" xmlns:atom=\"http://www.w3.org/2005/Atom\">\n<channel>\n");
            out.push_str(&format!(
                "<title>{}</title>\n<link>{}</link>\n<description>{}</description>\n<language>en</language>\n\
                 <atom:link href=\"{}.rss\" rel=\"self\" type=\"application/rss+xml\"/>\n",
                escape(&title),
                escape(&page_url),
                escape(DESCRIPTION),
                escape(&page_url),
            ));
            for c in changes {
                out.push_str(&format!(
                    "<item>\n<title>{}</title>\n<link>{}</link>\n<guid isPermaLink=\"false\">{}</guid>\n<category>{}</category>\n\
                     <pubDate>{}</pubDate>\n<description>{}</description>\n</item>\n",
                    escape(&c.title),
                    escape(&page_url),
                    escape(&c.id),
                    escape(&c.kind),
                    rfc822(day_ms(&c.day)),
                    escape(&format!("{}. Source: {}.", c.title, c.source)),
                ));
            }
            out.push_str("</channel>\n</rss>\n");
            (
                [(header::CONTENT_TYPE, "application/rss+xml; charset=utf-8")],
                out,
            )
                .into_response()
        }
        View::Json => {
            let fresh: Vec<&str> = recent(changes, today).map(|c| c.id.as_str()).collect();
            let feed = JsonFeed {
                version: "https://jsonfeed.org/version/1.1",
                title,
                home_page_url: page_url.clone(),
                feed_url: format!("{page_url}.json"),
                description: DESCRIPTION,
                language: "en",
                items: changes
                    .iter()
                    .map(|c| JsonItem {
                        id: &c.id,
                        url: page_url.clone(),
                        title: &c.title,
                        content_text: format!("{}. Source: {}.", c.title, c.source),
                        date_published: format!("{}T00:00:00Z", c.day),
                        tags: [&c.kind],
                        lowdown: Ext {
                            day: &c.day,
                            kind: &c.kind,
                            source: &c.source,
                            recent: fresh.contains(&c.id.as_str()),
                        },
                    })
                    .collect(),
            };
            let body = serde_json::to_string(&feed).map_err(AppError::internal)?;
            (
                [(header::CONTENT_TYPE, "application/feed+json; charset=utf-8")],
                body,
            )
                .into_response()
        }
    })
}
