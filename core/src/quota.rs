//! Write quotas (SPEC §4, §5): how much one node id, agent key or network may write in a
//! sliding hour, and which items of a request fit.
//!
//! Every public write (interaction records, telemetry observations, agent registrations)
//! draws on several budgets at once, one per *subject*: the node id a record names, the
//! agent key the request carries, and the client's network ([`network_of`]: an IPv4 /24,
//! an IPv6 /48). An item is taken only when every budget it draws on has room; the first
//! items of a request up to the tightest budget are taken, the rest refused by index.
//!
//! Decisions:
//! - The hour slides at one-minute resolution ([`Window`]): a subject's use is the sum of
//!   its last 60 one-minute slots (the current one included), so a burst at the end of one
//!   clock hour cannot be followed by a fresh budget at the start of the next.
//! - A malformed stored window reads as empty (a fresh budget), never as an error: quota
//!   rows are bookkeeping, and a corrupt one must not stop writes.
//! - `Retry-After` is the time until the tightest exhausted budget has room for one more
//!   item, in whole seconds, at least 1.

use std::net::IpAddr;

/// One slot of a [`Window`], in milliseconds.
pub const SLOT_MS: i64 = 60_000;
/// Slots in a window: an hour of minutes.
pub const SLOTS: usize = 60;

/// Interaction records one node id may write per hour. A CI runner making 20,000 tool
/// calls an hour through one proxy writes about 24,000 records (its sessions' protocol
/// requests besides the calls): this leaves it 2.5 times that.
pub const RECORDS_PER_NODE_PER_HOUR: u32 = 60_000;
/// Interaction records sent with one agent key per hour.
pub const RECORDS_PER_KEY_PER_HOUR: u32 = 60_000;
/// Interaction records one network may write per hour, whatever node ids or keys it uses:
/// several busy runners behind one NAT.
pub const RECORDS_PER_NETWORK_PER_HOUR: u32 = 200_000;
/// Telemetry observations all the agent keys of one network may send per hour together
/// (each key also has its own 600): one address can no longer multiply its budget with
/// free keys.
pub const OBSERVATIONS_PER_NETWORK_PER_HOUR: u32 = 3_000;
/// Gateway calls one agent may make per hour, to all services together: a sampled agent
/// calls through the gateway for a whole salt day, so this bounds what one key costs the
/// operator's vendor accounts.
pub const GATEWAY_CALLS_PER_AGENT_PER_HOUR: u32 = 600;
/// Gateway calls all the agents of one network may make per hour together: free
/// registrations cannot multiply one address's share.
pub const GATEWAY_CALLS_PER_NETWORK_PER_HOUR: u32 = 1_200;

/// The network of a client address, as quotas, caps and independence figures count it:
/// `ip4:a.b.c.0/24` (IPv4-mapped IPv6 included) or `ip6:xxxx:xxxx:xxxx::/48`.
///
/// One holder usually has a whole IPv4 /24 or IPv6 /48 (a home, an office, a cloud
/// tenant's subnet), so many addresses of one network are one participant, not many.
pub fn network_of(ip: IpAddr) -> String {
    match ip.to_canonical() {
        IpAddr::V4(a) => {
            let o = a.octets();
            format!("ip4:{}.{}.{}.0/24", o[0], o[1], o[2])
        }
        IpAddr::V6(a) => {
            let s = a.segments();
            format!("ip6:{:x}:{:x}:{:x}::/48", s[0], s[1], s[2])
        }
    }
}

/// The minute index of a unix-millisecond time.
fn minute_of(now_ms: i64) -> i64 {
    now_ms.div_euclid(SLOT_MS)
}

/// One subject's use over the last hour, in one-minute slots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Window {
    /// The minute index of `counts[0]` (unix ms / 60,000).
    pub newest: i64,
    /// Units used per minute, newest first: `counts[i]` belongs to minute `newest - i`.
    /// At most [`SLOTS`] long; trailing zeros are not kept.
    pub counts: Vec<u32>,
}

impl Window {
    /// A window stored as its newest minute and its counts (`"12,0,3"`, newest first).
    /// Anything malformed reads as an empty window.
    pub fn decode(newest: i64, counts: &str) -> Window {
        if counts.is_empty() {
            return Window::default();
        }
        let parsed: Option<Vec<u32>> = counts
            .split(',')
            .take(SLOTS)
            .map(|c| c.parse().ok())
            .collect();
        match parsed {
            Some(counts) => Window { newest, counts },
            None => Window::default(),
        }
    }

