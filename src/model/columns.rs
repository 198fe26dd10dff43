//! The columns `pawndex stats` groups by: the `ply_features` columns and the derived ones, with
//! the Rust rule that computes each value. The SQL twin of every rule (used only inside
//! `--where`) is in [`crate::store::read::stats`]; the tests check that both agree.

use std::fmt;
use std::sync::OnceLock;

use anyhow::{Context, Result};
use shakmaty::fen::Fen;
use shakmaty::{Color, Role, Square};

use crate::model::features::{Feature, Kind};

pub use crate::model::search::Side;

/// Where a column's value comes from, which decides the scan that computes it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Constant for a pawn structure: one side's row of `pawn_sets` (or both).
    Structure,
    /// Constant for a game: a row of `games`.
    Game,
    /// Constant for a run of `runs` (piece-set, bishop pairs).
    Run,
    /// Changes inside a run: needs the ply.
    Ply,
}

/// A `--by` column.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Column {
    GameId,
    Ply,
    Pawns(Side),
    /// A side feature of [`crate::model::features::SIDE_FEATURES`] (`white_islands`).
    Feature(Feature, Side),
    BishopPair(Side),
    Pieceset,
    /// `ply / 10 * 10`.
    PlyBucket,
    /// Mean of both Elos floored to a multiple of 100; NULL when either Elo is missing.
    EloBand,
    /// The year of the game's `Date` tag (see [`year_of`]); `unknown` in `--by` when the tag
    /// gives none, NULL in `--where`.
    Year,
    /// The decade of the game's year (`1990`, shown `1990s` in `--by`); like [`Column::Year`]
    /// when the year is unknown.
    Decade,
    /// `opening`, `middlegame` or `endgame`: see [`Phase`].
    Phase,
    /// The number of squares of a side feature that is a set of squares (`white_duo_count`).
    SquareCount(Feature, Side),
    /// The pawns as the board part of a FEN (`8/pppppppp/8/8/8/8/PPPPPPPP/8`).
    PawnFen,
    /// The named structure of the position. In `--by` one value per form: the catalogue key
    /// (`carlsbad`), the key and `~` for the colour-reversed form (`carlsbad~`), or `none`.
    /// In `--where` it is the `ply_features` column: the key, or NULL for none.
    Structure,
    /// 1 for the colour-reversed form of a named structure, else 0.
    StructureReversed,
}

use Side::{Black, White};

/// Both sides' columns of each side feature, in list order (`white_islands`, `black_islands`,
/// `white_dispersion`, …).
fn side_features(column: fn(Feature, Side) -> Column, kind: Option<Kind>) -> Vec<Column> {
    Feature::all()
        .filter(|f| kind.is_none_or(|k| f.kind() == k))
        .flat_map(|f| [column(f, White), column(f, Black)])
        .collect()
}

/// The columns of the view `ply_features`, in its order.
#[must_use]
pub fn ply_features() -> Vec<Column> {
    let mut out = vec![
        Column::GameId,
        Column::Ply,
        Column::Pawns(White),
        Column::Pawns(Black),
    ];
    out.extend(side_features(Column::Feature, None));
    out.extend([
        Column::BishopPair(White),
        Column::BishopPair(Black),
        Column::Pieceset,
        Column::Structure,
        Column::StructureReversed,
    ]);
    out
}

/// Every column, `ply_features` order first (the named structure last), then the derived ones.
#[must_use]
pub fn all() -> &'static [Column] {
    static ALL: OnceLock<Vec<Column>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut out: Vec<Column> = ply_features()
            .into_iter()
            .filter(|c| !matches!(c, Column::Structure | Column::StructureReversed))
            .collect();
        out.extend([
            Column::PlyBucket,
            Column::EloBand,
            Column::Year,
            Column::Decade,
            Column::Phase,
        ]);
        out.extend(side_features(Column::SquareCount, Some(Kind::Squares)));
        out.extend([
            Column::PawnFen,
            Column::Structure,
            Column::StructureReversed,
        ]);
        out
    })
}

impl Column {
    pub fn name(self) -> String {
        match self {
            Column::GameId => "game_id".into(),
            Column::Ply => "ply".into(),
            Column::Pawns(s) => format!("{}_pawns", s.name()),
            Column::Feature(f, s) => format!("{}_{}", s.name(), f.name()),
            Column::BishopPair(s) => format!("{}_bishop_pair", s.name()),
            Column::Pieceset => "pieceset".into(),
            Column::PlyBucket => "ply_bucket".into(),
            Column::EloBand => "elo_band".into(),
            Column::Year => "year".into(),
            Column::Decade => "decade".into(),
            Column::Phase => "phase".into(),
            Column::SquareCount(f, s) => format!("{}_{}_count", s.name(), f.name()),
            Column::PawnFen => "pawn_fen".into(),
            Column::Structure => "structure".into(),
            Column::StructureReversed => "structure_reversed".into(),
        }
    }

