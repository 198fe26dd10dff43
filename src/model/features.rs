//! Pawn-structure feature kernels on raw `u64` bitboards.
//!
//! Squares are little-endian rank-file, as in shakmaty: a1 = 0, b1 = 1, …,
//! h1 = 7, a2 = 8, …, h8 = 63. The exact definitions are the contract in
//! `docs/features.md`; every kernel here is set-wise (shifts and masks, no
//! per-square loops) because it runs for every ply of every indexed game.
//!
//! In the board diagrams rank 8 is at the top, `1` marks a member of the set
//! and `.` an empty square.

/// The a-file.
///
/// ```rust
/// use pawndex::features::FILE_A;
/// use shakmaty::{Bitboard, File};
///
/// assert_eq!(FILE_A, Bitboard::from_file(File::A).0);
/// ```
pub const FILE_A: u64 = 0x0101_0101_0101_0101;

/// The h-file.
///
/// ```rust
/// use pawndex::features::FILE_H;
/// use shakmaty::{Bitboard, File};
///
/// assert_eq!(FILE_H, Bitboard::from_file(File::H).0);
/// ```
pub const FILE_H: u64 = 0x8080_8080_8080_8080;

/// Squares whose file + rank is odd (h1 is light).
///
/// ```rust
/// use pawndex::features::LIGHT_SQUARES;
/// use shakmaty::Bitboard;
///
/// assert_eq!(LIGHT_SQUARES, Bitboard::LIGHT_SQUARES.0);
/// assert_ne!(LIGHT_SQUARES & (1 << 7), 0); // h1
/// ```
pub const LIGHT_SQUARES: u64 = 0x55aa_55aa_55aa_55aa;

/// Squares whose file + rank is even (a1 is dark).
///
/// ```rust
/// use pawndex::features::{DARK_SQUARES, LIGHT_SQUARES};
/// use shakmaty::Bitboard;
///
/// assert_eq!(DARK_SQUARES, Bitboard::DARK_SQUARES.0);
/// assert_eq!(DARK_SQUARES, !LIGHT_SQUARES);
/// assert_ne!(DARK_SQUARES & 1, 0); // a1
/// ```
pub const DARK_SQUARES: u64 = !LIGHT_SQUARES;

/// Moves every square one file east; the h-file falls off instead of
/// wrapping onto the a-file of the next rank.
#[must_use]
#[inline]
const fn east(bb: u64) -> u64 {
    (bb << 1) & !FILE_A
}

/// Moves every square one file west; the a-file falls off instead of
/// wrapping onto the h-file of the previous rank.
#[must_use]
#[inline]
const fn west(bb: u64) -> u64 {
    (bb >> 1) & !FILE_H
}

/// The files that hold at least one pawn: bit f is set if file f (a = 0)
/// holds a pawn.
///
/// ```text
/// . . . . . . . .
/// . . . . . . . .
/// . . . . . . . .
/// . . . . . . . .
/// . . . . 1 . . .
/// . . . . . . . .
/// 1 1 . . . . . 1
/// . . . . . . . .
/// a b c d e f g h
/// 1 1 0 0 1 0 0 1   ->   0b1001_0011 (bit 0 = a-file)
/// ```
///
/// ```rust
/// use pawndex::features::fileset;
/// use shakmaty::{Bitboard, Square::*};
///
/// let pawns = Bitboard::from_iter([A2, B2, E4, H2]).0;
/// assert_eq!(fileset(pawns), 0b1001_0011);
/// ```
#[must_use]
#[inline]
pub const fn fileset(pawns: u64) -> u8 {
    let mut bb = pawns;
    bb |= bb >> 32;
    bb |= bb >> 16;
    bb |= bb >> 8;
    (bb & 0xff) as u8
}

/// The number of pawn islands: maximal groups of adjacent files that each
/// hold at least one pawn. 0 without pawns.
///
/// ```text
/// . . . . . . . .
/// . . . . . . . .
/// . . . . . . . .
/// . . . . . . . .
/// . . . . 1 . . .
/// . . . . . . . .
/// 1 1 . . . . . 1
/// . . . . . . . .
/// [a b]   [e]   [h]   ->   3 islands
/// ```
///
/// ```rust
/// use pawndex::features::islands;
/// use shakmaty::{Bitboard, Square::*};
///
/// let pawns = Bitboard::from_iter([A2, B2, E4, H2]).0;
/// assert_eq!(islands(pawns), 3);
/// assert_eq!(islands(0), 0);
/// ```
#[must_use]
#[inline]
pub const fn islands(pawns: u64) -> u8 {
    let files = fileset(pawns);
    // Count the east end of each island: an occupied file whose east
    // neighbour is empty (bit 7 shifts out, so the h-file always ends one).
    (files & !(files >> 1)).count_ones() as u8
}

/// Pawn dispersion: |3 · islands² − number of pawns|. 0 without pawns.
///
/// ```text
/// . . . . . . . .
/// . . . . . . . .
/// . . . . . . . .
/// . . . . . . . .
/// . . . . 1 . . .
/// . . . . . . . .
/// 1 1 . . . . . 1
/// . . . . . . . .
/// 3 islands, 4 pawns   ->   |3 · 9 − 4| = 23
/// ```
///
/// ```rust
/// use pawndex::features::dispersion;
/// use shakmaty::{Bitboard, Square::*};
///
/// let pawns = Bitboard::from_iter([A2, B2, E4, H2]).0;
/// assert_eq!(dispersion(pawns), 23);
/// assert_eq!(dispersion(0), 0);
/// ```
#[must_use]
#[inline]
pub const fn dispersion(pawns: u64) -> u8 {
    let islands = islands(pawns) as i32;
    let count = pawns.count_ones() as i32;
    // At most 4 islands and 64 pawns, so the result is at most 61.
    (3 * islands * islands - count).unsigned_abs() as u8
}

