//! Telemetry observations (SPEC §4): raw rows plus rollups per host and per catalog
//! service, written in one transaction; the `telemetry{...}` answer block reads rollups.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use lowdown_core::record::Source;
use lowdown_core::telemetry::{
    latency_bucket, status_class, summarize_telemetry, Observation, StatusClass, StatusCounts,
    TelemetryRollup, WeightMix, WeightTier, LATENCY_BUCKETS_MS,
};
use serde::Serialize;
use sqlx::{AnyConnection, Row};

use super::upsert::{add_counts, insert_new, where_in, Val};
use super::{get_u64, random_id, Db};
use crate::clock;
use crate::db::quota::Draws;
use crate::db::DbResult;
use crate::names::{enum_str, parse_enum};

/// An observation with what the server decided about it.
#[derive(Debug, Clone)]
pub struct Weighed {
    /// The validated observation.
    pub obs: Observation,
    /// Its weight tier (from the agent key and the catalog).
    pub tier: WeightTier,
    /// The catalog service its host belongs to.
    pub service_id: Option<String>,
    /// The registered agent that sent it.
    pub agent_id: Option<String>,
    /// The keyed id of the sender's network.
    pub network: Option<String>,
}

const COLS: &[&str] = &[
    "record_id",
    "host",
    "method",
    "status",
    "status_class",
    "latency_ms",
    "response_bytes",
    "source",
    "reporter",
    "weight_tenths",
    "service_id",
    "agent_id",
    "day",
    "created_at",
    "network",
];

const ROLLUP_KEYS: &[&str] = &[
    "subject_kind",
    "subject",
    "day",
    "source",
    "status",
    "weight_tenths",
    "latency_bucket",
];

/// What became of one observation of a request: what becomes of a record (stored, a
/// duplicate acknowledged and free of every budget, or refused over one).
pub use super::ingest::Fate;

/// The fate of each observation, in request order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    /// One per observation given to [`store`].
    pub fates: Vec<Fate>,
}

/// Stores observations in one transaction. Repeated `record_id`s are acknowledged as
/// duplicates and draw on no budget. The new ones draw on theirs in `draws` (one item per
/// observation) in the same transaction ([`crate::db::quota`]): the first ones up to the
/// tightest budget are stored, the rest refused as [`Fate::RateLimited`]. When nothing at
/// all is accepted the answer is [`DbError::RateLimited`] and nothing is
/// written. Each agent's count of accepted observations grows by what it got stored.
pub async fn store(db: &Db, items: Vec<Weighed>, now: i64, draws: &Draws) -> DbResult<Stored> {
    let draws = draws.clone();
    let mut ids = Vec::with_capacity(items.len());
    for w in &items {
        ids.push(match &w.obs.record_id {
            Some(id) => id.clone(),
            None => random_id("srv_", 16)?,
        });
    }
    db.write(move |conn| {
        Box::pin(async move {
            let mut fates = duplicates(conn, &items, &ids).await?;
            // Only the new observations draw on the budgets.
            let new: Vec<usize> = (0..fates.len()).filter(|i| fates[*i].is_none()).collect();
            let wanted = draws.only(&new);
            let taken = crate::db::quota::take(conn, &wanted, now, false).await?;
            if !new.is_empty()
                && new.len() == fates.len()
                && taken.items.iter().all(Option::is_some)
            {
                let r = taken.items[0].expect("refused");
                return Err(draws.quotas[r.budget].refusal(r.retry_after_secs));
            }
            let mut rows = Vec::with_capacity(new.len());
            for (k, i) in new.iter().enumerate() {
                match taken.items[k] {
                    None => rows.push((ids[*i].clone(), &items[*i], *i)),
                    Some(r) => fates[*i] = Some(Fate::RateLimited(r)),
                }
            }
            // One lock order for every writer (ids sorted, rollup keys in a BTreeMap).
            rows.sort_by(|a, b| a.0.cmp(&b.0));
            let inserted = write(conn, &rows, now).await?;
            for (id, _, i) in &rows {
                fates[*i] = Some(if inserted.contains(id) {
                    Fate::Stored
                } else {
                    Fate::Duplicate
                });
            }
            let fates = fates
                .into_iter()
                .map(|f| f.unwrap_or(Fate::Duplicate))
                .collect();
            Ok(Stored { fates })
        })
    })
    .await
}

