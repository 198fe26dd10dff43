//! A statistics question and its answer: the `--by` columns, the filters and ply range of a
//! request, and the counts of each group (units by result, Elo sums) that tables and charts show.

use crate::model::Per;
use crate::model::columns::{Cell, Column};

/// An inclusive ply range.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PlyRange {
    pub first: u32,
    pub last: u32,
}

impl PlyRange {
    pub const ALL: PlyRange = PlyRange {
        first: 0,
        last: u32::MAX,
    };

    pub fn intersect(self, other: PlyRange) -> PlyRange {
        PlyRange {
            first: self.first.max(other.first),
            last: self.last.min(other.last),
        }
    }
}

/// One statistics request.
#[derive(Clone, Debug)]
pub struct Query {
    pub by: Vec<Column>,
    pub per: Per,
    /// SQL expressions, all of which must hold.
    pub filters: Vec<String>,
    pub plies: PlyRange,
    pub min_elo: Option<i64>,
    /// Keep only this many groups, the ones with the most units.
    pub top: Option<usize>,
}

/// Counts of one group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub positions: u64,
    pub games: u64,
    /// Units (positions, or games with `--per game`) by result.
    pub white_wins: u64,
    pub draws: u64,
    pub black_wins: u64,
    pub white_elo_sum: i128,
    pub white_elo_units: u64,
    pub black_elo_sum: i128,
    pub black_elo_units: u64,
}

impl Totals {
    /// White's score in percent over the units with a result: 100 × (wins + draws / 2) /
    /// (wins + draws + losses).
    pub fn white_score(&self) -> Option<f64> {
        let n = self.white_wins + self.draws + self.black_wins;
        crate::model::outcome::white_score(2 * self.white_wins + self.draws, n)
    }

    pub fn avg_white_elo(&self) -> Option<f64> {
        (self.white_elo_units > 0).then(|| self.white_elo_sum as f64 / self.white_elo_units as f64)
    }

    pub fn avg_black_elo(&self) -> Option<f64> {
        (self.black_elo_units > 0).then(|| self.black_elo_sum as f64 / self.black_elo_units as f64)
    }

    /// The counted units: positions, or games.
    pub fn units(&self, per: Per) -> u64 {
        match per {
            Per::Position => self.positions,
            Per::Game => self.games,
        }
    }
}

/// One output row: the `--by` values and the counts.
#[derive(Clone, Debug)]
pub struct Group {
    pub keys: Vec<Cell>,
    pub totals: Totals,
}

impl Totals {
    pub fn merge(&mut self, o: &Totals) {
        self.positions += o.positions;
        self.games += o.games;
        self.white_wins += o.white_wins;
        self.draws += o.draws;
        self.black_wins += o.black_wins;
        self.white_elo_sum += o.white_elo_sum;
        self.white_elo_units += o.white_elo_units;
        self.black_elo_sum += o.black_elo_sum;
        self.black_elo_units += o.black_elo_units;
    }
}