/// Each pawn together with every square behind it on its file, towards
/// rank 1 (White's rear).
///
/// ```text
/// . . . . . . . .        . . . . . . . .
/// . . . . . . . .        . . . . . . . .
/// . . . . . . . .        . . . . . . . .
/// . . . . . . . .        . . . . . . . .
/// . 1 . . . . . .   ->   . 1 . . . . . .
/// . . . . . . . .        . 1 . . . . . .
/// . . . . 1 . . .        . 1 . . 1 . . .
/// . . . . . . . .        . 1 . . 1 . . .
/// ```
///
/// ```rust
/// use pawndex::features::rear_fill_white;
/// use shakmaty::{Bitboard, Square::*};
///
/// let pawns = Bitboard::from_iter([B4, E2]).0;
/// let fill = Bitboard::from_iter([B1, B2, B3, B4, E1, E2]).0;
/// assert_eq!(rear_fill_white(pawns), fill);
/// ```
#[must_use]
#[inline]
pub const fn rear_fill_white(pawns: u64) -> u64 {
    let mut bb = pawns;
    bb |= bb >> 8;
    bb |= bb >> 16;
    bb |= bb >> 32;
    bb
}

/// Each pawn together with every square behind it on its file, towards
/// rank 8 (Black's rear).
///
/// ```text
/// . . . . . . . .        . . . . 1 . . .
/// . . . . 1 . . .        . . . . 1 . . .
/// . . . . . . . .        . 1 . . . . . .
/// . . . . . . . .        . 1 . . . . . .
/// . . . . . . . .   ->   . 1 . . . . . .
/// . 1 . . . . . .        . 1 . . . . . .
/// . . . . . . . .        . . . . . . . .
/// . . . . . . . .        . . . . . . . .
/// ```
///
/// ```rust
/// use pawndex::features::rear_fill_black;
/// use shakmaty::{Bitboard, Square::*};
///
/// let pawns = Bitboard::from_iter([B3, E7]).0;
/// let fill = Bitboard::from_iter([B3, B4, B5, B6, B7, B8, E7, E8]).0;
/// assert_eq!(rear_fill_black(pawns), fill);
/// ```
#[must_use]
#[inline]
pub const fn rear_fill_black(pawns: u64) -> u64 {
    let mut bb = pawns;
    bb |= bb << 8;
    bb |= bb << 16;
    bb |= bb << 32;
    bb
}

/// Counts the cells (rank, file b..h) where exactly one of the cell and its
/// west neighbour is in the rear fill `fill`.
#[must_use]
#[inline]
const fn distortion(fill: u64) -> u8 {
    // Shifting east lets the h-file wrap onto the a-file; the mask drops it.
    // At most 56 cells remain, so the count fits in a u8.
    ((fill ^ (fill << 1)) & !FILE_A).count_ones() as u8
}

/// White's pawn distortion: with `F` the [`rear_fill_white`] of the pawns,
/// `popcount((F ^ (F << 1)) & !FILE_A)` — the number of cells on files
/// b..h where the fill holds exactly one of the cell and its west
/// neighbour.
///
/// ```text
/// pawns                  rear fill              cells counted
/// . . . . . . . .        . . . . . . . .        . . . . . . . .
/// . . . . . . . .        . . . . . . . .        . . . . . . . .
/// . . 1 . 1 . 1 .        . . 1 . 1 . 1 .        . . 1 1 1 1 1 1
/// . . . . . . . .        . . 1 . 1 . 1 .        . . 1 1 1 1 1 1
/// 1 . . . . . . .   ->   1 . 1 . 1 . 1 .   ->   . 1 1 1 1 1 1 1
/// . . . . . . . .        1 . 1 . 1 . 1 .        . 1 1 1 1 1 1 1
/// . 1 . 1 . 1 . 1        1 1 1 1 1 1 1 1        . . . . . . . .
/// . . . . . . . .        1 1 1 1 1 1 1 1        . . . . . . . .
///                                               -> 26
/// ```
///
/// ```rust
/// use pawndex::features::distortion_white;
/// use shakmaty::{Bitboard, Square::*};
///
/// let pawns = Bitboard::from_iter([A4, B2, C6, D2, E6, F2, G6, H2]).0;
/// assert_eq!(distortion_white(pawns), 26);
/// ```
#[must_use]
#[inline]
pub const fn distortion_white(pawns: u64) -> u8 {
    distortion(rear_fill_white(pawns))
}

/// Black's pawn distortion: with `F` the [`rear_fill_black`] of the pawns,
/// `popcount((F ^ (F << 1)) & !FILE_A)` — the number of cells on files
/// b..h where the fill holds exactly one of the cell and its west
/// neighbour.
///
/// ```text
/// pawns                  rear fill              cells counted
/// . . . . . . . .        1 1 1 1 1 1 1 1        . . . . . . . .
/// . 1 . 1 . 1 . 1        1 1 1 1 1 1 1 1        . . . . . . . .
/// . . . . . . . .        1 . 1 . 1 . 1 .        . 1 1 1 1 1 1 1
/// 1 . . . . . . .   ->   1 . 1 . 1 . 1 .   ->   . 1 1 1 1 1 1 1
/// . . . . . . . .        . . 1 . 1 . 1 .        . . 1 1 1 1 1 1
/// . . 1 . 1 . 1 .        . . 1 . 1 . 1 .        . . 1 1 1 1 1 1
/// . . . . . . . .        . . . . . . . .        . . . . . . . .
/// . . . . . . . .        . . . . . . . .        . . . . . . . .
///                                               -> 26
/// ```
///
/// ```rust
/// use pawndex::features::distortion_black;
/// use shakmaty::{Bitboard, Square::*};
///
/// let pawns = Bitboard::from_iter([A5, B7, C3, D7, E3, F7, G3, H7]).0;
/// assert_eq!(distortion_black(pawns), 26);
/// ```
#[must_use]
#[inline]
pub const fn distortion_black(pawns: u64) -> u8 {
    distortion(rear_fill_black(pawns))
}

