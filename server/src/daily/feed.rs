//! The daily record as feeds: RSS 2.0 (`/daily/feed.xml`) and JSON Feed 1.1
//! (`/daily/feed.json`), one item per day with a scan run, newest first. Item ids are
//! `lowdown-daily:<day>`: they never change, whatever the host the feed is read from.

use lowdown_core::scanner::days::day_of;
use schemars::JsonSchema;
use serde::Serialize;

use super::{summary, DailyRecord};
use crate::pages::escape::escape;

/// What every feed names: where the pages are, and whose records these are.
#[derive(Debug, Clone)]
pub struct FeedMeta {
    /// The server's public base URL, without a trailing slash.
    pub base: String,
    /// The deployment (`--name`).
    pub deployment: String,
}

const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// RFC 822 date-time as RSS 2.0 wants it: `Mon, 30 Nov 2026 06:34:56 GMT`.
pub fn rfc822(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let day = day_of(ms);
    let month = day[5..7].parse::<usize>().unwrap_or(1);
    format!(
        "{}, {} {} {} {:02}:{:02}:{:02} GMT",
        WEEKDAYS[days.rem_euclid(7) as usize],
        &day[8..10],
        MONTHS[month - 1],
        &day[0..4],
        sod / 3600,
        (sod % 3600) / 60,
        sod % 60
    )
}

fn title(r: &DailyRecord) -> String {
    format!("Lowdown Scanner daily record, {}", r.day)
}

fn html(r: &DailyRecord) -> String {
    summary(r)
        .iter()
        .map(|l| format!("<p>{}</p>", escape(l)))
        .collect()
}

const DESCRIPTION: &str = "What the Lowdown Scanner recorded each UTC day: MCP Registry declaration changes, observation counts by level, status and error type with their denominators, tool definition changes and first-observed values. Counts only.";

/// The daily records as a JSON Feed 1.1 (<https://jsonfeed.org/version/1.1>), newest first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct JsonFeed<'a> {
    /// The JSON Feed version.
    #[schemars(extend("const" = JSON_FEED_VERSION))]
    pub version: &'static str,
    /// `Lowdown daily record: <deployment>`.
    pub title: String,
    /// The latest day's page.
    pub home_page_url: String,
    /// This feed.
    pub feed_url: String,
    /// What the records hold.
    pub description: &'static str,
    /// Always `en`.
    pub language: &'static str,
    /// The deployment.
    pub authors: [Author<'a>; 1],
    /// One item per day with a scan run, newest first.
    pub items: Vec<Item<'a>>,
}

/// Whose records these are.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "JsonFeedAuthor")]
pub struct Author<'a> {
    /// The deployment (`--name`).
    pub name: &'a str,
}

/// One day with a scan run.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "JsonFeedItem")]
pub struct Item<'a> {
    /// `lowdown-daily:<day>`, whatever the host the feed is read from.
    pub id: &'a str,
    /// The day's page.
    pub url: String,
    /// `Lowdown Scanner daily record, <day>`.
    pub title: String,
    /// The summary, a line per fact.
    pub content_text: String,
    /// The summary, a paragraph per fact.
    pub content_html: String,
    /// When the day's last run ended (or started, if it never ended).
    #[schemars(extend("format" = "date-time"))]
    pub date_published: &'a str,
    /// The record's counts.
    #[serde(rename = "_lowdown")]
    pub lowdown: &'a DailyRecord,
}

const JSON_FEED_VERSION: &str = "https://jsonfeed.org/version/1.1";

/// JSON Feed 1.1.
pub fn json_feed<'a>(
    meta: &'a FeedMeta,
    records: &'a [std::sync::Arc<DailyRecord>],
) -> JsonFeed<'a> {
    JsonFeed {
        version: JSON_FEED_VERSION,
        title: format!("Lowdown daily record: {}", meta.deployment),
        home_page_url: format!("{}/daily/latest", meta.base),
        feed_url: format!("{}/daily/feed.json", meta.base),
        description: DESCRIPTION,
        language: "en",
        authors: [Author {
            name: &meta.deployment,
        }],
        items: records
            .iter()
            .map(|r| Item {
                id: &r.id,
                url: format!("{}/daily/{}", meta.base, r.day),
                title: title(r),
                content_text: summary(r).join("\n"),
                content_html: html(r),
                date_published: &r.published_at,
                lowdown: r,
            })
            .collect(),
    }
}

/// RSS 2.0.
pub fn rss(meta: &FeedMeta, records: &[std::sync::Arc<DailyRecord>]) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rss version=\"2.0\" xmlns:atom=\"http://www.w3.org/2005/Atom\">\n<channel>\n");
    out.push_str(&format!(
        "<title>{}</title>\n<link>{}/daily/latest</link>\n<description>{}</description>\n<language>en</language>\n\
         <atom:link href=\"{}/daily/feed.xml\" rel=\"self\" type=\"application/rss+xml\"/>\n",
        escape(&format!("Lowdown daily record: {}", meta.deployment)),
        escape(&meta.base),
        escape(DESCRIPTION),
        escape(&meta.base),
    ));
    if let Some(latest) = records.first() {
        out.push_str(&format!(
            "<lastBuildDate>{}</lastBuildDate>\n",
            rfc822(latest.published_ms)
        ));
    }
    for r in records {
        out.push_str(&format!(
            "<item>\n<title>{}</title>\n<link>{}/daily/{}</link>\n<guid isPermaLink=\"false\">{}</guid>\n\
             <pubDate>{}</pubDate>\n<description>{}</description>\n</item>\n",
            escape(&title(r)),
            escape(&meta.base),
            escape(&r.day),
            escape(&r.id),
            rfc822(r.published_ms),
            escape(&html(r)),
        ));
    }
    out.push_str("</channel>\n</rss>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::rfc822;

    #[test]
    fn rfc822_dates() {
        assert_eq!(rfc822(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(rfc822(1_796_020_496_123), "Mon, 30 Nov 2026 06:34:56 GMT");
        assert_eq!(rfc822(951_782_400_000), "Tue, 29 Feb 2000 00:00:00 GMT");
    }
}
