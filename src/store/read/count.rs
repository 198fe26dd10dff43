//! Counting a search's positions without expanding runs into plies, by its [`CountPlan`]:
//! aggregates (`set_totals`) for one side's conditions, the inverted index (`set_games`) for
//! rare sets and the changes of named structure (`structure_changes`) for the games of a named
//! structure, or a parallel scan of every run against bit sets of the matching pawn sets
//! (a bit set of a few million sets fits in the processor's cache).
//!
//! Every count covers the games stored when it starts: a concurrent `pawndex index` only
//! appends games and pawn sets, and each part of the count reads games up to the last one it
//! saw at the start (or one read transaction).

use anyhow::{Result, anyhow};
use rusqlite::types::Value;
use rusqlite::{Connection, Statement};

use super::search::{CountPlan, GameCond, MatchingSets, RunCond, Search, Side, json_array};

/// A set of ids (pawn sets or games): a bit per id up to a bound sized by how many ids it
/// holds (64 per id, plus 2^26), and the ids above it, few in any database pawndex writes, in
/// a sorted list. Ids come from the database: one wild value never sizes it.
struct IdSet {
    words: Vec<u64>,
    /// Ids below this are in `words`, the others in `beyond`.
    bits: usize,
    beyond: Vec<i64>,
}

impl IdSet {
    fn new(ids: &[i64]) -> IdSet {
        let bits = ids.len().saturating_mul(64).saturating_add(1 << 26);
        let mut set = IdSet {
            words: Vec::new(),
            bits,
            beyond: Vec::new(),
        };
        for &id in ids {
            match usize::try_from(id) {
                Ok(i) if i < bits => {
                    if i / 64 >= set.words.len() {
                        set.words.resize(i / 64 + 1, 0);
                    }
                    set.words[i / 64] |= 1 << (i % 64);
                }
                _ => set.beyond.push(id),
            }
        }
        set.beyond.sort_unstable();
        set.beyond.dedup();
        set
    }

