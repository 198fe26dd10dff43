//! How far apart two pawn structures are: the distance `pawndex similar` ranks by, and the words
//! that say what differs.
//!
//! A structure is a pair of bitboards (White's pawns, Black's pawns; a1 = bit 0). The distance
//! is a sum over the two sides and the eight files:
//!
//! ```text
//! distance(A, B) = Σ side Σ file  weight(file) · file_cost(A's pawns of that side on the file,
//!                                                         B's pawns of that side on the file)
//! ```
//!
//! - **file_cost**: the pawns of one side on one file are matched in order (the rearmost with
//!   the rearmost, …); when one structure has more pawns there, the pawns left without a
//!   partner are the ones that make the cost least. A matched pair costs the number of ranks
//!   between its pawns, a pawn without a partner costs [`MISSING`] (4). Since 4 + 4 is more than
//!   any rank difference (at most 7), all the pawns of the side with fewer are always matched.
//! - **weight**: [`CENTRE_WEIGHT`] (2) for the c-, d-, e- and f-files, [`WING_WEIGHT`] (1) for the
//!   a-, b-, g- and h-files; with `ignore_wings` the wing files weigh 0 (they are not compared).
//! - **options**: with `mirror`, the distance is the smaller of the distance to B and to B
//!   mirrored (a-file ↔ h-file, for both sides); with `colour_reversed`, the smaller of the
//!   distance to B and to B with colours swapped and the board turned (a White pawn on d4
//!   becomes a Black pawn on d5); with both, the least of the four.
//!
//! So one rank on a wing costs 1, one rank in the centre 2, a missing or extra wing pawn 4 and a
//! missing or extra centre pawn 8. Properties (tested with proptest in this module):
//! the distance is 0 exactly for the same pawns (without options; with `ignore_wings`, exactly
//! for the same pawns on the c- to f-files), symmetric, and obeys the triangle inequality with
//! any options (file_cost is a matching distance in which a partner-less pawn is matched to a
//! "ghost" 4 away from every rank, a metric because 4 + 4 ≥ 7; mirroring and colour reversal
//! preserve it, and the least over such a group of symmetries is again a metric). With
//! `mirror`, a structure and its mirror image are at distance 0.
//!
//! Each side contributes its own part ([`side_part`]), which depends only on that side's pawns
//! and the target's pawns of the same side: `pawndex similar` ranks each side's distinct pawn
//! sets on their own before it pairs them.
//!
//! ```
//! use pawndex::similar::{Options, Pawns, distance, explain};
//!
//! // . . . . . . . .   8
//! // p p . . . p p p   7   Black: a7 b7 c6 d5 f7 g7 h7
//! // . . p . . . . .   6
//! // . . . p . . . .   5
//! // . . . P . . . .   4   White: a2 b2 d4 e3 f2 g2 h2 (the Carlsbad)
//! // . . . . P . . .   3
//! // P P . . . P P P   2
//! // . . . . . . . .   1
//! //  a b c d e f g h
//! let carlsbad = Pawns { white: 0x0000_0000_0810_E300, black: 0x00E3_0408_0000_0000 };
//! // The same with White's e-pawn on e4 (one rank in the centre: 2) and no Black a-pawn
//! // (a missing wing pawn: 4).
//! let other = Pawns { white: 0x0000_0000_1800_E300, black: 0x00E2_0408_0000_0000 };
//! let plain = Options::default();
//! assert_eq!(distance(other, carlsbad, plain), 6);
//! assert_eq!(explain(other, carlsbad, plain), "White e-pawn on e4 not e3; no Black a-pawn");
//! // Without the wings only the e-pawn counts.
//! let centre = Options { ignore_wings: true, ..plain };
//! assert_eq!(distance(other, carlsbad, centre), 2);
//! // The colour-reversed Carlsbad is far from the Carlsbad, unless reversal is allowed.
//! let reversed = carlsbad.colour_reversed();
//! assert!(distance(reversed, carlsbad, plain) > 0);
//! let either = Options { colour_reversed: true, ..plain };
//! assert_eq!(distance(reversed, carlsbad, either), 0);
//! assert_eq!(explain(reversed, carlsbad, either), "colours reversed; same pawns");
//! ```

/// What a pawn without a partner on its file costs (before the file's weight).
pub const MISSING: u32 = 4;
/// The weight of the c-, d-, e- and f-files.
pub const CENTRE_WEIGHT: u32 = 2;
/// The weight of the a-, b-, g- and h-files (0 with `ignore_wings`).
pub const WING_WEIGHT: u32 = 1;

