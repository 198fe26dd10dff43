//! Databases whose pawn-set ids or game ids run far above their number of rows (one id
//! renumbered, every row that names it too, so that SQLite and the references agree): no
//! command sizes memory by such an id. Each command, run with its address space limited to
//! 1 GiB, either answers as it does on the database before the renumbering, or refuses in one
//! line that names `pawndex check`; it never panics and is never killed. `pawndex check`
//! reports the database.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use rusqlite::Connection;

/// The address space each command may use, in KiB (`ulimit -v`): an id-sized table of a
/// wild id does not fit, a database of 12 games does many times over.
const ADDRESS_SPACE_KIB: u64 = 1 << 20;

/// What one command printed and how it ended.
struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// `pawndex ARGS --db DB`, its address space limited to [`ADDRESS_SPACE_KIB`].
fn run_limited(db: &Path, args: &[&str]) -> Outcome {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {ADDRESS_SPACE_KIB}; exec \"$0\" \"$@\""))
        .arg(BIN)
        .args(args)
        .arg("--db")
        .arg(db)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    Outcome {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The commands that read pawn-set or game ids, and whether their output shows game ids.
fn commands() -> Vec<(Vec<&'static str>, bool)> {
    let line = "8/8/8/8/8/8/PPPPPPPP/8";
    vec![
        (vec!["similar", "--structure", line], false),
        (
            vec!["similar", "--structure", line, "--ignore-wings"],
            false,
        ),
        (
            vec![
                "similar",
                "--structure",
                line,
                "--mirror",
                "--colour-reversed",
                "--limit",
                "300",
            ],
            false,
        ),
        (
            vec!["similar", "--structure", line, "--games", "--format", "csv"],
            true,
        ),
        (
            vec!["stats", "--by", "white_islands", "--per", "game"],
            false,
        ),
        (vec!["stats", "--by", "white_islands"], false),
        (vec!["stats", "--by", "white_islands,black_islands"], false),
        (
            vec!["stats", "--by", "white_pawns,black_pawns", "--per", "game"],
            false,
        ),
        (
            vec![
                "stats",
                "--by",
                "white_pawns,black_pawns",
                "--top",
                "5",
                "--per",
                "position",
            ],
            false,
        ),
        (vec!["stats", "--report", "top-structures"], false),
        (
            vec![
                "stats",
                "--by",
                "white_islands",
                "--where",
                "white_duo > 0",
                "--per",
                "game",
            ],
            false,
        ),
        (vec!["find", "--white", "islands=2", "--count"], false),
        // Counted by a scan against the matching sets' ids (the renumbered set, the last one
        // stored, is Black's with two islands).
        (
            vec!["find", "--black", "islands=2", "--result", "1-0", "--count"],
            false,
        ),
        (
            vec!["find", "--black", "islands=2", "--white", "duo", "--count"],
            false,
        ),
        (
            vec![
                "find",
                "--white",
                "islands=2",
                "--per",
                "game",
                "--format",
                "csv",
            ],
            true,
        ),
        (vec!["structures"], false),
        (vec!["info", "--format", "json"], false),
    ]
}

/// A database of `examples/sample.pgn` in its own directory.
fn sample_db(dir: &Path) -> PathBuf {
    let db = dir.join("sample.db");
    index(&db, &["-q"], &[&root_path("examples/sample.pgn")]).expect_code(0, "index");
    db
}

/// A copy of `db` with its largest pawn-set id renumbered to `id`, in every table that names
/// pawn sets.
fn with_set_id(db: &Path, id: i64) -> PathBuf {
    let copy = db.with_file_name(format!("sets-{id}.db"));
    std::fs::copy(db, &copy).unwrap();
    let conn = Connection::open(&copy).unwrap();
    let old: i64 = conn
        .query_row("SELECT max(id) FROM pawn_sets", [], |r| r.get(0))
        .unwrap();
    conn.execute_batch(&format!(
        "BEGIN;
         UPDATE pawn_sets SET id = {id} WHERE id = {old};
         UPDATE runs SET white_set = {id} WHERE white_set = {old};
         UPDATE runs SET black_set = {id} WHERE black_set = {old};
         UPDATE set_games SET set_id = {id} WHERE set_id = {old};
         UPDATE set_totals SET set_id = {id} WHERE set_id = {old};
         COMMIT;"
    ))
    .unwrap();
    copy
}

/// A copy of `db` with its last game renumbered to `id` in every table that names games; the
/// derived tables (whose game lists are encoded) are then rebuilt by `pawndex migrate`.
fn with_game_id(db: &Path, id: i64) -> PathBuf {
    let copy = db.with_file_name(format!("games-{id}.db"));
    std::fs::copy(db, &copy).unwrap();
    let conn = Connection::open(&copy).unwrap();
    let old: i64 = conn
        .query_row("SELECT max(id) FROM games", [], |r| r.get(0))
        .unwrap();
    conn.execute_batch(&format!(
        "BEGIN;
         UPDATE games SET id = {id} WHERE id = {old};
         UPDATE runs SET game_id = {id} WHERE game_id = {old};
         UPDATE game_summary SET game_id = {id} WHERE game_id = {old};
         UPDATE structure_changes SET game_id = {id} WHERE game_id = {old};
         DELETE FROM set_games;
         DELETE FROM set_totals;
         DELETE FROM bishop_totals;
         UPDATE derived SET through = 0, finished = 0;
         COMMIT;"
    ))
    .unwrap();
    drop(conn);
    let out = Command::new(BIN)
        .args(["migrate", "--db"])
        .arg(&copy)
        .output()
        .unwrap();
    assert!(out.status.success(), "migrate: {out:?}");
    copy
}

/// `info --format json` without the file's name and sizes, the last game id it merged and its
/// count of pawn sets (the largest id: `info` reads it from the end of the table rather than
/// count, since pawndex numbers the sets without gaps).
fn without_file(json: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
    if let Some(o) = v.as_object_mut() {
        for key in ["db", "bytes", "wal_bytes", "derived_through", "pawn_sets"] {
            o.remove(key);
        }
    }
    v.to_string()
}

/// Runs every command on `damaged` and on `db`: the same answer, or a one-line refusal that
/// names `pawndex check`. Returns how many refused.
fn check_commands(db: &Path, damaged: &Path, what: &str, game_ids_moved: bool) -> usize {
    let mut refused = 0;
    for (args, shows_game_ids) in commands() {
        let label = format!("{what}: pawndex {}", args.join(" "));
        let got = run_limited(damaged, &args);
        assert!(
            got.code.is_some(),
            "{label}: killed by a signal\n{}",
            got.stderr
        );
        assert!(
            !got.stderr.contains("panicked") && got.code != Some(101),
            "{label}: panicked\n{}",
            got.stderr
        );
        let want = run_limited(db, &args);
        assert_eq!(want.code, Some(0), "{label} on the sound database");
        match got.code {
            Some(0) => {
                // `info` names the file and its size.
                let (got, want) = if args[0] == "info" {
                    (without_file(&got.stdout), without_file(&want.stdout))
                } else {
                    (got.stdout, want.stdout)
                };
                if !(game_ids_moved && shows_game_ids) {
                    assert_eq!(got, want, "{label}: another answer");
                }
            }
            Some(1) => {
                let lines: Vec<&str> = got.stderr.lines().collect();
                assert_eq!(lines.len(), 1, "{label}: not one line\n{}", got.stderr);
                assert!(
                    lines[0].contains("pawndex check"),
                    "{label}: the refusal does not name `pawndex check`: {}",
                    lines[0]
                );
                refused += 1;
            }
            other => panic!("{label}: exit {other:?}\n{}", got.stderr),
        }
    }
    refused
}

#[test]
fn wild_pawn_set_ids_never_size_memory() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    // Below 1 too: a table from 1 up has no slot for them (their positions were left out).
    for id in [
        i64::MAX,
        1 << 40,
        (1 << 31) - 1,
        300_000_000,
        0,
        -1,
        i64::MIN,
    ] {
        let damaged = with_set_id(&db, id);
        check_commands(&db, &damaged, &format!("pawn set id {id}"), false);
        // `pawndex check` reports the database (exit 1) and names the set.
        let out = run_limited(&damaged, &["check"]);
        assert_eq!(out.code, Some(1), "check, set id {id}: {}", out.stdout);
        assert!(
            out.stdout.contains(&format!("set {id}")) || out.stdout.contains(&id.to_string()),
            "check, set id {id}: {}",
            out.stdout
        );
    }
}