/// Marks the observations whose client `record_id` is already stored, or repeats an
/// earlier one of the request, as duplicates; the others stay undecided (`None`).
async fn duplicates(
    conn: &mut AnyConnection,
    items: &[Weighed],
    ids: &[String],
) -> DbResult<Vec<Option<Fate>>> {
    let given: Vec<&str> = items
        .iter()
        .zip(ids)
        .filter(|(w, _)| w.obs.record_id.is_some())
        .map(|(_, id)| id.as_str())
        .collect();
    let mut known: HashSet<String> = HashSet::new();
    let sql = "SELECT record_id FROM observations WHERE record_id IN {}";
    for row in where_in(conn, sql, &given).await? {
        known.insert(row.try_get(0)?);
    }
    Ok(ids
        .iter()
        .map(|id| (!known.insert(id.clone())).then_some(Fate::Duplicate))
        .collect())
}

async fn write(
    conn: &mut AnyConnection,
    items: &[(String, &Weighed, usize)],
    now: i64,
) -> DbResult<HashSet<String>> {
    if items.is_empty() {
        return Ok(HashSet::new());
    }
    let day = clock::day_of(now);
    let raw = items
        .iter()
        .map(|(id, w, _)| {
            let o = &w.obs;
            vec![
                Val::Text(id.clone()),
                Val::Text(o.host.clone()),
                Val::Text(o.method.clone()),
                Val::OptInt(o.status.map(i64::from)),
                Val::Text(enum_str(&status_class(o.status))),
                Val::float(Some(o.latency_ms)),
                Val::OptInt(o.response_bytes.map(|b| b as i64)),
                Val::Text(enum_str(&o.source)),
                Val::OptText(o.reporter.clone()),
                Val::Int(w.tier.tenths() as i64),
                Val::OptText(w.service_id.clone()),
                Val::OptText(w.agent_id.clone()),
                Val::Text(day.clone()),
                Val::Int(now),
                Val::OptText(w.network.clone()),
            ]
        })
        .collect();
    let inserted: HashSet<String> =
        insert_new(conn, "observations", COLS, "record_id", "record_id", raw)
            .await?
            .into_iter()
            .collect();
    let mut rollups: BTreeMap<Vec<Val>, i64> = BTreeMap::new();
    let mut networks: BTreeMap<Vec<Val>, i64> = BTreeMap::new();
    let mut contributors: BTreeSet<Vec<Val>> = BTreeSet::new();
    let mut accepted: BTreeMap<&str, i64> = BTreeMap::new();
    let mut subjects = BTreeSet::new();
    for (id, w, _) in items {
        if !inserted.contains(id) {
            continue;
        }
        let o = &w.obs;
        if let Some(a) = &w.agent_id {
            *accepted.entry(a.as_str()).or_insert(0) += 1;
        }
        let mut kinds = vec![("host", o.host.clone())];
        if let Some(s) = &w.service_id {
            kinds.push(("service", s.clone()));
        }
        for (kind, subject) in kinds {
            subjects.insert(subject.clone());
            if o.source == Source::Organic {
                let at = |v: String| {
                    vec![
                        Val::Text(kind.to_owned()),
                        Val::Text(subject.clone()),
                        Val::Text(v),
                    ]
                };
                if let Some(n) = &w.network {
                    *networks.entry(at(n.clone())).or_insert(0) += 1;
                }
                if let Some(a) = &w.agent_id {
                    contributors.insert(at(a.clone()));
                }
            }
            let key = vec![
                Val::Text(kind.to_owned()),
                Val::Text(subject),
                Val::Text(day.clone()),
                Val::Text(enum_str(&o.source)),
                Val::Int(o.status.map_or(-1, i64::from)),
                Val::Int(w.tier.tenths() as i64),
                Val::Int(latency_bucket(o.latency_ms) as i64),
            ];
            *rollups.entry(key).or_insert(0) += 1;
        }
    }
    super::rollup::add_targets(conn, subjects.iter().map(|s| (s.as_str(), now))).await?;
    add_counts(conn, "telemetry_rollups", ROLLUP_KEYS, rollups).await?;
    let independence = ["subject_kind", "subject", "network"];
    add_counts(conn, "telemetry_networks", &independence, networks).await?;
    super::upsert::insert_ignore(
        conn,
        "telemetry_contributors",
        &["subject_kind", "subject", "contributor"],
        "subject_kind, subject, contributor",
        &contributors.into_iter().collect::<Vec<_>>(),
    )
    .await?;
    for (agent, n) in accepted {
        sqlx::query("UPDATE agents SET accepted = accepted + $1 WHERE agent_id = $2")
            .bind(n)
            .bind(agent.to_owned())
            .execute(&mut *conn)
            .await?;
    }
    Ok(inserted)
}