    /// The counts as stored (see [`Window::decode`]).
    pub fn encode(&self) -> String {
        let mut s = String::with_capacity(self.counts.len() * 3);
        for (i, c) in self.counts.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&c.to_string());
        }
        s
    }

    /// Moves the window to the minute of `now_ms`: slots that left the hour are dropped.
    fn slide(&mut self, now_ms: i64) {
        let now = minute_of(now_ms);
        if self.counts.is_empty() {
            self.newest = now;
            return;
        }
        let age = now - self.newest;
        if age <= 0 {
            return;
        }
        if age >= SLOTS as i64 {
            self.counts.clear();
        } else {
            let mut shifted = vec![0; age as usize];
            shifted.extend_from_slice(&self.counts);
            shifted.truncate(SLOTS);
            self.counts = shifted;
        }
        self.newest = now;
        while self.counts.last() == Some(&0) {
            self.counts.pop();
        }
    }

    /// Units used in the hour ending at `now_ms`.
    pub fn used(&self, now_ms: i64) -> u64 {
        let now = minute_of(now_ms);
        self.counts
            .iter()
            .enumerate()
            .filter(|(i, _)| now - (self.newest - *i as i64) < SLOTS as i64)
            .map(|(_, c)| u64::from(*c))
            .sum()
    }

    /// Records `n` units used at `now_ms`.
    pub fn add(&mut self, now_ms: i64, n: u32) {
        self.slide(now_ms);
        if n == 0 {
            return;
        }
        if self.counts.is_empty() {
            self.counts.push(0);
        }
        // A clock that stepped back lands in the newest slot.
        self.counts[0] = self.counts[0].saturating_add(n);
    }

    /// Seconds from `now_ms` until the window has room for one more unit under `limit`
    /// (rounded up, at least 1).
    pub fn retry_after_secs(&self, now_ms: i64, limit: u32) -> u64 {
        let mut used = self.used(now_ms);
        let now = minute_of(now_ms);
        let mut at_ms = now_ms;
        // Oldest slot first: each frees its units when it leaves the hour.
        for (i, c) in self.counts.iter().enumerate().rev() {
            if used < u64::from(limit) {
                break;
            }
            let minute = self.newest - i as i64;
            if now - minute >= SLOTS as i64 {
                continue;
            }
            at_ms = (minute + SLOTS as i64) * SLOT_MS;
            used -= u64::from(*c);
        }
        let wait = (at_ms - now_ms).max(1000);
        (wait as u64).div_ceil(1000)
    }

    /// Whether nothing in the window counts at `now_ms` any more (the row can go).
    pub fn is_idle(&self, now_ms: i64) -> bool {
        self.used(now_ms) == 0
    }
}

/// One budget a request draws on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    /// Its use so far.
    pub window: Window,
    /// Units allowed per sliding hour.
    pub limit: u32,
}

/// Why [`take`] refused an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    /// The first of its budgets that had no room.
    pub budget: usize,
    /// Seconds until every one of its budgets that had no room has room again.
    pub retry_after_secs: u64,
}

/// What [`take`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taken {
    /// Per item, in order: `None` when taken, else why not.
    pub items: Vec<Option<Refused>>,
    /// Which budgets changed (their windows need storing).
    pub changed: Vec<bool>,
}

impl Taken {
    /// Whether item `i` was taken.
    pub fn taken(&self, i: usize) -> bool {
        self.items[i].is_none()
    }
}

