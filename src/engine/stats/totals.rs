//! Shortcuts through the per-set aggregates (`set_totals`, `set_games`): a count by one side's
//! pawns alone without reading the runs ([`from_set_totals`]), and the pawn sets `--top` over
//! whole structures groups first ([`top_sets`]).

use std::collections::HashMap;

use anyhow::Result;

use super::StatsDb;
use super::plan::{Per, Plan, source_index};
use crate::model::columns::{Cell, Column, Level, Side};
use crate::model::tally::{Group, PlyRange, Query, Totals};
use crate::store::{SetAggregate, TAIL_MAX_GAMES};

/// Groups of pawn sets: the group key, its totals and its sets.
type SetGroups = HashMap<Vec<i64>, (Totals, Vec<i64>)>;

/// The tail's aggregates by pawn set.
type Tail = HashMap<i64, SetAggregate>;

/// The groups of a per-position count by columns of one side's pawns only, with no filter, ply
/// range or rating floor, from the per-set aggregates (`set_totals`) and the per-set game lists
/// (`set_games`) instead of every run. `None` when that does not apply (or the database is
/// unfinished, when the aggregates do not cover every game).
pub(super) fn from_set_totals(db: &StatsDb, q: &Query) -> Result<Option<Vec<Group>>> {
    let Some(side) = one_side_only(q) else {
        return Ok(None);
    };
    db.in_snapshot(|| {
        let lag = db.lag()?;
        // The games above `derived.through` (the unmerged tail) are added set by set; a long
        // unfinished stretch is left to the scan.
        if lag.pending() > TAIL_MAX_GAMES {
            return Ok(None);
        }
        let mut tail = Tail::new();
        if lag.pending() > 0 {
            for a in db.tail_sets(lag.through)? {
                tail.insert(i64::from(a.set), a);
            }
        }
        let mut groups = group_sets(db, q, side, &tail)?;
        // A group of several sets: its games are the union of their lists (a game reaching two
        // of them counts once). Only for few such groups: each needs a bit set of all games
        // (sized by the largest game id once it is checked against the games).
        let shared = groups.values().filter(|(_, sets)| sets.len() > 1).count();
        if shared > 16 {
            return Ok(None);
        }
        if shared > 0 {
            count_shared_games(db, lag.last_game, &tail, &mut groups)?;
        }
        Ok(Some(
            groups
                .into_iter()
                .filter(|(_, (t, _))| t.positions > 0)
                .map(|(key, (totals, _))| Group {
                    keys: key.into_iter().map(Cell::Int).collect(),
                    totals,
                })
                .collect(),
        ))
    })
}

/// The side whose pawns alone a request groups by, when the aggregates can answer it.
fn one_side_only(q: &Query) -> Option<Side> {
    if q.per != Per::Position
        || !q.filters.is_empty()
        || q.plies != PlyRange::ALL
        || q.min_elo.is_some()
        || q.by.is_empty()
    {
        return None;
    }
    let side = q.by[0].side()?;
    let one_side = q
        .by
        .iter()
        .all(|c| c.level() == Level::Structure && c.side() == Some(side) && *c != Column::PawnFen);
    one_side.then_some(side)
}

/// Each set's group key, from its raw columns, and the groups' stored totals plus the tail's.
fn group_sets(db: &StatsDb, q: &Query, side: Side, tail: &Tail) -> Result<SetGroups> {
    let mut raw_names: Vec<String> = Vec::new();
    let index: Vec<Vec<usize>> =
        q.by.iter()
            .map(|&c| source_index(&mut raw_names, c))
            .collect();
    let mut groups = SetGroups::new();
    let mut sources = Vec::with_capacity(2);
    db.set_totals(side, &raw_names, |set, raw, stored| {
        let key: Vec<i64> =
            q.by.iter()
                .zip(&index)
                .map(|(c, ix)| {
                    sources.clear();
                    sources.extend(ix.iter().map(|&i| raw[i]));
                    c.structure_int(&sources)
                })
                .collect();
        let extra = tail.get(&set).map(|a| &a.totals);
        // The stored totals (none for a set only the tail reaches) plus the tail's.
        let v = |i: usize| stored[i].unwrap_or(0) + extra.map_or(0, |t| t[i]);
        if v(0) == 0 {
            return;
        }
        let (t, sets) = groups.entry(key).or_default();
        let add = |x: i64| u64::try_from(x).unwrap_or(0);
        t.positions += add(v(0));
        t.games += add(v(1));
        t.white_wins += add(v(2));
        t.draws += add(v(3));
        t.black_wins += add(v(4));
        t.white_elo_sum += i128::from(v(5));
        t.white_elo_units += add(v(6));
        t.black_elo_sum += i128::from(v(7));
        t.black_elo_units += add(v(8));
        sets.push(set);
    })?;
    Ok(groups)
}