#[test]
fn wild_game_ids_never_size_memory() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    for id in [u32::MAX as i64, 300_000_000, 0, -1] {
        let damaged = with_game_id(&db, id);
        check_commands(&db, &damaged, &format!("game id {id}"), true);
        let out = run_limited(&damaged, &["check"]);
        assert_eq!(out.code, Some(1), "check, game id {id}: {}", out.stdout);
        assert!(
            out.stdout.contains(&id.to_string()),
            "check, game id {id}: {}",
            out.stdout
        );
    }
}

#[test]
fn ids_without_gaps_are_sound() {
    // The renumbering itself: the largest id moved one up (a gap of one) keeps every answer,
    // and `pawndex check` content.
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    let conn = Connection::open(&db).unwrap();
    let sets: i64 = conn
        .query_row("SELECT max(id) FROM pawn_sets", [], |r| r.get(0))
        .unwrap();
    let games: i64 = conn
        .query_row("SELECT max(id) FROM games", [], |r| r.get(0))
        .unwrap();
    drop(conn);
    for (damaged, game_ids_moved) in [
        (with_set_id(&db, sets + 1), false),
        (with_game_id(&db, games + 1), true),
    ] {
        let refused = check_commands(&db, &damaged, "one id up", game_ids_moved);
        assert_eq!(refused, 0, "a sound database refused");
        let out = run_limited(&damaged, &["check"]);
        assert_eq!(out.code, Some(0), "check: {}{}", out.stdout, out.stderr);
    }
}
