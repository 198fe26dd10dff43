//! The derived tables' rows: `set_games` lists (LEB128 differences of game ids) and
//! `set_totals` rows, written as laid-out pages in a first derivation, else through SQL (new
//! sets many to a statement, sets already there extended one by one).

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, params};

use super::fold::{Folding, SetAggregate, fold_sets};
use super::sort::PairSorter;
use crate::store::bulk_tree;
use crate::store::rows::{ROWS_PER_INSERT, insert_rows, multi_row_insert};

/// Appends an unsigned LEB128 varint.
fn push_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// The game ids of a `set_games.games` list (LEB128 varints of the differences, the first
/// from 0). A damaged list ends where it stops making sense (an unterminated or oversized
/// varint, an id past `i64::MAX`), never with a panic.
#[must_use]
pub fn decode_games(blob: &[u8]) -> Vec<i64> {
    let mut out = Vec::with_capacity(blob.len().min(1 << 20));
    let (mut value, mut shift, mut last) = (0u64, 0u32, 0u64);
    for &b in blob {
        if shift > 63 {
            break;
        }
        value |= u64::from(b & 0x7F) << shift;
        if b & 0x80 != 0 {
            shift += 7;
            continue;
        }
        let Some(id) = last.checked_add(value).filter(|&id| id <= i64::MAX as u64) else {
            break;
        };
        out.push(id as i64);
        last = id;
        value = 0;
        shift = 0;
    }
    out
}

/// The columns of `set_totals` after `set_id`, in the order of [`Totals`].
pub(in crate::store) const TOTALS_COLUMNS: [&str; 9] = [
    "positions",
    "games",
    "white_wins",
    "draws",
    "black_wins",
    "white_elo_sum",
    "white_elo_positions",
    "black_elo_sum",
    "black_elo_positions",
];

/// `set_totals` with its columns named, for an insert.
fn totals_table() -> String {
    format!("set_totals (set_id, {})", TOTALS_COLUMNS.join(", "))
}

/// Totals of one set being merged: positions, games, white wins, draws, black wins, white elo
/// sum, white elo positions, black elo sum, black elo positions.
pub type Totals = [i64; 9];

/// The root pages of `set_games` and `set_totals` when a run lays out their pages: nothing
/// derived yet (`derived.through` is 0) and `root` (the writer's choice of a table's path,
/// given by it so that `derive` does not import `write`) gives both.
pub(in crate::store) fn fresh_roots(
    conn: &Connection,
    root: impl Fn(&Connection, &str, &[&str]) -> Result<Option<u32>>,
) -> Result<Option<(u32, u32)>> {
    let through: i64 = conn.query_row("SELECT through FROM derived", [], |r| r.get(0))?;
    if through != 0 {
        return Ok(None);
    }
    let lists = root(conn, "set_games", &["set_id", "last_game", "games"])?;
    let mut columns = vec!["set_id"];
    columns.extend(TOTALS_COLUMNS);
    let totals = root(conn, "set_totals", &columns)?;
    Ok(lists.zip(totals))
}

/// Closed pages kept before they are written, at most (both tables).
const FRESH_PAGES_IN_MEMORY: usize = 16 << 20;

/// Lays out the pages of `set_games` and `set_totals` (roots `roots`) from the sets that
/// `folding` sends: the connection's transaction must write nothing after.
pub(super) fn lay_out_fresh(conn: &Connection, folding: Folding, roots: (u32, u32)) -> Result<()> {
    let Folding { sets, thread } = folding;
    let mut lists = bulk_tree::Tree::table(conn, roots.0)?;
    let mut totals = bulk_tree::Tree::table(conn, roots.1)?;
    let mut w = bulk_tree::PageWriter::begin(conn)?;
    let mut record = bulk_tree::Record::default();
    let written = sets.iter().flatten().try_for_each(|f| -> Result<()> {
        // The rowid alias (`set_id`) is NULL in the record.
        let row = record
            .start()
            .null()
            .int(f.last as i64)
            .blob(&f.list)
            .bytes();
        lists.add_row(i64::from(f.set), row)?;
        let rec = record.start().null();
        for &v in &f.totals {
            rec.int(v);
        }
        totals.add_row(i64::from(f.set), rec.bytes())?;
        if lists.closed_bytes() + totals.closed_bytes() > FRESH_PAGES_IN_MEMORY {
            lists.write_closed(&mut w)?;
            totals.write_closed(&mut w)?;
        }
        Ok(())
    });
    drop(sets);
    let folded = thread
        .join()
        .map_err(|_| anyhow::anyhow!("the thread folding the pairs failed"))?;
    // The pages' own error first: the fold then only stopped because of it.
    written?;
    folded?;
    lists.write(&mut w)?;
    totals.write(&mut w)?;
    w.end()
}

