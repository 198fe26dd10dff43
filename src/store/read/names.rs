//! Players by name: a typed name resolved to a player (the spellings merged into one), and the
//! players whose names hold a text. Reads `player_names` through its index on the surname (and
//! scans that table, never `games`, for a text search); `src/model/players.rs` decides who is
//! who.

use std::collections::HashSet;

use anyhow::Result;
use rusqlite::Connection;

use crate::model::names::closest;
use crate::model::players::{self, Player, Spelling, fold, surname};
use crate::store::schema::players::{lower, upper};

/// What a typed name found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    One(Player),
    /// Several players match: the candidates, most games first.
    Ambiguous(Vec<Player>),
    /// None does: the players with close names (possibly none).
    Unknown(Vec<Player>),
}

/// The spellings of these folded surnames, with their games.
fn spellings_of(conn: &Connection, surnames: &[String]) -> Result<Vec<Spelling>> {
    let mut st =
        conn.prepare_cached("SELECT name, folded, games FROM player_names WHERE surname = ?1")?;
    let mut out = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for s in surnames {
        if seen.contains(&s.as_str()) {
            continue;
        }
        seen.push(s);
        let rows = st.query_map([s], |r| {
            Ok(Spelling {
                name: r.get(0)?,
                folded: r.get(1)?,
                games: r.get(2)?,
            })
        })?;
        for row in rows {
            out.push(row?);
        }
    }
    Ok(out)
}

/// The player a typed name means (docs/players.md, "Names"): one, several candidates, or none
/// with the close names.
pub fn resolve(conn: &Connection, typed: &str) -> Result<Resolution> {
    let found = players::merge(spellings_of(conn, &players::surnames_to_look_up(typed))?);
    Ok(match players::resolve(typed, &found) {
        players::Resolution::One(i) => Resolution::One(found[i].clone()),
        players::Resolution::Ambiguous(c) => {
            Resolution::Ambiguous(c.into_iter().map(|i| found[i].clone()).collect())
        }
        players::Resolution::Unknown => Resolution::Unknown(close_to(conn, typed)?),
    })
}

/// Players whose names are close to a typed name that found none: the players of a surname
/// close to the typed one's (at most 10).
fn close_to(conn: &Connection, typed: &str) -> Result<Vec<Player>> {
    let folded = fold(typed);
    if folded.is_empty() {
        return Ok(Vec::new());
    }
    let mut st = conn.prepare_cached("SELECT DISTINCT surname FROM player_names")?;
    let all: Vec<String> = st
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut wanted = vec![surname(&folded).to_owned()];
    if let Some((_, last)) = folded.rsplit_once(' ') {
        wanted.push(last.to_owned());
    }
    let mut near: Vec<String> = Vec::new();
    for w in &wanted {
        for s in closest(w, all.iter().map(String::as_str)) {
            near.push(s.to_owned());
        }
    }
    let mut found = players::merge(spellings_of(conn, &near)?);
    found.truncate(10);
    Ok(found)
}

/// A player as `pawndex players` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerRow {
    pub player: Player,
    pub white_games: i64,
    pub black_games: i64,
    pub first_year: Option<i64>,
    pub last_year: Option<i64>,
    pub min_elo: Option<i64>,
    pub max_elo: Option<i64>,
    /// The most played ECO codes (at most three), with their games, most first.
    pub openings: Vec<(String, i64)>,
}

/// The players one of whose spellings holds the folded `text` (every player for an empty
/// text), with at least `min_games` games, most games first, at most `limit`.
pub fn search(
    conn: &Connection,
    text: &str,
    min_games: i64,
    limit: usize,
) -> Result<Vec<PlayerRow>> {
    let wanted = fold(text);
    let mut matched: HashSet<String> = HashSet::new();
    let mut surnames: HashSet<String> = HashSet::new();
    {
        let mut st = conn
            .prepare_cached("SELECT name, surname FROM player_names WHERE instr(folded, ?1) > 0")?;
        let mut rows = st.query([&wanted])?;
        while let Some(r) = rows.next()? {
            matched.insert(r.get(0)?);
            surnames.insert(r.get(1)?);
        }
    }
    // Many surnames: one pass over the table rather than a look-up each.
    let spellings = if surnames.len() > 64 {
        let mut st =
            conn.prepare_cached("SELECT name, folded, games, surname FROM player_names")?;
        let mut rows = st.query([])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            if surnames.contains(r.get_ref(3)?.as_str()?) {
                out.push(Spelling {
                    name: r.get(0)?,
                    folded: r.get(1)?,
                    games: r.get(2)?,
                });
            }
        }
        out
    } else {
        spellings_of(conn, &surnames.into_iter().collect::<Vec<_>>())?
    };
    let mut found: Vec<Player> = players::merge(spellings)
        .into_iter()
        .filter(|p| p.games >= min_games && p.names.iter().any(|n| matched.contains(n)))
        .collect();
    found.truncate(limit);
    found.into_iter().map(|p| row_of(conn, p)).collect()
}

/// A player's row: the sums over its spellings, and its openings from its games.
fn row_of(conn: &Connection, player: Player) -> Result<PlayerRow> {
    let mut row = PlayerRow {
        player,
        white_games: 0,
        black_games: 0,
        first_year: None,
        last_year: None,
        min_elo: None,
        max_elo: None,
        openings: Vec::new(),
    };
    let mut st = conn.prepare_cached(
        "SELECT white_games, black_games, first_year, last_year, min_elo, max_elo
         FROM player_names WHERE surname = ?1 AND name = ?2",
    )?;
    for name in &row.player.names {
        let (w, b, fy, ly, lo, hi): (i64, i64, Option<i64>, Option<i64>, Option<i64>, Option<i64>) =
            st.query_row([surname(&fold(name)), name.as_str()], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })?;
        row.white_games += w;
        row.black_games += b;
        row.first_year = lower(row.first_year, fy);
        row.last_year = upper(row.last_year, ly);
        row.min_elo = lower(row.min_elo, lo);
        row.max_elo = upper(row.max_elo, hi);
    }
    row.openings = openings(conn, &row.player.names)?;
    Ok(row)
}

/// The most played ECO codes of the games of these spellings (at most three; a game counted
/// once per side the player had), from the covering indexes `games_white`, `games_black`.
fn openings(conn: &Connection, names: &[String]) -> Result<Vec<(String, i64)>> {
    // Name by name and side: each a range of a covering index, in ECO order (no sort).
    let mut counts: std::collections::HashMap<String, i64> = std::collections::HashMap::new();
    for sql in [
        "SELECT eco, count(*) FROM games WHERE white = ?1 GROUP BY eco",
        "SELECT eco, count(*) FROM games WHERE black = ?1 GROUP BY eco",
    ] {
        let mut st = conn.prepare_cached(sql)?;
        for name in names {
            let mut rows = st.query([name])?;
            while let Some(r) = rows.next()? {
                let Some(eco) = r.get::<_, Option<String>>(0)? else {
                    continue;
                };
                if !eco.is_empty() && eco != "?" {
                    *counts.entry(eco).or_default() += r.get::<_, i64>(1)?;
                }
            }
        }
    }
    let mut list: Vec<(String, i64)> = counts.into_iter().collect();
    list.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    list.truncate(3);
    Ok(list)
}
