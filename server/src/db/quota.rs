//! Write quotas (SPEC §4, §5), kept in the database (`quotas`, migration 0011) so that
//! every server sharing one database enforces one budget per subject.
//!
//! A subject is one node id, agent key or network under one limit, stored as a keyed hash
//! ([`crate::caller::subject`]), never the id or address itself. Its row holds the last
//! hour of use in one-minute slots; the core ([`lowdown_core::quota`]) decides what fits.
//! [`take`] runs inside the transaction that stores what it counts: it locks the rows (one
//! sorted multi-row upsert, so writers sharing PostgreSQL queue and never deadlock), and
//! writes the new windows back, so a refused request writes nothing and an accepted one
//! counts exactly once. Rows of idle subjects are deleted at most every ten minutes per
//! process.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicI64, Ordering};

use lowdown_core::quota::{self as rule, Budget, Window, SLOTS, SLOT_MS};
use lowdown_core::telemetry::{
    RATE_LIMIT_PER_IP_PER_HOUR, RATE_LIMIT_PER_KEY_PER_HOUR, REGISTRATIONS_PER_CALLER_PER_HOUR,
};
use sqlx::{AnyConnection, Row};

use super::upsert::{is_sqlite, where_in, write, Val};
use crate::caller::{network, subject};
use crate::db::Db;
use crate::db::{DbError, DbResult};

/// How often (ms) a process deletes the rows of idle subjects.
const PRUNE_EVERY_MS: i64 = 600_000;
/// When this process last pruned (unix ms).
static LAST_PRUNE: AtomicI64 = AtomicI64::new(0);

/// The limits of one deployment (`--quota-*`); the defaults are the core's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Interaction records per node id per hour.
    pub records_per_node: u32,
    /// Interaction records per agent key per hour.
    pub records_per_key: u32,
    /// Interaction records per network per hour.
    pub records_per_network: u32,
    /// Observations per agent key per hour (the seed's 600).
    pub observations_per_key: u32,
    /// Observations per network per hour without a key (the seed's 60).
    pub observations_per_anonymous_network: u32,
    /// Observations per network per hour with keys, all keys together.
    pub observations_per_network: u32,
    /// Agent registrations per network per hour.
    pub registrations_per_network: u32,
    /// Gateway calls per agent per hour.
    pub gateway_calls_per_agent: u32,
    /// Gateway calls per network per hour, all its agents together.
    pub gateway_calls_per_network: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            records_per_node: rule::RECORDS_PER_NODE_PER_HOUR,
            records_per_key: rule::RECORDS_PER_KEY_PER_HOUR,
            records_per_network: rule::RECORDS_PER_NETWORK_PER_HOUR,
            observations_per_key: RATE_LIMIT_PER_KEY_PER_HOUR,
            observations_per_anonymous_network: RATE_LIMIT_PER_IP_PER_HOUR,
            observations_per_network: rule::OBSERVATIONS_PER_NETWORK_PER_HOUR,
            registrations_per_network: REGISTRATIONS_PER_CALLER_PER_HOUR,
            gateway_calls_per_agent: rule::GATEWAY_CALLS_PER_AGENT_PER_HOUR,
            gateway_calls_per_network: rule::GATEWAY_CALLS_PER_NETWORK_PER_HOUR,
        }
    }
}

/// One budget a write draws on: whose it is and how much it allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quota {
    /// Keyed hash of the limit and the subject: the stored row's key.
    pub subject: String,
    /// Units allowed per sliding hour.
    pub limit: u32,
    /// What is counted, plural (`records`, `observations`, `registrations`), named in a 429.
    pub what: &'static str,
    /// Whose budget it is (`node id`, `agent key`, `network`), named in a 429.
    pub scope: &'static str,
}

/// The network a budget belongs to: `unknown` (one budget for all) when the router runs
/// without a socket and no address is known.
fn network_of(ip: Option<IpAddr>) -> String {
    ip.map_or_else(|| "unknown".to_owned(), network)
}

