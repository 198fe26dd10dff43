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

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OptionalExtension, params};

use super::bulk_tree;
use crate::model::outcome::Outcome;

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
/// from its first game to the last stored game).
pub fn finish_run(conn: &Connection, merge_all: bool, collected: Option<Pairs>) -> Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let work = || -> Result<()> {
        let lag = lag(conn)?;
        // First: a first derivation writes pages last (see `write_fresh_pages`).
        conn.execute("UPDATE derived SET finished = ?1", [lag.last_game])?;
        if lag.pending() > 0 && (merge_all || merge_due(lag)) {
            derive_range(conn, lag, collected)?;
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

/// One (pawn set, game) pair of the games being derived, with what the totals need.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Pair {
    set: u32,
    game: u32,
    plies: u32,
    /// 0 White wins, 1 draw, 2 Black wins, 3 none.
    outcome: u8,
    /// 0: no rating.
    white_elo: u16,
    black_elo: u16,
}

const PAIR_BYTES: usize = 17;

impl Pair {
    /// The sort key: (set, game) is unique among the pairs of one merge.
    fn key(&self) -> u64 {
        (u64::from(self.set) << 32) | u64::from(self.game)
    }

    fn write(&self, out: &mut impl Write) -> std::io::Result<()> {
        let mut b = [0u8; PAIR_BYTES];
        b[0..4].copy_from_slice(&self.set.to_le_bytes());
        b[4..8].copy_from_slice(&self.game.to_le_bytes());
        b[8..12].copy_from_slice(&self.plies.to_le_bytes());
        b[12] = self.outcome;
        b[13..15].copy_from_slice(&self.white_elo.to_le_bytes());
        b[15..17].copy_from_slice(&self.black_elo.to_le_bytes());
        out.write_all(&b)
    }

    fn read(input: &mut impl Read) -> std::io::Result<Option<Pair>> {
        let mut b = [0u8; PAIR_BYTES];
        match input.read_exact(&mut b) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        }
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        Ok(Some(Pair {
            set: u32_at(0),
            game: u32_at(4),
            plies: u32_at(8),
            outcome: b[12],
            white_elo: u16::from_le_bytes([b[13], b[14]]),
            black_elo: u16::from_le_bytes([b[15], b[16]]),
        }))
    }
}

/// Sorted sources merged by a scan of their heads, not a heap, below this many files.
const LINEAR_MERGE_MAX: usize = 8;

/// Pairs kept in memory before a sorted chunk goes to a temporary file (20 bytes each). Two
/// chunks take turns (one fills while the other is sorted and written), so this is 80 MiB.
/// (Chunks of 6 Mi pairs, a new one for each spill: the four masters shards took 3-8% longer,
/// with a peak of 362-378 MiB against 318-330, the kernel zeroing each new chunk's pages.)
const PAIRS_IN_MEMORY: usize = 2 << 20;

/// Sorts pairs by (set, game) in bounded memory: sorted chunks spill to temporary files (sorted
/// and written by a background thread while pairs keep coming, one chunk at a time) and are
/// merged at the end with the last chunk, which stays in memory.
struct PairSorter {
    /// Pairs per chunk ([`PAIRS_IN_MEMORY`]; smaller in tests).
    limit: usize,
    chunk: Vec<Pair>,
    spills: Vec<std::fs::File>,
    spilling: Option<std::thread::JoinHandle<Result<Spilled>>>,
}

/// A chunk written to its temporary file, and the chunk's buffer, emptied.
type Spilled = (std::fs::File, Vec<Pair>);

/// Sorts a chunk and writes it to a temporary file, rewound; the chunk comes back empty, for
/// the chunk after next.
fn write_sorted(mut chunk: Vec<Pair>) -> Result<Spilled> {
    chunk.sort_unstable_by_key(Pair::key);
    let mut file = tempfile::tempfile().context("creating a temporary sort file")?;
    {
        let mut out = BufWriter::with_capacity(1 << 20, &mut file);
        for p in &chunk {
            p.write(&mut out)?;
        }
        out.flush()?;
    }
    file.seek(SeekFrom::Start(0))?;
    chunk.clear();
    Ok((file, chunk))
}

impl PairSorter {
    fn new() -> PairSorter {
        PairSorter::with_limit(PAIRS_IN_MEMORY)
    }

