//! The reads `pawndex similar` makes (every SQL text it runs): pawn sets by id range or by
//! their pawns, the games of a pawn set (`set_games`), the games not yet in those lists, games'
//! runs (one game's with its result, or every run in one pass), the pawns of one game's ply,
//! and for `--games` the runs of the listed structures and the rows handed to `query`'s writers.

use anyhow::{Context, Result};
use rusqlite::{CachedStatement, Connection, OptionalExtension};

use crate::store::decode_games;

/// One run of a game: its plies (both included) and its two pawn sets.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Run {
    pub first_ply: i64,
    pub last_ply: i64,
    pub white_set: i64,
    pub black_set: i64,
}

/// The id of one side's pawn set (side 0 White, 1 Black), `None` when no position has it.
pub fn set_id(conn: &Connection, side: u8, pawns: u64) -> Result<Option<i64>> {
    let mut st = conn.prepare_cached("SELECT id FROM pawn_sets WHERE pawns = ?1 AND side = ?2")?;
    Ok(st
        .query_row((pawns as i64, i64::from(side)), |r| r.get(0))
        .optional()?)
}

/// Above this share of all games (one in `SCAN_FRACTION`), the runs of candidate games are
/// read in one pass over every run ([`scan_runs`]) instead of game by game.
pub const SCAN_FRACTION: usize = 6;

/// Whether to read the runs of `candidates` games in one pass over every run rather than game
/// by game (`PAWNDEX_PLAN` forces one way).
pub fn scan_is_cheaper(candidates: usize, all_games: usize) -> bool {
    match super::forced_plan() {
        Some(super::ForcedPlan::Scan) => true,
        Some(super::ForcedPlan::Lists) => false,
        None => candidates.saturating_mul(SCAN_FRACTION) > all_games,
    }
}

/// The pawn sets with ids in `lo..=hi`, each given to `visit` as (id, side, pawns): side 0
/// White, 1 Black. A range of the table's key, so that several connections can share the work.
pub fn sets_between(
    conn: &Connection,
    lo: i64,
    hi: i64,
    mut visit: impl FnMut(i64, u8, u64),
) -> Result<()> {
    let mut st =
        conn.prepare_cached("SELECT id, side, pawns FROM pawn_sets WHERE id BETWEEN ?1 AND ?2")?;
    let mut rows = st.query([lo, hi])?;
    while let Some(r) = rows.next()? {
        let side: i64 = r.get(1)?;
        visit(r.get(0)?, u8::from(side != 0), r.get::<_, i64>(2)? as u64);
    }
    Ok(())
}

/// The games above `derived.through` (not yet in `set_games`), ascending.
pub fn tail_games(conn: &Connection) -> Result<Vec<i64>> {
    let mut st = conn.prepare(
        "SELECT id FROM games WHERE id > (SELECT coalesce(max(through), 0) FROM derived) \
         ORDER BY id",
    )?;
    let ids = st
        .query_map([], |r| r.get::<_, i64>(0))?
        .collect::<rusqlite::Result<Vec<i64>>>()?;
    Ok(ids)
}