/// The pawns of a structure, one bitboard per side (a1 = bit 0).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Pawns {
    pub white: u64,
    pub black: u64,
}

impl Pawns {
    /// The same pawns with the a-file and the h-file exchanged (b and g, …).
    #[must_use]
    pub fn mirrored(self) -> Pawns {
        Pawns {
            white: mirror(self.white),
            black: mirror(self.black),
        }
    }

    /// Colours swapped and the board turned: a White pawn on d4 becomes a Black pawn on d5.
    #[must_use]
    pub fn colour_reversed(self) -> Pawns {
        Pawns {
            white: self.black.swap_bytes(),
            black: self.white.swap_bytes(),
        }
    }
}

/// One bitboard with its files exchanged a ↔ h, b ↔ g, c ↔ f, d ↔ e.
#[must_use]
pub fn mirror(bb: u64) -> u64 {
    bb.reverse_bits().swap_bytes()
}

/// Which forms of the target the distance may compare with.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct Options {
    /// The a-, b-, g- and h-files weigh 0.
    pub ignore_wings: bool,
    /// The target's mirror image (a ↔ h) counts as well.
    pub mirror: bool,
    /// The target with colours swapped and the board turned counts as well.
    pub colour_reversed: bool,
}

/// A form of the target the distance may compare with.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    pub mirrored: bool,
    pub reversed: bool,
}

impl Options {
    /// The forms of the target these options allow, the plain one first.
    #[must_use]
    pub fn variants(self) -> Vec<Variant> {
        let mut out = Vec::with_capacity(4);
        for reversed in [false, true] {
            for mirrored in [false, true] {
                if (!mirrored || self.mirror) && (!reversed || self.colour_reversed) {
                    out.push(Variant { mirrored, reversed });
                }
            }
        }
        out
    }
}

impl Variant {
    /// The target in this form.
    #[must_use]
    pub fn apply(self, p: Pawns) -> Pawns {
        let p = if self.reversed {
            p.colour_reversed()
        } else {
            p
        };
        if self.mirrored { p.mirrored() } else { p }
    }
}

/// The weight of a file (0 = a-file … 7 = h-file).
#[must_use]
pub fn file_weight(file: u32, ignore_wings: bool) -> u32 {
    match file {
        2..=5 => CENTRE_WEIGHT,
        _ if ignore_wings => 0,
        _ => WING_WEIGHT,
    }
}

/// The ranks (0-based, ascending) of the pawns on one file of a bitboard.
fn file_ranks(bb: u64, file: u32) -> ([u8; 8], usize) {
    let mut ranks = [0u8; 8];
    let mut n = 0;
    for rank in 0..8u8 {
        if bb >> (u32::from(rank) * 8 + file) & 1 == 1 {
            ranks[n] = rank;
            n += 1;
        }
    }
    (ranks, n)
}

/// The best in-order matching of all of `short` into `long` (`short.len() <= long.len()`):
/// its cost (rank differences) and, per pawn of `short`, the index of its partner in `long`.
fn matching(short: &[u8], long: &[u8]) -> (u32, [usize; 8]) {
    let (n, m) = (short.len(), long.len());
    // dp[i][j]: the least cost of matching short[..i] into long[..j].
    let mut dp = [[u32::MAX; 9]; 9];
    for cell in dp[0].iter_mut().take(m + 1) {
        *cell = 0;
    }
    for i in 1..=n {
        for j in i..=m {
            let skip = dp[i][j - 1];
            let take =
                dp[i - 1][j - 1].saturating_add(u32::from(short[i - 1].abs_diff(long[j - 1])));
            dp[i][j] = skip.min(take);
        }
    }
    let mut partner = [0usize; 8];
    let (mut i, mut j) = (n, m);
    while i > 0 {
        let take = dp[i - 1][j - 1].saturating_add(u32::from(short[i - 1].abs_diff(long[j - 1])));
        if dp[i][j] == take {
            partner[i - 1] = j - 1;
            i -= 1;
        } else {
            // dp[i][j] came from skipping long[j - 1] (so j > i here).
        }
        j -= 1;
    }
    (dp[n][m], partner)
}

