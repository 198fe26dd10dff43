//! Hostile databases and environments: a file that is not SQLite, a SQLite file that is not a
//! pawndex database, a newer schema version, and a full disk (a file-size limit). Each gives a
//! clear error and a non-zero exit, and leaves existing data intact.

mod common;

use common::*;
use rusqlite::Connection;

fn sample() -> std::path::PathBuf {
    root_path("examples/sample.pgn")
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    std::fs::write(&db, b"these are my notes, not a database\n".repeat(100)).unwrap();
    let before = std::fs::read(&db).unwrap();
    let run = index(&db, &[], &[&sample()]);
    run.expect_code(1, "index into a text file");
    assert!(
        run.stderr.contains("is not a SQLite database"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(&db).unwrap(), before, "file untouched");
}

#[test]
fn a_foreign_sqlite_database_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("other.db");
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch("CREATE TABLE accounts(id, balance); INSERT INTO accounts VALUES (1, 100);")
        .unwrap();
    drop(conn);
    let run = index(&db, &[], &[&sample()]);
    run.expect_code(1, "index into a foreign database");
    assert!(
        run.stderr.contains("not a pawndex database"),
        "{}",
        run.stderr
    );
    let conn = open_db(&db);
    assert_eq!(count(&conn, "SELECT count(*) FROM accounts"), 1);
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM sqlite_schema WHERE name = 'games'"
        ),
        0
    );
}

#[test]
fn a_newer_schema_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("new.db");
    index(&db, &["-q"], &[&sample()]).expect_code(0, "first index");
    let conn = Connection::open(&db).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    let run = index(&db, &[], &[&root_path("tests/fixtures/edge.pgn")]);
    run.expect_code(1, "index into a newer database");
    assert!(
        run.stderr.contains("newer than this pawndex"),
        "{}",
        run.stderr
    );
    let conn = open_db(&db);
    assert_eq!(count(&conn, "SELECT count(*) FROM games"), 12);
}

/// A full disk, simulated with a file-size limit (`ulimit -f`, with SIGXFSZ ignored so that
/// writes past the limit fail with an error instead of killing the process).
#[cfg(unix)]
#[test]
fn a_full_disk_is_a_clear_error_and_keeps_the_stored_games() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("full.db");
    index(&db, &["-q"], &[&sample()]).expect_code(0, "first index");
    let (_, pgn) = random_collection(test_seed(5), 3000, 120, "Full disk");
    let big = dir.path().join("big.pgn");
    std::fs::write(&big, pgn).unwrap();
    let size_kib = std::fs::metadata(&db).unwrap().len() / 1024;
    let script = format!(
        "trap '' XFSZ; ulimit -f {}; exec \"$0\" index --db \"$1\" \"$2\"",
        size_kib + 256
    );
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(BIN)
        .arg(&db)
        .arg(&big)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("full.db"),
        "the error names the database: {stderr}"
    );
    let conn = open_db(&db);
    assert_eq!(integrity_check(&conn), "ok");
    // Panics unless every stored game has exactly plies + 1 positions.
    assert!(check_whole_games(&conn) >= 12, "whole games only");
    let sample_games = count(
        &conn,
        "SELECT count(*) FROM games WHERE source LIKE '%sample.pgn'",
    );
    assert_eq!(sample_games, 12, "the games stored before are intact");
}
