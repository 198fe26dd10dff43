//! Counting a search's positions without expanding runs into plies, by its [`CountPlan`]:
//! aggregates (`set_totals`) for one side's conditions, the inverted index (`set_games`) for
//! rare sets, or a parallel scan of every run against bit sets of the matching pawn sets
//! (a bit set of a few million sets fits in the processor's cache).
//!
//! Every count covers the games stored when it starts: a concurrent `pawndex index` only
//! appends games and pawn sets, and each part of the count reads games up to the last one it
//! saw at the start (or one read transaction).

use std::thread;

use anyhow::{Result, anyhow};
use rusqlite::types::Value;
use rusqlite::{Connection, Statement};

use super::search::{CountPlan, GameCond, RunCond, Search, Side};

/// Threads that read `runs`, each a range of game ids.
const SCAN_THREADS: i64 = 2;

/// A set of ids (pawn sets or games).
#[derive(Default)]
struct IdSet {
    words: Vec<u64>,
}

impl IdSet {
    fn insert(&mut self, id: i64) {
        let Ok(i) = usize::try_from(id) else { return };
        // Ids come from the database: never size the set by one wild value.
        if i > u32::MAX as usize {
            return;
        }
        if i / 64 >= self.words.len() {
            self.words.resize(i / 64 + 1, 0);
        }
        self.words[i / 64] |= 1 << (i % 64);
    }

    #[inline]
    fn contains(&self, id: i64) -> bool {
        usize::try_from(id).is_ok_and(|i| {
            self.words
                .get(i / 64)
                .is_some_and(|w| w & (1 << (i % 64)) != 0)
        })
    }
}

fn bind(st: &mut Statement<'_>, params: &[(String, Value)]) -> Result<()> {
    for (name, value) in params {
        if let Some(i) = st.parameter_index(&format!(":{name}"))? {
            st.raw_bind_parameter(i, value)?;
        }
    }
    Ok(())
}

/// The ids returned by `sql` (first column).
fn ids(conn: &Connection, sql: &str, params: &[(String, Value)]) -> Result<IdSet> {
    let mut st = conn.prepare(sql)?;
    bind(&mut st, params)?;
    let mut rows = st.raw_query();
    let mut set = IdSet::default();
    while let Some(r) = rows.next()? {
        set.insert(r.get(0)?);
    }
    Ok(set)
}

fn single(conn: &Connection, sql: &str, params: &[(String, Value)]) -> Result<i64> {
    let mut st = conn.prepare(sql)?;
    bind(&mut st, params)?;
    let mut rows = st.raw_query();
    Ok(match rows.next()? {
        Some(r) => r.get::<_, Option<i64>>(0)?.unwrap_or(0),
        None => 0,
    })
}

/// Counts the positions of `search`. `conn` is a read-only connection inside a read
/// transaction; `open` opens more connections to the same database for parallel scans.
pub fn positions(
    conn: &Connection,
    open: &(dyn Fn() -> Result<Connection> + Sync),
    search: &Search,
) -> Result<u64> {
    let params = search.params();
    match search.count_plan(conn)? {
        CountPlan::Totals(side) => {
            let sets = search
                .sets_sql(side)
                .ok_or_else(|| anyhow!("a totals count needs set conditions"))?;
            let stored = single(
                conn,
                &format!(
                    "SELECT sum(t.positions) FROM set_totals AS t WHERE t.set_id IN (\n{sets}\n)"
                ),
                &params,
            )?;
            // The games not yet in the totals (an unfinished run), read from their runs.
            let tail = single(
                conn,
                &format!(
                    "SELECT sum(r.last_ply - r.first_ply + 1) FROM runs AS r
                     WHERE r.game_id > (SELECT through FROM derived)
                       AND r.{}_set IN (\n{sets}\n)",
                    side.name()
                ),
                &params,
            )?;
            Ok((stored + tail) as u64)
        }
        CountPlan::Bishops => {
            let mut total = 0i64;
            let mut st = conn.prepare("SELECT bishop_pairs, positions FROM bishop_totals")?;
            let mut rows = st.query([])?;
            while let Some(r) = rows.next()? {
                if search.bishops_pass(r.get(0)?) {
                    total += r.get::<_, i64>(1)?;
                }
            }
            // The games not yet in the totals, from their runs.
            let mut st = conn.prepare(
                "SELECT bishop_pairs, sum(last_ply - first_ply + 1) FROM runs
                 WHERE game_id > (SELECT through FROM derived) GROUP BY bishop_pairs",
            )?;
            let mut rows = st.query([])?;
            while let Some(r) = rows.next()? {
                if search.bishops_pass(r.get(0)?) {
                    total += r.get::<_, i64>(1)?;
                }
            }
            Ok(total.max(0) as u64)
        }
        CountPlan::Postings(side) => postings(conn, search, side),
        CountPlan::Scan => scan(conn, open, search),
    }
}

