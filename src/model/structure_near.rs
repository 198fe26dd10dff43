//! The named structures nearest to pawns that have no name: each form of the catalogue with the
//! conditions the pawns fail, in words ("Carlsbad: Black must have no e-pawn"), fewest first.
//!
//! ```
//! use pawndex::structure::Catalogue;
//! use pawndex::model::structure_near::nearest;
//!
//! let catalogue = Catalogue::builtin().unwrap();
//! // The Carlsbad pawns, but Black still has an e-pawn on e6.
//! let white = 0x0000_0000_0810_E300;
//! let black = 0x00E3_1408_0000_0000;
//! assert_eq!(catalogue.classify(white, black), 0);
//! let near = nearest(&catalogue, white, black, 3);
//! assert_eq!(near[0].key, "carlsbad");
//! assert_eq!(near[0].failing, ["Black must have no e-pawn"]);
//! ```

use crate::model::structure::{Catalogue, SideRule};

/// A named form the pawns nearly have, and what they lack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Near {
    pub key: String,
    pub name: String,
    /// The colour-reversed form (colours swapped, board turned).
    pub reversed: bool,
    /// The conditions the pawns fail, in words; empty when the form matches.
    pub failing: Vec<String>,
}

/// The `n` forms of the catalogue whose conditions the pawns fail least (ties in catalogue
/// order, the normal form first); forms the pawns meet come first, with no failing condition.
#[must_use]
pub fn nearest(catalogue: &Catalogue, white: u64, black: u64, n: usize) -> Vec<Near> {
    let mut all = Vec::new();
    for d in catalogue.definitions() {
        let mut forms = vec![(false, d.white.clone(), d.black.clone())];
        if d.reversed {
            forms.push((true, d.black.turned(), d.white.turned()));
        }
        for (reversed, w, b) in forms {
            let mut fails = failing("White", &w, white);
            fails.extend(failing("Black", &b, black));
            all.push(Near {
                key: d.key.clone(),
                name: d.name.clone(),
                reversed,
                failing: fails,
            });
        }
    }
    // A stable sort keeps catalogue order among equals.
    all.sort_by_key(|near| near.failing.len());
    all.truncate(n);
    all
}

/// The conditions of `rule` that `pawns` (of `side`) fail, in words.
#[must_use]
pub fn failing(side: &str, rule: &SideRule, pawns: u64) -> Vec<String> {
    let mut out = Vec::new();
    let missing = rule.pawns & !pawns;
    for sq in squares(missing) {
        out.push(format!("{side} must have a pawn on {sq}"));
    }
    let mut forbidden = rule.none & pawns;
    for file in 0..8u8 {
        let mask = FILE_RANKS_2_TO_7 << file;
        if rule.none & mask == mask && forbidden & mask != 0 {
            out.push(format!(
                "{side} must have no {}-pawn",
                char::from(b'a' + file)
            ));
            forbidden &= !mask;
        }
    }
    for sq in squares(forbidden) {
        out.push(format!("{side} must have no pawn on {sq}"));
    }
    for &mask in &rule.one_of {
        if pawns & mask == 0 {
            out.push(format!(
                "{side} must have a pawn on one of {}",
                squares(mask).join(", ")
            ));
        }
    }
    for &(mask, lo, hi) in &rule.count {
        let has = (pawns & mask).count_ones();
        if has < lo || has > hi {
            let range = if lo == hi {
                format!("{lo}")
            } else {
                format!("{lo} to {hi}")
            };
            out.push(format!(
                "{side} must have {range} pawn{} on {} (has {has})",
                if hi == 1 { "" } else { "s" },
                where_(mask)
            ));
        }
    }
    out
}

/// A file's squares on ranks 2 to 7 (the squares a file letter stands for in a definition).
const FILE_RANKS_2_TO_7: u64 = 0x0001_0101_0101_0100;

/// The squares of a bitboard by name, a1 first, rank by rank.
fn squares(bb: u64) -> Vec<String> {
    (0..64u8)
        .filter(|i| bb >> i & 1 == 1)
        .map(|i| format!("{}{}", char::from(b'a' + i % 8), i / 8 + 1))
        .collect()
}

/// A mask in words: whole files as "the c- and d-files", else its squares.
fn where_(mask: u64) -> String {
    let files: Vec<u8> = (0..8u8)
        .filter(|f| mask & (FILE_RANKS_2_TO_7 << f) != 0)
        .collect();
    let whole = files
        .iter()
        .fold(0u64, |acc, f| acc | FILE_RANKS_2_TO_7 << f);
    if whole == mask {
        let names: Vec<String> = files
            .iter()
            .map(|f| format!("{}", char::from(b'a' + f)))
            .collect();
        match names.as_slice() {
            [one] => format!("the {one}-file"),
            [rest @ .., last] => format!("the {}- and {last}-files", rest.join("-, ")),
            [] => "no square".to_owned(),
        }
    } else {
        squares(mask).join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(name: &str) -> u64 {
        let b = name.as_bytes();
        1 << ((b[1] - b'1') * 8 + (b[0] - b'a'))
    }

    fn bb(names: &str) -> u64 {
        names.split_whitespace().map(sq).fold(0, |a, s| a | s)
    }

    #[test]
    fn a_matching_form_fails_nothing_and_comes_first() {
        let c = Catalogue::builtin().unwrap();
        let white = bb("a2 b2 d4 e3 f2 g2 h2");
        let black = bb("a7 b7 c6 d5 f7 g7 h7");
        let near = nearest(&c, white, black, 2);
        assert_eq!(near[0].key, "carlsbad");
        assert!(near[0].failing.is_empty());
    }

    #[test]
    fn words_for_each_kind_of_condition() {
        let rule = SideRule {
            pawns: bb("d4"),
            none: FILE_RANKS_2_TO_7 << 2 | bb("e6"),
            one_of: vec![bb("b4 b5")],
            count: vec![(FILE_RANKS_2_TO_7 | FILE_RANKS_2_TO_7 << 1, 1, 1)],
        };
        let failing = failing("White", &rule, bb("a2 b2 c3 e6"));
        assert_eq!(
            failing,
            [
                "White must have a pawn on d4",
                "White must have no c-pawn",
                "White must have no pawn on e6",
                "White must have a pawn on one of b4, b5",
                "White must have 1 pawn on the a- and b-files (has 2)",
            ]
        );
    }

    #[test]
    fn the_reversed_form_is_named_reversed() {
        let c = Catalogue::builtin().unwrap();
        // The Carlsbad turned: White c3 d4 (no e), Black d5 e6 (no c), and a White e-pawn.
        let white = bb("a2 b2 c3 d4 e4 f2 g2 h2");
        let black = bb("a7 b7 d5 e6 f7 g7 h7");
        let near = nearest(&c, white, black, 40);
        let carlsbad = near
            .iter()
            .find(|n| n.key == "carlsbad" && n.reversed)
            .unwrap();
        assert_eq!(carlsbad.failing, ["White must have no e-pawn"]);
    }
}