    fn with_limit(limit: usize) -> PairSorter {
        let limit = limit.max(1);
        PairSorter {
            limit,
            // All of it at once: grown by doubling, the chunk would be copied (and its new
            // pages faulted in) seven times on its way to the limit. Then it takes turns with
            // the one spilled (see `PAIRS_IN_MEMORY`). (With chunks of 6 Mi pairs, a third,
            // spare chunk cost 120 MB more at the peak, 1,012 MiB for 4 million games against
            // 884.)
            chunk: Vec::with_capacity(limit),
            spills: Vec::new(),
            spilling: None,
        }
    }

    fn push(&mut self, p: Pair) -> Result<()> {
        self.chunk.push(p);
        if self.chunk.len() >= self.limit {
            self.spill()?;
        }
        Ok(())
    }

    /// Waits for the chunk being spilled, if any; that chunk, emptied.
    fn join_spill(&mut self) -> Result<Option<Vec<Pair>>> {
        let Some(h) = self.spilling.take() else {
            return Ok(None);
        };
        let (file, chunk) = h
            .join()
            .map_err(|_| anyhow::anyhow!("the sort thread failed"))??;
        self.spills.push(file);
        Ok(Some(chunk))
    }

    fn spill(&mut self) -> Result<()> {
        let next = match self.join_spill()? {
            Some(chunk) => chunk,
            None => Vec::with_capacity(self.limit),
        };
        let chunk = std::mem::replace(&mut self.chunk, next);
        self.spilling = Some(
            std::thread::Builder::new()
                .name("sort".into())
                .spawn(move || write_sorted(chunk))?,
        );
        Ok(())
    }

    /// Every pair in (set, game) order.
    fn finish(mut self, mut visit: impl FnMut(Pair) -> Result<()>) -> Result<()> {
        use rayon::slice::ParallelSliceMut;
        drop(self.join_spill()?);
        let mut last = std::mem::take(&mut self.chunk);
        last.par_sort_unstable_by_key(Pair::key);
        if self.spills.is_empty() {
            for p in last {
                visit(p)?;
            }
            return Ok(());
        }
        // 1 MiB of read buffer per file, and 64 MiB in all (4 million games spill some 70).
        let buffer = ((64 << 20) / self.spills.len()).clamp(64 << 10, 1 << 20);
        let mut readers: Vec<BufReader<std::fs::File>> = self
            .spills
            .into_iter()
            .map(|f| BufReader::with_capacity(buffer, f))
            .collect();
        // Sources 0..readers.len() are the files, the last one the chunk in memory.
        let readers_count = readers.len();
        let mut memory = last.into_iter();
        let mut next = |i: usize| -> Result<Option<Pair>> {
            Ok(match readers.get_mut(i) {
                Some(r) => Pair::read(r)?,
                None => memory.next(),
            })
        };
        if readers_count < LINEAR_MERGE_MAX {
            // Few sources (a first load of the masters has three): the smallest of their heads
            // by a scan, cheaper than a heap's moves of each pair.
            let mut heads: Vec<Option<Pair>> = Vec::with_capacity(readers_count + 1);
            for i in 0..=readers_count {
                heads.push(next(i)?);
            }
            loop {
                let mut min: Option<(u64, usize)> = None;
                for (i, h) in heads.iter().enumerate() {
                    if let Some(p) = h
                        && min.is_none_or(|(k, _)| p.key() < k)
                    {
                        min = Some((p.key(), i));
                    }
                }
                let Some((_, i)) = min else {
                    return Ok(());
                };
                let p = std::mem::replace(&mut heads[i], next(i)?);
                visit(p.expect("the smallest head is a pair"))?;
            }
        }
        let mut heap = BinaryHeap::new();
        for i in 0..=readers_count {
            if let Some(p) = next(i)? {
                heap.push(Reverse((p.key(), i, p)));
            }
        }
        while let Some(Reverse((_, i, p))) = heap.pop() {
            visit(p)?;
            if let Some(p) = next(i)? {
                heap.push(Reverse((p.key(), i, p)));
            }
        }
        Ok(())
    }
}

