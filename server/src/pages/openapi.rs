//! The OpenAPI description of the pages and feeds, merged into `/openapi.json` by
//! [`crate::openapi::document`].

use serde_json::{json, Value};

use crate::daily::feed::JsonFeed;

fn html(description: &str) -> Value {
    json!({"description": description, "content": {"text/html": {"schema": {"type": "string"}}}})
}

/// Adds the page routes and the JSON Feed's schema to `doc`.
pub fn extend(doc: &mut Value) {
    let day = json!({"name": "day", "in": "path", "required": true, "schema": {"type": "string", "format": "date"}, "description": "A UTC day, YYYY-MM-DD."});
    let pages = json!({
        "/": {"get": {"operationId": "homePage", "summary": "HTML: a search box and the most-observed targets (by interactions, and by Scanner observations in 30 days).",
            "parameters": [{"name": "q", "in": "query", "required": false, "schema": {"type": "string"}, "description": "A name to look up, resolved as the API resolves it."}],
            "responses": {"200": html("The home page, or the candidates for an ambiguous name."), "303": {"description": "One target matches: its page (/t/{target})."}, "404": html("Nothing recorded under that name.")}}},
        "/t/{target}": {"get": {"operationId": "targetPage", "summary": "HTML: one target's story from its reputation answer (contributor detail included): success rate by day, server version and schema hash, latency, failures, telemetry, the Scanner's 30-day strip, declared against observed, Registry and package facts; inline SVG with a table for every chart. `<target>/changes` is its change list over 30 days (Registry, packages, reachability, definitions, new versions and schemas with their success rates), `<target>/changes.rss` and `<target>/changes.json` the same as RSS 2.0 and JSON Feed 1.1 (stable item ids); a path that is a target of its own is that target's page.",
            "parameters": [{"name": "target", "in": "path", "required": true, "schema": {"type": "string"}, "description": "As for /api/reputation/{target}."}],
            "responses": {"200": html("The page (or the candidates)."), "400": html("Not a target name."), "404": html("Nothing recorded under this name.")}}},
        "/daily/{day}": {"get": {"operationId": "dailyRecord", "summary": "HTML: what the Scanner recorded that UTC day: declaration changes, observation counts by level, status and error type with their denominators (probe attempts and blocked URLs apart), members not probed, tool definition changes, first-observed values. Counts only.",
            "parameters": [day],
            "responses": {"200": html("The day's record."), "400": html("Not a day."), "404": html("No scan ran that day.")}}},
        "/daily/latest": {"get": {"operationId": "dailyLatest", "summary": "HTML: the daily record of the latest day with a scan.",
            "responses": {"200": html("The record."), "404": html("No scan has run yet.")}}},
        "/daily/feed.xml": {"get": {"operationId": "dailyRss", "summary": "RSS 2.0: one item per day with a scan (last 30), guid lowdown-daily:<day>.",
            "responses": {"200": {"description": "RSS 2.0.", "content": {"application/rss+xml": {"schema": {"type": "string"}}}}}}},
        "/daily/feed.json": {"get": {"operationId": "dailyJsonFeed", "summary": "JSON Feed 1.1: one item per day with a scan (last 30), id lowdown-daily:<day>; `_lowdown` carries the record's counts.",
            "responses": {"200": {"description": "JSON Feed 1.1.", "content": {"application/feed+json": {"schema": crate::openapi::r("JsonFeed")}}}}}},
    });
    let feed = crate::openapi::derived(
        |g| {
            g.subschema_for::<JsonFeed>();
        },
        json!({}),
    );
    crate::openapi::merge(doc, pages, feed);
}
