//! The reads of `pawndex check`: every SQL text it runs, as statements prepared on one
//! [`Snapshot`] whose rows the check's comparisons (in the engine) take one at a time, and the
//! single-row reads as typed values. Nothing here judges what it reads: the rows come back as
//! SQLite holds them ([`Cell`]s, a damaged value included), so that the check can say what is
//! wrong with them.
//!
//! Each statement names its columns in its documentation, in order; [`Row::get`] reads one as
//! it is stored, [`Row::id`] and [`Row::text`] one that SQLite guarantees (an `INTEGER PRIMARY
//! KEY`) or one whose type the statement computes.

use std::path::Path;

use anyhow::{Result, bail};
use rusqlite::CachedStatement;

pub use super::query::Cell;
use super::{Limit, Reader, Snapshot};
use crate::model::game::MAX_PLIES;
use crate::model::structure::Catalogue;
use crate::store::schema::{side_columns, structures};

/// Game ids are at most this (the derived tables hold them as 32-bit numbers).
pub const MAX_GAME_ID: i64 = u32::MAX as i64;

/// Pawn-set ids are below this.
pub const SET_ID_END: i64 = 1 << 31;

/// The counted columns of `set_totals`, in the order [`set_totals`] reads them after the id.
pub const TOTALS_COLUMNS: [&str; 9] = crate::store::derive::TOTALS_COLUMNS;

/// Opens `path` read-only as it is found and starts the check's one read transaction.
pub fn open(path: &Path) -> Result<Snapshot> {
    let reader = Reader::open_as_found(path)?;
    reader.pragma_update(None, "query_only", true)?;
    // 8 MiB of SQLite pages: the reads are passes in key order and look-ups of pawn sets, as
    // fast as with 64 MiB on the masters, and the memory stays with the check's own bounds.
    reader.pragma_update(None, "cache_size", -8_192)?;
    reader.snapshot(&Limit::none())
}

/// A statement of the check, prepared on a snapshot.
pub struct Scan<'s> {
    stmt: CachedStatement<'s>,
}

/// The rows of a [`Scan`], in the statement's order.
pub struct Rows<'s> {
    rows: rusqlite::Rows<'s>,
}

/// One row of a [`Scan`].
#[derive(Clone, Copy)]
pub struct Row<'r, 's> {
    row: &'r rusqlite::Row<'s>,
}

impl Scan<'_> {
    /// Runs the statement with its integer parameters (`?1`, `?2`, … in order).
    pub fn rows(&mut self, params: &[i64]) -> Result<Rows<'_>> {
        Ok(Rows {
            rows: self.stmt.query(rusqlite::params_from_iter(params))?,
        })
    }

    /// Runs the statement and reads its first row with `read` (an error when it has none).
    pub fn one<T>(
        &mut self,
        params: &[i64],
        read: impl FnOnce(Row<'_, '_>) -> Result<T>,
    ) -> Result<T> {
        let mut rows = self.rows(params)?;
        match rows.next()? {
            Some(r) => read(r),
            None => Err(rusqlite::Error::QueryReturnedNoRows.into()),
        }
    }
}

impl<'s> Rows<'s> {
    /// The next row, or `None` after the last.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Row<'_, 's>>> {
        Ok(self.rows.next()?.map(|row| Row { row }))
    }
}

impl<'r> Row<'r, '_> {
    /// The value of column `i` as stored.
    pub fn get(&self, i: usize) -> Result<Cell<'r>> {
        use rusqlite::types::ValueRef;
        Ok(match self.row.get_ref(i)? {
            ValueRef::Null => Cell::Null,
            ValueRef::Integer(v) => Cell::Integer(v),
            ValueRef::Real(v) => Cell::Real(v),
            ValueRef::Text(t) => Cell::Text(t),
            ValueRef::Blob(b) => Cell::Blob(b),
        })
    }

    /// Column `i`, an integer by the schema (an `INTEGER PRIMARY KEY`): an error otherwise.
    pub fn id(&self, i: usize) -> Result<i64> {
        Ok(self.row.get(i)?)
    }

    /// Column `i`, a text the statement computes (`typeof(…)`): an error otherwise.
    pub fn text(&self, i: usize) -> Result<String> {
        Ok(self.row.get(i)?)
    }
}

fn scan<'s>(snap: &'s Snapshot, sql: &str) -> Result<Scan<'s>> {
    Ok(Scan {
        stmt: snap.prepare_cached(sql)?,
    })
}

