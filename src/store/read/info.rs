//! What a database holds, for `pawndex info`: games, plies, sources, rejects by reason, schema
//! version, size and whether the last run finished. Read-only (opened like every read command,
//! see [`crate::store::schema::open_read_only`]) and in one read transaction.
//!
//! Cheap on a large database: the runs are never scanned. One pass over `games` (in rowid order,
//! counting runs of equal sources, no sort) gives the games and plies of each source; `rejects`
//! is counted through its `(source, offset)` index and its reasons are read once, grouped by
//! their category; everything else is a single-row read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use rusqlite::Connection;
use rusqlite::types::ValueRef;

use crate::model::game::RejectCategory;
use crate::store::derive::{Lag, lag};

/// Games, plies and rejects of one source (the file name a run was given).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Source {
    pub name: String,
    pub games: i64,
    pub plies: i64,
    pub rejected: i64,
}

/// Whether the derived tables cover every stored game.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// Every game is in the derived tables.
    Complete,
    /// Complete; the last runs left `n` games in the unmerged tail (by design, see
    /// `migrations/0003_unmerged_tail.sql`).
    Tail(i64),
    /// A run stored `n` games and did not finish (killed).
    Unfinished(i64),
    /// A `pawndex index` writing now has stored `n` games so far.
    Indexing(i64),
}

/// Everything `pawndex info` reports.
#[derive(Clone, Debug)]
pub struct Info {
    pub db: PathBuf,
    pub schema_version: i64,
    /// Bytes of the database file, and of its write-ahead log when a run is writing, was
    /// killed, or ended while a reader kept the log from being folded in.
    pub bytes: u64,
    pub wal_bytes: u64,
    /// The database header says WAL mode (a finished run leaves a rollback journal).
    pub wal_mode: bool,
    pub games: i64,
    pub plies: i64,
    pub pawn_sets: i64,
    pub rejected: i64,
    /// By source name.
    pub sources: Vec<Source>,
    /// Rejected games by reason (the categories of `pawndex index`'s end summary), most first.
    pub reasons: Vec<(String, i64)>,
    pub lag: Lag,
    /// Named structures in the database's catalogue.
    pub structures: i64,
    /// Whether the runs were classified with the catalogue in force (else `pawndex migrate`
    /// re-classifies them).
    pub structures_current: bool,
    /// Whether a `pawndex index` is writing the database now (holds its lock).
    pub indexing: bool,
    /// Games indexed before schema version 5, whose `TimeControl` tag was not stored (their
    /// time class comes from the Event tag alone; a re-index stores it).
    pub without_time_control: i64,
}

impl Info {
    /// Whether the derived tables cover every game or leave some in the tail or unfinished.
    #[must_use]
    pub fn state(&self) -> State {
        if self.lag.unfinished() > 0 && self.indexing {
            State::Indexing(self.lag.unfinished())
        } else if self.lag.unfinished() > 0 {
            State::Unfinished(self.lag.unfinished())
        } else if self.lag.pending() > 0 {
            State::Tail(self.lag.pending())
        } else {
            State::Complete
        }
    }

    /// Positions (plies plus each game's start position).
    #[must_use]
    pub fn positions(&self) -> i64 {
        self.plies + self.games
    }

    /// Whether the last run left the write-ahead log unfolded: no run writes now, yet the log
    /// holds pages or the file is still in WAL mode (a reader kept the run's end from folding
    /// it in, or the run was killed). `pawndex migrate` folds it in.
    #[must_use]
    pub fn unfolded(&self) -> bool {
        !self.indexing && (self.wal_bytes > 0 || self.wal_mode)
    }

    /// What to run to finish an interrupted database or fold its log in, if either is needed.
    #[must_use]
    pub fn to_run(&self) -> Option<String> {
        match self.state() {
            State::Unfinished(_) => Some(format!("pawndex migrate --db {}", self.db.display())),
            _ if self.unfolded() => Some(format!("pawndex migrate --db {}", self.db.display())),
            _ => None,
        }
    }
}

/// Opens `db` read-only and reads what it holds.
pub fn read(db: &Path) -> Result<Info> {
    let reader = super::Reader::open_as_found(db)?;
    super::tune_for_reading(&reader)?;
    snapshot(&reader.snapshot(&super::Limit::none())?, db)
}

