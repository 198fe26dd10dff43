//! The plan of a statistics request: which scan computes which `--by` column and runs which
//! `--where` filter.

use std::collections::HashMap;

use anyhow::Result;

use super::StatsDb;
use super::keys::side_index;
use crate::model::UsageError;
use crate::model::columns::{self, Cell, Column, Level};
use crate::model::tally::{PlyRange, Query};
use crate::store::read::stats::{self as read, Cut, FilterSource, Joins, ScanColumns};

pub(super) use crate::model::Per;

/// Which of the three key parts a `--by` column belongs to, and its index there.
#[derive(Copy, Clone, Debug)]
pub(super) enum Part {
    Structure(usize),
    Game(usize),
    Run(usize),
}

/// Where runs are cut so that every ply-level value is constant on a piece.
#[derive(Copy, Clone, Debug, Default)]
pub(super) struct Cuts {
    pub(super) every_ply: bool,
    pub(super) buckets: bool,
    pub(super) opening: bool,
}

pub(super) struct Plan {
    pub(super) per: Per,
    pub(super) plies: PlyRange,
    pub(super) min_elo: Option<i64>,
    pub(super) parts: Vec<Part>,
    pub(super) structure_columns: Vec<Column>,
    /// Per-side columns (`white_islands`, …) the pawn-set scans read, and for each structure
    /// column the indexes of its sources among them.
    pub(super) structure_raw: Vec<String>,
    pub(super) structure_raw_index: Vec<Vec<usize>>,
    /// The structure columns identify the structure: the structure id is the key.
    pub(super) structure_unique: bool,
    pub(super) game_columns: Vec<Column>,
    pub(super) run_columns: Vec<Column>,
    /// Filters on one side's pawn set only (White, Black).
    pub(super) side_filters: [Vec<String>; 2],
    pub(super) game_filters: Vec<String>,
    pub(super) position_filters: Vec<String>,
    pub(super) joins: Joins,
    pub(super) cuts: Cuts,
    /// Per-game piece masks are needed (for `phase`).
    pub(super) masks: bool,
    pub(super) scan_columns: ScanColumns,
    /// The `structure` value of each named structure code (`runs.structure`), for
    /// `--by structure`.
    structure_labels: HashMap<i64, String>,
}

/// The `--by structure` value of each code of a named structure in the database: its key, and
/// `~` after it for the colour-reversed form (code 0 is `none`, see [`Plan::run_cell`]).
fn structure_labels(db: &StatsDb) -> Result<HashMap<i64, String>> {
    let mut labels = HashMap::new();
    for n in db.structure_names()? {
        labels.insert(2 * n.id, n.key.clone());
        labels.insert(2 * n.id + 1, format!("{}~", n.key));
    }
    Ok(labels)
}

/// The positions of the per-side columns structure column `c` is computed from among
/// `raw`, which gets those it lacks.
pub(super) fn source_index(raw: &mut Vec<String>, c: Column) -> Vec<usize> {
    let mut index = Vec::new();
    for name in c.structure_sources() {
        let i = match raw.iter().position(|r| *r == name) {
            Some(i) => i,
            None => {
                raw.push(name);
                raw.len() - 1
            }
        };
        index.push(i);
    }
    index
}

/// Every name a `--where` expression may use.
pub fn where_names() -> Vec<String> {
    let mut names: Vec<String> = columns::all()
        .iter()
        .filter(|c| **c != Column::PawnFen)
        .map(|c| c.name())
        .collect();
    names.extend(read::GAME_COLUMNS.iter().map(|s| s.to_string()));
    names
}

fn where_error(filter: &str, why: impl std::fmt::Display) -> anyhow::Error {
    UsageError(format!(
        "--where {filter:?}: {why}\n  names it may use: {}",
        where_names().join(", ")
    ))
    .into()
}

impl Plan {
    pub(super) fn new(db: &StatsDb, q: &Query) -> Result<Plan> {
        let mut plan = Plan {
            per: q.per,
            plies: q.plies,
            min_elo: q.min_elo,
            parts: Vec::new(),
            structure_columns: Vec::new(),
            structure_raw: Vec::new(),
            structure_raw_index: Vec::new(),
            structure_unique: false,
            game_columns: Vec::new(),
            run_columns: Vec::new(),
            side_filters: [Vec::new(), Vec::new()],
            game_filters: Vec::new(),
            position_filters: Vec::new(),
            joins: Joins::default(),
            cuts: Cuts::default(),
            masks: false,
            scan_columns: ScanColumns::default(),
            structure_labels: HashMap::new(),
        };
        for &c in &q.by {
            let part = plan.place_column(c);
            plan.parts.push(part);
        }
        let has = |c: Column| plan.structure_columns.contains(&c);
        plan.structure_unique = has(Column::PawnFen)
            || (has(Column::Pawns(columns::Side::White))
                && has(Column::Pawns(columns::Side::Black)));

        let any_fen = db.any_fen_start()?;
        for filter in &q.filters {
            plan.place_filter(db, filter, any_fen)?;
        }
        let uses = |f: fn(&Column) -> bool| plan.run_columns.iter().any(f);
        plan.scan_columns = ScanColumns {
            weight_only: plan.run_columns.is_empty()
                && plan.plies == PlyRange::ALL
                && plan.position_filters.is_empty(),
            missing: uses(|c| matches!(c, Column::Pieceset | Column::Phase)),
            bishop_pairs: uses(|c| matches!(c, Column::BishopPair(_))),
            structure: uses(|c| matches!(c, Column::Structure | Column::StructureReversed)),
        };
        if plan.run_columns.contains(&Column::Structure) {
            plan.structure_labels = structure_labels(db)?;
        }
        Ok(plan)
    }

