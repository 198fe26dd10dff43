//! The derived tables: `set_games` (which games reach a pawn set) and `set_totals` (per pawn
//! set, positions, games, results and Elo sums), built after a load for the games above
//! `derived.through`, in one transaction with the new `through`.
//!
//! Readers read the games above `through` from `runs` themselves, so the derived tables may lag
//! behind the games in two ways:
//! - the *unmerged tail*: a run that adds few games compared with the database leaves them out
//!   (merging them would rewrite pages all over the derived tables: an append would cost what
//!   the database holds, not what it adds). The tail is bounded (see [`merge_due`]); the run
//!   that takes it over the bound merges it, and `pawndex migrate` merges it at once.
//! - an *unfinished* database: a run killed before its end leaves games above
//!   `derived.finished`. Readers still answer right, only slower, and say so; the next
//!   `pawndex index` or `pawndex migrate` finishes it.
//!
//! The rooms: [`sort`] (the pairs sorted in bounded memory, spilling to temporary files),
//! [`fold`] (the pairs collected game by game and folded set by set, early on a thread of its
//! own in a first load) and [`tables`] (the rows of `set_games` and `set_totals`, laid out in
//! pages in a first derivation, else through SQL).

mod fold;
mod sort;
mod tables;

use anyhow::{Result, bail};
use rusqlite::{Connection, params};

pub use self::fold::{EarlyFold, PairCollector, Pairs, SetAggregate, fold_early, tail_sets};
use self::fold::{Folding, pairs};
pub use self::tables::decode_games;
pub(in crate::store) use self::tables::{TOTALS_COLUMNS, fresh_roots};

/// How far the derived tables lag behind the stored games.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Lag {
    /// The derived tables cover the games with id <= through.
    pub through: i64,
    /// The last game stored by a run that completed.
    pub finished: i64,
    /// The last stored game.
    pub last_game: i64,
}

impl Lag {
    /// Games stored but not in the derived tables (the unmerged tail and any unfinished games):
    /// readers read them from `runs`.
    #[must_use]
    pub fn pending(self) -> i64 {
        (self.last_game - self.through).max(0)
    }

    /// Games stored by a run that did not complete (killed before its end).
    #[must_use]
    pub fn unfinished(self) -> i64 {
        (self.last_game - self.finished.max(self.through)).max(0)
    }
}

/// Reads the lag (one read; call it inside the reader's transaction for a consistent view).
pub fn lag(conn: &Connection) -> Result<Lag> {
    Ok(conn.query_row(
        "SELECT through, finished, (SELECT coalesce(max(id), 0) FROM games) FROM derived",
        [],
        |r| {
            Ok(Lag {
                through: r.get(0)?,
                finished: r.get(1)?,
                last_game: r.get(2)?,
            })
        },
    )?)
}

/// The unmerged tail holds at most this many games...
pub const TAIL_MAX_GAMES: i64 = 50_000;
/// ...and at most this fraction (1/n) of the merged games.
pub const TAIL_MAX_FRACTION: i64 = 16;

/// Must a run that leaves `lag` merge the games above `through` into the derived tables? Yes
/// unless they are few against the merged games: at most [`TAIL_MAX_GAMES`] and at most
/// 1/[`TAIL_MAX_FRACTION`] of them. Readers read the tail from `runs`, so its size bounds what
/// it adds to a read (at most about 1.4M runs on top of any database).
#[must_use]
pub fn merge_due(lag: Lag) -> bool {
    let pending = lag.pending();
    pending > 0
        && (pending > TAIL_MAX_GAMES || pending.saturating_mul(TAIL_MAX_FRACTION) > lag.through)
}