    /// The column in a chess player's words, for a chart's title ("White's score by Elo
    /// band"); the axes keep [`Column::name`], the name `--by` and `--where` take.
    #[must_use]
    pub fn words(self) -> String {
        let whose = |s: Side| match s {
            White => "White's",
            Black => "Black's",
        };
        match self {
            Column::GameId => "game".into(),
            Column::Ply => "ply".into(),
            Column::Pawns(s) => format!("{} pawns", whose(s)),
            Column::Feature(f, s) => match f.kind() {
                Kind::Count { .. } => format!("{} pawn {}", whose(s), f.name()),
                Kind::Squares => format!("{} {} squares", whose(s), f.name()),
            },
            Column::BishopPair(s) => format!("{} bishop pair", whose(s)),
            Column::Pieceset => "piece-set".into(),
            Column::PlyBucket => "ply (in tens)".into(),
            Column::EloBand => "Elo band (mean of both players)".into(),
            Column::Year => "year".into(),
            Column::Decade => "decade".into(),
            Column::Phase => "game phase".into(),
            Column::SquareCount(f, s) => format!("number of {} {} squares", whose(s), f.name()),
            Column::PawnFen => "pawns".into(),
            Column::Structure => "named structure".into(),
            Column::StructureReversed => "reversed form".into(),
        }
    }

    pub fn parse(name: &str) -> Option<Column> {
        let name = name.trim().to_ascii_lowercase();
        all().iter().copied().find(|c| c.name() == name)
    }

    pub fn level(self) -> Level {
        match self {
            Column::GameId | Column::EloBand | Column::Year | Column::Decade => Level::Game,
            Column::BishopPair(_)
            | Column::Pieceset
            | Column::Structure
            | Column::StructureReversed => Level::Run,
            Column::Ply | Column::PlyBucket | Column::Phase => Level::Ply,
            _ => Level::Structure,
        }
    }

    /// The side a column describes, for the per-side columns.
    pub fn side(self) -> Option<Side> {
        match self {
            Column::Pawns(s)
            | Column::Feature(_, s)
            | Column::BishopPair(s)
            | Column::SquareCount(_, s) => Some(s),
            _ => None,
        }
    }

    /// For structure columns: the per-side columns the value is computed from.
    pub fn structure_sources(self) -> Vec<String> {
        match self {
            Column::SquareCount(f, s) => vec![Column::Feature(f, s).name()],
            Column::PawnFen => vec![Column::Pawns(White).name(), Column::Pawns(Black).name()],
            c if c.level() == Level::Structure => vec![c.name()],
            _ => Vec::new(),
        }
    }

    /// A structure column's value from its [`Column::structure_sources`] values (every
    /// structure column but `pawn_fen` is an integer).
    pub fn structure_int(self, raw: &[i64]) -> i64 {
        match self {
            Column::SquareCount(..) => i64::from((raw[0] as u64).count_ones()),
            _ => raw[0],
        }
    }

    /// A structure column's value from its [`Column::structure_sources`] values.
    pub fn structure_value(self, raw: &[i64]) -> Cell {
        match self {
            Column::PawnFen => Cell::Text(pawn_fen(raw[0] as u64, raw[1] as u64)),
            c => Cell::Int(c.structure_int(raw)),
        }
    }

    /// Renders a value for CSV and chart labels.
    pub fn render(self, cell: &Cell) -> String {
        match (self, cell) {
            (Column::Phase, Cell::Int(code)) => Phase::from_code(*code).name().to_string(),
            (Column::Decade, Cell::Int(decade)) => format!("{decade}s"),
            (_, c) => c.to_string(),
        }
    }
}

/// A group-by value.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cell {
    Null,
    Int(i64),
    Text(String),
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cell::Null => Ok(()),
            Cell::Int(v) => write!(f, "{v}"),
            Cell::Text(t) => f.write_str(t),
        }
    }
}

/// `ply_bucket`: the ply rounded down to a multiple of 10.
pub fn ply_bucket(ply: u32) -> i64 {
    i64::from(ply / 10 * 10)
}

/// `elo_band`: the mean of both Elos floored to a multiple of 100 (2450 and 2551 give 2500).
pub fn elo_band(white: Option<i64>, black: Option<i64>) -> Cell {
    match (white, black) {
        (Some(w), Some(b)) => Cell::Int((w + b).div_euclid(200) * 100),
        _ => Cell::Null,
    }
}

/// The `--by` value of a game whose year is unknown (sorted after every year: a text cell
/// orders after the numbers).
pub const UNKNOWN_YEAR: &str = "unknown";

