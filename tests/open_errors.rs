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

/// Zeroes the root page of `table` in `db`: SQLite then finds the file damaged when a read
/// reaches that table.
fn zero_root_page(db: &Path, table: &str) {
    let conn = open_db(db);
    let root = count(
        &conn,
        &format!("SELECT rootpage FROM sqlite_schema WHERE name = '{table}'"),
    );
    let page_size = count(&conn, "PRAGMA page_size");
    drop(conn);
    let mut bytes = std::fs::read(db).unwrap();
    let start = usize::try_from((root - 1) * page_size).unwrap();
    bytes[start..start + usize::try_from(page_size).unwrap()].fill(0);
    std::fs::write(db, bytes).unwrap();
}

/// A damaged database is said to be one: exit 1, its real path, what to run, and (a read
/// command writes nothing) no word of a rollback nor a literal `PATH`.
fn expect_damaged(run: &Run, db: &str, what: &str) {
    run.expect_code(1, what);
    let err = &run.stderr;
    assert!(
        err.contains(&format!("the database {db} is damaged"))
            && err.contains(&format!("`pawndex check --db {db}` lists what is wrong")),
        "{what}: {err}"
    );
    assert!(
        !err.contains("rolled back") && !err.contains("PATH"),
        "{what}: {err}"
    );
}

#[test]
fn similar_on_a_damaged_runs_page_says_the_database_is_damaged_not_the_ply() {
    let dir = setup();
    let plies = count(
        &open_db(&dir.path().join("research.db")),
        "SELECT plies FROM games WHERE id = 2",
    );
    assert!(plies >= 10, "game 2 has {plies} plies");
    // Within the game's plies but no run holds it: what a damaged page SQLite does not
    // notice gives (the runs of game 2 gone).
    open_db(&dir.path().join("research.db"))
        .execute("DELETE FROM runs WHERE game_id = 2", [])
        .unwrap();
    let args = [
        "similar",
        "--db",
        "research.db",
        "--game",
        "2",
        "--ply",
        "10",
    ];
    let run = pawndex_in(dir.path(), &args);
    expect_damaged(
        &run,
        "research.db",
        "similar --game 2 --ply 10 without runs",
    );
    assert!(
        run.stderr.contains("no run of game 2 holds ply 10"),
        "{}",
        run.stderr
    );
    // A ply past the game's end is still a usage error.
    let late = (plies + 1).to_string();
    let run = pawndex_in(
        dir.path(),
        &[
            "similar",
            "--db",
            "research.db",
            "--game",
            "2",
            "--ply",
            &late,
        ],
    );
    run.expect_code(2, "a ply past the end");
    assert!(
        run.stderr
            .contains(&format!("game 2 has plies 0 to {plies}")),
        "{}",
        run.stderr
    );

    // A page of runs SQLite finds damaged.
    let dir = setup();
    zero_root_page(&dir.path().join("research.db"), "runs");
    let run = pawndex_in(dir.path(), &args);
    expect_damaged(
        &run,
        "research.db",
        "similar --game 2 --ply 10 on a zeroed page",
    );
}

#[test]
fn read_commands_on_a_damaged_database_name_it_and_claim_no_rollback() {
    let dir = setup();
    zero_root_page(&dir.path().join("research.db"), "runs");
    for args in [
        &["query", "--db", "research.db", "white-isolated-queen-pawn"][..],
        &["stats", "--db", "research.db", "--by", "ply"],
        &[
            "similar",
            "--db",
            "research.db",
            "--structure",
            "8/pppppppp/8/8/8/8/PPPPPPPP/8",
        ],
    ] {
        let run = pawndex_in(dir.path(), args);
        expect_damaged(&run, "research.db", &format!("{args:?}"));
    }
}