/// The last step of a completed run: merges the games above `derived.through` into the
/// derived tables when [`merge_due`] (always with `merge_all`), and records every stored game
/// as finished, in one transaction.
///
/// `collected`: the pairs of the games this run stored, if it collected them (they must run
/// from its first game to the last stored game). `fresh`: the root pages of `set_games` and
/// `set_totals` when the run chose to lay out a first derivation's pages ([`fresh_roots`]).
pub fn finish_run(
    conn: &Connection,
    merge_all: bool,
    collected: Option<Pairs>,
    fresh: Option<(u32, u32)>,
) -> Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let work = || -> Result<()> {
        let lag = lag(conn)?;
        // First: a first derivation writes pages last (see `write_fresh_pages`).
        conn.execute("UPDATE derived SET finished = ?1", [lag.last_game])?;
        if lag.pending() > 0 && (merge_all || merge_due(lag)) {
            derive_range(conn, lag, collected, fresh)?;
        }
        Ok(())
    };
    match work() {
        Ok(()) => {
            conn.execute_batch("COMMIT")?;
            // Forget what SQLite parsed of pages written through `sqlite_dbpage`.
            conn.release_memory()?;
            Ok(())
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Merges the games above `lag.through` into the derived tables. `collected` holds the pairs
/// of the games this run stored (from its first game to the last); the games before it are
/// read from the database. `fresh`: the root pages of a first derivation laid out in pages.
fn derive_range(
    conn: &Connection,
    lag: Lag,
    collected: Option<Pairs>,
    fresh: Option<(u32, u32)>,
) -> Result<()> {
    let start = std::time::Instant::now();
    let mut collector = match collected {
        Some(Pairs::Folding(fold)) => return derive_folded(conn, lag, fold, fresh, start),
        Some(Pairs::Collected(c)) => c,
        None => PairCollector::default(),
    };
    let read_to = collector
        .first_game()
        .map_or(lag.last_game, |first| first.saturating_sub(1));
    pairs(conn, &mut collector, lag.through.saturating_add(1), read_to)?;
    let (sorter, bishops) = collector.finish()?;
    let read = start.elapsed();
    add_bishop_totals(conn, &bishops)?;
    match fresh {
        Some(roots) if lag.through == 0 => {
            // Nothing derived yet and the pages chosen: both tables laid out in set order
            // (see `bulk_tree`), after every row SQLite writes here.
            conn.execute("UPDATE derived SET through = ?1", [lag.last_game])?;
            tables::lay_out_fresh(conn, Folding::start(sorter, 4)?, roots)?;
        }
        // Nothing derived yet: every set's rows are new, written many to a statement.
        _ if lag.through == 0 => tables::fresh_rows(conn, sorter)?,
        // In set order: each set's new games appended to its list, its totals added.
        _ => tables::append_sets(conn, sorter)?,
    }
    finish_derive(conn, lag, start, read)
}

/// [`derive_range`] of the pairs an [`EarlyFold`] is folding: a first derivation's pages.
fn derive_folded(
    conn: &Connection,
    lag: Lag,
    fold: EarlyFold,
    fresh: Option<(u32, u32)>,
    start: std::time::Instant,
) -> Result<()> {
    let roots = match fresh {
        Some(r) if lag.through == 0 => r,
        // `fold_early` checked both under the same write lock.
        _ => bail!("the derived tables changed while the run held the database"),
    };
    let (bishops, folding) = fold.parts();
    add_bishop_totals(conn, &bishops)?;
    conn.execute("UPDATE derived SET through = ?1", [lag.last_game])?;
    tables::lay_out_fresh(conn, folding, roots)?;
    report_derive(start, std::time::Duration::ZERO);
    Ok(())
}

/// Adds the positions of each bishop-pair value to `bishop_totals`.
fn add_bishop_totals(conn: &Connection, bishops: &[i64; 4]) -> Result<()> {
    let mut st = conn.prepare(
        "INSERT INTO bishop_totals VALUES (?1, ?2)
         ON CONFLICT (bishop_pairs) DO UPDATE SET positions = positions + excluded.positions",
    )?;
    for (v, n) in bishops.iter().enumerate() {
        st.execute(params![v as i64, n])?;
    }
    Ok(())
}

/// Records how far the derived tables go (and, with `PAWNDEX_TIMINGS`, how long they took).
fn finish_derive(
    conn: &Connection,
    lag: Lag,
    start: std::time::Instant,
    read: std::time::Duration,
) -> Result<()> {
    conn.execute("UPDATE derived SET through = ?1", [lag.last_game])?;
    report_derive(start, read);
    Ok(())
}

/// With `PAWNDEX_TIMINGS`, how long the derived tables took.
fn report_derive(start: std::time::Instant, read: std::time::Duration) {
    if std::env::var_os("PAWNDEX_TIMINGS").is_some() {
        eprintln!(
            "timings: derived tables: read and sort {:.1} s, write {:.1} s",
            read.as_secs_f64(),
            (start.elapsed() - read).as_secs_f64()
        );
    }
}

/// Fills `sqlite_stat1` with row counts instead of running ANALYZE (a full ANALYZE reads every
/// index: seconds on a large database; a sampled one misjudges the skewed indexes). The counts
/// are estimated from the largest ids and the runs of the last 1,000 games, so that this costs
/// the same on any database (an exact `count(*)` of 137M runs takes seconds).
pub fn write_planner_statistics(conn: &Connection) -> Result<()> {
    let count = |sql: &str| -> Result<i64> {
        Ok(conn
            .query_row(sql, [], |r| r.get::<_, Option<i64>>(0))?
            .unwrap_or(0))
    };
    let games = count("SELECT max(id) FROM games")?.max(1);
    let sample = count("SELECT count(*) FROM games WHERE id > (SELECT max(id) FROM games) - 1000")?;
    let sample_runs =
        count("SELECT count(*) FROM runs WHERE game_id > (SELECT max(id) FROM games) - 1000")?;
    let runs = if sample > 0 {
        games.saturating_mul(sample_runs) / sample
    } else {
        0
    }
    .max(1);
    let sets = count("SELECT max(id) FROM pawn_sets")?.max(1);
    let pairs = count("SELECT max(set_id) FROM set_games")?.max(1);
    let rejects = count("SELECT max(rowid) FROM rejects")?.max(1);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_append_stays_in_the_tail_and_a_large_one_merges() {
        let lag = |through, last_game| Lag {
            through,
            finished: last_game,
            last_game,
        };
        assert!(merge_due(lag(0, 10))); // a fresh database: always
        assert!(!merge_due(lag(4_000_000, 4_004_742))); // a week of games on 4M: the tail
        assert!(merge_due(lag(4_000_000, 4_050_001))); // more than 50,000 games
        assert!(merge_due(lag(1_600, 1_701))); // more than 1/16 of the merged games
        assert!(!merge_due(lag(1_600, 1_600))); // nothing pending
    }
}
