//! Grouping: the runs of one slice of the games added to their groups ([`Aggregator`]), the
//! slices run in parallel and merged ([`group_runs`]); and the first pass of `--top` over
//! whole structures, which only counts units per structure ([`StructureCounter`]).

use std::collections::{HashMap, HashSet};

use anyhow::Result;

use super::games::{GameInfo, Games, from_changes, scan_changes};
use super::keys::{Interner, StructureKeys};
use super::plan::{Part, Per, Plan};
use super::{Bounds, StatsDb};
use crate::engine::parallel;
use crate::model::columns::{self, Column, OPENING_LAST_PLY, Phase};
use crate::model::hash::IntMap;
use crate::model::outcome::Outcome;
use crate::model::tally::{Group, Totals};
use crate::store::read::Interrupter;
use crate::store::read::stats::{PositionsScan, RunRow};

/// Structure key, game key, run key (numbered per slice).
type Key = (u64, u32, u32);
/// Structure key, game key, run values: the same in every slice.
type FullKey = (u64, u32, Vec<i64>);

#[derive(Clone, Default)]
struct Acc {
    totals: Totals,
    last_game: Option<i64>,
}

/// Groups the runs of one slice of the games.
pub(super) struct Aggregator<'a> {
    bounds: Bounds<'a>,
    /// Stops the slice's scan (more groups than the bounds allow, or `stop`).
    interrupt: Option<Interrupter>,
    end: Option<Grouped>,
    seen: u32,
    plan: &'a Plan,
    structures: &'a StructureKeys,
    games: &'a Games,
    index: IntMap<Key, u32>,
    groups: Vec<(Key, Acc)>,
    run_keys: Interner<i64>,
    values: Vec<i64>,
    last: Option<(Key, u32)>,
}

impl<'a> Aggregator<'a> {
    pub(super) fn new(
        plan: &'a Plan,
        structures: &'a StructureKeys,
        games: &'a Games,
        bounds: Bounds<'a>,
        interrupt: Option<Interrupter>,
    ) -> Self {
        Aggregator {
            bounds,
            interrupt,
            end: None,
            seen: 0,
            plan,
            structures,
            games,
            index: IntMap::default(),
            groups: Vec::new(),
            run_keys: Interner::new(),
            values: Vec::with_capacity(plan.run_columns.len()),
            last: None,
        }
    }

    /// Ends the slice's grouping: the scan is interrupted and its runs are passed over.
    fn end(&mut self, why: Grouped) {
        self.end = Some(why);
        if let Some(h) = &self.interrupt {
            h.interrupt();
        }
    }

    pub(super) fn add_run(&mut self, run: &RunRow) {
        if self.end.is_some() {
            return;
        }
        self.seen = self.seen.wrapping_add(1);
        if self.seen.is_multiple_of(4096) && (self.bounds.stop)() {
            self.end(Grouped::Stopped);
            return;
        }
        let Some(game) = self.games.get(run.game_id) else {
            return;
        };
        let game = *game;
        let Some(s) = self.structures.key(run.white_set, run.black_set) else {
            return;
        };
        let lo = run.first_ply.max(self.plan.plies.first);
        let hi = run.last_ply.min(self.plan.plies.last);
        if lo > hi {
            return;
        }
        if self.plan.run_columns.is_empty() {
            self.add((s, game.key, 0), u64::from(hi - lo + 1), run.game_id, &game);
            return;
        }
        let pieceset = (4_294_967_295 - run.missing) as u32;
        let masks = &self.games.masks[game.masks as usize];
        let cuts = self.plan.cuts;
        let endgame = cuts.opening && masks.is_endgame(pieceset);
        let mut a = lo;
        while a <= hi {
            let mut b = hi;
            if cuts.every_ply {
                b = a;
            }
            if cuts.buckets {
                b = b.min(a / 10 * 10 + 9);
            }
            if cuts.opening && !endgame && a <= OPENING_LAST_PLY {
                b = b.min(OPENING_LAST_PLY);
            }
            self.values.clear();
            for c in &self.plan.run_columns {
                self.values.push(match c {
                    Column::BishopPair(columns::Side::White) => run.bishop_pairs & 1,
                    Column::BishopPair(columns::Side::Black) => run.bishop_pairs >> 1,
                    Column::Pieceset => i64::from(pieceset),
                    Column::Ply => i64::from(a),
                    Column::PlyBucket => columns::ply_bucket(a),
                    Column::Phase => Phase::of(a, pieceset, masks) as i64,
                    Column::Structure => run.structure,
                    Column::StructureReversed => run.structure & 1,
                    _ => unreachable!("not a run column: {c:?}"),
                });
            }
            let r = self.run_keys.id(&self.values);
            self.add((s, game.key, r), u64::from(b - a + 1), run.game_id, &game);
            a = b + 1;
        }
    }

