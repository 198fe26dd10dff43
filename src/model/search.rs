//! A position search as data: conditions on each side's pawn set, on runs and on games, a ply
//! range and named structures. The store compiles it to SQL (`store::read::search`) and to
//! DuckDB's and Spark's SQL (`store::sql::dialect`); `find`, the named queries and `stats`
//! build it.

pub use crate::model::features::Feature;

/// White or Black.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    White,
    Black,
}

impl Side {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Side::White => "white",
            Side::Black => "black",
        }
    }

    /// The `pawn_sets.side` value.
    #[must_use]
    pub fn code(self) -> u8 {
        match self {
            Side::White => 0,
            Side::Black => 1,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A condition on one side's pawn set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetCond {
    /// The side's feature (a set of squares: duo, trio, quart) is not empty.
    Has(Feature),
    /// The side's feature (a count: islands, dispersion, distortion) compared with a number.
    Compare(Feature, Op, i64),
    /// Pawns on every one of these squares.
    PawnsOn(u64),
    /// No pawn on any of these squares.
    NoPawnsOn(u64),
    /// A pawn on at least one of these squares.
    PawnOnAny(u64),
    /// Exactly these pawns (a parameter `:white_pawns`/`:black_pawns` of that value).
    Exactly(u64),
}

/// A condition on a run.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RunCond {
    /// The side has (or has not) the bishop pair.
    BishopPair(Side, bool),
    /// Exactly this bishop-pair state (bit 0 White, bit 1 Black).
    BishopPairs(u8),
}

/// A condition on the game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GameCond {
    Result(String),
    /// Both players rated at least this.
    MinElo(i64),
    /// White or Black name contains this (ASCII case-insensitive).
    Player(String),
    /// White's name contains this.
    WhitePlayer(String),
    /// Black's name contains this.
    BlackPlayer(String),
    /// The Event tag contains this.
    Event(String),
    /// The Site tag contains this.
    Site(String),
    /// The ECO code's first three characters lie in this range (both included, `A00`..`E99`).
    Eco(String, String),
    /// The date lies in this range (both included, either open), compared at each bound's own
    /// precision: `2020`, `2020.05` or `2020.05.17`. A game is in only when its date surely is:
    /// `????` never, `2020.??.??` not for `2020.05..` but for `2019.05..`, `..2020` and
    /// `..2020.12.31`.
    Date(Option<String>, Option<String>),
    /// The game's id is greater than the first and at most the second: a window of a list in
    /// game order (the keyset pages of `GET /api/games`, no OFFSET).
    Ids(i64, i64),
    /// Any one of these conditions (several values of one filter: `--result 1-0,0-1`). Their
    /// parameters are numbered: `:result_1`, `:result_2`, ….
    AnyOf(Vec<GameCond>),
}

/// One form of a named structure: the catalogue key (a row of `structure_names`) and whether
/// it is the colour-reversed form (`runs.structure = 2 * id + reversed`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructureForm {
    pub key: String,
    pub reversed: bool,
}

impl StructureForm {
    /// The form as `find --structure-name` writes it: `carlsbad`, or `carlsbad~` reversed.
    #[must_use]
    pub fn label(&self) -> String {
        format!("{}{}", self.key, if self.reversed { "~" } else { "" })
    }
}

/// A position search. Plies are `plies.0..=plies.1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Search {
    pub white: Vec<SetCond>,
    pub black: Vec<SetCond>,
    pub runs: Vec<RunCond>,
    pub games: Vec<GameCond>,
    pub plies: (u32, u32),
    /// The run's named structure is one of these forms (none: any structure, named or not).
    pub structures: Vec<StructureForm>,
}

impl Default for Search {
    fn default() -> Self {
        Search {
            white: Vec::new(),
            black: Vec::new(),
            runs: Vec::new(),
            games: Vec::new(),
            plies: (0, u32::MAX),
            structures: Vec::new(),
        }
    }
}

/// What the final SELECT returns.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Rows {
    /// `game_id, ply` per position, in (game, ply) order.
    Positions,
    /// `game_id, ply, white, black, result, date` per position.
    PositionsWithGame,
    /// `game_id, ply, white, black, result, date` per game, at its first matching ply.
    Games,
    /// `game_id, first_ply, last_ply` per matching run (its plies inside the ply range), in
    /// (game, ply) order: what `plans` replays.
    Runs,
}

/// How the runs are read (see the module comment).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Form {
    Scan,
    /// Through the `:games` parameter (see [`Search::rows_form`]).
    Postings,
}

/// Squares of a mask in words: whole files as "the c- or e-file", other squares by name.
pub fn squares(mask: u64) -> String {
    const FILE: u64 = 0x0101_0101_0101_0101;
    let mut files = Vec::new();
    let mut rest = mask;
    for f in 0..8 {
        if mask & (FILE << f) == FILE << f {
            files.push(format!("{}", (b'a' + f) as char));
            rest &= !(FILE << f);
        }
    }
    let mut words = Vec::new();
    if !files.is_empty() {
        let last = files.pop().unwrap_or_default();
        words.push(if files.is_empty() {
            format!("the {last}-file")
        } else {
            format!("the {}- or {last}-file", files.join("-, "))
        });
    }
    let names: Vec<String> = (0..64)
        .filter(|i| rest & (1u64 << i) != 0)
        .map(|i| format!("{}{}", (b'a' + i % 8) as char, i / 8 + 1))
        .collect();
    if !names.is_empty() {
        words.push(names.join(" "));
    }
    words.join(" and ")
}
