//! One scan run, end to end (see the module docs of [`crate::scanner`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use lowdown_core::scanner::cohort::{self, CohortError, Current};
use lowdown_core::scanner::days::day_of;
use lowdown_core::scanner::dispatch::{host_key, Limits};
use lowdown_core::scanner::registry::{Entry, DEFAULT_REGISTRY_URL};
use lowdown_core::scanner::target::Policy;
use lowdown_core::scanner::{MissingReason, DEFAULT_COHORT_SIZE};
use serde::Serialize;

use super::net::{Lookup, Net, SystemLookup};
use super::packages::{self, PackageSources};
use super::progress::{self, Progress};
use super::{probing, registry};
use crate::db::lease::{self, Fence, SCAN_LEASE};
use crate::db::scanner as store;
use crate::db::{random_id, Db};
use crate::names::enum_str;

/// The time a run believes it is (unix ms): the wall clock, or a shifted one in tests.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// How long a scan lease lasts unless renewed (renewed every third of it).
pub const LEASE_TTL_MS: i64 = 5 * 60_000;

/// Everything a run needs besides the database.
#[derive(Clone)]
pub struct ScanConfig {
    /// The Registry's base URL.
    pub registry_url: String,
    /// Which entries are probed: the fixed cohort or every one.
    pub cohort: CohortMode,
    /// `--cohort-size`; `None` keeps the stored size (5,000 for a new cohort).
    pub cohort_size: Option<u64>,
    /// Try `server/discover` (2026-07-28) first.
    pub modern: bool,
    /// Probes in flight, in total and against one host.
    pub limits: Limits,
    /// What may be reached (`--unsafe-allow-loopback`).
    pub policy: Policy,
    /// Name resolution (the system's by default).
    pub lookup: Arc<dyn Lookup>,
    /// The run's clock.
    pub clock: Clock,
    /// How progress is shown.
    pub progress: progress::Mode,
    /// Where declared npm and PyPI packages are checked; `None` skips the check.
    pub packages: Option<PackageSources>,
}

impl ScanConfig {
    /// The defaults: the official Registry, the fixed cohort at its stored size, 128 probes
    /// at a time and 32 against one host, the system resolver and clock, strict SSRF
    /// rules, progress on stderr, packages checked at the public npm registry and PyPI.
    pub fn new() -> Self {
        ScanConfig {
            registry_url: DEFAULT_REGISTRY_URL.to_owned(),
            cohort: CohortMode::Fixed,
            cohort_size: None,
            modern: false,
            limits: Limits::default(),
            policy: Policy::default(),
            lookup: Arc::new(SystemLookup),
            clock: Arc::new(crate::clock::now_ms),
            progress: progress::Mode::for_stderr(),
            packages: Some(PackageSources::default()),
        }
    }
}

/// Which Registry entries a run probes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum CohortMode {
    /// The stored cohort's members (grown as `--cohort-size` asks).
    #[default]
    Fixed,
    /// Every active, latest entry with a probeable remote; the stored cohort is left as it
    /// is (neither grown nor probed as such), and its members not probeable today are
    /// still recorded as missing with their reason.
    All,
}

impl Default for ScanConfig {
    fn default() -> Self {
        Self::new()
    }
}

/// Why a run did not start.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// Another run holds the lease.
    #[error("another scan is running (lease held by {holder} until {until}); try again later")]
    LeaseHeld {
        /// The holder's id.
        holder: String,
        /// ISO-8601 expiry.
        until: String,
    },
    /// The day's scan already ran (a scheduled attempt: another server, or a run before).
    #[error("the scan of {day} already ran")]
    DayDone {
        /// The UTC day.
        day: String,
    },
    /// The cohort cannot be planned.
    #[error(transparent)]
    Cohort(#[from] CohortError),
    /// The database failed.
    #[error("storage: {0}")]
    Storage(String),
    /// The HTTP client could not be built.
    #[error("HTTP client: {0}")]
    Client(String),
}

impl From<crate::db::DbError> for ScanError {
    fn from(e: crate::db::DbError) -> Self {
        match e {
            crate::db::DbError::Internal { detail } => ScanError::Storage(detail),
            other => ScanError::Storage(other.to_string()),
        }
    }
}