    #[inline]
    fn add(&mut self, key: Key, weight: u64, game_id: i64, game: &GameInfo) {
        let index = match self.last {
            Some((k, i)) if k == key => i,
            _ => {
                let next = self.groups.len() as u32;
                if self.groups.len() >= self.bounds.max_groups && !self.index.contains_key(&key) {
                    self.end(Grouped::TooMany);
                    return;
                }
                let i = *self.index.entry(key).or_insert(next);
                if i == next {
                    self.groups.push((key, Acc::default()));
                }
                self.last = Some((key, i));
                i
            }
        };
        let acc = &mut self.groups[index as usize].1;
        let t = &mut acc.totals;
        t.positions += weight;
        let first_time = acc.last_game != Some(game_id);
        if first_time {
            acc.last_game = Some(game_id);
            t.games += 1;
        }
        let units = match self.plan.per {
            Per::Position => weight,
            Per::Game if first_time => 1,
            Per::Game => return,
        };
        match game.outcome {
            Outcome::WhiteWins => t.white_wins += units,
            Outcome::Draw => t.draws += units,
            Outcome::BlackWins => t.black_wins += units,
            Outcome::Unknown => {}
        }
        if let Some(e) = game.white_elo {
            t.white_elo_sum += i128::from(e) * i128::from(units);
            t.white_elo_units += units;
        }
        if let Some(e) = game.black_elo {
            t.black_elo_sum += i128::from(e) * i128::from(units);
            t.black_elo_units += units;
        }
    }

    /// The groups with their run values spelled out (run keys are numbered per slice).
    pub(super) fn finish(self) -> Vec<(FullKey, Totals)> {
        let tuples = self.run_keys.tuples;
        self.groups
            .into_iter()
            .map(|((s, g, r), acc)| {
                let run = tuples.get(r as usize).cloned().unwrap_or_default();
                ((s, g, run), acc.totals)
            })
            .collect()
    }
}

/// Counts units per structure key (first pass of `--top` over whole structures).
pub(super) struct StructureCounter {
    per: Per,
    units: HashMap<u64, (u64, i64)>,
}

impl StructureCounter {
    pub(super) fn new(per: Per) -> Self {
        StructureCounter {
            per,
            units: HashMap::new(),
        }
    }

    pub(super) fn add_run(
        &mut self,
        plan: &Plan,
        keys: &StructureKeys,
        games: &Games,
        run: &RunRow,
    ) {
        if games.get(run.game_id).is_none() {
            return;
        }
        let Some(key) = keys.key(run.white_set, run.black_set) else {
            return;
        };
        let lo = run.first_ply.max(plan.plies.first);
        let hi = run.last_ply.min(plan.plies.last);
        if lo > hi {
            return;
        }
        let (units, last_game) = self.units.entry(key).or_insert((0, i64::MIN));
        match self.per {
            Per::Position => *units += u64::from(hi - lo + 1),
            Per::Game => {
                if *last_game != run.game_id {
                    *last_game = run.game_id;
                    *units += 1;
                }
            }
        }
    }