/// Takes items in order at `now_ms`: item `i` draws one unit from each budget in
/// `items[i]` (indices into `budgets`), and is taken only when all of them have room.
/// Taken items are added to the budgets' windows; a refused one uses nothing.
pub fn take(budgets: &mut [Budget], items: &[Vec<usize>], now_ms: i64) -> Taken {
    let mut used: Vec<u64> = budgets.iter().map(|b| b.window.used(now_ms)).collect();
    let mut added = vec![0u32; budgets.len()];
    let mut full_for: Vec<Option<Vec<usize>>> = Vec::with_capacity(items.len());
    for item in items {
        let full: Vec<usize> = item
            .iter()
            .copied()
            .filter(|b| used[*b] >= u64::from(budgets[*b].limit))
            .collect();
        if full.is_empty() {
            for b in item {
                used[*b] += 1;
                added[*b] += 1;
            }
            full_for.push(None);
        } else {
            full_for.push(Some(full));
        }
    }
    let mut changed = vec![false; budgets.len()];
    for (i, b) in budgets.iter_mut().enumerate() {
        if added[i] > 0 {
            b.window.add(now_ms, added[i]);
            changed[i] = true;
        }
    }
    let items = full_for
        .into_iter()
        .map(|full| {
            full.map(|full| Refused {
                budget: full[0],
                retry_after_secs: full
                    .iter()
                    .map(|b| {
                        budgets[*b]
                            .window
                            .retry_after_secs(now_ms, budgets[*b].limit)
                    })
                    .max()
                    .unwrap_or(1),
            })
        })
        .collect();
    Taken { items, changed }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_796_000_000_000;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn networks_are_v4_24s_and_v6_48s() {
        assert_eq!(network_of(ip("203.0.113.7")), "ip4:203.0.113.0/24");
        assert_eq!(
            network_of(ip("203.0.113.200")),
            network_of(ip("203.0.113.7"))
        );
        assert_ne!(network_of(ip("203.0.114.7")), network_of(ip("203.0.113.7")));
        assert_eq!(network_of(ip("::ffff:192.0.2.9")), "ip4:192.0.2.0/24");
        assert_eq!(network_of(ip("2001:db8:1:2::1")), "ip6:2001:db8:1::/48");
        assert_eq!(
            network_of(ip("2001:db8:1:ffff::9")),
            network_of(ip("2001:db8:1:2::1"))
        );
        assert_ne!(
            network_of(ip("2001:db8:2::1")),
            network_of(ip("2001:db8:1::1"))
        );
    }

    #[test]
    fn the_hour_slides_by_the_minute() {
        let mut w = Window::default();
        w.add(T0, 10);
        w.add(T0 + 30 * SLOT_MS, 5);
        assert_eq!(w.used(T0 + 30 * SLOT_MS), 15);
        // The first slot leaves the hour 60 minutes after its minute began.
        let first_minute_start = T0.div_euclid(SLOT_MS) * SLOT_MS;
        assert_eq!(w.used(first_minute_start + 60 * SLOT_MS - 1), 15);
        assert_eq!(w.used(first_minute_start + 60 * SLOT_MS), 5);
        assert_eq!(w.used(T0 + 91 * SLOT_MS), 0);
        assert!(w.is_idle(T0 + 91 * SLOT_MS));
        // Unlike a fixed window, a burst cannot be repeated just after a clock hour turns.
        let mut b = Window::default();
        let late = (T0 / 3_600_000 + 1) * 3_600_000 - 1000;
        b.add(late, 100);
        assert_eq!(b.used(late + 2000), 100);
    }

    #[test]
    fn windows_round_trip_and_garbage_reads_as_empty() {
        let mut w = Window::default();
        w.add(T0, 3);
        w.add(T0 + 2 * SLOT_MS, 4);
        let back = Window::decode(w.newest, &w.encode());
        assert_eq!(back, w);
        assert_eq!(w.encode(), "4,0,3");
        assert_eq!(Window::decode(5, "1,x"), Window::default());
        assert_eq!(Window::decode(5, "-1"), Window::default());
        assert_eq!(Window::decode(5, ""), Window::default());
        // Far longer than an hour: only the hour is read.
        let long = vec!["1"; 500].join(",");
        assert_eq!(Window::decode(minute_of(T0), &long).used(T0), 60);
    }

    #[test]
    fn retry_after_is_when_the_oldest_needed_slot_leaves() {
        let mut w = Window::default();
        w.add(T0, 6);
        w.add(T0 + 10 * SLOT_MS, 4);
        let now = T0 + 20 * SLOT_MS;
        let first_leaves = (minute_of(T0) + 60) * SLOT_MS;
        assert_eq!(
            w.retry_after_secs(now, 10),
            ((first_leaves - now) as u64).div_ceil(1000)
        );
        // Needing the second slot too: when it leaves.
        let second_leaves = (minute_of(T0) + 70) * SLOT_MS;
        assert_eq!(
            w.retry_after_secs(now, 4),
            ((second_leaves - now) as u64).div_ceil(1000)
        );
        assert_eq!(w.retry_after_secs(now, 100), 1);
    }

    #[test]
    fn items_are_taken_in_order_while_every_budget_has_room() {
        let mut budgets = vec![
            Budget {
                window: Window::default(),
                limit: 3,
            },
            Budget {
                window: Window::default(),
                limit: 10,
            },
            Budget {
                window: Window::default(),
                limit: 2,
            },
        ];
        // Items 0-3 draw on budgets 0 and 1; item 4 on 2 and 1; items 5-6 on 2.
        let items = vec![
            vec![0, 1],
            vec![0, 1],
            vec![0, 1],
            vec![0, 1],
            vec![2, 1],
            vec![2],
            vec![2],
        ];
        let t = take(&mut budgets, &items, T0);
        let taken: Vec<bool> = (0..items.len()).map(|i| t.taken(i)).collect();
        assert_eq!(taken, [true, true, true, false, true, true, false]);
        assert_eq!(t.items[3].unwrap().budget, 0);
        assert_eq!(t.items[6].unwrap().budget, 2);
        assert_eq!(budgets[0].window.used(T0), 3);
        assert_eq!(budgets[1].window.used(T0), 4);
        assert_eq!(budgets[2].window.used(T0), 2);
        assert_eq!(t.changed, [true, true, true]);
        let retry = t.items[3].unwrap().retry_after_secs;
        assert!((3540..=3600).contains(&retry), "{retry}");
        // Nothing refused: no Retry-After.
        let mut fresh = vec![Budget {
            window: Window::default(),
            limit: 5,
        }];
        let t = take(&mut fresh, &[vec![0]], T0);
        assert_eq!(t.items, [None]);
    }
}
