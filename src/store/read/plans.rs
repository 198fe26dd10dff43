//! The reads of `pawndex plans`: the stretches of plies each game spends in a structure, the
//! games a list keeps under the game filters, and the games per decade (the share that reaches
//! the structure). The replay and the counting are the engine's (`engine::plans`).

use anyhow::Result;
use rusqlite::Connection;

use super::params::bind_params;
use super::search::{Rows, Search, json_array};
use crate::model::plans::{PerDecade, decade};
use crate::model::stored::StoredGame;

/// A game's stretches of plies in the structure: (first, last), both included, ascending.
pub type Stretches = Vec<(u32, u32)>;

/// The games with a position matching `search`, each with its stretches of matching plies
/// (adjacent runs joined), ascending by game.
pub fn stretches(conn: &Connection, search: &Search) -> Result<Vec<(i64, Stretches)>> {
    let (form, games) = search.rows_form(conn)?;
    let mut sql = search.rows_sql(form, Rows::Runs);
    sql.params.extend(games);
    let mut st = conn.prepare(&sql.text)?;
    bind_params(&mut st, &sql.params)?;
    let mut out: Vec<(i64, Stretches)> = Vec::new();
    let mut rows = st.raw_query();
    while let Some(r) = rows.next()? {
        let game: i64 = r.get(0)?;
        let (Ok(first), Ok(last)) = (
            u32::try_from(r.get::<_, i64>(1)?),
            u32::try_from(r.get::<_, i64>(2)?),
        ) else {
            continue;
        };
        push_stretch(&mut out, game, first, last);
    }
    Ok(out)
}

/// Appends the plies `first..=last` of `game` to `out` (games ascending, plies ascending within
/// a game), joining a stretch that continues the one before.
pub fn push_stretch(out: &mut Vec<(i64, Stretches)>, game: i64, first: u32, last: u32) {
    if first > last {
        return;
    }
    match out.last_mut() {
        Some((g, s)) if *g == game => match s.last_mut() {
            Some(prev) if prev.1.saturating_add(1) >= first => prev.1 = prev.1.max(last),
            _ => s.push((first, last)),
        },
        _ => out.push((game, vec![(first, last)])),
    }
}

/// The stretches of the games with ids `from..=to` in the named forms `codes` (`runs.structure`
/// codes), from `structure_changes` alone: a stay in a form starts at a change into it and
/// lasts until the game's next change out of the forms, or to its end (`u32::MAX`: the replay
/// stops at the game's last ply). The table holds every change of every stored game (written
/// with the game), so these are exactly the plies whose runs have those codes, without reading
/// a run.
pub fn named_stretches(
    conn: &Connection,
    codes: &[i64],
    from: i64,
    to: i64,
) -> Result<Vec<(i64, Stretches)>> {
    let mut out: Vec<(i64, Stretches)> = Vec::new();
    if codes.is_empty() {
        return Ok(out);
    }
    let list: Vec<String> = codes.iter().map(i64::to_string).collect();
    let list = list.join(", ");
    let sql = format!(
        "SELECT game_id, ply, from_structure, to_structure FROM structure_changes\n\
         WHERE game_id BETWEEN ?1 AND ?2\n  \
         AND (to_structure IN ({list}) OR from_structure IN ({list}))\n\
         ORDER BY game_id, ply"
    );
    let mut st = conn.prepare(&sql)?;
    let mut rows = st.query([from, to])?;
    // The game read, and the ply its open stay began at.
    let mut open: Option<(i64, u32)> = None;
    let close = |out: &mut Vec<(i64, Stretches)>, game: i64, first: u32, last: u32| {
        push_stretch(out, game, first, last);
    };
    while let Some(r) = rows.next()? {
        let game: i64 = r.get(0)?;
        let Ok(ply) = u32::try_from(r.get::<_, i64>(1)?) else {
            continue;
        };
        let into = codes.contains(&r.get::<_, i64>(3)?);
        if let Some((g, first)) = open
            && g != game
        {
            close(&mut out, g, first, u32::MAX);
            open = None;
        }
        match (open, into) {
            (None, true) => open = Some((game, ply)),
            (Some((g, first)), false) => {
                if ply > first {
                    close(&mut out, g, first, ply - 1);
                }
                open = None;
            }
            _ => {}
        }
    }
    if let Some((g, first)) = open {
        close(&mut out, g, first, u32::MAX);
    }
    Ok(out)
}

/// Of the games `ids` (ascending), those passing the game conditions of `search`.
pub fn passing_games(conn: &Connection, search: &Search, ids: &[i64]) -> Result<Vec<i64>> {
    let (conds, params) = search.game_conditions();
    if conds.is_empty() {
        return Ok(ids.to_vec());
    }
    let sql = format!(
        "SELECT g.id FROM json_each(:games) AS j JOIN games AS g ON g.id = j.value\nWHERE {}\n\
         ORDER BY g.id",
        conds.join("\n  AND ")
    );
    let mut params = params;
    params.push((
        "games".to_string(),
        super::params::Value::Text(json_array(ids)),
    ));
    let mut st = conn.prepare(&sql)?;
    bind_params(&mut st, &params)?;
    let mut out = Vec::new();
    let mut rows = st.raw_query();
    while let Some(r) = rows.next()? {
        out.push(r.get(0)?);
    }
    Ok(out)
}

/// The games passing the game conditions of `search` (with ids in `ids`, all without), per
/// decade of their date (`Some(1990)` for 1990–1999, `None` for an unknown year), ascending
/// with the unknown last. The dates are
/// read and counted here (one pass, no sort), by [`decade`].
pub fn games_per_decade(
    conn: &Connection,
    search: &Search,
    ids: Option<(i64, i64)>,
) -> Result<PerDecade> {
    let (mut conds, params) = search.game_conditions();
    if let Some((from, to)) = ids {
        conds.push(format!("g.id BETWEEN {from} AND {to}"));
    }
    let mut sql = String::from("SELECT g.date FROM games AS g");
    if !conds.is_empty() {
        sql.push_str("\nWHERE ");
        sql.push_str(&conds.join("\n  AND "));
    }
    let mut st = conn.prepare(&sql)?;
    bind_params(&mut st, &params)?;
    let mut counts = PerDecade::default();
    let mut rows = st.raw_query();
    while let Some(r) = rows.next()? {
        let date = match r.get_ref(0)? {
            rusqlite::types::ValueRef::Text(t) => std::str::from_utf8(t).ok(),
            _ => None,
        };
        counts.add(decade(date), 1);
    }
    Ok(counts)
}

/// What the replay of `plans` needs of a stored game (its moves, start, result, date and
/// ratings; the other tags left empty), by id: `None` when there is none.
pub fn replayed_game(conn: &Connection, id: i64) -> Result<Option<StoredGame>> {
    let mut st = conn.prepare_cached(
        "SELECT result, date, white_elo, black_elo, fen, chess960, moves FROM games WHERE id = ?1",
    )?;
    let mut rows = st.query([id])?;
    let Some(r) = rows.next()? else {
        return Ok(None);
    };
    Ok(Some(StoredGame {
        id,
        header: crate::model::game::Header {
            result: r.get(0)?,
            date: r.get(1)?,
            white_elo: r.get(2)?,
            black_elo: r.get(3)?,
            ..Default::default()
        },
        fen: r.get(4)?,
        chess960: r.get(5)?,
        moves: r.get(6)?,
    }))
}

/// One stored game by id (`None` when there is none).
pub fn game(conn: &Connection, id: i64) -> Result<Option<StoredGame>> {
    crate::store::schema::games::load_game(conn, id)
}
