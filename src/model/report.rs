//! Built-in reports: each is a documented `--by` with filters, and a chart made for it.

use clap::ValueEnum;

use crate::model::Per;
use crate::model::columns::{Column, Side};
use crate::model::features::Feature;
use crate::model::tally::PlyRange;

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Report {
    /// --by white_islands,black_islands: White's score for each pair of island counts
    IslandsVsScore,
    /// --by white_bishop_pair,elo_band --where "white_bishop_pair <> black_bishop_pair":
    /// the side with the bishop pair against the side without, by Elo band
    BishopPairByElo,
    /// --by phase,white_dispersion: how White's pawn dispersion is spread in each phase
    DispersionByPhase,
    /// --by phase,white_distortion: how White's pawn distortion is spread in each phase
    DistortionByPhase,
    /// --by ply_bucket,white_duo_count,white_trio_count,white_quart_count --ply 0..199:
    /// White's duos, trios and quarts by ply bucket
    PhalanxByPly,
    /// --by white_pawns,black_pawns,pawn_fen --top 20: the most frequent exact pawn structures
    TopStructures,
}

/// How a report is drawn.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ChartKind {
    /// The generic chart for the number of `--by` columns.
    Auto,
    /// White's score as colours over two columns.
    Heatmap,
    /// Score of the side with the bishop pair, by the second column.
    BishopPair,
    /// Share of positions with a duo, a trio and a quart, by ply bucket.
    Phalanx,
    /// Horizontal bars, one per structure.
    Structures,
}

/// A report's request before the user's own options are added.
pub struct Definition {
    pub by: Vec<Column>,
    pub filter: Option<&'static str>,
    pub plies: PlyRange,
    pub top: Option<usize>,
    pub per: Per,
    pub chart: ChartKind,
    pub title: &'static str,
}

impl Report {
    pub fn definition(self) -> Definition {
        use Side::{Black, White};
        let base = Definition {
            by: Vec::new(),
            filter: None,
            plies: PlyRange::ALL,
            top: None,
            per: Per::Position,
            chart: ChartKind::Auto,
            title: "",
        };
        match self {
            Report::IslandsVsScore => Definition {
                by: vec![
                    Column::Feature(Feature::ISLANDS, White),
                    Column::Feature(Feature::ISLANDS, Black),
                ],
                chart: ChartKind::Heatmap,
                title: "White's score by pawn islands",
                ..base
            },
            Report::BishopPairByElo => Definition {
                by: vec![Column::BishopPair(White), Column::EloBand],
                filter: Some("white_bishop_pair <> black_bishop_pair"),
                chart: ChartKind::BishopPair,
                title: "The bishop pair against no pair, by Elo band",
                ..base
            },
            Report::DispersionByPhase => Definition {
                by: vec![Column::Phase, Column::Feature(Feature::DISPERSION, White)],
                title: "White's pawn dispersion by game phase",
                ..base
            },
            Report::DistortionByPhase => Definition {
                by: vec![Column::Phase, Column::Feature(Feature::DISTORTION, White)],
                title: "White's pawn distortion by game phase",
                ..base
            },
            Report::PhalanxByPly => Definition {
                by: vec![
                    Column::PlyBucket,
                    Column::SquareCount(Feature::DUO, White),
                    Column::SquareCount(Feature::TRIO, White),
                    Column::SquareCount(Feature::QUART, White),
                ],
                plies: PlyRange {
                    first: 0,
                    last: 199,
                },
                chart: ChartKind::Phalanx,
                title: "White's duos, trios and quarts by ply",
                ..base
            },
            Report::TopStructures => Definition {
                by: vec![Column::Pawns(White), Column::Pawns(Black), Column::PawnFen],
                top: Some(20),
                chart: ChartKind::Structures,
                title: "Most frequent pawn structures",
                ..base
            },
        }
    }
}
