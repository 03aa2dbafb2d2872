//! The page shell every page shares: `lang`, title, inline styles (no external asset of
//! any kind, so a page works offline), a skip link, the navigation and the licence line.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use super::escape::escape;

/// Styles, inline. Colours meet WCAG AA contrast on white (text and bars ≥ 4.5:1).
const STYLE: &str = "\
:root{color-scheme:light;--ink:#1b1b1b;--muted:#4a4a4a;--line:#c8c8c8;--link:#0b57d0;--bar:#1f5fa8;--bad:#a4262c;--mid:#7a4f00;--good:#1e6b34}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,\"Segoe UI\",Roboto,sans-serif;color:var(--ink);background:#fff}
a{color:var(--link)}a:focus,button:focus,input:focus{outline:3px solid #f0a800;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#fff;padding:.5rem}
header,main,footer{max-width:64rem;margin:0 auto;padding:0 1rem}
header{display:flex;flex-wrap:wrap;gap:1rem;align-items:baseline;border-bottom:1px solid var(--line);padding-top:.75rem;padding-bottom:.5rem}
header .brand{font-weight:700;font-size:1.2rem;text-decoration:none;color:var(--ink)}
nav ul{display:flex;gap:1rem;list-style:none;margin:0;padding:0}
h1{font-size:1.6rem;margin:1.2rem 0 .4rem;overflow-wrap:anywhere}h2{font-size:1.25rem;margin:2rem 0 .5rem;border-bottom:1px solid var(--line)}h3{font-size:1.05rem;margin:1.2rem 0 .3rem}
.lead{font-size:1.05rem}.muted,figcaption,.source{color:var(--muted);font-size:.9rem}
table{border-collapse:collapse;margin:.5rem 0;font-variant-numeric:tabular-nums}th,td{border:1px solid var(--line);padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f2f2f2}td.n{text-align:right}
figure{margin:1rem 0}svg{max-width:100%;height:auto}svg text{font:12px system-ui,sans-serif;fill:var(--ink)}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(11rem,1fr));gap:.5rem;padding:0;list-style:none}
.facts li{border:1px solid var(--line);padding:.5rem}.facts b{display:block;font-size:1.3rem}
form.search{display:flex;gap:.5rem;margin:1rem 0}form.search input{flex:1;font-size:1rem;padding:.4rem;border:1px solid var(--muted)}
form.search button{font-size:1rem;padding:.4rem .9rem;background:var(--bar);color:#fff;border:0}
code{overflow-wrap:anywhere}footer{border-top:1px solid var(--line);margin-top:3rem;padding-top:.5rem;padding-bottom:2rem}
";

/// A whole page: `title` (escaped here), optional `canonical` path, and `body` (already
/// safe HTML).
pub fn page(title: &str, deployment: &str, canonical: Option<&str>, body: &str) -> String {
    let canonical = canonical
        .map(|c| format!("<link rel=\"canonical\" href=\"{}\">\n", escape(c)))
        .unwrap_or_default();
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title} · Lowdown</title>\n{canonical}\
         <link rel=\"alternate\" type=\"application/rss+xml\" title=\"Lowdown daily record (RSS)\" href=\"/daily/feed.xml\">\n\
         <link rel=\"alternate\" type=\"application/feed+json\" title=\"Lowdown daily record (JSON Feed)\" href=\"/daily/feed.json\">\n\
         <style>{STYLE}</style>\n</head>\n<body>\n<a class=\"skip\" href=\"#main\">Skip to the content</a>\n\
         <header><a class=\"brand\" href=\"/\">Lowdown</a>\n<nav aria-label=\"Site\"><ul>\
         <li><a href=\"/\">Search</a></li><li><a href=\"/daily/latest\">Daily record</a></li>\
         <li><a href=\"/openapi.json\">API</a></li><li><a href=\"/llms.txt\">llms.txt</a></li></ul></nav></header>\n\
         <main id=\"main\">\n{body}\n</main>\n\
         <footer><p>Facts with their sources: every figure says what it counts and where it came from. \
         Data: Lowdown records: {deployment}, \
         <a href=\"https://creativecommons.org/licenses/by/4.0/\">CC BY 4.0</a>.</p></footer>\n</body>\n</html>\n",
        title = escape(title),
        deployment = escape(deployment),
    )
}

/// An HTML response.
pub fn html(status: StatusCode, body: String) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}