/// The cost of one side's pawns on one file (before the weight): rank differences of the
/// matched pawns plus [`MISSING`] per pawn without a partner.
#[must_use]
pub fn file_cost(a: u64, b: u64, file: u32) -> u32 {
    const FILE: u64 = 0x0101_0101_0101_0101;
    let (fa, fb) = (a & FILE << file, b & FILE << file);
    // The usual cases without the matching: no pawn on one side, one pawn on each.
    match (fa.count_ones(), fb.count_ones()) {
        (0, n) | (n, 0) => return MISSING * n,
        (1, 1) => return (fa.trailing_zeros() / 8).abs_diff(fb.trailing_zeros() / 8),
        _ => {}
    }
    let (ra, na) = file_ranks(a, file);
    let (rb, nb) = file_ranks(b, file);
    let (short, long) = if na <= nb {
        (&ra[..na], &rb[..nb])
    } else {
        (&rb[..nb], &ra[..na])
    };
    let (cost, _) = matching(short, long);
    cost + MISSING * (long.len() - short.len()) as u32
}

/// One side's part of the distance: Σ over files of weight · [`file_cost`] (symmetric in `a`
/// and `b`; the same function for either side).
#[must_use]
pub fn side_part(a: u64, b: u64, ignore_wings: bool) -> u32 {
    const FILE: u64 = 0x0101_0101_0101_0101;
    let mut total = 0;
    for file in 0..8 {
        let mask = FILE << file;
        if a & mask == b & mask {
            continue;
        }
        let w = file_weight(file, ignore_wings);
        if w != 0 {
            total += w * file_cost(a, b, file);
        }
    }
    total
}

/// The 8 squares of one file of a bitboard as a byte (a bijection, for table lookups).
#[inline]
fn file_key(bb: u64, file: u32) -> usize {
    const FILE: u64 = 0x0101_0101_0101_0101;
    (((bb >> file) & FILE).wrapping_mul(0x0102_0408_1020_4080) >> 56) as usize
}

/// [`side_part`] against one fixed target, as eight tables of 256 entries (one per file, by
/// the pawns on that file): the same value from eight lookups, for ranking many pawn sets.
#[derive(Clone, Debug)]
pub struct PartTable {
    files: Box<[[u16; 256]; 8]>,
}

impl PartTable {
    /// The table of `side_part(_, target, ignore_wings)`.
    #[must_use]
    pub fn new(target: u64, ignore_wings: bool) -> PartTable {
        let mut files = Box::new([[0u16; 256]; 8]);
        for file in 0..8u32 {
            let w = file_weight(file, ignore_wings);
            for column in 0..256u32 {
                let mut bb = 0u64;
                for rank in 0..8 {
                    if column >> rank & 1 == 1 {
                        bb |= 1 << (rank * 8 + file);
                    }
                }
                let cost = w * file_cost(bb, target, file);
                files[file as usize][file_key(bb, file)] = u16::try_from(cost).unwrap_or(u16::MAX);
            }
        }
        PartTable { files }
    }

    /// `side_part(pawns, target, ignore_wings)`.
    #[inline]
    #[must_use]
    pub fn part(&self, pawns: u64) -> u32 {
        (0..8u32)
            .map(|f| u32::from(self.files[f as usize][file_key(pawns, f)]))
            .sum()
    }
}

/// Every set of one side's pawns (on ranks 2 to 7, where pawns stand) whose [`side_part`]
/// against `target` is at most `radius`, in no particular order; `None` when there are more
/// than `cap` of them. `pawndex similar` looks these few bitboards up instead of ranking every
/// pawn set of the database; with `ignore_wings` the wings are free, so the sets are many and
/// the answer is usually `None`.
///
/// ```
/// use pawndex::similar::{neighbours, side_part};
///
/// // White a2 b2 d4 e3 f2 g2 h2 (the Carlsbad): within 1, itself and one wing pawn a rank up.
/// let carlsbad = 0x0000_0000_0810_E300;
/// let near = neighbours(carlsbad, 1, false, 1000).unwrap();
/// assert_eq!(near.len(), 5); // itself, a3, b3, g3, h3
/// assert!(near.iter().all(|&bb| side_part(bb, carlsbad, false) <= 1));
/// assert_eq!(neighbours(carlsbad, 30, false, 1000), None); // too many
/// ```
#[must_use]
pub fn neighbours(target: u64, radius: u32, ignore_wings: bool, cap: usize) -> Option<Vec<u64>> {
    // Per file, the columns (pawns on ranks 2 to 7 of that file) by their weighted cost.
    let mut files: Vec<Vec<(u32, u64)>> = Vec::with_capacity(8);
    for file in 0..8u32 {
        let w = file_weight(file, ignore_wings);
        let mut columns: Vec<(u32, u64)> = (0..64u64)
            .map(|c| {
                let mut bb = 0u64;
                for r in 0..6 {
                    if c >> r & 1 == 1 {
                        bb |= 1 << ((r + 1) * 8 + file);
                    }
                }
                (w * file_cost(bb, target, file), bb)
            })
            .filter(|&(cost, _)| cost <= radius)
            .collect();
        columns.sort_unstable();
        files.push(columns);
    }
    fn walk(files: &[Vec<(u32, u64)>], left: u32, bb: u64, out: &mut Vec<u64>, cap: usize) -> bool {
        let Some((columns, rest)) = files.split_first() else {
            out.push(bb);
            return out.len() <= cap;
        };
        for &(cost, column) in columns {
            if cost > left {
                break;
            }
            if !walk(rest, left - cost, bb | column, out, cap) {
                return false;
            }
        }
        true
    }
    let mut out = Vec::new();
    walk(&files, radius, 0, &mut out, cap).then_some(out)
}

