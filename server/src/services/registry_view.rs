//! The Registry-format view (`GET /v0.1/servers`, issue 26 item 5): the MCP Registry's
//! own answer shapes (`ServerList`, `ServerResponse`), with each entry's server.json and
//! official `_meta` exactly as the Registry served them to the Scanner, and Lowdown's facts
//! beside them under [`FACTS_KEY`] in `_meta`. Facts only, never a score: a client that
//! reads a Registry reads this unchanged and may ignore the key it does not know.

use futures_util::{StreamExt, TryStreamExt};
use lowdown_core::aggregate::{self, Confidence};
use lowdown_core::scanner::changes::DefinitionChanges;
use lowdown_core::scanner::history::Latest;
use lowdown_core::scanner::packages::PackageItem;
use lowdown_core::scanner::registry::OFFICIAL_META;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::db::registry_view::{self, Document, PageQuery};
use crate::db::{reputation, DbResult};
use crate::services::source::{self, Source};
use crate::state::AppState;

/// The `_meta` key of Lowdown's facts, after the Registry's own convention of a
/// reverse-DNS namespace and a name (`io.modelcontextprotocol.registry/official`).
pub const FACTS_KEY: &str = "dev.lowdown/facts";
/// Entries per page when `limit` is not given (the Registry's default).
pub const DEFAULT_LIMIT: u32 = 30;
/// Most entries per page (the Registry's maximum).
pub const MAX_LIMIT: u32 = 100;
/// Entries whose facts are read at once (each is a handful of queries).
const CONCURRENT_FACTS: usize = 8;

/// `ServerList`: one page of servers.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[schemars(rename = "RegistryServerList")]
pub struct ServerList {
    /// The page, in name order.
    pub servers: Vec<ServerResponse>,
    /// Paging.
    pub metadata: Metadata,
}

/// The list's `metadata`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// The `cursor` of the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Servers on this page.
    pub count: u64,
}

/// `ServerResponse`: one server.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[schemars(rename = "RegistryServerResponse")]
pub struct ServerResponse {
    /// The server.json exactly as the MCP Registry served it (key order aside).
    #[schemars(extend("type" = "object"))]
    pub server: Value,
    /// `io.modelcontextprotocol.registry/official` as the Registry served it, and
    /// `dev.lowdown/facts` ([`Facts`]).
    #[serde(rename = "_meta")]
    #[schemars(with = "MetaSchema")]
    pub meta: Map<String, Value>,
}

/// What `_meta` holds (for the OpenAPI document; the answer is the map itself).
#[derive(schemars::JsonSchema)]
#[allow(dead_code, reason = "a schema only: the answer serialises the map")]
struct MetaSchema {
    /// The Registry's own metadata, as it served it.
    #[serde(rename = "io.modelcontextprotocol.registry/official")]
    #[schemars(extend("type" = "object"))]
    official: Value,
    /// Lowdown's facts.
    #[serde(rename = "dev.lowdown/facts")]
    facts: Facts,
}

/// Lowdown's facts about one Registry server, each with its population named.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[schemars(rename = "RegistryFacts")]
pub struct Facts {
    /// The Lowdown target (`mcp:` + name); `GET /api/reputation/{target}` has the rest.
    pub target: String,
    /// What the Lowdown Scanner observed (Scanner observations, never interactions).
    pub scanner: ScannerFacts,
    /// What npm and PyPI say about the declared packages (others listed as unchecked).
    pub packages: Vec<PackageItem>,
    /// Agent-reported interactions.
    pub interactions: InteractionFacts,
    /// Where the facts come from and how to cite them.
    pub source: Source,
}

/// The Scanner's latest observation and definition changes.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[schemars(rename = "RegistryScannerFacts")]
pub struct ScannerFacts {
    /// At least one observation exists.
    pub observed: bool,
    /// A member of the Scanner's sample; outside it nothing is said about the server.
    pub in_sample: bool,
    /// The last observation (ISO-8601), when any.
    pub last_observed_at: Option<String>,
    /// The latest day's best observation, when any.
    pub latest: Option<Latest>,
    /// Tool definition (schema, description, name hash) changes over 30 days, for members.
    pub definition_changes: Option<DefinitionChanges>,
}

/// Interaction figures: `interactions` and `by_source` count every source; the rest are
/// organic only (SPEC §5).
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[schemars(rename = "RegistryInteractionFacts")]
pub struct InteractionFacts {
    /// Tool interactions of every source.
    pub interactions: u64,
    /// Organic success + partial + failure.
    pub rated_interactions: u64,
    /// Organic successes / rated, 3 decimals; null when nothing is rated.
    #[schemars(range(min = 0, max = 1))]
    pub success_rate: Option<f64>,
    /// none, low, medium or high (rated interactions and networks).
    pub confidence: Confidence,
    /// Interactions per source, never mixed.
    pub by_source: BySource,
}