/// Appends an unsigned LEB128 varint.
fn push_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// The game ids of a `set_games.games` list (LEB128 varints of the differences, the first
/// from 0). A damaged list ends where it stops making sense (an unterminated or oversized
/// varint, an id past `i64::MAX`), never with a panic.
#[must_use]
pub fn decode_games(blob: &[u8]) -> Vec<i64> {
    let mut out = Vec::with_capacity(blob.len().min(1 << 20));
    let (mut value, mut shift, mut last) = (0u64, 0u32, 0u64);
    for &b in blob {
        if shift > 63 {
            break;
        }
        value |= u64::from(b & 0x7F) << shift;
        if b & 0x80 != 0 {
            shift += 7;
            continue;
        }
        let Some(id) = last.checked_add(value).filter(|&id| id <= i64::MAX as u64) else {
            break;
        };
        out.push(id as i64);
        last = id;
        value = 0;
        shift = 0;
    }
    out
}

/// The columns of `set_totals` after `set_id`, in the order of [`Totals`].
pub(in crate::store) const TOTALS_COLUMNS: [&str; 9] = [
    "positions",
    "games",
    "white_wins",
    "draws",
    "black_wins",
    "white_elo_sum",
    "white_elo_positions",
    "black_elo_sum",
    "black_elo_positions",
];

/// Totals of one set being merged: positions, games, white wins, draws, black wins, white elo
/// sum, white elo positions, black elo sum, black elo positions.
pub type Totals = [i64; 9];

/// Collects the (set, game) pairs of games given one after the other, run by run in ply
/// order, and their positions by bishop-pair state. The writer feeds it the games it stores
/// (so that a fresh load builds the derived tables without reading its runs back); [`pairs`]
/// feeds it runs read from the database.
pub struct PairCollector {
    sorter: PairSorter,
    bishops: [i64; 4],
    /// Per side, the set being followed in the current game (a pawn set occupies one stretch
    /// of a game: a new set id on a side is a new pair).
    current: [Option<Pair>; 2],
    game: u32,
    outcome: u8,
    white_elo: u16,
    black_elo: u16,
    /// The first game fed, if any.
    first_game: Option<i64>,
}

impl PairCollector {
    #[must_use]
    pub fn new() -> PairCollector {
        PairCollector {
            sorter: PairSorter::new(),
            bishops: [0; 4],
            current: [None, None],
            game: 0,
            outcome: 3,
            white_elo: 0,
            black_elo: 0,
            first_game: None,
        }
    }

    fn flush_current(&mut self) -> Result<()> {
        for side in 0..2 {
            if let Some(p) = self.current[side].take() {
                self.sorter.push(p)?;
            }
        }
        Ok(())
    }

    /// Starts a game: its id, result text and ratings as stored in `games`.
    pub fn start_game(
        &mut self,
        id: i64,
        result: Option<&str>,
        white_elo: Option<i64>,
        black_elo: Option<i64>,
    ) -> Result<()> {
        self.flush_current()?;
        let Ok(game) = u32::try_from(id) else {
            bail!("game id {id} is out of range (the database is damaged; run `pawndex check`)");
        };
        let elo = |v: Option<i64>| v.map_or(0, |e| e.clamp(1, i64::from(u16::MAX)) as u16);
        self.game = game;
        self.outcome = Outcome::parse(result).index() as u8;
        self.white_elo = elo(white_elo);
        self.black_elo = elo(black_elo);
        self.first_game.get_or_insert(id);
        Ok(())
    }

    /// Adds a run of the current game.
    pub fn add_run(
        &mut self,
        white_set: i64,
        black_set: i64,
        plies: i64,
        bishop_pairs: i64,
    ) -> Result<()> {
        let plies = u32::try_from(plies.max(0)).unwrap_or(u32::MAX);
        self.bishops[(bishop_pairs & 3) as usize] += i64::from(plies);
        for (side, set) in [white_set, black_set].into_iter().enumerate() {
            let Ok(set) = u32::try_from(set) else {
                bail!(
                    "a run of game {} names pawn set {set}: ids out of range (the database is \
                     damaged; run `pawndex check`)",
                    self.game
                );
            };
            match &mut self.current[side] {
                Some(p) if p.set == set => p.plies = p.plies.saturating_add(plies),
                c => {
                    if let Some(p) = c.take() {
                        self.sorter.push(p)?;
                    }
                    *c = Some(Pair {
                        set,
                        game: self.game,
                        plies,
                        outcome: self.outcome,
                        white_elo: self.white_elo,
                        black_elo: self.black_elo,
                    });
                }
            }
        }
        Ok(())
    }

