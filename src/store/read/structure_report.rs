//! The reads of `pawndex structures`: the catalogue rows, then one pass over `games` merged with
//! one over `structure_changes`.
//!
//! Everything the report says follows from the changes: a game is in a structure from a change
//! row to its next change row (or to its last ply), so the report never reads `runs`.

use anyhow::Result;
use rusqlite::Connection;

use crate::model::hash::IntMap;

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

/// The runs with a name of games `?1..=?2`, in key order (game by game): the game, its named
/// form and its two pawn sets.
const NAMED_RUNS: &str = "SELECT game_id, structure, white_set, black_set FROM runs
     WHERE game_id BETWEEN ?1 AND ?2 AND structure <> 0 ORDER BY game_id, first_ply";

/// The pawns of a pawn set by id.
const SET_PAWNS: &str = "SELECT pawns FROM pawn_sets WHERE id = ?1";

/// For each (named form code, white set, black set): the games of a slice that reach it.
pub type FormTally = IntMap<(u16, i64, i64), u64>;

/// The games of `first..=last` that reach each exact form with a name: one pass over their
/// runs with a name, each (form, pawns) counted once per game. Slices of disjoint games add up
/// ([`merge_tallies`]).
pub fn form_tally(conn: &Connection, (first, last): (i64, i64)) -> Result<FormTally> {
    // (code, white set, black set) -> (games, the last game counted)
    let mut tally: IntMap<(u16, i64, i64), (u64, i64)> = IntMap::default();
    let mut st = conn.prepare(NAMED_RUNS)?;
    let mut rows = st.query([first, last])?;
    while let Some(r) = rows.next()? {
        let game: i64 = r.get(0)?;
        let key = (number(r, 1)?, r.get(2)?, r.get(3)?);
        let e = tally.entry(key).or_insert((0, i64::MIN));
        if e.1 != game {
            e.0 += 1;
            e.1 = game;
        }
    }
    Ok(tally
        .into_iter()
        .map(|(k, (games, _))| (k, games))
        .collect())
}

/// The tallies of slices of disjoint games as one.
#[must_use]
pub fn merge_tallies(tallies: Vec<FormTally>) -> FormTally {
    let mut tallies = tallies.into_iter();
    let mut all = tallies.next().unwrap_or_default();
    for t in tallies {
        for (k, games) in t {
            *all.entry(k).or_insert(0) += games;
        }
    }
    all
}

/// Per named form, its most common exact form in `tally` (ties: the smaller set ids, the first
/// stored), with its pawns read from `pawn_sets`.
pub fn common_forms_of(conn: &Connection, tally: &FormTally) -> Result<Vec<CommonForm>> {
    let mut best: IntMap<u16, (u64, i64, i64)> = IntMap::default();
    for (&(code, w, b), &games) in tally {
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