impl Quota {
    fn new(
        secret: &[u8],
        limit_name: &str,
        who: &str,
        limit: u32,
        what: &'static str,
        scope: &'static str,
    ) -> Quota {
        Quota {
            subject: subject(secret, limit_name, who),
            limit,
            what,
            scope,
        }
    }

    /// The record budget of a node id.
    pub fn node_records(secret: &[u8], limits: &Limits, node_id: &str) -> Quota {
        Self::new(
            secret,
            "records",
            &format!("node:{node_id}"),
            limits.records_per_node,
            "records",
            "node id",
        )
    }

    /// The record budget of an agent key.
    pub fn key_records(secret: &[u8], limits: &Limits, agent_id: &str) -> Quota {
        Self::new(
            secret,
            "records",
            &format!("agent:{agent_id}"),
            limits.records_per_key,
            "records",
            "agent key",
        )
    }

    /// The record budget of the network of `ip`.
    pub fn network_records(secret: &[u8], limits: &Limits, ip: Option<IpAddr>) -> Quota {
        Self::new(
            secret,
            "records",
            &network_of(ip),
            limits.records_per_network,
            "records",
            "network",
        )
    }

    /// The observation budget of an agent key.
    pub fn key_observations(secret: &[u8], limits: &Limits, agent_id: &str) -> Quota {
        Self::new(
            secret,
            "observe",
            &format!("agent:{agent_id}"),
            limits.observations_per_key,
            "observations",
            "agent key",
        )
    }

    /// The observation budget of the network of `ip`: without a key the seed's 60, with
    /// keys the network's own budget, shared by all of them.
    pub fn network_observations(
        secret: &[u8],
        limits: &Limits,
        ip: Option<IpAddr>,
        keyed: bool,
    ) -> Quota {
        match keyed {
            true => Self::new(
                secret,
                "observe-keyed",
                &network_of(ip),
                limits.observations_per_network,
                "observations",
                "network",
            ),
            false => Self::new(
                secret,
                "observe",
                &network_of(ip),
                limits.observations_per_anonymous_network,
                "observations",
                "network",
            ),
        }
    }

    /// The gateway calls an agent below a service's `min_reputation` may make to it.
    pub fn limited_calls(secret: &[u8], agent_id: &str, service_id: &str, limit: u32) -> Quota {
        Self::new(
            secret,
            "limited-calls",
            &format!("{agent_id}\0{service_id}"),
            limit,
            "gateway calls",
            "agent below this service's min_reputation",
        )
    }

    /// The gateway-call budget of an agent.
    pub fn agent_gateway_calls(secret: &[u8], limits: &Limits, agent_id: &str) -> Quota {
        Self::new(
            secret,
            "gateway-calls",
            &format!("agent:{agent_id}"),
            limits.gateway_calls_per_agent,
            "gateway calls",
            "agent",
        )
    }

    /// The gateway-call budget of the network of `ip`, all its agents together.
    pub fn network_gateway_calls(secret: &[u8], limits: &Limits, ip: Option<IpAddr>) -> Quota {
        Self::new(
            secret,
            "gateway-calls",
            &network_of(ip),
            limits.gateway_calls_per_network,
            "gateway calls",
            "network",
        )
    }

    /// The agent-registration budget of the network of `ip`.
    pub fn registrations(secret: &[u8], limits: &Limits, ip: Option<IpAddr>) -> Quota {
        Self::new(
            secret,
            "register",
            &network_of(ip),
            limits.registrations_per_network,
            "registrations",
            "network",
        )
    }

    /// The 429 for a request that got nothing of this budget.
    pub fn refusal(&self, retry_after_secs: u64) -> DbError {
        DbError::RateLimited(super::OverQuota {
            what: self.what.to_owned(),
            scope: self.scope.to_owned(),
            limit: self.limit,
            retry_after_secs,
        })
    }
}

/// The quotas a set of items draws on, each once, and which of them each item draws on.
#[derive(Debug, Clone, Default)]
pub struct Draws {
    /// Every quota named, once.
    pub quotas: Vec<Quota>,
    /// Per item, indices into `quotas`.
    pub items: Vec<Vec<usize>>,
    index: std::collections::HashMap<String, usize>,
}

