//! The ranking of `pawndex similar`: the distinct structures (White pawn set, Black pawn set) of a database
//! ranked by their distance to a target (see [`crate::model::similar`]), with what differs, their
//! positions, games and White's score.
//!
//! How it stays fast: the distance is a White part plus a Black part (for each form of the
//! target the options allow), so each side's distinct pawn sets are ranked on their own; a pair
//! can be within a distance `D` only if each of its sets is within `D` minus the other side's
//! best part. For a growing `D`, the games that reach a candidate set of both sides come from
//! `set_games` (plus the unmerged tail), and only those games' runs are read; the pairs within
//! `D` are counted there. Every pair within `D` has then been seen, so once `--limit` pairs are
//! within `D` (or `D` reaches `--max-distance`, or no pair can be farther than `D`), the
//! ranking is exact. Every set being a candidate is not enough: two candidate sets can still
//! make a pair farther than `D`.

use std::collections::{BTreeMap, HashMap};

use anyhow::Result;

use crate::engine::parallel;
use crate::engine::similar_sets::{SideSets, rank_all};
use crate::model::similar::{self, Options, PartTable, Pawns, Similar, Variant};
use crate::store::read::Snapshot;
use crate::store::read::similar as db;

/// Counts of one (White set, Black set) pair.
#[derive(Default, Clone, Copy)]
struct Tally {
    distance: u32,
    positions: u64,
    games: u64,
    points: u64,
    scored: u64,
    last_game: i64,
}

impl Tally {
    /// Adds the counts of another part of the games (disjoint from this one's).
    fn merge(&mut self, other: &Tally) {
        self.distance = other.distance;
        self.positions += other.positions;
        self.games += other.games;
        self.points += other.points;
        self.scored += other.scored;
    }
}

/// The pairs within a bound and their counts.
type Tallies = HashMap<(i64, i64), Tally>;

/// White's points for a result tag (a win 2, a draw 1), `None` for no result: how `similar`
/// and the explorer's exact counts score a game.
pub fn points(result: Option<&str>) -> Option<u64> {
    match result {
        Some("1-0") => Some(2),
        Some("1/2-1/2") => Some(1),
        Some("0-1") => Some(0),
        _ => None,
    }
}

/// A game's runs as the tally needs them: White's points and (White set, Black set, plies).
type GameRuns = (Option<u64>, Vec<(i64, i64, u32)>);

/// Reads the runs of `games`, game by game.
fn read_games(conn: &Snapshot, games: &[i64]) -> Result<Vec<(i64, GameRuns)>> {
    let mut reader = db::Reader::new(conn)?;
    let mut runs = Vec::new();
    let mut out = Vec::with_capacity(games.len());
    for &game in games {
        let result = reader.runs_of(game, &mut runs)?;
        let compact = runs
            .iter()
            .map(|r| {
                let plies = u32::try_from(r.last_ply - r.first_ply + 1).unwrap_or(0);
                (r.white_set, r.black_set, plies)
            })
            .collect();
        out.push((game, (points(result.as_deref()), compact)));
    }
    Ok(out)
}

/// Runs `work` on each part of `items` (one part per connection) at once, the first part on
/// the caller's connection; the results in part order.
fn in_parallel<I: Sync, T: Send>(
    conn: &Snapshot,
    extra: &mut [Snapshot],
    items: &[I],
    work: impl Fn(&Snapshot, &[I]) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let n = extra.len() + 1;
    let size = items.len().div_ceil(n).max(1);
    let mut parts = items.chunks(size);
    let first = parts.next().unwrap_or(&[]);
    let work = &work;
    let (rest, head) = parallel::join(
        || parallel::fan_out(extra.iter_mut().zip(parts), |(c, part)| work(c, part)),
        || work(conn, first),
    );
    let mut out = vec![head?];
    out.extend(rest?);
    Ok(out)
}

/// What `pawndex similar` asks: the target, the options of the distance, and which structures
/// to keep (at most `limit`, within `max_distance`, reached in at least `min_games` games).
#[derive(Clone, Copy, Debug)]
pub struct Request {
    pub target: Pawns,
    pub options: Options,
    pub limit: usize,
    pub max_distance: Option<u32>,
    pub min_games: u64,
}