fn tier_of(tenths: i64) -> Option<WeightTier> {
    [
        WeightTier::AnonymousUnknownHost,
        WeightTier::AnonymousKnownHost,
        WeightTier::KeyUnknownHost,
        WeightTier::KeyKnownHost,
    ]
    .into_iter()
    .find(|t| t.tenths() as i64 == tenths)
}

/// What the `telemetry` block always says about itself.
const NOTE: &str = "self-reported HTTP telemetry; organic only; never part of success_rate";

/// The `telemetry` block of a reputation answer. Keys in alphabetical order, the order
/// the answer has always given them.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[schemars(rename = "Telemetry")]
pub struct Block {
    /// Observations per source (`organic`, `seeded`, `synthetic`), every source counted.
    pub by_source: BTreeMap<String, u64>,
    /// Distinct agent keys behind the organic observations.
    pub contributors: u64,
    /// Median latency of organic observations, as a histogram bucket's upper bound.
    pub latency_p50_ms: Option<f64>,
    /// 95th percentile latency, same convention.
    pub latency_p95_ms: Option<f64>,
    /// Distinct networks behind the organic observations.
    pub networks: u64,
    /// What the block is and is not.
    pub note: &'static str,
    /// Organic observations counted.
    pub observations: u64,
    /// Unweighted organic counts per status class.
    pub status_classes: StatusCounts,
    /// Organic observations per exact status code (`none`: no response).
    pub status_codes: BTreeMap<String, u64>,
    /// What was observed: a host or a catalog service id.
    pub subject: Subject,
    /// The largest share one network holds of the organic observations.
    pub top_network_share: Option<f64>,
    /// Organic observations per weight tier.
    pub weight_mix: WeightMix,
    /// Weighted organic success rate (throttled and rejected are not in it).
    pub weighted_success_rate: Option<f64>,
}

/// The subject of a [`Block`].
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Subject {
    /// `host` or `service`.
    pub kind: &'static str,
    /// The host name or service id.
    pub name: String,
}

