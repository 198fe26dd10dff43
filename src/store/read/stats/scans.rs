//! The three scans of the statistics: the pawn sets of one side, the games, and the runs (or
//! the changes of named structure standing in for them), each over a slice of ids, each
//! calling its caller once per row.

use anyhow::{Context, Result};
use rusqlite::Row;

use super::StatsDb;
use super::sql::{self, Joins, ScanColumns};
use crate::model::columns::{PieceMasks, Side, year_of};
use crate::model::outcome::Outcome;
use crate::model::tally::PlyRange;

/// A run of `runs` (or a single ply, or a piece of a run, when the scan expands plies).
#[derive(Copy, Clone, Debug, Default)]
pub struct RunRow {
    pub game_id: i64,
    pub white_set: i64,
    pub black_set: i64,
    pub first_ply: u32,
    pub last_ply: u32,
    pub missing: i64,
    pub bishop_pairs: i64,
    /// `runs.structure` (read only when a column needs it).
    pub structure: i64,
}

/// What the positions scan reads: its columns, the ply range, the tables its `--where`
/// expressions join, and those expressions.
pub struct PositionsScan<'a> {
    pub columns: ScanColumns,
    pub plies: PlyRange,
    pub joins: Joins,
    pub filters: &'a [String],
}

/// A game as the game scan reads it.
pub struct GameRow {
    pub id: i64,
    pub outcome: Outcome,
    pub white_elo: Option<i64>,
    pub black_elo: Option<i64>,
    /// The piece masks of a game that starts from a FEN (read only when asked for).
    pub masks: Option<PieceMasks>,
    /// `games.plies`.
    pub plies: Option<i64>,
    /// The year of `games.date` ([`crate::model::columns::year_of`]).
    pub year: Option<i64>,
}

/// An integer column of a scan row, with no more checks than its type (the scans read
/// millions of rows: rusqlite's `get` costs a quarter of the time).
#[inline]
fn int(r: &Row<'_>, i: usize) -> Result<i64> {
    match r.get_ref(i)? {
        rusqlite::types::ValueRef::Integer(v) => Ok(v),
        other => anyhow::bail!(
            "column {i} of a run holds {:?}, not an integer: the database is damaged (run \
             `pawndex check`)",
            other.data_type()
        ),
    }
}

/// A ply number, saturated into `u32` (a damaged value stays in range).
#[inline]
#[must_use]
pub fn small(v: i64) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(u32::MAX)
}