/// Appends `games` (ascending) to a `set_games` list whose last game is `from`, as LEB128
/// differences; the new last game.
pub(super) fn encode_games(games: &[u32], from: u64, list: &mut Vec<u8>) -> u64 {
    let mut last = from;
    for &game in games {
        push_varint(list, u64::from(game).saturating_sub(last));
        last = u64::from(game);
    }
    last
}

/// The rows of `set_games` and `set_totals` for sets that have none yet, written through
/// multi-row statements: one statement per set and table cost about 4,000 instructions each,
/// most of the derived tables' time on a first load.
#[derive(Default)]
struct FreshRows {
    /// `set_games` rows: set, last game, the list.
    lists: Vec<(i64, i64, Vec<u8>)>,
    totals: Vec<[i64; 10]>,
}

/// Writes the derived rows of a first derivation through SQL (sets that have no rows yet).
pub(super) fn fresh_rows(conn: &Connection, sorter: PairSorter) -> Result<()> {
    let mut fresh = FreshRows::default();
    fold_sets(sorter, |a| fresh.add(conn, a))?;
    fresh.flush(conn, true)
}

/// Merges the sets of later games into the derived tables through SQL, in set order: each
/// set's new games appended to its list (its row made if it has none), its totals added.
pub(super) fn append_sets(conn: &Connection, sorter: PairSorter) -> Result<()> {
    let mut stored_last = conn.prepare("SELECT last_game FROM set_games WHERE set_id = ?1")?;
    let mut insert =
        conn.prepare("INSERT INTO set_games (set_id, last_game, games) VALUES (?1, ?2, ?3)")?;
    let mut extend = conn.prepare(
        "UPDATE set_games SET last_game = ?2, games = CAST(games || ?3 AS BLOB) WHERE set_id = ?1",
    )?;
    let mut upsert = conn.prepare(
        "INSERT INTO set_totals (set_id, positions, games, white_wins, draws, black_wins,
             white_elo_sum, white_elo_positions, black_elo_sum, black_elo_positions)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (set_id) DO UPDATE SET
             positions = positions + excluded.positions,
             games = games + excluded.games,
             white_wins = white_wins + excluded.white_wins,
             draws = draws + excluded.draws,
             black_wins = black_wins + excluded.black_wins,
             white_elo_sum = white_elo_sum + excluded.white_elo_sum,
             white_elo_positions = white_elo_positions + excluded.white_elo_positions,
             black_elo_sum = black_elo_sum + excluded.black_elo_sum,
             black_elo_positions = black_elo_positions + excluded.black_elo_positions",
    )?;
    let mut list = Vec::new();
    fold_sets(sorter, |a| {
        // The new part of the list, encoded from the set's stored last game.
        let stored: Option<i64> = stored_last.query_row([a.set], |r| r.get(0)).optional()?;
        list.clear();
        let last = encode_games(&a.games, stored.map_or(0, |v| v.max(0) as u64), &mut list);
        if stored.is_some() {
            extend.execute(params![a.set, last as i64, list])?;
        } else {
            insert.execute(params![a.set, last as i64, list])?;
        }
        let t = &a.totals;
        upsert.execute(params![
            a.set, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8]
        ])?;
        Ok(())
    })
}

impl FreshRows {
    fn add(&mut self, conn: &Connection, a: &SetAggregate) -> Result<()> {
        let mut list = Vec::new();
        let last = encode_games(&a.games, 0, &mut list);
        self.lists.push((i64::from(a.set), last as i64, list));
        let t = &a.totals;
        self.totals.push([
            i64::from(a.set),
            t[0],
            t[1],
            t[2],
            t[3],
            t[4],
            t[5],
            t[6],
            t[7],
            t[8],
        ]);
        if self.lists.len() >= 4 * ROWS_PER_INSERT {
            self.flush(conn, false)?;
        }
        Ok(())
    }

    /// Writes whole multi-row chunks only, or everything when `all`.
    fn flush(&mut self, conn: &Connection, all: bool) -> Result<()> {
        let per = ROWS_PER_INSERT;
        let n = if all {
            self.lists.len()
        } else {
            self.lists.len() - self.lists.len() % per
        };
        for chunk in self.lists[..n].chunks(per) {
            let mut st = conn.prepare_cached(&multi_row_insert(
                "set_games (set_id, last_game, games)",
                3,
                chunk.len(),
            ))?;
            for (i, (set, last, list)) in chunk.iter().enumerate() {
                st.raw_bind_parameter(3 * i + 1, set)?;
                st.raw_bind_parameter(3 * i + 2, last)?;
                st.raw_bind_parameter(3 * i + 3, list)?;
            }
            st.raw_execute()?;
        }
        self.lists.drain(..n);
        insert_rows(conn, &totals_table(), &self.totals[..n])?;
        self.totals.drain(..n);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_lists_decode_and_stop_at_damage() {
        assert_eq!(decode_games(&[3, 1, 0x80, 0x01]), vec![3, 4, 132]);
        assert_eq!(decode_games(&[0xFF]), Vec::<i64>::new());
    }
}