/// How many games the database holds.
pub fn game_count(conn: &Connection) -> Result<usize> {
    let n: i64 = conn.query_row("SELECT count(*) FROM games", [], |r| r.get(0))?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// Every game's result tag, by ascending id.
pub fn results(conn: &Connection) -> Result<Vec<(i64, Option<String>)>> {
    let mut st = conn.prepare("SELECT id, result FROM games ORDER BY id")?;
    let rows = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// Every run of the games with ids in `games.0..=games.1` whose White set is one of `white`
/// and Black set one of `black`, in key order (game, first ply), given to `visit` with its game
/// id: one pass over those games' runs, the sets checked by SQLite.
pub fn scan_runs(
    conn: &Connection,
    games: (i64, i64),
    white: &[i64],
    black: &[i64],
    mut visit: impl FnMut(i64, Run),
) -> Result<()> {
    let mut st = conn.prepare_cached(
        "SELECT game_id, first_ply, last_ply, white_set, black_set FROM runs
         WHERE game_id BETWEEN ?1 AND ?2
           AND white_set IN (SELECT value FROM json_each(?3))
           AND black_set IN (SELECT value FROM json_each(?4))
         ORDER BY game_id, first_ply",
    )?;
    let mut rows = st.query(rusqlite::params![
        games.0,
        games.1,
        super::search::json_array(white),
        super::search::json_array(black),
    ])?;
    while let Some(r) = rows.next()? {
        visit(
            r.get(0)?,
            Run {
                first_ply: r.get(1)?,
                last_ply: r.get(2)?,
                white_set: r.get(3)?,
                black_set: r.get(4)?,
            },
        );
    }
    Ok(())
}

/// The pawns (White, Black) of a game at a ply; `None` when the game has no such ply.
pub fn pawns_at(conn: &Connection, game: i64, ply: i64) -> Result<Option<(u64, u64)>> {
    Ok(conn
        .query_row(
            "SELECT w.pawns, b.pawns
             FROM runs AS r
             JOIN pawn_sets AS w ON w.id = r.white_set
             JOIN pawn_sets AS b ON b.id = r.black_set
             WHERE r.game_id = ?1 AND ?2 BETWEEN r.first_ply AND r.last_ply",
            [game, ply],
            |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
        )
        .optional()?)
}

/// The plies a game has (its `games.plies`), `None` for an unknown game.
pub fn game_plies(conn: &Connection, game: i64) -> Result<Option<i64>> {
    Ok(conn
        .query_row("SELECT plies FROM games WHERE id = ?1", [game], |r| {
            r.get(0)
        })
        .optional()?)
}

/// Prepared reads of the game lists and of games' runs.
pub struct Reader<'c> {
    lists: CachedStatement<'c>,
    runs: CachedStatement<'c>,
    pair_runs: CachedStatement<'c>,
}

impl<'c> Reader<'c> {
    pub fn new(conn: &'c Connection) -> Result<Reader<'c>> {
        Ok(Reader {
            lists: conn.prepare_cached("SELECT games FROM set_games WHERE set_id = ?1")?,
            runs: conn.prepare_cached(
                "SELECT r.first_ply, r.last_ply, r.white_set, r.black_set, g.result
                 FROM runs AS r, games AS g
                 WHERE r.game_id = ?1 AND g.id = ?1
                 ORDER BY r.first_ply",
            )?,
            pair_runs: conn.prepare_cached(
                "SELECT r.game_id, r.first_ply, r.last_ply, g.result, g.eco
                 FROM json_each(?1) AS j
                 JOIN runs AS r ON r.game_id = j.value AND r.white_set = ?2 AND r.black_set = ?3
                 JOIN games AS g ON g.id = r.game_id",
            )?,
        })
    }

    /// Appends the runs of `games` with exactly these (White set, Black set), as runs of the
    /// `pair`-th listed pair.
    pub fn pair_runs_of(
        &mut self,
        games: &[i64],
        sets: (i64, i64),
        pair: usize,
        out: &mut Vec<PairRun>,
    ) -> Result<()> {
        let ids = super::search::json_array(games);
        let mut rows = self
            .pair_runs
            .query(rusqlite::params![ids, sets.0, sets.1])?;
        while let Some(r) = rows.next()? {
            out.push(PairRun {
                game: r.get(0)?,
                first_ply: r.get(1)?,
                last_ply: r.get(2)?,
                pair,
                result: r.get(3)?,
                eco: r.get(4)?,
            });
        }
        Ok(())
    }

    /// Appends the games of a pawn set's `set_games` list (none if it has no list).
    pub fn games_of(&mut self, set: i64, out: &mut Vec<i64>) -> Result<()> {
        let mut rows = self.lists.query([set])?;
        if let Some(r) = rows.next()? {
            out.extend(decode_games(r.get_ref(0)?.as_blob()?));
        }
        Ok(())
    }

    /// A game's runs in ply order and its result tag (`None` when the game has none).
    pub fn runs_of(&mut self, game: i64, out: &mut Vec<Run>) -> Result<Option<String>> {
        out.clear();
        let mut result = None;
        let mut rows = self.runs.query([game])?;
        while let Some(r) = rows.next()? {
            out.push(Run {
                first_ply: r.get(0)?,
                last_ply: r.get(1)?,
                white_set: r.get(2)?,
                black_set: r.get(3)?,
            });
            if result.is_none() {
                result = r.get(4)?;
            }
        }
        Ok(result)
    }
}

// ---------------------------------------------------------------------------------------------
// `pawndex similar --games`: the games of the listed structures
// ---------------------------------------------------------------------------------------------

/// A run of one of the listed (White set, Black set) pairs: its game, its plies (both
/// included), the index of its pair in the list and its game's result tag and ECO code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairRun {
    pub game: i64,
    pub first_ply: i64,
    pub last_ply: i64,
    pub pair: usize,
    pub result: Option<String>,
    pub eco: Option<String>,
}

/// Every run whose (White set, Black set) is one of `pairs`, by game and first ply.
///
/// The games come from the game lists (`set_games`) of both sets of each pair, intersected,
/// plus the games not yet in the lists (the unmerged tail); only their runs are read, by key,
/// or, when they are many ([`scan_is_cheaper`]), every run in one pass.
pub fn pair_runs(conn: &Connection, pairs: &[(i64, i64)]) -> Result<Vec<PairRun>> {
    let mut reader = Reader::new(conn)?;
    let tail = tail_games(conn)?;
    // Per pair, the games whose lists hold both sets (ascending ids), then the tail's.
    let mut candidates = Vec::with_capacity(pairs.len());
    let (mut w, mut b) = (Vec::new(), Vec::new());
    for &(white, black) in pairs {
        w.clear();
        b.clear();
        reader.games_of(white, &mut w)?;
        reader.games_of(black, &mut b)?;
        let mut games: Vec<i64> = w
            .iter()
            .copied()
            .filter(|g| b.binary_search(g).is_ok())
            .collect();
        games.extend(&tail);
        candidates.push(games);
    }
    let mut out = Vec::new();
    if scan_is_cheaper(candidates.iter().map(Vec::len).sum(), game_count(conn)?) {
        let index: std::collections::HashMap<(i64, i64), usize> =
            pairs.iter().enumerate().map(|(i, &p)| (p, i)).collect();
        let white: Vec<i64> = pairs.iter().map(|p| p.0).collect();
        let black: Vec<i64> = pairs.iter().map(|p| p.1).collect();
        scan_runs(conn, (i64::MIN, i64::MAX), &white, &black, |game, r| {
            if let Some(&pair) = index.get(&(r.white_set, r.black_set)) {
                out.push(PairRun {
                    game,
                    first_ply: r.first_ply,
                    last_ply: r.last_ply,
                    pair,
                    result: None,
                    eco: None,
                });
            }
        })?;
        // The scan reads a large share of the games: their tags in one pass by id.
        let mut st = conn.prepare("SELECT id, result, eco FROM games ORDER BY id")?;
        let mut rows = st.query([])?;
        let mut at = 0;
        while let (Some(row), true) = (rows.next()?, at < out.len()) {
            let id: i64 = row.get(0)?;
            while at < out.len() && out[at].game < id {
                at += 1;
            }
            while at < out.len() && out[at].game == id {
                out[at].result = row.get(1)?;
                out[at].eco = row.get(2)?;
                at += 1;
            }
        }
    } else {
        for (pair, games) in candidates.iter().enumerate() {
            reader.pair_runs_of(games, pairs[pair], pair, &mut out)?;
        }
        out.sort_by_key(|r| (r.game, r.first_ply));
    }
    Ok(out)
}

/// The rows of `pawndex similar --games` for the table, CSV and JSON formats: `?1` is a JSON
/// array of `[game_id, ply, distance, structure]`, in output order; each gets its game's
/// players, result, date and ECO code.
const SIMILAR_GAME_ROWS_SQL: &str = "SELECT
    json_extract(j.value, '$[0]') AS game_id,
    json_extract(j.value, '$[1]') AS ply,
    json_extract(j.value, '$[2]') AS distance,
    json_extract(j.value, '$[3]') AS structure,
    g.white AS white,
    g.black AS black,
    g.result AS result,
    g.date AS date,
    g.eco AS eco
FROM json_each(?1) AS j
JOIN games AS g ON g.id = json_extract(j.value, '$[0]')
ORDER BY j.key";

/// The rows of `pawndex similar --games` for the PGN and FEN exports: `?1` is a JSON array of
/// `[game_id, ply]` or `[game_id, ply, comment]`, in output order (the PGN export marks `ply`
/// with `pgn_comment`).
const SIMILAR_EXPORT_ROWS_SQL: &str = "SELECT
    json_extract(j.value, '$[0]') AS game_id,
    json_extract(j.value, '$[1]') AS ply,
    json_extract(j.value, '$[2]') AS pgn_comment
FROM json_each(?1) AS j
ORDER BY j.key";

/// Which rows of `pawndex similar --games` a statement returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListedRows {
    /// `game_id, ply, distance, structure` and the game's players, result, date and ECO code,
    /// from a list of `[game_id, ply, distance, structure]`.
    Games,
    /// `game_id, ply, pgn_comment`, for the PGN and FEN exports, from a list of
    /// `[game_id, ply]` or `[game_id, ply, comment]`.
    Export,
}

