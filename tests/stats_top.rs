//! `--top` over whole structures on real games (one masters shard from `../shared`): the
//! shortcut through the most frequent pawn sets (only their structures grouped, exact when the
//! n-th reaches the floor) gives what the full counting pass gives. The fixtures are too small
//! for the shortcut to prune anything (fewer pawn sets than it keeps per side).

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::BIN;

fn stats(db: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let out = Command::new(BIN)
        .arg("stats")
        .arg("--db")
        .arg(db)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "stats {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn top_structures_through_the_frequent_sets_equal_the_counting_pass() {
    let Some(shard) = common::corpus_shard("masters-1.pgn.zst") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m1.db");
    let out = Command::new(BIN)
        .args(["index", "-q", "--db"])
        .arg(&db)
        .arg(&shard)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The shortcut only prunes when a side has more pawn sets than it keeps (512).
    let conn = rusqlite::Connection::open(&db).unwrap();
    let white_sets: i64 = conn
        .query_row("SELECT count(*) FROM pawn_sets WHERE side = 0", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(white_sets > 10_000, "{white_sets} White pawn sets");
    drop(conn);

    let requests: [(&[&str], usize); 4] = [
        (&["--report", "top-structures"], 20),
        (
            &[
                "--by",
                "white_pawns,black_pawns",
                "--top",
                "100",
                "--per",
                "game",
            ],
            100,
        ),
        (
            &["--by", "white_pawns,black_pawns,pawn_fen", "--top", "1"],
            1,
        ),
        (
            &[
                "--by",
                "black_pawns,white_pawns",
                "--top",
                "50",
                "--per",
                "position",
            ],
            50,
        ),
    ];
    for (args, n) in requests {
        let fast = stats(&db, args, &[("PAWNDEX_TIMINGS", "1")]);
        let stderr = String::from_utf8_lossy(&fast.stderr);
        assert!(
            stderr.contains("runs of the top sets grouped")
                && !stderr.contains("counting every structure"),
            "{args:?} did not take the shortcut exactly:\n{stderr}"
        );
        let full = stats(&db, args, &[("PAWNDEX_PLAN", "scan")]);
        let rows = String::from_utf8_lossy(&fast.stdout).lines().count();
        assert_eq!(rows, n + 1, "{args:?}: header and {n} rows");
        assert_eq!(
            String::from_utf8_lossy(&fast.stdout),
            String::from_utf8_lossy(&full.stdout),
            "{args:?}"
        );
    }
}