/// Pawns in horizontal runs of at least 2, 3 and 4 pawns.
///
/// A square starts a window of k pawns when it and the k − 1 squares east
/// of it on its rank all hold pawns; a pawn is in a run of at least k
/// exactly when some such window covers it.
#[must_use]
#[inline]
const fn runs_at_least(pawns: u64) -> [u64; 3] {
    let start2 = pawns & west(pawns);
    let start3 = start2 & west(start2);
    let start4 = start3 & west(start3);

    let at_least2 = start2 | east(start2);
    let at_least3 = start3 | east(start3) | east(east(start3));
    let half4 = start4 | east(start4);
    let at_least4 = half4 | east(east(half4));

    [at_least2, at_least3, at_least4]
}

/// Squares of the pawns in horizontal runs (maximal groups of pawns on one
/// rank on adjacent files) of exactly 2. A run never wraps from the h-file
/// to the a-file of the next rank.
///
/// ```text
/// . . . . . . . .        . . . . . . . .
/// . . . . . . . .        . . . . . . . .
/// 1 1 1 1 . . . .        . . . . . . . .
/// . . . . . . . 1        . . . . . . . .
/// 1 1 1 . . . . .   ->   . . . . . . . .
/// . . . . . . . .        . . . . . . . .
/// . . . . . 1 1 .        . . . . . 1 1 .
/// . . . . . . . .        . . . . . . . .
/// ```
///
/// ```rust
/// use pawndex::features::duo;
/// use shakmaty::{Bitboard, Square::*};
///
/// let pawns = Bitboard::from_iter([A6, B6, C6, D6, H5, A4, B4, C4, F2, G2]).0;
/// assert_eq!(duo(pawns), Bitboard::from_iter([F2, G2]).0);
/// ```
#[must_use]
#[inline]
pub const fn duo(pawns: u64) -> u64 {
    let [at_least2, at_least3, _] = runs_at_least(pawns);
    at_least2 & !at_least3
}

/// Squares of the pawns in horizontal runs (maximal groups of pawns on one
/// rank on adjacent files) of exactly 3. A run never wraps from the h-file
/// to the a-file of the next rank.
///
/// ```text
/// . . . . . . . .        . . . . . . . .
/// . . . . . . . .        . . . . . . . .
/// 1 1 1 1 . . . .        . . . . . . . .
/// . . . . . . . 1        . . . . . . . .
/// 1 1 1 . . . . .   ->   1 1 1 . . . . .
/// . . . . . . . .        . . . . . . . .
/// . . . . . 1 1 .        . . . . . . . .
/// . . . . . . . .        . . . . . . . .
/// ```
///
/// ```rust
/// use pawndex::features::trio;
/// use shakmaty::{Bitboard, Square::*};
///
/// let pawns = Bitboard::from_iter([A6, B6, C6, D6, H5, A4, B4, C4, F2, G2]).0;
/// assert_eq!(trio(pawns), Bitboard::from_iter([A4, B4, C4]).0);
/// ```
#[must_use]
#[inline]
pub const fn trio(pawns: u64) -> u64 {
    let [_, at_least3, at_least4] = runs_at_least(pawns);
    at_least3 & !at_least4
}

/// Squares of the pawns in horizontal runs (maximal groups of pawns on one
/// rank on adjacent files) of 4 or more. A run never wraps from the h-file
/// to the a-file of the next rank: h5 below stays alone.
///
/// ```text
/// . . . . . . . .        . . . . . . . .
/// . . . . . . . .        . . . . . . . .
/// 1 1 1 1 . . . .        1 1 1 1 . . . .
/// . . . . . . . 1        . . . . . . . .
/// 1 1 1 . . . . .   ->   . . . . . . . .
/// . . . . . . . .        . . . . . . . .
/// . . . . . 1 1 .        . . . . . . . .
/// . . . . . . . .        . . . . . . . .
/// ```
///
/// ```rust
/// use pawndex::features::quart;
/// use shakmaty::{Bitboard, Square::*};
///
/// let pawns = Bitboard::from_iter([A6, B6, C6, D6, H5, A4, B4, C4, F2, G2]).0;
/// assert_eq!(quart(pawns), Bitboard::from_iter([A6, B6, C6, D6]).0);
/// ```
#[must_use]
#[inline]
pub const fn quart(pawns: u64) -> u64 {
    let [_, _, at_least4] = runs_at_least(pawns);
    at_least4
}

