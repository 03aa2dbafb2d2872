//! Which probe starts next: at most `total` probes in flight, at most `per_host` against
//! one host, hosts taken in turn. A slow or hanging host holds only its own slots, so it
//! never holds up the others.
//!
//! A remote's host is its URL's host, port ignored (one machine, whatever the port); a URL
//! without one is its own host. Jobs are regrouped by host in the order given and nothing
//! else is kept per job, so memory stays the size of the job list.

use std::collections::{BTreeMap, VecDeque};

use crate::telemetry::host_from_url;

/// Default number of probes in flight in total.
pub const DEFAULT_CONCURRENCY: usize = 128;
/// Default number of probes in flight against one host.
pub const DEFAULT_PER_HOST_CONCURRENCY: usize = 32;

/// How many probes may be in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// In total (at least 1).
    pub total: usize,
    /// Against one host (at least 1).
    pub per_host: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            total: DEFAULT_CONCURRENCY,
            per_host: DEFAULT_PER_HOST_CONCURRENCY,
        }
    }
}

/// A probe that may start now; hand its `host` back to [`Dispatch::finished`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    /// The target the remote belongs to.
    pub target: String,
    /// The remote URL.
    pub url: String,
    /// The host it counts against.
    pub host: String,
}

#[derive(Debug, Default)]
struct Host {
    queued: VecDeque<(String, String)>,
    running: usize,
}

/// The probes of a run, released under [`Limits`].
#[derive(Debug)]
pub struct Dispatch {
    limits: Limits,
    hosts: BTreeMap<String, Host>,
    /// Hosts with queued jobs and a free slot, in turn order.
    ready: VecDeque<String>,
    running: usize,
    queued: usize,
}

/// The host a remote URL counts against.
pub fn host_key(url: &str) -> String {
    host_from_url(url).unwrap_or_else(|| url.to_owned())
}

impl Dispatch {
    /// Plans `jobs` (`(target, url)`, in the order to start them within each host).
    pub fn new(jobs: Vec<(String, String)>, limits: Limits) -> Dispatch {
        let limits = Limits {
            total: limits.total.max(1),
            per_host: limits.per_host.max(1),
        };
        let queued = jobs.len();
        let mut hosts: BTreeMap<String, Host> = BTreeMap::new();
        let mut ready = VecDeque::new();
        for (target, url) in jobs {
            let key = host_key(&url);
            let host = hosts.entry(key.clone()).or_insert_with(|| {
                ready.push_back(key);
                Host::default()
            });
            host.queued.push_back((target, url));
        }
        Dispatch {
            limits,
            hosts,
            ready,
            running: 0,
            queued,
        }
    }

    /// The next probe that may start now, if any; it counts as running until
    /// [`Dispatch::finished`].
    pub fn start_next(&mut self) -> Option<Start> {
        if self.running >= self.limits.total {
            return None;
        }
        let key = self.ready.pop_front()?;
        let host = self.hosts.get_mut(&key)?;
        let (target, url) = host.queued.pop_front()?;
        host.running += 1;
        self.running += 1;
        self.queued -= 1;
        if !host.queued.is_empty() && host.running < self.limits.per_host {
            self.ready.push_back(key.clone());
        }
        Some(Start {
            target,
            url,
            host: key,
        })
    }

    /// A probe against `host` ended, freeing its slots.
    pub fn finished(&mut self, host: &str) {
        let Some(h) = self.hosts.get_mut(host) else {
            return;
        };
        let was_full = h.running == self.limits.per_host;
        h.running = h.running.saturating_sub(1);
        self.running = self.running.saturating_sub(1);
        // A host below its limit with work left is already in turn; a full one rejoins.
        if was_full && !h.queued.is_empty() {
            self.ready.push_back(host.to_owned());
        }
        if h.running == 0 && h.queued.is_empty() {
            self.hosts.remove(host);
        }
    }

    /// Probes running now.
    pub fn running(&self) -> usize {
        self.running
    }

    /// Probes not started yet.
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Hosts with probes running or queued.
    pub fn hosts(&self) -> usize {
        self.hosts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jobs(spec: &[(&str, usize)]) -> Vec<(String, String)> {
        spec.iter()
            .flat_map(|(host, n)| {
                (0..*n).map(move |i| (format!("mcp:{host}/{i}"), format!("https://{host}/mcp/{i}")))
            })
            .collect()
    }

    fn start_all(d: &mut Dispatch) -> Vec<Start> {
        std::iter::from_fn(|| d.start_next()).collect()
    }

    fn per_host(started: &[Start]) -> BTreeMap<String, usize> {
        started.iter().fold(BTreeMap::new(), |mut m, s| {
            *m.entry(s.host.clone()).or_default() += 1;
            m
        })
    }

    #[test]
    fn a_busy_host_takes_only_its_slots_and_the_others_fill_the_rest() {
        let limits = Limits {
            total: 5,
            per_host: 2,
        };
        let mut d = Dispatch::new(
            jobs(&[
                ("big.example.com", 10),
                ("a.example.com", 1),
                ("b.example.com", 3),
            ]),
            limits,
        );
        let started = start_all(&mut d);
        assert_eq!(started.len(), 5);
        let counts = per_host(&started);
        assert_eq!(counts["big.example.com"], 2);
        assert_eq!(counts["a.example.com"], 1);
        assert_eq!(counts["b.example.com"], 2);
        // The total is reached: nothing more until something ends.
        assert_eq!(d.start_next(), None);
        // A free slot in the total is not a slot on a host at its limit.
        d.finished("a.example.com");
        assert_eq!(d.start_next(), None);
        d.finished("big.example.com");
        assert_eq!(d.start_next().unwrap().host, "big.example.com");
    }

    #[test]
    fn every_job_starts_exactly_once_in_host_order() {
        let all = jobs(&[("x.example.com", 7), ("y.example.com:8443", 4)]);
        let mut d = Dispatch::new(
            all.clone(),
            Limits {
                total: 3,
                per_host: 2,
            },
        );
        let mut seen = Vec::new();
        while d.queued() + d.running() > 0 {
            let batch = start_all(&mut d);
            assert!(d.running() <= 3);
            assert!(per_host(&batch).values().all(|n| *n <= 2));
            for s in batch {
                d.finished(&s.host);
                seen.push((s.target, s.url));
            }
        }
        let mut want = all;
        want.sort();
        seen.sort();
        assert_eq!(seen, want);
        assert_eq!(d.hosts(), 0);
    }

    #[test]
    fn the_host_ignores_the_port_and_zero_limits_mean_one() {
        assert_eq!(
            host_key("https://Mcp.Example.com:8443/x"),
            "mcp.example.com"
        );
        assert_eq!(host_key("not a url"), "not a url");
        let mut d = Dispatch::new(
            jobs(&[("h.example.com", 2)]),
            Limits {
                total: 0,
                per_host: 0,
            },
        );
        assert!(d.start_next().is_some());
        assert_eq!(d.start_next(), None);
    }
}