/// The ranked structures for a target (the command's work, without the output). The reads
/// run on `threads` connections at once: `conn` and more taken from it ([`Snapshot::fork`],
/// under its limit). They read only rows that never change once written (pawn sets, the runs
/// of the games `conn`'s snapshot holds), so their possibly later snapshots agree with
/// `conn`'s.
pub fn rank(conn: &Snapshot, threads: usize, request: Request) -> Result<Vec<Similar>> {
    let mut extra = Vec::new();
    for _ in 1..threads {
        extra.push(conn.fork()?);
    }
    let mut r = Ranker::new(conn, extra, request)?;
    r.find_closest()?;
    let (Some(&(min_w, _)), Some(&(min_b, _))) = (r.white.ranked.first(), r.black.ranked.first())
    else {
        return Ok(Vec::new());
    };
    let tail = db::tail_games(conn)?;
    let game_count = db::game_count(conn)?;
    let cap = request.max_distance.unwrap_or(u32::MAX);
    // The sets of each side that can be in a pair within a bound, with their least parts
    // (made known first).
    let radii = |bound: u32| [bound.saturating_sub(min_b), bound.saturating_sub(min_w)];
    // From the closest possible pair up, in steps of a quarter (at least 2): the last round
    // costs the most, and the rounds before it at most about as much together.
    let mut bound = (min_w + min_b).min(cap);
    // The runs of the games read so far (a wider bound's games include a narrower one's).
    let mut read: HashMap<i64, GameRuns> = HashMap::new();
    // Once every set of both sides is known: a distance no pair exceeds (for any one form, the
    // largest White part plus the largest Black part). Every set being a candidate is not
    // enough to stop: a pair's two parts may each be within their radius and add up to more
    // than the bound (and its least parts may come from different forms).
    let mut top: Option<u32> = None;
    loop {
        let [rw, rb] = radii(bound);
        r.know([rw, rb])?;
        if top.is_none() && r.knows_every_set() {
            top = Some(r.largest_distance());
        }
        let (cand_w, cand_b) = (r.white.within(rw), r.black.within(rb));
        let everything = r.knows_every_set()
            && cand_w.len() == r.white.ranked.len()
            && cand_b.len() == r.black.ranked.len();
        let games = r.candidate_games(&cand_w, &cand_b, bound, &tail)?;
        let tallies = if db::scan_is_cheaper(games.len(), game_count) {
            // A pass costs about the same for a wider bound: take one, rather than pass again.
            bound = bound.saturating_add(8).min(cap);
            r.tally_by_scan(radii(bound), bound)?
        } else {
            r.tally_by_lists(&games, &mut read, bound)?
        };
        let found = tallies
            .values()
            .filter(|t| t.games >= request.min_games)
            .count();
        r.trace(format_args!(
            "runs read: {} pairs within the bound, {found} with enough games",
            tallies.len()
        ));
        // Every pair within the bound has been counted: the first `limit` of them are the
        // ranking's once there are that many, or once no pair can be farther.
        if found >= request.limit || bound >= cap || top.is_some_and(|t| bound >= t) {
            return Ok(r.finish(tallies));
        }
        // Not enough yet: widen (when every set is already a candidate, a wider bound adds
        // only games and pairs: take at once the one that holds every pair).
        bound = match top {
            Some(t) if everything => t,
            _ => bound.saturating_add((bound / 4).max(2)),
        }
        .min(cap);
    }
}

/// The state of one ranking: the connections, the target's forms and their part tables, and
/// each side's known sets.
struct Ranker<'c> {
    conn: &'c Snapshot,
    extra: Vec<Snapshot>,
    request: Request,
    /// Per side, the bitboard of each form of the target, and its part table.
    targets: [Vec<u64>; 2],
    tables: [Vec<PartTable>; 2],
    white: SideSets,
    black: SideSets,
    /// `PAWNDEX_SIMILAR_TRACE`: when the ranking started.
    trace: Option<std::time::Instant>,
}

