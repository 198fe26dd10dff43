//! Mistakes with paths create nothing: `pawndex index research.db` (`--db` forgotten) is refused
//! naming the slip, `--db DIRECTORY` says it is a directory for every command, a missing input
//! or database is an error. After each failing command the directory listing is unchanged.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

/// `pawndex ARGS` run in `dir`.
fn pawndex_in(dir: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args).current_dir(dir);
    Run::of(cmd, &format!("{args:?}"))
}

/// Every name under `dir`, recursively, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            names.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() {
                todo.push(p);
            }
        }
    }
    names.sort();
    names
}

/// A directory with `sample.pgn`, a database `research.db` and an empty directory `dir`.
fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root_path("examples/sample.pgn"),
        dir.path().join("sample.pgn"),
    )
    .unwrap();
    pawndex_in(
        dir.path(),
        &["index", "-q", "--db", "research.db", "sample.pgn"],
    )
    .expect_code(0, "making research.db");
    std::fs::create_dir(dir.path().join("dir")).unwrap();
    dir
}

/// Runs `args` in a fresh set-up; expects exit 1, an error line containing `wanted`, and the
/// listing unchanged.
fn refused(args: &[&str], wanted: &str) {
    let dir = setup();
    let before = listing(dir.path());
    let run = pawndex_in(dir.path(), args);
    run.expect_code(1, &format!("{args:?}"));
    let line = format!("pawndex: error: {wanted}");
    assert!(
        run.stderr.lines().any(|l| l == line),
        "{args:?}: wanted the line\n{line}\ngot:\n{}",
        run.stderr
    );
    assert_eq!(
        listing(dir.path()),
        before,
        "{args:?} changed the directory"
    );
}

#[test]
fn a_database_given_as_input_is_refused_with_a_hint() {
    refused(
        &["index", "research.db"],
        "research.db is a SQLite database, not PGN: did you mean --db research.db?",
    );
    refused(
        &["index", "--db", "new.db", "sample.pgn", "research.db"],
        "research.db is a SQLite database, not PGN: did you mean --db research.db?",
    );
}

#[test]
fn missing_or_unreadable_inputs_create_no_database() {
    refused(
        &["index", "--db", "new.db", "sample.pgn", "nothere.pgn"],
        "nothere.pgn: cannot read: No such file or directory (os error 2)",
    );
    refused(
        &["index", "--db", "new.db", "dir"],
        "dir is a directory, not a PGN file",
    );
}

#[test]
fn a_directory_as_database_is_said_as_such_by_every_command() {
    let is_dir = "dir is a directory, not a database file";
    refused(&["index", "--db", "dir", "sample.pgn"], is_dir);
    refused(
        &["query", "--db", "dir", "white-isolated-queen-pawn"],
        is_dir,
    );
    refused(&["find", "--db", "dir", "--white", "islands>=3"], is_dir);
    refused(&["stats", "--db", "dir", "--by", "ply"], is_dir);
    refused(&["check", "--db", "dir"], is_dir);
    refused(&["migrate", "--db", "dir"], is_dir);
    refused(&["info", "--db", "dir"], is_dir);
}

#[test]
fn read_commands_on_a_missing_database_create_nothing() {
    let missing = "database nothere.db does not exist; create it with `pawndex index --db \
                   nothere.db GAMES.pgn`";
    refused(
        &["query", "--db", "nothere.db", "white-isolated-queen-pawn"],
        missing,
    );
    refused(
        &["find", "--db", "nothere.db", "--white", "islands>=3"],
        missing,
    );
    refused(&["stats", "--db", "nothere.db", "--by", "ply"], missing);
    refused(&["check", "--db", "nothere.db"], missing);
    refused(&["info", "--db", "nothere.db"], missing);
    refused(
        &["migrate", "--db", "nothere.db"],
        "database nothere.db does not exist",
    );
}

#[test]
fn a_file_that_is_not_a_database_is_refused_and_left_alone() {
    for cmd in [
        &["info"][..],
        &["check"],
        &["query", "white-isolated-queen-pawn"],
    ] {
        let mut args = cmd.to_vec();
        args.extend(["--db", "sample.pgn"]);
        refused(
            &args,
            "sample.pgn is not a SQLite database (or is damaged): file is not a database: Error code 26: File opened that is not a database file",
        );
    }
    refused(
        &["index", "--db", "sample.pgn", "sample.pgn"],
        "sample.pgn is not a SQLite database, so not a pawndex database; it was left untouched",
    );
}
