//! `runs`, streamed in key order with their game and both pawn sets: the game exists;
//! `0 <= first_ply <= last_ply <= plies`; per game the runs tile `0..=plies` exactly; both sets
//! exist on the right side; a pawn set holds one stretch of a game (pawn moves cannot be
//! undone); `bishop_pairs` in 0..=3 and `missing` in 0..=2^32-1.

use anyhow::Result;

use super::{Kind, Report, int, show};
use crate::store::read::Snapshot;
use crate::store::read::check::{self as read, Cell, Row};

/// Earlier pawn sets remembered per game and side for the one-stretch check.
const STRETCH_MEMORY: usize = 4096;

/// One side's pawn sets in the game being read: the current one and the earlier ones.
#[derive(Default)]
struct Stretches {
    current: Option<i64>,
    earlier: Vec<i64>,
}

/// The runs of the game being read.
struct GameRuns {
    id: i64,
    /// The game is in `games`.
    exists: bool,
    /// Its plies, when it exists and they are an integer.
    plies: Option<i64>,
    /// The ply the next run should start at (`None` after a run whose plies are unreadable).
    next: Option<i64>,
    first_run: bool,
    sets: [Stretches; 2],
}

impl GameRuns {
    fn new(id: i64, plies: Cell<'_>) -> GameRuns {
        GameRuns {
            id,
            exists: !matches!(plies, Cell::Null),
            plies: int(plies),
            next: Some(0),
            first_run: true,
            sets: Default::default(),
        }
    }

    /// Checks one run (a row of the query in [`runs`]).
    fn run(&mut self, r: &Row<'_, '_>, f: &mut Report) -> Result<()> {
        let id = self.id;
        let first_value = r.get(1)?;
        let last_value = r.get(2)?;
        let (Some(first), Some(last)) = (int(first_value), int(last_value)) else {
            let (a, b) = (show(first_value), show(last_value));
            f.problem(Kind::RunValues, || {
                format!("runs: game {id}: a run has first_ply {a} and last_ply {b}, not integers")
            });
            self.next = None;
            return Ok(());
        };
        let at = format!("runs: game {id} run at ply {first}");
        self.plies(f, &at, first, last);
        self.tiling(f, &at, first, last);
        for (side, name) in [(0usize, "white_set"), (1, "black_set")] {
            self.set(r, f, &at, side, name)?;
        }
        values(r, f, &at)
    }

    /// A run within its game's plies.
    fn plies(&self, f: &mut Report, at: &str, first: i64, last: i64) {
        if first < 0 {
            f.problem(Kind::RunPlies, || format!("{at}: first_ply is negative"));
        }
        if last < first {
            f.problem(Kind::RunPlies, || {
                format!("{at}: last_ply {last} < first_ply {first}")
            });
        } else if let Some(p) = self.plies
            && last > p
        {
            f.problem(Kind::RunPlies, || {
                format!("{at}: last_ply {last} is past the game's last ply ({p} plies)")
            });
        }
    }

    /// A run that starts where the one before it ended (at ply 0 for the first).
    fn tiling(&mut self, f: &mut Report, at: &str, first: i64, last: i64) {
        let id = self.id;
        if self.exists {
            match self.next {
                Some(0) if self.first_run && first != 0 => {
                    f.problem(Kind::RunTiling, || {
                        format!("runs: game {id}: the first run starts at ply {first}, not 0")
                    });
                }
                Some(n) if first > n => {
                    f.problem(Kind::RunTiling, || {
                        format!(
                            "runs: game {id}: {} in no run",
                            uncovered(n, first.saturating_sub(1))
                        )
                    });
                }
                Some(n) if first < n => {
                    f.problem(Kind::RunTiling, || {
                        format!(
                            "{at}: overlaps the run before it, which ends at ply {}",
                            n.saturating_sub(1)
                        )
                    });
                }
                _ => {}
            }
        }
        let ends = if last >= first {
            last.saturating_add(1)
        } else {
            first
        };
        self.next = Some(self.next.map_or(ends, |n| n.max(ends)));
        self.first_run = false;
    }

