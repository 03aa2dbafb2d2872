//! `POST /v1/telemetry/observe` (SPEC §4): the seed's universal contract, item by item.

use std::collections::HashMap;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use lowdown_core::defaults::AGENT_KEY_HEADER;
use lowdown_core::record::validate::Rejection;
use lowdown_core::telemetry::{check_observations, key_tier, unlisted_host};
use serde::Serialize;

use crate::db::agents::KeyHolder;
use crate::db::quota::{Draws, Quota};
use crate::db::telemetry::{store, Fate, Weighed};
use crate::db::{agents, catalog};
use crate::error::{AppError, AppResult};
use crate::extract::{JsonBody, Origin};
use crate::state::AppState;

/// One item of a telemetry answer: what was stored, or why not.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(untagged)]
#[schemars(rename = "ObservedItem")]
pub enum Item {
    /// Stored (or an acknowledged duplicate).
    Taken {
        /// The catalog service the host belongs to, if any.
        service_id: Option<String>,
        /// The weight it was given (agent key standing and catalog).
        weight: f64,
    },
    /// Refused: invalid, a private host, or over a budget.
    Refused {
        /// What is wrong.
        error: String,
    },
}

/// The answer to one observation (keys in alphabetical order, as always given).
#[derive(Serialize, schemars::JsonSchema)]
#[serde(untagged)]
#[schemars(rename = "Observed")]
pub enum Single {
    /// Stored.
    Taken {
        /// Always true.
        ok: bool,
        /// The catalog service the host belongs to, if any.
        service_id: Option<String>,
        /// The weight it was given.
        weight: f64,
    },
    /// Refused over a budget.
    Refused {
        /// What is wrong.
        error: String,
        /// Always true (the request itself was well-formed).
        ok: bool,
    },
}

/// The answer to an array of observations.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "ObservedBatch")]
pub struct Batch {
    /// Items stored, acknowledged duplicates included.
    pub accepted: usize,
    /// One answer per submitted item, in order.
    pub items: Vec<Item>,
    /// Always true.
    pub ok: bool,
    /// Items refused over a budget.
    pub rate_limited: usize,
}

/// Longest agent key header considered (longer is not a key this server issued).
const MAX_KEY_LEN: usize = 128;

