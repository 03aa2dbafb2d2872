//! Telemetry observations (SPEC §4): raw rows plus rollups per host and per catalog
//! service, written in one transaction; the `telemetry{...}` answer block reads rollups.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use lowdown_core::record::Source;
use lowdown_core::telemetry::{
    latency_bucket, status_class, summarize_telemetry, Observation, StatusClass, TelemetryRollup,
    WeightTier, LATENCY_BUCKETS_MS,
};
use serde_json::{json, Value};
use sqlx::{AnyConnection, Row};

use super::upsert::{add_counts, insert_new, Val};
use super::{get_u64, random_id, Db};
use crate::clock;
use crate::error::AppResult;
use crate::names::{enum_str, parse_enum};
use crate::ratelimit::{self, Quota};

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
    "weight_tenths",
    "service_id",
    "agent_id",
    "day",
    "created_at",
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

/// Stores observations in one transaction; a repeated `record_id` is skipped. Returns how
/// many were new. With a `quota`, the request's `items.len()` observations are first
/// counted against it in the same transaction ([`crate::ratelimit`]); past the limit the
/// answer is [`crate::error::AppError::RateLimited`] and nothing is written.
pub async fn store(
    db: &Db,
    items: Vec<Weighed>,
    now: i64,
    quota: Option<Quota>,
) -> AppResult<usize> {
    let n = u32::try_from(items.len()).unwrap_or(u32::MAX);
    let mut seen = HashSet::new();
    let mut rows = Vec::with_capacity(items.len());
    for w in items {
        let id = match &w.obs.record_id {
            Some(id) => id.clone(),
            None => random_id("srv_", 16)?,
        };
        if seen.insert(id.clone()) {
            rows.push((id, w));
        }
    }
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    db.write(move |conn| {
        Box::pin(async move {
            if let Some(q) = &quota {
                ratelimit::take(conn, q, n, now).await?;
            }
            write(conn, rows, now).await
        })
    })
    .await
}

async fn write(
    conn: &mut AnyConnection,
    items: Vec<(String, Weighed)>,
    now: i64,
) -> AppResult<usize> {
    let day = clock::day_of(now);
    let raw = items
        .iter()
        .map(|(id, w)| {
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
                Val::Int(w.tier.tenths() as i64),
                Val::OptText(w.service_id.clone()),
                Val::OptText(w.agent_id.clone()),
                Val::Text(day.clone()),
                Val::Int(now),
            ]
        })
        .collect();
    let inserted: HashSet<String> =
        insert_new(conn, "observations", COLS, "record_id", "record_id", raw)
            .await?
            .into_iter()
            .collect();
    let mut rollups: BTreeMap<Vec<Val>, i64> = BTreeMap::new();
    let mut subjects = BTreeSet::new();
    let mut fresh = 0;
    for (id, w) in &items {
        if !inserted.contains(id) {
            continue;
        }
        fresh += 1;
        let o = &w.obs;
        let mut kinds = vec![("host", o.host.clone())];
        if let Some(s) = &w.service_id {
            kinds.push(("service", s.clone()));
        }
        for (kind, subject) in kinds {
            subjects.insert(subject.clone());
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
    super::ingest::add_targets(conn, subjects.iter().map(String::as_str), now).await?;
    add_counts(conn, "telemetry_rollups", ROLLUP_KEYS, rollups).await?;
    Ok(fresh)
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

/// The `telemetry{...}` block for a host or catalog service id, or `None` when nothing was
/// observed. Numbers summarise organic observations (the core's rules); `by_source`
/// counts observations of every source, so nothing is mixed silently.
pub async fn block(db: &Db, subject: &str) -> AppResult<Option<Value>> {
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
        let mut v = serde_json::to_value(summary).map_err(crate::error::AppError::internal)?;
        if let Value::Object(m) = &mut v {
            m.insert("subject".into(), json!({"kind": kind, "name": subject}));
            m.insert("by_source".into(), json!(by_source));
            m.insert(
                "note".into(),
                json!("self-reported HTTP telemetry; organic only; never part of success_rate"),
            );
        }
        return Ok(Some(v));
    }
    Ok(None)
}