/// `PRAGMA integrity_check` asked for up to `messages` messages: one text column.
pub fn integrity(snap: &Snapshot, messages: u64) -> Result<Scan<'_>> {
    scan(snap, &format!("PRAGMA integrity_check({messages})"))
}

/// How many games there are.
pub fn game_count(snap: &Snapshot) -> Result<i64> {
    Ok(snap.query_row("SELECT count(*) FROM games", [], |r| r.get(0))?)
}

/// Games whose id is outside 1..=[`MAX_GAME_ID`]: `id`.
pub fn game_ids_out_of_range(snap: &Snapshot) -> Result<Scan<'_>> {
    scan(
        snap,
        &format!("SELECT id FROM games WHERE id < 1 OR id > {MAX_GAME_ID} ORDER BY id"),
    )
}

/// Games whose `plies` is not an integer in 0..=[`MAX_PLIES`]: `id`, `plies`.
pub fn games_with_bad_plies(snap: &Snapshot) -> Result<Scan<'_>> {
    scan(
        snap,
        &format!(
            "SELECT id, plies FROM games
             WHERE typeof(plies) != 'integer' OR plies < 0 OR plies > {MAX_PLIES} ORDER BY id"
        ),
    )
}

/// Games with integer plies whose `moves` is not a blob of two bytes per ply: `id`, `plies`,
/// `typeof(moves)` (a text), `length(moves)`.
pub fn games_with_bad_moves(snap: &Snapshot) -> Result<Scan<'_>> {
    scan(
        snap,
        "SELECT id, plies, typeof(moves), length(moves) FROM games
         WHERE typeof(plies) = 'integer'
           AND (typeof(moves) != 'blob' OR length(moves) != 2 * plies)
         ORDER BY id",
    )
}

/// Every game in id order with what its hash was computed from: `id`, `event`, `site`,
/// `date`, `round`, `white`, `black`, `result`, `fen`, `moves`, `hash`, `chess960`.
pub fn game_hashes(snap: &Snapshot) -> Result<Scan<'_>> {
    scan(
        snap,
        "SELECT id, event, site, date, round, white, black, result, fen, moves, hash, chess960
         FROM games ORDER BY id",
    )
}

/// Games without a `game_summary` row: `id`.
pub fn games_without_summary(snap: &Snapshot) -> Result<Scan<'_>> {
    scan(
        snap,
        "SELECT g.id FROM games AS g
         WHERE NOT EXISTS (SELECT 1 FROM game_summary AS s WHERE s.game_id = g.id)
         ORDER BY g.id",
    )
}

/// `game_summary` rows without a game: `game_id`.
pub fn summaries_without_game(snap: &Snapshot) -> Result<Scan<'_>> {
    scan(
        snap,
        "SELECT s.game_id FROM game_summary AS s
         WHERE NOT EXISTS (SELECT 1 FROM games AS g WHERE g.id = s.game_id)
         ORDER BY s.game_id",
    )
}

/// Games without runs: `id`.
pub fn games_without_runs(snap: &Snapshot) -> Result<Scan<'_>> {
    scan(
        snap,
        "SELECT g.id FROM games AS g
         WHERE NOT EXISTS (SELECT 1 FROM runs AS r WHERE r.game_id = g.id)
         ORDER BY g.id",
    )
}

/// What `ply_numbers` holds, and the longest game.
#[derive(Clone, Copy, Debug)]
pub struct PlyNumbers {
    /// Its rows.
    pub count: i64,
    pub min: Option<i64>,
    pub max: Option<i64>,
    /// The most plies of a game (integer plies only).
    pub longest: Option<i64>,
}

/// What `ply_numbers` holds, and the longest game.
pub fn ply_numbers(snap: &Snapshot) -> Result<PlyNumbers> {
    Ok(snap.query_row(
        "SELECT (SELECT count(*) FROM ply_numbers), (SELECT min(n) FROM ply_numbers),
                    (SELECT max(n) FROM ply_numbers),
                    (SELECT max(plies) FROM games WHERE typeof(plies) = 'integer')",
        [],
        |r| {
            Ok(PlyNumbers {
                count: r.get(0)?,
                min: r.get(1)?,
                max: r.get(2)?,
                longest: r.get(3)?,
            })
        },
    )?)
}

