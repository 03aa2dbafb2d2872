//! Daily records kept between requests. A day's record depends on that day's rows and on
//! earlier days' (which never change), so it is reused while the day's fingerprint (its
//! runs, their start and end, its observations, skips and Registry changes, counted) stays
//! the same: a finished day is computed once, a day being scanned again at each request.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::{record, DailyRecord};
use crate::db::daily::{fingerprint, Fingerprint};
use crate::db::{Db, DbResult};

/// Days kept (a year and more); the oldest go first.
const KEPT: usize = 400;

/// Records by day, each with the fingerprint it was computed at.
#[derive(Default)]
pub struct Cache {
    days: Mutex<BTreeMap<String, (Fingerprint, Arc<DailyRecord>)>>,
}

impl Cache {
    /// The record of `day` (see [`record`]), computed only when the day changed.
    pub async fn record(&self, db: &Db, day: &str) -> DbResult<Option<Arc<DailyRecord>>> {
        let fp = fingerprint(db, day).await?;
        if fp[0] == 0 {
            return Ok(None);
        }
        if let Some((seen, r)) = self.days.lock().expect("not poisoned").get(day) {
            if *seen == fp {
                return Ok(Some(r.clone()));
            }
        }
        let Some(r) = record(db, day).await? else {
            return Ok(None);
        };
        let r = Arc::new(r);
        let mut days = self.days.lock().expect("not poisoned");
        days.insert(day.to_owned(), (fp, r.clone()));
        while days.len() > KEPT {
            days.pop_first();
        }
        Ok(Some(r))
    }
}