/// Interactions per source.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[schemars(rename = "RegistryBySource")]
pub struct BySource {
    /// Agent-reported in real use.
    pub organic: u64,
    /// Seeded.
    pub seeded: u64,
    /// Synthetic.
    pub synthetic: u64,
}

/// Why a name is not answered.
#[derive(Debug)]
pub enum Missing {
    /// The last successful Registry read did not list it (or Lowdown never read it).
    Server,
    /// Listed, at another version.
    Version,
}

/// One page after `q.after`.
pub async fn list(state: &AppState, q: PageQuery, now: i64) -> DbResult<ServerList> {
    let limit = q.limit as usize;
    let mut docs = registry_view::page(&state.db, &q).await?;
    // The read asks for one entry more than the page holds: when it came, a page follows,
    // and its cursor is this page's last name.
    let more = docs.len() > limit;
    docs.truncate(limit);
    let next_cursor = more.then(|| docs.last().map(|d| d.name.clone())).flatten();
    let servers: Vec<ServerResponse> = futures_util::stream::iter(docs)
        .map(|d| response(state, d, now))
        .buffered(CONCURRENT_FACTS)
        .try_collect()
        .await?;
    Ok(ServerList {
        metadata: Metadata {
            next_cursor,
            count: servers.len() as u64,
        },
        servers,
    })
}

/// The server `name`, at `version` (`None` or `latest`: the one stored, which is the
/// Registry's latest).
pub async fn one(
    state: &AppState,
    name: &str,
    version: Option<&str>,
    now: i64,
) -> DbResult<Result<ServerResponse, Missing>> {
    let Some(doc) = registry_view::one(&state.db, name).await? else {
        return Ok(Err(Missing::Server));
    };
    if let Some(v) = version.filter(|v| *v != "latest") {
        let server: Value = serde_json::from_str(&doc.server_json).unwrap_or_default();
        if server.get("version").and_then(Value::as_str) != Some(v) {
            return Ok(Err(Missing::Version));
        }
    }
    Ok(Ok(response(state, doc, now).await?))
}

async fn response(state: &AppState, doc: Document, now: i64) -> DbResult<ServerResponse> {
    let facts = facts(state, &doc.name, now).await?;
    // Stored by the Scanner from a parsed answer, so both are JSON; an unreadable one
    // (never expected) is served as an empty object rather than failing the page.
    let parse = |text: &str| {
        serde_json::from_str::<Value>(text).unwrap_or_else(|_| Value::Object(Map::new()))
    };
    let mut meta = Map::new();
    meta.insert(OFFICIAL_META.to_owned(), parse(&doc.official_json));
    meta.insert(
        FACTS_KEY.to_owned(),
        serde_json::to_value(facts).map_err(crate::db::DbError::internal)?,
    );
    Ok(ServerResponse {
        server: parse(&doc.server_json),
        meta,
    })
}

async fn facts(state: &AppState, name: &str, now: i64) -> DbResult<Facts> {
    let target = format!("mcp:{name}");
    let db = &state.db;
    let (counts, who, blocks) = tokio::try_join!(
        reputation::counts(db, &target, None),
        reputation::independence(db, &target),
        crate::scanner::answer::blocks(db, &target, now),
    )?;
    let s = aggregate::summarize(&counts, &who);
    let (scanner, packages) = match blocks {
        Some(b) => {
            let seen = b.scanner.seen;
            (
                ScannerFacts {
                    observed: b.scanner.observed,
                    in_sample: b.scanner.in_sample,
                    last_observed_at: seen.as_ref().and_then(|s| s.last_observed_at.clone()),
                    latest: seen.and_then(|s| s.latest),
                    definition_changes: b.scanner.detail.map(|d| d.definition_changes),
                },
                b.packages,
            )
        }
        None => (
            ScannerFacts {
                observed: false,
                in_sample: false,
                last_observed_at: None,
                latest: None,
                definition_changes: None,
            },
            Vec::new(),
        ),
    };
    let c = &s.by_source;
    Ok(Facts {
        scanner,
        packages,
        interactions: InteractionFacts {
            interactions: s.interactions,
            rated_interactions: s.rated_interactions,
            success_rate: s.success_rate,
            confidence: s.confidence,
            by_source: BySource {
                organic: c.organic.interactions(),
                seeded: c.seeded.interactions(),
                synthetic: c.synthetic.interactions(),
            },
        },
        source: source::block(state, now, &target),
        target,
    })
}
