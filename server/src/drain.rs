//! The local node drains `LOWDOWN_HOME`'s spool when it starts (SPEC §2): records a session
//! spooled because it ended before the node answered reach the node without waiting for the
//! next session. Which file is taken, and what a claim, an empty or a corrupt file means, is
//! the core's spool plan ([`Claim`]); what an answer means is the core's delivery policy.
//! The records go through the node's own `POST /api/interactions`, as any host's do, so
//! they are checked, deduplicated and counted exactly as if a proxy had sent them.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use lowdown_core::record::delivery::{delivery, BATCH_MAX, SEND_TIMEOUT_MS};
use lowdown_core::record::spool::{Claim, Outcome, Step, DIR_NAME};

/// How long the node waits for its own answer to a batch: a first start may still be
/// migrating the database when the drain begins.
const ANSWER_WAIT: Duration = Duration::from_millis(SEND_TIMEOUT_MS * 10);

/// What a drain did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Drained {
    /// Spool files delivered and deleted.
    pub files: usize,
    /// Records the node took from them (duplicates included).
    pub records: usize,
}

/// Delivers every spool file of `home` to the API at `base` (the node itself), oldest first,
/// one plan per file; a file the API does not take whole is put back for a later host, and
/// the drain stops there.
pub async fn drain(home: &Path, base: &str) -> Drained {
    let dir = home.join(DIR_NAME);
    let client = reqwest::Client::new();
    let url = format!("{base}/api/interactions");
    let mut done = Drained::default();
    loop {
        let mut plan = Claim::new(std::process::id(), now_ms());
        let mut step = plan.start();
        let mut delivered = None;
        loop {
            step = match step {
                Step::Deliver { records } => {
                    let taken = deliver(&client, &url, &records).await;
                    delivered = Some(taken.then_some(records.len()));
                    plan.finish(taken)
                }
                Step::Done | Step::Failed | Step::Identity { .. } => break,
                other => plan.feed(perform(&dir, other)),
            };
        }
        match delivered {
            Some(Some(n)) => {
                done.files += 1;
                done.records += n;
            }
            // Nothing left to claim, or the node did not take a file: stop.
            _ => return done,
        }
    }
}

/// Sends `records` in batches; whether the API took every one.
async fn deliver(client: &reqwest::Client, url: &str, records: &[String]) -> bool {
    for batch in records.chunks(BATCH_MAX) {
        let sent = client
            .post(url)
            .header("content-type", "application/json")
            .body(format!("[{}]", batch.join(",")))
            .timeout(ANSWER_WAIT)
            .send()
            .await;
        let (status, retry, body) = match sent {
            Ok(r) => {
                let status = r.status().as_u16();
                let retry = r
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                (Some(status), retry, r.text().await.ok())
            }
            Err(_) => (None, None, None),
        };
        let d = delivery(
            batch.len() as u32,
            status,
            retry.as_deref(),
            body.as_deref(),
        );
        if !d.keep.is_empty() {
            tracing::warn!(
                reason = d.reason.as_deref().unwrap_or_default(),
                "the spool was not taken: it waits for the next host"
            );
            return false;
        }
    }
    true
}

/// Performs one file step of the plan in `dir`.
fn perform(dir: &Path, step: Step) -> Outcome {
    let done = |r: std::io::Result<()>| match r {
        Ok(()) => Outcome::Ok,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Outcome::Missing,
        Err(_) => Outcome::Failed,
    };
    match step {
        Step::List => match fs::read_dir(dir) {
            Ok(entries) => Outcome::Listing(
                entries
                    .flatten()
                    .map(|e| {
                        let mtime = e.metadata().ok().and_then(|m| m.modified().ok());
                        (e.file_name().to_string_lossy().into_owned(), mtime.map(ms))
                    })
                    .collect(),
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Outcome::Missing,
            Err(_) => Outcome::Failed,
        },
        Step::Claim { from, to } => {
            done(fs::rename(dir.join(&from), dir.join(&to)).and_then(|()| {
                fs::File::options()
                    .write(true)
                    .open(dir.join(&to))?
                    .set_modified(SystemTime::now())
            }))
        }
        Step::Read { name } => match fs::read(dir.join(name)) {
            Ok(bytes) => Outcome::Text(String::from_utf8_lossy(&bytes).into_owned()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Outcome::Missing,
            Err(_) => Outcome::Failed,
        },
        Step::Rename { from, to } => done(fs::rename(dir.join(from), dir.join(to))),
        Step::Delete { name } => {
            let _ = fs::remove_file(dir.join(name));
            Outcome::Ok
        }
        // The claim plan asks for no other step.
        _ => Outcome::Failed,
    }
}

fn ms(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as f64)
        .unwrap_or(0.0)
}

fn now_ms() -> f64 {
    ms(SystemTime::now())
}