/// The `telemetry{...}` block for a host or catalog service id, or `None` when nothing was
/// observed. Numbers summarise organic observations (the core's rules); `by_source`
/// counts observations of every source, so nothing is mixed silently.
pub async fn block(db: &Db, subject: &str) -> DbResult<Option<Block>> {
    // One query for both kinds (one round trip per answer); a host wins over a service
    // id of the same name.
    let all = sqlx::query(
        "SELECT subject_kind, source, status, weight_tenths, latency_bucket, CAST(SUM(n) AS BIGINT) \
         FROM telemetry_rollups WHERE subject = $1 \
         GROUP BY subject_kind, source, status, weight_tenths, latency_bucket",
    )
    .bind(subject.to_owned())
    .fetch_all(&db.pool)
    .await?;
    for kind in ["host", "service"] {
        let mut rows = Vec::new();
        for row in &all {
            if row.try_get::<String, _>(0)? == kind {
                rows.push(row);
            }
        }
        if rows.is_empty() {
            continue;
        }
        let mut rollup = TelemetryRollup {
            latency_histogram: vec![0; LATENCY_BUCKETS_MS.len()],
            ..Default::default()
        };
        let mut by_source: BTreeMap<String, u64> = ["organic", "seeded", "synthetic"]
            .into_iter()
            .map(|s| (s.to_owned(), 0))
            .collect();
        for row in rows {
            let source: String = row.try_get(1)?;
            let status: i64 = row.try_get(2)?;
            let n = get_u64(row, 5)?;
            *by_source.entry(source.clone()).or_insert(0) += n;
            if parse_enum::<Source>(&source) != Some(Source::Organic) {
                continue;
            }
            let Some(tier) = tier_of(row.try_get(3)?) else {
                continue;
            };
            let status = u16::try_from(status).ok();
            let counts = rollup.by_tier.entry(tier).or_default();
            match status_class(status) {
                StatusClass::Success => counts.success += n,
                StatusClass::Failure => counts.failure += n,
                StatusClass::Throttled => counts.throttled += n,
                StatusClass::Rejected => counts.rejected += n,
            }
            let code = status.map_or_else(|| "none".to_owned(), |s| s.to_string());
            *rollup.status_codes.entry(code).or_insert(0) += n;
            let bucket = usize::try_from(row.try_get::<i64, _>(4)?)
                .unwrap_or(0)
                .min(LATENCY_BUCKETS_MS.len() - 1);
            rollup.latency_histogram[bucket] += n;
        }
        let summary = summarize_telemetry(&rollup);
        let organic = by_source.get("organic").copied().unwrap_or(0);
        let who = independence(db, kind, subject).await?;
        return Ok(Some(Block {
            by_source,
            contributors: who.contributors,
            latency_p50_ms: summary.latency_p50_ms,
            latency_p95_ms: summary.latency_p95_ms,
            networks: who.networks,
            note: NOTE,
            observations: summary.observations,
            status_classes: summary.status_classes,
            status_codes: summary.status_codes,
            subject: Subject {
                kind,
                name: subject.to_owned(),
            },
            top_network_share: lowdown_core::aggregate::share(who.top_network, organic),
            weight_mix: summary.weight_mix,
            weighted_success_rate: summary.weighted_success_rate,
        }));
    }
    Ok(None)
}

/// Who stands behind a telemetry subject's organic observations: distinct agent keys,
/// distinct networks, and the observations of the network with the most.
async fn independence(
    db: &Db,
    kind: &str,
    subject: &str,
) -> DbResult<lowdown_core::aggregate::Independence> {
    let nets = sqlx::query(
        "SELECT COUNT(*), COALESCE(MAX(n), 0) FROM telemetry_networks \
         WHERE subject_kind = $1 AND subject = $2",
    )
    .bind(kind.to_owned())
    .bind(subject.to_owned())
    .fetch_one(&db.pool)
    .await?;
    let keys = sqlx::query(
        "SELECT COUNT(*) FROM telemetry_contributors WHERE subject_kind = $1 AND subject = $2",
    )
    .bind(kind.to_owned())
    .bind(subject.to_owned())
    .fetch_one(&db.pool)
    .await?;
    Ok(lowdown_core::aggregate::Independence {
        contributors: get_u64(&keys, 0)?,
        networks: get_u64(&nets, 0)?,
        top_network: get_u64(&nets, 1)?,
    })
}