/// Whether the bishops include one on a light square and one on a dark
/// square (a1 is dark, h1 light). Two bishops on one colour are no pair.
///
/// ```text
/// . . . . . . . .        . . . . . . . .
/// . . . . . . . .        . . . . . . . .
/// . . . . . . . .        . . . . . . . .
/// . . . . . . . .        . . . . . . . .
/// . . . . . . . .        . . . . . . . .
/// . . . . . . . .        . . . . 1 . . .
/// . . . . . . . .        . . . . . . . .
/// . . 1 . . 1 . .        . . 1 . . . . .
/// c1 dark, f1 light      c1 and e3 both dark
/// -> true                -> false
/// ```
///
/// ```rust
/// use pawndex::features::bishop_pair;
/// use shakmaty::{Bitboard, Square::*};
///
/// assert!(bishop_pair(Bitboard::from_iter([C1, F1]).0));
/// assert!(!bishop_pair(Bitboard::from_iter([C1, E3]).0));
/// ```
#[must_use]
#[inline]
pub const fn bishop_pair(bishops: u64) -> bool {
    bishops & LIGHT_SQUARES != 0 && bishops & DARK_SQUARES != 0
}

/// The pawn-structure features of one side.
///
/// ```text
/// . . . . . . . .
/// . . . . . . . .
/// . . . . . . . .
/// . . . . . . . .
/// . . . . . . . .
/// . . . . . . . .
/// 1 1 1 1 1 1 1 1   <- quart, 1 island, dispersion |3 − 8| = 5
/// . . . . . . . .
/// ```
///
/// ```rust
/// use pawndex::features::SideFeatures;
/// use shakmaty::{Bitboard, Rank};
///
/// let rank2 = Bitboard::from_rank(Rank::Second).0;
/// assert_eq!(
///     SideFeatures::white(rank2),
///     SideFeatures {
///         islands: 1,
///         dispersion: 5,
///         distortion: 0,
///         duo: 0,
///         trio: 0,
///         quart: rank2,
///     }
/// );
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct SideFeatures {
    /// See [`islands`].
    pub islands: u8,
    /// See [`dispersion`].
    pub dispersion: u8,
    /// See [`distortion_white`] and [`distortion_black`].
    pub distortion: u8,
    /// See [`duo`].
    pub duo: u64,
    /// See [`trio`].
    pub trio: u64,
    /// See [`quart`].
    pub quart: u64,
}

impl SideFeatures {
    /// All features of White's pawns `pawns`.
    ///
    /// ```text
    /// . . . . . . . .
    /// . . . . . . . .
    /// . . . . . . . .
    /// . . . . . . . .
    /// 1 1 1 . . . . .   <- trio
    /// . . . . . . . .
    /// . . . . . 1 1 .   <- duo
    /// . . . . . . . .
    /// 2 islands, 5 pawns: dispersion |12 − 5| = 7, distortion 8
    /// ```
    ///
    /// ```rust
    /// use pawndex::features::SideFeatures;
    /// use shakmaty::{Bitboard, Square::*};
    ///
    /// let pawns = Bitboard::from_iter([A4, B4, C4, F2, G2]).0;
    /// let features = SideFeatures::white(pawns);
    /// assert_eq!(features.islands, 2);
    /// assert_eq!(features.dispersion, 7);
    /// assert_eq!(features.distortion, 8);
    /// assert_eq!(features.duo, Bitboard::from_iter([F2, G2]).0);
    /// assert_eq!(features.trio, Bitboard::from_iter([A4, B4, C4]).0);
    /// assert_eq!(features.quart, 0);
    /// ```
    #[must_use]
    #[inline]
    pub const fn white(pawns: u64) -> Self {
        Self::with_distortion(pawns, distortion_white(pawns))
    }

    /// All features of Black's pawns `pawns`.
    ///
    /// ```text
    /// . . . . . . . .
    /// 1 1 1 1 1 1 1 1   <- quart, 1 island, dispersion |3 − 8| = 5
    /// . . . . . . . .
    /// . . . . . . . .
    /// . . . . . . . .
    /// . . . . . . . .
    /// . . . . . . . .
    /// . . . . . . . .
    /// ```
    ///
    /// ```rust
    /// use pawndex::features::SideFeatures;
    /// use shakmaty::{Bitboard, Rank};
    ///
    /// let rank7 = Bitboard::from_rank(Rank::Seventh).0;
    /// let features = SideFeatures::black(rank7);
    /// assert_eq!((features.islands, features.dispersion), (1, 5));
    /// assert_eq!((features.distortion, features.quart), (0, rank7));
    /// ```
    #[must_use]
    #[inline]
    pub const fn black(pawns: u64) -> Self {
        Self::with_distortion(pawns, distortion_black(pawns))
    }

    /// The colour-independent features, plus the given distortion.
    #[must_use]
    #[inline]
    const fn with_distortion(pawns: u64, distortion: u8) -> Self {
        let [at_least2, at_least3, at_least4] = runs_at_least(pawns);
        Self {
            islands: islands(pawns),
            dispersion: dispersion(pawns),
            distortion,
            duo: at_least2 & !at_least3,
            trio: at_least3 & !at_least4,
            quart: at_least4,
        }
    }
}

/// What a side feature's value is, which decides how it is stored, searched and summed up.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A whole number from 0 to `max`. `find` compares it (`islands:2..`), `game_summary`
    /// keeps its maximum over a game (`max_white_islands`). `max` is a bound no position
    /// passes, not necessarily the tightest.
    Count { max: u8 },
    /// A set of squares (a bitboard). `find` asks whether it has any (`--white quart`),
    /// `game_summary` whether a game ever had one (`any_white_quart`), and `stats` counts its
    /// squares (`white_quart_count`).
    Squares,
}

