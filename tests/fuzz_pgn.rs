//! Mutation fuzzing on stable Rust: real PGN (the repository's sample and fixtures) is damaged
//! with byte flips, truncation, splices of two games, giant tokens and random bytes, then read
//! and replayed through the library's pipeline stages. Invariants: no panic, the reader always
//! terminates, every game read ends as exactly one of indexed or rejected, every reject has a
//! reason, and every indexed game's runs cover plies 0..=plies exactly once.
//!
//! A handful of mutated files also go through the real binary into a real database, checking
//! the summary adds up and `PRAGMA integrity_check` is ok.

use std::process::Command;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use pawndex::{Counting, PgnGames, Replayed, replay};
use proptest::prelude::*;

fn seed_pgn() -> Vec<u8> {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut all = Vec::new();
    for f in [
        "examples/sample.pgn",
        "tests/fixtures/edge.pgn",
        "tests/fixtures/chess960.pgn",
        "tests/fixtures/bad.pgn",
    ] {
        all.extend(std::fs::read(format!("{root}/{f}")).unwrap());
        all.extend_from_slice(b"\n\n");
    }
    all
}

#[derive(Clone, Debug)]
enum Mutation {
    Flip { at: usize, byte: u8 },
    Truncate { at: usize },
    Splice { from: usize, to: usize, len: usize },
    GiantToken { at: usize, len: usize, byte: u8 },
    Random { at: usize, bytes: Vec<u8> },
    Delete { at: usize, len: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Flip { at, byte }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        (any::<usize>(), any::<usize>(), 1usize..4000)
            .prop_map(|(from, to, len)| Mutation::Splice { from, to, len }),
        (
            any::<usize>(),
            1usize..300_000,
            prop::sample::select(b"a1({[\"x-;%\n".to_vec())
        )
            .prop_map(|(at, len, byte)| Mutation::GiantToken { at, len, byte }),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..64))
            .prop_map(|(at, bytes)| Mutation::Random { at, bytes }),
        (any::<usize>(), 1usize..200).prop_map(|(at, len)| Mutation::Delete { at, len }),
    ]
}

fn apply(data: &mut Vec<u8>, m: &Mutation) {
    let n = data.len().max(1);
    match m {
        Mutation::Flip { at, byte } => {
            let i = at % n;
            if i < data.len() {
                data[i] ^= byte | 1;
            }
        }
        Mutation::Truncate { at } => data.truncate(at % n),
        Mutation::Splice { from, to, len } => {
            let from = from % n;
            let end = (from + len).min(data.len());
            let piece = data[from..end].to_vec();
            let to = to % n;
            data.splice(to..to, piece);
        }
        Mutation::GiantToken { at, len, byte } => {
            let at = at % n;
            data.splice(at..at, std::iter::repeat_n(*byte, *len));
        }
        Mutation::Random { at, bytes } => {
            let at = at % n;
            data.splice(at..at, bytes.iter().copied());
        }
        Mutation::Delete { at, len } => {
            let at = at % n;
            let end = (at + len).min(data.len());
            data.drain(at..end);
        }
    }
}

