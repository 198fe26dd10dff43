//! Copies: games whose text is, byte for byte, the text of a game replayed earlier in the run.
//!
//! Collections overlap. In the four masters shards, 75,407 of the 403,033 games are copies of
//! a game read before them, and they are nearly all of the 75,426 duplicates the writer finds.
//! Replaying a copy can only make the record of its original again, which the writer then
//! drops as a duplicate. So the replay stage does not replay it:
//!
//! ```text
//! batch n:   hash each game's text ──> seen before? ──yes──> Copy (a duplicate, not replayed)
//!                                            │no
//!                                            └──> replay ──> a record? remember its hash
//! ```
//!
//! - The text is the game's tags, its movetext and what follows up to the next game: all a
//!   replay reads, so equal texts replay the same. Games the reader found broken (a syntax
//!   error, a cut-off stream) are neither copies nor remembered.
//! - The hash is XXH3-128. Two different texts share one with a probability of about n²/2¹²⁹
//!   for n games (3e-26 for the 4 million games of the scale corpus): the safety of the two
//!   64-bit hashes the Parquet writer compares, or better.
//! - Only games that replayed into a record are remembered. The copy of a rejected game is
//!   replayed and rejected in its own right, with its own offset; so is the copy of a game with
//!   text after its result, which the warning counts.
//! - A copy in the same batch as its original is replayed, and the writer finds it.
//! - At most [`REMEMBERED`] texts are remembered (about 36 MB). Later games are still looked
//!   up; copies of games not remembered are replayed, and the writer finds them as before.
//! - `--keep-duplicates` turns copies off (and `PAWNDEX_NO_COPIES`, for comparisons).

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use twox_hash::XxHash3_128;

use crate::ingest::reader::RawGame;
use crate::model::game::Replayed;

/// Texts remembered at most: the capacity of a table of 2²¹ slots of 17 bytes.
const REMEMBERED: usize = (1 << 21) / 8 * 7;

/// The hashes of the texts of games replayed into a record, in this run.
pub(super) struct Copies {
    seen: HashSet<u128, BuildHasherDefault<LowBits>>,
}

/// The key of a game whose replay depends on its text alone.
pub(super) fn key(g: &RawGame) -> Option<u128> {
    (g.problem.is_none() && !g.moves_read && !g.text.is_empty())
        .then(|| XxHash3_128::oneshot(&g.text))
}

impl Copies {
    /// Whether this run looks for copies (`--keep-duplicates` keeps every game).
    pub(super) fn wanted(keep_duplicates: bool) -> bool {
        !keep_duplicates && std::env::var_os("PAWNDEX_NO_COPIES").is_none()
    }

    pub(super) fn new() -> Copies {
        Copies {
            seen: HashSet::with_capacity_and_hasher(REMEMBERED, BuildHasherDefault::default()),
        }
    }

    /// Whether the game of `key` is a copy of a game remembered.
    pub(super) fn is_copy(&self, key: Option<u128>) -> bool {
        key.is_some_and(|k| self.seen.contains(&k))
    }

    /// Remembers the text of a game that replayed into a record, with no text after its result.
    pub(super) fn remember(&mut self, key: Option<u128>, stray: Option<u64>, replayed: &Replayed) {
        if let (Some(k), None, Replayed::Game(_)) = (key, stray, replayed)
            && self.seen.len() < REMEMBERED
        {
            self.seen.insert(k);
        }
    }
}

/// The hasher of the set: the low 64 bits of the key, already a good hash.
#[derive(Default)]
struct LowBits(u64);

impl Hasher for LowBits {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u128` keys are hashed (through `write_u128`); fold anything else anyway.
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u128(&mut self, k: u128) {
        self.0 = k as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::reader::ReadProblem;

    fn raw(text: &str) -> RawGame {
        RawGame {
            text: text.as_bytes().to_vec(),
            ..RawGame::default()
        }
    }

    fn record() -> Replayed {
        match crate::ingest::replay::replay(raw("[Event \"x\"]\n\n1. e4 e5 *\n")) {
            r @ Replayed::Game(_) => r,
            other => panic!("not replayed: {other:?}"),
        }
    }

    #[test]
    fn a_copy_is_known_only_after_its_original_replayed_into_a_record() {
        let mut copies = Copies::new();
        let a = key(&raw("[Event \"x\"]\n\n1. e4 e5 *\n"));
        let other = key(&raw("[Event \"x\"]\n\n1. e4 e6 *\n"));
        assert!(a.is_some() && a != other);
        assert!(!copies.is_copy(a));
        copies.remember(a, None, &record());
        assert!(copies.is_copy(a));
        assert!(!copies.is_copy(other));
        assert!(!copies.is_copy(None));
    }

    #[test]
    fn rejects_strays_and_broken_games_are_not_remembered() {
        let mut copies = Copies::new();
        let a = key(&raw("1. e4 e5 *\n"));
        let reject = Replayed::Rejected(crate::model::game::Reject {
            offset: 0,
            event: None,
            white: None,
            black: None,
            ply: None,
            category: crate::ingest::replay::RejectCategory::IllegalMove,
            reason: String::new(),
        });
        copies.remember(a, None, &reject);
        copies.remember(a, Some(12), &record());
        copies.remember(a, None, &Replayed::Copy);
        assert!(!copies.is_copy(a));
        let mut broken = raw("1. e4 e5 *\n");
        broken.problem = Some(ReadProblem::TooLong);
        assert_eq!(key(&broken), None);
        assert_eq!(key(&RawGame::default()), None);
    }

    #[test]
    fn the_set_stops_growing_at_its_capacity() {
        let mut copies = Copies::new();
        let capacity = copies.seen.capacity();
        assert!(capacity >= REMEMBERED);
        let game = record();
        for k in 0..REMEMBERED as u128 + 10 {
            copies.remember(Some(k << 64 | k), None, &game);
        }
        assert_eq!(copies.seen.len(), REMEMBERED);
        assert_eq!(copies.seen.capacity(), capacity, "the table never grew");
        assert!(copies.is_copy(Some(5 << 64 | 5)));
        let late = REMEMBERED as u128 + 5;
        assert!(!copies.is_copy(Some(late << 64 | late)));
    }
}