impl<'c> Ranker<'c> {
    fn new(conn: &'c Snapshot, extra: Vec<Snapshot>, request: Request) -> Result<Self> {
        let variants: Vec<Variant> = request.options.variants();
        let forms: Vec<Pawns> = variants.iter().map(|v| v.apply(request.target)).collect();
        let targets = [
            forms.iter().map(|f| f.white).collect::<Vec<u64>>(),
            forms.iter().map(|f| f.black).collect::<Vec<u64>>(),
        ];
        let tables = targets.clone().map(|t| {
            t.iter()
                .map(|&bb| PartTable::new(bb, request.options.ignore_wings))
                .collect::<Vec<PartTable>>()
        });
        // A slot per pawn-set id: the ids are checked against the rows first (a wild id in the
        // file must not size the tables).
        let size = crate::store::read::ids::pawn_set_table(conn)?;
        Ok(Ranker {
            conn,
            extra,
            request,
            targets,
            tables,
            white: SideSets::new(0, size),
            black: SideSets::new(1, size),
            trace: std::env::var_os("PAWNDEX_SIMILAR_TRACE").map(|_| std::time::Instant::now()),
        })
    }

    fn trace(&self, what: std::fmt::Arguments<'_>) {
        if let Some(start) = self.trace {
            eprintln!("similar: {:?} {what}", start.elapsed());
        }
    }

    /// The number of forms of the target.
    fn forms(&self) -> usize {
        self.targets[0].len()
    }

    fn knows_every_set(&self) -> bool {
        self.white.known == Some(u32::MAX) && self.black.known == Some(u32::MAX)
    }

    /// A distance no pair exceeds, once every set is known.
    fn largest_distance(&self) -> u32 {
        let n = self.forms();
        let (lw, lb) = (self.white.largest_parts(n), self.black.largest_parts(n));
        (0..n.min(4)).map(|k| lw[k] + lb[k]).min().unwrap_or(0)
    }

    /// Makes every set within the radii known on each side: the few bitboards that can be are
    /// looked up, or, when they are too many, every pawn set is read.
    fn know(&mut self, radii: [u32; 2]) -> Result<()> {
        if self.white.known == Some(u32::MAX) {
            return Ok(());
        }
        let wings = self.request.options.ignore_wings;
        // PAWNDEX_PLAN=scan reads every set (and every run), for tests.
        let forced =
            crate::store::read::forced_plan() == Some(crate::store::read::ForcedPlan::Scan);
        if !forced
            && self.white.look_up(
                self.conn,
                radii[0],
                &self.targets[0],
                &self.tables[0],
                wings,
            )?
            && self.black.look_up(
                self.conn,
                radii[1],
                &self.targets[1],
                &self.tables[1],
                wings,
            )?
        {
            return Ok(());
        }
        rank_all(
            self.conn,
            &mut self.extra,
            &mut self.white,
            &mut self.black,
            &self.tables,
        )
    }

    /// Each side's closest set: radii 0, 1, 2, 4, … until one is found.
    fn find_closest(&mut self) -> Result<()> {
        let mut radius = 0;
        while (self.white.ranked.is_empty() || self.black.ranked.is_empty())
            && self.white.known != Some(u32::MAX)
        {
            self.know([radius; 2])?;
            radius = (radius * 2).max(1);
        }
        self.trace(format_args!(
            "closest sets found ({} readers; sets known within {:?} and {:?})",
            self.extra.len() + 1,
            self.white.known,
            self.black.known
        ));
        Ok(())
    }