/// One feature of one side's pawns: the `pawn_sets` column `name`, the `ply_features` columns
/// `white_NAME` and `black_NAME`, and everything derived from them (see [`SIDE_FEATURES`]).
#[derive(Copy, Clone, Debug)]
pub struct SideFeature {
    pub name: &'static str,
    pub kind: Kind,
    /// The feature's value in a [`SideFeatures`] (a count, or a bitboard's bits).
    pub get: fn(&SideFeatures) -> u64,
    /// Sets the feature's value in a [`SideFeatures`]; a count is at most `max` (the caller
    /// checks a value read from a database, see [`SideFeatures::from_stored`]).
    pub set: fn(&mut SideFeatures, u64),
}

/// Every feature of one side's pawns, in column order: **the one list**. The writer, the
/// schema checks, `check`, the dump, the Parquet dataset, the typed search and its SQL, `find`,
/// the `stats` columns and `game_summary` derive their columns from it, so a new per-side
/// feature is its kernel, a field of [`SideFeatures`], an entry here and one migration
/// (`migrations/`, adding its `pawn_sets` and `game_summary` columns and the `ply_features`
/// view; a test compares the view with this list).
///
/// ```rust
/// use pawndex::features::{SIDE_FEATURES, SideFeatures};
///
/// let names: Vec<_> = SIDE_FEATURES.iter().map(|f| f.name).collect();
/// assert_eq!(names, ["islands", "dispersion", "distortion", "duo", "trio", "quart"]);
/// let start = SideFeatures::white(0xff00);
/// let values: Vec<_> = SIDE_FEATURES.iter().map(|f| (f.get)(&start)).collect();
/// assert_eq!(values, [1, 5, 0, 0, 0, 0xff00]);
/// ```
pub const SIDE_FEATURES: [SideFeature; SIDE_FEATURE_COUNT] = [
    SideFeature {
        name: "islands",
        // 8 files hold at most 4 groups.
        kind: Kind::Count { max: 4 },
        get: |f| f.islands.into(),
        set: |f, v| f.islands = v as u8,
    },
    SideFeature {
        name: "dispersion",
        // 3 × 4²
        kind: Kind::Count { max: 48 },
        get: |f| f.dispersion.into(),
        set: |f, v| f.dispersion = v as u8,
    },
    SideFeature {
        name: "distortion",
        // one per cell of files b to h
        kind: Kind::Count { max: 56 },
        get: |f| f.distortion.into(),
        set: |f, v| f.distortion = v as u8,
    },
    SideFeature {
        name: "duo",
        kind: Kind::Squares,
        get: |f| f.duo,
        set: |f, v| f.duo = v,
    },
    SideFeature {
        name: "trio",
        kind: Kind::Squares,
        get: |f| f.trio,
        set: |f, v| f.trio = v,
    },
    SideFeature {
        name: "quart",
        kind: Kind::Squares,
        get: |f| f.quart,
        set: |f, v| f.quart = v,
    },
];

/// The length of [`SIDE_FEATURES`].
pub const SIDE_FEATURE_COUNT: usize = 6;

/// How many features of [`SIDE_FEATURES`] are counts.
pub const COUNT_FEATURES: usize = count_of(true);

/// How many features of [`SIDE_FEATURES`] are sets of squares.
pub const SQUARE_FEATURES: usize = count_of(false);

// Every count fits the `Int8` of the Parquet dataset.
const _: () = {
    let mut i = 0;
    while i < SIDE_FEATURE_COUNT {
        if let Kind::Count { max } = SIDE_FEATURES[i].kind {
            assert!(max <= i8::MAX as u8, "a count must fit an i8");
        }
        i += 1;
    }
};

const fn count_of(counts: bool) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < SIDE_FEATURE_COUNT {
        if matches!(SIDE_FEATURES[i].kind, Kind::Count { .. }) == counts {
            n += 1;
        }
        i += 1;
    }
    n
}

/// A feature of [`SIDE_FEATURES`], by its place in the list: what the typed search, `find` and
/// `stats` hold (copyable, comparable, hashable, where [`SideFeature`] holds functions).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Feature(u8);

impl Feature {
    pub const ISLANDS: Feature = Feature::named("islands");
    pub const DISPERSION: Feature = Feature::named("dispersion");
    pub const DISTORTION: Feature = Feature::named("distortion");
    pub const DUO: Feature = Feature::named("duo");
    pub const TRIO: Feature = Feature::named("trio");
    pub const QUART: Feature = Feature::named("quart");

    /// The feature of that name; fails to compile (in a const) when the list has none.
    const fn named(name: &str) -> Feature {
        let mut i = 0;
        while i < SIDE_FEATURE_COUNT {
            if str_eq(SIDE_FEATURES[i].name, name) {
                return Feature(i as u8);
            }
            i += 1;
        }
        panic!("no such side feature")
    }

    /// Every feature, in list order.
    pub fn all() -> impl Iterator<Item = Feature> {
        (0..SIDE_FEATURE_COUNT as u8).map(Feature)
    }

    /// The feature called `name` (as typed: case and surrounding blanks do not matter).
    #[must_use]
    pub fn parse(name: &str) -> Option<Feature> {
        let name = name.trim();
        Feature::all().find(|f| f.name().eq_ignore_ascii_case(name))
    }

    /// Its entry in [`SIDE_FEATURES`].
    #[must_use]
    pub fn spec(self) -> &'static SideFeature {
        &SIDE_FEATURES[usize::from(self.0)]
    }

    /// Its place in [`SIDE_FEATURES`].
    #[must_use]
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// Its name: the `pawn_sets` column, and after `white_`/`black_` the `ply_features` one.
    #[must_use]
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    #[must_use]
    pub fn kind(self) -> Kind {
        self.spec().kind
    }

    /// The largest value of a count, `None` for a set of squares.
    #[must_use]
    pub fn max_value(self) -> Option<u8> {
        match self.kind() {
            Kind::Count { max } => Some(max),
            Kind::Squares => None,
        }
    }

    /// Its value in `f`.
    #[must_use]
    pub fn of(self, f: &SideFeatures) -> u64 {
        (self.spec().get)(f)
    }
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