    /// Puts a `--by` column in the key part of the scan that computes it.
    fn place_column(&mut self, c: Column) -> Part {
        match c.level() {
            Level::Structure => {
                let index = source_index(&mut self.structure_raw, c);
                self.structure_raw_index.push(index);
                self.structure_columns.push(c);
                Part::Structure(self.structure_columns.len() - 1)
            }
            Level::Game => {
                self.game_columns.push(c);
                Part::Game(self.game_columns.len() - 1)
            }
            Level::Run | Level::Ply => {
                match c {
                    Column::Ply => self.cuts.every_ply = true,
                    Column::PlyBucket => self.cuts.buckets = true,
                    Column::Phase => {
                        self.cuts.opening = true;
                        self.masks = true;
                    }
                    _ => {}
                }
                self.run_columns.push(c);
                Part::Run(self.run_columns.len() - 1)
            }
        }
    }

    /// The cell of run column `i` from its value in the run key.
    pub(super) fn run_cell(&self, i: usize, value: i64) -> Cell {
        match self.run_columns[i] {
            Column::Structure => Cell::Text(match self.structure_labels.get(&value) {
                Some(label) => label.clone(),
                None if value == 0 => "none".to_string(),
                // A code the names do not explain (a damaged database): shown as it is.
                None => format!("#{value}"),
            }),
            _ => Cell::Int(value),
        }
    }

    /// Decides which scan runs a `--where` expression, from the names it uses, and checks it.
    fn place_filter(&mut self, db: &StatsDb, filter: &str, any_fen: bool) -> Result<()> {
        let names = Names::of(filter)?;
        let (source, list) = match (names.levels.as_slice(), names.sides.as_slice()) {
            ([Level::Structure], [side]) => (
                FilterSource::Side(*side),
                &mut self.side_filters[side_index(*side)],
            ),
            ([Level::Game], _) => (FilterSource::Games, &mut self.game_filters),
            _ => {
                self.joins.cut = self.joins.cut.merge(names.cut);
                self.joins.structures |= names.levels.contains(&Level::Structure);
                self.joins.games |= names.levels.contains(&Level::Game);
                if names.phase && any_fen {
                    self.joins.masks = true;
                    db.fill_piece_masks()?;
                }
                (
                    FilterSource::Positions(self.joins),
                    &mut self.position_filters,
                )
            }
        };
        db.check_filter(source, filter)
            .map_err(|why| where_error(filter, why))?;
        list.push(filter.to_string());
        Ok(())
    }
}

/// What the names of a `--where` expression need: the levels and sides of their columns, how
/// finely runs are cut, and whether `phase` is among them.
struct Names {
    levels: Vec<Level>,
    sides: Vec<columns::Side>,
    phase: bool,
    cut: Cut,
}

impl Names {
    fn of(filter: &str) -> Result<Names> {
        let inspected = read::inspect(filter).map_err(|e| where_error(filter, e))?;
        let mut names = Names {
            levels: Vec::new(),
            sides: Vec::new(),
            phase: false,
            cut: Cut::Runs,
        };
        for name in &inspected.identifiers {
            let level = match Column::parse(name) {
                Some(Column::PawnFen) => {
                    return Err(where_error(
                        filter,
                        "pawn_fen can only be used in --by (use white_pawns and black_pawns)",
                    ));
                }
                Some(c) => names.column(c),
                None if read::GAME_COLUMNS.contains(&name.as_str()) => Level::Game,
                None => continue,
            };
            if !names.levels.contains(&level) {
                names.levels.push(level);
            }
        }
        Ok(names)
    }

    /// Notes what column `c` needs; its level.
    fn column(&mut self, c: Column) -> Level {
        self.phase |= c == Column::Phase;
        if c.level() == Level::Structure
            && let Some(side) = c.side()
            && !self.sides.contains(&side)
        {
            self.sides.push(side);
        }
        self.cut = self.cut.merge(match c {
            Column::Ply => Cut::Plies,
            Column::PlyBucket => Cut::Pieces {
                buckets: true,
                opening: false,
            },
            Column::Phase => Cut::Pieces {
                buckets: false,
                opening: true,
            },
            _ => Cut::Runs,
        });
        c.level()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn where_errors_name_the_filter_and_the_names() {
        let err = where_error("nosuch = 1", "no such column: nosuch").to_string();
        assert!(err.starts_with("--where \"nosuch = 1\": no such column: nosuch\n"));
        assert!(err.contains("names it may use: ") && err.contains("white_islands"));
    }
}
