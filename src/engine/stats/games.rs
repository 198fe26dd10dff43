//! The game part of each run's key and what the counts need of a game (result, Elos, piece
//! masks, length), read once from the game scan; and the runs rebuilt from the changes of named
//! structure when those are all a count needs.

use anyhow::Result;

use super::StatsDb;
use super::keys::{Interner, NONE};
use super::plan::Plan;
use crate::model::columns::{self, Cell, Column, PieceMasks};
use crate::model::outcome::Outcome;
use crate::store::read::stats::{RunRow, small};

/// What the positions scan needs to know of a game.
#[derive(Copy, Clone)]
pub(super) struct GameInfo {
    /// The game part of the key; `NONE` when the game is filtered out.
    pub(super) key: u32,
    pub(super) outcome: Outcome,
    pub(super) white_elo: Option<i64>,
    pub(super) black_elo: Option<i64>,
    /// Index into `Games::masks` (0: the standard start).
    pub(super) masks: u32,
    /// The game's last ply (`games.plies`).
    pub(super) last_ply: u32,
}

const NO_GAME: GameInfo = GameInfo {
    key: NONE,
    outcome: Outcome::Unknown,
    white_elo: None,
    black_elo: None,
    masks: 0,
    last_ply: 0,
};

pub(super) struct Games {
    pub(super) first_id: i64,
    pub(super) last_id: i64,
    info: Vec<GameInfo>,
    pub(super) tuples: Vec<Vec<Cell>>,
    pub(super) masks: Vec<PieceMasks>,
}

impl Games {
    #[inline]
    pub(super) fn get(&self, id: i64) -> Option<&GameInfo> {
        let g = self.info.get(usize::try_from(id - self.first_id).ok()?)?;
        (g.key != NONE).then_some(g)
    }

    /// Reads the games `first_id..=last_id` (the range of the command's snapshot).
    pub(super) fn load(
        db: &StatsDb,
        plan: &Plan,
        (first_id, last_id): (i64, i64),
    ) -> Result<Games> {
        // Ids come from the file: a damaged range must not size the table.
        let size = usize::try_from(last_id - first_id + 1)
            .ok()
            .filter(|&n| n <= 1 << 32)
            .ok_or_else(|| anyhow::anyhow!("game ids {first_id}..{last_id} are out of range: the database is damaged (run `pawndex check`)"))?;
        let mut games = Games {
            first_id,
            last_id,
            info: vec![NO_GAME; size],
            tuples: Vec::new(),
            masks: vec![PieceMasks::STANDARD],
        };
        let mut interner = Interner::new();
        let mut tuple = Vec::with_capacity(plan.game_columns.len());
        let range = (first_id, last_id);
        db.game_scan(&plan.game_filters, plan.min_elo, plan.masks, range, |g| {
            let mut masks = 0;
            if let Some(m) = g.masks {
                masks = games.masks.len() as u32;
                games.masks.push(m);
            }
            tuple.clear();
            for c in &plan.game_columns {
                tuple.push(match c {
                    Column::GameId => Cell::Int(g.id),
                    Column::EloBand => columns::elo_band(g.white_elo, g.black_elo),
                    Column::Year => columns::year(g.year),
                    Column::Decade => columns::decade(g.year),
                    _ => unreachable!("not a game column: {c:?}"),
                });
            }
            let at = usize::try_from(g.id - first_id).unwrap_or(usize::MAX);
            if let Some(slot) = games.info.get_mut(at) {
                *slot = GameInfo {
                    key: interner.id(&tuple),
                    outcome: g.outcome,
                    white_elo: g.white_elo,
                    black_elo: g.black_elo,
                    masks,
                    last_ply: small(g.plies.unwrap_or(0)),
                };
            }
            Ok(())
        })?;
        games.tuples = interner.tuples;
        Ok(games)
    }
}

/// Whether the runs' only needed values are their named structures: then the changes of
/// structure (`structure_changes`, about one row per hundred runs) and each game's length
/// give every run's plies and structure code without reading `runs` (see [`scan_changes`]).
/// `PAWNDEX_PLAN=scan` reads the runs anyway (for tests and measurements).
pub(super) fn from_changes(plan: &Plan) -> bool {
    plan.structure_columns.is_empty()
        && plan.side_filters.iter().all(Vec::is_empty)
        && plan.position_filters.is_empty()
        && !plan.run_columns.is_empty()
        && plan
            .run_columns
            .iter()
            .all(|c| matches!(c, Column::Structure | Column::StructureReversed))
        && crate::store::read::forced_plan() != Some(crate::store::read::ForcedPlan::Scan)
}

/// Streams, for games `first..=last` in game order, one row per stretch of plies with the
/// same named structure (a game without changes is one stretch of code 0): the runs of the
/// positions scan merged where only the pawn sets differ, which nothing counted here sees.
pub(super) fn scan_changes(
    db: &StatsDb,
    games: &Games,
    (first, last): (i64, i64),
    visit: impl FnMut(&RunRow),
) -> Result<()> {
    let mut walk = Stretches {
        games,
        id: first,
        game: None,
        run: RunRow::default(),
        visit,
    };
    if last < first {
        return Ok(());
    }
    walk.open();
    db.structure_changes((first, last), |g, ply, code| {
        // Changes of games before the open one (a damaged row) are passed over.
        if g < walk.id {
            return;
        }
        while walk.id < g && walk.id <= last {
            walk.close();
            walk.id += 1;
            walk.open();
        }
        if g == walk.id && g <= last {
            walk.change(ply, code);
        }
    })?;
    while walk.id <= last {
        walk.close();
        walk.id += 1;
        walk.open();
    }
    Ok(())
}

/// The walk of [`scan_changes`] through the games: the game open now and its stretch so far.
struct Stretches<'a, F> {
    games: &'a Games,
    /// The game open now.
    id: i64,
    game: Option<GameInfo>,
    run: RunRow,
    visit: F,
}

impl<F: FnMut(&RunRow)> Stretches<'_, F> {
    /// Starts game `id`: one stretch of code 0 from ply 0 until a change says otherwise.
    fn open(&mut self) {
        self.game = self.games.get(self.id).copied();
        self.run.game_id = self.id;
        self.run.structure = 0;
        self.run.first_ply = 0;
    }

    /// The game's structure is `code` from `ply` on: the stretch before it ends.
    fn change(&mut self, ply: u32, code: i64) {
        if let Some(info) = self.game
            && ply > self.run.first_ply
        {
            self.run.last_ply = (ply - 1).min(info.last_ply);
            if self.run.first_ply <= self.run.last_ply {
                (self.visit)(&self.run);
            }
        }
        self.run.structure = code;
        self.run.first_ply = ply;
    }

    /// The game's last stretch runs to its end.
    fn close(&mut self) {
        if let Some(info) = self.game
            && self.run.first_ply <= info.last_ply
        {
            self.run.last_ply = info.last_ply;
            (self.visit)(&self.run);
        }
    }
}
