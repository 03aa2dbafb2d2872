//! What ingest has seen committed to insert-only tables, so it skips writing it again.

/// What ingest registers once and never changes: rows of `targets`.
#[derive(Default)]
pub(crate) struct Known {
    /// Target names.
    pub(crate) targets: KnownKeys,
}

/// Keys known to be stored in an insert-only table. Such tables only grow, so a key in
/// here is there; keys are added only after the transaction that wrote them committed.
/// Bounded: emptied when full, which only costs a few re-registrations (`ON CONFLICT DO
/// NOTHING`).
#[derive(Default)]
pub(crate) struct KnownKeys(std::sync::RwLock<std::collections::HashSet<String>>);

impl KnownKeys {
    /// Most names kept.
    const MAX: usize = 100_000;

    /// Whether `key` is known to be stored.
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.0
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .contains(key)
    }

    /// Records committed keys.
    pub(crate) fn extend(&self, keys: Vec<String>) {
        if keys.is_empty() {
            return;
        }
        let mut set = self.0.write().unwrap_or_else(|p| p.into_inner());
        if set.len() + keys.len() > Self::MAX {
            set.clear();
        }
        set.extend(keys);
    }
}
