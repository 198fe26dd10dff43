//! The reads of `pawndex stats`, typed: the statistics engine ([`crate::engine::stats`]) groups
//! and counts what these functions hand it and never sees SQL.
//!
//! A [`StatsDb`] is one read-only connection; every scan thread opens its own. The statistics
//! never expand the `ply_features` view. They read three tables in order: `pawn_sets` once
//! ([`StatsDb::side_scan`], per side), `games` once ([`StatsDb::game_scan`]) and `runs` once,
//! run by run in game order ([`StatsDb::positions`]); when the runs matter only for their named
//! structure, `structure_changes` stands in for `runs` ([`StatsDb::structure_changes`]). A
//! count by one side's pawns alone reads the per-set aggregates instead
//! ([`StatsDb::set_totals`]). The SQL texts are in `sql.rs`, `--where` expressions are read
//! and checked in `filter.rs`.

mod filter;
mod scans;
mod sql;
mod totals;

use std::path::Path;

use anyhow::{Context, Result};
use rusqlite::Connection;

use crate::model::columns::PieceMasks;
use crate::store::derive::{Lag, SetAggregate};
use crate::store::read::search::StructureName;
use crate::store::read::{Interrupter, Limit};

pub use filter::{FilterSource, inspect};
pub use scans::{PositionsScan, RunRow, small};
pub use sql::{Cut, GAME_COLUMNS, Joins, ScanColumns};

/// One read-only connection of the statistics (see the module documentation).
pub struct StatsDb {
    conn: Connection,
}

/// The command's snapshot of ids: the games and pawn sets stored when it started.
#[derive(Copy, Clone, Debug)]
pub struct IdRange {
    /// The first and last game id (`(0, -1)` without games).
    pub games: (i64, i64),
    /// The largest pawn set id.
    pub max_set: i64,
}

impl StatsDb {
    /// Opens a database for the statistics, as every reading command does
    /// ([`crate::store::open_for_reading`]), its statements under `limit`.
    pub fn open(path: &Path, limit: &Limit) -> Result<StatsDb> {
        let conn = crate::store::open_for_reading(path)?;
        limit.install(&conn);
        Ok(StatsDb { conn })
    }

    /// Stops this connection's statement running now (from another thread).
    #[must_use]
    pub fn interrupter(&self) -> Interrupter {
        Interrupter::of(&self.conn)
    }

    /// Runs `reads` inside one read transaction: every read of this connection in it sees the
    /// same state of the database.
    pub fn in_snapshot<T>(&self, reads: impl FnOnce() -> Result<T>) -> Result<T> {
        let tx = self.conn.unchecked_transaction()?;
        let out = reads()?;
        tx.finish()?;
        Ok(out)
    }

    /// The command's snapshot of ids. The tables indexed by these ids are sized by them: an
    /// error naming `pawndex check` when the ids run far past the rows (see
    /// [`crate::store::read::ids`]).
    pub fn snapshot_ids(&self) -> Result<IdRange> {
        let (games, max_set, rows) = self.in_snapshot(|| {
            let c = &self.conn;
            let range: (i64, i64) =
                c.query_row(sql::GAME_ID_RANGE, [], |r| Ok((r.get(0)?, r.get(1)?)))?;
            let max_set: i64 = c.query_row(sql::MAX_SET_ID, [], |r| r.get(0))?;
            let rows: (i64, i64) =
                c.query_row(sql::ROW_COUNTS, [], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok((range, max_set, rows))
        })?;
        crate::store::read::ids::table_size("game", games.0, games.1, rows.0)?;
        crate::store::read::ids::table_size("pawn set", 1, max_set, rows.1)?;
        Ok(IdRange { games, max_set })
    }

    /// Whether any game starts from a FEN (only those need per-game piece masks).
    pub fn any_fen_start(&self) -> Result<bool> {
        Ok(self.conn.query_row(sql::ANY_FEN_START, [], |r| r.get(0))?)
    }

    /// The named structures the database knows.
    pub fn structure_names(&self) -> Result<Vec<StructureName>> {
        crate::store::read::search::structure_names(&self.conn)
    }

    /// How far the derived tables lag behind the stored games.
    pub fn lag(&self) -> Result<Lag> {
        crate::store::lag(&self.conn)
    }

    /// The per-set aggregates of the games above `through` (the unmerged tail).
    pub fn tail_sets(&self, through: i64) -> Result<Vec<SetAggregate>> {
        crate::store::tail_sets(&self.conn, through)
    }

    /// Fills the temporary piece-mask table for FEN starts (needed by `phase` inside
    /// `--where`). The connection is `query_only`; pawndex lifts that for its own temporary
    /// table only (the database file itself is opened read-only), and sets it again before
    /// any user expression.
    pub fn fill_piece_masks(&self) -> Result<()> {
        self.conn.execute_batch(sql::WRITES_ALLOWED)?;
        let filled = self.fill_piece_masks_table();
        self.conn.execute_batch(sql::READ_ONLY_AGAIN)?;
        filled
    }

    fn fill_piece_masks_table(&self) -> Result<()> {
        self.conn.execute_batch(sql::PIECE_MASKS_TABLE)?;
        let mut insert = self.conn.prepare(sql::INSERT_PIECE_MASKS)?;
        let mut st = self.conn.prepare(sql::FEN_STARTS)?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            let fen: String = r.get(1)?;
            let chess960: bool = r.get(2)?;
            let m = PieceMasks::from_fen(&fen, chess960).with_context(|| format!("game {id}"))?;
            insert.execute((
                id,
                m.queens[0],
                m.minors_and_rooks[0],
                m.queens[1],
                m.minors_and_rooks[1],
            ))?;
        }
        Ok(())
    }
}
