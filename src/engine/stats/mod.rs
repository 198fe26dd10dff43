//! Grouping and counting: a structure scan and a game scan fill lookup tables, then one scan of
//! `positions` streams the runs in game order and adds each run (or each piece of a run cut at
//! ply-bucket and opening boundaries) to its group (or, when only the named structure of the
//! runs is needed, the stretches between a game's changes of structure). Memory holds the
//! lookup tables (a few bytes per structure and per game) and one record per group, never the
//! positions.
//!
//! The reads are [`crate::store::read::stats`]'s; here: the plan of a request ([`plan`]), the key
//! tables of pawn sets ([`keys`]) and games ([`games`]), the grouping ([`aggregate`]) and the
//! shortcuts through the per-set aggregates ([`totals`]).

mod aggregate;
mod games;
mod keys;
mod plan;
pub mod request;
mod totals;

use std::time::Instant;

use anyhow::Result;

pub use crate::model::tally::{Group, PlyRange, Query};
pub use crate::store::read::stats::StatsDb;

use crate::engine::parallel;
use crate::model::numbers::thousands;
use aggregate::{StructureCounter, group_runs, scan_positions};
use games::Games;
use keys::StructureKeys;
use plan::Plan;
use totals::{from_set_totals, top_sets};

/// Opens another read-only connection to the same database.
pub type Connect<'a> = &'a (dyn Fn() -> Result<StatsDb> + Sync);

/// The most groups `pawndex stats` builds by default (`--max-groups`; each takes a few hundred
/// bytes while it is counted: about 0.6 GB): more is refused with the reason (exit status 2).
pub const MAX_GROUPS_COMMAND: usize = 1_000_000;

/// What one request may spend: at most `max_groups` groups (more is refused with the reason,
/// before they are all built), and it stops as soon as `stop` says so (the server's deadline, a
/// client gone), checked between runs in the grouping loops, not only inside SQLite.
#[derive(Clone, Copy)]
pub struct Bounds<'a> {
    pub max_groups: usize,
    pub stop: &'a (dyn Fn() -> bool + Sync),
}

/// The refusal of a request that makes more than `max` groups.
fn too_many_groups(q: &Query, max: usize) -> anyhow::Error {
    let by: Vec<String> = q.by.iter().map(|c| c.name()).collect();
    crate::model::bad_value(
        "--by",
        by.join(","),
        format!(
            "these columns make more than {} groups, and a request may make at most that many \
             (each is counted in memory): group by fewer or coarser columns, or narrow the \
             positions down",
            thousands(max as u64)
        ),
    )
}

/// The error of work stopped by [`Bounds::stop`]: SQLite's "interrupted", as a statement
/// stopped by the same limit fails (the server answers both alike).
fn stopped() -> anyhow::Error {
    crate::store::read::interrupted("stopped between runs")
}

/// Runs a statistics request. `connect` opens another read-only connection to the same
/// database (the scans run in `threads` parallel slices of the games), within `bounds`.
pub fn run(
    db: &StatsDb,
    connect: Connect<'_>,
    threads: usize,
    q: &Query,
    bounds: Bounds<'_>,
) -> Result<Vec<Group>> {
    let groups = run_within(db, connect, threads, q, bounds)?;
    if q.top.is_none() && groups.len() > bounds.max_groups {
        return Err(too_many_groups(q, bounds.max_groups));
    }
    Ok(groups)
}

fn run_within(
    db: &StatsDb,
    connect: Connect<'_>,
    threads: usize,
    q: &Query,
    bounds: Bounds<'_>,
) -> Result<Vec<Group>> {
    if let Some(groups) = from_set_totals(db, q)? {
        return Ok(finish_groups(groups, q));
    }
    let plan = Plan::new(db, q)?;
    // Every connection that runs a filter using `phase` needs its own temporary mask table.
    let connect_for = || -> Result<StatsDb> {
        let c = connect()?;
        if plan.joins.masks {
            c.fill_piece_masks()?;
        }
        Ok(c)
    };
    // The command's snapshot: the games and pawn sets stored now. Other connections read only
    // ids up to these (a concurrent `pawndex index` only appends, and a game's runs only name
    // sets stored with or before it).
    let snapshot = db.snapshot_ids()?;
    let t0 = Instant::now();
    let whole_structures = plan.structure_unique
        && plan.game_columns.is_empty()
        && plan.run_columns.is_empty()
        && q.top.is_some();
    // `--top` over whole structures: the pawn sets to group first (see [`narrow_to_top`]),
    // known before the pawn sets are read, so that only those get a key.
    let top_first = match (whole_structures, q.top) {
        (true, Some(n)) => top_sets(db, &plan, n, snapshot.max_set)?,
        _ => None,
    };
    timing("top sets", t0);
    let (games, structures) = parallel::join(
        || Games::load(&connect()?, &plan, snapshot.games),
        || {
            let only = top_first.as_ref().map(|(_, sets)| sets);
            StructureKeys::load(connect, &plan, threads, snapshot.max_set, only)
        },
    );
    let (mut structures, games) = (structures?, games?);
    timing("pawn sets and games loaded", t0);
    let scans = Scans {
        plan: &plan,
        games: &games,
        parts: parallel::split(games.first_id, games.last_id, threads),
        threads,
        max_set: snapshot.max_set,
        connect,
        connect_for: &connect_for,
        bounds,
        query: q,
    };
    if let (true, Some(n)) = (whole_structures, q.top)
        && let Some(groups) = narrow_to_top(&scans, &mut structures, top_first, n, q, t0)?
    {
        return Ok(groups);
    }
    let out = scans.group(&structures)?;
    Ok(finish_groups(out, q))
}