/// The greatest id (0 when empty) and the rows of `games` or `pawn_sets`.
pub fn id_span(snap: &Snapshot, table: &str) -> Result<(i64, i64)> {
    if !matches!(table, "games" | "pawn_sets") {
        bail!("no id span for the table {table}");
    }
    Ok(snap.query_row(
        &format!("SELECT coalesce(max(id), 0), count(*) FROM {table}"),
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}

/// Every pawn set in id order: `id`, `side`, `pawns`, then the side features in the order of
/// [`crate::model::features::SIDE_FEATURES`].
pub fn pawn_sets(snap: &Snapshot) -> Result<Scan<'_>> {
    scan(
        snap,
        &format!(
            "SELECT id, side, pawns, {} FROM pawn_sets ORDER BY id",
            side_columns::features("")
        ),
    )
}

/// Every run in key order with its game's plies and its pawn sets' sides (NULL when the row is
/// missing): `game_id`, `first_ply`, `last_ply`, `white_set`, `black_set`, `missing`,
/// `bishop_pairs`, `plies`, the White set's `side`, the Black set's `side`.
pub fn runs(snap: &Snapshot) -> Result<Scan<'_>> {
    scan(
        snap,
        "SELECT r.game_id, r.first_ply, r.last_ply, r.white_set, r.black_set, r.missing,
                r.bishop_pairs, g.plies, w.side, b.side
         FROM runs AS r
         LEFT JOIN games AS g ON g.id = r.game_id
         LEFT JOIN pawn_sets AS w ON w.id = r.white_set
         LEFT JOIN pawn_sets AS b ON b.id = r.black_set
         ORDER BY r.game_id, r.first_ply",
    )
}

/// `structure_changes` in key order: `game_id`, `ply`, `from_structure`, `to_structure`,
/// `move`.
pub fn structure_changes(snap: &Snapshot) -> Result<Scan<'_>> {
    scan(
        snap,
        "SELECT game_id, ply, from_structure, to_structure, move
         FROM structure_changes ORDER BY game_id, ply",
    )
}

/// Every run in key order with its structure and pawns (NULL when a set is missing):
/// `game_id`, `first_ply`, `structure`, `white_set`, `black_set`, White's `pawns`, Black's
/// `pawns`.
pub fn runs_with_pawns(snap: &Snapshot) -> Result<Scan<'_>> {
    scan(
        snap,
        "SELECT r.game_id, r.first_ply, r.structure, r.white_set, r.black_set, w.pawns, b.pawns
         FROM runs AS r
         LEFT JOIN pawn_sets AS w ON w.id = r.white_set
         LEFT JOIN pawn_sets AS b ON b.id = r.black_set
         ORDER BY r.game_id, r.first_ply",
    )
}

/// The fingerprint of the catalogue the runs were named with.
pub fn catalogue_fingerprint(snap: &Snapshot) -> Result<String> {
    Ok(
        snap.query_row("SELECT fingerprint FROM structure_catalogue", [], |r| {
            r.get(0)
        })?,
    )
}

/// `structure_names` in id order: `id`, `key`, `reversed`.
pub fn structure_names(snap: &Snapshot) -> Result<Scan<'_>> {
    scan(
        snap,
        "SELECT id, key, reversed FROM structure_names ORDER BY id",
    )
}

/// Whether the runs were named with the rules of `catalogue`.
pub fn rules_current(snap: &Snapshot, catalogue: &Catalogue) -> Result<bool> {
    structures::rules_current(snap, catalogue)
}

/// Whether the structures' names and descriptions stored are those of `catalogue`, its rules
/// included.
pub fn names_current(snap: &Snapshot, catalogue: &Catalogue) -> Result<bool> {
    structures::is_current(snap, catalogue)
}

/// The rows of `derived` and the last game (0 without games).
pub fn derived_counts(snap: &Snapshot) -> Result<(i64, i64)> {
    Ok(snap.query_row(
        "SELECT (SELECT count(*) FROM derived), (SELECT coalesce(max(id), 0) FROM games)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}

/// The first row of `derived`: `through`, `finished`.
pub fn derived_row(snap: &Snapshot) -> Result<Scan<'_>> {
    scan(snap, "SELECT through, finished FROM derived LIMIT 1")
}

/// Rows of `set_totals` or `set_games` for ids that are not pawn sets: `set_id`.
pub fn orphans<'s>(snap: &'s Snapshot, table: &str) -> Result<Scan<'s>> {
    if !matches!(table, "set_totals" | "set_games") {
        bail!("no orphans of the table {table}");
    }
    scan(
        snap,
        &format!(
            "SELECT t.set_id FROM {table} AS t
             WHERE NOT EXISTS (SELECT 1 FROM pawn_sets AS s WHERE s.id = t.set_id)
             ORDER BY t.set_id"
        ),
    )
}