impl SideFeatures {
    /// The values in [`SIDE_FEATURES`] order.
    #[must_use]
    pub fn values(&self) -> [u64; SIDE_FEATURE_COUNT] {
        std::array::from_fn(|i| (SIDE_FEATURES[i].get)(self))
    }

    /// The features from values read back from a database, in [`SIDE_FEATURES`] order; the
    /// name of the first that cannot be one (a negative count, or one above its `max`).
    pub fn from_stored(values: [i64; SIDE_FEATURE_COUNT]) -> Result<Self, &'static str> {
        let mut f = SideFeatures::default();
        for (spec, v) in SIDE_FEATURES.iter().zip(values) {
            if let Kind::Count { max } = spec.kind
                && !(0..=i64::from(max)).contains(&v)
            {
                return Err(spec.name);
            }
            (spec.set)(&mut f, v as u64);
        }
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Builds a bitboard from space-separated square names: `"a4 b4 c4"`.
    fn bb(squares: &str) -> u64 {
        squares
            .split_whitespace()
            .map(|name| {
                let &[file, rank] = name.as_bytes() else {
                    panic!("bad square {name:?}");
                };
                assert!((b'a'..=b'h').contains(&file), "bad file in {name:?}");
                assert!((b'1'..=b'8').contains(&rank), "bad rank in {name:?}");
                1 << (u32::from(rank - b'1') * 8 + u32::from(file - b'a'))
            })
            .fold(0, |acc, bit| acc | bit)
    }

    const RANK_2: u64 = 0xff << 8;
    const RANK_7: u64 = 0xff << 48;

    // ---- the list ----------------------------------------------------------

