//! Loading one stored game by id.

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension};

use crate::model::game::Header;
use crate::model::stored::StoredGame;

const GAME_SQL: &str = "SELECT event, site, date, round, white, black, result, white_elo,
    black_elo, eco, fen, chess960, moves FROM games WHERE id = ?1";

/// Loads one game by id, `None` when there is no such game.
pub fn load_game(conn: &Connection, id: i64) -> Result<Option<StoredGame>> {
    let mut st = conn.prepare_cached(GAME_SQL)?;
    let game = st
        .query_row([id], |r| {
            Ok(StoredGame {
                id,
                header: header(r, 0)?,
                fen: r.get(10)?,
                chess960: r.get(11)?,
                moves: r.get(12)?,
            })
        })
        .optional()?;
    Ok(game)
}

/// The [`Header`] in the ten columns from `at` of `r`: `event, site, date, round, white, black,
/// result, white_elo, black_elo, eco`, as `games` stores them.
pub fn header(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Header> {
    Ok(Header {
        event: r.get(at)?,
        site: r.get(at + 1)?,
        date: r.get(at + 2)?,
        round: r.get(at + 3)?,
        white: r.get(at + 4)?,
        black: r.get(at + 5)?,
        result: r.get(at + 6)?,
        white_elo: r.get(at + 7)?,
        black_elo: r.get(at + 8)?,
        eco: r.get(at + 9)?,
    })
}

/// The largest game id (0 for no game): games are only appended, so an answer computed at one
/// value holds until it changes (the server's caches are keyed by it).
pub fn last_game_id(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("SELECT coalesce(max(id), 0) FROM games", [], |r| r.get(0))?)
}