/// The least and greatest pawn-set id of the window of at most `per_pass` ids that starts at
/// the first set from `lo` (ids below [`SET_ID_END`] only).
pub fn set_window(snap: &Snapshot, lo: i64, per_pass: i64) -> Result<(Option<i64>, Option<i64>)> {
    Ok(snap.query_row(
        "SELECT min(id), max(id) FROM pawn_sets WHERE id >= ?1 AND id < ?2
           AND id < (SELECT min(id) FROM pawn_sets WHERE id >= ?1) + ?3",
        rusqlite::params![lo, SET_ID_END, per_pass],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}

/// `bishop_totals` by key: `bishop_pairs`, `positions`.
pub fn bishop_totals(snap: &Snapshot) -> Result<Scan<'_>> {
    scan(
        snap,
        "SELECT bishop_pairs, positions FROM bishop_totals ORDER BY 1",
    )
}

/// `set_totals` of the sets `?1..?2` in set order: `set_id`, then [`TOTALS_COLUMNS`].
pub fn set_totals(snap: &Snapshot) -> Result<Scan<'_>> {
    scan(
        snap,
        "SELECT set_id, positions, games, white_wins, draws, black_wins, white_elo_sum,
                white_elo_positions, black_elo_sum, black_elo_positions
         FROM set_totals WHERE set_id >= ?1 AND set_id < ?2 ORDER BY set_id",
    )
}

/// `set_games` of the sets `?1..?2` in set order: `set_id`, `last_game`, `games`.
pub fn set_games(snap: &Snapshot) -> Result<Scan<'_>> {
    scan(
        snap,
        "SELECT set_id, last_game, games FROM set_games
         WHERE set_id >= ?1 AND set_id < ?2 ORDER BY set_id",
    )
}

/// The runs of the games 1..=`?1` in key order, with their game: `game_id`, `first_ply`,
/// `last_ply`, `white_set`, `black_set`, `bishop_pairs`, `result`, `white_elo`, `black_elo`.
pub fn runs_with_games(snap: &Snapshot) -> Result<Scan<'_>> {
    scan(
        snap,
        "SELECT r.game_id, r.first_ply, r.last_ply, r.white_set, r.black_set, r.bishop_pairs,
                g.result, g.white_elo, g.black_elo
         FROM runs AS r JOIN games AS g ON g.id = r.game_id
         WHERE r.game_id BETWEEN 1 AND ?1
         ORDER BY r.game_id, r.first_ply",
    )
}

/// The games 1..=`?1` whose runs reach the pawn set `?2`, one row per run in key order:
/// `game_id`.
pub fn games_of_set(snap: &Snapshot) -> Result<Scan<'_>> {
    scan(
        snap,
        "SELECT r.game_id FROM runs AS r JOIN games AS g ON g.id = r.game_id
         WHERE r.game_id BETWEEN 1 AND ?1 AND (r.white_set = ?2 OR r.black_set = ?2)
         ORDER BY r.game_id, r.first_ply",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two reads that name a table in their SQL take only the tables they are for, and a
    /// statement without rows read as one row is an error, not a panic.
    #[test]
    fn table_names_are_checked_and_a_missing_row_is_an_error() {
        let snap = Reader::in_memory().snapshot(&Limit::none()).unwrap();
        snap.execute_batch(
            "CREATE TABLE derived (through INTEGER, finished INTEGER);
             CREATE TABLE pawn_sets (id INTEGER PRIMARY KEY);
             CREATE TABLE set_totals (set_id INTEGER PRIMARY KEY);",
        )
        .unwrap();
        assert_eq!(id_span(&snap, "pawn_sets").unwrap(), (0, 0));
        let e = id_span(&snap, "pawn_sets; DROP TABLE x").unwrap_err();
        assert!(e.to_string().contains("no id span"), "{e}");
        assert!(orphans(&snap, "set_totals").is_ok());
        let e = orphans(&snap, "runs").err().expect("refused");
        assert!(e.to_string().contains("no orphans"), "{e}");
        let e = derived_row(&snap)
            .unwrap()
            .one(&[], |r| r.id(0))
            .unwrap_err();
        assert_eq!(e.to_string(), "Query returned no rows");
    }
}
