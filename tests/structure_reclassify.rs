//! A changed structure catalogue re-classifies a database from its stored pawns and moves, with
//! the same result as indexing the PGN again with that catalogue; a bad catalogue stops a run
//! before anything is written.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{BIN, Run, open_db, query_all, root_path};
use rusqlite::types::Value;

const HEAD: &str = "family = \"test\"\ndescription = \"d\"\nsource = \"s\"\n";

/// Writes a catalogue folder of (key, body) definitions.
fn catalogue(dir: &Path, name: &str, defs: &[(&str, &str)]) -> PathBuf {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    for (key, body) in defs {
        std::fs::write(
            folder.join(format!("{key}.toml")),
            format!("name = \"{key}\"\n{HEAD}{body}"),
        )
        .unwrap();
    }
    folder
}

/// Catalogue A: a reversed Carlsbad and an isolated d-pawn.
fn catalogue_a(dir: &Path) -> PathBuf {
    catalogue(
        dir,
        "a",
        &[
            (
                "carlsbad",
                "reversed = true\n[white]\npawns = [\"d4\", \"e3\"]\nnone = [\"c\"]\n[black]\npawns = [\"c6\", \"d5\"]\nnone = [\"e\"]\n",
            ),
            (
                "iqp",
                "reversed = true\n[white]\npawns = [\"d4\"]\nnone = [\"c\", \"e\"]\n[black]\nnone = [\"d\"]\n",
            ),
        ],
    )
}

/// Catalogue B: Carlsbad without its reversed form, no IQP, and two broad structures (an
/// e4 pawn; a d-pawn on d4 or d5 with at most six pawns on the other files) that name many
/// positions, so that many changes need a move replayed from the stored games.
fn catalogue_b(dir: &Path) -> PathBuf {
    catalogue(
        dir,
        "b",
        &[
            (
                "carlsbad",
                "[white]\npawns = [\"d4\", \"e3\"]\nnone = [\"c\"]\n[black]\npawns = [\"c6\", \"d5\"]\nnone = [\"e\"]\n",
            ),
            ("e4", "priority = -1\n[white]\npawns = [\"e4\"]\n"),
            (
                "central-d",
                "reversed = true\n[white]\none_of = [[\"d4\", \"d5\"]]\ncount = [{ files = \"abcefgh\", max = 6 }]\n",
            ),
        ],
    )
}

fn inputs() -> Vec<PathBuf> {
    [
        "examples/sample.pgn",
        "tests/fixtures/structures.pgn",
        "tests/fixtures/edge.pgn",
        "tests/fixtures/chess960.pgn",
    ]
    .iter()
    .map(|p| root_path(p))
    .collect()
}

fn pawndex(catalogue: &Path, args: &[&str], db: &Path, files: &[PathBuf]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.env("PAWNDEX_STRUCTURES", catalogue)
        .args(args)
        .arg("--db")
        .arg(db)
        .args(files);
    Run::of(cmd, &format!("pawndex {args:?}"))
}

/// Everything the catalogue decides: run codes, changes, names, fingerprint.
fn classified(db: &Path) -> Vec<Vec<Vec<Value>>> {
    let conn = open_db(db);
    [
        "SELECT game_id, first_ply, structure FROM runs ORDER BY game_id, first_ply",
        "SELECT * FROM structure_changes ORDER BY game_id, ply",
        "SELECT * FROM structure_names ORDER BY id",
        "SELECT * FROM structure_catalogue",
    ]
    .iter()
    .map(|sql| query_all(&conn, sql))
    .collect()
}

