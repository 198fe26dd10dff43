//! The derived tables: `set_games` (which games reach a pawn set) and `set_totals` (per pawn
//! set, positions, games, results and Elo sums), built after a load for the games above
//! `derived.through`, in one transaction with the new `through`.
//!
//! A run killed before this step leaves `through` behind the last game: the database is then
//! *unfinished*. Readers still answer right (they read the games above `through` from `runs`),
//! only slower, and say so; the next `pawndex index` or `pawndex migrate` finishes it.

use anyhow::Result;
use rusqlite::{Connection, params};

/// Pawn sets aggregated per pass over the new runs (a dense table of 9 integers each).
const SETS_PER_PASS: i64 = 1 << 20;

/// How far the derived tables lag behind the stored games.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Lag {
    /// The derived tables cover the games with id <= through.
    pub through: i64,
    /// The last stored game.
    pub last_game: i64,
}

impl Lag {
    /// Games stored but not yet in the derived tables.
    #[must_use]
    pub fn pending(self) -> i64 {
        (self.last_game - self.through).max(0)
    }
}

/// Reads the lag (one read; call it inside the reader's transaction for a consistent view).
pub fn lag(conn: &Connection) -> Result<Lag> {
    Ok(conn.query_row(
        "SELECT (SELECT through FROM derived), (SELECT coalesce(max(id), 0) FROM games)",
        [],
        |r| {
            Ok(Lag {
                through: r.get(0)?,
                last_game: r.get(1)?,
            })
        },
    )?)
}

/// Outcome of a game for the totals: 0 White wins, 1 draw, 2 Black wins, 3 none.
fn outcome(result: Option<&str>) -> usize {
    match result {
        Some("1-0") => 0,
        Some("1/2-1/2") => 1,
        Some("0-1") => 2,
        _ => 3,
    }
}