/// The summary printed on stdout and stored with the run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// The run's id.
    pub scan_run_id: String,
    /// The UTC day the run counts for.
    pub day: String,
    /// `completed`, `registry_failed` or `failed` (lease lost).
    pub status: String,
    /// The Registry read.
    pub registry_url: String,
    /// What was probed: `fixed` (the cohort) or `all` (every probeable entry).
    pub cohort: CohortMode,
    /// Registry pages read.
    pub pages: usize,
    /// Server items on every page.
    pub entries: usize,
    /// Distinct active, latest entries.
    pub active_latest: usize,
    /// Of those, with a probeable remote.
    pub probeable: usize,
    /// Declaration changes recorded.
    pub registry_changes: usize,
    /// Cohort version in force.
    pub cohort_version: Option<u64>,
    /// Cohort size in force.
    pub cohort_size: u64,
    /// Cohort members.
    pub members: usize,
    /// Members added by this run.
    pub members_added: usize,
    /// Members not listed as active and latest.
    pub not_listed: usize,
    /// Listed members without a probeable remote.
    pub no_probeable_remote: usize,
    /// Remotes to probe.
    pub remotes: usize,
    /// Distinct hosts of those remotes.
    pub hosts: usize,
    /// Observations stored.
    pub probed: usize,
    /// Observations per reached level.
    pub by_level: BTreeMap<String, u64>,
    /// Observations per error type.
    pub by_error_type: BTreeMap<String, u64>,
    /// The npm and PyPI package check (zeros when skipped).
    pub packages: packages::Tally,
    /// Wall time of the run.
    pub duration_ms: i64,
    /// What went wrong, when the run did not complete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Runs one scan under the `scan` lease (`lowdown-server scan`). A run of today that a
/// holder left unfinished (its server died, or it lost the lease) is resumed rather than
/// started again: the remotes it observed are not probed twice.
pub async fn run(db: &Db, cfg: &ScanConfig) -> Result<Summary, ScanError> {
    run_leased(db, cfg, None).await
}

/// The daily scan of `day` (`serve --scan-at`): runs (or resumes) it unless it already ran,
/// which is decided under the lease, so however many servers try, one run covers the day.
/// [`ScanError::DayDone`] when it already ran or `day` is no longer today.
pub async fn run_daily(db: &Db, cfg: &ScanConfig, day: &str) -> Result<Summary, ScanError> {
    run_leased(db, cfg, Some(day)).await
}

/// What the `scan` lease row says about the run under way (its `state`): the run a holder
/// taking over resumes, and what it probes.
#[derive(Debug, Serialize, serde::Deserialize)]
struct RunState {
    run: String,
    cohort: CohortMode,
}

async fn run_leased(db: &Db, cfg: &ScanConfig, only: Option<&str>) -> Result<Summary, ScanError> {
    let net = Net::new(cfg.policy, cfg.lookup.clone(), env!("CARGO_PKG_VERSION"))
        .map_err(|e| ScanError::Client(e.to_string()))?;
    // A shrinking cohort is refused before anything is recorded.
    let cohort = store::load_cohort(db).await?;
    let current = cohort.as_ref().map(|(version, size, members)| Current {
        version: *version,
        size: *size,
        members,
    });
    cohort::plan(current.as_ref(), cfg.cohort_size, DEFAULT_COHORT_SIZE, &[])?;

    // The lease is about wall time, whatever clock the run uses.
    let holder = random_id("scan_", 8)?;
    let left = match lease::acquire(
        db,
        SCAN_LEASE,
        &holder,
        crate::clock::now_ms(),
        LEASE_TTL_MS,
    )
    .await?
    {
        Ok(left) => left,
        Err(held) => {
            return Err(ScanError::LeaseHeld {
                holder: held.holder,
                until: crate::clock::iso(held.expires_at),
            })
        }
    };
    let lost = Arc::new(AtomicBool::new(false));
    let _keepalive = AbortOnDrop({
        let (db, holder, lost) = (db.clone(), holder.clone(), lost.clone());
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(LEASE_TTL_MS as u64 / 3)).await;
                let until = crate::clock::now_ms() + LEASE_TTL_MS;
                if !matches!(
                    lease::renew(&db, SCAN_LEASE, &holder, until).await,
                    Ok(true)
                ) {
                    lost.store(true, Ordering::Relaxed);
                    return;
                }
            }
        })
    });
    // Dropped mid-run (the server shutting down), the keepalive stops with the run and the
    // lease expires on its own; the observations already written stay, and the lease row
    // names the run, for the next holder to resume.
    let result = async {
        let today = day_of((cfg.clock)());
        if let Some(day) = only {
            // The runs decide, not the lease row's `done` (a row is a hint anyone with
            // the database could have written; a day's runs are the job's own record).
            if day != today || store::scanned_on(db, day).await? {
                return Err(ScanError::DayDone {
                    day: day.to_owned(),
                });
            }
        }
        // What the row says is a hint: the run must be today's, unfinished, of the same
        // Registry and scope, or a new run starts.
        let resume = match left
            .unfinished(&today)
            .and_then(|s| serde_json::from_str::<RunState>(s).ok())
        {
            Some(s) if s.cohort == cfg.cohort => {
                store::resumable(db, &s.run, &today, &cfg.registry_url)
                    .await?
                    .map(|started| (s.run, started))
            }
            _ => None,
        };
        run_locked(db, cfg, &net, cohort, (&holder, &lost), resume).await
    }
    .await;
    match &result {
        Ok(s) if s.status == "completed" || s.status == "registry_failed" => {
            lease::finish(db, SCAN_LEASE, &holder, &s.day).await?
        }
        _ => lease::release(db, SCAN_LEASE, &holder).await?,
    }
    result
}

