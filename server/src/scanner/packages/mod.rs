//! The daily package check (SPEC §8 `packages`): every npm and PyPI package declared by an
//! active, latest Registry entry, asked once per scan through the Scanner's client (the
//! same SSRF rules: https on a public host, no redirects, no proxy).
//!
//! What an answer means and what is kept from one day to the next are the core's
//! ([`lowdown_core::scanner::packages`]); this module sends the requests and stores the
//! states ([`crate::db::packages`]).

use std::collections::BTreeSet;
use std::time::Duration;

use lowdown_core::scanner::packages::{
    npm, pypi, Check, Ecosystem, PackageKey, PackageState, CHECK_CONCURRENCY, CHECK_TIMEOUT_MS,
    DEFAULT_NPM_REGISTRY_URL, DEFAULT_PYPI_URL,
};
use lowdown_core::scanner::registry::Entry;
use reqwest::header::ACCEPT;
use serde::Serialize;
use tokio::task::JoinSet;

use super::net::{error_type, Net};
use super::Clock;
use crate::db::Db;
use crate::db::DbResult;
use crate::names::enum_str;

/// Where packages are looked up (`--npm-registry-url`, `--pypi-url`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageSources {
    /// npm registry base URL.
    pub npm_registry_url: String,
    /// PyPI base URL (Index API under `/simple/`, JSON API under `/pypi/`).
    pub pypi_url: String,
}

impl Default for PackageSources {
    fn default() -> Self {
        PackageSources {
            npm_registry_url: DEFAULT_NPM_REGISTRY_URL.to_owned(),
            pypi_url: DEFAULT_PYPI_URL.to_owned(),
        }
    }
}

/// What the check of one scan found, for the run summary.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Tally {
    /// Distinct packages asked for.
    pub checked: usize,
    /// Answered with facts.
    pub found: usize,
    /// Answered with a 404 (npm) or `no_project`/`no_releases` (PyPI).
    pub not_found: usize,
    /// Without a usable answer (previous facts kept).
    pub failed: usize,
}

/// The distinct checked packages declared by the kept (active, latest) entries, in order.
pub fn declared(entries: &[Entry]) -> Vec<PackageKey> {
    let keys: BTreeSet<PackageKey> = entries
        .iter()
        .filter(|e| e.is_kept())
        .flat_map(|e| e.packages.iter())
        .filter_map(|p| PackageKey::of(p).ok())
        .collect();
    keys.into_iter().collect()
}

/// One GET: `Ok((status, body))` for any HTTP answer, `Err(reason)` without one. One more
/// attempt, a second later, after a network error, a 5xx or a 429.
async fn get(
    net: &Net,
    base: &str,
    path: &str,
    accept: &str,
    cap: usize,
) -> Result<(u16, Vec<u8>), String> {
    let url = net
        .check_url(&format!("{}{path}", base.trim_end_matches('/')))
        .map_err(|r| format!("URL refused: {r}"))?;
    let mut last = String::new();
    for attempt in 0..2 {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        let sent = net
            .client
            .get(url.clone())
            .header(ACCEPT, accept)
            .timeout(Duration::from_millis(CHECK_TIMEOUT_MS))
            .send()
            .await;
        let mut response = match sent {
            Ok(r) => r,
            Err(e) => {
                last = enum_str(&error_type(&e));
                continue;
            }
        };
        let status = response.status().as_u16();
        if status == 429 || status >= 500 {
            last = format!("HTTP {status}");
            continue;
        }
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) if body.len() + chunk.len() > cap => {
                    return Err(format!("answer larger than {cap} bytes"));
                }
                Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                Ok(None) => return Ok((status, body)),
                Err(e) => {
                    last = enum_str(&error_type(&e));
                    break;
                }
            }
        }
    }
    Err(last)
}

/// Asks npm or PyPI about one package.
pub async fn check(net: &Net, sources: &PackageSources, key: &PackageKey) -> Check {
    let failed = |reason: String| Check::Failed { reason };
    match key.ecosystem {
        Ecosystem::Npm => match get(
            net,
            &sources.npm_registry_url,
            &npm::path(&key.name),
            npm::ACCEPT,
            npm::BODY_CAP,
        )
        .await
        {
            Ok((status, body)) => npm::read(status, &body),
            Err(reason) => failed(reason),
        },
        Ecosystem::Pypi => {
            let base = &sources.pypi_url;
            let index = match get(
                net,
                base,
                &pypi::simple_path(&key.name),
                pypi::SIMPLE_ACCEPT,
                pypi::BODY_CAP,
            )
            .await
            {
                Ok((status, body)) => pypi::read_index(status, &body),
                Err(reason) => return failed(format!("Index API: {reason}")),
            };
            if !index.wants_json() {
                return pypi::read(index, None);
            }
            match get(
                net,
                base,
                &pypi::json_path(&key.name),
                "application/json",
                pypi::BODY_CAP,
            )
            .await
            {
                Ok((status, body)) => pypi::read(index, Some((status, &body))),
                Err(reason) => failed(format!("JSON API: {reason}")),
            }
        }
    }
}

/// Checks every key, [`CHECK_CONCURRENCY`] at a time, and stores each new state as it
/// arrives.
pub async fn check_all(
    db: &Db,
    net: &Net,
    sources: &PackageSources,
    keys: Vec<PackageKey>,
    clock: &Clock,
) -> DbResult<Tally> {
    let mut tally = Tally {
        checked: keys.len(),
        ..Tally::default()
    };
    let mut pending = keys.into_iter();
    let mut running = JoinSet::new();
    loop {
        while running.len() < CHECK_CONCURRENCY {
            let Some(key) = pending.next() else { break };
            let (net, sources) = (net.clone(), sources.clone());
            running.spawn(async move {
                let outcome = check(&net, &sources, &key).await;
                (key, outcome)
            });
        }
        let Some(done) = running.join_next().await else {
            break;
        };
        let Ok((key, outcome)) = done else { continue };
        match &outcome {
            Check::Found(_) => tally.found += 1,
            Check::NotFound { .. } => tally.not_found += 1,
            Check::Failed { reason } => {
                tracing::debug!(package = %key.target(), %reason, "package check failed");
                tally.failed += 1;
            }
        }
        let now = clock();
        let prev = crate::db::packages::state(db, &key).await?;
        let next = PackageState::next(prev.as_ref(), &outcome, now);
        crate::db::packages::save_state(db, &key, &next, now).await?;
    }
    Ok(tally)
}