/// The year of a PGN `Date` tag (`YYYY.MM.DD`): its first four characters when they are four
/// digits, else none (`????.??.??`, a missing tag, any other text).
#[must_use]
pub fn year_of(date: Option<&str>) -> Option<i64> {
    let head = date?.as_bytes().get(..4)?;
    head.iter()
        .all(u8::is_ascii_digit)
        .then(|| head.iter().fold(0, |y, d| y * 10 + i64::from(d - b'0')))
}

/// `year`: the year of the game's date, or `unknown`.
pub fn year(year: Option<i64>) -> Cell {
    year.map_or_else(|| Cell::Text(UNKNOWN_YEAR.into()), Cell::Int)
}

/// `decade`: the year floored to a multiple of 10 (1999 gives 1990, shown `1990s`), or
/// `unknown`.
pub fn decade(year: Option<i64>) -> Cell {
    year.map_or_else(
        || Cell::Text(UNKNOWN_YEAR.into()),
        |y| Cell::Int(y.div_euclid(10) * 10),
    )
}

/// The board part of a FEN holding only the pawns, rank 8 first.
pub fn pawn_fen(white: u64, black: u64) -> String {
    let mut out = String::with_capacity(32);
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            let bit = 1u64 << (rank * 8 + file);
            let piece = if white & bit != 0 {
                Some('P')
            } else if black & bit != 0 {
                Some('p')
            } else {
                None
            };
            match piece {
                Some(p) => {
                    if empty > 0 {
                        out.push(char::from(b'0' + empty));
                        empty = 0;
                    }
                    out.push(p);
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            out.push(char::from(b'0' + empty));
        }
        if rank > 0 {
            out.push('/');
        }
    }
    out
}

/// Game phase of a position.
///
/// The rule, in this order:
/// 1. **endgame** when each side has no queen, or at most one rook, bishop or knight in all;
/// 2. **opening** when the ply is 20 or less;
/// 3. **middlegame** otherwise.
///
/// Pieces are read from the position's piece-set: each slot stands for the piece the game
/// started with in that slot ([`PieceMasks`]). A promoted piece keeps its pawn's slot and is
/// not counted, so a promotion never turns an endgame back into a middlegame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    Opening = 0,
    Middlegame = 1,
    Endgame = 2,
}

/// The last ply that counts as opening (when the endgame rule does not hold).
pub const OPENING_LAST_PLY: u32 = 20;

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Opening => "opening",
            Phase::Middlegame => "middlegame",
            Phase::Endgame => "endgame",
        }
    }

    pub fn from_code(code: i64) -> Phase {
        match code {
            0 => Phase::Opening,
            1 => Phase::Middlegame,
            _ => Phase::Endgame,
        }
    }

    pub fn of(ply: u32, pieceset: u32, masks: &PieceMasks) -> Phase {
        if masks.is_endgame(pieceset) {
            Phase::Endgame
        } else if ply <= OPENING_LAST_PLY {
            Phase::Opening
        } else {
            Phase::Middlegame
        }
    }
}

/// Which piece-set slots started as queens, and as rooks, bishops or knights, per side.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct PieceMasks {
    /// White, Black.
    pub queens: [u32; 2],
    pub minors_and_rooks: [u32; 2],
}

impl PieceMasks {
    /// The standard start: d1 queen is slot 3, a1 b1 c1 f1 g1 h1 are slots 0 1 2 5 6 7; Black's
    /// d8 queen is slot 27, a8 b8 c8 f8 g8 h8 are slots 24 25 26 29 30 31.
    pub const STANDARD: PieceMasks = PieceMasks {
        queens: [1 << 3, 1 << 27],
        minors_and_rooks: [0xE7, 0xE7 << 24],
    };

    /// Masks for a game that starts from `fen`: the slots are assigned as the indexer does
    /// ([`crate::model::pieceset::initial_slots`]) and each slot takes the type of the piece that stood
    /// on its square in the start position.
    pub fn from_fen(fen: &str, chess960: bool) -> Result<PieceMasks> {
        let fen = Fen::from_ascii(fen.as_bytes()).with_context(|| format!("start FEN {fen}"))?;
        let board = &fen.as_setup().board;
        let (slots, _) = crate::model::pieceset::initial_slots(board, chess960)
            .map_err(|e| anyhow::anyhow!("start FEN {fen}: {e}"))?;
        let mut masks = PieceMasks {
            queens: [0; 2],
            minors_and_rooks: [0; 2],
        };
        for sq in board.occupied() {
            let piece = board.piece_at(sq).expect("occupied square");
            let slot = slots[usize::from(Square::to_u32(sq) as u8)];
            if slot >= 32 {
                continue;
            }
            let side = match piece.color {
                Color::White => 0,
                Color::Black => 1,
            };
            match piece.role {
                Role::Queen => masks.queens[side] |= 1 << slot,
                Role::Rook | Role::Bishop | Role::Knight => {
                    masks.minors_and_rooks[side] |= 1 << slot
                }
                Role::Pawn | Role::King => {}
            }
        }
        Ok(masks)
    }

