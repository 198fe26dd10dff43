//! A game as pawndex keeps it: its tags, the runs of per-ply values its replay produced, its
//! named-structure changes, and, for a game that could not be indexed, the reject with its
//! category and reason.

use crate::model::features::{COUNT_FEATURES, Kind, SIDE_FEATURES, SQUARE_FEATURES, SideFeatures};
use crate::model::structure::Code;

/// Games longer than this are rejected rather than held in memory.
pub const MAX_PLIES: usize = 16_384;

/// Tags pawndex stores. Values are decoded as UTF-8, or as Latin-1 when they are not UTF-8.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tags {
    pub event: Option<String>,
    pub site: Option<String>,
    pub date: Option<String>,
    pub round: Option<String>,
    pub white: Option<String>,
    pub black: Option<String>,
    pub result: Option<String>,
    pub white_elo: Option<String>,
    pub black_elo: Option<String>,
    pub eco: Option<String>,
    /// The `TimeControl` tag (stored as read, in `games.time_control`).
    pub time_control: Option<String>,
    pub fen: Option<String>,
    pub setup: Option<String>,
    pub variant: Option<String>,
    /// Number of tags seen, stored or not.
    pub count: usize,
}

/// A game's header as pawndex stores it, reads it back and writes it out (one shape for the
/// writer, `load_game`, the dump and the PGN export): the seven-tag roster, both Elos as
/// numbers and the ECO code. [`Tags`] is the header as read, before the Elos are parsed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub event: Option<String>,
    pub site: Option<String>,
    pub date: Option<String>,
    pub round: Option<String>,
    pub white: Option<String>,
    pub black: Option<String>,
    pub result: Option<String>,
    /// `None` when the tag is missing or not an integer ([`parse_elo`]).
    pub white_elo: Option<i64>,
    pub black_elo: Option<i64>,
    pub eco: Option<String>,
}

impl Header {
    /// The seven-tag roster, in PGN order (what makes two games the same game, with the start
    /// position and the moves).
    #[must_use]
    pub fn roster(&self) -> [Option<&str>; 7] {
        [
            self.event.as_deref(),
            self.site.as_deref(),
            self.date.as_deref(),
            self.round.as_deref(),
            self.white.as_deref(),
            self.black.as_deref(),
            self.result.as_deref(),
        ]
    }
}

/// `games.hash`: FNV-1a over the bytes that make two games the same game, each part closed by
/// a separator byte: the seven-tag roster in PGN order (a missing tag as empty), the start
/// position's FEN as stored (empty for the standard start) and the encoded moves. The writer
/// finds duplicates by it; `pawndex check` recomputes it from each stored row.
#[must_use]
pub fn game_hash(roster: [&[u8]; 7], fen: &[u8], moves: &[u8]) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    };
    for t in roster {
        eat(t);
    }
    eat(fen);
    eat(moves);
    h as i64
}

impl Tags {
    /// The header these tags make: the roster and ECO code as read, the Elos parsed.
    #[must_use]
    pub fn into_header(self) -> Header {
        Header {
            white_elo: parse_elo(self.white_elo.as_deref()),
            black_elo: parse_elo(self.black_elo.as_deref()),
            event: self.event,
            site: self.site,
            date: self.date,
            round: self.round,
            white: self.white,
            black: self.black,
            result: self.result,
            eco: self.eco,
        }
    }
}

/// An Elo tag's value when it is an integer (`"2650"`, `" 2650 "`), else `None` (`"-"`, `"?"`).
#[must_use]
pub fn parse_elo(tag: Option<&str>) -> Option<i64> {
    tag.and_then(|s| s.trim().parse::<i64>().ok())
}

/// Per-ply values that stay the same for a stretch of plies.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Run {
    pub first_ply: u32,
    pub last_ply: u32,
    pub white_pawns: u64,
    pub black_pawns: u64,
    pub pieceset: u32,
    /// Bit 0: White has the bishop pair; bit 1: Black has it.
    pub bishop_pairs: u8,
    /// The named structure of the pawns (0: none), see [`crate::model::structure::Code`].
    pub structure: Code,
}

/// A ply where the game's named structure differs from the ply before (ply 0: the game starts
/// in a named structure).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructureChange {
    pub ply: u32,
    pub from: Code,
    pub to: Code,
    /// The move that made the change, in SAN with its check mark; `None` at ply 0.
    pub san: Option<String>,
}