impl Draws {
    /// The index of `q` among the quotas (added once).
    pub fn quota(&mut self, q: Quota) -> usize {
        if let Some(i) = self.index.get(&q.subject) {
            return *i;
        }
        self.index.insert(q.subject.clone(), self.quotas.len());
        self.quotas.push(q);
        self.quotas.len() - 1
    }

    /// Adds an item drawing one unit from each of `quotas`.
    pub fn item(&mut self, quotas: Vec<usize>) {
        self.items.push(quotas);
    }

    /// The same quotas, drawn on by only the items `keep` (indices, in their order).
    pub fn only(&self, keep: &[usize]) -> Draws {
        Draws {
            quotas: self.quotas.clone(),
            items: keep
                .iter()
                .map(|i| self.items.get(*i).cloned().unwrap_or_default())
                .collect(),
            index: self.index.clone(),
        }
    }
}

/// Takes items at `now` inside the caller's transaction: item `i` draws one unit from each
/// quota in `draws.items[i]`, and is taken only when all of them have room. `wrote`: the
/// transaction has written already (see [`lock`]).
pub(crate) async fn take(
    conn: &mut AnyConnection,
    draws: &Draws,
    now: i64,
    wrote: bool,
) -> Result<rule::Taken, sqlx::Error> {
    if draws.quotas.is_empty() {
        return Ok(rule::Taken {
            items: vec![None; draws.items.len()],
            changed: Vec::new(),
        });
    }
    // Rows locked in subject order, the one lock order every writer shares.
    let mut order: Vec<usize> = (0..draws.quotas.len()).collect();
    order.sort_by(|a, b| draws.quotas[*a].subject.cmp(&draws.quotas[*b].subject));
    let windows = lock(
        conn,
        order.iter().map(|i| draws.quotas[*i].subject.as_str()),
        now,
        wrote,
    )
    .await?;
    let mut budgets: Vec<Budget> = draws
        .quotas
        .iter()
        .map(|q| Budget {
            window: windows.get(&q.subject).cloned().unwrap_or_default(),
            limit: q.limit,
        })
        .collect();
    let decided = rule::take(&mut budgets, &draws.items, now);
    let changed: Vec<(&str, &Window)> = order
        .iter()
        .filter(|i| decided.changed[**i])
        .map(|i| (draws.quotas[*i].subject.as_str(), &budgets[*i].window))
        .collect();
    store(conn, &changed).await?;
    Ok(decided)
}

/// Takes one unit of `q` at `now` in a transaction of its own: `None` when taken, else why
/// not. For a slot that must be held before something happens (a limited gateway call).
pub async fn take_one(db: &Db, q: &Quota, now: i64) -> DbResult<Option<rule::Refused>> {
    take_together(db, std::slice::from_ref(q), now).await
}

/// Takes one unit of each of `qs` at `now`, all or none, in a transaction of its own:
/// `None` when taken, else why not ([`rule::Refused::budget`] indexes `qs`).
pub async fn take_together(db: &Db, qs: &[Quota], now: i64) -> DbResult<Option<rule::Refused>> {
    let mut draws = Draws::default();
    let all = qs.iter().map(|q| draws.quota(q.clone())).collect();
    draws.item(all);
    db.write(move |conn| {
        Box::pin(async move { Ok(take(conn, &draws, now, false).await?.items[0]) })
    })
    .await
}