/// Reads and replays everything; returns (games read, indexed, rejected).
fn pipeline(data: &[u8]) -> (usize, usize, usize) {
    let decoded = Arc::new(AtomicU64::new(0));
    let reader = Counting::new(data, decoded.clone());
    let mut games = PgnGames::new(reader, decoded, Arc::new(Mutex::new(None)));
    let (mut read, mut indexed, mut rejected) = (0, 0, 0);
    let mut last_offset = None;
    loop {
        let game = match games.next_game() {
            Ok(Some(g)) => g,
            Ok(None) => break,
            Err(e) => panic!("an in-memory stream cannot fail: {}", e.message),
        };
        assert!(
            last_offset.is_none_or(|o| game.offset >= o),
            "offsets go forward"
        );
        assert!(game.offset as usize <= data.len());
        last_offset = Some(game.offset);
        read += 1;
        match replay(game) {
            Replayed::Game(g) => {
                indexed += 1;
                let mut next = 0;
                for r in &g.runs {
                    assert_eq!(r.first_ply, next, "runs are contiguous");
                    assert!(r.last_ply >= r.first_ply);
                    next = r.last_ply + 1;
                }
                assert_eq!(next, g.plies + 1, "runs cover plies 0..=plies");
                assert_eq!(g.moves.len(), 2 * g.plies as usize);
            }
            Replayed::Rejected(r) => {
                rejected += 1;
                assert!(!r.reason.trim().is_empty());
            }
            Replayed::Copy => panic!("replay never makes a copy"),
        }
        assert!(read < 1_000_000, "reader does not loop forever");
    }
    (read, indexed, rejected)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn mutated_pgn_never_breaks_the_pipeline(muts in prop::collection::vec(mutation(), 1..6)) {
        let mut data = seed_pgn();
        for m in &muts {
            apply(&mut data, m);
        }
        let (read, indexed, rejected) = pipeline(&data);
        prop_assert_eq!(read, indexed + rejected);
    }

    #[test]
    fn random_bytes_never_break_the_pipeline(data in prop::collection::vec(any::<u8>(), 0..5000)) {
        let (read, indexed, rejected) = pipeline(&data);
        prop_assert_eq!(read, indexed + rejected);
    }
}

#[test]
fn unmutated_seed_reads_every_game() {
    let (read, indexed, rejected) = pipeline(&seed_pgn());
    assert!(read >= 40, "{read}");
    assert!(indexed >= 30 && rejected >= 5, "{indexed} {rejected}");
}

/// Summary line: "N games read: A indexed, B duplicates, C rejected".
fn summary_counts(stderr: &str) -> (u64, u64, u64, u64) {
    let line = stderr
        .lines()
        .find(|l| l.contains("games read:"))
        .unwrap_or_else(|| panic!("no summary in {stderr}"));
    let nums: Vec<u64> = line
        .replace(',', "")
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    // [files, read, indexed, duplicates, rejected, plies, ...]
    (nums[1], nums[2], nums[3], nums[4])
}

#[test]
fn mutated_files_through_the_binary_keep_the_database_sound() {
    let dir = tempfile::tempdir().unwrap();
    let seed = seed_pgn();
    let mut files = Vec::new();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for i in 0..8 {
        let mut data = seed.clone();
        for _ in 0..4 {
            let at = next() as usize;
            let m = match next() % 5 {
                0 => Mutation::Flip {
                    at,
                    byte: next() as u8,
                },
                1 => Mutation::Truncate { at },
                2 => Mutation::Splice {
                    from: at,
                    to: next() as usize,
                    len: 2000,
                },
                3 => Mutation::GiantToken {
                    at,
                    len: 100_000,
                    byte: b'(',
                },
                _ => Mutation::Delete { at, len: 50 },
            };
            apply(&mut data, &m);
        }
        let path = dir.path().join(format!("m{i}.pgn"));
        std::fs::write(&path, &data).unwrap();
        files.push(path);
    }
    let db = dir.path().join("f.db");
    let out = Command::new(env!("CARGO_BIN_EXE_pawndex"))
        .arg("index")
        .arg("--db")
        .arg(&db)
        .args(&files)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(matches!(out.status.code(), Some(0 | 1)), "{stderr}");
    let (read, indexed, dups, rejected) = summary_counts(&stderr);
    assert_eq!(read, indexed + dups + rejected, "{stderr}");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let games: u64 = conn
        .query_row("SELECT count(*) FROM games", [], |r| r.get(0))
        .unwrap();
    assert_eq!(games, indexed);
    let empty_reasons: u64 = conn
        .query_row(
            "SELECT count(*) FROM rejects WHERE trim(reason) = ''",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(empty_reasons, 0);
    // Whole games only: every game has exactly plies + 1 rows.
    let bad: u64 = conn
        .query_row(
            "SELECT count(*) FROM games g
             WHERE g.plies + 1 != (SELECT count(*) FROM ply_features f WHERE f.game_id = g.id)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(bad, 0);
}
