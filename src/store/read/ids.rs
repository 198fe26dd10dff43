//! Tables indexed by an id read from the database (a pawn set's, a game's): sized by the rows
//! the database holds, never by one id alone.
//!
//! pawndex numbers pawn sets and games 1, 2, 3, … without gaps, so a table with a slot per id
//! costs what the rows cost. An id far above the number of rows (a damaged or hand-edited
//! file: SQLite accepts any 64-bit id) would make such a table huge; the readers that index by
//! id (`pawndex similar`, `pawndex stats`) refuse the database in one line instead, and
//! `pawndex check` reports it (the same rule, [`dense`]).

use anyhow::Result;
use rusqlite::Connection;

/// Ids a table may span beyond twice its rows.
const SLACK: i64 = 1 << 16;

/// Whether ids `lo..=hi` are few enough for `rows` rows to size a table with a slot per id: at
/// most twice as many ids as rows, plus 65,536. An empty span (`hi < lo`) always is.
#[must_use]
pub fn dense(lo: i64, hi: i64, rows: i64) -> bool {
    if hi < lo {
        return true;
    }
    let span = i128::from(hi) - i128::from(lo) + 1;
    span <= 2 * i128::from(rows.max(0)) + i128::from(SLACK)
}

/// The error of a reader that refuses ids `lo..=hi` for `rows` rows of `what` ("pawn set",
/// "game").
fn refuse(what: &str, lo: i64, hi: i64, rows: i64) -> anyhow::Error {
    anyhow::anyhow!(
        "{what} ids run from {lo} to {hi} for {rows} {what}s (pawndex numbers them without \
         gaps): the database is damaged (run `pawndex check`)"
    )
}

/// The size of a table with a slot per pawn-set id (the largest id + 1; 1 without sets), or
/// an error naming `pawndex check` when the ids are not [`dense`]. Ids below 1 (never written)
/// have no slot: the read commands refuse them on opening ([`from_one`]).
pub fn pawn_set_table(conn: &Connection) -> Result<usize> {
    let (max, rows): (i64, i64) = conn.query_row(
        "SELECT coalesce(max(id), 0), count(*) FROM pawn_sets",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let max = max.max(0);
    if !dense(1, max, rows) {
        return Err(refuse("pawn set", 1, max, rows));
    }
    usize::try_from(i128::from(max) + 1).map_err(|_| refuse("pawn set", 1, max, rows))
}

/// An error naming `pawndex check` when a game or a pawn set has an id below 1. pawndex never
/// writes one; the derived tables and the unmerged tail cover the games from 1 up (`game_id >
/// derived.through`) and the tables with a slot per pawn-set id start at 1, so such a row would
/// be left out of answers without a word. Two look-ups at the start of each table's key.
pub fn from_one(conn: &Connection) -> Result<()> {
    for (table, what) in [("games", "game"), ("pawn_sets", "pawn set")] {
        let min: i64 = conn.query_row(
            &format!("SELECT coalesce(min(id), 1) FROM {table}"),
            [],
            |r| r.get(0),
        )?;
        if min < 1 {
            return Err(anyhow::anyhow!(
                "a {what} has the id {min} (pawndex numbers them from 1): the database is \
                 damaged (run `pawndex check`)"
            ));
        }
    }
    Ok(())
}

/// The size of a table with a slot per id of `lo..=hi` (0 for an empty span), or the one-line
/// refusal naming `pawndex check` when the ids are not [`dense`] for `rows` rows of `what`.
pub fn table_size(what: &str, lo: i64, hi: i64, rows: i64) -> Result<usize> {
    if hi < lo {
        return Ok(0);
    }
    if !dense(lo, hi, rows) {
        return Err(refuse(what, lo, hi, rows));
    }
    usize::try_from(i128::from(hi) - i128::from(lo) + 1).map_err(|_| refuse(what, lo, hi, rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_is_dense_up_to_twice_the_rows_plus_the_slack() {
        assert!(dense(1, 10, 10));
        assert!(dense(1, 0, 0));
        assert!(dense(0, SLACK - 1, 0));
        assert!(!dense(0, SLACK, 0));
        assert!(dense(1, 2 * 1000 + SLACK, 1000));
        assert!(!dense(1, 2 * 1000 + SLACK + 1, 1000));
        assert!(!dense(0, i64::MAX, 229));
        assert!(!dense(i64::MIN, i64::MAX, 1 << 40));
        // No overflow at the ends of the range.
        assert!(dense(i64::MIN, i64::MAX, i64::MAX));
        assert!(dense(5, 4, 0));
    }

    #[test]
    fn table_sizes_refuse_wild_ids_naming_check() {
        assert_eq!(table_size("game", 1, 12, 12).unwrap(), 12);
        assert_eq!(table_size("game", 1, 0, 0).unwrap(), 0);
        let e = table_size("pawn set", 0, 300_000_000, 229).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("pawndex check"), "{text}");
        assert!(text.contains("300000000") && !text.contains('\n'), "{text}");
    }
}
