//! The per-set aggregates (`set_totals`) and game lists (`set_games`) the statistics read
//! instead of every run, when a count allows it.

use anyhow::Result;
use rusqlite::OptionalExtension;

use super::StatsDb;
use super::sql;
use crate::model::columns::Side;

/// The stored totals of a pawn set, in the order [`StatsDb::set_totals`] hands them: positions,
/// games, white_wins, draws, black_wins, white_elo_sum, white_elo_positions, black_elo_sum,
/// black_elo_positions.
pub const STORED_TOTALS: usize = 9;

impl StatsDb {
    /// Every pawn set of one side: `each` gets its id, the values of the columns `names` (of
    /// that side) and its stored totals (see [`STORED_TOTALS`]; `None` for a set that only
    /// the unmerged tail reaches).
    pub fn set_totals(
        &self,
        side: Side,
        names: &[String],
        mut each: impl FnMut(i64, &[i64], &[Option<i64>; STORED_TOTALS]),
    ) -> Result<()> {
        let mut st = self.conn.prepare(&sql::set_totals_scan(side, names))?;
        let mut rows = st.raw_query();
        let mut values = vec![0i64; names.len()];
        let mut totals = [None; STORED_TOTALS];
        while let Some(r) = rows.next()? {
            let set: i64 = r.get(0)?;
            for (i, v) in values.iter_mut().enumerate() {
                *v = r.get(1 + i)?;
            }
            let n = 1 + values.len();
            for (i, t) in totals.iter_mut().enumerate() {
                *t = r.get(n + i)?;
            }
            each(set, &values, &totals);
        }
        Ok(())
    }

    /// The units of every pawn set with aggregates: `each` gets its id and its stored games
    /// (`per_game`) or positions.
    pub fn set_units(&self, per_game: bool, mut each: impl FnMut(i64, i64)) -> Result<()> {
        let mut st = self.conn.prepare(sql::SET_TOTAL_UNITS)?;
        let mut rows = st.raw_query();
        while let Some(r) = rows.next()? {
            each(r.get(0)?, r.get(if per_game { 2 } else { 1 })?);
        }
        Ok(())
    }

    /// The side (0 White, 1 Black) of every pawn set: `each` gets its id and side.
    pub fn set_sides(&self, mut each: impl FnMut(i64, i64)) -> Result<()> {
        let mut st = self.conn.prepare(sql::SET_SIDES)?;
        let mut rows = st.raw_query();
        while let Some(r) = rows.next()? {
            each(r.get(0)?, r.get(1)?);
        }
        Ok(())
    }

    /// The games of one pawn set's stored list (none for a set without one).
    pub fn set_games(&self, set: i64) -> Result<Vec<i64>> {
        let mut list = self.conn.prepare_cached(sql::SET_GAMES_OF)?;
        let blob: Option<Vec<u8>> = list.query_row([set], |r| r.get(0)).optional()?;
        Ok(crate::store::decode_games(
            blob.as_deref().unwrap_or_default(),
        ))
    }

    /// The size of a table indexed by game id up to `last_game`, checked against the rows of
    /// `games` (see [`crate::store::read::ids::table_size`]).
    pub fn game_table_size(&self, last_game: i64) -> Result<usize> {
        let rows: i64 = self.conn.query_row(sql::GAME_COUNT, [], |r| r.get(0))?;
        crate::store::read::ids::table_size("game", 1, last_game, rows)
    }
}
