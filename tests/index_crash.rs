//! Crash safety: `pawndex index` killed with SIGKILL at arbitrary moments leaves a database that
//! passes `PRAGMA integrity_check`, holds whole games only, opens and answers queries, and a
//! re-run finishes the job with exactly the database an uninterrupted run builds.
//!
//! Kill moments come from the clock (they only choose *when* to kill; nothing asserts on time).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::OnceLock;
use std::thread::sleep;
use std::time::{Duration, Instant};

use common::*;
use rusqlite::{Connection, OpenFlags};

const GAMES: usize = 30_000;
const MAX_PLIES: usize = 150;
/// One record in this many is a game with an illegal move (so rejects are written too).
const BAD_EVERY: usize = 1000;
const SEED: u64 = 0xC4A5_11ED;

/// The big PGN (about 22 MB), generated once from a fixed seed. It lives in Cargo's per-target
/// scratch directory under a name that encodes every generation parameter, written atomically,
/// so concurrent or later test runs reuse identical content.
fn big_pgn() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
        std::fs::create_dir_all(dir).unwrap();
        let path = dir.join(format!(
            "pawndex-crash-v1-{SEED:x}-{GAMES}-{MAX_PLIES}-{BAD_EVERY}.pgn"
        ));
        if !path.exists() {
            let pgn = random_pgn(SEED, GAMES, MAX_PLIES, "crash", BAD_EVERY);
            let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
            std::fs::write(&tmp, pgn).unwrap();
            std::fs::rename(&tmp, &path).unwrap();
        }
        path
    })
}

fn spawn_index(db: &Path, pgn: &Path) -> Child {
    let mut cmd = index_command(db, &["--threads", "2", "--quiet"], &[pgn]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd.spawn().expect("start pawndex")
}

/// How a killed run ended.
#[derive(Debug, PartialEq)]
enum Ending {
    Killed,
    /// It finished on its own before the kill moment.
    Finished(Option<i32>),
}

/// SIGKILLs `child` at `deadline`, or as soon as `trigger` says so (checked every 20 ms).
fn kill_when(
    mut child: Child,
    deadline: Option<Instant>,
    mut trigger: impl FnMut() -> bool,
) -> Ending {
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Ending::Finished(status.code());
        }
        if deadline.is_some_and(|d| Instant::now() >= d) || trigger() {
            // std's Child::kill sends SIGKILL on Unix.
            child.kill().expect("kill");
            let status = child.wait().expect("wait");
            return match status.code() {
                None => Ending::Killed,
                // It exited on its own between the last check and the kill.
                code => Ending::Finished(code),
            };
        }
        sleep(Duration::from_millis(20));
    }
}

/// Number of games a database shows to a reader right now (0 when it cannot tell yet).
fn games_visible(db: &Path) -> i64 {
    if !db.exists() {
        return 0;
    }
    let Ok(conn) = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY) else {
        return 0;
    };
    conn.query_row("SELECT count(*) FROM games", [], |r| r.get(0))
        .unwrap_or(0)
}

/// What an interrupted run left committed.
#[derive(Debug, Default)]
struct Snapshot {
    games: Vec<Vec<rusqlite::types::Value>>,
    rejects: Vec<Vec<rusqlite::types::Value>>,
}

/// The checks every interrupted database must pass on its own; returns what it holds.
fn check_after_kill(db: &Path, what: &str) -> Snapshot {
    if !db.exists() {
        eprintln!("{what}: killed before the database file was created");
        return Snapshot::default();
    }
    let conn = open_db(db);
    assert_eq!(integrity_check(&conn), "ok", "{what}: integrity_check");
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    if version == 0 {
        // Killed before the schema transaction committed: an empty database is fine.
        let tables = count(&conn, "SELECT count(*) FROM sqlite_schema");
        assert_eq!(
            tables, 0,
            "{what}: user_version 0 but {tables} schema objects"
        );
        return Snapshot::default();
    }
    let n = check_whole_games(&conn);
    eprintln!("{what}: {n} whole games");
    Snapshot {
        games: query_all(&conn, GAMES_ALL),
        rejects: query_all(&conn, "SELECT * FROM rejects ORDER BY id"),
    }
}

/// Everything compared between the resumed and the uninterrupted database.
#[derive(Debug, PartialEq)]
struct Full {
    games: Vec<Vec<rusqlite::types::Value>>,
    rejects: Vec<Vec<rusqlite::types::Value>>,
    ply_features: (u64, u64),
    schema: Vec<Vec<rusqlite::types::Value>>,
}