/// [`read`] inside the caller's read transaction.
pub fn snapshot(conn: &super::Snapshot, db: &Path) -> Result<Info> {
    let one = |sql: &str| -> Result<i64> {
        Ok(conn
            .query_row(sql, [], |r| r.get::<_, Option<i64>>(0))?
            .unwrap_or(0))
    };
    let mut sources = games_by_source(conn)?;
    for (name, n) in rejects_by_source(conn)? {
        sources
            .entry(name.clone())
            .or_insert_with(|| Source {
                name,
                ..Source::default()
            })
            .rejected = n;
    }
    let sources: Vec<Source> = sources.into_values().collect();
    let reasons = rejects_by_reason(conn)?;
    Ok(Info {
        db: db.to_owned(),
        schema_version: one("PRAGMA user_version")?,
        bytes: std::fs::metadata(db).map_or(0, |m| m.len()),
        wal_bytes: crate::store::schema::wal_bytes(db),
        wal_mode: crate::store::schema::in_wal_mode(db),
        games: sources.iter().map(|s| s.games).sum(),
        plies: sources.iter().map(|s| s.plies).sum(),
        // Ids are never reused or deleted: the largest is the count, read from the end of the
        // table instead of counted.
        pawn_sets: one("SELECT max(id) FROM pawn_sets")?,
        rejected: reasons.iter().map(|(_, n)| n).sum(),
        sources,
        reasons,
        indexing: crate::store::schema::indexing_now(db),
        lag: lag(conn)?,
        structures: one("SELECT count(*) FROM structure_names")?,
        // Game ids are dense from 1: the games before the first stored with its TimeControl.
        without_time_control: one(
            "SELECT min((SELECT from_game FROM time_control_stored) - 1, \
             (SELECT coalesce(max(id), 0) FROM games))",
        )?,
        structures_current: crate::model::structure::Catalogue::load_active()
            .map_or(Ok(false), |c| {
                crate::store::schema::structures::is_current(conn, c)
            })?,
    })
}

/// Games and plies per source, in one pass over `games` in rowid order: a source's games are
/// mostly consecutive (a run stores its files in order), so runs of equal names are counted
/// before they are looked up (no sort, no hash per game).
fn games_by_source(conn: &Connection) -> Result<BTreeMap<String, Source>> {
    let mut by_name: BTreeMap<String, Source> = BTreeMap::new();
    let mut st = conn.prepare("SELECT source, plies FROM games")?;
    let mut rows = st.query([])?;
    let mut current: Option<(Vec<u8>, i64, i64)> = None;
    let mut add = |name: &[u8], games: i64, plies: i64| {
        let name = String::from_utf8_lossy(name).into_owned();
        let s = by_name.entry(name.clone()).or_insert_with(|| Source {
            name,
            ..Source::default()
        });
        s.games += games;
        s.plies += plies;
    };
    while let Some(r) = rows.next()? {
        let name = match r.get_ref(0)? {
            ValueRef::Text(t) | ValueRef::Blob(t) => t,
            _ => &[],
        };
        let plies = r.get::<_, Option<i64>>(1)?.unwrap_or(0);
        match &mut current {
            Some((n, games, p)) if n.as_slice() == name => {
                *games += 1;
                *p += plies;
            }
            _ => {
                if let Some((n, games, p)) = current.take() {
                    add(&n, games, p);
                }
                current = Some((name.to_vec(), 1, plies));
            }
        }
    }
    if let Some((n, games, p)) = current {
        add(&n, games, p);
    }
    Ok(by_name)
}

/// Rejected games per source (through the `(source, offset)` index of `rejects`).
fn rejects_by_source(conn: &Connection) -> Result<Vec<(String, i64)>> {
    let mut st = conn.prepare("SELECT source, count(*) FROM rejects GROUP BY source")?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Rejected games by reason, most first. The `rejects` table stores the reason text only
/// (`illegal move Qd8 at ply 23 (12. White to move)`); each is counted under its category, the
/// one of the end summary of `pawndex index`, read back by [`RejectCategory::of_reason`] (the
/// one classifier, next to the code that writes the reasons); a reason of no category (none is
/// written so) counts as `other`.
fn rejects_by_reason(conn: &Connection) -> Result<Vec<(String, i64)>> {
    let mut counts: BTreeMap<Option<RejectCategory>, i64> = BTreeMap::new();
    let mut st = conn.prepare("SELECT reason FROM rejects")?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let category = match r.get_ref(0)? {
            ValueRef::Text(t) | ValueRef::Blob(t) => {
                RejectCategory::of_reason(&String::from_utf8_lossy(t))
            }
            _ => None,
        };
        *counts.entry(category).or_default() += 1;
    }
    let mut reasons: Vec<(String, i64)> = counts
        .into_iter()
        .map(|(c, n)| (c.map_or("other", RejectCategory::as_str).to_owned(), n))
        .collect();
    reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(reasons)
}
