//! What is still waiting for an answer: a map per direction, kept in arrival order and
//! bounded, so that a peer that never answers cannot grow it without end.

use std::collections::BTreeMap;

use super::Direction;

/// Most requests (and, apart, most tasks) waiting per direction (SPEC §3.1). Past it, the
/// oldest is given up.
pub const MAX_PENDING: usize = 10_000;

/// Entries keyed by (direction, key), each with its arrival number.
#[derive(Debug)]
pub(super) struct Bounded<K, V> {
    items: BTreeMap<(Direction, K), (u64, V)>,
    order: BTreeMap<(Direction, u64), K>,
    counts: [usize; 2],
}

impl<K, V> Default for Bounded<K, V> {
    fn default() -> Self {
        Bounded {
            items: BTreeMap::new(),
            order: BTreeMap::new(),
            counts: [0, 0],
        }
    }
}

fn slot(d: Direction) -> usize {
    match d {
        Direction::ClientToServer => 0,
        Direction::ServerToClient => 1,
    }
}

impl<K: Ord + Clone, V> Bounded<K, V> {
    /// Adds `value` under `key`, arrived as number `seq` (increasing). Returns the entry it
    /// replaced (same direction and key), and the oldest entry of the direction when the
    /// direction held more than [`MAX_PENDING`].
    pub fn insert(
        &mut self,
        direction: Direction,
        key: K,
        seq: u64,
        value: V,
    ) -> (Option<V>, Option<V>) {
        let replaced = self.remove(direction, &key);
        self.order.insert((direction, seq), key.clone());
        self.items.insert((direction, key), (seq, value));
        self.counts[slot(direction)] += 1;
        let evicted = if self.counts[slot(direction)] > MAX_PENDING {
            let oldest = self
                .order
                .range((direction, 0)..=(direction, u64::MAX))
                .next()
                .map(|(_, k)| k.clone());
            oldest.and_then(|k| self.remove(direction, &k))
        } else {
            None
        };
        (replaced, evicted)
    }

    /// Takes the entry under `key`.
    pub fn remove(&mut self, direction: Direction, key: &K) -> Option<V> {
        // BTreeMap cannot look up a borrowed tuple, so the key is cloned for the lookup.
        let (seq, value) = self.items.remove(&(direction, key.clone()))?;
        self.order.remove(&(direction, seq));
        self.counts[slot(direction)] -= 1;
        Some(value)
    }

    /// Whether an entry is under `key`.
    pub fn contains(&self, direction: Direction, key: &K) -> bool {
        self.items.contains_key(&(direction, key.clone()))
    }

    /// Takes every entry, each with its direction and arrival number.
    pub fn drain(&mut self) -> impl Iterator<Item = (Direction, u64, V)> {
        self.order.clear();
        self.counts = [0, 0];
        std::mem::take(&mut self.items)
            .into_iter()
            .map(|((d, _), (seq, v))| (d, seq, v))
    }

    /// Number of entries, both directions.
    pub fn len(&self) -> usize {
        self.items.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_of_a_direction_is_evicted_past_the_bound() {
        let mut b: Bounded<u64, u64> = Bounded::default();
        let c2s = Direction::ClientToServer;
        b.insert(Direction::ServerToClient, 0, 0, 0);
        for i in 1..=MAX_PENDING as u64 {
            assert_eq!(b.insert(c2s, i, i, i), (None, None));
        }
        assert_eq!(
            b.insert(c2s, 1, 20_000, 99),
            (Some(1), None),
            "replaced, not evicted"
        );
        assert_eq!(
            b.insert(c2s, 77_777, 20_001, 7),
            (None, Some(2)),
            "oldest evicted"
        );
        assert_eq!(b.len(), MAX_PENDING + 1);
        assert!(
            b.contains(Direction::ServerToClient, &0),
            "other direction untouched"
        );
    }
}
