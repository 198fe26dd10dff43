//! The one walk over a typed [`Search`], shared by the two SQL back ends: the SQLite compiler
//! (`store::read::search`, over `pawn_sets`, `runs` and `games`) and the DuckDB/Spark dialect
//! (`store::sql::dialect`, over the Parquet dataset's `runs`, every feature inline).
//!
//! The seam: this walk decides WHAT a search tests, a back end only HOW it is written.
//! - [`conditions`] turns every part of a [`Search`] into SQL conditions: each side's
//!   [`SetCond`]s, the [`RunCond`]s, the named structures, the ply range and the
//!   [`GameCond`]s. Every condition kind is matched here, once; the leaf pieces of the text come
//!   from the back end's [`Target`]: how one side's feature column is named (`s.islands` in a
//!   `pawn_sets` subquery, `white_islands` inline), a mask literal (hex, or a decimal BIGINT
//!   Spark can read), an exact structure (a parameter, or a literal), the bishop-pair state
//!   (one packed column, or a boolean per side), the named structures (ids through
//!   `structure_names`, or keys inline), a run's columns, and a game condition (SQL with
//!   parameters, or a refusal).
//! - [`Conditions`] keeps them by part, and each back end places them in its own statement:
//!   SQLite puts a side's conditions in a `pawn_sets` CTE and the rest in `matching_runs`'
//!   WHERE (with `set_games` for the postings form); the dialect puts all of them in one WHERE
//!   over `runs`. [`bounds`] clips a run to the ply range in both.
//!
//! A new condition kind fails to compile here (the match) and, when it needs a new leaf piece,
//! in one [`Target`] method per back end: there is no second walk to keep in step. (Outside the
//! SQL text, the count plans check a [`RunCond`] in Rust, and a [`GameCond`]'s parameters are
//! SQLite's, in `store::read::search`.)

use crate::model::search::{GameCond, RunCond, Search, SetCond, Side, StructureForm, squares};

/// How a back end writes the leaf pieces of a search's SQL.
pub trait Target {
    /// Why the back end refuses a condition ([`std::convert::Infallible`] when it never does).
    type Refusal;

    /// One side's pawn column (`pawns`, or a feature's `column()`: `islands`, `duo`, …).
    fn feature(&self, side: Side, column: &str) -> String;

    /// A 64-bit value (a bitboard or mask) as a literal.
    fn mask(&self, v: u64) -> String;

    /// Whether a condition's comment names the side (`-- white pawns on d4`): where both sides'
    /// conditions stand in one WHERE, not where each side has its own subquery.
    fn names_side(&self) -> bool;

    /// The right-hand side of `pawns = …` for exactly these pawns (a comment may end it).
    fn exact(&self, side: Side, pawns: u64) -> String;

    /// The run's side has (or has not) the bishop pair.
    fn bishop_pair(&self, side: Side, has: bool) -> String;

    /// The run's bishop-pair state is exactly this (bit 0 White, bit 1 Black).
    fn bishop_pairs(&self, state: u8) -> String;

    /// The run stands in one of these named-structure forms (at least one).
    fn structure_forms(&self, forms: &[StructureForm]) -> String;

    /// A column of the run (`first_ply`, `last_ply`).
    fn run_column(&self, column: &str) -> String;

    /// The SQL functions giving the larger and the smaller of two numbers.
    fn greatest_least(&self) -> (&'static str, &'static str);

    /// A condition on the run's game.
    fn game(&self, cond: &GameCond) -> Result<String, Self::Refusal>;
}

/// A search's conditions by part, each a piece of SQL (a comment may end it, so each goes on a
/// line of its own).
#[derive(Debug, Default)]
pub struct Conditions {
    pub white: Vec<String>,
    pub black: Vec<String>,
    pub runs: Vec<String>,
    /// The named structures (`None`: any structure, named or not).
    pub structures: Option<String>,
    pub plies: Vec<String>,
    pub games: Vec<String>,
}

/// Every condition of `search`, written by `target`.
pub fn conditions<T: Target>(target: &T, search: &Search) -> Result<Conditions, T::Refusal> {
    let mut plies = Vec::new();
    if search.plies.0 > 0 {
        plies.push(format!(
            "{} >= {}",
            target.run_column("last_ply"),
            search.plies.0
        ));
    }
    if search.plies.1 < u32::MAX {
        plies.push(format!(
            "{} <= {}",
            target.run_column("first_ply"),
            search.plies.1
        ));
    }
    Ok(Conditions {
        white: set_conditions(target, Side::White, &search.white),
        black: set_conditions(target, Side::Black, &search.black),
        runs: search
            .runs
            .iter()
            .map(|&c| run_condition(target, c))
            .collect(),
        structures: (!search.structures.is_empty())
            .then(|| target.structure_forms(&search.structures)),
        plies,
        games: search
            .games
            .iter()
            .map(|g| target.game(g))
            .collect::<Result<_, _>>()?,
    })
}

/// One side's conditions on its pawns.
pub fn set_conditions<T: Target>(target: &T, side: Side, conds: &[SetCond]) -> Vec<String> {
    conds
        .iter()
        .map(|c| set_condition(target, side, c))
        .collect()
}