/// The distance between two structures (see the module documentation): the least, over the
/// forms of `b` the options allow, of the White part plus the Black part.
#[must_use]
pub fn distance(a: Pawns, b: Pawns, options: Options) -> u32 {
    options
        .variants()
        .into_iter()
        .map(|v| plain_distance(a, v.apply(b), options.ignore_wings))
        .min()
        .unwrap_or(0)
}

fn plain_distance(a: Pawns, b: Pawns, ignore_wings: bool) -> u32 {
    side_part(a.white, b.white, ignore_wings) + side_part(a.black, b.black, ignore_wings)
}

/// The form of `target` closest to `a` (the first of the closest, in [`Options::variants`]
/// order).
#[must_use]
pub fn closest_variant(a: Pawns, target: Pawns, options: Options) -> Variant {
    options
        .variants()
        .into_iter()
        .min_by_key(|v| plain_distance(a, v.apply(target), options.ignore_wings))
        .unwrap_or(Variant {
            mirrored: false,
            reversed: false,
        })
}

fn square_name(file: u32, rank: u8) -> String {
    format!("{}{}", (b'a' + file as u8) as char, rank + 1)
}

/// The squares of a bitboard in the one order pawndex lists squares in: file by file (a to h),
/// each file from rank 1 to 8: `["a2", "a3", "b2", "d4"]`.
#[must_use]
pub fn square_names(bb: u64) -> Vec<String> {
    (0..8u32)
        .flat_map(|file| (0..8u8).map(move |rank| (file, rank)))
        .filter(|&(file, rank)| bb >> (u32::from(rank) * 8 + file) & 1 == 1)
        .map(|(file, rank)| square_name(file, rank))
        .collect()
}

/// [`square_names`] joined by spaces: "a2 a3 b2 d4".
#[must_use]
pub fn square_list(bb: u64) -> String {
    square_names(bb).join(" ")
}

/// What [`explain`] says when the pawns differ only on wings that `ignore_wings` leaves out.
pub const SAME_CENTRE: &str = "same pawns on the c- to f-files";

