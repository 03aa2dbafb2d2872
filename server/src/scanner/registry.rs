//! Reading the MCP Registry over HTTP (SPEC §8): `GET {registry}/v0.1/servers?limit=100&
//! version=latest[&cursor=…]`, `Accept: application/json`, 30 s per page, 3 attempts (1 s
//! then 2 s apart) on network errors, 5xx and 429; the page rules are the core's.
//!
//! The Registry URL goes through the same client and URL rules as the probes: `https` on
//! a public host (`--unsafe-allow-loopback` lets tests use a fixture on 127.0.0.1), and a
//! redirect is an error, never followed.

use std::time::Duration;

use lowdown_core::scanner::registry::{
    is_retryable_status, parse_page, Entry, ReadCounts, RegistryError, RegistryRead, PAGE_LIMIT,
    REGISTRY_TIMEOUT_MS, RETRY_BACKOFF_MS, SERVERS_PATH,
};
use reqwest::header::ACCEPT;
use reqwest::Url;

use super::net::{error_type, Net};

/// Largest Registry page read.
const PAGE_BODY_CAP: usize = 16 << 20;

/// The URL of the page after `cursor` (the first page without one).
pub fn page_url(base: &Url, cursor: Option<&str>) -> Url {
    let mut url = base.clone();
    let path = format!("{}{SERVERS_PATH}", base.path().trim_end_matches('/'));
    url.set_path(&path);
    url.set_query(None);
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("limit", &PAGE_LIMIT.to_string());
        q.append_pair("version", "latest");
        if let Some(c) = cursor {
            q.append_pair("cursor", c);
        }
    }
    url
}

/// Why one attempt at a page failed, and whether another attempt may help.
enum Attempt {
    Retry(String),
    Fatal(String),
}

async fn attempt(net: &Net, url: &Url) -> Result<Vec<u8>, Attempt> {
    let response = net
        .client
        .get(url.clone())
        .header(ACCEPT, "application/json")
        .timeout(Duration::from_millis(REGISTRY_TIMEOUT_MS))
        .send()
        .await
        .map_err(|e| Attempt::Retry(format!("{:?}", error_type(&e))))?;
    let status = response.status().as_u16();
    if is_retryable_status(status) {
        return Err(Attempt::Retry(format!("HTTP {status}")));
    }
    if !(200..300).contains(&status) {
        return Err(Attempt::Fatal(format!("HTTP {status}")));
    }
    let mut response = response;
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| Attempt::Retry(format!("{:?}", error_type(&e))))?
    {
        if body.len() + chunk.len() > PAGE_BODY_CAP {
            return Err(Attempt::Fatal(format!(
                "page larger than {PAGE_BODY_CAP} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

async fn fetch(net: &Net, url: &Url, page: usize) -> Result<Vec<u8>, RegistryError> {
    let mut last = String::new();
    for (i, wait) in [0].into_iter().chain(RETRY_BACKOFF_MS).enumerate() {
        if wait > 0 {
            tokio::time::sleep(Duration::from_millis(wait)).await;
        }
        match attempt(net, url).await {
            Ok(body) => return Ok(body),
            Err(Attempt::Fatal(message)) => return Err(RegistryError::Fetch { page, message }),
            Err(Attempt::Retry(message)) => {
                tracing::warn!(page, attempt = i + 1, %message, "registry page failed");
                last = message;
            }
        }
    }
    Err(RegistryError::Fetch {
        page,
        message: format!("{last} after {} attempts", RETRY_BACKOFF_MS.len() + 1),
    })
}

/// Reads every page; `on_page` hears the page count and entries so far.
pub async fn read(
    net: &Net,
    registry_url: &str,
    mut on_page: impl FnMut(usize, usize),
) -> Result<(Vec<Entry>, ReadCounts), RegistryError> {
    let base = net
        .check_url(registry_url)
        .map_err(|r| RegistryError::Fetch {
            page: 1,
            message: format!("--registry-url refused: {r}"),
        })?;
    let mut read = RegistryRead::new();
    let mut cursor: Option<String> = None;
    let mut entries = 0;
    loop {
        let n = read.pages() + 1;
        let body = fetch(net, &page_url(&base, cursor.as_deref()), n).await?;
        let page = parse_page(&body, n)?;
        entries += page.servers;
        cursor = read.add_page(page)?;
        on_page(n, entries);
        if cursor.is_none() {
            return Ok(read.finish());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_urls_keep_the_base_path_and_encode_the_cursor() {
        let base = Url::parse("https://registry.example.com/").unwrap();
        assert_eq!(
            page_url(&base, None).as_str(),
            "https://registry.example.com/v0.1/servers?limit=100&version=latest"
        );
        let base = Url::parse("https://example.com/mirror/").unwrap();
        assert_eq!(
            page_url(&base, Some("a b&c=d")).as_str(),
            "https://example.com/mirror/v0.1/servers?limit=100&version=latest&cursor=a+b%26c%3Dd"
        );
    }
}
