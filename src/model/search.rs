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
    /// Both players rated at most this (a game without both ratings is out).
    MaxElo(i64),
    /// The game's time class (`games.time_class`) is one of these names.
    TimeClasses(Vec<String>),
    /// The game's time class is none of these names.
    ExcludeTimeClasses(Vec<String>),
    /// White or Black name contains this (ASCII case-insensitive).
    Player(String),
    /// White's name contains this.
    WhitePlayer(String),
    /// Black's name contains this.
    BlackPlayer(String),
    /// A player's name as typed (`--player-name`), before the name look-up
    /// (`engine::find::resolve_names`) turns it into [`GameCond::Spellings`]; unresolved, it
    /// matches that exact spelling.
    PlayerName(String),
    /// White's or Black's name is exactly one of these stored spellings (one player's).
    Spellings(Vec<String>),
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

/// What the games of a search are sorted by (`find --per game --sort`, `GET /api/games?sort=`).
/// Ties go by game id, ascending.
///
/// The *typicality* is computed outside SQL (by the plans of the structure, `engine::plans`):
/// its ranks travel with the search ([`Search::typical`]) to the store.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum SortKey {
    /// Game id (database order), ascending.
    #[default]
    Id,
    /// The average of both players' ratings, highest first; games without both ratings last.
    Elo,
    /// White's rating, highest first; unrated last.
    WhiteElo,
    /// Black's rating, highest first; unrated last.
    BlackElo,
    /// The date, newest first; an unknown month or day counts as 00 (a date known to the year
    /// comes after the known dates of that year), an unknown year last.
    Date,
    /// The game's matching positions (plies in the structure asked for), most first.
    Stay,
    /// How typical the game is of the structure (docs/plans.md: the winner's moves among its
    /// side's 10 most played there; ties by rating, then stay), most typical first. Needs a
    /// structure (`--structure-name` or `--structure`).
    Typicality,
}

impl SortKey {
    /// Every key, in the order of the help.
    pub const ALL: [SortKey; 7] = [
        SortKey::Id,
        SortKey::Elo,
        SortKey::WhiteElo,
        SortKey::BlackElo,
        SortKey::Date,
        SortKey::Stay,
        SortKey::Typicality,
    ];

    /// The name `--sort` takes.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            SortKey::Id => "id",
            SortKey::Elo => "elo",
            SortKey::WhiteElo => "white-elo",
            SortKey::BlackElo => "black-elo",
            SortKey::Date => "date",
            SortKey::Stay => "stay",
            SortKey::Typicality => "typicality",
        }
    }

    /// The key of a name ([`SortKey::name`], case ignored, `_` for `-`).
    #[must_use]
    pub fn parse(name: &str) -> Option<SortKey> {
        let n = name.trim().to_ascii_lowercase().replace('_', "-");
        Self::ALL.into_iter().find(|k| k.name() == n)
    }

    /// Whether the key's natural order is descending (all but the id).
    #[must_use]
    pub fn descending(self) -> bool {
        self != SortKey::Id
    }
}

/// The order of a search's games and where a page of them starts.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Order {
    pub key: SortKey,
    /// The key's order flipped (ties still by ascending id).
    pub reverse: bool,
    /// Only the games after this one in this order (a keyset page: the last game id of the
    /// page before; a game the list does not hold yields nothing).
    pub after: Option<i64>,
}

impl Order {
    /// Whether this is the plain order of game ids, from the first.
    #[must_use]
    pub fn is_plain(&self) -> bool {
        *self == Order::default()
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
    /// Only games with at least this many matching positions (the *stay*: for a structure, the
    /// plies the game spends in it, inside the ply range). SQLite's alone: the dialects refuse
    /// it.
    pub min_stay: Option<u32>,
    /// The order of the games (`Rows::Games`).
    pub order: Order,
    /// For [`SortKey::Typicality`]: the games of the structure, most typical first, each with
    /// the first ply it is in the structure (`engine::plans::typical_games`): the list itself.
    pub typical: Vec<(i64, i64)>,
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
            min_stay: None,
            order: Order::default(),
            typical: Vec::new(),
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