    /// The first game fed, if any.
    #[must_use]
    pub fn first_game(&self) -> Option<i64> {
        self.first_game
    }

    fn finish(mut self) -> Result<(PairSorter, [i64; 4])> {
        self.flush_current()?;
        Ok((self.sorter, self.bishops))
    }
}

impl Default for PairCollector {
    fn default() -> Self {
        PairCollector::new()
    }
}

/// Feeds `collector` the runs of the games in `from..=to` from the database, in game order.
fn pairs(conn: &Connection, collector: &mut PairCollector, from: i64, to: i64) -> Result<()> {
    if from > to {
        return Ok(());
    }
    let mut st = conn.prepare(
        "SELECT g.id, g.result, g.white_elo, g.black_elo, r.white_set, r.black_set,
                r.last_ply - r.first_ply + 1, r.bishop_pairs
         FROM games AS g JOIN runs AS r ON r.game_id = g.id
         WHERE g.id BETWEEN ?1 AND ?2
         ORDER BY g.id, r.first_ply",
    )?;
    let mut rows = st.query([from, to])?;
    let mut game = None;
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        if game != Some(id) {
            collector.start_game(
                id,
                r.get_ref(1)?.as_str_or_null()?,
                r.get::<_, Option<i64>>(2).ok().flatten(),
                r.get::<_, Option<i64>>(3).ok().flatten(),
            )?;
            game = Some(id);
        }
        collector.add_run(r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?)?;
    }
    Ok(())
}

/// What some games give one pawn set: its totals and its games, ascending.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetAggregate {
    pub set: u32,
    /// Positions, games, White wins, draws, Black wins (positions of games with that result),
    /// White Elo sum and positions with a White Elo, the same for Black: the columns of
    /// `set_totals` after `set_id`.
    pub totals: Totals,
    pub games: Vec<u32>,
}

/// Visits the pairs of a sorter set by set, each with what its games give it.
fn fold_sets(sorter: PairSorter, mut visit: impl FnMut(&SetAggregate) -> Result<()>) -> Result<()> {
    let mut cur: Option<SetAggregate> = None;
    sorter.finish(|p| {
        if cur.as_ref().is_some_and(|c| c.set != p.set)
            && let Some(c) = cur.take()
        {
            visit(&c)?;
        }
        let c = cur.get_or_insert_with(|| SetAggregate {
            set: p.set,
            ..SetAggregate::default()
        });
        c.games.push(p.game);
        let plies = i64::from(p.plies);
        let t = &mut c.totals;
        t[0] += plies;
        t[1] += 1;
        if p.outcome < 3 {
            t[2 + usize::from(p.outcome)] += plies;
        }
        if p.white_elo > 0 {
            t[5] += i64::from(p.white_elo) * plies;
            t[6] += plies;
        }
        if p.black_elo > 0 {
            t[7] += i64::from(p.black_elo) * plies;
            t[8] += plies;
        }
        Ok(())
    })?;
    if let Some(c) = &cur {
        visit(c)?;
    }
    Ok(())
}

/// What the games above `through` (the unmerged tail, and any unfinished games) give each
/// pawn set, in set order: what readers add to `set_totals` and `set_games`. Its size follows
/// those games; callers read it only for a tail of at most [`TAIL_MAX_GAMES`] games.
pub fn tail_sets(conn: &Connection, through: i64) -> Result<Vec<SetAggregate>> {
    let mut collector = PairCollector::new();
    pairs(conn, &mut collector, through.saturating_add(1), i64::MAX)?;
    let (sorter, _) = collector.finish()?;
    let mut out = Vec::new();
    fold_sets(sorter, |a| {
        out.push(a.clone());
        Ok(())
    })?;
    Ok(out)
}

