//! The players' tables of schema 6 (`migrations/0006_players.sql`): `player_names`, every stored
//! spelling with its folded form and what its games say of it, and `structure_results`, the
//! results of every named structure form by side, rating and time class.
//!
//! The writer keeps both current with a [`Tally`] per transaction; [`rebuild`] fills them from
//! the stored games (the migration to schema 6), and [`rebuild_results`] the second after the
//! runs were re-classified with another catalogue.

use std::collections::HashMap;

use anyhow::Result;
use rusqlite::{Connection, params};

use crate::model::columns::year_of;
use crate::model::game::Header;
use crate::model::players::{fold, surname};

/// What the games stored in one transaction add to one spelling's row.
#[derive(Debug, Default, Clone, Copy)]
struct NameCounts {
    white: i64,
    black: i64,
    first_year: Option<i64>,
    last_year: Option<i64>,
    min_elo: Option<i64>,
    max_elo: Option<i64>,
}

/// The smaller of two optional values (either when the other is missing).
pub(crate) fn lower(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The larger of two optional values (either when the other is missing).
pub(crate) fn upper(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// A side's wins, draws and losses among the games reaching a form, and the games.
type Results = [i64; 4];

/// (structure code, side, that side's rating or 0, time class).
type ResultKey = (i64, u8, i64, &'static str);

/// The rows the games of one transaction add to `player_names` and `structure_results`, written
/// by [`Tally::flush`] inside that transaction. Its size follows the games in flight (a
/// transaction's names and forms), not the database.
#[derive(Debug, Default)]
pub struct Tally {
    names: HashMap<String, NameCounts>,
    results: HashMap<ResultKey, Results>,
}

impl Tally {
    /// Counts one stored game: its players' spellings, and the named forms it reaches (the
    /// `to` codes of its structure changes).
    pub fn add_game(
        &mut self,
        header: &Header,
        time_class: &'static str,
        reached: impl IntoIterator<Item = i64>,
    ) {
        let year = year_of(header.date.as_deref());
        for (name, elo, white) in [
            (&header.white, header.white_elo, true),
            (&header.black, header.black_elo, false),
        ] {
            let Some(name) = name else { continue };
            let c = self.names.entry(name.clone()).or_default();
            if white {
                c.white += 1;
            } else {
                c.black += 1;
            }
            c.first_year = lower(c.first_year, year);
            c.last_year = upper(c.last_year, year);
            c.min_elo = lower(c.min_elo, elo);
            c.max_elo = upper(c.max_elo, elo);
        }
        // White's outcome: a win, a draw, a loss (no result counts the game alone).
        let outcome = match header.result.as_deref() {
            Some("1-0") => Some(0),
            Some("1/2-1/2") => Some(1),
            Some("0-1") => Some(2),
            _ => None,
        };
        let mut seen: Vec<i64> = Vec::new();
        for code in reached {
            if code == 0 || seen.contains(&code) {
                continue;
            }
            seen.push(code);
            for (side, elo) in [(0u8, header.white_elo), (1, header.black_elo)] {
                let r = self
                    .results
                    .entry((code, side, elo.unwrap_or(0), time_class))
                    .or_default();
                r[3] += 1;
                if let Some(o) = outcome {
                    // Black's win is White's loss.
                    let o = if side == 0 { o } else { 2 - o };
                    r[o] += 1;
                }
            }
        }
    }

    /// Writes the rows counted since the last flush (inside the caller's transaction).
    pub fn flush(&mut self, conn: &Connection) -> Result<()> {
        if !self.names.is_empty() {
            let mut st = conn.prepare_cached(
                "INSERT INTO player_names (name, folded, surname, games, white_games, black_games,
                     first_year, last_year, min_elo, max_elo)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                 ON CONFLICT (surname, name) DO UPDATE SET
                     games = games + excluded.games,
                     white_games = white_games + excluded.white_games,
                     black_games = black_games + excluded.black_games,
                     first_year = coalesce(min(first_year, excluded.first_year), first_year,
                         excluded.first_year),
                     last_year = coalesce(max(last_year, excluded.last_year), last_year,
                         excluded.last_year),
                     min_elo = coalesce(min(min_elo, excluded.min_elo), min_elo, excluded.min_elo),
                     max_elo = coalesce(max(max_elo, excluded.max_elo), max_elo, excluded.max_elo)",
            )?;
            for (name, c) in self.names.drain() {
                let folded = fold(&name);
                st.execute(params![
                    name,
                    folded,
                    surname(&folded),
                    c.white + c.black,
                    c.white,
                    c.black,
                    c.first_year,
                    c.last_year,
                    c.min_elo,
                    c.max_elo
                ])?;
            }
        }
        if !self.results.is_empty() {
            let mut st = conn.prepare_cached(
                "INSERT INTO structure_results
                     (structure, side, elo, time_class, games, wins, draws, losses)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT (structure, side, elo, time_class) DO UPDATE SET
                     games = games + excluded.games,
                     wins = wins + excluded.wins,
                     draws = draws + excluded.draws,
                     losses = losses + excluded.losses",
            )?;
            for ((code, side, elo, class), r) in self.results.drain() {
                st.execute(params![code, side, elo, class, r[3], r[0], r[1], r[2]])?;
            }
        }
        Ok(())
    }

    /// Drops what was counted (its transaction was rolled back).
    pub fn forget(&mut self) {
        self.names.clear();
        self.results.clear();
    }
}

/// Fills both tables from the stored games (the migration to schema 6), replacing their rows.
pub fn rebuild(conn: &Connection) -> Result<()> {
    conn.execute("DELETE FROM player_names", [])?;
    {
        let year = "CASE WHEN substr(date, 1, 4) GLOB '[0-9][0-9][0-9][0-9]' \
                    THEN CAST(substr(date, 1, 4) AS INTEGER) END";
        let mut read = conn.prepare(&format!(
            "SELECT name, sum(w), sum(b), min(year), max(year), min(elo), max(elo) FROM (
                 SELECT white AS name, 1 AS w, 0 AS b, {year} AS year, white_elo AS elo
                 FROM games WHERE white IS NOT NULL
                 UNION ALL
                 SELECT black, 0, 1, {year}, black_elo FROM games WHERE black IS NOT NULL)
             GROUP BY name"
        ))?;
        let mut write = conn.prepare(
            "INSERT INTO player_names (name, folded, surname, games, white_games, black_games,
                 first_year, last_year, min_elo, max_elo)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        let mut rows = read.query([])?;
        while let Some(r) = rows.next()? {
            let name: String = r.get(0)?;
            let (w, b): (i64, i64) = (r.get(1)?, r.get(2)?);
            let folded = fold(&name);
            write.execute(params![
                name,
                folded,
                surname(&folded),
                w + b,
                w,
                b,
                r.get::<_, Option<i64>>(3)?,
                r.get::<_, Option<i64>>(4)?,
                r.get::<_, Option<i64>>(5)?,
                r.get::<_, Option<i64>>(6)?,
            ])?;
        }
    }
    rebuild_results(conn)
}

/// Fills `structure_results` from `structure_changes` and `games`, replacing its rows.
pub fn rebuild_results(conn: &Connection) -> Result<()> {
    conn.execute("DELETE FROM structure_results", [])?;
    conn.execute_batch(
        "INSERT INTO structure_results
             (structure, side, elo, time_class, games, wins, draws, losses)
         SELECT structure, side, elo, time_class, count(*), sum(win), sum(draw), sum(loss)
         FROM (
             SELECT r.structure AS structure, 0 AS side, coalesce(g.white_elo, 0) AS elo,
                 g.time_class AS time_class, g.result IS '1-0' AS win,
                 g.result IS '1/2-1/2' AS draw, g.result IS '0-1' AS loss
             FROM (SELECT DISTINCT game_id, to_structure AS structure FROM structure_changes
                   WHERE to_structure != 0) AS r
             JOIN games AS g ON g.id = r.game_id
             UNION ALL
             SELECT r.structure, 1, coalesce(g.black_elo, 0), g.time_class,
                 g.result IS '0-1', g.result IS '1/2-1/2', g.result IS '1-0'
             FROM (SELECT DISTINCT game_id, to_structure AS structure FROM structure_changes
                   WHERE to_structure != 0) AS r
             JOIN games AS g ON g.id = r.game_id)
         GROUP BY structure, side, elo, time_class",
    )?;
    Ok(())
}