    /// The games that can hold a pair within `bound`: those that reach a candidate set of each
    /// side whose two least parts add up to at most the bound (from the game lists), and the
    /// unmerged tail.
    fn candidate_games(
        &self,
        cand_w: &[(u32, i64)],
        cand_b: &[(u32, i64)],
        bound: u32,
        tail: &[i64],
    ) -> Result<Vec<i64>> {
        let mut reader = db::Reader::new(self.conn)?;
        // The games of a side's candidate sets, each with the least part of the sets it reaches.
        let mut side_games = |sets: &[(u32, i64)]| -> Result<Vec<(i64, u32)>> {
            let mut out = Vec::new();
            let mut games = Vec::new();
            for &(part, id) in sets {
                games.clear();
                reader.games_of(id, &mut games)?;
                out.extend(games.iter().map(|&g| (g, part)));
            }
            out.sort_unstable();
            out.dedup_by_key(|e| e.0);
            Ok(out)
        };
        let games_w = side_games(cand_w)?;
        let games_b = side_games(cand_b)?;
        let mut games: Vec<i64> = Vec::new();
        let mut j = 0;
        for &(g, pw) in &games_w {
            while j < games_b.len() && games_b[j].0 < g {
                j += 1;
            }
            if j < games_b.len() && games_b[j].0 == g && pw + games_b[j].1 <= bound {
                games.push(g);
            }
        }
        games.extend(tail);
        games.sort_unstable();
        games.dedup();
        self.trace(format_args!(
            "bound {bound}: {} White and {} Black candidate sets, {} games",
            cand_w.len(),
            cand_b.len(),
            games.len()
        ));
        Ok(games)
    }

    /// Most games can hold a close structure: one pass over every run (each connection a range
    /// of games) costs less than a lookup per game. Counts the pairs within `bound` (`radii`
    /// its radii).
    fn tally_by_scan(&mut self, radii: [u32; 2], bound: u32) -> Result<Tallies> {
        let results: Vec<(i64, Option<u64>)> = db::results(self.conn)?
            .into_iter()
            .map(|(g, r)| (g, points(r.as_deref())))
            .collect();
        self.know(radii)?;
        let n = self.forms();
        let (white, black) = (&self.white, &self.black);
        let distance_of = |w: i64, b: i64| pair_distance(white, black, n, w, b);
        let ids = |sets: &[(u32, i64)]| sets.iter().map(|s| s.1).collect::<Vec<i64>>();
        let (cand_w, cand_b) = (ids(&white.within(radii[0])), ids(&black.within(radii[1])));
        let lo = results.first().map_or(0, |r| r.0);
        let hi = results.last().map_or(-1, |r| r.0);
        let ranges = parallel::split(lo, hi, self.extra.len() + 1);
        let parts = in_parallel(self.conn, &mut self.extra, &ranges, |c, ranges| {
            let mut tallies = Tallies::new();
            for &range in ranges {
                let mut current = (i64::MIN, None);
                db::scan_runs(c, range, &cand_w, &cand_b, |game, r| {
                    if current.0 != game {
                        let p = results
                            .binary_search_by_key(&game, |r| r.0)
                            .ok()
                            .and_then(|i| results[i].1);
                        current = (game, p);
                    }
                    let plies = u32::try_from(r.last_ply - r.first_ply + 1).unwrap_or(0);
                    let run = (r.white_set, r.black_set, plies);
                    tally(&mut tallies, game, current.1, run, bound, &distance_of);
                })?;
            }
            Ok(tallies)
        })?;
        let mut tallies = Tallies::new();
        for part in parts {
            for (pair, t) in part {
                tallies.entry(pair).or_default().merge(&t);
            }
        }
        Ok(tallies)
    }

    /// Few games can hold a close structure: their runs are read by game (the ones not read
    /// for a narrower bound), and the pairs within `bound` counted.
    fn tally_by_lists(
        &mut self,
        games: &[i64],
        read: &mut HashMap<i64, GameRuns>,
        bound: u32,
    ) -> Result<Tallies> {
        let new: Vec<i64> = games
            .iter()
            .copied()
            .filter(|g| !read.contains_key(g))
            .collect();
        for part in in_parallel(self.conn, &mut self.extra, &new, read_games)? {
            read.extend(part);
        }
        let n = self.forms();
        let distance_of = |w: i64, b: i64| pair_distance(&self.white, &self.black, n, w, b);
        let mut tallies = Tallies::new();
        for &game in games {
            if let Some((p, runs)) = read.get(&game) {
                for &run in runs {
                    tally(&mut tallies, game, *p, run, bound, &distance_of);
                }
            }
        }
        Ok(tallies)
    }

