//! The reads of `pawndex player` (a player's structure profile): the games of a player's
//! spellings, each game's runs (its pawns and named structure ply by ply), the pawns of a set,
//! the sums of `structure_results` (the named structures' baselines), the games of exact pawn
//! structures with their players and results (the exact structures' baselines), and the
//! catalogue's fingerprint. The counting is the engine's (`engine::profile`).

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension};

use super::params::{Value, bind_params};
use super::search::{Search, json_array};
use crate::model::outcome::Outcome;
use crate::model::profile::Results;
use shakmaty::Color;

/// A game of the player (or of the exact structures' baselines), with what the profile needs.
#[derive(Clone, Debug, Default)]
pub struct PlayerGame {
    pub id: i64,
    pub white: String,
    pub black: String,
    pub result: Option<String>,
    pub date: Option<String>,
    pub white_elo: Option<i64>,
    pub black_elo: Option<i64>,
    pub event: Option<String>,
    pub eco: Option<String>,
    pub plies: i64,
}

impl PlayerGame {
    fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<PlayerGame> {
        Ok(PlayerGame {
            id: r.get(0)?,
            white: r.get::<_, Option<String>>(1)?.unwrap_or_default(),
            black: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
            result: r.get(3)?,
            date: r.get(4)?,
            white_elo: r.get(5)?,
            black_elo: r.get(6)?,
            event: r.get(7)?,
            eco: r.get(8)?,
            plies: r.get(9)?,
        })
    }

    /// The game's outcome.
    #[must_use]
    pub fn outcome(&self) -> Outcome {
        Outcome::parse(self.result.as_deref())
    }

    /// The rating of `side` in this game.
    #[must_use]
    pub fn elo(&self, side: Color) -> Option<i64> {
        match side {
            Color::White => self.white_elo,
            Color::Black => self.black_elo,
        }
    }

    /// The name of `side`'s player.
    #[must_use]
    pub fn name(&self, side: Color) -> &str {
        match side {
            Color::White => &self.white,
            Color::Black => &self.black,
        }
    }
}

const GAME_COLUMNS: &str = "g.id, g.white, g.black, g.result, g.date, g.white_elo, g.black_elo, \
                            g.event, g.eco, g.plies";

/// The games one of whose players is spelt as one of `names`, passing the game conditions of
/// `search` (its position conditions are not read), ascending by id. Each side's names are
/// looked up by the indexes `games_white` and `games_black`.
pub fn player_games(
    conn: &Connection,
    names: &[String],
    search: &Search,
) -> Result<Vec<PlayerGame>> {
    let (conds, mut params) = search.game_conditions();
    let extra: String = conds.iter().map(|c| format!("\n  AND {c}")).collect();
    let sql = format!(
        "SELECT {GAME_COLUMNS} FROM games AS g\n\
         WHERE g.white IN (SELECT value FROM json_each(:names)){extra}\n\
         UNION\n\
         SELECT {GAME_COLUMNS} FROM games AS g\n\
         WHERE g.black IN (SELECT value FROM json_each(:names)){extra}\n\
         ORDER BY 1"
    );
    params.push((
        "names".to_string(),
        Value::Text(serde_json::to_string(names)?),
    ));
    games_of(conn, &sql, &params)
}

/// One run of a game: its plies (both included), its pawn sets and its named structure code
/// (`2 * structure_names.id + reversed`, 0 for none).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Run {
    pub first_ply: u32,
    pub last_ply: u32,
    pub white_set: i64,
    pub black_set: i64,
    pub structure: i64,
}

/// The runs of game `id`, by first ply, into `out` (cleared first).
pub fn game_runs(conn: &Connection, id: i64, out: &mut Vec<Run>) -> Result<()> {
    out.clear();
    let mut st = conn.prepare_cached(
        "SELECT first_ply, last_ply, white_set, black_set, structure FROM runs \
         WHERE game_id = ?1 ORDER BY first_ply",
    )?;
    let mut rows = st.query([id])?;
    while let Some(r) = rows.next()? {
        let (Ok(first_ply), Ok(last_ply)) = (
            u32::try_from(r.get::<_, i64>(0)?),
            u32::try_from(r.get::<_, i64>(1)?),
        ) else {
            continue;
        };
        out.push(Run {
            first_ply,
            last_ply,
            white_set: r.get(2)?,
            black_set: r.get(3)?,
            structure: r.get(4)?,
        });
    }
    Ok(())
}

/// The pawns of the pawn set `id` (a bitboard, a1 = bit 0), `None` when there is none.
pub fn set_pawns(conn: &Connection, id: i64) -> Result<Option<u64>> {
    let mut st = conn.prepare_cached("SELECT pawns FROM pawn_sets WHERE id = ?1")?;
    Ok(st
        .query_row([id], |r| r.get::<_, i64>(0))
        .optional()?
        .map(|p| p as u64))
}

/// The fingerprint of the catalogue the database's structures were classified with
/// (`structure_catalogue`), `None` when it holds none.
pub fn catalogue_fingerprint(conn: &Connection) -> Result<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT fingerprint FROM structure_catalogue LIMIT 1",
            [],
            |r| r.get(0),
        )
        .optional()?)
}