/// Locks the rows of `subjects`, in the order given, and reads their windows (a subject
/// without a row has an empty one). An upsert that changes nothing takes each row lock
/// (creating missing rows; on SQLite it takes the database's one write lock). When the
/// transaction already wrote on SQLite (`wrote`), it holds that lock: a plain read suffices,
/// and costs less.
async fn lock<'a>(
    conn: &mut AnyConnection,
    subjects: impl Iterator<Item = &'a str>,
    now: i64,
    wrote: bool,
) -> Result<BTreeMap<String, Window>, sqlx::Error> {
    let sqlite = is_sqlite(conn) && wrote;
    let minute = now.div_euclid(SLOT_MS);
    let subjects: Vec<&str> = subjects.collect();
    let mut out = BTreeMap::new();
    let rows = if sqlite {
        let sql = "SELECT subject, newest, counts FROM quotas WHERE subject IN {}";
        where_in(conn, sql, &subjects).await?
    } else {
        let rows: Vec<Vec<Val>> = subjects
            .iter()
            .map(|s| {
                vec![
                    Val::Text((*s).to_owned()),
                    Val::Int(minute),
                    Val::Text(String::new()),
                ]
            })
            .collect();
        let tail = "ON CONFLICT (subject) DO UPDATE SET newest = quotas.newest \
                    RETURNING subject, newest, counts";
        write(
            conn,
            "quotas",
            &["subject", "newest", "counts"],
            &rows,
            tail,
        )
        .await?
    };
    for row in rows {
        let (s, newest, counts): (String, i64, String) = (
            row.try_get("subject")?,
            row.try_get("newest")?,
            row.try_get("counts")?,
        );
        out.insert(s, Window::decode(newest, &counts));
    }
    Ok(out)
}

/// Writes changed windows back.
async fn store(conn: &mut AnyConnection, windows: &[(&str, &Window)]) -> Result<(), sqlx::Error> {
    let rows: Vec<Vec<Val>> = windows
        .iter()
        .map(|(s, w)| {
            vec![
                Val::Text((*s).to_owned()),
                Val::Int(w.newest),
                Val::Text(w.encode()),
            ]
        })
        .collect();
    let cols = ["subject", "newest", "counts"];
    let tail =
        "ON CONFLICT (subject) DO UPDATE SET newest = excluded.newest, counts = excluded.counts";
    write(conn, "quotas", &cols, &rows, tail).await?;
    Ok(())
}

/// Deletes the rows of subjects idle for an hour, at most every ten minutes per process.
/// Runs in its own short transaction (never inside a write that counts, so it cannot take
/// part in a lock cycle). Failures are logged: an idle row only costs space.
pub async fn prune_if_due(db: &Db, now: i64) {
    let last = LAST_PRUNE.load(Ordering::Relaxed);
    if now - last < PRUNE_EVERY_MS
        || LAST_PRUNE
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
    {
        return;
    }
    if let Err(e) = prune(db, now).await {
        tracing::warn!(error = %e, "pruning quota windows failed");
    }
}

/// Deletes the rows of every subject whose newest slot left the hour by `now` (unix ms);
/// returns how many.
pub async fn prune(db: &Db, now: i64) -> DbResult<u64> {
    let oldest_kept = now.div_euclid(SLOT_MS) - SLOTS as i64 + 1;
    db.write(move |conn| {
        Box::pin(async move {
            let done = sqlx::query("DELETE FROM quotas WHERE newest < $1")
                .bind(oldest_kept)
                .execute(&mut *conn)
                .await?;
            Ok(done.rows_affected())
        })
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_hash_their_subject_under_the_secret() {
        let ip: IpAddr = "203.0.113.7".parse().unwrap();
        let l = Limits::default();
        let ip = Some(ip);
        let q = Quota::network_records(b"k", &l, ip);
        assert_eq!(q.subject.len(), 64);
        assert!(!q.subject.contains("203"));
        assert_eq!(
            q.subject,
            Quota::network_records(b"k", &l, Some("203.0.113.99".parse().unwrap())).subject
        );
        assert_ne!(q.subject, Quota::registrations(b"k", &l, ip).subject);
        assert_ne!(q.subject, Quota::network_records(b"other", &l, ip).subject);
        assert_ne!(
            Quota::network_observations(b"k", &l, ip, true).subject,
            Quota::network_observations(b"k", &l, ip, false).subject
        );
        assert_eq!(
            (
                Quota::network_observations(b"k", &l, ip, false).limit,
                Quota::registrations(b"k", &l, ip).limit
            ),
            (60, 10)
        );
    }
}
