//! The reads of `pawndex structures`: the catalogue rows, then one pass over `games` merged with
//! one over `structure_changes`.
//!
//! Everything the report says follows from the changes: a game is in a structure from a change
//! row to its next change row (or to its last ply), so the report never reads `runs`.

use anyhow::Result;
use rusqlite::Connection;

pub use crate::store::read::search::StructureName;

/// Every game in id order: its result, ECO, length and start position.
const GAMES: &str = "SELECT id, result, eco, plies, fen FROM games ORDER BY id";

/// Every change in (game, ply) order, the primary key's order (no sort).
const CHANGES: &str = "SELECT game_id, ply, from_structure, to_structure, move
    FROM structure_changes ORDER BY game_id, ply";

/// The catalogue rows, in catalogue order (by id).
pub fn names(conn: &Connection) -> Result<Vec<StructureName>> {
    let mut names = crate::store::read::search::structure_names(conn)?;
    names.sort_by_key(|n| n.id);
    Ok(names)
}

/// One game, as the report needs it.
#[derive(Clone, Copy, Debug)]
pub struct GameRow<'a> {
    pub result: Option<&'a str>,
    pub eco: Option<&'a str>,
    /// The game's number of plies (its last position is at this ply).
    pub plies: u32,
    /// The start position's FEN (None: the standard start, White to move).
    pub fen: Option<&'a str>,
}

/// One row of `structure_changes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub ply: u32,
    pub from: u16,
    pub to: u16,
    /// The SAN of the move that made the change (None at ply 0).
    pub san: Option<String>,
}

/// Calls `f` with every game, in id order, and its changes in ply order (none for most games).
///
/// Two sequential scans merged by game id: `games` in rowid order and `structure_changes` in
/// its key's order (a look-up of each change's game would cost a B-tree descent per change).
/// Changes of a game id that `games` does not hold are skipped.
pub fn for_each_game(conn: &Connection, mut f: impl FnMut(&GameRow<'_>, &[Change])) -> Result<()> {
    let mut games_st = conn.prepare(GAMES)?;
    let mut changes_st = conn.prepare(CHANGES)?;
    let mut games = games_st.query([])?;
    let mut changes = changes_st.query([])?;
    let mut pending = next_change(&mut changes)?;
    let mut of_game: Vec<Change> = Vec::new();
    while let Some(g) = games.next()? {
        let id: i64 = g.get(0)?;
        of_game.clear();
        while let Some((game, change)) = pending.take() {
            if game > id {
                pending = Some((game, change));
                break;
            }
            if game == id {
                of_game.push(change);
            }
            pending = next_change(&mut changes)?;
        }
        f(
            &GameRow {
                result: text(g, 1)?,
                eco: text(g, 2)?,
                plies: number(g, 3)?,
                fen: text(g, 4)?,
            },
            &of_game,
        );
    }
    Ok(())
}

/// The next change and its game id, None after the last.
fn next_change(rows: &mut rusqlite::Rows<'_>) -> Result<Option<(i64, Change)>> {
    let Some(r) = rows.next()? else {
        return Ok(None);
    };
    Ok(Some((
        r.get(0)?,
        Change {
            ply: number(r, 1)?,
            from: number(r, 2)?,
            to: number(r, 3)?,
            san: r.get(4)?,
        },
    )))
}

/// An integer column that must fit `T`.
fn number<T: TryFrom<i64>>(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<T> {
    let v: i64 = r.get(i)?;
    T::try_from(v).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(i, v))
}

/// A TEXT or NULL column, borrowed from the row.
fn text<'a>(r: &'a rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<&'a str>> {
    r.get_ref(i)?.as_str_or_null().map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    })
}

/// The most common exact form of a named structure: the pawns reached in the most games among
/// the positions with that name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommonForm {
    /// The named form's code (`2 * id + reversed`).
    pub code: u16,
    pub white: u64,
    pub black: u64,
    /// The games that reach exactly these pawns.
    pub games: u64,
}

/// Every run with a name, in key order (game by game): its name and its two pawn sets.
const NAMED_RUNS: &str =
    "SELECT game_id, structure, white_set, black_set FROM runs WHERE structure <> 0
     ORDER BY game_id, first_ply";

/// The pawns of a pawn set by id.
const SET_PAWNS: &str = "SELECT pawns FROM pawn_sets WHERE id = ?1";

/// Per named form, its most common exact form (ties: the smaller set ids, the first stored):
/// one pass over the runs, each (form, pawns) pair counted once per game.
pub fn common_forms(conn: &Connection) -> Result<Vec<CommonForm>> {
    use std::collections::HashMap;
    // (code, white set, black set) -> (games, the last game counted)
    let mut tally: HashMap<(u16, i64, i64), (u64, i64)> = HashMap::new();
    let mut st = conn.prepare(NAMED_RUNS)?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let game: i64 = r.get(0)?;
        let key = (number(r, 1)?, r.get(2)?, r.get(3)?);
        let e = tally.entry(key).or_insert((0, i64::MIN));
        if e.1 != game {
            e.0 += 1;
            e.1 = game;
        }
    }
    let mut best: HashMap<u16, (u64, i64, i64)> = HashMap::new();
    for ((code, w, b), (games, _)) in tally {
        let e = best.entry(code).or_insert((games, w, b));
        if (games, std::cmp::Reverse((w, b))) > (e.0, std::cmp::Reverse((e.1, e.2))) {
            *e = (games, w, b);
        }
    }
    let mut pawns = conn.prepare(SET_PAWNS)?;
    let mut of_set =
        |id: i64| -> Result<u64> { Ok(pawns.query_row([id], |r| r.get::<_, i64>(0))? as u64) };
    let mut out = Vec::with_capacity(best.len());
    for (code, (games, w, b)) in best {
        out.push(CommonForm {
            code,
            white: of_set(w)?,
            black: of_set(b)?,
            games,
        });
    }
    out.sort_by_key(|f| f.code);
    Ok(out)
}
