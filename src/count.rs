//! Counting the positions whose pawn structure is in a set, without expanding runs into plies
//! and without looking up a structure per run.
//!
//! SQL can count a structure query's positions by summing `last_ply - first_ply + 1` over the
//! matching runs, but it then looks up each run's structure (or each matching structure's runs)
//! one B-tree probe at a time, which takes many seconds on millions of runs. Here the matching
//! structure ids are read first into a bit set (one pass over `structures`, or an index
//! lookup), then threads read `positions` sequentially, each a range of games, adding up the
//! plies of the runs whose structure is in the set (a bit set of a few million structures fits
//! in the processor's cache). When the set is small, the plies of its runs are read through the
//! index on `positions(structure_id)` instead.

use std::path::Path;
use std::thread;

use anyhow::{Result, anyhow};
use rusqlite::Connection;
use rusqlite::types::Value;

use crate::query;

/// When to read the runs of the matching structures through the index on
/// `positions(structure_id)` (a probe per run) rather than by scanning every run.
#[derive(Copy, Clone, Debug)]
struct Few {
    structures: usize,
    runs: i64,
}

const FEW: Few = Few {
    structures: 20_000,
    runs: 100_000,
};

/// Threads that read `positions`, each a range of game ids.
const SCAN_THREADS: i64 = 2;

/// A set of structure ids.
/// A set of structure ids; the ids themselves are kept while there are few of them.
struct IdSet {
    words: Vec<u64>,
    ids: Vec<i64>,
    few: usize,
}

impl IdSet {
    fn insert(&mut self, id: i64) {
        let i = usize::try_from(id).unwrap_or(0);
        if i / 64 >= self.words.len() {
            self.words.resize(i / 64 + 1, 0);
        }
        self.words[i / 64] |= 1 << (i % 64);
        if self.ids.len() <= self.few {
            self.ids.push(id);
        }
    }

