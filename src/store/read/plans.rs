//! The reads of `pawndex plans`: the stretches of plies each game spends in a structure, the
//! games a list keeps under the game filters, and the games per decade (the share that reaches
//! the structure). The replay and the counting are the engine's (`engine::plans`).

use anyhow::Result;
use rusqlite::Connection;

use super::params::bind_params;
use super::search::{Rows, Search, json_array};
use crate::model::plans::decade;
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

/// The games passing the game conditions of `search`, per decade of their date (`Some(1990)`
/// for 1990–1999, `None` for an unknown year), ascending with the unknown last. The dates are
/// read and counted here (one pass, no sort), by [`decade`].
pub fn games_per_decade(conn: &Connection, search: &Search) -> Result<Vec<(Option<i64>, u64)>> {
    let (conds, params) = search.game_conditions();
    let mut sql = String::from("SELECT g.date FROM games AS g");
    if !conds.is_empty() {
        sql.push_str("\nWHERE ");
        sql.push_str(&conds.join("\n  AND "));
    }
    let mut st = conn.prepare(&sql)?;
    bind_params(&mut st, &params)?;
    let mut counts: std::collections::BTreeMap<(bool, i64), u64> =
        std::collections::BTreeMap::new();
    let mut rows = st.raw_query();
    while let Some(r) = rows.next()? {
        let date = match r.get_ref(0)? {
            rusqlite::types::ValueRef::Text(t) => std::str::from_utf8(t).ok(),
            _ => None,
        };
        let d = decade(date);
        *counts.entry((d.is_none(), d.unwrap_or(0))).or_default() += 1;
    }
    Ok(counts
        .into_iter()
        .map(|((unknown, d), n)| ((!unknown).then_some(d), n))
        .collect())
}

/// One stored game by id (`None` when there is none).
pub fn game(conn: &Connection, id: i64) -> Result<Option<StoredGame>> {
    crate::store::schema::games::load_game(conn, id)
}