/// What a game reached at any ply (the `game_summary` row, see [`GameSummary::columns`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct GameSummary {
    /// For each side feature that is a set of squares, in list order, White's then Black's: was
    /// it ever non-empty; then White's and Black's bishop pair: did the side ever have it.
    pub any: [bool; 2 * SQUARE_FEATURES + 2],
    /// For each side feature that is a count, in list order, White's then Black's maximum.
    pub max: [u8; 2 * COUNT_FEATURES],
}

impl Default for GameSummary {
    fn default() -> Self {
        GameSummary {
            any: [false; 2 * SQUARE_FEATURES + 2],
            max: [0; 2 * COUNT_FEATURES],
        }
    }
}

impl GameSummary {
    /// The `game_summary` columns after `game_id`, in the order of `any` then `max`
    /// (`any_white_duo`, …, `any_black_bishop_pair`, `max_white_islands`, …).
    #[must_use]
    pub fn columns() -> Vec<String> {
        let sides = |prefix: &str, name: &str| {
            [
                format!("{prefix}_white_{name}"),
                format!("{prefix}_black_{name}"),
            ]
        };
        let kind = |counts: bool| {
            SIDE_FEATURES
                .iter()
                .filter(move |f| matches!(f.kind, Kind::Count { .. }) == counts)
        };
        let mut out: Vec<String> = kind(false).flat_map(|f| sides("any", f.name)).collect();
        out.extend(sides("any", "bishop_pair"));
        out.extend(kind(true).flat_map(|f| sides("max", f.name)));
        out
    }

    /// Folds in one run's values; `w` and `b` are the features of its White and Black pawns.
    pub fn add(&mut self, run: &Run, w: &SideFeatures, b: &SideFeatures) {
        let (mut any, mut max) = (self.any.iter_mut(), self.max.iter_mut());
        for f in &SIDE_FEATURES {
            for v in [(f.get)(w), (f.get)(b)] {
                // `any` and `max` have one slot per side of each feature of their kind.
                match f.kind {
                    Kind::Squares => {
                        if let Some(a) = any.next() {
                            *a |= v != 0;
                        }
                    }
                    Kind::Count { .. } => {
                        if let Some(m) = max.next() {
                            // A count is at most its `max`, which fits a u8.
                            *m = (*m).max(v as u8);
                        }
                    }
                }
            }
        }
        for (a, bit) in any.zip([1, 2]) {
            *a |= run.bishop_pairs & bit != 0;
        }
    }
}

/// A replayed game, ready to store.
#[derive(Clone, Debug)]
pub struct GameRecord {
    pub offset: u64,
    pub header: Header,
    /// The `TimeControl` tag as read (`None` when the game has none).
    pub time_control: Option<String>,
    /// The start position as a normalised FEN, `None` for the standard start.
    pub fen: Option<String>,
    pub chess960: bool,
    pub plies: u32,
    /// Two bytes per ply, see [`crate::model::moves`].
    pub moves: Vec<u8>,
    pub runs: Vec<Run>,
    /// The features of each run's White and Black pawns, one entry per run.
    pub run_features: Vec<[SideFeatures; 2]>,
    pub summary: GameSummary,
    /// The plies where the named structure changes, in order.
    pub changes: Vec<StructureChange>,
    /// Hash of the seven-tag roster, start position and moves (duplicate detection).
    pub hash: i64,
}

impl GameRecord {
    /// The game as a stored one (no id): what the replays of stored games take.
    #[must_use]
    pub fn stored(&self) -> crate::model::stored::StoredGame {
        crate::model::stored::StoredGame {
            id: 0,
            header: self.header.clone(),
            fen: self.fen.clone(),
            chess960: self.chess960,
            moves: self.moves.clone(),
        }
    }
}

/// Why a game was not indexed, in a word: groups rejects in the end summary and in `pawndex
/// info`. The database stores only the full reason text ([`Reject::reason`]), which starts with
/// the category's [`RejectCategory::reason_prefix`]; [`RejectCategory::of_reason`] reads the
/// category back from it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RejectCategory {
    /// pgn-reader gave up on the text (a tag line too long, an unterminated comment).
    Syntax,
    /// The stream broke inside the game.
    CutOff,
    /// More plies than [`crate::model::game::MAX_PLIES`].
    TooLong,
    /// Neither tags nor moves.
    NotAGame,
    UnsupportedVariant,
    InvalidFen,
    IllegalMove,
    AmbiguousMove,
    NullMove,
    PieceDrop,
    /// A movetext token that is no move, number, result, NAG, comment or variation.
    UnknownToken,
}