async fn run_locked(
    db: &Db,
    cfg: &ScanConfig,
    net: &Net,
    cohort: Option<(u64, u64, BTreeSet<String>)>,
    (holder, lost): (&str, &Arc<AtomicBool>),
    resume: Option<(String, i64)>,
) -> Result<Summary, ScanError> {
    let resumed = resume.is_some();
    let (run_id, started) = match resume {
        Some((run_id, started)) => {
            store::reopen_run(db, &run_id).await?;
            (run_id, started)
        }
        None => {
            let started = (cfg.clock)();
            let day = day_of(started);
            let run_id = random_id(&format!("sr_{}_", day.replace('-', "")), 4)?;
            store::start_run(db, &run_id, &day, started, &cfg.registry_url).await?;
            (run_id, started)
        }
    };
    let day = day_of(started);
    let fence = Fence::new(SCAN_LEASE, holder);
    // From here on a holder that takes over after this one dies resumes this run.
    let state = serde_json::to_string(&RunState {
        run: run_id.clone(),
        cohort: cfg.cohort,
    })
    .map_err(|e| ScanError::Storage(e.to_string()))?;
    if !lease::progress(db, SCAN_LEASE, holder, &day, &state).await? {
        lost.store(true, Ordering::Relaxed);
    }
    let progress = Progress::new(cfg.progress);
    let reporter = AbortOnDrop(progress::spawn_reporter(progress.clone()));
    progress.note(&format!(
        "scan: {} {run_id} for {day}, reading {}",
        if resumed { "resuming run" } else { "run" },
        cfg.registry_url
    ));
    let mut summary = Summary {
        scan_run_id: run_id.clone(),
        day: day.clone(),
        registry_url: cfg.registry_url.clone(),
        cohort: cfg.cohort,
        ..Summary::default()
    };
    let outcome = async {
        let read = registry::read(net, &cfg.registry_url, |p, e| progress.registry_page(p, e)).await;
        let (entries, counts) = match read {
            Ok(r) => r,
            Err(e) => {
                progress.note(&format!("scan: Registry read failed: {e}"));
                summary.status = "registry_failed".into();
                summary.error = Some(e.to_string());
                return Ok::<_, ScanError>(());
            }
        };
        (summary.pages, summary.entries) = (counts.pages, counts.entries);
        (summary.active_latest, summary.probeable) = (counts.active_latest, counts.probeable);
        summary.registry_changes =
            store::save_registry(db, &run_id, &day, (cfg.clock)(), &entries).await?;
        crate::db::packages::rebuild_declarations(db).await?;
        let mut package_keys = match cfg.packages {
            Some(_) => packages::declared(&entries),
            None => Vec::new(),
        };
        let (mut jobs, skips) = plan_cohort(db, cfg, &run_id, &day, &entries, cohort, &mut summary).await?;
        // Taken over: what the run already stored is not done again.
        let before = match resumed {
            true => store::run_observations(db, &run_id).await?,
            false => Vec::new(),
        };
        if resumed {
            let observed: BTreeSet<(&str, &str)> =
                before.iter().map(|(t, u, _, _)| (t.as_str(), u.as_str())).collect();
            jobs.retain(|(t, u)| !observed.contains(&(t.as_str(), u.as_str())));
            let checked: BTreeSet<(String, String)> =
                crate::db::packages::attempted_since(db, started).await?.into_iter().collect();
            package_keys.retain(|k| !checked.contains(&(enum_str(&k.ecosystem), k.name.clone())));
            progress.note(&format!(
                "scan: {} remotes were observed before the run was taken over; {} left",
                before.len(),
                jobs.len()
            ));
        }
        // Probing holds only its queue: the Registry read is not needed past this point.
        drop(entries);
        store::save_skips(db, &run_id, &day, &skips).await?;
        summary.remotes = jobs.len() + before.len();
        summary.hosts = jobs
            .iter()
            .map(|(_, url)| url)
            .chain(before.iter().map(|(_, url, _, _)| url))
            .map(|url| host_key(url))
            .collect::<BTreeSet<_>>()
            .len();
        let scope = match cfg.cohort {
            CohortMode::Fixed => "the cohort",
            CohortMode::All => "every probeable entry",
        };
        progress.note(&format!(
            "scan: {} Registry entries ({} active and latest); cohort v{} has {} members; probing {} remotes on {} hosts ({scope}), {} at a time, {} per host",
            counts.entries,
            counts.active_latest,
            summary.cohort_version.unwrap_or(0),
            summary.members,
            summary.remotes,
            summary.hosts,
            cfg.limits.total,
            cfg.limits.per_host,
        ));
        progress.start_probing(jobs.len());
        let tally =
            probing::probe_all(db, cfg, net, (&run_id, &day), jobs, &progress, fence.clone(), lost).await?;
        summary.probed = tally.probed + before.len();
        summary.by_level = tally.by_level;
        summary.by_error_type = tally.by_error_type;
        for (_, _, level, error) in &before {
            *summary.by_level.entry(level.to_string()).or_default() += 1;
            if let Some(e) = error {
                *summary.by_error_type.entry(e.clone()).or_default() += 1;
            }
        }
        if let (Some(sources), false) = (&cfg.packages, lost.load(Ordering::Relaxed)) {
            progress.note(&format!("scan: checking {} npm and PyPI packages", package_keys.len()));
            summary.packages = packages::check_all(db, net, sources, package_keys, &cfg.clock).await?;
        }
        summary.status = if lost.load(Ordering::Relaxed) {
            summary.error = Some("the scan lease was lost; stopped probing".into());
            "failed".into()
        } else {
            "completed".into()
        };
        Ok(())
    }
    .await;
    drop(reporter);
    progress.finish();
    if let Err(e) = outcome {
        summary.status = "failed".into();
        summary.error = Some(e.to_string());
    }
    summary.duration_ms = (cfg.clock)() - started;
    let json = serde_json::to_value(&summary).unwrap_or_default();
    let finished = store::finish_run(
        db,
        fence,
        &run_id,
        &summary.status,
        (cfg.clock)(),
        summary.cohort_version,
        &json,
    )
    .await?;
    if !finished {
        // Another holder took the run over: its outcome is that holder's to record.
        summary.status = "failed".into();
        summary.error = Some("the scan lease was lost; another server took the run over".into());
    }
    Ok(summary)
}

