//! The spool's and node.json's plans (SPEC §3, §3.5): the core's `spool::Claim`,
//! `spool::Write` and `identity::Load`. Each step is JSON text `{"step": …}` (see the core's
//! `files::Step`); the host performs it and feeds back what happened: `feed(result, text)`
//! with `result` one of `ok`, `missing`, `exists`, `failed` (`text`: a read's text), or
//! `listed(names, mtimesMs)` (`NaN`: unknown) after a `list` step.

use crate::errors::{invalid_argument, Result};
use lowdown_core::files::{Outcome, Step};
use lowdown_core::identity::{self, Load};
use lowdown_core::record::spool::{Claim, Write};

#[cfg(not(target_arch = "wasm32"))]
use napi_derive::napi;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen::prelude::wasm_bindgen;

fn json(step: &Step) -> String {
    serde_json::to_string(step).unwrap_or_default()
}

fn outcome(result: &str, text: Option<String>) -> Result<Outcome> {
    Outcome::named(result, text).ok_or_else(|| invalid_argument("unknown result"))
}

fn listing(names: Vec<String>, mtimes_ms: Vec<f64>) -> Outcome {
    let mtimes = mtimes_ms
        .into_iter()
        .map(|m| Some(m).filter(|m| !m.is_nan()));
    Outcome::Listing(
        names
            .into_iter()
            .zip(mtimes.chain(std::iter::repeat(None)))
            .collect(),
    )
}

/// `start` and `feed` of the plan class `$js` (exported as `$name`) over its `inner`.
macro_rules! steps {
    ($name:literal $js:ident) => {
        #[cfg_attr(not(target_arch = "wasm32"), napi)]
        #[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_class = $name))]
        impl $js {
            /// The first step.
            #[cfg_attr(not(target_arch = "wasm32"), napi)]
            #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
            pub fn start(&mut self) -> String {
                json(&self.inner.start())
            }

            /// What the last step did; the next step.
            #[cfg_attr(not(target_arch = "wasm32"), napi)]
            #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
            pub fn feed(&mut self, result: String, text: Option<String>) -> Result<String> {
                Ok(json(&self.inner.feed(outcome(&result, text)?)))
            }
        }
    };
}

/// Which spool file this host delivers next: `list`, `claim`, `read`, `deliver` (then
/// `finish`), `delete`, `rename`, `done`.
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "SpoolClaim"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "SpoolClaim"))]
pub struct JsSpoolClaim {
    inner: Claim,
}

#[cfg_attr(not(target_arch = "wasm32"), napi)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_class = "SpoolClaim"))]
impl JsSpoolClaim {
    /// A plan for the process `pid` at `nowMs`.
    #[cfg_attr(not(target_arch = "wasm32"), napi(constructor))]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen(constructor))]
    pub fn new(pid: u32, now_ms: f64) -> JsSpoolClaim {
        JsSpoolClaim {
            inner: Claim::new(pid, now_ms),
        }
    }

    /// The directory's names and their modification times; the next step.
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn listed(&mut self, names: Vec<String>, mtimes_ms: Vec<f64>) -> String {
        json(&self.inner.feed(listing(names, mtimes_ms)))
    }

    /// After `deliver`: whether the records were taken; the next step.
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn finish(&mut self, taken: bool) -> String {
        json(&self.inner.finish(taken))
    }
}

steps!("SpoolClaim" JsSpoolClaim);

/// How this host spools records: `write`, `rename`, `list`, `read`, `delete`, `done`,
/// `failed`.
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "SpoolWrite"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "SpoolWrite"))]
pub struct JsSpoolWrite {
    inner: Write,
}

#[cfg_attr(not(target_arch = "wasm32"), napi)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_class = "SpoolWrite"))]
impl JsSpoolWrite {
    /// A plan for `records` (JSON texts); `seq` is the last sequence number this process used
    /// (0 at first), `token` a random token.
    #[cfg_attr(not(target_arch = "wasm32"), napi(constructor))]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen(constructor))]
    pub fn new(
        records: Vec<String>,
        seq: f64,
        pid: u32,
        now_ms: f64,
        now_iso: String,
        token: String,
    ) -> JsSpoolWrite {
        JsSpoolWrite {
            inner: Write::new(&records, seq as u64, pid, now_ms as u64, &now_iso, &token),
        }
    }

    /// The last sequence number this plan's files use (the next plan's `seq`).
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn seq(&self) -> f64 {
        self.inner.seq() as f64
    }

    /// The directory's names and their modification times; the next step.
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn listed(&mut self, names: Vec<String>, mtimes_ms: Vec<f64>) -> String {
        json(&self.inner.feed(listing(names, mtimes_ms)))
    }
}

steps!("SpoolWrite" JsSpoolWrite);

/// How this host loads `node.json`: `read`, `write`, `link`, `rename`, `delete`, then
/// `identity` (`{node_id, created_at, created}`) or `failed`.
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "NodeIdentityLoad"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "NodeIdentityLoad"))]
pub struct JsNodeIdentityLoad {
    inner: Load,
}

#[cfg_attr(not(target_arch = "wasm32"), napi)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_class = "NodeIdentityLoad"))]
impl JsNodeIdentityLoad {
    /// A plan whose fresh identity comes from 6 random bytes (12 hex digits) and the clock;
    /// `pid` and a random `token` name its temporary file. Throws `invalid_argument` when
    /// `randomHex` is not 12 hex digits.
    #[cfg_attr(not(target_arch = "wasm32"), napi(constructor))]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen(constructor))]
    pub fn new(
        random_hex: String,
        now_iso: String,
        pid: u32,
        token: String,
    ) -> Result<JsNodeIdentityLoad> {
        let fresh = identity::new_identity_hex(&random_hex, &now_iso)
            .ok_or_else(|| invalid_argument("random_hex must be 12 hex digits"))?;
        Ok(JsNodeIdentityLoad {
            inner: Load::new(fresh, pid, &token),
        })
    }
}

steps!("NodeIdentityLoad" JsNodeIdentityLoad);