/// Builds the derived tables for every game above `derived.through`.
pub fn derive_pending(conn: &Connection) -> Result<()> {
    let lag = lag(conn)?;
    if lag.pending() == 0 {
        return Ok(());
    }
    conn.execute_batch("BEGIN IMMEDIATE")?;
    match derive_range(conn, lag) {
        Ok(()) => Ok(conn.execute_batch("COMMIT")?),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

fn derive_range(conn: &Connection, lag: Lag) -> Result<()> {
    // set_games: one sorted insert (SQLite's external sorter; memory stays bounded).
    conn.execute(
        "INSERT OR IGNORE INTO set_games (set_id, game_id)
         SELECT white_set, game_id FROM runs WHERE game_id > ?1
         UNION
         SELECT black_set, game_id FROM runs WHERE game_id > ?1
         ORDER BY 1, 2",
        [lag.through],
    )?;
    // set_totals: passes over the new runs, each aggregating a range of set ids in a dense
    // table, then adding it to the stored totals.
    let (min_set, max_set): (i64, i64) = conn.query_row(
        "SELECT coalesce(min(id), 1), coalesce(max(id), 0) FROM pawn_sets",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let mut lo = min_set;
    while lo <= max_set {
        let hi = (lo + SETS_PER_PASS - 1).min(max_set);
        totals_pass(conn, lag.through, lo, hi)?;
        lo = hi + 1;
    }
    conn.execute("UPDATE derived SET through = ?1", [lag.last_game])?;
    Ok(())
}

/// Adds the totals of the sets `lo..=hi` over the games above `through`.
fn totals_pass(conn: &Connection, through: i64, lo: i64, hi: i64) -> Result<()> {
    // positions, games, white wins, draws, black wins, white elo sum, white elo positions,
    // black elo sum, black elo positions
    let len = usize::try_from(hi - lo + 1)?;
    let mut totals = vec![[0i64; 9]; len];
    let mut st = conn.prepare(
        "SELECT g.id, g.result, g.white_elo, g.black_elo, r.white_set, r.black_set,
                r.last_ply - r.first_ply + 1
         FROM games AS g JOIN runs AS r ON r.game_id = g.id
         WHERE g.id > ?1
         ORDER BY g.id, r.first_ply",
    )?;
    let mut rows = st.query([through])?;
    let mut last = (0i64, 0i64, 0i64);
    while let Some(r) = rows.next()? {
        let game: i64 = r.get(0)?;
        let result = outcome(r.get_ref(1)?.as_str_or_null()?);
        let white_elo: Option<i64> = r.get(2).ok().flatten();
        let black_elo: Option<i64> = r.get(3).ok().flatten();
        let sets: [i64; 2] = [r.get(4)?, r.get(5)?];
        let plies: i64 = r.get(6)?;
        if game != last.0 {
            last = (game, 0, 0);
        }
        for (side, &set) in sets.iter().enumerate() {
            if set < lo || set > hi {
                continue;
            }
            let t = &mut totals[(set - lo) as usize];
            t[0] += plies;
            // A pawn set occupies one stretch of a game: a new set id on this side is a new
            // (set, game) pair.
            let seen = if side == 0 { &mut last.1 } else { &mut last.2 };
            if *seen != set {
                *seen = set;
                t[1] += 1;
            }
            if result < 3 {
                t[2 + result] += plies;
            }
            if let Some(e) = white_elo {
                t[5] += e * plies;
                t[6] += plies;
            }
            if let Some(e) = black_elo {
                t[7] += e * plies;
                t[8] += plies;
            }
        }
    }
    let mut upsert = conn.prepare(
        "INSERT INTO set_totals VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (set_id) DO UPDATE SET
             positions = positions + excluded.positions,
             games = games + excluded.games,
             white_wins = white_wins + excluded.white_wins,
             draws = draws + excluded.draws,
             black_wins = black_wins + excluded.black_wins,
             white_elo_sum = white_elo_sum + excluded.white_elo_sum,
             white_elo_positions = white_elo_positions + excluded.white_elo_positions,
             black_elo_sum = black_elo_sum + excluded.black_elo_sum,
             black_elo_positions = black_elo_positions + excluded.black_elo_positions",
    )?;
    for (i, t) in totals.iter().enumerate() {
        if t[0] == 0 {
            continue;
        }
        upsert.execute(params![
            lo + i as i64,
            t[0],
            t[1],
            t[2],
            t[3],
            t[4],
            t[5],
            t[6],
            t[7],
            t[8]
        ])?;
    }
    Ok(())
}

/// Fills `sqlite_stat1` from exact row counts instead of running ANALYZE (a full ANALYZE reads
/// every index: seconds on a large database; a sampled one misjudges the skewed indexes).
pub fn write_planner_statistics(conn: &Connection) -> Result<()> {
    let count = |sql: &str| -> Result<i64> { Ok(conn.query_row(sql, [], |r| r.get::<_, i64>(0))?) };
    let games = count("SELECT count(*) FROM games")?.max(1);
    let runs = count("SELECT count(*) FROM runs")?.max(1);
    let sets = count("SELECT coalesce(max(id), 0) FROM pawn_sets")?.max(1);
    let pairs = count("SELECT count(*) FROM set_games")?.max(1);
    let rejects = count("SELECT count(*) FROM rejects")?.max(1);
    let per = |n: i64, d: i64| (n / d.max(1)).max(1);
    let stats: Vec<(&str, Option<&str>, String)> = vec![
        ("games", None, format!("{games}")),
        ("games", Some("games_hash"), format!("{games} 1")),
        ("game_summary", None, format!("{games}")),
        (
            "runs",
            Some("runs"),
            format!("{runs} {} 1", per(runs, games)),
        ),
        ("pawn_sets", None, format!("{sets}")),
        ("pawn_sets", Some("pawn_sets_key"), format!("{sets} 1 1")),
        ("set_totals", None, format!("{sets}")),
        (
            "set_games",
            Some("set_games"),
            format!("{pairs} {} 1", per(pairs, sets)),
        ),
        (
            "rejects",
            Some("sqlite_autoindex_rejects_1"),
            format!("{rejects} {} 1", per(rejects, 4)),
        ),
    ];
    conn.execute_batch("ANALYZE sqlite_schema")?; // creates sqlite_stat1 if needed
    let tx = conn.unchecked_transaction()?;
    tx.execute("DELETE FROM sqlite_stat1", [])?;
    {
        let mut st = tx.prepare("INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?1, ?2, ?3)")?;
        for (tbl, idx, stat) in &stats {
            st.execute(params![tbl, idx, stat])?;
        }
    }
    tx.commit()?;
    Ok(())
}
