//! A column added to a table the documented way (a migration's `ALTER TABLE … ADD COLUMN`,
//! which appends it after the others) never turns a table's way of writing off silently: both
//! ways of writing (laid-out pages, and `PAWNDEX_NO_BULK`) still write every table, the same
//! rows, and a table the pages should take but cannot is said once on stderr.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use rusqlite::types::Value;

/// The tables a load writes, each read whole in key order.
const TABLES: [&str; 8] = [
    "SELECT * FROM games ORDER BY id",
    "SELECT * FROM game_summary ORDER BY game_id",
    "SELECT * FROM runs ORDER BY game_id, first_ply",
    "SELECT * FROM structure_changes ORDER BY game_id, ply",
    "SELECT * FROM pawn_sets ORDER BY id",
    "SELECT * FROM set_games ORDER BY set_id",
    "SELECT * FROM set_totals ORDER BY set_id",
    "SELECT * FROM bishop_totals ORDER BY bishop_pairs",
];

/// The line that says a table goes through SQL instead of pages.
const NOT_LAID_OUT: &str = "is written row by row through SQL, not laid out in pages";

/// A new, empty database (the schema of a run that read no game), changed by `alter`, then
/// `examples/sample.pgn` indexed into it with the page layout on or off: the run's stderr and
/// every table.
fn load(dir: &Path, name: &str, alter: &str, pages: bool) -> (String, Vec<Vec<Vec<Value>>>) {
    let db = dir.join(format!("{name}.db"));
    let empty = dir.join("empty.pgn");
    std::fs::write(&empty, "").unwrap();
    index(&db, &["--quiet"], &[&empty]).expect_code(0, "creating the database");
    open_db(&db).execute_batch(alter).unwrap();
    let sample: PathBuf = root_path("examples/sample.pgn");
    let mut cmd = index_command(&db, &["--quiet"], &[&sample]);
    if pages {
        cmd.env_remove("PAWNDEX_NO_BULK");
    } else {
        cmd.env("PAWNDEX_NO_BULK", "1");
    }
    let run = Run::of(cmd, name);
    run.expect_code(0, name);
    let conn = open_db(&db);
    assert_eq!(integrity_check(&conn), "ok", "{name}");
    let tables = TABLES.iter().map(|sql| query_all(&conn, sql)).collect();
    (run.stderr.clone(), tables)
}

/// Both ways of writing give every table its rows, the same rows.
fn same_tables(name: &str, pages: &[Vec<Vec<Value>>], rows: &[Vec<Vec<Value>>]) {
    for ((sql, a), b) in TABLES.iter().zip(pages).zip(rows) {
        assert!(!a.is_empty(), "{name}: no rows from {sql}");
        assert!(
            a == b,
            "{name}: {sql} differs between the two ways of writing"
        );
    }
}

/// The documented way of adding a feature appends `game_summary` columns (and a new tag would
/// append a `games` column): both tables are written through SQL by the names of their one
/// column list, so neither way of writing changes, and nothing is said.
#[test]
fn columns_appended_to_games_and_summaries_are_written_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let alter = "ALTER TABLE game_summary ADD COLUMN any_white_extra INTEGER NOT NULL DEFAULT 0;
                 ALTER TABLE game_summary ADD COLUMN max_black_extra INTEGER NOT NULL DEFAULT 0;
                 ALTER TABLE games ADD COLUMN extra TEXT;";
    let (said, pages) = load(dir.path(), "pages", alter, true);
    assert!(!said.contains(NOT_LAID_OUT), "{said}");
    let (said, rows) = load(dir.path(), "rows", alter, false);
    assert!(!said.contains(NOT_LAID_OUT), "{said}");
    same_tables("appended columns", &pages, &rows);
}

/// A table the pages are written for (`runs`) with a column the page writer does not know:
/// its rows go through SQL, the run says so once on stderr, naming the table and the columns,
/// and the tables are those of a run without pages.
#[test]
fn a_table_the_pages_cannot_take_is_said_and_written_through_sql() {
    let dir = tempfile::tempdir().unwrap();
    let alter = "ALTER TABLE runs ADD COLUMN extra INTEGER;";
    let (said, pages) = load(dir.path(), "pages", alter, true);
    let lines: Vec<&str> = said.lines().filter(|l| l.contains(NOT_LAID_OUT)).collect();
    assert_eq!(lines.len(), 1, "{said}");
    assert!(
        lines[0].starts_with("pawndex: runs ") && lines[0].contains("structure, extra)"),
        "{said}"
    );
    let (said, rows) = load(dir.path(), "rows", alter, false);
    assert!(!said.contains(NOT_LAID_OUT), "asked for no pages: {said}");
    same_tables("a column appended to runs", &pages, &rows);
}