/// Accepts one observation or an array, each item on its own: invalid items and private
/// or special-use hosts are refused (never stored), the others weighed by agent key
/// (the weight it has earned) and catalog (the core's weights) and counted against the
/// budgets of the key and of the client's network (a sliding hour; none from a trusted
/// network), which count observations, not requests: past one, the first items up to the
/// remaining budget are stored and the rest refused.
///
/// One object: 200 `{"ok":true,"weight":w,"service_id":id|null}`; 400 when it is refused;
/// 429 with `Retry-After` when over the limit. An array: 200 `{"ok":true,"accepted":N,
/// "rate_limited":M,"items":[{"weight","service_id"} | {"error"}]}` with `Retry-After`
/// when `M > 0`, where `accepted` counts stored items and acknowledged duplicates; 429 only
/// when none is accepted; 400 when no item is valid. An unknown or malformed agent key is
/// treated as anonymous: telemetry clients are fire-and-forget and must not fail on a
/// revoked key.
pub async fn post(
    State(state): State<AppState>,
    origin: Origin,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> AppResult<Response> {
    let checked = check_observations(&body).map_err(|e| AppError::bad_request(e.to_string()))?;
    let single = checked.single;
    let mut answers: Vec<Option<Item>> = Vec::with_capacity(checked.items.len());
    let mut rejected = Vec::new();
    let mut valid = Vec::new();
    for (index, item) in checked.items.into_iter().enumerate() {
        let refusal = match item {
            Ok(obs) => match unlisted_host(&obs.host, state.allow_private_hosts) {
                None => {
                    valid.push((index, obs));
                    answers.push(None);
                    continue;
                }
                Some(reason) => super::private_host_error("host", reason),
            },
            Err(e) => Rejection::new(index, "observation", &e).error,
        };
        answers.push(Some(Item::Refused {
            error: refusal.clone(),
        }));
        rejected.push(Rejection {
            index,
            error: refusal,
        });
    }
    if valid.is_empty() {
        return Err(AppError::none_valid("observation", single, rejected));
    }
    let holder = agent(&state, &headers).await?;
    let (secret, limits) = (state.db.caller_secret(), &state.limits);
    let now = state.now();
    let mut draws = Draws::default();
    let mut each = Vec::new();
    if !origin.trusted {
        if let Some(a) = &holder {
            each.push(draws.quota(Quota::key_observations(secret, limits, &a.agent_id)));
        }
        let q = Quota::network_observations(secret, limits, origin.ip, holder.is_some());
        each.push(draws.quota(q));
    }
    let mut items = Vec::with_capacity(valid.len());
    let mut positions = Vec::with_capacity(valid.len());
    // A batch usually repeats a few hosts: look each one up once.
    let mut known: HashMap<String, Option<String>> = HashMap::new();
    for (index, obs) in valid {
        let service_id = match known.get(&obs.host) {
            Some(s) => s.clone(),
            None => {
                let s = catalog::service_for_host(&state.db, &obs.host).await?;
                known.insert(obs.host.clone(), s.clone());
                s
            }
        };
        let tier = key_tier(
            holder.as_ref().map(|h| h.standing),
            service_id.is_some(),
            now,
        );
        positions.push(index);
        draws.item(each.clone());
        items.push(Weighed {
            obs,
            tier,
            service_id,
            agent_id: holder.as_ref().map(|h| h.agent_id.clone()),
            network: origin.network.clone(),
        });
    }
    let weighed: Vec<Item> = items
        .iter()
        .map(|w| Item::Taken {
            service_id: w.service_id.clone(),
            weight: w.tier.weight(),
        })
        .collect();
    // Counted and stored in one transaction: a refused request writes nothing.
    let stored = store(&state.db, items, now, &draws).await?;
    crate::db::quota::prune_if_due(&state.db, now).await;
    let (mut accepted, mut limited, mut retry_after) = (0, 0, 0);
    for ((index, fate), answer) in positions.into_iter().zip(&stored.fates).zip(weighed) {
        answers[index] = Some(match fate {
            Fate::Stored | Fate::Duplicate => {
                accepted += 1;
                answer
            }
            Fate::RateLimited(r) => {
                limited += 1;
                retry_after = retry_after.max(r.retry_after_secs);
                let q = &draws.quotas[r.budget];
                Item::Refused {
                    error: format!(
                        "rate limited: {} {} per hour for this {}; retry after {} s",
                        q.limit, q.what, q.scope, r.retry_after_secs
                    ),
                }
            }
        });
    }
    if single {
        let single = match answers.pop().flatten() {
            Some(Item::Taken { service_id, weight }) => Single::Taken {
                ok: true,
                service_id,
                weight,
            },
            Some(Item::Refused { error }) => Single::Refused { error, ok: true },
            None => {
                return Err(AppError::internal(
                    "telemetry: the single item has no answer",
                ))
            }
        };
        return Ok(Json(single).into_response());
    }
    let items = answers
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| AppError::internal("telemetry: an item has no answer"))?;
    let mut response = Json(Batch {
        accepted,
        items,
        ok: true,
        rate_limited: limited,
    })
    .into_response();
    if limited > 0 {
        crate::error::set_retry_after(response.headers_mut(), retry_after);
    }
    Ok(response)
}

/// The registered agent behind the request's `X-Agent-Key`, if any. An unknown or
/// malformed key counts as none.
pub(crate) async fn agent(state: &AppState, headers: &HeaderMap) -> AppResult<Option<KeyHolder>> {
    let key = headers
        .get(AGENT_KEY_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim);
    match key {
        Some(k) if k.starts_with("ak_") && k.len() <= MAX_KEY_LEN => {
            Ok(agents::agent_for_key(&state.db, k).await?)
        }
        _ => Ok(None),
    }
}