    #[inline]
    fn contains(&self, id: i64) -> bool {
        match usize::try_from(id) {
            Ok(i) if i < self.bits => self
                .words
                .get(i / 64)
                .is_some_and(|w| w & (1 << (i % 64)) != 0),
            _ => !self.beyond.is_empty() && self.beyond.binary_search(&id).is_ok(),
        }
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
    let mut found = Vec::new();
    while let Some(r) = rows.next()? {
        found.push(r.get(0)?);
    }
    Ok(IdSet::new(&found))
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

/// How a search's positions are counted, decided and prepared here, finished by the caller:
/// either counted already from the aggregates, or the runs to read with a [`RunFilter`] (the
/// candidate games, or every game), which the caller may split between connections.
pub enum Counting {
    /// The count, from `set_totals` or `bishop_totals` (plus the unmerged tail).
    Done(u64),
    /// Read the runs of these games (ascending ids).
    Games(RunFilter, Vec<i64>),
    /// Read every run, of games `1..=last_game`.
    Scan(RunFilter, i64),
}

/// Prepares the count of `search`'s positions. `conn` is a read-only connection inside a read
/// transaction; the runs a [`Counting`] asks for are read with [`RunFilter::games`] and
/// [`RunFilter::range`], on this connection or others to the same database.
pub fn prepare(conn: &Connection, search: &Search) -> Result<Counting> {
    if search.min_stay.is_some() {
        // A least stay holds of a game's runs together, which the run filter reads one by
        // one: counted in SQL.
        let (form, games) = search.rows_form(conn)?;
        let mut c = search.count_sql(form, false);
        c.params.extend(games);
        return Ok(Counting::Done(
            single(conn, &c.text, &c.params)?.max(0) as u64
        ));
    }
    Ok(match search.count_plan() {
        CountPlan::Totals(side) => Counting::Done(from_totals(conn, search, side)?),
        CountPlan::Bishops => Counting::Done(from_bishop_totals(conn, search)?),
        CountPlan::Runs => {
            let sets = search.matching_sets(conn)?;
            let filter = filter(conn, search, &sets)?;
            match search.candidate_games(conn, &sets)? {
                Some(games) => Counting::Games(filter, games),
                None => {
                    let last_game: i64 =
                        conn.query_row("SELECT coalesce(max(id), 0) FROM games", [], |r| r.get(0))?;
                    Counting::Scan(filter, last_game)
                }
            }
        }
    })
}

/// One side's set conditions: the aggregates of the matching sets, plus the unmerged tail.
fn from_totals(conn: &Connection, search: &Search, side: Side) -> Result<u64> {
    let params = search.params();
    let sets = search
        .sets_sql(side)
        .ok_or_else(|| anyhow!("a totals count needs set conditions"))?;
    let stored = single(
        conn,
        &format!("SELECT sum(t.positions) FROM set_totals AS t WHERE t.set_id IN (\n{sets}\n)"),
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

/// Only bishop-pair conditions: `bishop_totals`, plus the unmerged tail.
fn from_bishop_totals(conn: &Connection, search: &Search) -> Result<u64> {
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

impl RunFilter {
    /// The matching plies in the runs of `games` (a lookup each in the key of `runs`).
    pub fn games(&self, conn: &Connection, games: &[i64]) -> Result<u64> {
        // One statement for all the games (a lookup each, in key order).
        let mut st = conn.prepare(
            "SELECT r.game_id, r.first_ply, r.last_ply, r.white_set, r.black_set, r.bishop_pairs,
                    r.structure
             FROM json_each(?1) AS c JOIN runs AS r ON r.game_id = c.value",
        )?;
        let mut rows = st.query([json_array(games)])?;
        let mut total = 0u64;
        while let Some(r) = rows.next()? {
            total += self.plies(r)?;
        }
        Ok(total)
    }

    /// The matching plies in the runs of games `from..=to`.
    pub fn range(&self, conn: &Connection, from: i64, to: i64) -> Result<u64> {
        let mut st = conn.prepare(
            "SELECT game_id, first_ply, last_ply, white_set, black_set, bishop_pairs, structure
             FROM runs WHERE game_id BETWEEN ?1 AND ?2",
        )?;
        let mut rows = st.query([from, to])?;
        let mut total = 0u64;
        while let Some(r) = rows.next()? {
            total += self.plies(r)?;
        }
        Ok(total)
    }
}

/// Everything a reader of runs checks per run.
pub struct RunFilter {
    white: Option<IdSet>,
    black: Option<IdSet>,
    games: Option<IdSet>,
    /// (mask, wanted) pairs on `bishop_pairs`.
    bishops: Vec<(i64, i64)>,
    /// The wanted `runs.structure` codes, ascending (`None`: any).
    structures: Option<Vec<i64>>,
    plies: (u32, u32),
}

fn filter(conn: &Connection, search: &Search, sets: &MatchingSets) -> Result<RunFilter> {
    let params = search.params();
    let side =
        |ids: &Option<Vec<i64>>| -> Option<IdSet> { ids.as_ref().map(|ids| IdSet::new(ids)) };
    let games = if search.games.is_empty() {
        None
    } else {
        let wheres: Vec<String> = search.games.iter().map(GameCond::sql).collect();
        Some(ids(
            conn,
            &format!("SELECT g.id FROM games AS g WHERE {}", wheres.join(" AND ")),
            &params,
        )?)
    };
    let filter = RunFilter {
        white: side(&sets.white),
        black: side(&sets.black),
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
        structures: if search.structures.is_empty() {
            None
        } else {
            Some(search.structure_codes(conn)?)
        },
        plies: search.plies,
    };
    Ok(filter)
}

impl RunFilter {
    /// The plies of a run row (`game_id, first_ply, last_ply, white_set, black_set,
    /// bishop_pairs, structure`) that match, 0 when it does not.
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
        if let Some(codes) = &self.structures
            && codes.binary_search(&r.get(6)?).is_err()
        {
            return Ok(0);
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

#[cfg(test)]
mod tests {
    use super::IdSet;

    #[test]
    fn id_sets_hold_wild_ids_without_sizing_by_them() {
        let ids = [3, 64, 1 << 26, (1 << 31) - 1, 1 << 40, i64::MAX, -5];
        let set = IdSet::new(&ids);
        for id in ids {
            assert!(set.contains(id), "{id}");
        }
        for id in [0, 4, 65, (1 << 26) + 1, 1 << 41, i64::MIN] {
            assert!(!set.contains(id), "{id}");
        }
        // A bit per id up to 64 per id plus 2^26: 8 MiB and a little, not 2^40 bits.
        assert!(set.words.len() <= (ids.len() * 64 + (1 << 26)) / 64 + 1);
    }
}
