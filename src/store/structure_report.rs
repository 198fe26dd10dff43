//! The reads of `pawndex structures`: the catalogue rows, the totals of `games` and one ordered
//! pass over `structure_changes` with each change's game.
//!
//! Everything the report says follows from the changes: a game is in a structure from a change
//! row to its next change row (or to its last ply), so the report never reads `runs`.

use anyhow::Result;
use rusqlite::Connection;

/// The catalogue stored in the database, in catalogue order.
const NAMES: &str = "SELECT id, key, name, family, reversed FROM structure_names ORDER BY id";

/// Games, their positions (plies 0..=plies each), and their positions in a ply window.
const TOTALS: &str = "SELECT count(*), coalesce(sum(plies + 1), 0),
        coalesce(sum(max(0, min(plies, ?2) - ?1 + 1)), 0)
    FROM games";

/// Every change in (game, ply) order, the primary key's order, with its game's result, ECO and
/// length. `CROSS JOIN` keeps the changes the outer loop (no sort; one rowid look-up per row).
const CHANGES: &str = "SELECT c.game_id, c.ply, c.from_structure, c.to_structure, c.move,
        g.result, g.eco, g.plies
    FROM structure_changes AS c
    CROSS JOIN games AS g ON g.id = c.game_id
    ORDER BY c.game_id, c.ply";

/// One row of `structure_names`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameRow {
    pub id: i64,
    pub key: String,
    pub name: String,
    pub family: String,
    /// Whether the colour-reversed form is looked for too.
    pub reversed: bool,
}

/// The catalogue rows, by id.
pub fn names(conn: &Connection) -> Result<Vec<NameRow>> {
    let mut st = conn.prepare(NAMES)?;
    let rows = st.query_map([], |r| {
        Ok(NameRow {
            id: r.get(0)?,
            key: r.get(1)?,
            name: r.get(2)?,
            family: r.get(3)?,
            reversed: r.get::<_, i64>(4)? != 0,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// What the `games` table holds in all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub games: u64,
    /// Positions: every game's plies 0 to its last.
    pub positions: u64,
    /// Positions at plies `first..=last` of the window asked for.
    pub window_positions: u64,
}

/// The totals of `games`, with the positions at plies `first..=last`.
pub fn totals(conn: &Connection, first: u32, last: u32) -> Result<Totals> {
    Ok(conn.query_row(TOTALS, [first, last], |r| {
        Ok(Totals {
            games: r.get::<_, i64>(0)? as u64,
            positions: r.get::<_, i64>(1)? as u64,
            window_positions: r.get::<_, i64>(2)? as u64,
        })
    })?)
}

/// One row of `structure_changes` with its game's columns.
#[derive(Clone, Copy, Debug)]
pub struct ChangeRow<'a> {
    pub game: i64,
    pub ply: u32,
    pub from: u16,
    pub to: u16,
    /// The SAN of the move that made the change (None at ply 0).
    pub san: Option<&'a str>,
    pub result: Option<&'a str>,
    pub eco: Option<&'a str>,
    /// The game's number of plies (its last position is at this ply).
    pub plies: u32,
}

/// Calls `f` with every change, in (game, ply) order.
pub fn for_each_change(conn: &Connection, mut f: impl FnMut(&ChangeRow<'_>)) -> Result<()> {
    let mut st = conn.prepare(CHANGES)?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let code = |i: usize| -> rusqlite::Result<u16> {
            let v: i64 = r.get(i)?;
            u16::try_from(v).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(i, v))
        };
        let count = |i: usize| -> rusqlite::Result<u32> {
            let v: i64 = r.get(i)?;
            u32::try_from(v).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(i, v))
        };
        f(&ChangeRow {
            game: r.get(0)?,
            ply: count(1)?,
            from: code(2)?,
            to: code(3)?,
            san: text(r, 4)?,
            result: text(r, 5)?,
            eco: text(r, 6)?,
            plies: count(7)?,
        });
    }
    Ok(())
}

/// A TEXT or NULL column, borrowed from the row.
fn text<'a>(r: &'a rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<&'a str>> {
    r.get_ref(i)?.as_str_or_null().map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    })
}