    #[test]
    fn the_list_names_each_feature_once() {
        let mut names: Vec<_> = SIDE_FEATURES.iter().map(|f| f.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), SIDE_FEATURE_COUNT);
        assert_eq!(COUNT_FEATURES + SQUARE_FEATURES, SIDE_FEATURE_COUNT);
        for f in Feature::all() {
            assert_eq!(Feature::parse(&f.name().to_uppercase()), Some(f));
        }
        assert_eq!(Feature::QUART.kind(), Kind::Squares);
        assert_eq!(Feature::ISLANDS.max_value(), Some(4));
    }

    #[test]
    fn stored_values_out_of_range_are_refused() {
        let mut v = SideFeatures::white(RANK_2).values().map(|v| v as i64);
        v[Feature::DISPERSION.index()] = 300;
        assert_eq!(SideFeatures::from_stored(v), Err("dispersion"));
        v[Feature::DISPERSION.index()] = 5;
        v[Feature::ISLANDS.index()] = -1;
        assert_eq!(SideFeatures::from_stored(v), Err("islands"));
    }

    // ---- worked examples -------------------------------------------------

    #[test]
    fn square_helper() {
        assert_eq!(bb(""), 0);
        assert_eq!(bb("a1"), 1);
        assert_eq!(bb("h1"), 1 << 7);
        assert_eq!(bb("d4"), 1 << 27);
        assert_eq!(bb("h8"), 1 << 63);
        assert_eq!(bb("a2 b2 c2 d2 e2 f2 g2 h2"), RANK_2);
    }

    #[test]
    fn distortion_spec_example() {
        assert_eq!(distortion_white(bb("a4 b2 c6 d2 e6 f2 g6 h2")), 26);
        // The same structure mirrored for Black.
        assert_eq!(distortion_black(bb("a5 b7 c3 d7 e3 f7 g3 h7")), 26);
    }

    #[test]
    fn runs_spec_example() {
        let pawns = bb("a4 b4 c4 f2 g2");
        assert_eq!(trio(pawns), bb("a4 b4 c4"));
        assert_eq!(duo(pawns), bb("f2 g2"));
        assert_eq!(quart(pawns), 0);
    }

    #[test]
    fn start_position() {
        let white = SideFeatures::white(RANK_2);
        assert_eq!(
            white,
            SideFeatures {
                islands: 1,
                dispersion: 5,
                distortion: 0,
                duo: 0,
                trio: 0,
                quart: RANK_2,
            }
        );
        let black = SideFeatures::black(RANK_7);
        assert_eq!(
            black,
            SideFeatures {
                islands: 1,
                dispersion: 5,
                distortion: 0,
                duo: 0,
                trio: 0,
                quart: RANK_7,
            }
        );
        assert_eq!(fileset(RANK_2), 0xff);
        assert_eq!(rear_fill_white(RANK_2), 0xffff);
        assert_eq!(rear_fill_black(RANK_7), 0xffff << 48);
    }

    #[test]
    fn no_pawns() {
        assert_eq!(SideFeatures::white(0), SideFeatures::default());
        assert_eq!(SideFeatures::black(0), SideFeatures::default());
        assert_eq!(fileset(0), 0);
        assert_eq!(rear_fill_white(0), 0);
        assert_eq!(rear_fill_black(0), 0);
        assert!(!bishop_pair(0));
    }

    #[test]
    fn islands_and_dispersion() {
        assert_eq!(islands(bb("a2 b2 e4 h2")), 3);
        assert_eq!(dispersion(bb("a2 b2 e4 h2")), 23);
        // Doubled pawns do not make an extra island.
        assert_eq!(islands(bb("c2 c3 d4")), 1);
        assert_eq!(dispersion(bb("c2 c3 d4")), 0);
        // Four isolated files is the maximum: |48 - 4|.
        assert_eq!(islands(bb("a2 c2 e2 g2")), 4);
        assert_eq!(dispersion(bb("a2 c2 e2 g2")), 44);
        assert_eq!(islands(bb("a2 h7")), 2);
        assert_eq!(dispersion(!0), 61);
    }

    #[test]
    fn runs_do_not_wrap() {
        // h4 and a5 are adjacent bits but not adjacent squares.
        assert_eq!(duo(bb("h4 a5")), 0);
        assert_eq!(trio(bb("g4 h4 a5")), 0);
        assert_eq!(duo(bb("g4 h4 a5")), bb("g4 h4"));
        assert_eq!(trio(bb("h4 a5 b5")), 0);
        assert_eq!(duo(bb("h4 a5 b5")), bb("a5 b5"));
        assert_eq!(quart(bb("g4 h4 a5 b5")), 0);
        assert_eq!(duo(bb("g4 h4 a5 b5")), bb("g4 h4 a5 b5"));
    }

    #[test]
    fn runs_of_every_length() {
        assert_eq!(duo(bb("a3 b3 d3 e3 g3")), bb("a3 b3 d3 e3"));
        assert_eq!(quart(bb("b5 c5 d5 e5 f5")), bb("b5 c5 d5 e5 f5"));
        assert_eq!(trio(bb("b5 c5 d5 e5 f5")), 0);
        assert_eq!(duo(bb("b5 c5 d5 e5 f5")), 0);
        let full = 0xff << 24;
        assert_eq!(quart(full), full);
        assert_eq!((duo(full), trio(full)), (0, 0));
        assert_eq!(quart(!0), !0);
        // Vertical neighbours never form a run.
        assert_eq!(duo(bb("c3 c4")), 0);
    }

    #[test]
    fn distortion_does_not_wrap() {
        // h-file fill next to an a-file fill one rank up is no west neighbour.
        assert_eq!(distortion_white(bb("h1")), 1);
        assert_eq!(distortion_white(bb("a2")), 2);
        assert_eq!(distortion_white(bb("h2")), 2);
        assert_eq!(distortion_black(bb("h8")), 1);
        assert_eq!(distortion_white(!0), 0);
    }

    #[test]
    fn bishop_pair_examples() {
        assert!(bishop_pair(bb("c1 f1")));
        assert!(!bishop_pair(bb("c1 e3")));
        assert!(!bishop_pair(bb("c1 e3 h8")));
        assert!(bishop_pair(bb("a1 h1")));
        assert!(!bishop_pair(bb("f1")));
        // Promoted bishops count like any other.
        assert!(bishop_pair(bb("f1 b8")));
    }

    // ---- naive square-by-square references -------------------------------

    fn has(bb: u64, file: usize, rank: usize) -> bool {
        bb & (1 << (rank * 8 + file)) != 0
    }

    fn set(bb: &mut u64, file: usize, rank: usize) {
        *bb |= 1 << (rank * 8 + file);
    }

    fn naive_count(bb: u64) -> u32 {
        let mut count = 0;
        for rank in 0..8 {
            for file in 0..8 {
                if has(bb, file, rank) {
                    count += 1;
                }
            }
        }
        count
    }

    fn naive_file_occupied(pawns: u64, file: usize) -> bool {
        (0..8).any(|rank| has(pawns, file, rank))
    }

    fn naive_fileset(pawns: u64) -> u8 {
        let mut files = 0;
        for file in 0..8 {
            if naive_file_occupied(pawns, file) {
                files |= 1 << file;
            }
        }
        files
    }

    fn naive_islands(pawns: u64) -> u8 {
        let mut islands = 0;
        let mut in_island = false;
        for file in 0..8 {
            let occupied = naive_file_occupied(pawns, file);
            if occupied && !in_island {
                islands += 1;
            }
            in_island = occupied;
        }
        islands
    }

    fn naive_dispersion(pawns: u64) -> u8 {
        let islands = i64::from(naive_islands(pawns));
        let count = i64::from(naive_count(pawns));
        u8::try_from((3 * islands * islands - count).abs()).unwrap()
    }

    fn naive_rear_fill_white(pawns: u64) -> u64 {
        let mut fill = 0;
        for rank in 0..8 {
            for file in 0..8 {
                if has(pawns, file, rank) {
                    for behind in 0..=rank {
                        set(&mut fill, file, behind);
                    }
                }
            }
        }
        fill
    }

    fn naive_rear_fill_black(pawns: u64) -> u64 {
        let mut fill = 0;
        for rank in 0..8 {
            for file in 0..8 {
                if has(pawns, file, rank) {
                    for behind in rank..8 {
                        set(&mut fill, file, behind);
                    }
                }
            }
        }
        fill
    }

    fn naive_distortion(fill: u64) -> u8 {
        let mut count = 0;
        for rank in 0..8 {
            for file in 1..8 {
                if has(fill, file, rank) != has(fill, file - 1, rank) {
                    count += 1;
                }
            }
        }
        count
    }

    /// Pawns in runs of exactly `len` (or, when `or_longer`, at least `len`).
    fn naive_runs(pawns: u64, len: usize, or_longer: bool) -> u64 {
        let mut result = 0;
        for rank in 0..8 {
            let mut file = 0;
            while file < 8 {
                if !has(pawns, file, rank) {
                    file += 1;
                    continue;
                }
                let start = file;
                while file < 8 && has(pawns, file, rank) {
                    file += 1;
                }
                let run = file - start;
                if run == len || (or_longer && run > len) {
                    for member in start..file {
                        set(&mut result, member, rank);
                    }
                }
            }
        }
        result
    }

    fn naive_bishop_pair(bishops: u64) -> bool {
        let mut light = false;
        let mut dark = false;
        for rank in 0..8 {
            for file in 0..8 {
                if has(bishops, file, rank) {
                    if (file + rank) % 2 == 1 {
                        light = true;
                    } else {
                        dark = true;
                    }
                }
            }
        }
        light && dark
    }

    #[test]
    fn square_colours_match_naive() {
        for rank in 0..8 {
            for file in 0..8 {
                let light = (file + rank) % 2 == 1;
                assert_eq!(has(LIGHT_SQUARES, file, rank), light);
                assert_eq!(has(DARK_SQUARES, file, rank), !light);
            }
        }
        for file in 0..8 {
            for rank in 0..8 {
                assert_eq!(has(FILE_A, file, rank), file == 0);
                assert_eq!(has(FILE_H, file, rank), file == 7);
            }
        }
    }

    // ---- property tests --------------------------------------------------

    const RANKS_2_TO_7: u64 = 0x00ff_ffff_ffff_ff00;

    /// Random sets of every density: dense, about a quarter, about an eighth.
    fn any_set() -> impl Strategy<Value = u64> {
        prop_oneof![
            any::<u64>(),
            (any::<u64>(), any::<u64>()).prop_map(|(a, b)| a & b),
            (any::<u64>(), any::<u64>(), any::<u64>()).prop_map(|(a, b, c)| a & b & c),
        ]
    }

    /// Random sets, also restricted to ranks 2-7 where pawns can stand.
    fn pawn_set() -> impl Strategy<Value = u64> {
        prop_oneof![any_set(), any_set().prop_map(|bb| bb & RANKS_2_TO_7)]
    }

    fn check_all(pawns: u64) -> Result<(), TestCaseError> {
        prop_assert_eq!(fileset(pawns), naive_fileset(pawns));
        prop_assert_eq!(islands(pawns), naive_islands(pawns));
        prop_assert_eq!(dispersion(pawns), naive_dispersion(pawns));
        prop_assert_eq!(rear_fill_white(pawns), naive_rear_fill_white(pawns));
        prop_assert_eq!(rear_fill_black(pawns), naive_rear_fill_black(pawns));
        prop_assert_eq!(
            distortion_white(pawns),
            naive_distortion(naive_rear_fill_white(pawns))
        );
        prop_assert_eq!(
            distortion_black(pawns),
            naive_distortion(naive_rear_fill_black(pawns))
        );
        prop_assert_eq!(duo(pawns), naive_runs(pawns, 2, false));
        prop_assert_eq!(trio(pawns), naive_runs(pawns, 3, false));
        prop_assert_eq!(quart(pawns), naive_runs(pawns, 4, true));
        prop_assert_eq!(bishop_pair(pawns), naive_bishop_pair(pawns));
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn kernels_match_naive(pawns in pawn_set()) {
            check_all(pawns)?;
        }

        #[test]
        fn side_features_match_kernels(pawns in pawn_set()) {
            let common = |distortion| SideFeatures {
                islands: naive_islands(pawns),
                dispersion: naive_dispersion(pawns),
                distortion,
                duo: naive_runs(pawns, 2, false),
                trio: naive_runs(pawns, 3, false),
                quart: naive_runs(pawns, 4, true),
            };
            prop_assert_eq!(
                SideFeatures::white(pawns),
                common(naive_distortion(naive_rear_fill_white(pawns)))
            );
            prop_assert_eq!(
                SideFeatures::black(pawns),
                common(naive_distortion(naive_rear_fill_black(pawns)))
            );
        }

        /// Every count of the list stays within its `max`, and a side's values read back
        /// through [`SideFeatures::from_stored`] give the same features.
        #[test]
        fn the_list_bounds_and_round_trips(pawns in pawn_set()) {
            for f in [SideFeatures::white(pawns), SideFeatures::black(pawns)] {
                for (spec, v) in SIDE_FEATURES.iter().zip(f.values()) {
                    if let Kind::Count { max } = spec.kind {
                        prop_assert!(v <= u64::from(max), "{} {v} > {max}", spec.name);
                    }
                }
                let stored = f.values().map(|v| v as i64);
                prop_assert_eq!(SideFeatures::from_stored(stored), Ok(f));
            }
        }

        #[test]
        fn runs_partition_non_isolated_pawns(pawns in pawn_set()) {
            let (d, t, q) = (duo(pawns), trio(pawns), quart(pawns));
            prop_assert_eq!(d & t, 0);
            prop_assert_eq!(d & q, 0);
            prop_assert_eq!(t & q, 0);
            prop_assert_eq!(d | t | q, pawns & (east(pawns) | west(pawns)));
            prop_assert_eq!(d.count_ones() % 2, 0);
            prop_assert_eq!(t.count_ones() % 3, 0);
        }

        #[test]
        fn bishop_pair_matches_naive(bishops in any_set()) {
            prop_assert_eq!(bishop_pair(bishops), naive_bishop_pair(bishops));
        }

        #[test]
        fn bishop_pair_of_few_bishops(squares in prop::collection::vec(0u32..64, 0..4)) {
            let bishops = squares.iter().fold(0u64, |acc, &sq| acc | 1 << sq);
            prop_assert_eq!(bishop_pair(bishops), naive_bishop_pair(bishops));
        }
    }
}