    /// Both sides have no queen, or at most one rook, bishop or knight.
    pub fn is_endgame(&self, pieceset: u32) -> bool {
        (0..2).all(|side| {
            pieceset & self.queens[side] == 0
                || (pieceset & self.minors_and_rooks[side]).count_ones() <= 1
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for c in all() {
            assert_eq!(Column::parse(&c.name()), Some(*c));
        }
        assert_eq!(
            Column::parse(" White_Islands "),
            Some(Column::Feature(Feature::ISLANDS, White))
        );
        assert_eq!(Column::parse("white_island"), None);
    }

    #[test]
    fn elo_band_floors_the_mean() {
        assert_eq!(elo_band(Some(2450), Some(2551)), Cell::Int(2500));
        assert_eq!(elo_band(Some(2450), Some(2549)), Cell::Int(2400));
        assert_eq!(elo_band(Some(0), Some(99)), Cell::Int(0));
        assert_eq!(elo_band(Some(-10), Some(0)), Cell::Int(-100));
        assert_eq!(elo_band(None, Some(2500)), Cell::Null);
    }

    #[test]
    fn year_and_decade_from_the_date_tag() {
        assert_eq!(year_of(Some("1999.12.31")), Some(1999));
        assert_eq!(year_of(Some("1851.??.??")), Some(1851));
        assert_eq!(year_of(Some("2004")), Some(2004));
        assert_eq!(year_of(Some("????.??.??")), None);
        assert_eq!(year_of(Some("19??.??.??")), None);
        assert_eq!(year_of(Some("199")), None);
        assert_eq!(year_of(Some("")), None);
        assert_eq!(year_of(None), None);
        assert_eq!(decade(Some(1999)), Cell::Int(1990));
        assert_eq!(decade(Some(2000)), Cell::Int(2000));
        assert_eq!(decade(None), Cell::Text("unknown".into()));
        assert_eq!(year(None), Cell::Text("unknown".into()));
        assert_eq!(Column::Decade.render(&Cell::Int(1990)), "1990s");
        assert_eq!(Column::Decade.render(&decade(None)), "unknown");
        // The unknown year sorts after every year.
        assert!(year(Some(2021)) < year(None));
    }

    #[test]
    fn pawn_fen_of_the_start() {
        assert_eq!(
            pawn_fen(0xFF00, 0x00FF_0000_0000_0000),
            "8/pppppppp/8/8/8/8/PPPPPPPP/8"
        );
        // e4 (28) against d5 (35) and h7 (55).
        assert_eq!(
            pawn_fen(1 << 28, (1 << 35) | (1 << 55)),
            "8/7p/8/3p4/4P3/8/8/8"
        );
    }

    #[test]
    fn standard_masks_match_the_start_fen() {
        let m = PieceMasks::from_fen(
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            false,
        )
        .unwrap();
        assert_eq!(m, PieceMasks::STANDARD);
    }

    #[test]
    fn endgame_rule() {
        let m = PieceMasks::STANDARD;
        let all = u32::MAX;
        assert!(!m.is_endgame(all));
        // Queens off, everything else on: endgame.
        assert!(m.is_endgame(all & !(1 << 3) & !(1 << 27)));
        // White keeps the queen with one rook; Black has no queen.
        let ps = all & !0b0110_0110 & !(1 << 7) & !(1 << 27);
        assert_eq!((ps & 0xE7).count_ones(), 1);
        assert!(m.is_endgame(ps));
        // White keeps the queen with two pieces: not yet.
        assert!(!m.is_endgame(ps | (1 << 7)));
        assert_eq!(
            Phase::of(10, all & !(1 << 3) & !(1 << 27), &m),
            Phase::Endgame
        );
        assert_eq!(Phase::of(20, all, &m), Phase::Opening);
        assert_eq!(Phase::of(21, all, &m), Phase::Middlegame);
    }

    #[test]
    fn chess960_masks_follow_the_start_position() {
        // Queen on d1/d8 in this start; knights e1 f1, bishops b1 c1, rooks a1 h1.
        let m = PieceMasks::from_fen(
            "rbbqnnkr/pppppppp/8/8/8/8/PPPPPPPP/RBBQNNKR w HAha - 0 1",
            true,
        )
        .unwrap();
        assert_eq!(m.queens, [1 << 3, 1 << 27]);
        assert_eq!(m.minors_and_rooks, [0b1011_0111, 0b1011_0111 << 24]);
    }
}
