//! A version-1 database (tests/fixtures/v1.db, written by the pawndex of the v1 layout from
//! examples/sample.pgn and tests/fixtures/{structures,edge,bad}.pgn) upgrades in place to the
//! current layout with the same contents as a fresh index of the same files; read commands on
//! the old file say in one line what to run and leave it untouched.

mod common;

use std::process::{Command, Stdio};

use common::*;

const FILES: [&str; 4] = [
    "examples/sample.pgn",
    "tests/fixtures/structures.pgn",
    "tests/fixtures/edge.pgn",
    "tests/fixtures/bad.pgn",
];

fn pawndex(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pawndex"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("start pawndex");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn v1_copy(dir: &std::path::Path) -> std::path::PathBuf {
    let db = dir.join("old.db");
    std::fs::copy(root_path("tests/fixtures/v1.db"), &db).unwrap();
    db
}

fn version(db: &std::path::Path) -> i64 {
    open_db(db)
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn read_commands_on_a_v1_database_say_what_to_run_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = v1_copy(dir.path());
    let before = std::fs::read(&db).unwrap();
    let d = db.to_str().unwrap();
    for args in [
        &["query", "white-quart", "--count", "--db", d][..],
        &["find", "--white", "quart", "--db", d][..],
        &["stats", "--by", "white_islands", "--db", d][..],
    ] {
        let (code, _, stderr) = pawndex(args);
        assert_eq!(code, Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("pawndex migrate --db {d}")),
            "{args:?}: {stderr}"
        );
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    }
    assert_eq!(std::fs::read(&db).unwrap(), before, "v1 file untouched");
    assert_eq!(version(&db), 1);
}

#[test]
fn a_v1_database_upgrades_to_the_contents_of_a_fresh_index() {
    let dir = tempfile::tempdir().unwrap();
    let old = v1_copy(dir.path());
    let (code, _, stderr) = pawndex(&["migrate", "--db", old.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("upgraded from schema version 1"),
        "{stderr}"
    );

    let fresh = dir.path().join("fresh.db");
    let files: Vec<_> = FILES.iter().map(|f| root_path(f)).collect();
    let paths: Vec<&std::path::Path> = files.iter().map(|p| p.as_path()).collect();
    index(&fresh, &[], &paths).expect_code(0, "fresh index");

    let (a, b) = (open_db(&old), open_db(&fresh));
    assert_eq!(version(&old), version(&fresh));
    assert_eq!(integrity_check(&a), "ok");
    for sql in [
        "SELECT * FROM ply_features ORDER BY game_id, ply",
        "SELECT id, event, site, date, round, white, black, result, white_elo, black_elo, eco,
                plies, offset, fen, chess960, moves, hash FROM games ORDER BY id",
        "SELECT * FROM game_summary ORDER BY game_id",
        "SELECT offset, event, white, black, ply, reason FROM rejects ORDER BY id",
        // The derived tables are rebuilt for every game (set ids may differ in order, so
        // compare by pawns).
        "SELECT p.side, p.pawns, t.positions, t.games, t.white_wins, t.draws, t.black_wins,
                t.white_elo_sum, t.black_elo_positions
         FROM set_totals AS t JOIN pawn_sets AS p ON p.id = t.set_id ORDER BY p.side, p.pawns",
        "SELECT p.side, p.pawns, s.last_game, s.games FROM set_games AS s
         JOIN pawn_sets AS p ON p.id = s.set_id ORDER BY p.side, p.pawns",
        "SELECT through FROM derived",
    ] {
        let (x, y) = (query_all(&a, sql), query_all(&b, sql));
        assert!(!x.is_empty(), "no rows: {sql}");
        assert_eq!(x, y, "differs after upgrade: {sql}");
    }
    // Upgraded, it answers read commands like the fresh one.
    let (o, f) = (old.to_str().unwrap(), fresh.to_str().unwrap());
    for name in ["white-quart", "carlsbad", "white-bishop-pair"] {
        let (c1, n1, e1) = pawndex(&["query", name, "--count", "--db", o]);
        let (_, n2, _) = pawndex(&["query", name, "--count", "--db", f]);
        assert_eq!(c1, Some(0), "{e1}");
        assert_eq!(n1, n2, "{name}");
    }
    // Running migrate again changes nothing.
    let (code, _, stderr) = pawndex(&["migrate", "--db", o]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("up to date"), "{stderr}");
}

#[test]
fn index_upgrades_a_v1_database_before_adding_games() {
    let dir = tempfile::tempdir().unwrap();
    let old = v1_copy(dir.path());
    let games_before = count(&open_db(&old), "SELECT count(*) FROM games");
    let run = index(&old, &[], &[&root_path("tests/fixtures/chess960.pgn")]);
    run.expect_code(0, "index into a v1 database");
    let conn = open_db(&old);
    assert_eq!(version(&old), 6);
    // The stored v1 games were classified too (the fixture has named structures).
    assert!(count(&conn, "SELECT count(*) FROM structure_changes") > 0);
    assert!(count(&conn, "SELECT count(*) FROM games") > games_before);
    assert_eq!(
        count(&conn, "SELECT finished FROM derived"),
        count(&conn, "SELECT max(id) FROM games")
    );
    // `pawndex migrate` merges whatever the run left in the unmerged tail.
    let (code, _, stderr) = pawndex(&["migrate", "--db", old.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        count(&open_db(&old), "SELECT through FROM derived"),
        count(&conn, "SELECT max(id) FROM games")
    );
}
