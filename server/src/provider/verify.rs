//! The server's own probe of a `protocol` directive's remote (SPEC §11), made when the
//! submission arrives, and what it says of the submission
//! ([`lowdown_core::benchmark::verify`]).
//!
//! At submit time rather than at claim: a claim that is released or runs out costs the
//! vendor's remote nothing, any server sharing the database can check any submission (no
//! probe result has to live in one process), and the probe is always inside the lease,
//! since the lease is checked before the probe and again in the transaction that records
//! the result. The probe is the Scanner's ([`crate::scanner::http::probe`]) over the
//! Scanner's client: https only, no userinfo, no redirects, every resolved address checked
//! at connect time; loopback only with `--unsafe-allow-loopback` (tests).

use std::sync::{Arc, OnceLock};

use lowdown_core::benchmark::submission::Checked;
use lowdown_core::benchmark::verify::{verify, Verdict};
use lowdown_core::scanner::target::Policy;
use lowdown_core::scanner::ProbeResult;

use crate::error::{AppError, AppResult};
use crate::scanner::net::{Net, SystemLookup};
use crate::state::AppState;

/// The client the server's own probes go through, built at first use under the policy the
/// deployment runs with.
#[derive(Default)]
pub struct Prober {
    net: OnceLock<Net>,
}

impl Prober {
    fn net(&self, policy: Policy) -> AppResult<&Net> {
        if let Some(net) = self.net.get() {
            return Ok(net);
        }
        let net = Net::new(policy, Arc::new(SystemLookup), env!("CARGO_PKG_VERSION"))
            .map_err(|e| AppError::internal(format!("probe client: {e}")))?;
        // A racing first use may have built its own; either is the same client.
        Ok(self.net.get_or_init(|| net))
    }
}

/// The server's probe of `remote_url`, under the deployment's SSRF policy.
pub async fn probe(state: &AppState, remote_url: &str) -> AppResult<ProbeResult> {
    let policy = Policy {
        allow_loopback: state.prowl.config.allow_loopback,
    };
    let net = state.prober.net(policy)?;
    Ok(crate::scanner::http::probe(net, remote_url, false).await)
}

/// Probes the directive's remote and judges `checked` by what came back.
pub async fn check(state: &AppState, remote_url: &str, checked: &Checked) -> AppResult<Verdict> {
    let seen = probe(state, remote_url).await?;
    Ok(verify(checked, &seen))
}
