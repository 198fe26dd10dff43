//! The game rows: `games` (ids, plies, moves, and the hash of the tags and moves each was indexed
//! with), one `game_summary` row and at least one run per game, `ply_numbers` covering the
//! longest game, and ids that do not run far past the rows.

use std::borrow::Cow;

use anyhow::Result;

use super::{Kind, Report, int, offending, show};
use crate::model::game::{MAX_PLIES, game_hash};
use crate::model::stored::{Cursor, StoredGame};
use crate::store::read::Snapshot;
use crate::store::read::check::{self as read, Cell, MAX_GAME_ID, Scan};

/// Checks of `games`, `game_summary` and `ply_numbers`; returns the number of games.
pub(super) fn games(conn: &Snapshot, f: &mut Report) -> Result<i64> {
    let games = read::game_count(conn)?;
    game_rows(conn, f)?;
    hashes(conn, f)?;
    summaries_and_runs(conn, f)?;
    ply_numbers(conn, f)?;
    Ok(games)
}

/// Games whose id, plies or moves are out of range.
fn game_rows(conn: &Snapshot, f: &mut Report) -> Result<()> {
    offending(read::game_ids_out_of_range(conn)?, f, Kind::GameIds, |r| {
        let id = r.id(0)?;
        Ok(format!(
            "games: game {id}: id out of range (1 to {MAX_GAME_ID})"
        ))
    })?;
    offending(read::games_with_bad_plies(conn)?, f, Kind::GamePlies, |r| {
        let id = r.id(0)?;
        Ok(format!(
            "games: game {id}: plies is {}, not 0 to {MAX_PLIES}",
            show(r.get(1)?)
        ))
    })?;
    offending(read::games_with_bad_moves(conn)?, f, Kind::GamePlies, |r| {
        let id = r.id(0)?;
        let plies = show(r.get(1)?);
        let kind = r.text(2)?;
        let len = show(r.get(3)?);
        Ok(if kind == "blob" {
            format!("games: game {id}: moves holds {len} bytes, not 2 per ply for {plies} plies")
        } else {
            format!("games: game {id}: moves is a {kind} value, not a blob")
        })
    })
}

