//! The end of `pawndex index` folds its write-ahead log into the database and switches the file
//! back to a rollback journal, so that a finished database is one self-contained file. Other
//! connections can be in the way: a reader's read transaction keeps the log from being folded
//! in, any open connection keeps the file in WAL mode. The run waits for them (up to
//! `PAWNDEX_FOLD_WAIT` seconds, a testing knob) and says so, and when they stay it says what is
//! left and exits 1; `info` names the unfolded log and `migrate` folds it in.
//!
//! Each test opens a real reader (a connection of the test process, read-only) once the run is
//! in WAL mode (its `-wal` exists), and asserts the race happened: the run said it was waiting.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use common::*;
use rusqlite::{Connection, OpenFlags};

/// Random games: enough that the run is still writing when the reader starts.
fn input(dir: &Path) -> PathBuf {
    let path = dir.join("games.pgn");
    std::fs::write(&path, random_pgn(0xF01D, 3000, 120, "fold", 0)).unwrap();
    path
}

fn wal(db: &Path) -> PathBuf {
    PathBuf::from(format!("{}-wal", db.display()))
}

/// The database header's read and write versions: 1 for a rollback journal, 2 for WAL.
fn header_mode(db: &Path) -> (u8, u8) {
    let bytes = std::fs::read(db).unwrap();
    (bytes[18], bytes[19])
}

/// `pawndex index` of `pgn` into `db`, waiting `wait` seconds for readers at its end; its
/// stderr lines come through the receiver as they are written.
fn start(db: &Path, pgn: &Path, wait: u64) -> (Child, Receiver<String>) {
    let mut child = Command::new(BIN)
        .args(["index", "--threads", "2", "--db"])
        .arg(db)
        .arg(pgn)
        .env("PAWNDEX_FOLD_WAIT", wait.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start pawndex index");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).split(b'\n') {
            let Ok(line) = line else { break };
            // The progress display redraws with carriage returns: each piece is a line.
            for piece in String::from_utf8_lossy(&line).split('\r') {
                if tx.send(piece.to_owned()).is_err() {
                    return;
                }
            }
        }
    });
    (child, rx)
}

/// Once the run has switched `db` to WAL mode, a read-only connection that read from it:
/// inside a read transaction it keeps (`hold`), or outside any (an idle connection).
fn reader_once_in_wal(db: &Path, child: &mut Child, hold: bool) -> Connection {
    while !wal(db).exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it was seen in WAL mode"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    conn.busy_timeout(Duration::from_secs(30)).unwrap();
    if hold {
        conn.execute_batch("BEGIN; SELECT count(*) FROM sqlite_schema;")
            .unwrap();
    } else {
        let _: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
            .unwrap();
    }
    conn
}

/// Waits for a line of the run's stderr holding `text`; the lines seen.
fn wait_for_line(rx: &Receiver<String>, text: &str) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        // A guard against a hang, not a timing assertion.
        let line = rx
            .recv_timeout(Duration::from_secs(600))
            .unwrap_or_else(|e| panic!("no line with {text:?} ({e}); seen: {seen:#?}"));
        let found = line.contains(text);
        seen.push(line);
        if found {
            return seen;
        }
    }
}

fn rest(rx: &Receiver<String>) -> String {
    rx.iter().collect::<Vec<_>>().join("\n")
}

fn pawndex(args: &[&str]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    Run::of(cmd, &format!("{args:?}"))
}

/// A reader that ends its read transaction once the run waits for it: the run folds the log in
/// and leaves one file in rollback-journal mode, exit 0.
#[test]
fn a_reader_at_the_end_of_a_load_is_waited_for_and_the_log_folded_in() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = input(dir.path());
    let db = dir.path().join("d.db");
    let (mut child, rx) = start(&db, &pgn, 600);
    let reader = reader_once_in_wal(&db, &mut child, true);
    wait_for_line(
        &rx,
        "waiting up to 600 s for a reader to end its read transaction",
    );
    assert!(
        std::fs::metadata(wal(&db)).unwrap().len() > 0,
        "the log holds the run's commits while the reader waits"
    );
    drop(reader);
    let status = child.wait().unwrap();
    let stderr = rest(&rx);
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
    assert!(!wal(&db).exists(), "the log is gone");
    assert_eq!(header_mode(&db), (1, 1), "back to a rollback journal");
    pawndex(&["check", "--db", db.to_str().unwrap()]).expect_code(0, "check");
}

