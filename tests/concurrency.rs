//! Concurrent use: readers during an index run see consistent snapshots (WAL), and a second
//! `pawndex index` on the same database refuses with a clear message instead of interleaving.

mod common;

use std::time::{Duration, Instant};

use common::*;
use rusqlite::{Connection, OpenFlags};

fn big_pgn(dir: &std::path::Path) -> std::path::PathBuf {
    let (_, pgn) = random_collection(test_seed(77), 6000, 160, "Concurrency");
    let path = dir.join("big.pgn");
    std::fs::write(&path, pgn).unwrap();
    path
}

/// One snapshot of the database as a reader sees it: (games, games not whole), or `None`
/// before the schema exists.
fn reader_snapshot(db: &std::path::Path) -> Option<(i64, i64)> {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).ok()?;
    conn.busy_timeout(Duration::from_secs(10)).unwrap();
    // One read transaction: everything below sees the same snapshot.
    let tx = conn.unchecked_transaction().ok()?;
    let games: i64 = tx
        .query_row("SELECT count(*) FROM games", [], |r| r.get(0))
        .ok()?;
    let broken: i64 = tx
        .query_row(
            "SELECT count(*) FROM games g
             WHERE g.plies + 1 != (SELECT count(*) FROM ply_features f WHERE f.game_id = g.id)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    Some((games, broken))
}

#[test]
fn readers_see_whole_games_while_indexing_runs() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let pgn = std::fs::read(big_pgn(dir.path())).unwrap();
    // Cut at a game boundary: the first part, a pause, then the rest.
    let cut = pgn
        .windows(8)
        .enumerate()
        .filter(|(_, w)| *w == b"\n\n[Event")
        .map(|(i, _)| i + 2)
        .nth(3000)
        .unwrap();
    let db = dir.path().join("c.db");
    let mut cmd = index_command(&db, &[], &[std::path::Path::new("-")]);
    let mut child = cmd.stdin(std::process::Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&pgn[..cut]).unwrap();
    stdin.flush().unwrap();
    // The run commits at least every second when games arrive: wait past that, then send
    // more so it commits what it has while the input is still open.
    std::thread::sleep(Duration::from_millis(1500));
    let (second, rest) = pgn[cut..].split_at(pgn[cut..].len() / 2);
    stdin.write_all(second).unwrap();
    stdin.flush().unwrap();

    // The run cannot end before its input does: every snapshot here is taken mid-run.
    let start = Instant::now();
    let mut during = Vec::new();
    while start.elapsed() < Duration::from_secs(120) {
        if let Some((games, broken)) = reader_snapshot(&db) {
            assert_eq!(broken, 0, "a reader saw a partly written game");
            if games > 0 {
                during.push(games);
                if during.len() >= 3 {
                    break;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run ended before its input"
    );
    stdin.write_all(rest).unwrap();
    drop(stdin);

    // Keep reading while it finishes.
    let mut snapshots = during.len();
    while child.try_wait().unwrap().is_none() && start.elapsed() < Duration::from_secs(240) {
        if let Some((_, broken)) = reader_snapshot(&db) {
            assert_eq!(broken, 0, "a reader saw a partly written game");
            snapshots += 1;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let conn = open_db(&db);
    assert_eq!(integrity_check(&conn), "ok");
    let total = count(&conn, "SELECT count(*) FROM games");
    assert!(total >= 5000, "{total}");
    eprintln!("{snapshots} consistent snapshots; during the run: {during:?} of {total} games");
    // The race happened: readers saw whole but partial databases while the run went on.
    assert!(
        !during.is_empty() && during.iter().all(|&g| g > 0 && g < total),
        "no snapshot caught the run half way ({during:?} of {total}): nothing was tested"
    );
}

#[test]
fn a_second_indexer_on_the_same_database_refuses_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = big_pgn(dir.path());
    let db = dir.path().join("c.db");
    let first = index_command(&db, &[], &[&pgn]).spawn().unwrap();
    // Wait until the first run has created the database and holds its lock.
    let start = Instant::now();
    while !db.exists() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    let second = index(&db, &[], &[&root_path("examples/sample.pgn")]);
    let first_out = first.wait_with_output().unwrap();
    assert!(
        first_out.status.success(),
        "{}",
        String::from_utf8_lossy(&first_out.stderr)
    );
    if second.code == Some(0) {
        // The first run was already finished: then the second must simply have added its games.
        let conn = open_db(&db);
        assert_eq!(integrity_check(&conn), "ok");
        return;
    }
    second.expect_code(1, "second indexer");
    assert!(
        second
            .stderr
            .contains("another `pawndex index` is writing to"),
        "{}",
        second.stderr
    );
    let conn = open_db(&db);
    assert_eq!(integrity_check(&conn), "ok");
    let sample_games = count(
        &conn,
        "SELECT count(*) FROM games WHERE source LIKE '%sample.pgn'",
    );
    assert_eq!(sample_games, 0, "the refused run wrote nothing");
}

/// `stats` and `query --count` made while `pawndex index` writes: every run answers from one
/// snapshot, a prefix of the games (no panic, no mix of two commits). The test asserts that
/// reads really overlapped the write.
#[test]
fn stats_and_counts_during_indexing_read_one_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = big_pgn(dir.path());
    let db = dir.path().join("c.db");
    let mut child = index_command(&db, &[], &[&pgn]).spawn().unwrap();
    let d = db.to_str().unwrap().to_string();
    let start = Instant::now();
    let mut totals = Vec::new();
    let mut during = 0;
    while child.try_wait().unwrap().is_none() && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(20));
        let existed = db.exists();
        let stats = std::process::Command::new(env!("CARGO_BIN_EXE_pawndex"))
            .args([
                "stats",
                "--by",
                "white_islands,phase",
                "--threads",
                "2",
                "--db",
                &d,
            ])
            .output()
            .unwrap();
        let count = std::process::Command::new(env!("CARGO_BIN_EXE_pawndex"))
            .args(["query", "white-quart", "--count", "--db", &d])
            .output()
            .unwrap();
        let still_running = child.try_wait().unwrap().is_none();
        for out in [&stats, &count] {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!err.contains("panicked"), "{err}");
            if !out.status.success() {
                // Before the index run has created the file, the reads say so; before the
                // schema exists the database is not yet a pawndex database.
                assert!(
                    err.contains("not a pawndex database")
                        || err.contains("is empty")
                        || (!existed && err.contains("does not exist")),
                    "{err}"
                );
            }
        }
        if stats.status.success() {
            let csv = String::from_utf8_lossy(&stats.stdout).into_owned();
            let positions: u64 = csv
                .lines()
                .skip(1)
                .map(|l| l.split(',').nth(2).unwrap().parse::<u64>().unwrap())
                .sum();
            totals.push(positions);
            if still_running {
                during += 1;
            }
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        during >= 2,
        "only {during} stats runs overlapped the index run"
    );
    // Every total is the positions of a prefix of the games: one snapshot.
    let conn = open_db(&db);
    let mut prefix = vec![0u64];
    for plies in query_all(&conn, "SELECT plies FROM games ORDER BY id") {
        let rusqlite::types::Value::Integer(p) = plies[0] else {
            panic!("plies")
        };
        prefix.push(prefix.last().unwrap() + p as u64 + 1);
    }
    for t in &totals {
        assert!(
            prefix.binary_search(t).is_ok(),
            "stats counted {t} positions: not the positions of any prefix of the games"
        );
    }
    eprintln!("{} stats runs, {during} during the index run", totals.len());
}