fn full(db: &Path, checked: bool) -> Full {
    let conn = open_db(db);
    if checked {
        check_whole_games(&conn);
    }
    Full {
        games: query_all(&conn, GAMES_ALL),
        rejects: query_all(&conn, "SELECT * FROM rejects ORDER BY id"),
        ply_features: ply_features_digest(&conn),
        schema: query_all(
            &conn,
            "SELECT type, name, tbl_name, sql FROM sqlite_schema \
             WHERE name NOT LIKE 'sqlite_%' ORDER BY name",
        ),
    }
}

#[test]
fn killed_runs_leave_whole_games_and_resume_to_the_same_database() {
    let pgn = big_pgn();
    let dir = tempfile::tempdir().unwrap();

    // The uninterrupted run, alongside the interrupted ones.
    let reference_db = dir.path().join("reference.db");
    let reference_thread = {
        let reference_db = reference_db.clone();
        std::thread::spawn(move || {
            let run = index(&reference_db, &["--threads", "2"], &[pgn]);
            run.expect_code(0, "uninterrupted run");
            let s = run.summary();
            assert_eq!(s.read, GAMES as u64, "{}", run.stderr);
            assert_eq!(s.rejected, (GAMES / BAD_EVERY) as u64, "{}", run.stderr);
            assert_eq!(s.indexed + s.rejected, s.read, "{}", run.stderr);
            let reference = full(&reference_db, false);
            assert_eq!(reference.games.len() as u64, s.indexed);
            assert!(reference.ply_features.1 > 1_000_000, "a big database");
            reference
        })
    };

    // Interrupted runs, each resuming the previous one's database.
    let db = dir.path().join("killed.db");
    let mut rng = Rng::new(SEED);
    let late = Duration::from_millis(2500 + rng.below(4500) as u64);
    let mut stored = 0usize;
    let mut kills = 0;
    let mut snapshots = Vec::new();
    let plan: Vec<(String, Option<Duration>, bool)> = vec![
        (
            "kill at 0.3 s".into(),
            Some(Duration::from_millis(300)),
            false,
        ),
        (
            "kill at 1 s".into(),
            Some(Duration::from_millis(1000)),
            false,
        ),
        (
            "kill at 2 s".into(),
            Some(Duration::from_millis(2000)),
            false,
        ),
        ("kill right after a commit".into(), None, true),
        (format!("kill at {late:?}"), Some(late), false),
    ];
    for (what, after, on_commit) in plan {
        let before = games_visible(&db);
        let child = spawn_index(&db, pgn);
        let deadline = after.map(|d| Instant::now() + d);
        let ending = kill_when(child, deadline, || on_commit && games_visible(&db) > before);
        match ending {
            Ending::Killed => kills += 1,
            Ending::Finished(code) => {
                assert_eq!(code, Some(0), "{what}: the run ended by itself but failed");
                eprintln!("{what}: the run finished before the kill");
            }
        }
        let snapshot = check_after_kill(&db, &what);
        let n = snapshot.games.len();
        assert!(
            n >= stored,
            "{what}: games went from {stored} to {n}: committed work lost"
        );
        stored = n;
        snapshots.push((what, snapshot));
    }
    eprintln!("{kills} runs killed; {stored} games stored before the final run");
    assert!(
        kills >= 1,
        "no run was killed (each finished before its kill moment): nothing was tested"
    );

    // Finish the job.
    let run = index(&db, &["--threads", "2"], &[pgn]);
    run.expect_code(0, "resumed run");
    let resumed = full(&db, true);

    let reference = reference_thread.join().expect("uninterrupted run");
    // What each interrupted run had committed is exactly the start of the full run.
    for (what, snapshot) in &snapshots {
        for (name, rows, full_run) in [
            ("games", &snapshot.games, &reference.games),
            ("rejects", &snapshot.rejects, &reference.rejects),
        ] {
            assert!(
                rows.len() <= full_run.len(),
                "{what}: {} {name}, more than a full run",
                rows.len()
            );
            if let Some(i) = (0..rows.len()).find(|&i| rows[i] != full_run[i]) {
                panic!(
                    "{what}: {name} row {i} differs from the uninterrupted run:\n  {:?}\n  {:?}",
                    rows[i], full_run[i]
                );
            }
        }
    }
    // A load into empty tables builds the key indexes at its end: both databases have them
    // (a killed first run left them dropped; the resumed run restored them).
    for (what, full_run) in [("resumed", &resumed), ("uninterrupted", &reference)] {
        for index in ["pawn_sets_key", "games_hash"] {
            assert!(
                full_run
                    .schema
                    .iter()
                    .any(|row| row[1] == rusqlite::types::Value::Text(index.into())),
                "{what}: no index {index}"
            );
        }
    }
    // And the resumed database is the uninterrupted one.
    assert_eq!(
        resumed.games.len(),
        reference.games.len(),
        "games after resuming"
    );
    if let Some(i) = (0..resumed.games.len()).find(|&i| resumed.games[i] != reference.games[i]) {
        panic!(
            "game {i} differs after resuming:\n  {:?}\n  {:?}",
            resumed.games[i], reference.games[i]
        );
    }
    assert_eq!(resumed.rejects, reference.rejects, "rejects after resuming");
    assert_eq!(
        resumed.ply_features, reference.ply_features,
        "ply_features (digest, rows) after resuming"
    );
    assert_eq!(
        resumed.schema, reference.schema,
        "schema (tables, indexes) after resuming"
    );
}