/// The statement returning `rows` for `list` (a JSON array, in output order), its parameter
/// bound, ready for a writer to run.
pub fn listed_rows<'c>(
    conn: &'c Connection,
    rows: ListedRows,
    list: &str,
) -> Result<super::query::Prepared<'c>> {
    let sql = match rows {
        ListedRows::Games => SIMILAR_GAME_ROWS_SQL,
        ListedRows::Export => SIMILAR_EXPORT_ROWS_SQL,
    };
    let mut st = conn.prepare(sql)?;
    st.raw_bind_parameter(1, list)
        .context("binding the game list")?;
    Ok(super::query::Prepared::new(st))
}

/// The games reaching exactly one pawn structure (White's pawns with Black's): per game its
/// positions there and its result, ascending by game id; empty when a side's set is in no
/// position. The candidates are the games both sets' `set_games` lists hold (and those not yet
/// in the lists), then only their runs are read, by key: what `similar` counts for a distance-0
/// row, without ranking every set.
pub fn exact_pair(
    conn: &Connection,
    white: u64,
    black: u64,
) -> Result<Vec<(i64, u64, Option<String>)>> {
    let (Some(w), Some(b)) = (set_id(conn, 0, white)?, set_id(conn, 1, black)?) else {
        return Ok(Vec::new());
    };
    let candidates = super::profile::exact_candidates(conn, (w, b))?;
    let mut st = conn.prepare_cached(
        "SELECT r.game_id, sum(r.last_ply - r.first_ply + 1), g.result
         FROM json_each(?1) AS j
         JOIN runs AS r ON r.game_id = j.value AND r.white_set = ?2 AND r.black_set = ?3
         JOIN games AS g ON g.id = r.game_id
         GROUP BY r.game_id ORDER BY r.game_id",
    )?;
    let rows = st
        .query_map(
            rusqlite::params![super::search::json_array(&candidates), w, b],
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    u64::try_from(r.get::<_, i64>(1)?).unwrap_or(0),
                    r.get::<_, Option<String>>(2)?,
                ))
            },
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}
