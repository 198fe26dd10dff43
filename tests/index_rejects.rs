//! Bad games are rejected with reasons, good ones around them are indexed; duplicates are
//! skipped (within a file and across runs) unless `--keep-duplicates`.

mod common;

use std::path::Path;

use common::*;

/// The good games of bad.pgn: (Event, plies per fixtures.md).
const GOOD: [(&str, i64); 9] = [
    ("pawndex bad: good 1", 13),
    ("pawndex bad: good 2", 4),
    ("pawndex bad: good 3", 17),
    ("pawndex bad: good 4", 12),
    ("pawndex bad: good 5", 16),
    ("pawndex bad: good 6", 14),
    ("pawndex bad: good 7", 18),
    ("pawndex bad: good 8", 14),
    ("pawndex bad: good 9", 16),
];

/// The bad games of bad.pgn: (Event, what the reason must contain).
const BAD: [(&str, &[&str]); 7] = [
    (
        "pawndex bad: illegal 12th white move",
        &["illegal move Qd8 at ply 23"],
    ),
    (
        "pawndex bad: ambiguous knight move",
        &["ambiguous move Nd2"],
    ),
    ("pawndex bad: null move", &["null move"]),
    (
        "pawndex bad: crazyhouse drop",
        &["unsupported variant: crazyhouse"],
    ),
    ("pawndex bad: atomic", &["atomic"]),
    ("pawndex bad: garbage FEN", &["invalid FEN", "garbage"]),
    ("pawndex bad: no white king", &["invalid FEN", "king"]),
];

fn bad_pgn() -> std::path::PathBuf {
    root_path("tests/fixtures/bad.pgn")
}

type Rows = Vec<Vec<rusqlite::types::Value>>;

/// Everything a re-run must leave untouched: games, rejects, the `ply_features` digest and
/// the number of distinct pawn sets.
fn snapshot(db: &Path) -> (Rows, Rows, (u64, u64), i64) {
    let conn = open_db(db);
    (
        query_all(&conn, GAMES_ALL),
        query_all(&conn, "SELECT * FROM rejects ORDER BY id"),
        ply_features_digest(&conn),
        count(&conn, "SELECT count(*) FROM pawn_sets"),
    )
}

#[test]
fn bad_games_are_rejected_with_reasons_and_good_ones_indexed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bad.db");
    let run = index(&db, &[], &[&bad_pgn()]);
    run.expect_code(0, "bad.pgn");
    let s = run.summary();
    assert_eq!(s.read, 18, "bad.pgn holds 18 game records:\n{}", run.stderr);
    assert_eq!(
        s.read,
        s.indexed + s.duplicates + s.rejected,
        "summary adds up:\n{}",
        run.stderr
    );
    assert_eq!(s.rejected, BAD.len() as u64, "{}", run.stderr);
    assert_eq!(s.duplicates, 0, "{}", run.stderr);

    let conn = open_db(&db);
    assert_eq!(count(&conn, "SELECT count(*) FROM games") as u64, s.indexed);
    assert_eq!(
        count(&conn, "SELECT count(*) FROM rejects") as u64,
        s.rejected
    );
    assert_eq!(integrity_check(&conn), "ok");
    verify_db(&conn);

    for (event, plies) in GOOD {
        let got: Vec<i64> = conn
            .prepare("SELECT plies FROM games WHERE event = ?1")
            .unwrap()
            .query_map([event], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(got, vec![plies], "{event}: indexed once, with its plies");
    }
    let text = std::fs::read(bad_pgn()).unwrap();
    let source = bad_pgn().to_string_lossy().into_owned();
    for (event, wanted) in BAD {
        let in_games = count(
            &conn,
            &format!("SELECT count(*) FROM games WHERE event = '{event}'"),
        );
        assert_eq!(in_games, 0, "{event}: must not be indexed");
        let rows: Vec<(String, i64, String)> = conn
            .prepare("SELECT source, offset, reason FROM rejects WHERE event = ?1")
            .unwrap()
            .query_map([event], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rows.len(), 1, "{event}: one reject row");
        let (src, offset, reason) = &rows[0];
        assert_eq!(src, &source, "{event}: reject source");
        for w in wanted {
            assert!(
                reason.contains(w),
                "{event}: reason {reason:?} should contain {w:?}"
            );
        }
        let head = format!("[Event \"{event}\"]");
        assert!(
            text[*offset as usize..].starts_with(head.as_bytes()),
            "{event}: rejects.offset {offset} does not point at the game"
        );
    }
    // The illegal move is White's 12th move: half-move 23.
    let ply: Option<i64> = conn
        .query_row(
            "SELECT ply FROM rejects WHERE event = 'pawndex bad: illegal 12th white move'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(ply, Some(23));
    // Every reject has a reason a person can read.
    let empty = count(
        &conn,
        "SELECT count(*) FROM rejects WHERE reason IS NULL OR trim(reason) = ''",
    );
    assert_eq!(empty, 0);
}

#[test]
fn duplicates_in_one_file_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("dupes.db");
    let dupes = root_path("tests/fixtures/dupes.pgn");
    let run = index(&db, &[], &[&dupes]);
    run.expect_code(0, "dupes.pgn");
    let s = run.summary();
    assert_eq!(
        (s.read, s.indexed, s.duplicates, s.rejected),
        (3, 2, 1, 0),
        "{}",
        run.stderr
    );
    let conn = open_db(&db);
    let whites = query_all(&conn, "SELECT white, offset FROM games ORDER BY id");
    assert_eq!(whites.len(), 2);
    use rusqlite::types::Value::Text;
    assert_eq!(whites[0][0], Text("Original, Player".into()));
    assert_eq!(whites[1][0], Text("Renamed, Player".into()));
    // The first copy is the one kept.
    assert_eq!(whites[0][1], rusqlite::types::Value::Integer(0));
    check_whole_games(&conn);
}