/// While `pawndex index` writes (and holds the database's writer lock), the read commands'
/// note about games not yet in the derived tables must not advise `pawndex migrate` (which
/// the lock refuses): it says an index is running and to wait for it.
#[test]
fn read_commands_during_an_index_advise_waiting_not_migrate() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let pgn = std::fs::read(big_pgn(dir.path())).unwrap();
    let cut = pgn
        .windows(8)
        .enumerate()
        .filter(|(_, w)| *w == b"\n\n[Event")
        .map(|(i, _)| i + 2)
        .nth(2000)
        .unwrap();
    let db = dir.path().join("c.db");
    let mut cmd = index_command(&db, &[], &[std::path::Path::new("-")]);
    let mut child = cmd.stdin(std::process::Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&pgn[..cut]).unwrap();
    stdin.flush().unwrap();
    // The run commits at least every second when games arrive: wait past that, then send
    // more so it commits what it has while the input is still open.
    std::thread::sleep(Duration::from_millis(1500));
    let (second, rest) = pgn[cut..].split_at(pgn[cut..].len() / 2);
    stdin.write_all(second).unwrap();
    stdin.flush().unwrap();
    let start = Instant::now();
    loop {
        if reader_snapshot(&db).is_some_and(|(games, _)| games > 0) {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "no commit");
        assert!(child.try_wait().unwrap().is_none(), "the run ended");
        std::thread::sleep(Duration::from_millis(50));
    }
    let d = db.to_str().unwrap();
    let bin = env!("CARGO_BIN_EXE_pawndex");
    let reads: [&[&str]; 4] = [
        &["query", "white-quart", "--count", "--db", d],
        &["stats", "--by", "white_islands", "--db", d],
        &["info", "--db", d],
        &["check", "--db", d],
    ];
    let outputs: Vec<_> = reads
        .iter()
        .map(|args| {
            std::process::Command::new(bin)
                .args(*args)
                .output()
                .unwrap()
        })
        .collect();
    // The race happened: every read ran while the index was still going (its input is open).
    assert!(
        child.try_wait().unwrap().is_none(),
        "the index ended before the reads"
    );
    stdin.write_all(rest).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    for (args, out) in reads.iter().zip(&outputs) {
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{args:?}: {text}");
        assert!(
            text.contains(&format!("a `pawndex index` is writing to {d} now")),
            "{args:?} does not say an index is running: {text}"
        );
        assert!(
            !text.contains("pawndex migrate"),
            "{args:?} advises migrate, which the running index's lock refuses: {text}"
        );
    }
    // Afterwards the note is gone: the finished index completed the derived tables.
    let after = std::process::Command::new(bin)
        .args(["query", "white-quart", "--count", "--db", d])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&after.stderr).is_empty());
}