#[test]
fn migrate_with_a_changed_catalogue_equals_a_fresh_index() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (catalogue_a(dir.path()), catalogue_b(dir.path()));
    let old = dir.path().join("old.db");
    pawndex(&a, &["index"], &old, &inputs()).expect_code(0, "index with A");
    let before = classified(&old);
    let conn = open_db(&old);
    let named_a = common::count(&conn, "SELECT count(*) FROM runs WHERE structure != 0");
    assert!(
        named_a > 0,
        "catalogue A names no run: the test would prove nothing"
    );
    drop(conn);

    // The same catalogue again: nothing to do.
    let run = pawndex(&a, &["migrate"], &old, &[]);
    run.expect_code(0, "migrate with A");
    assert!(!run.stderr.contains("classifying"), "{}", run.stderr);
    assert_eq!(classified(&old), before);

    // `info` tells a database classified with another catalogue, and what to run.
    let info = pawndex(&b, &["info", "--format", "json"], &old, &[]);
    info.expect_code(0, "info with B");
    let j: serde_json::Value = serde_json::from_str(&info.stdout).unwrap();
    assert_eq!(j["structures_current"], false, "{}", info.stdout);
    let info = pawndex(&b, &["info"], &old, &[]);
    assert!(
        info.stdout.contains("pawndex migrate --db"),
        "{}",
        info.stdout
    );
    let run = pawndex(&b, &["migrate"], &old, &[]);
    run.expect_code(0, "migrate with B");
    assert!(run.stderr.contains("classifying"), "{}", run.stderr);
    let fresh = dir.path().join("fresh.db");
    pawndex(&b, &["index"], &fresh, &inputs()).expect_code(0, "index with B");
    let (migrated, indexed) = (classified(&old), classified(&fresh));
    assert_ne!(migrated, before, "catalogue B changed nothing");
    assert_eq!(migrated, indexed);
    // Moves were found for changes A did not have (they came from a replay of stored moves).
    let conn = open_db(&fresh);
    let moves = common::count(
        &conn,
        "SELECT count(*) FROM structure_changes WHERE move IS NOT NULL AND from_structure >> 1 != 1 \
         AND to_structure >> 1 != 1",
    );
    assert!(
        moves > 20,
        "only {moves} changes with a move outside Carlsbad"
    );
}

#[test]
fn an_append_with_a_changed_catalogue_reclassifies_first() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (catalogue_a(dir.path()), catalogue_b(dir.path()));
    let files = inputs();
    let appended = dir.path().join("appended.db");
    pawndex(&a, &["index"], &appended, &files[..2]).expect_code(0, "index part 1 with A");
    pawndex(&b, &["index"], &appended, &files[2..]).expect_code(0, "append part 2 with B");
    let fresh = dir.path().join("fresh.db");
    pawndex(&b, &["index"], &fresh, &files).expect_code(0, "index all with B");
    assert_eq!(classified(&appended), classified(&fresh));
}

#[test]
fn a_new_description_rewrites_the_names_only() {
    let dir = tempfile::tempdir().unwrap();
    let a = catalogue_a(dir.path());
    let db = dir.path().join("p.db");
    pawndex(&a, &["index"], &db, &inputs()).expect_code(0, "index with A");
    let before = classified(&db);
    let text = std::fs::read_to_string(a.join("iqp.toml")).unwrap();
    std::fs::write(
        a.join("iqp.toml"),
        text.replace(
            "description = \"d\"",
            "description = \"an isolated d-pawn\"",
        ),
    )
    .unwrap();
    let run = pawndex(&a, &["migrate"], &db, &[]);
    run.expect_code(0, "migrate with a new description");
    assert!(!run.stderr.contains("classifying"), "{}", run.stderr);
    let after = classified(&db);
    assert_eq!(after[0], before[0], "runs re-classified for a description");
    assert_eq!(after[1], before[1]);
    let conn = open_db(&db);
    assert_eq!(
        common::count(
            &conn,
            "SELECT count(*) FROM structure_names WHERE description = 'an isolated d-pawn'"
        ),
        1
    );
}

#[test]
fn a_bad_catalogue_stops_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let bad = catalogue(
        dir.path(),
        "bad",
        &[("broken", "[white]\npawns = [\"d9\"]\n")],
    );
    let db = dir.path().join("p.db");
    let run = pawndex(&bad, &["index"], &db, &inputs());
    run.expect_code(1, "index with a bad catalogue");
    assert!(
        run.stderr.contains("PAWNDEX_STRUCTURES")
            && run.stderr.contains("broken.toml")
            && run.stderr.contains("\"d9\" is not a square"),
        "{}",
        run.stderr
    );
    assert!(!db.exists(), "a database was created");
    let missing = dir.path().join("no-such-folder");
    let run = pawndex(&missing, &["index"], &db, &inputs());
    run.expect_code(1, "index with a missing catalogue folder");
    assert!(run.stderr.contains("no-such-folder"), "{}", run.stderr);
    assert!(!db.exists(), "a database was created");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let run = pawndex(&empty, &["index"], &db, &inputs());
    run.expect_code(1, "index with an empty catalogue folder");
    assert!(
        run.stderr.contains("no structure definitions"),
        "{}",
        run.stderr
    );
    assert!(!db.exists(), "a database was created");
}