    /// Adds another slice's counts (slices hold different games).
    pub(super) fn merge(mut self, o: StructureCounter) -> StructureCounter {
        for (k, (u, _)) in o.units {
            self.units.entry(k).or_insert((0, i64::MIN)).0 += u;
        }
        self
    }

    /// Keys that can be among the `n` with the most units (ties included).
    pub(super) fn candidates(&self, n: usize) -> HashSet<u64> {
        let mut counts: Vec<u64> = self
            .units
            .values()
            .map(|&(u, _)| u)
            .filter(|&u| u > 0)
            .collect();
        if n == 0 || counts.is_empty() {
            return HashSet::new();
        }
        let threshold = if counts.len() <= n {
            1
        } else {
            let k = counts.len() - n;
            *counts.select_nth_unstable(k).1
        };
        self.units
            .iter()
            .filter(|&(_, &(u, _))| u >= threshold && u > 0)
            .map(|(&k, _)| k)
            .collect()
    }
}

/// Streams the runs of games `first..=last` that pass the position filters, in game order.
pub(super) fn scan_positions(
    db: &StatsDb,
    plan: &Plan,
    slice: (i64, i64),
    visit: impl FnMut(&RunRow),
) -> Result<()> {
    let scan = PositionsScan {
        columns: plan.scan_columns,
        plies: plan.plies,
        joins: plan.joins,
        filters: &plan.position_filters,
    };
    db.positions(&scan, slice, visit)
}

/// What the grouping ended with.
pub(super) enum Grouped {
    Groups(Vec<Group>),
    /// More groups than the bounds allow (they were not all built).
    TooMany,
    /// Stopped by the bounds' `stop`.
    Stopped,
}

/// Groups the runs of every slice of games in parallel, merges the slices' groups and turns
/// each key into the cells of the requested columns; within `bounds`.
pub(super) fn group_runs(
    plan: &Plan,
    structures: &StructureKeys,
    games: &Games,
    parts: &[(i64, i64)],
    connect: &(dyn Fn() -> Result<StatsDb> + Sync),
    bounds: Bounds<'_>,
) -> Result<Grouped> {
    let changes = from_changes(plan);
    let per_slice = parallel::fan_out(parts.iter().copied(), |slice| {
        let db = connect()?;
        let interrupt = Some(db.interrupter());
        let mut agg = Aggregator::new(plan, structures, games, bounds, interrupt);
        let scanned = if changes {
            scan_changes(&db, games, slice, |run| agg.add_run(run))
        } else {
            scan_positions(&db, plan, slice, |run| agg.add_run(run))
        };
        // A slice ended by the bounds says why (its scan failed as interrupted).
        if let Some(end) = agg.end.take() {
            return Ok(Err(end));
        }
        scanned?;
        Ok(Ok(agg.finish()))
    })?;
    let mut merged: HashMap<FullKey, Totals> = HashMap::new();
    for groups in per_slice {
        let groups = match groups {
            Ok(g) => g,
            Err(end) => return Ok(end),
        };
        for (key, totals) in groups {
            if (bounds.stop)() {
                return Ok(Grouped::Stopped);
            }
            merged.entry(key).or_default().merge(&totals);
            if merged.len() > bounds.max_groups {
                return Ok(Grouped::TooMany);
            }
        }
    }
    Ok(Grouped::Groups(
        merged
            .into_iter()
            .map(|((s, g, r), totals)| {
                let values = structures.values(plan, s);
                let keys = plan
                    .parts
                    .iter()
                    .map(|part| match *part {
                        Part::Structure(i) => values[i].clone(),
                        Part::Game(i) => games.tuples[g as usize][i].clone(),
                        Part::Run(i) => plan.run_cell(i, r[i]),
                    })
                    .collect();
                Group { keys, totals }
            })
            .collect(),
    ))
}