/// The games of each group of several sets: the union of their game lists.
fn count_shared_games(
    db: &StatsDb,
    last_game: i64,
    tail: &Tail,
    groups: &mut SetGroups,
) -> Result<()> {
    let words = db.game_table_size(last_game)? / 64 + 1;
    for (t, sets) in groups.values_mut().filter(|(_, sets)| sets.len() > 1) {
        let mut seen = vec![0u64; words];
        let mut games = 0u64;
        for &set in sets.iter() {
            let tail_games = tail.get(&set).map_or(&[][..], |a| &a.games[..]);
            let stored = db.set_games(set)?;
            for g in stored
                .into_iter()
                .chain(tail_games.iter().map(|&g| i64::from(g)))
            {
                let Some(w) = usize::try_from(g / 64).ok().and_then(|i| seen.get_mut(i)) else {
                    continue;
                };
                let bit = 1u64 << (g % 64);
                if *w & bit == 0 {
                    *w |= bit;
                    games += 1;
                }
            }
        }
        t.games = games;
    }
    Ok(())
}

/// Pawn sets per side that `--top n` over whole structures needs to group first: those with
/// at least `floor` units in `set_totals`, `floor` chosen so that about 512 sets of each side
/// qualify (the unmerged tail added). `None` when more than 50,000 games are outside the
/// aggregates (an unfinished database), or with `PAWNDEX_PLAN=scan`.
pub(super) fn top_sets(
    db: &StatsDb,
    plan: &Plan,
    n: usize,
    max_set: i64,
) -> Result<Option<(u64, [Vec<u64>; 2])>> {
    const SETS_PER_SIDE: usize = 512;
    // PAWNDEX_PLAN=scan: the counting pass instead (for tests and measurements).
    let lag = db.lag()?;
    if crate::store::read::forced_plan() == Some(crate::store::read::ForcedPlan::Scan)
        || lag.pending() > TAIL_MAX_GAMES
        || n == 0
        || n > SETS_PER_SIDE / 4
    {
        return Ok(None);
    }
    // Ids come from the file: a wild one sizes nothing here (the key load refuses it).
    let Some(size) = usize::try_from(max_set)
        .ok()
        .filter(|&m| m <= (u32::MAX >> 2) as usize)
    else {
        return Ok(None);
    };
    let per_game = plan.per == Per::Game;
    let through = (lag.pending() > 0).then_some(lag.through);
    let units_of = units_per_set(db, per_game, size, through)?;
    let mut units: [Vec<(u64, usize)>; 2] = [Vec::new(), Vec::new()];
    db.set_sides(|id, side| {
        if let (Ok(id), Ok(side)) = (usize::try_from(id), usize::try_from(side))
            && let Some(&u) = units_of.get(id)
            && side < 2
            && u > 0
        {
            units[side].push((u, id));
        }
    })?;
    let mut floor = 1u64;
    for side in &mut units {
        if side.len() > SETS_PER_SIDE {
            side.select_nth_unstable_by(SETS_PER_SIDE - 1, |a, b| b.0.cmp(&a.0));
            floor = floor.max(side[SETS_PER_SIDE - 1].0);
        }
    }
    let mut bits = [vec![0u64; size / 64 + 1], vec![0u64; size / 64 + 1]];
    for (side, list) in units.iter().enumerate() {
        for &(u, id) in list {
            if u >= floor {
                bits[side][id / 64] |= 1 << (id % 64);
            }
        }
    }
    Ok(Some((floor, bits)))
}

/// Units per set id up to `size`: the stored ones (`set_totals`) plus, with `tail_through`,
/// those of the unmerged tail above it. Two plain scans, with [`StatsDb::set_sides`] after
/// (a join would look up 850k rows one by one).
fn units_per_set(
    db: &StatsDb,
    per_game: bool,
    size: usize,
    tail_through: Option<i64>,
) -> Result<Vec<u64>> {
    let mut units_of = vec![0u64; size + 1];
    let mut add = |id: i64, u: i64| {
        if let (Ok(id), Ok(u)) = (usize::try_from(id), u64::try_from(u))
            && let Some(slot) = units_of.get_mut(id)
        {
            *slot = slot.saturating_add(u);
        }
    };
    if let Some(through) = tail_through {
        for a in db.tail_sets(through)? {
            add(i64::from(a.set), a.totals[usize::from(per_game)]);
        }
    }
    db.set_units(per_game, &mut add)?;
    Ok(units_of)
}