/// Grows the cohort as asked (fixed mode) and lists the remotes to probe, in cohort order,
/// and the members that cannot be probed, with why. In `all` mode every kept entry with a
/// probeable remote is probed and the stored cohort is left as it is.
async fn plan_cohort(
    db: &Db,
    cfg: &ScanConfig,
    run_id: &str,
    day: &str,
    entries: &[Entry],
    cohort: Option<(u64, u64, BTreeSet<String>)>,
    summary: &mut Summary,
) -> Result<(Vec<(String, String)>, Vec<(String, MissingReason)>), ScanError> {
    let kept: BTreeMap<String, &Entry> = entries
        .iter()
        .filter(|e| e.is_kept())
        .map(|e| (e.target_id(), e))
        .collect();
    let (version, mut members) = match cohort {
        Some((v, size, members)) => ((Some(v), size), members),
        None => ((None, 0), BTreeSet::new()),
    };
    (summary.cohort_version, summary.cohort_size) = version;
    if cfg.cohort == CohortMode::Fixed {
        let kept_ids: Vec<String> = kept.keys().cloned().collect();
        let current = version.0.map(|v| Current {
            version: v,
            size: version.1,
            members: &members,
        });
        let plan = cohort::plan(
            current.as_ref(),
            cfg.cohort_size,
            DEFAULT_COHORT_SIZE,
            &kept_ids,
        )?;
        members.extend(plan.add.iter().cloned());
        store::save_cohort(db, &plan, members.len(), run_id, day, (cfg.clock)()).await?;
        summary.cohort_version = plan.new_version.or(version.0);
        summary.cohort_size = plan.size;
        summary.members_added = plan.add.len();
    }
    summary.members = members.len();
    let mut ordered: Vec<String> = match cfg.cohort {
        CohortMode::Fixed => members.iter().cloned().collect(),
        CohortMode::All => members
            .iter()
            .chain(kept.keys())
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
    };
    cohort::sort(&mut ordered);
    let (mut jobs, mut skips) = (Vec::new(), Vec::new());
    for id in ordered {
        match kept.get(&id).map(|e| e.probeable_remotes()) {
            None => skips.push((id, MissingReason::NotListed)),
            Some(urls) if urls.is_empty() => {
                if members.contains(&id) {
                    skips.push((id, MissingReason::NoProbeableRemote));
                }
            }
            Some(urls) => jobs.extend(urls.into_iter().map(|u| (id.clone(), u))),
        }
    }
    summary.not_listed = skips
        .iter()
        .filter(|s| s.1 == MissingReason::NotListed)
        .count();
    summary.no_probeable_remote = skips.len() - summary.not_listed;
    Ok((jobs, skips))
}

/// Aborts a background task when the run that started it ends or is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