fn set_condition<T: Target>(target: &T, side: Side, cond: &SetCond) -> String {
    let pawns = target.feature(side, "pawns");
    let who = if target.names_side() {
        format!("{} ", side.name())
    } else {
        String::new()
    };
    match cond {
        SetCond::Has(g) => format!("{} != 0", target.feature(side, g.name())),
        SetCond::Compare(m, op, n) => {
            format!("{} {} {n}", target.feature(side, m.name()), op.sql())
        }
        SetCond::PawnsOn(mask) => format!(
            "({pawns} & {0}) = {0}  -- {who}pawns on {1}",
            target.mask(*mask),
            squares(*mask)
        ),
        SetCond::NoPawnsOn(mask) => format!(
            "({pawns} & {}) = 0  -- no {who}pawn on {}",
            target.mask(*mask),
            squares(*mask)
        ),
        SetCond::PawnOnAny(mask) => format!(
            "({pawns} & {}) != 0  -- a {who}pawn on {}",
            target.mask(*mask),
            squares(*mask)
        ),
        SetCond::Exactly(v) => format!("{pawns} = {}", target.exact(side, *v)),
    }
}

fn run_condition<T: Target>(target: &T, cond: RunCond) -> String {
    match cond {
        RunCond::BishopPair(side, has) => target.bishop_pair(side, has),
        RunCond::BishopPairs(state) => target.bishop_pairs(state),
    }
}

/// The first and last ply of a run inside the search's ply range.
pub fn bounds<T: Target>(target: &T, search: &Search) -> (String, String) {
    let (greatest, least) = target.greatest_least();
    let (first, last) = (
        target.run_column("first_ply"),
        target.run_column("last_ply"),
    );
    let first = if search.plies.0 > 0 {
        format!("{greatest}({first}, {})", search.plies.0)
    } else {
        first
    };
    let last = if search.plies.1 < u32::MAX {
        format!("{least}({last}, {})", search.plies.1)
    } else {
        last
    };
    (first, last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::search::{Feature, Op};

    /// A back end writing every leaf piece as a visible tag.
    struct Tags;

    impl Target for Tags {
        type Refusal = String;

        fn feature(&self, side: Side, column: &str) -> String {
            format!("{}.{column}", side.code())
        }
        fn mask(&self, v: u64) -> String {
            format!("m{v}")
        }
        fn names_side(&self) -> bool {
            true
        }
        fn exact(&self, side: Side, pawns: u64) -> String {
            format!("x{}:{pawns}", side.code())
        }
        fn bishop_pair(&self, side: Side, has: bool) -> String {
            format!("bp{}={has}", side.code())
        }
        fn bishop_pairs(&self, state: u8) -> String {
            format!("bps={state}")
        }
        fn structure_forms(&self, forms: &[StructureForm]) -> String {
            let labels: Vec<String> = forms.iter().map(StructureForm::label).collect();
            format!("in({})", labels.join(","))
        }
        fn run_column(&self, column: &str) -> String {
            format!("run.{column}")
        }
        fn greatest_least(&self) -> (&'static str, &'static str) {
            ("G", "L")
        }
        fn game(&self, cond: &GameCond) -> Result<String, String> {
            match cond {
                GameCond::MinElo(e) => Ok(format!("elo>={e}")),
                other => Err(format!("refused {other:?}")),
            }
        }
    }

    #[test]
    fn every_part_goes_through_the_target() {
        let search = Search {
            white: vec![
                SetCond::Has(Feature::DUO),
                SetCond::Compare(Feature::ISLANDS, Op::Ge, 3),
                SetCond::PawnsOn(1 << 27),
            ],
            black: vec![
                SetCond::NoPawnsOn(1 << 35),
                SetCond::PawnOnAny(1 << 36),
                SetCond::Exactly(7),
            ],
            runs: vec![
                RunCond::BishopPair(Side::Black, false),
                RunCond::BishopPairs(3),
            ],
            games: vec![GameCond::MinElo(2400)],
            plies: (10, 20),
            structures: vec![StructureForm {
                key: "carlsbad".into(),
                reversed: true,
            }],
            // Not conditions of the walk: a least stay is SQLite's (the dialects refuse it),
            // the order is the games' rows'.
            ..Search::default()
        };
        let c = conditions(&Tags, &search).unwrap();
        assert_eq!(
            c.white,
            [
                "0.duo != 0",
                "0.islands >= 3",
                "(0.pawns & m134217728) = m134217728  -- white pawns on d4"
            ]
        );
        assert_eq!(
            c.black,
            [
                "(1.pawns & m34359738368) = 0  -- no black pawn on d5",
                "(1.pawns & m68719476736) != 0  -- a black pawn on e5",
                "1.pawns = x1:7"
            ]
        );
        assert_eq!(c.runs, ["bp1=false", "bps=3"]);
        assert_eq!(c.structures.as_deref(), Some("in(carlsbad~)"));
        assert_eq!(c.plies, ["run.last_ply >= 10", "run.first_ply <= 20"]);
        assert_eq!(c.games, ["elo>=2400"]);
        assert_eq!(
            bounds(&Tags, &search),
            ("G(run.first_ply, 10)".into(), "L(run.last_ply, 20)".into())
        );
        let default = Search::default();
        assert_eq!(
            bounds(&Tags, &default),
            ("run.first_ply".into(), "run.last_ply".into())
        );
        let none = conditions(&Tags, &default).unwrap();
        assert!(none.structures.is_none() && none.plies.is_empty());
    }

    #[test]
    fn a_refused_game_condition_refuses_the_search() {
        let search = Search {
            games: vec![GameCond::Result("1-0".into())],
            ..Search::default()
        };
        assert!(
            conditions(&Tags, &search)
                .unwrap_err()
                .starts_with("refused Result")
        );
    }
}