/// A reader that keeps its read transaction past the wait: the run says what is left, in the
/// words of issue 37, and exits 1; `info` names the log and what folds it; `migrate` folds it
/// in once the reader has gone, and says so.
#[test]
fn a_reader_that_stays_leaves_the_log_unfolded_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = input(dir.path());
    let db = dir.path().join("d.db");
    let d = db.to_str().unwrap();
    let (mut child, rx) = start(&db, &pgn, 1);
    let reader = reader_once_in_wal(&db, &mut child, true);
    let status = child.wait().unwrap();
    let stderr = rest(&rx);
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("waiting up to 1 s for a reader to end its read transaction"),
        "the race happened: {stderr}"
    );
    assert!(
        stderr.contains(&format!("the log {d}-wal holds"))
            && stderr.contains(&format!(
                "MiB not yet folded into {d}: a reader (another process or connection, pid {})",
                std::process::id()
            ))
            && stderr.contains(&format!("run `pawndex migrate --db {d}`")),
        "{stderr}"
    );
    assert!(
        stderr.contains("3,000 games read"),
        "the summary first: {stderr}"
    );
    let wal_bytes = std::fs::metadata(wal(&db)).unwrap().len();
    assert!(wal_bytes > 0);
    assert_eq!(header_mode(&db), (2, 2));

    let info = pawndex(&["info", "--db", d]);
    info.expect_code(0, "info");
    let log = info
        .stdout
        .lines()
        .find(|l| l.starts_with("log "))
        .unwrap_or_else(|| panic!("no log line:\n{}", info.stdout));
    assert!(
        log.contains("-wal holds") && log.contains(&format!("`pawndex migrate --db {d}`")),
        "{log}"
    );
    assert!(
        !info.stdout.contains("a run is writing, or was killed"),
        "{}",
        info.stdout
    );
    let json = pawndex(&["info", "--db", d, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["log_unfolded"], true, "{v}");
    assert_eq!(v["to_run"], format!("pawndex migrate --db {d}"), "{v}");

    drop(reader);
    let migrate = pawndex(&["migrate", "--db", d]);
    migrate.expect_code(0, "migrate");
    assert!(
        migrate
            .stderr
            .contains(&format!("folded the write-ahead log {d}-wal (")),
        "{}",
        migrate.stderr
    );
    assert!(!wal(&db).exists());
    assert_eq!(header_mode(&db), (1, 1));
    pawndex(&["check", "--db", d]).expect_code(0, "check");
    let info = pawndex(&["info", "--db", d]);
    assert!(!info.stdout.contains("log "), "{}", info.stdout);
}

/// An idle connection (no transaction) lets the log be folded in but keeps the file in WAL
/// mode: every page is in the database file, so a warning says it and the run exits 0 (a
/// `pawndex serve` stays open so, see `tests/serve_api.rs`); `migrate` switches it back.
#[test]
fn an_idle_connection_that_stays_keeps_wal_mode_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = input(dir.path());
    let db = dir.path().join("d.db");
    let d = db.to_str().unwrap();
    let (mut child, rx) = start(&db, &pgn, 1);
    let reader = reader_once_in_wal(&db, &mut child, false);
    let status = child.wait().unwrap();
    let stderr = rest(&rx);
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("waiting up to 1 s for the other connections to close it"),
        "the race happened: {stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "pawndex: warning: {d} holds every game, but stays in write-ahead-log mode"
        )) && stderr.contains(&format!("run `pawndex migrate --db {d}`")),
        "{stderr}"
    );
    assert_eq!(header_mode(&db), (2, 2));
    drop(reader);
    let migrate = pawndex(&["migrate", "--db", d]);
    migrate.expect_code(0, "migrate");
    assert!(
        migrate.stderr.contains("self-contained file again"),
        "{}",
        migrate.stderr
    );
    assert_eq!(header_mode(&db), (1, 1));
}

/// A database left in WAL mode with its log, in a folder mounted read-only: every read
/// command says what is wrong and what to run, not "not a SQLite database (or is damaged)".
/// Needs a read-only bind mount in a user namespace (`unshare -Urm`); skipped, loudly, where
/// that is not allowed.
#[test]
fn a_database_in_wal_mode_in_a_read_only_folder_says_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let d = db.to_str().unwrap();
    pawndex(&[
        "index",
        "-q",
        "--db",
        d,
        &root_path("examples/sample.pgn").to_string_lossy(),
    ])
    .expect_code(0, "index");
    // The file left in WAL mode (as by a run whose end another connection held), first with
    // no log (the last connection folded it in and removed it and the -shm), then with a log
    // and no -shm (a copy of it, put back).
    let conn = Connection::open(&db).unwrap();
    conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
        .unwrap();
    conn.execute_batch("CREATE TABLE scratch (x); DROP TABLE scratch;")
        .unwrap();
    let log = std::fs::read(wal(&db)).unwrap();
    assert!(!log.is_empty());
    drop(conn);
    assert!(!wal(&db).exists());
    assert_eq!(header_mode(&db), (2, 2));
    let folder = dir.path().to_str().unwrap();
    for with_log in [false, true] {
        if with_log {
            std::fs::write(wal(&db), &log).unwrap();
        }
        for args in [vec!["info"], vec!["check"], vec!["find", "--count"]] {
            let script = format!(
                "mount --bind {folder} {folder} && mount -o remount,bind,ro {folder} && \
                 exec {BIN} {} --db {d}",
                args.join(" ")
            );
            let out = Command::new("unshare")
                .args(["-Urm", "sh", "-c", &script])
                .output();
            let Ok(out) = out else {
                eprintln!("SKIPPED: unshare is not available, no read-only folder to test");
                return;
            };
            let stderr = String::from_utf8_lossy(&out.stderr);
            if stderr.contains("mount:") || stderr.contains("unshare:") {
                eprintln!("SKIPPED: no read-only bind mount here: {stderr}");
                return;
            }
            let what = if with_log {
                format!("{d} is still in write-ahead-log mode with its log {d}-wal")
            } else {
                format!("{d} is still in write-ahead-log mode (")
            };
            assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
            assert!(
                stderr.contains(&what)
                    && stderr.contains("a read-only folder does not allow")
                    && stderr.contains(&format!(
                        "`pawndex migrate --db {d}` where the folder is writable"
                    ))
                    && !stderr.contains("not a SQLite database"),
                "{args:?}, log {with_log}: {stderr}"
            );
        }
    }
}