    /// One side's pawn set of a run: in `pawn_sets`, of that side, in one stretch of the game.
    fn set(
        &mut self,
        r: &Row<'_, '_>,
        f: &mut Report,
        at: &str,
        side: usize,
        name: &str,
    ) -> Result<()> {
        let value = r.get(3 + side)?;
        let Some(set) = int(value) else {
            let shown = show(value);
            f.problem(Kind::RunValues, || format!("{at}: {name} is {shown}"));
            return Ok(());
        };
        let stored_side = r.get(8 + side)?;
        match stored_side {
            Cell::Null => f.problem(Kind::RunSets, || {
                format!("{at}: {name} {set} is not in pawn_sets")
            }),
            Cell::Integer(s) if s == side as i64 => {}
            other => {
                let what = int(other).map_or_else(
                    || format!("a pawn set with side {}", show(other)),
                    |s| format!("{} pawn set", side_name(s)),
                );
                f.problem(Kind::RunSets, || format!("{at}: {name} {set} is {what}"));
            }
        }
        let s = &mut self.sets[side];
        if s.current != Some(set) {
            if s.earlier.contains(&set) {
                f.problem(Kind::RunStretch, || {
                    format!(
                        "{at}: {name} {set} comes back after other sets (a pawn set holds \
                         one stretch of a game)"
                    )
                });
            }
            if let Some(c) = s.current
                && s.earlier.len() < STRETCH_MEMORY
            {
                s.earlier.push(c);
            }
            s.current = Some(set);
        }
        Ok(())
    }

    /// After the game's last run: the runs must end at its last ply.
    fn finish(self, f: &mut Report) {
        if let (true, Some(p), Some(n)) = (self.exists, self.plies, self.next)
            && n <= p
        {
            let id = self.id;
            f.problem(Kind::RunTiling, || {
                format!(
                    "runs: game {id}: {} in no run (the game has {p} plies)",
                    uncovered(n, p)
                )
            });
        }
    }
}

/// `bishop_pairs` in 0..=3 and `missing` in 0..=2^32-1.
fn values(r: &Row<'_, '_>, f: &mut Report, at: &str) -> Result<()> {
    let bishops = r.get(6)?;
    if !int(bishops).is_some_and(|b| (0..=3).contains(&b)) {
        let shown = show(bishops);
        f.problem(Kind::RunValues, || {
            format!("{at}: bishop_pairs is {shown}, not 0 to 3")
        });
    }
    let missing = r.get(5)?;
    if !int(missing).is_some_and(|m| (0..=i64::from(u32::MAX)).contains(&m)) {
        let shown = show(missing);
        f.problem(Kind::RunValues, || {
            format!("{at}: missing is {shown}, not 0 to {}", u32::MAX)
        });
    }
    Ok(())
}

/// Streams `runs` in key order with their game and pawn sets; returns how many there are.
pub(super) fn runs(conn: &Snapshot, f: &mut Report) -> Result<u64> {
    let mut st = read::runs(conn)?;
    let mut rows = st.rows(&[])?;
    let mut n = 0u64;
    let mut game: Option<GameRuns> = None;
    while let Some(r) = rows.next()? {
        n += 1;
        let id_value = r.get(0)?;
        let Some(id) = int(id_value) else {
            let shown = show(id_value);
            f.problem(Kind::RunValues, || {
                format!("runs: a run has game_id {shown}")
            });
            continue;
        };
        if game.as_ref().is_none_or(|g| g.id != id) {
            if let Some(done) = game.take() {
                done.finish(f);
            }
            let g = GameRuns::new(id, r.get(7)?);
            if !g.exists {
                let first = show(r.get(1)?);
                f.problem(Kind::RunGame, || {
                    format!("runs: game {id} (run at ply {first}): no such game in games")
                });
            }
            game = Some(g);
        }
        if let Some(g) = game.as_mut() {
            g.run(&r, f)?;
        }
    }
    if let Some(done) = game.take() {
        done.finish(f);
    }
    Ok(n)
}

/// "ply 4 is" or "plies 4 to 7 are".
fn uncovered(from: i64, to: i64) -> String {
    if from == to {
        format!("ply {from} is")
    } else {
        format!("plies {from} to {to} are")
    }
}

fn side_name(side: i64) -> String {
    match side {
        0 => "a White".to_owned(),
        1 => "a Black".to_owned(),
        s => format!("a side-{s}"),
    }
}