    fn contains(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    fn is_small(&self) -> bool {
        self.ids.len() <= self.few
    }
}

/// Runs `ids_sql` (a query returning structure ids in its first column) and collects the ids.
fn structure_ids(
    db: &Path,
    ids_sql: &str,
    params: &[(String, Value)],
    few: usize,
) -> Result<IdSet> {
    let conn = query::open(db)?;
    let mut stmt = query::prepare(&conn, ids_sql)?;
    query::bind_params(&mut stmt, params)?;
    let mut rows = stmt.raw_query();
    let mut set = IdSet {
        words: Vec::new(),
        ids: Vec::new(),
        few,
    };
    while let Some(row) = rows.next()? {
        set.insert(row.get(0)?);
    }
    Ok(set)
}

/// Plies of the runs of games `from..=to` whose structure is in `set`.
fn plies_in_set(db: &Path, from: i64, to: i64, set: &IdSet) -> Result<u64> {
    let conn = query::open(db)?;
    let mut stmt = conn.prepare(
        "SELECT structure_id, first_ply, last_ply FROM positions WHERE game_id BETWEEN ?1 AND ?2",
    )?;
    let mut rows = stmt.query([from, to])?;
    let mut total = 0u64;
    while let Some(row) = rows.next()? {
        let id = usize::try_from(row.get::<_, i64>(0)?).unwrap_or(usize::MAX);
        if set.contains(id) {
            let (first, last): (i64, i64) = (row.get(1)?, row.get(2)?);
            total += (last - first + 1) as u64;
        }
    }
    Ok(total)
}

/// Number of runs of the structures in `set`, up to `limit` (the index on
/// `positions(structure_id)` covers this count: no probe per run).
fn runs_of(conn: &Connection, set: &IdSet, limit: i64) -> Result<i64> {
    let mut stmt = conn.prepare("SELECT count(*) FROM positions WHERE structure_id = ?1")?;
    let mut total = 0;
    for &id in &set.ids {
        total += stmt.query_row([id], |r| r.get::<_, i64>(0))?;
        if total > limit {
            break;
        }
    }
    Ok(total)
}

/// Number of positions (plies) of games `1..=last_game` whose structure is in `set`, read
/// through the index on `positions(structure_id)`.
fn plies_through_index(conn: &Connection, set: &IdSet, last_game: i64) -> Result<u64> {
    let mut stmt = conn.prepare(
        "SELECT coalesce(sum(last_ply - first_ply + 1), 0) FROM positions
         WHERE structure_id = ?1 AND game_id <= ?2",
    )?;
    let mut total = 0u64;
    for &id in &set.ids {
        let n: i64 = stmt.query_row([id, last_game], |r| r.get(0))?;
        total += n as u64;
    }
    Ok(total)
}

/// Counts the positions whose structure id is returned by `ids_sql`.
///
/// The count covers the games stored when it starts (a concurrent `pawndex index` only
/// appends games and structures, so later ones are simply left out).
pub fn positions_with_structures(
    db: &Path,
    ids_sql: &str,
    params: &[(String, Value)],
) -> Result<u64> {
    count(db, ids_sql, params, FEW)
}

fn count(db: &Path, ids_sql: &str, params: &[(String, Value)], few: Few) -> Result<u64> {
    let conn = query::open(db)?;
    let last_game: i64 =
        conn.query_row("SELECT coalesce(max(id), 0) FROM games", [], |r| r.get(0))?;
    let set = structure_ids(db, ids_sql, params, few.structures)?;
    if set.is_small() && runs_of(&conn, &set, few.runs)? <= few.runs {
        return plies_through_index(&conn, &set, last_game);
    }
    let chunk = last_game / SCAN_THREADS + 1;
    thread::scope(|scope| {
        let scans: Vec<_> = (0..SCAN_THREADS)
            .map(|i| {
                let (from, to) = (i * chunk + 1, ((i + 1) * chunk).min(last_game));
                let set = &set;
                scope.spawn(move || plies_in_set(db, from, to, set))
            })
            .collect();
        let mut total = 0;
        for scan in scans {
            total += scan
                .join()
                .map_err(|_| anyhow!("a counting thread panicked"))??;
        }
        Ok(total)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage;

    /// A database with random runs over a few hundred structures, and the expected count of
    /// positions per structure-id predicate, computed naively.
    fn random_db(path: &Path) {
        let conn = storage::open_for_writing(path).unwrap();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        conn.execute_batch("BEGIN").unwrap();
        for id in 1..=300i64 {
            conn.execute(
                "INSERT INTO structures VALUES (?1, ?1, -?1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)",
                [id],
            )
            .unwrap();
        }
        for game in 1..=200i64 {
            let plies = next(120) as i64;
            conn.execute(
                "INSERT INTO games (id, plies, source, offset, moves, hash)
                 VALUES (?1, ?2, 't', 0, x'', ?1)",
                [game, plies],
            )
            .unwrap();
            let mut first = 0;
            while first <= plies {
                let last = (first + next(5) as i64).min(plies);
                let structure = 1 + next(300) as i64;
                conn.execute(
                    "INSERT INTO positions VALUES (?1, ?2, ?3, ?4, 0, 0)",
                    [game, first, last, structure],
                )
                .unwrap();
                first = last + 1;
            }
        }
        conn.execute_batch("COMMIT").unwrap();
    }

    #[test]
    fn both_ways_of_counting_agree_with_sql() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        random_db(&path);
        let conn = query::open(&path).unwrap();
        for predicate in ["id % 3 = 0", "id < 20", "id = 7", "id > 1000", "1"] {
            let ids_sql = format!("SELECT id FROM structures WHERE {predicate}");
            let expected: i64 = conn
                .query_row(
                    &format!(
                        "SELECT coalesce(sum(last_ply - first_ply + 1), 0) FROM positions
                         WHERE structure_id IN ({ids_sql})"
                    ),
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            let through_index = Few {
                structures: 1000,
                runs: 1_000_000,
            };
            let by_scan = Few {
                structures: 0,
                runs: 0,
            };
            for few in [through_index, by_scan, FEW] {
                let n = count(&path, &ids_sql, &[], few).unwrap();
                assert_eq!(n, expected as u64, "{predicate} with {few:?}");
            }
        }
    }
}
