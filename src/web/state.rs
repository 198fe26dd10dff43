//! What every request shares: the connections, the embedded files, and the answers kept in
//! memory (the `structures` report, repeated statistics), each valid while the database's last
//! game id is the one it was computed at (games are only appended).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::store::read::Snapshot;
use anyhow::Result;

use crate::engine::annotate::{Options, Reference};
use crate::model::structure_report::Row;
use crate::store::read::structure_report::CommonForm;
use crate::web::assets::Assets;
use crate::web::pool::Pool;

/// The longest lists the kept `structures` report holds (`--top 1000`, the command's most).
pub const REPORT_TOP: usize = 1000;

/// How many statistics answers are kept.
const STATS_KEPT: usize = 64;

/// A kept answer: its content type and bytes.
pub type Kept = Arc<(&'static str, Vec<u8>)>;

pub struct State {
    pub pool: Arc<Pool>,
    pub assets: Assets,
    report: Mutex<Option<(i64, Arc<Vec<Row>>)>>,
    forms: Mutex<Option<(i64, Arc<Vec<CommonForm>>)>>,
    /// Held while the common forms are computed: a request that comes meanwhile waits for
    /// them instead of reading the runs a second time.
    forms_busy: Mutex<()>,
    stats: Mutex<HashMap<String, (i64, Kept)>>,
    /// The database as `POST /api/annotate`'s reference: each named form's figures asked once
    /// and kept (`engine::annotate::Reference`).
    reference: Mutex<Option<(i64, Arc<Reference>)>>,
}

impl State {
    pub fn new(pool: Arc<Pool>) -> State {
        State {
            pool,
            assets: Assets::load(),
            report: Mutex::new(None),
            forms: Mutex::new(None),
            forms_busy: Mutex::new(()),
            stats: Mutex::new(HashMap::new()),
            reference: Mutex::new(None),
        }
    }

    /// Computes the `structures` report and the named forms' most common exact forms in the
    /// background, each on a reader of its own, so that neither the first card nor the
    /// catalogue waits for them.
    pub fn warm_up(self: &Arc<Self>) {
        let state = Arc::clone(self);
        tokio::spawn(async move {
            let s = Arc::clone(&state);
            let _ = state.pool.run(move |conn| s.report(conn)).await;
        });
        let state = Arc::clone(self);
        tokio::spawn(async move {
            let s = Arc::clone(&state);
            let _ = state.pool.run(move |conn| s.common_forms(conn)).await;
        });
    }

    /// The `structures` report (lists [`REPORT_TOP`] long) of the database as `conn` sees it.
    pub fn report(&self, conn: &Snapshot) -> Result<Arc<Vec<Row>>> {
        let version = crate::store::schema::games::last_game_id(conn)?;
        if let Ok(kept) = self.report.lock()
            && let Some((v, rows)) = kept.as_ref()
            && *v == version
        {
            return Ok(Arc::clone(rows));
        }
        let rows = Arc::new(crate::engine::explore::structures_report(conn, REPORT_TOP)?);
        if let Ok(mut kept) = self.report.lock() {
            *kept = Some((version, Arc::clone(&rows)));
        }
        Ok(rows)
    }

    /// Each named form's most common exact pawns (what the catalogue's links open), as `conn`
    /// sees the database.
    pub fn common_forms(&self, conn: &Snapshot) -> Result<Arc<Vec<CommonForm>>> {
        let version = crate::store::schema::games::last_game_id(conn)?;
        let kept = || {
            self.forms.lock().ok().and_then(|kept| {
                kept.as_ref()
                    .filter(|(v, _)| *v == version)
                    .map(|(_, f)| Arc::clone(f))
            })
        };
        if let Some(forms) = kept() {
            return Ok(forms);
        }
        let _busy = self.forms_busy.lock();
        if let Some(forms) = kept() {
            return Ok(forms);
        }
        let threads = crate::engine::parallel::threads(None);
        let forms = Arc::new(crate::engine::explore::common_forms(conn, threads)?);
        if let Ok(mut kept) = self.forms.lock() {
            *kept = Some((version, Arc::clone(&forms)));
        }
        Ok(forms)
    }

    /// A kept statistics answer for `key` at the database's current last game id, else
    /// `compute`'s, kept.
    pub fn stats(
        &self,
        conn: &Snapshot,
        key: String,
        compute: impl FnOnce() -> Result<(&'static str, Vec<u8>)>,
    ) -> Result<Kept> {
        let version = crate::store::schema::games::last_game_id(conn)?;
        if let Ok(kept) = self.stats.lock()
            && let Some((v, answer)) = kept.get(&key)
            && *v == version
        {
            return Ok(Arc::clone(answer));
        }
        let answer = Arc::new(compute()?);
        if let Ok(mut kept) = self.stats.lock() {
            if kept.len() >= STATS_KEPT {
                kept.clear();
            }
            kept.insert(key, (version, Arc::clone(&answer)));
        }
        Ok(answer)
    }

    /// The database as `conn` sees it, as the reference of `POST /api/annotate` with `pawndex
    /// annotate`'s default options: kept while no game is added, so that a structure's figures
    /// are computed once for every request.
    pub fn reference(&self, conn: &Snapshot) -> Result<Arc<Reference>> {
        let version = crate::store::schema::games::last_game_id(conn)?;
        if let Ok(kept) = self.reference.lock()
            && let Some((v, r)) = kept.as_ref()
            && *v == version
        {
            return Ok(Arc::clone(r));
        }
        let path = self.pool.path();
        let label = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let options = Options {
            threads: crate::engine::parallel::threads(None),
            ..Options::default()
        };
        let reference = Arc::new(Reference::new(conn, &label, options)?);
        if let Ok(mut kept) = self.reference.lock() {
            *kept = Some((version, Arc::clone(&reference)));
        }
        Ok(reference)
    }
}