/// Games whose stored roster (Event … Result), start position or moves no longer give the
/// `hash` computed from them when they were indexed ([`game_hash`]): a damaged byte, or a row
/// changed by hand. One pass over `games` in rowid order, hashing in place (FNV-1a, no copy of a
/// text or blob); only the games described are replayed, to name an illegal move.
fn hashes(conn: &Snapshot, f: &mut Report) -> Result<()> {
    let mut st = read::game_hashes(conn)?;
    let mut rows = st.rows(&[])?;
    while let Some(r) = rows.next()? {
        let mut parts: [Cow<'_, [u8]>; 9] = Default::default();
        for (i, part) in parts.iter_mut().enumerate() {
            *part = bytes(r.get(i + 1)?);
        }
        let [event, site, date, round, white, black, result, fen, moves] = &parts;
        let roster = [event, site, date, round, white, black, result].map(|p| &p[..]);
        let stored = int(r.get(10)?);
        if stored == Some(game_hash(roster, fen, moves)) {
            continue;
        }
        let text = if f.shows(Kind::GameHash) {
            let id = r.id(0)?;
            let game = StoredGame {
                id,
                fen: (!fen.is_empty()).then(|| String::from_utf8_lossy(fen).into_owned()),
                chess960: int(r.get(11)?).is_some_and(|c| c != 0),
                moves: moves.to_vec(),
                ..StoredGame::default()
            };
            hash_line(id, game, stored.is_none())
        } else {
            String::new()
        };
        f.problem(Kind::GameHash, || text);
    }
    Ok(())
}

/// The bytes a stored value was hashed from: a text or blob as it is, NULL as nothing (a
/// missing tag, the standard start), any other value as its text (which cannot match).
fn bytes(v: Cell<'_>) -> Cow<'_, [u8]> {
    match v {
        Cell::Text(t) | Cell::Blob(t) => Cow::Borrowed(t),
        Cell::Null => Cow::Borrowed(&[]),
        other => Cow::Owned(show(other).into_bytes()),
    }
}

/// What is wrong with a game whose hash does not match: an illegal stored move when its moves
/// do not replay, else the tags, start position or moves changed since it was indexed.
fn hash_line(id: i64, game: StoredGame, no_hash: bool) -> String {
    if no_hash {
        return format!("games: game {id}: hash is not an integer");
    }
    let plies = game.plies();
    let replayed = Cursor::new(game).and_then(|mut c| c.seek(plies).map(|_| ()));
    match replayed {
        Err(e) => format!(
            "games: {e:#}: its moves differ from those it was indexed with (games.hash does \
             not match)"
        ),
        Ok(()) => format!(
            "games: game {id}: its tags (Event, Site, Date, Round, White, Black, Result), start \
             position or moves differ from those it was indexed with (games.hash does not match)"
        ),
    }
}

/// A check of offending ids: its kind, the query for them, the line for one.
type IdCheck = (
    Kind,
    for<'s> fn(&'s Snapshot) -> Result<Scan<'s>>,
    fn(i64) -> String,
);

/// Games without a summary or runs, and summaries without a game.
fn summaries_and_runs(conn: &Snapshot, f: &mut Report) -> Result<()> {
    let checks: [IdCheck; 3] = [
        (Kind::GameSummary, read::games_without_summary, |id| {
            format!("game_summary: game {id} has no row")
        }),
        (Kind::GameSummary, read::summaries_without_game, |id| {
            format!("game_summary: row for game {id}, which is not in games")
        }),
        (Kind::GameRuns, read::games_without_runs, |id| {
            format!("runs: game {id} has no runs")
        }),
    ];
    for (kind, scan, line) in checks {
        offending(scan(conn)?, f, kind, |r| Ok(line(r.id(0)?)))?;
    }
    Ok(())
}

/// `ply_numbers` holds 0..=the longest game (the view expands runs through it).
fn ply_numbers(conn: &Snapshot, f: &mut Report) -> Result<()> {
    let read::PlyNumbers {
        count,
        min,
        max,
        longest,
    } = read::ply_numbers(conn)?;
    // `n` is the INTEGER PRIMARY KEY: distinct integers, so 0..=max exactly when min is 0
    // and there are max + 1 of them.
    let contiguous = min == Some(0) && max.and_then(|m| m.checked_add(1)) == Some(count);
    let enough = longest.is_none_or(|l| max.is_some_and(|m| m >= l));
    if count > 0 && !contiguous {
        f.problem(Kind::PlyNumbers, || {
            format!(
                "ply_numbers: holds {count} numbers from {} to {}, not 0, 1, 2, … without gaps",
                min.unwrap_or(0),
                max.unwrap_or(0)
            )
        });
    }
    if !enough {
        f.problem(Kind::PlyNumbers, || {
            format!(
                "ply_numbers: goes to {} but the longest game has {} plies (ply_features \
                 would miss its last positions)",
                max.map_or_else(|| "nothing".to_owned(), |m| m.to_string()),
                longest.unwrap_or(0)
            )
        });
    }
    Ok(())
}

/// Games and pawn sets whose ids run far past their rows
/// ([`crate::store::read::ids::dense`]): the readers that keep a slot per id (`similar`, `stats`)
/// refuse such a database and name this check.
pub(super) fn id_spans(conn: &Snapshot, f: &mut Report) -> Result<()> {
    for (table, what) in [("games", "games"), ("pawn_sets", "pawn sets")] {
        let (hi, rows) = read::id_span(conn, table)?;
        if !crate::store::read::ids::dense(1, hi, rows) {
            f.problem(Kind::IdSpans, || {
                format!(
                    "{table}: ids run up to {hi} for {rows} {what}; pawndex numbers them from 1 \
                     without gaps (similar and stats refuse the database)"
                )
            });
        }
    }
    Ok(())
}