    /// The ranking: the pairs with enough games, closest first (then most games, then by
    /// pawns), at most `limit`, each with what differs from the target.
    fn finish(&self, tallies: Tallies) -> Vec<Similar> {
        let Request {
            target,
            options,
            limit,
            min_games,
            ..
        } = self.request;
        let mut out: Vec<Similar> = tallies
            .into_iter()
            .filter(|(_, t)| t.games >= min_games)
            .map(|((w, b), t)| Similar {
                pawns: Pawns {
                    white: self.white.get(w).map_or(0, |e| e.0),
                    black: self.black.get(b).map_or(0, |e| e.0),
                },
                sets: (w, b),
                distance: t.distance,
                differs: String::new(),
                positions: t.positions,
                games: t.games,
                points: t.points,
                scored: t.scored,
            })
            .collect();
        out.sort_by(|a, b| {
            let key = |s: &Similar| {
                (
                    s.distance,
                    std::cmp::Reverse(s.games),
                    s.pawns.white,
                    s.pawns.black,
                )
            };
            key(a).cmp(&key(b))
        });
        out.truncate(limit);
        for s in &mut out {
            s.differs = similar::explain(s.pawns, target, options);
        }
        out
    }
}

/// The distance of a pair of sets (the least over the target's forms of the two parts),
/// `None` when a set is not known (beyond the radius: farther than any bound asked).
fn pair_distance(white: &SideSets, black: &SideSets, forms: usize, w: i64, b: i64) -> Option<u32> {
    let (_, pw) = white.get(w)?;
    let (_, pb) = black.get(b)?;
    (0..forms)
        .map(|k| u32::from(pw[k]) + u32::from(pb[k]))
        .min()
}

/// Counts one run (White set, Black set, plies) of `game` if its pair is within `bound`.
fn tally(
    tallies: &mut Tallies,
    game: i64,
    points: Option<u64>,
    (w, b, plies): (i64, i64, u32),
    bound: u32,
    distance_of: &impl Fn(i64, i64) -> Option<u32>,
) {
    let Some(d) = distance_of(w, b) else {
        return;
    };
    if d > bound {
        return;
    }
    let t = tallies.entry((w, b)).or_default();
    t.distance = d;
    t.positions += u64::from(plies);
    if t.games == 0 || t.last_game != game {
        t.games += 1;
        t.last_game = game;
        if let Some(p) = points {
            t.points += p;
            t.scored += 1;
        }
    }
}

/// One listed game: where it first reaches its closest listed structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListedGame {
    pub game: i64,
    pub ply: i64,
    pub distance: u32,
    /// Index of the structure in the ranked list.
    pub structure: usize,
}

/// The games of the ranked structures `found` (closest first, then by id, at most `limit`),
/// with the runs of every listed structure in them (by game and first ply).
pub fn listed_games(
    conn: &Snapshot,
    found: &[Similar],
    limit: Option<u64>,
) -> Result<(Vec<ListedGame>, Vec<db::PairRun>)> {
    let pairs: Vec<(i64, i64)> = found.iter().map(|s| s.sets).collect();
    let runs = db::pair_runs(conn, &pairs)?;
    // Per game, the least (distance, first ply, structure).
    let mut best: BTreeMap<i64, (u32, i64, usize)> = BTreeMap::new();
    for r in &runs {
        let key = (found[r.pair].distance, r.first_ply, r.pair);
        best.entry(r.game)
            .and_modify(|b| *b = (*b).min(key))
            .or_insert(key);
    }
    let mut games: Vec<ListedGame> = best
        .into_iter()
        .map(|(game, (distance, ply, structure))| ListedGame {
            game,
            ply,
            distance,
            structure,
        })
        .collect();
    games.sort_by_key(|g| (g.distance, g.game));
    if let Some(n) = limit {
        games.truncate(usize::try_from(n).unwrap_or(usize::MAX));
    }
    Ok((games, runs))
}