#[test]
fn keep_duplicates_stores_every_copy() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("keep.db");
    let dupes = root_path("tests/fixtures/dupes.pgn");
    let run = index(&db, &["--keep-duplicates"], &[&dupes]);
    run.expect_code(0, "dupes.pgn --keep-duplicates");
    let s = run.summary();
    assert_eq!(
        (s.read, s.indexed, s.duplicates, s.rejected),
        (3, 3, 0, 0),
        "{}",
        run.stderr
    );
    let conn = open_db(&db);
    assert_eq!(count(&conn, "SELECT count(*) FROM games"), 3);
    assert_eq!(
        count(&conn, "SELECT count(DISTINCT offset) FROM games"),
        3,
        "three different records"
    );
    check_whole_games(&conn);
    verify_db(&conn);
}

#[test]
fn indexing_the_same_files_again_adds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("again.db");
    let files = [root_path("tests/fixtures/dupes.pgn"), bad_pgn()];
    let refs: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
    let first = index(&db, &[], &refs);
    first.expect_code(0, "first run");
    let before = snapshot(&db);
    assert!(!before.0.is_empty() && !before.1.is_empty());
    let s1 = first.summary();

    let second = index(&db, &[], &refs);
    second.expect_code(0, "second run");
    let s2 = second.summary();
    assert_eq!(s2.read, s1.read, "{}", second.stderr);
    assert_eq!(s2.indexed, 0, "nothing new to index:\n{}", second.stderr);
    assert_eq!(
        s2.read,
        s2.indexed + s2.duplicates + s2.rejected,
        "{}",
        second.stderr
    );
    assert_eq!(
        s2.duplicates,
        s1.indexed + s1.duplicates,
        "every game is now a duplicate:\n{}",
        second.stderr
    );
    let after = snapshot(&db);
    assert_eq!(before.0, after.0, "games changed on re-run");
    assert_eq!(before.1, after.1, "rejects changed on re-run");
    assert_eq!(before.2, after.2, "ply_features changed on re-run");
    assert_eq!(before.3, after.3, "pawn sets changed on re-run");

    // A different file name for the same content: still duplicates, and rejects are keyed
    // by source so they may be recorded again, but no game is added.
    let copy = dir.path().join("copy.pgn");
    std::fs::copy(&files[0], &copy).unwrap();
    let third = index(&db, &[], &[&copy]);
    third.expect_code(0, "copy of dupes.pgn");
    let s3 = third.summary();
    assert_eq!(
        (s3.read, s3.indexed, s3.duplicates),
        (3, 0, 3),
        "{}",
        third.stderr
    );
    assert_eq!(snapshot(&db).0, before.0);
}