/// What differs between `a` and `target`, in words, from `a`'s point of view against the
/// closest form of the target: "White c-pawn on c3 not c4; no Black a-pawn; extra White pawn
/// on g3". Files are listed a to h, White before Black; ignored wings are not mentioned. The
/// form is named first when it is not the plain one ("mirrored; …", "colours reversed; …");
/// "same pawns" when nothing differs ([`SAME_CENTRE`] when only ignored wings differ).
#[must_use]
pub fn explain(a: Pawns, target: Pawns, options: Options) -> String {
    let v = closest_variant(a, target, options);
    let t = v.apply(target);
    let mut parts: Vec<String> = Vec::new();
    if v.reversed {
        parts.push("colours reversed".into());
    }
    if v.mirrored {
        parts.push("mirrored".into());
    }
    let mut diffs = Vec::new();
    for (side, mine, theirs) in [("White", a.white, t.white), ("Black", a.black, t.black)] {
        for file in 0..8u32 {
            if file_weight(file, options.ignore_wings) == 0 {
                continue;
            }
            let letter = (b'a' + file as u8) as char;
            let (ra, na) = file_ranks(mine, file);
            let (rb, nb) = file_ranks(theirs, file);
            let (ra, rb) = (&ra[..na], &rb[..nb]);
            if ra == rb {
                continue;
            }
            if na == 0 {
                diffs.push(format!("no {side} {letter}-pawn"));
                continue;
            }
            let a_short = na <= nb;
            let (short, long) = if a_short { (ra, rb) } else { (rb, ra) };
            let (_, partner) = matching(short, long);
            let mut used = [false; 8];
            for (i, &s) in short.iter().enumerate() {
                let l = long[partner[i]];
                used[partner[i]] = true;
                let (mine_rank, their_rank) = if a_short { (s, l) } else { (l, s) };
                if mine_rank != their_rank {
                    diffs.push(format!(
                        "{side} {letter}-pawn on {} not {}",
                        square_name(file, mine_rank),
                        square_name(file, their_rank)
                    ));
                }
            }
            for (j, &l) in long.iter().enumerate() {
                if !used[j] {
                    diffs.push(if a_short {
                        format!("no {side} pawn on {}", square_name(file, l))
                    } else {
                        format!("extra {side} pawn on {}", square_name(file, l))
                    });
                }
            }
        }
    }
    if diffs.is_empty() {
        // Without the wings, "same pawns" would claim more than was compared.
        diffs.push(if a == t {
            "same pawns".into()
        } else {
            SAME_CENTRE.into()
        });
    }
    parts.extend(diffs);
    parts.join("; ")
}

/// One ranked structure.
#[derive(Clone, Debug, PartialEq)]
pub struct Similar {
    pub pawns: Pawns,
    /// The ids of its White and Black pawn sets (`pawn_sets.id`).
    pub sets: (i64, i64),
    pub distance: u32,
    pub differs: String,
    pub positions: u64,
    pub games: u64,
    /// White's points (a win 2, a draw 1) and the games with a result.
    pub points: u64,
    pub scored: u64,
}

impl Similar {
    /// White's score in percent over the games with a result, `None` without one.
    #[must_use]
    pub fn white_score(&self) -> Option<f64> {
        crate::model::outcome::white_score(self.points, self.scored)
    }
}