/// The games reaching each named structure form, per side, from `structure_results`: of all
/// ratings, and of the ratings in `band` (both ends included), summed over the ratings and over
/// the time classes `search`'s time-class conditions keep (its other conditions are not
/// read). Rows: (code, side 0 White 1 Black, all, band), from that side's point of view.
pub fn structure_results(
    conn: &Connection,
    search: &Search,
    band: Option<(i64, i64)>,
) -> Result<Vec<(i64, Color, Results, Results)>> {
    // The time-class conditions are written over `g.time_class`: the table takes that alias.
    let (conds, mut params) = search.game_conditions();
    let conds: Vec<String> = conds
        .into_iter()
        .filter(|c| c.starts_with("g.time_class "))
        .collect();
    params.retain(|(name, _)| name.contains("time_class"));
    let (lo, hi) = band.unwrap_or((1, 0));
    params.push(("band_low".to_string(), Value::Integer(lo)));
    params.push(("band_high".to_string(), Value::Integer(hi)));
    let extra: String = conds.iter().map(|c| format!("\n  AND {c}")).collect();
    let sql = format!(
        "SELECT g.structure, g.side, sum(g.games), sum(g.wins), sum(g.draws), sum(g.losses),\n  \
         sum(CASE WHEN g.elo BETWEEN :band_low AND :band_high THEN g.games ELSE 0 END),\n  \
         sum(CASE WHEN g.elo BETWEEN :band_low AND :band_high THEN g.wins ELSE 0 END),\n  \
         sum(CASE WHEN g.elo BETWEEN :band_low AND :band_high THEN g.draws ELSE 0 END),\n  \
         sum(CASE WHEN g.elo BETWEEN :band_low AND :band_high THEN g.losses ELSE 0 END)\n\
         FROM structure_results AS g\nWHERE 1{extra}\nGROUP BY g.structure, g.side"
    );
    let mut st = conn.prepare(&sql)?;
    bind_params(&mut st, &params)?;
    let mut out = Vec::new();
    let mut rows = st.raw_query();
    let count = |r: &rusqlite::Row<'_>, at: usize| -> rusqlite::Result<u64> {
        Ok(u64::try_from(r.get::<_, i64>(at)?).unwrap_or(0))
    };
    while let Some(r) = rows.next()? {
        let side = if r.get::<_, i64>(1)? == 0 {
            Color::White
        } else {
            Color::Black
        };
        let all = Results {
            games: count(r, 2)?,
            wins: count(r, 3)?,
            draws: count(r, 4)?,
            losses: count(r, 5)?,
        };
        let band = Results {
            games: count(r, 6)?,
            wins: count(r, 7)?,
            draws: count(r, 8)?,
            losses: count(r, 9)?,
        };
        out.push((r.get(0)?, side, all, band));
    }
    Ok(out)
}

/// The candidate games of the exact pawn structure `pair` (White's and Black's pawn sets):
/// the games both sets' `set_games` lists hold, and the games not yet in the lists, ascending.
pub fn exact_candidates(conn: &Connection, pair: (i64, i64)) -> Result<Vec<i64>> {
    let mut reader = super::similar::Reader::new(conn)?;
    let (mut w, mut b) = (Vec::new(), Vec::new());
    reader.games_of(pair.0, &mut w)?;
    reader.games_of(pair.1, &mut b)?;
    let (short, long) = if w.len() <= b.len() { (w, b) } else { (b, w) };
    let mut games: Vec<i64> = short
        .into_iter()
        .filter(|g| long.binary_search(g).is_ok())
        .collect();
    games.extend(super::similar::tail_games(conn)?);
    games.sort_unstable();
    games.dedup();
    Ok(games)
}

/// Of the games `candidates`, those reaching the exact pawn structure `pair` with a stay of at
/// least `min_stay` positions and passing the game conditions of `search` (its position
/// conditions are not read), ascending by id; only the candidates' runs are read, by key.
pub fn exact_games(
    conn: &Connection,
    pair: (i64, i64),
    candidates: &[i64],
    min_stay: u32,
    search: &Search,
) -> Result<Vec<PlayerGame>> {
    let (conds, mut params) = search.game_conditions();
    let extra: String = conds.iter().map(|c| format!("\n  AND {c}")).collect();
    let sql = format!(
        "SELECT {GAME_COLUMNS} FROM json_each(:games) AS j\n\
         JOIN runs AS r ON r.game_id = j.value AND r.white_set = :white_set \
         AND r.black_set = :black_set\n\
         JOIN games AS g ON g.id = r.game_id\nWHERE 1{extra}\n\
         GROUP BY g.id HAVING sum(r.last_ply - r.first_ply + 1) >= :min_stay\nORDER BY g.id"
    );
    params.push(("games".to_string(), Value::Text(json_array(candidates))));
    params.push(("white_set".to_string(), Value::Integer(pair.0)));
    params.push(("black_set".to_string(), Value::Integer(pair.1)));
    params.push(("min_stay".to_string(), Value::Integer(i64::from(min_stay))));
    games_of(conn, &sql, &params)
}

/// The games a statement of [`GAME_COLUMNS`] lists, with its parameters bound.
fn games_of(conn: &Connection, sql: &str, params: &[(String, Value)]) -> Result<Vec<PlayerGame>> {
    let mut st = conn.prepare(sql)?;
    bind_params(&mut st, params)?;
    let mut out = Vec::new();
    let mut rows = st.raw_query();
    while let Some(r) = rows.next()? {
        out.push(PlayerGame::read(r)?);
    }
    Ok(out)
}
