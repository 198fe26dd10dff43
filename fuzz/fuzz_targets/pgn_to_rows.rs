//! libFuzzer target for the PGN-to-rows path: arbitrary bytes are read as PGN and every game is
//! replayed into the runs that would be stored. Run with `cargo +nightly fuzz run pgn_to_rows`
//! from the repository root (see README).
#![no_main]

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use libfuzzer_sys::fuzz_target;
use pawndex::{Counting, PgnGames, Replayed, replay};

fuzz_target!(|data: &[u8]| {
    let decoded = Arc::new(AtomicU64::new(0));
    let reader = Counting::new(data, decoded.clone());
    let mut games = PgnGames::new(reader, decoded, Arc::new(Mutex::new(None)));
    while let Ok(Some(game)) = games.next_game() {
        match replay(game) {
            Replayed::Game(g) => {
                let covered: u32 = g.runs.iter().map(|r| r.last_ply - r.first_ply + 1).sum();
                assert_eq!(covered, g.plies + 1);
            }
            Replayed::Rejected(r) => assert!(!r.reason.is_empty()),
        }
    }
});