/// The board part of a FEN holding only the pawns ("8/pp3ppp/2p5/…").
#[must_use]
pub fn pawn_board(p: Pawns) -> String {
    let mut out = String::new();
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            let sq = rank * 8 + file;
            let c = if p.white >> sq & 1 == 1 {
                Some('P')
            } else if p.black >> sq & 1 == 1 {
                Some('p')
            } else {
                None
            };
            match c {
                Some(c) => {
                    if empty > 0 {
                        out.push_str(&empty.to_string());
                        empty = 0;
                    }
                    out.push(c);
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            out.push_str(&empty.to_string());
        }
        if rank > 0 {
            out.push('/');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The distance computed square by square: per side and file, every way of giving each
    /// pawn of the side with fewer pawns there a different partner (in any order) is tried.
    fn naive(a: Pawns, b: Pawns, ignore_wings: bool) -> u32 {
        fn best(short: &[u8], long: &[u8], used: &mut Vec<bool>) -> u32 {
            let Some((&first, rest)) = short.split_first() else {
                return 0;
            };
            let mut out = u32::MAX;
            for j in 0..long.len() {
                if !used[j] {
                    used[j] = true;
                    let c = u32::from(first.abs_diff(long[j])) + best(rest, long, used);
                    used[j] = false;
                    out = out.min(c);
                }
            }
            out
        }
        let mut total = 0;
        for (x, y) in [(a.white, b.white), (a.black, b.black)] {
            for file in 0..8u32 {
                let mut rx = Vec::new();
                let mut ry = Vec::new();
                for rank in 0..8u8 {
                    let square = u32::from(rank) * 8 + file;
                    if x >> square & 1 == 1 {
                        rx.push(rank);
                    }
                    if y >> square & 1 == 1 {
                        ry.push(rank);
                    }
                }
                let (short, long) = if rx.len() <= ry.len() {
                    (rx, ry)
                } else {
                    (ry, rx)
                };
                let mut used = vec![false; long.len()];
                let cost =
                    best(&short, &long, &mut used) + MISSING * (long.len() - short.len()) as u32;
                let weight = if (2..=5).contains(&file) {
                    2
                } else if ignore_wings {
                    0
                } else {
                    1
                };
                total += weight * cost;
            }
        }
        total
    }

    /// Pawns on ranks 2 to 7, as in games (a few, so that files with several pawns occur).
    fn pawns() -> impl Strategy<Value = Pawns> {
        let side = prop::collection::vec(8u32..56, 0..10)
            .prop_map(|squares| squares.into_iter().fold(0u64, |bb, s| bb | 1 << s));
        (side.clone(), side).prop_map(|(white, black)| Pawns { white, black })
    }

    fn options() -> impl Strategy<Value = Options> {
        (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(w, m, c)| Options {
            ignore_wings: w,
            mirror: m,
            colour_reversed: c,
        })
    }

    proptest! {
        #[test]
        fn agrees_with_the_square_by_square_version(a in pawns(), b in pawns(), wings in any::<bool>()) {
            let o = Options { ignore_wings: wings, ..Options::default() };
            prop_assert_eq!(distance(a, b, o), naive(a, b, wings));
        }

        #[test]
        fn zero_exactly_for_the_same_pawns(a in pawns(), b in pawns()) {
            let o = Options::default();
            prop_assert_eq!(distance(a, a, o), 0);
            prop_assert_eq!(distance(a, b, o) == 0, a == b);
            prop_assert_eq!(explain(a, b, o) == "same pawns", a == b);
        }

        #[test]
        fn symmetric(a in pawns(), b in pawns(), o in options()) {
            prop_assert_eq!(distance(a, b, o), distance(b, a, o));
        }

        #[test]
        fn triangle_inequality(a in pawns(), b in pawns(), c in pawns(), o in options()) {
            prop_assert!(distance(a, c, o) <= distance(a, b, o) + distance(b, c, o));
        }

        #[test]
        fn triangle_inequality_near(a in pawns(), o in options(), moves in prop::collection::vec((0u32..64, 0u32..64), 1..4)) {
            // Structures a few pawn changes apart, where a broken inequality would show.
            let step = |p: Pawns, &(x, y): &(u32, u32)| Pawns { white: p.white ^ (1 << x), black: p.black ^ (1 << y) };
            let b = moves.iter().take(1).fold(a, step);
            let c = moves.iter().fold(b, step);
            prop_assert!(distance(a, c, o) <= distance(a, b, o) + distance(b, c, o));
        }

        #[test]
        fn mirror_invariance(a in pawns(), b in pawns(), o in options()) {
            let m = Options { mirror: true, ..o };
            prop_assert_eq!(distance(a.mirrored(), b, m), distance(a, b, m));
            prop_assert_eq!(distance(a, b.mirrored(), m), distance(a, b, m));
            prop_assert_eq!(distance(a, a.mirrored(), m), 0);
        }

        #[test]
        fn colour_reversal_invariance(a in pawns(), b in pawns(), o in options()) {
            let c = Options { colour_reversed: true, ..o };
            prop_assert_eq!(distance(a.colour_reversed(), b, c), distance(a, b, c));
            prop_assert_eq!(distance(a, a.colour_reversed(), c), 0);
        }

        #[test]
        fn the_tables_give_the_side_part(a in pawns(), b in pawns(), wings in any::<bool>()) {
            let t = PartTable::new(b.white, wings);
            prop_assert_eq!(t.part(a.white), side_part(a.white, b.white, wings));
            prop_assert_eq!(t.part(a.black), side_part(a.black, b.white, wings));
        }

        #[test]
        fn the_distance_is_the_sum_of_the_side_parts(a in pawns(), b in pawns(), wings in any::<bool>()) {
            let o = Options { ignore_wings: wings, ..Options::default() };
            prop_assert_eq!(
                distance(a, b, o),
                side_part(a.white, b.white, wings) + side_part(a.black, b.black, wings)
            );
        }

        #[test]
        fn explain_says_something_exactly_when_the_distance_is_positive(a in pawns(), b in pawns(), o in options()) {
            let text = explain(a, b, o);
            let same = text.ends_with("same pawns") || text.ends_with(SAME_CENTRE);
            prop_assert_eq!(same, distance(a, b, o) == 0, "{}", text);
            // "same pawns" only for the very same pawns (of the closest form).
            let form = closest_variant(a, b, o).apply(b);
            prop_assert_eq!(text.ends_with("same pawns"), a == form, "{}", text);
        }
    }

    /// Pawns on ranks 2 to 7 only, as stored pawn sets are.
    fn on_pawn_ranks(bb: u64) -> u64 {
        bb & 0x00FF_FFFF_FFFF_FF00
    }

    proptest! {
        #[test]
        fn neighbours_are_exactly_the_sets_within_the_radius(
            target in any::<u64>(),
            flips in proptest::collection::vec(8u32..56, 0..4),
            radius in 0u32..9,
            wings in any::<bool>(),
        ) {
            let target = on_pawn_ranks(target) & 0x0000_FFFF_FFFF_0000 | 0x0000_0000_0000_E700;
            let Some(near) = neighbours(target, radius, wings, 200_000) else {
                return Ok(());
            };
            // All within, no repeats.
            let mut sorted = near.clone();
            sorted.sort_unstable();
            sorted.dedup();
            prop_assert_eq!(sorted.len(), near.len());
            for &bb in &near {
                prop_assert_eq!(bb, on_pawn_ranks(bb));
                prop_assert!(side_part(bb, target, wings) <= radius);
            }
            // A set a few squares away is listed exactly when it is within the radius.
            let mut other = target;
            for f in flips {
                other ^= 1 << f;
            }
            let within = side_part(other, target, wings) <= radius;
            prop_assert_eq!(sorted.binary_search(&other).is_ok(), within);
        }
    }

    #[test]
    fn neighbours_give_up_past_the_cap() {
        let start = 0xFF00;
        let all = neighbours(start, 4, false, usize::MAX).unwrap();
        assert!(all.len() > 10);
        assert_eq!(neighbours(start, 4, false, all.len()), Some(all.clone()));
        assert_eq!(neighbours(start, 4, false, all.len() - 1), None);
    }

    #[test]
    fn ignored_wings_are_not_called_the_same_pawns() {
        let carlsbad = Pawns {
            white: 0x0000_0000_0810_E300,
            black: 0x00E3_0408_0000_0000,
        };
        // White h2-h3: only a wing differs.
        let h3 = Pawns {
            white: carlsbad.white & !(1 << 15) | 1 << 23,
            ..carlsbad
        };
        let centre = Options {
            ignore_wings: true,
            ..Options::default()
        };
        assert_eq!(distance(h3, carlsbad, centre), 0);
        assert_eq!(explain(h3, carlsbad, centre), SAME_CENTRE);
        assert_eq!(explain(carlsbad, carlsbad, centre), "same pawns");
        assert_eq!(
            explain(h3, carlsbad, Options::default()),
            "White h-pawn on h3 not h2"
        );
    }

    #[test]
    fn doubled_pawns_are_matched_in_order() {
        // White c2 c3 against c3 alone: the c3 pawns match, c2 is extra (4 · 2).
        let a = Pawns {
            white: 1 << 10 | 1 << 18,
            black: 0,
        };
        let b = Pawns {
            white: 1 << 18,
            black: 0,
        };
        let o = Options::default();
        assert_eq!(distance(a, b, o), 8);
        assert_eq!(explain(a, b, o), "extra White pawn on c2");
        assert_eq!(explain(b, a, o), "no White pawn on c2");
        // c2 against c4: one pawn two ranks off.
        let c = Pawns {
            white: 1 << 26,
            black: 0,
        };
        assert_eq!(explain(b, c, o), "White c-pawn on c3 not c4");
        assert_eq!(distance(b, c, o), 2);
        assert_eq!(
            explain(
                Pawns {
                    white: 0,
                    black: 1 << 48
                },
                Pawns {
                    white: 0,
                    black: 1 << 48 | 1 << 55
                },
                o
            ),
            "no Black h-pawn"
        );
    }

    #[test]
    fn mirror_is_an_involution() {
        assert_eq!(mirror(1), 1 << 7);
        assert_eq!(mirror(1 << 27), 1 << 28);
        assert_eq!(mirror(mirror(0x0123_4567_89AB_CDEF)), 0x0123_4567_89AB_CDEF);
    }

    #[test]
    fn pawn_boards_are_fen_board_parts() {
        let start = Pawns {
            white: 0xFF00,
            black: 0x00FF_0000_0000_0000,
        };
        assert_eq!(pawn_board(start), "8/pppppppp/8/8/8/8/PPPPPPPP/8");
        let carlsbad = Pawns {
            white: 0x0000_0000_0810_E300,
            black: 0x00E3_0408_0000_0000,
        };
        assert_eq!(pawn_board(carlsbad), "8/pp3ppp/2p5/3p4/3P4/4P3/PP3PPP/8");
    }
}