impl RejectCategory {
    /// Every category, in the order of the summary.
    pub const ALL: [RejectCategory; 11] = [
        RejectCategory::Syntax,
        RejectCategory::CutOff,
        RejectCategory::TooLong,
        RejectCategory::NotAGame,
        RejectCategory::UnsupportedVariant,
        RejectCategory::InvalidFen,
        RejectCategory::IllegalMove,
        RejectCategory::AmbiguousMove,
        RejectCategory::NullMove,
        RejectCategory::PieceDrop,
        RejectCategory::UnknownToken,
    ];

    /// How every reason of this category starts (`illegal move` in `illegal move Qd8 at ply
    /// 23 (12. White to move)`). Reasons are built from it (see `reject`) and classified by it
    /// ([`RejectCategory::of_reason`]); no prefix starts another.
    pub fn reason_prefix(self) -> &'static str {
        match self {
            RejectCategory::Syntax => "PGN syntax error",
            RejectCategory::CutOff => "game cut off",
            RejectCategory::TooLong => "game longer than",
            RejectCategory::NotAGame => "no tags and no moves",
            RejectCategory::UnsupportedVariant => "unsupported variant",
            RejectCategory::InvalidFen => "invalid FEN",
            RejectCategory::IllegalMove => "illegal move",
            RejectCategory::AmbiguousMove => "ambiguous move",
            RejectCategory::NullMove => "null move",
            RejectCategory::PieceDrop => "piece drop",
            RejectCategory::UnknownToken => "unknown token",
        }
    }

    /// The category of a stored reject reason (the `rejects` table keeps only the reason);
    /// `None` for a reason no category starts with.
    #[must_use]
    pub fn of_reason(reason: &str) -> Option<RejectCategory> {
        Self::ALL
            .into_iter()
            .find(|c| reason.starts_with(c.reason_prefix()))
    }

    /// The stable name shown in the summary (`rejected, illegal move: 3`).
    pub fn as_str(self) -> &'static str {
        match self {
            RejectCategory::Syntax => "PGN syntax error",
            RejectCategory::CutOff => "cut off by a read error",
            RejectCategory::TooLong => "game too long",
            RejectCategory::NotAGame => "not a game",
            RejectCategory::UnsupportedVariant => "unsupported variant",
            RejectCategory::InvalidFen => "invalid FEN",
            RejectCategory::IllegalMove => "illegal move",
            RejectCategory::AmbiguousMove => "ambiguous move",
            RejectCategory::NullMove => "null move",
            RejectCategory::PieceDrop => "piece drop",
            RejectCategory::UnknownToken => "unknown token",
        }
    }
}

impl std::fmt::Display for RejectCategory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a game was not indexed. `category` groups reasons in the end summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reject {
    pub offset: u64,
    pub event: Option<String>,
    pub white: Option<String>,
    pub black: Option<String>,
    /// The half-move (1-based) that could not be played, when replay got that far.
    pub ply: Option<u32>,
    pub category: RejectCategory,
    pub reason: String,
}

/// What replay made of one game.
#[derive(Clone, Debug)]
pub enum Replayed {
    Game(Box<GameRecord>),
    Rejected(Reject),
    /// Not replayed: its text is, byte for byte, the text of a game replayed earlier in the
    /// run, so it is a duplicate (see `ingest::copies`).
    Copy,
}

/// A second hash of what [`GameRecord::hash`] covers, by another method (a multiply-fold over
/// 8-byte words instead of FNV over bytes): a writer that cannot read back the games it wrote
/// (the Parquet dataset) calls two games the same only when both hashes agree.
#[must_use]
pub fn content_check(g: &GameRecord) -> u64 {
    let mut h: u64 = 0x243F_6A88_85A3_08D3;
    let mut mix = |v: u64| {
        let m = u128::from(h ^ v) * 0x9E37_79B9_7F4A_7C15_u128;
        h = (m as u64) ^ ((m >> 64) as u64);
    };
    let mut eat = |bytes: &[u8]| {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            mix(u64::from_le_bytes(word));
        }
        // The length ends each field, so "ab" + "c" and "a" + "bc" differ.
        mix(bytes.len() as u64 | 1 << 63);
    };
    for t in g.header.roster() {
        eat(t.unwrap_or("").as_bytes());
    }
    eat(g.fen.as_deref().unwrap_or("").as_bytes());
    eat(&g.moves);
    h
}