/// Typical read-only questions; every one must run.
fn queries_work(db: &Path, what: &str) {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap_or_else(|e| panic!("{what}: open read-only: {e}"));
    for sql in [
        "SELECT count(*) FROM games",
        "SELECT count(*) FROM rejects",
        "SELECT count(DISTINCT game_id) FROM ply_features WHERE white_islands = 3",
        "SELECT count(*) FROM ply_features WHERE white_quart != 0 AND black_bishop_pair = 1",
        "SELECT g.white, max(p.ply) FROM games g JOIN ply_features p ON p.game_id = g.id \
         GROUP BY g.id ORDER BY g.id LIMIT 5",
        "SELECT count(*) FROM ply_features WHERE (white_pawns & (1 << 27)) != 0",
    ] {
        let mut st = conn
            .prepare(sql)
            .unwrap_or_else(|e| panic!("{what}: {sql}: {e}"));
        let mut rows = st
            .query([])
            .unwrap_or_else(|e| panic!("{what}: {sql}: {e}"));
        while rows
            .next()
            .unwrap_or_else(|e| panic!("{what}: {sql}: {e}"))
            .is_some()
        {}
    }
}

#[test]
fn a_database_killed_early_still_opens_and_answers_queries() {
    let pgn = big_pgn();
    let dir = tempfile::tempdir().unwrap();
    for (i, ms) in [150u64, 400, 900].into_iter().enumerate() {
        let db = dir.path().join(format!("early-{i}.db"));
        let child = spawn_index(&db, pgn);
        let ending = kill_when(
            child,
            Some(Instant::now() + Duration::from_millis(ms)),
            || false,
        );
        let what = format!("killed after {ms} ms ({ending:?})");
        if !db.exists() {
            eprintln!("{what}: no database file yet");
            continue;
        }
        {
            let conn = open_db(&db);
            assert_eq!(integrity_check(&conn), "ok", "{what}");
            let version: i64 = conn
                .query_row("PRAGMA user_version", [], |r| r.get(0))
                .unwrap();
            if version == 0 {
                eprintln!("{what}: schema not committed yet");
                continue;
            }
            check_whole_games(&conn);
        }
        queries_work(&db, &what);
        // pawndex itself takes the database back and extends it.
        let sample = root_path("examples/sample.pgn");
        let run = index(&db, &[], &[&sample]);
        run.expect_code(0, &format!("{what}: indexing into it afterwards"));
        let s = run.summary();
        assert_eq!((s.read, s.indexed), (12, 12), "{what}: {}", run.stderr);
        queries_work(&db, &format!("{what}, then extended"));
        let conn = open_db(&db);
        assert_eq!(integrity_check(&conn), "ok", "{what}, then extended");
        check_whole_games(&conn);
        // After a completed run every game is finished; the derived tables cover every game
        // up to `through` (the rest is the unmerged tail, at most 1/16 of them) and agree with
        // what they summarise.
        let (last, through) = (
            count(&conn, "SELECT max(id) FROM games"),
            count(&conn, "SELECT through FROM derived"),
        );
        assert_eq!(
            count(&conn, "SELECT finished FROM derived"),
            last,
            "{what}: every game finished after a completed run"
        );
        assert!(
            (last - through) * 16 <= through,
            "{what}: tail of {} games over {through}",
            last - through
        );
        assert_eq!(
            count(&conn, "SELECT sum(positions) FROM set_totals"),
            2 * count(
                &conn,
                "SELECT sum(last_ply - first_ply + 1) FROM runs \
                 WHERE game_id <= (SELECT through FROM derived)"
            ),
            "{what}: set_totals after a completed run"
        );
        assert_eq!(
            count(&conn, "SELECT sum(games) FROM set_totals"),
            count(
                &conn,
                "SELECT count(*) FROM (SELECT white_set, game_id FROM runs \
                 WHERE game_id <= (SELECT through FROM derived) \
                 UNION SELECT black_set, game_id FROM runs \
                 WHERE game_id <= (SELECT through FROM derived))"
            ),
            "{what}: set_games after a completed run"
        );
    }
}