/// The plies of the matching runs of the games in `side`'s lists (and the games not yet in
/// them), read game by game through the key of `runs`.
fn postings(conn: &Connection, search: &Search, side: Side) -> Result<u64> {
    let filter = filter(conn, search)?;
    // The games in the rare side's lists (reading the other side's too costs more than it
    // saves when that side is common).
    let mut games: Option<Vec<i64>> = None;
    for s in [side] {
        let Some(sets) = search.sets_sql(s) else {
            continue;
        };
        let mut st = conn.prepare(&format!(
            "SELECT sg.games FROM set_games AS sg WHERE sg.set_id IN (\n{sets}\n)"
        ))?;
        bind(&mut st, &search.params())?;
        let mut rows = st.raw_query();
        let mut these = Vec::new();
        while let Some(r) = rows.next()? {
            these.extend(super::decode_games(r.get_ref(0)?.as_blob()?));
        }
        these.sort_unstable();
        these.dedup();
        games = Some(match games {
            None => these,
            Some(before) => before
                .into_iter()
                .filter(|g| these.binary_search(g).is_ok())
                .collect(),
        });
    }
    let mut games = games.unwrap_or_default();
    let mut tail =
        conn.prepare("SELECT id FROM games WHERE id > (SELECT through FROM derived) ORDER BY id")?;
    for id in tail.query_map([], |r| r.get::<_, i64>(0))? {
        games.push(id?);
    }
    let mut st = conn.prepare(
        "SELECT game_id, first_ply, last_ply, white_set, black_set, bishop_pairs
         FROM runs WHERE game_id = ?1",
    )?;
    let mut total = 0u64;
    for g in games {
        let mut rows = st.query([g])?;
        while let Some(r) = rows.next()? {
            total += filter.plies(r)?;
        }
    }
    Ok(total)
}

/// Everything a scan thread checks per run.
struct Filter {
    white: Option<IdSet>,
    black: Option<IdSet>,
    games: Option<IdSet>,
    /// (mask, wanted) pairs on `bishop_pairs`.
    bishops: Vec<(i64, i64)>,
    plies: (u32, u32),
}

fn filter(conn: &Connection, search: &Search) -> Result<Filter> {
    let params = search.params();
    let side = |s: Side| -> Result<Option<IdSet>> {
        search
            .sets_sql(s)
            .map(|sql| ids(conn, &sql, &params))
            .transpose()
    };
    let games = if search.games.is_empty() {
        None
    } else {
        let mut wheres = Vec::new();
        for g in &search.games {
            wheres.push(match g {
                GameCond::Result(_) => "g.result = :result",
                GameCond::MinElo(_) => "g.white_elo >= :min_elo AND g.black_elo >= :min_elo",
                GameCond::Player(_) => {
                    "(g.white LIKE :player ESCAPE '\\' OR g.black LIKE :player ESCAPE '\\')"
                }
            });
        }
        Some(ids(
            conn,
            &format!("SELECT g.id FROM games AS g WHERE {}", wheres.join(" AND ")),
            &params,
        )?)
    };
    let filter = Filter {
        white: side(Side::White)?,
        black: side(Side::Black)?,
        games,
        bishops: search
            .runs
            .iter()
            .map(|c| match *c {
                RunCond::BishopPair(Side::White, has) => (1, if has { 1 } else { 0 }),
                RunCond::BishopPair(Side::Black, has) => (2, if has { 2 } else { 0 }),
                RunCond::BishopPairs(v) => (3, i64::from(v)),
            })
            .collect(),
        plies: search.plies,
    };
    Ok(filter)
}

impl Filter {
    /// The plies of a run row (`game_id, first_ply, last_ply, white_set, black_set,
    /// bishop_pairs`) that match, 0 when it does not.
    #[inline]
    fn plies(&self, r: &rusqlite::Row<'_>) -> Result<u64> {
        if let Some(w) = &self.white
            && !w.contains(r.get(3)?)
        {
            return Ok(0);
        }
        if let Some(b) = &self.black
            && !b.contains(r.get(4)?)
        {
            return Ok(0);
        }
        if !self.bishops.is_empty() {
            let bp: i64 = r.get(5)?;
            if self.bishops.iter().any(|&(mask, want)| bp & mask != want) {
                return Ok(0);
            }
        }
        if let Some(g) = &self.games
            && !g.contains(r.get(0)?)
        {
            return Ok(0);
        }
        let first: i64 = r.get(1)?;
        let last: i64 = r.get(2)?;
        let lo = first.max(i64::from(self.plies.0));
        let hi = last.min(i64::from(self.plies.1));
        Ok(if hi >= lo { (hi - lo + 1) as u64 } else { 0 })
    }
}

fn scan(
    conn: &Connection,
    open: &(dyn Fn() -> Result<Connection> + Sync),
    search: &Search,
) -> Result<u64> {
    let last_game: i64 =
        conn.query_row("SELECT coalesce(max(id), 0) FROM games", [], |r| r.get(0))?;
    let filter = filter(conn, search)?;
    let chunk = last_game / SCAN_THREADS + 1;
    thread::scope(|scope| {
        let scans: Vec<_> = (0..SCAN_THREADS)
            .map(|i| {
                let (from, to) = (i * chunk + 1, ((i + 1) * chunk).min(last_game));
                let filter = &filter;
                scope.spawn(move || scan_slice(&open()?, from, to, filter))
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

/// Plies of the matching runs of games `from..=to`.
fn scan_slice(conn: &Connection, from: i64, to: i64, f: &Filter) -> Result<u64> {
    let mut st = conn.prepare(
        "SELECT game_id, first_ply, last_ply, white_set, black_set, bishop_pairs
         FROM runs WHERE game_id BETWEEN ?1 AND ?2",
    )?;
    let mut rows = st.query([from, to])?;
    let mut total = 0u64;
    while let Some(r) = rows.next()? {
        total += f.plies(r)?;
    }
    Ok(total)
}