/// What the scans after the lookup tables share.
struct Scans<'a> {
    plan: &'a Plan,
    games: &'a Games,
    /// The slices of game ids, one per thread.
    parts: Vec<(i64, i64)>,
    threads: usize,
    max_set: i64,
    /// A plain connection (the pawn-set scans), and one for the positions scans.
    connect: Connect<'a>,
    connect_for: Connect<'a>,
    bounds: Bounds<'a>,
    query: &'a Query,
}

impl Scans<'_> {
    fn group(&self, structures: &StructureKeys) -> Result<Vec<Group>> {
        let out = group_runs(
            self.plan,
            structures,
            self.games,
            &self.parts,
            self.connect_for,
            self.bounds,
        )?;
        match out {
            aggregate::Grouped::Groups(groups) => Ok(groups),
            aggregate::Grouped::TooMany => Err(too_many_groups(self.query, self.bounds.max_groups)),
            aggregate::Grouped::Stopped => Err(stopped()),
        }
    }
}

/// `--top n` over whole structures, ranking millions of structures. A structure's units are at
/// most those of each of its two pawn sets (`set_totals`): first only the structures whose sets
/// both have at least `floor` units are grouped (`top_first`); when the n-th of them has at
/// least `floor` units, no other structure can reach it and the ranking is exact: its groups.
/// Else units are counted per structure first and `structures` keeps only those that can make
/// the top (`None`: group them).
fn narrow_to_top(
    scans: &Scans<'_>,
    structures: &mut StructureKeys,
    top_first: Option<(u64, [Vec<u64>; 2])>,
    n: usize,
    q: &Query,
    t0: Instant,
) -> Result<Option<Vec<Group>>> {
    let plan = scans.plan;
    if let Some((floor, sets)) = top_first {
        if let StructureKeys::Sides { keep_sets, .. } = structures {
            *keep_sets = Some(Box::new(sets));
        }
        let out = scans.group(structures)?;
        timing("runs of the top sets grouped", t0);
        let mut units: Vec<u64> = out.iter().map(|g| g.totals.units(q.per)).collect();
        units.sort_unstable_by(|a, b| b.cmp(a));
        if n > 0 && units.get(n - 1).is_some_and(|&u| u >= floor) {
            return Ok(Some(finish_groups(out, q)));
        }
        // Not exact: every pawn set's key is needed.
        timing("top sets not exact, counting every structure", t0);
        *structures = StructureKeys::load(scans.connect, plan, scans.threads, scans.max_set, None)?;
    }
    let keys: &StructureKeys = structures;
    let counters = parallel::fan_out(scans.parts.iter().copied(), |slice| {
        let db = (scans.connect_for)()?;
        let mut counter = StructureCounter::new(plan.per);
        scan_positions(&db, plan, slice, |run| {
            counter.add_run(plan, keys, scans.games, run);
        })?;
        Ok(counter)
    })?;
    let counter = counters
        .into_iter()
        .reduce(StructureCounter::merge)
        .unwrap_or_else(|| StructureCounter::new(plan.per));
    if let StructureKeys::Sides { keep, .. } = structures {
        *keep = Some(counter.candidates(n));
    }
    Ok(None)
}

/// With `PAWNDEX_TIMINGS` set: the time since `start` at a step, on stderr.
fn timing(step: &str, start: Instant) {
    if std::env::var_os("PAWNDEX_TIMINGS").is_some() {
        eprintln!("timings: {step}: {:.2} s", start.elapsed().as_secs_f64());
    }
}

/// Orders the groups by key, or keeps the `--top` ones.
fn finish_groups(mut out: Vec<Group>, q: &Query) -> Vec<Group> {
    match q.top {
        Some(n) => {
            out.sort_by(|a, b| {
                b.totals
                    .units(q.per)
                    .cmp(&a.totals.units(q.per))
                    .then_with(|| a.keys.cmp(&b.keys))
            });
            out.truncate(n);
        }
        None => out.sort_by(|a, b| a.keys.cmp(&b.keys)),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::keys::in_bits;
    use crate::store::read::stats::small;

    #[test]
    fn bit_lookups_never_panic_on_damaged_ids() {
        let bits = [0b1010u64, 1];
        assert!(in_bits(&bits, 1) && in_bits(&bits, 3) && in_bits(&bits, 64));
        assert!(!in_bits(&bits, 0) && !in_bits(&bits, 2) && !in_bits(&bits, 65));
        for id in [-1, 128, i64::MAX, i64::MIN] {
            assert!(!in_bits(&bits, id), "{id}");
        }
        assert_eq!(small(-5), 0);
        assert_eq!(small(7), 7);
        assert_eq!(small(i64::MAX), u32::MAX);
    }
}