/// Merges the games above `lag.through` into the derived tables. `collected` holds the pairs
/// of the games this run stored (from its first game to the last); the games before it are
/// read from the database.
fn derive_range(conn: &Connection, lag: Lag, collected: Option<Pairs>) -> Result<()> {
    let start = std::time::Instant::now();
    let mut collector = match collected {
        Some(Pairs::Folding(fold)) => return derive_folded(conn, lag, fold, start),
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
    // In set order: each set's new games appended to its list, its totals added.
    let append = lag.through > 0;
    if !append {
        if let Some(roots) = fresh_roots(conn)? {
            // Nothing derived yet and `sqlite_dbpage` at hand: the pages of both tables laid
            // out in set order (see `bulk_tree`), after every row SQLite writes here.
            conn.execute("UPDATE derived SET through = ?1", [lag.last_game])?;
            write_fresh_pages(conn, sorter, roots)?;
            report_derive(start, read);
            return Ok(());
        }
        // Nothing derived yet: every set's rows are new, written many to a statement.
        let mut fresh = FreshRows::default();
        fold_sets(sorter, |a| {
            fresh.add(conn, a)?;
            Ok(())
        })?;
        fresh.flush(conn, true)?;
        return finish_derive(conn, lag, start, read);
    }
    let mut stored_last = conn.prepare("SELECT last_game FROM set_games WHERE set_id = ?1")?;
    let mut insert =
        conn.prepare("INSERT INTO set_games (set_id, last_game, games) VALUES (?1, ?2, ?3)")?;
    let mut extend = conn.prepare(
        "UPDATE set_games SET last_game = ?2, games = CAST(games || ?3 AS BLOB) WHERE set_id = ?1",
    )?;
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
    let mut list = Vec::new();
    fold_sets(sorter, |a| {
        // The new part of the list, encoded from the set's stored last game.
        let stored: Option<i64> = stored_last.query_row([a.set], |r| r.get(0)).optional()?;
        list.clear();
        let last = encode_games(&a.games, stored.map_or(0, |v| v.max(0) as u64), &mut list);
        if stored.is_some() {
            extend.execute(params![a.set, last as i64, list])?;
        } else {
            insert.execute(params![a.set, last as i64, list])?;
        }
        let t = &a.totals;
        upsert.execute(params![
            a.set, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8]
        ])?;
        Ok(())
    })?;
    finish_derive(conn, lag, start, read)
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

/// The pairs of the games a run stored, for [`finish_run`]: as collected, or already being
/// folded ([`fold_early`]).
pub enum Pairs {
    Collected(PairCollector),
    Folding(EarlyFold),
}

/// Sets folded ahead of the pages, at most (in batches of [`FRESH_BATCH`]): some tens of MB.
const EARLY_BATCHES: usize = 512;

/// The fold of a first derivation, started before the run's last commit: the merge of the
/// sorted pairs runs on its own thread while the writer sorts and lays out its key indexes
/// and commits (a third of a second of the masters' finish, with the second core idle), and
/// the sets wait in a channel for their pages.
pub struct EarlyFold {
    bishops: [i64; 4],
    folding: Folding,
}

/// The sorted pairs being folded on their own thread ([`fold_fresh`]), and the channel of the
/// sets it makes, in set order.
struct Folding {
    sets: crossbeam_channel::Receiver<Vec<FreshSet>>,
    thread: std::thread::JoinHandle<Result<()>>,
}

impl Folding {
    /// Starts the fold; at most `batches` batches wait in the channel.
    fn start(sorter: PairSorter, batches: usize) -> Result<Folding> {
        let (tx, sets) = crossbeam_channel::bounded(batches);
        let thread = std::thread::Builder::new()
            .name("fold".into())
            .spawn(move || fold_fresh(sorter, &tx))?;
        Ok(Folding { sets, thread })
    }
}

/// Starts folding the pairs of `collector` when the run's derivation will lay out fresh pages
/// from them alone: nothing derived yet (`derived.through` is 0), the pairs of every stored
/// game collected (from game 1), and both derived tables empty and open to laid-out pages.
/// Else leaves `collector` as it is.
pub fn fold_early(conn: &Connection, collector: &mut PairCollector) -> Result<Option<EarlyFold>> {
    let through: i64 = conn.query_row("SELECT through FROM derived", [], |r| r.get(0))?;
    if through != 0 || collector.first_game() != Some(1) || fresh_roots(conn)?.is_none() {
        return Ok(None);
    }
    let (sorter, bishops) = std::mem::take(collector).finish()?;
    Ok(Some(EarlyFold {
        bishops,
        folding: Folding::start(sorter, EARLY_BATCHES)?,
    }))
}

/// [`derive_range`] of the pairs an [`EarlyFold`] is folding: a first derivation's pages.
fn derive_folded(
    conn: &Connection,
    lag: Lag,
    fold: EarlyFold,
    start: std::time::Instant,
) -> Result<()> {
    let roots = fresh_roots(conn)?;
    let roots = match roots {
        Some(r) if lag.through == 0 => r,
        // `fold_early` checked both in the same write transaction's lock.
        _ => bail!("the derived tables changed while the run held the database"),
    };
    add_bishop_totals(conn, &fold.bishops)?;
    conn.execute("UPDATE derived SET through = ?1", [lag.last_game])?;
    lay_out_fresh(conn, fold.folding, roots)?;
    report_derive(start, std::time::Duration::ZERO);
    Ok(())
}

/// The root pages of `set_games` and `set_totals` if both can take laid-out pages (see
/// [`bulk_tree::bulk_root`]).
fn fresh_roots(conn: &Connection) -> Result<Option<(u32, u32)>> {
    if !bulk_tree::bulk_wanted() {
        return Ok(None);
    }
    let lists = bulk_tree::bulk_root(conn, "set_games", &["set_id", "last_game", "games"])?;
    let mut columns = vec!["set_id"];
    columns.extend(TOTALS_COLUMNS);
    let totals = bulk_tree::bulk_root(conn, "set_totals", &columns)?;
    Ok(lists.zip(totals))
}

/// Closed pages kept before they are written, at most (both tables).
const FRESH_PAGES_IN_MEMORY: usize = 16 << 20;

/// Writes `set_games` and `set_totals` of a first derivation as pages (roots `roots`): the
/// connection's transaction must write nothing after.
fn write_fresh_pages(conn: &Connection, sorter: PairSorter, roots: (u32, u32)) -> Result<()> {
    // Two stages on two threads: the merge of the sorted pairs, folded set by set into its
    // games list and totals, feeds the pages (the second core idled through this step).
    lay_out_fresh(conn, Folding::start(sorter, 4)?, roots)
}

/// Folds the sorted pairs set by set into its games list and totals, sent in batches. A
/// closed channel means the pages failed (they say why).
fn fold_fresh(sorter: PairSorter, tx: &crossbeam_channel::Sender<Vec<FreshSet>>) -> Result<()> {
    let send = |batch| {
        tx.send(batch)
            .map_err(|_| anyhow::anyhow!("the pages stopped"))
    };
    let mut batch = Vec::with_capacity(FRESH_BATCH);
    fold_sets(sorter, |a| {
        let mut list = Vec::new();
        let last = encode_games(&a.games, 0, &mut list);
        batch.push(FreshSet {
            set: a.set,
            last,
            list,
            totals: a.totals,
        });
        if batch.len() == FRESH_BATCH {
            send(std::mem::replace(
                &mut batch,
                Vec::with_capacity(FRESH_BATCH),
            ))?;
        }
        Ok(())
    })?;
    if !batch.is_empty() {
        send(batch)?;
    }
    Ok(())
}

/// Lays out the pages of `set_games` and `set_totals` (roots `roots`) from the sets that
/// `folding` sends: the connection's transaction must write nothing after.
fn lay_out_fresh(conn: &Connection, folding: Folding, roots: (u32, u32)) -> Result<()> {
    let Folding { sets, thread } = folding;
    let mut lists = bulk_tree::Tree::table(conn, roots.0)?;
    let mut totals = bulk_tree::Tree::table(conn, roots.1)?;
    let mut w = bulk_tree::PageWriter::begin(conn)?;
    let mut record = bulk_tree::Record::default();
    let written = sets.iter().flatten().try_for_each(|f| -> Result<()> {
        // The rowid alias (`set_id`) is NULL in the record.
        let row = record
            .start()
            .null()
            .int(f.last as i64)
            .blob(&f.list)
            .bytes();
        lists.add_row(i64::from(f.set), row)?;
        let rec = record.start().null();
        for &v in &f.totals {
            rec.int(v);
        }
        totals.add_row(i64::from(f.set), rec.bytes())?;
        if lists.closed_bytes() + totals.closed_bytes() > FRESH_PAGES_IN_MEMORY {
            lists.write_closed(&mut w)?;
            totals.write_closed(&mut w)?;
        }
        Ok(())
    });
    drop(sets);
    let folded = thread
        .join()
        .map_err(|_| anyhow::anyhow!("the thread folding the pairs failed"))?;
    // The pages' own error first: the fold then only stopped because of it.
    written?;
    folded?;
    lists.write(&mut w)?;
    totals.write(&mut w)?;
    w.end()
}

/// Sets handed from the fold to the pages at a time.
const FRESH_BATCH: usize = 1024;

/// One set's `set_games` list (LEB128 differences, and its last game) and `set_totals` row.
struct FreshSet {
    set: u32,
    last: u64,
    list: Vec<u8>,
    totals: Totals,
}

/// Appends `games` (ascending) to a `set_games` list whose last game is `from`, as LEB128
/// differences; the new last game.
fn encode_games(games: &[u32], from: u64, list: &mut Vec<u8>) -> u64 {
    let mut last = from;
    for &game in games {
        push_varint(list, u64::from(game).saturating_sub(last));
        last = u64::from(game);
    }
    last
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

/// The rows of `set_games` and `set_totals` for sets that have none yet, written through
/// multi-row statements: one statement per set and table cost about 4,000 instructions each,
/// most of the derived tables' time on a first load.
#[derive(Default)]
struct FreshRows {
    /// `set_games` rows: set, last game, the list.
    lists: Vec<(i64, i64, Vec<u8>)>,
    totals: Vec<[i64; 10]>,
}

impl FreshRows {
    fn add(&mut self, conn: &Connection, a: &SetAggregate) -> Result<()> {
        let mut list = Vec::new();
        let last = encode_games(&a.games, 0, &mut list);
        self.lists.push((i64::from(a.set), last as i64, list));
        let t = &a.totals;
        self.totals.push([
            i64::from(a.set),
            t[0],
            t[1],
            t[2],
            t[3],
            t[4],
            t[5],
            t[6],
            t[7],
            t[8],
        ]);
        if self.lists.len() >= 4 * super::writer::ROWS_PER_INSERT {
            self.flush(conn, false)?;
        }
        Ok(())
    }

    /// Writes whole multi-row chunks only, or everything when `all`.
    fn flush(&mut self, conn: &Connection, all: bool) -> Result<()> {
        let per = super::writer::ROWS_PER_INSERT;
        let n = if all {
            self.lists.len()
        } else {
            self.lists.len() - self.lists.len() % per
        };
        for chunk in self.lists[..n].chunks(per) {
            let mut st = conn.prepare_cached(&super::writer::multi_row_insert(
                "set_games (set_id, last_game, games)",
                3,
                chunk.len(),
            ))?;
            for (i, (set, last, list)) in chunk.iter().enumerate() {
                st.raw_bind_parameter(3 * i + 1, set)?;
                st.raw_bind_parameter(3 * i + 2, last)?;
                st.raw_bind_parameter(3 * i + 3, list)?;
            }
            st.raw_execute()?;
        }
        self.lists.drain(..n);
        super::writer::insert_rows(conn, "set_totals", &self.totals[..n])?;
        self.totals.drain(..n);
        Ok(())
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

    #[test]
    fn game_lists_decode_and_stop_at_damage() {
        assert_eq!(decode_games(&[3, 1, 0x80, 0x01]), vec![3, 4, 132]);
        assert_eq!(decode_games(&[0xFF]), Vec::<i64>::new());
    }

    /// Pairs come out in (set, game) order, every one once, whether they stay in memory or
    /// spill to several files (sorted in the background) and merge with the last chunk.
    #[test]
    fn the_sorter_orders_pairs_through_spills() {
        // Spills: 50 and 15 (merged by a heap), 8, 7 and 5 (by a scan), 1, none.
        for limit in [100, 333, 600, 700, 1000, 4999, 1 << 20] {
            let mut sorter = PairSorter::with_limit(limit);
            let mut x = 0x2545_F491_4F6C_DD1Du64;
            let mut want = Vec::new();
            for game in 0..5_000u32 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let p = Pair {
                    set: (x % 300) as u32,
                    game,
                    plies: (x >> 20) as u32 % 50,
                    outcome: (x >> 40) as u8 % 4,
                    white_elo: (x >> 44) as u16,
                    black_elo: 7,
                };
                want.push(p);
                sorter.push(p).unwrap();
            }
            want.sort_unstable_by_key(Pair::key);
            let mut got = Vec::new();
            sorter
                .finish(|p| {
                    got.push(p);
                    Ok(())
                })
                .unwrap();
            assert_eq!(got, want, "limit {limit}");
        }
    }
}