impl StatsDb {
    /// The pawn sets of one side with ids `first..=last` that pass `filters`, in id order:
    /// `each` gets the id and the values of the columns `names` (of that side, such as
    /// `white_islands`) for every set `keep` wants.
    pub fn side_scan(
        &self,
        side: Side,
        names: &[String],
        filters: &[String],
        (first, last): (i64, i64),
        keep: impl Fn(i64) -> bool,
        mut each: impl FnMut(i64, &[i64]),
    ) -> Result<()> {
        let mut st = self.conn.prepare(&sql::side_scan(side, names, filters))?;
        st.raw_bind_parameter(":first_id", first)?;
        st.raw_bind_parameter(":last_id", last)?;
        let mut rows = st.raw_query();
        let mut values = vec![0i64; names.len()];
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            if !keep(id) {
                continue;
            }
            for (i, v) in values.iter_mut().enumerate() {
                *v = r.get(i + 1)?;
            }
            each(id, &values);
        }
        Ok(())
    }

    /// The games with ids `first..=last` that pass `filters` (and, with `min_elo`, whose
    /// players are both rated at least that); with `masks`, the piece masks of FEN starts.
    pub fn game_scan(
        &self,
        filters: &[String],
        min_elo: Option<i64>,
        masks: bool,
        (first, last): (i64, i64),
        mut each: impl FnMut(&GameRow) -> Result<()>,
    ) -> Result<()> {
        let mut st = self
            .conn
            .prepare(&sql::game_scan(filters, min_elo.is_some()))?;
        st.raw_bind_parameter(":first_id", first)?;
        st.raw_bind_parameter(":last_id", last)?;
        if let Some(min) = min_elo {
            st.raw_bind_parameter(":min_elo", min)?;
        }
        let mut rows = st.raw_query();
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            let outcome = Outcome::parse(r.get_ref(1)?.as_str_or_null()?);
            let white_elo: Option<i64> = r.get(2)?;
            let black_elo: Option<i64> = r.get(3)?;
            let mut start = None;
            if masks {
                let fen: Option<String> = r.get(4)?;
                if let Some(fen) = fen {
                    let chess960: bool = r.get(5)?;
                    let m = PieceMasks::from_fen(&fen, chess960)
                        .with_context(|| format!("game {id}"))?;
                    start = Some(m);
                }
            }
            each(&GameRow {
                id,
                outcome,
                white_elo,
                black_elo,
                masks: start,
                plies: r.get(6)?,
                year: year_of(r.get_ref(7)?.as_str_or_null()?),
            })?;
        }
        Ok(())
    }

    /// Streams the runs of games `first..=last` that pass the scan's filters, in game order.
    /// A damaged run (its last ply before its first) is passed over.
    pub fn positions(
        &self,
        scan: &PositionsScan<'_>,
        (first, last): (i64, i64),
        mut visit: impl FnMut(&RunRow),
    ) -> Result<()> {
        let cols = scan.columns;
        let ply_range = scan.plies != PlyRange::ALL;
        let sql = sql::positions_scan(cols, ply_range, scan.joins, scan.filters);
        let mut st = self.conn.prepare(&sql)?;
        if st.parameter_index(":first_game")?.is_some() {
            st.raw_bind_parameter(":first_game", first)?;
            st.raw_bind_parameter(":last_game", last)?;
        }
        if st.parameter_index(":lo")?.is_some() {
            st.raw_bind_parameter(":lo", i64::from(scan.plies.first))?;
            st.raw_bind_parameter(":hi", i64::from(scan.plies.last))?;
        }
        let mut rows = st.raw_query();
        let mut run = RunRow::default();
        while let Some(r) = rows.next()? {
            if read_run(r, cols, &mut run)? {
                visit(&run);
            }
        }
        Ok(())
    }

    /// The changes of named structure of games `first..=last` in (game, ply) order: `each`
    /// gets the game, the ply and the structure code from that ply on (about one row per
    /// hundred runs).
    pub fn structure_changes(
        &self,
        (first, last): (i64, i64),
        mut each: impl FnMut(i64, u32, i64),
    ) -> Result<()> {
        let mut st = self.conn.prepare(sql::STRUCTURE_CHANGES_SCAN)?;
        let mut rows = st.query([first, last])?;
        while let Some(r) = rows.next()? {
            each(int(r, 0)?, small(int(r, 1)?), int(r, 2)?);
        }
        Ok(())
    }
}

/// Reads one row of the positions scan into `run`; false for a damaged row that weighs nothing.
#[inline]
fn read_run(r: &Row<'_>, cols: ScanColumns, run: &mut RunRow) -> Result<bool> {
    run.game_id = int(r, 0)?;
    run.white_set = int(r, 1)?;
    run.black_set = int(r, 2)?;
    let mut i = 3;
    if cols.weight_only {
        // A damaged row (last_ply < first_ply) weighs nothing rather than wrapping around.
        let weight = int(r, 3)?;
        if weight < 1 {
            return Ok(false);
        }
        run.first_ply = 0;
        run.last_ply = u32::try_from(weight - 1).unwrap_or(u32::MAX);
        i += 1;
    } else {
        run.first_ply = small(int(r, 3)?);
        run.last_ply = small(int(r, 4)?);
        if run.last_ply < run.first_ply {
            return Ok(false);
        }
        i += 2;
    }
    if cols.missing {
        run.missing = int(r, i)?;
        i += 1;
    }
    if cols.bishop_pairs {
        run.bishop_pairs = int(r, i)?;
        i += 1;
    }
    if cols.structure {
        run.structure = int(r, i)?;
    }
    Ok(true)
}
