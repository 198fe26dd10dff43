//! Checkpoints of the write-ahead log on a thread of their own while `pawndex index` writes.
//!
//! In WAL mode every page is written twice: to the log at each commit, then into the database
//! by a checkpoint. SQLite's automatic checkpoint runs inside the commit that crosses its
//! threshold, so the writer (the pipeline's bottleneck) waited for the copy and for the two
//! `fsync`s around it, every 32 MB. Here a second connection checkpoints after each commit
//! (`PRAGMA wal_checkpoint(PASSIVE)`: it copies what is committed and never waits for the
//! writer or for readers), and the writer's own automatic checkpoint waits for a larger log
//! ([`BEHIND_PAGES`]), finding little left to copy. The guarantees
//! stay SQLite's: the log is synced before it is copied and the database after
//! (`synchronous = NORMAL`); a kill at any point leaves a consistent file.
//!
//! If a checkpoint fails (a full disk, say), the thread ends and the writer turns its own
//! automatic checkpoint back on; the run's last checkpoint, on the writer's connection, then
//! reports what is wrong.
//!
//! At the end of a run, [`fold`] copies the whole log into the database and switches the file
//! back to a rollback journal, waiting a bounded time for readers that keep either from
//! happening, and says what is left when they do not go.

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use crossbeam_channel::{Sender, TrySendError, bounded};
use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::store::schema::AUTOCHECKPOINT_PAGES;

/// The writer's automatic checkpoint beside the thread (128 MiB of 8 KiB pages), which bounds
/// the log. The log starts again from its beginning only at a transaction that began with every
/// frame copied, and the writer begins its next transaction as it commits: the thread's copy
/// is never done by then. So once the log passes this size the writer's own checkpoint copies
/// the last commit's frames (the thread did the rest), and the next commit starts the log
/// again. With the writer's checkpoint off, the log of the four masters shards grew to 488 MiB;
/// with this, to 158 MiB (54 MiB with SQLite's checkpoint alone).
const BEHIND_PAGES: i64 = 16384;

pub(super) struct Checkpointer {
    nudge: Option<Sender<()>>,
    thread: Option<JoinHandle<Result<u64>>>,
}

impl Checkpointer {
    /// Starts the thread for the database of `writer`, and turns the writer's automatic
    /// checkpoint off; `None` (and nothing changed) unless the database is a file in WAL mode.
    pub(super) fn start(writer: &Connection) -> Result<Option<Checkpointer>> {
        let mode: String = writer.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
        let path = match writer.path() {
            Some(p) if !p.is_empty() && mode.eq_ignore_ascii_case("wal") => p.to_owned(),
            _ => return Ok(None),
        };
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .with_context(|| format!("opening {path} for checkpoints"))?;
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        let (nudge, nudged) = bounded::<()>(1);
        let thread = std::thread::Builder::new()
            .name("checkpoint".into())
            .spawn(move || -> Result<u64> {
                let mut done = 0;
                for () in nudged {
                    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
                        .context("checkpoint of the write-ahead log")?;
                    done += 1;
                }
                Ok(done)
            })?;
        writer.pragma_update(None, "wal_autocheckpoint", BEHIND_PAGES)?;
        Ok(Some(Checkpointer {
            nudge: Some(nudge),
            thread: Some(thread),
        }))
    }

    /// Asks for a checkpoint (after a commit); one already asked for and not yet begun covers
    /// this one too. Once the thread has ended on an error, turns the writer's automatic
    /// checkpoint back on.
    pub(super) fn nudge(&mut self, writer: &Connection) -> Result<()> {
        let Some(tx) = &self.nudge else {
            return Ok(());
        };
        match tx.try_send(()) {
            Ok(()) | Err(TrySendError::Full(())) => Ok(()),
            Err(TrySendError::Disconnected(())) => {
                self.nudge = None;
                if let Some(t) = self.thread.take() {
                    let _ = t.join();
                }
                writer.pragma_update(None, "wal_autocheckpoint", AUTOCHECKPOINT_PAGES)?;
                Ok(())
            }
        }
    }

    /// Waits for the checkpoint under way, and ends the thread: the checkpoints it made, or
    /// `None` if it ended on an error (which the writer's own last checkpoint meets again).
    pub(super) fn stop(mut self) -> Option<u64> {
        self.nudge = None;
        self.thread.take()?.join().ok()?.ok()
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.nudge = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// How long the end of a run waits for other connections: for readers that keep it from
/// folding the log in, 30 s; for connections that keep the file in WAL mode, 5 s (they are
/// often there to stay: an idle `sqlite3` shell, a `pawndex serve`). `PAWNDEX_FOLD_WAIT`
/// seconds sets both (a testing knob, read in this one place).
pub(super) fn fold_wait() -> Waits {
    let set = std::env::var("PAWNDEX_FOLD_WAIT")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    Waits {
        log: set.unwrap_or(Duration::from_secs(30)),
        mode: set.unwrap_or(Duration::from_secs(5)),
    }
}

/// The longest waits of [`fold`], for each thing other connections can keep it from doing.
#[derive(Copy, Clone, Debug)]
pub struct Waits {
    pub log: Duration,
    pub mode: Duration,
}

impl Waits {
    /// The wait for `left`.
    #[must_use]
    pub fn of(self, left: Left) -> Duration {
        match left {
            Left::Log => self.log,
            Left::WalMode => self.mode,
        }
    }
}

/// What other connections kept the end of a run from doing.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Left {
    /// The log still holds commits not copied into the database file: a reader kept a read
    /// transaction open on a snapshot older than the last commit.
    Log,
    /// Everything is in the database file, but it stays in WAL mode: another connection kept
    /// the database open (an idle `sqlite3` shell, a `pawndex serve`), and leaving WAL mode
    /// needs the only connection.
    WalMode,
}

impl Left {
    /// What the run waits for, for the line it prints when it starts waiting.
    pub fn waiting_for(self) -> &'static str {
        match self {
            Left::Log => "a reader to end its read transaction",
            Left::WalMode => "the other connections to close it",
        }
    }
}

/// The other processes holding a lock on the shared-memory file of `db` (`DB-shm`, which every
/// connection in WAL mode locks: a reader a range for its snapshot, any open connection one
/// byte), read from Linux's `/proc/locks`; empty where that cannot be read. For the message
/// that names who kept the log from being folded in.
#[must_use]
pub fn shm_holders(db: &str) -> Vec<u32> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(format!("{db}-shm")) else {
        return Vec::new();
    };
    let Ok(locks) = std::fs::read_to_string("/proc/locks") else {
        return Vec::new();
    };
    // `1: POSIX  ADVISORY  READ 1234 fe:00:5456948 128 128`: the pid, then the device as
    // major:minor (hex) and the inode.
    let inode = format!(":{}", meta.ino());
    let me = std::process::id();
    let mut pids: Vec<u32> = locks
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let at = fields.iter().position(|f| *f == "POSIX")?;
            let pid = fields.get(at + 3)?.parse::<u32>().ok()?;
            fields.get(at + 4)?.ends_with(&inode).then_some(pid)
        })
        .filter(|&pid| pid != me)
        .collect();
    pids.sort_unstable();
    pids.dedup();
    pids
}

/// Folds the write-ahead log into the database file (`PRAGMA wal_checkpoint(TRUNCATE)`, whose
/// first column says whether readers kept it from finishing) and switches the file back to a
/// rollback journal (`PRAGMA journal_mode = DELETE`, refused while another connection has it
/// open). Retries each while other connections are in the way, for its wait in `waits` at
/// most, calling `waiting` once for each when it starts to wait. `Ok(None)` when both are done,
/// `Ok(Some(left))` when the time ran out; an error is an I/O error or a full disk.
pub(super) fn fold(
    conn: &Connection,
    waits: Waits,
    waiting: impl FnMut(Left),
) -> Result<Option<Left>> {
    // Short waits inside SQLite, so that the loop decides how long to wait in all.
    conn.busy_timeout(Duration::from_millis(100))?;
    let left = fold_until(conn, waits, waiting);
    conn.busy_timeout(Duration::from_secs(30))?;
    left
}

fn fold_until(
    conn: &Connection,
    waits: Waits,
    mut waiting: impl FnMut(Left),
) -> Result<Option<Left>> {
    // For each thing waited for, when the wait ends.
    let mut deadlines: [Option<Instant>; 2] = [None, None];
    // Whether to try again: false once the time is up.
    let mut again = |left: Left| {
        let deadline = deadlines[left as usize].get_or_insert_with(|| {
            waiting(left);
            Instant::now() + waits.of(left)
        });
        if Instant::now() >= *deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
        true
    };
    loop {
        let busy: i64 = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
        if busy == 0 {
            break;
        }
        if !again(Left::Log) {
            return Ok(Some(Left::Log));
        }
    }
    loop {
        match conn.query_row("PRAGMA journal_mode = DELETE", [], |r| {
            r.get::<_, String>(0)
        }) {
            Ok(mode) if !mode.eq_ignore_ascii_case("wal") => return Ok(None),
            Ok(_) => {}
            Err(e) if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy) => {}
            Err(e) => return Err(e.into()),
        }
        if !again(Left::WalMode) {
            return Ok(Some(Left::WalMode));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The thread copies committed pages into the database file while the writer's own
    /// automatic checkpoint (at 16,384 pages) cannot have run: the file grows only by its hand.
    #[test]
    fn the_thread_copies_commits_into_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.db");
        let writer = Connection::open(&path).unwrap();
        writer
            .query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
            .unwrap();
        writer
            .execute_batch("CREATE TABLE t (x BLOB); PRAGMA wal_checkpoint(TRUNCATE);")
            .unwrap();
        let before = std::fs::metadata(&path).unwrap().len();
        let mut c = Checkpointer::start(&writer).unwrap().expect("a WAL file");
        let auto: i64 = writer
            .query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0))
            .unwrap();
        assert_eq!(auto, BEHIND_PAGES);
        for _ in 0..3 {
            writer
                .execute("INSERT INTO t VALUES (zeroblob(200000))", [])
                .unwrap();
            c.nudge(&writer).unwrap();
        }
        let made = c.stop().expect("the thread ended well");
        assert!(made >= 1, "{made} checkpoints");
        let after = std::fs::metadata(&path).unwrap().len();
        assert!(after >= before + 3 * 200_000, "{before} -> {after} bytes");
        let rows: i64 = Connection::open(&path)
            .unwrap()
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 3);
    }

    /// A reader holding a snapshot keeps the log from being folded in; an idle connection keeps
    /// the file in WAL mode; with neither, both are done.
    #[test]
    fn fold_says_what_other_connections_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.db");
        let writer = Connection::open(&path).unwrap();
        writer
            .query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
            .unwrap();
        writer.execute_batch("CREATE TABLE t (x)").unwrap();
        let reader = Connection::open(&path).unwrap();
        reader
            .execute_batch("BEGIN; SELECT count(*) FROM t;")
            .unwrap();
        writer.execute("INSERT INTO t VALUES (1)", []).unwrap();
        let mut heard = Vec::new();
        let none = Waits {
            log: Duration::ZERO,
            mode: Duration::ZERO,
        };
        let left = fold(&writer, none, |l| heard.push(l)).unwrap();
        assert_eq!(left, Some(Left::Log));
        assert_eq!(heard, [Left::Log]);
        reader.execute_batch("COMMIT").unwrap();
        let short = Waits {
            log: Duration::ZERO,
            mode: Duration::from_millis(200),
        };
        let left = fold(&writer, short, |l| heard.push(l)).unwrap();
        assert_eq!(left, Some(Left::WalMode));
        assert_eq!(heard, [Left::Log, Left::WalMode]);
        drop(reader);
        assert_eq!(fold(&writer, none, |_| {}).unwrap(), None);
        let mode: String = writer
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "delete");
    }

    /// Only a database file in WAL mode gets a thread; the others are left as they are.
    #[test]
    fn no_thread_without_a_wal_file() {
        let memory = Connection::open_in_memory().unwrap();
        assert!(Checkpointer::start(&memory).unwrap().is_none());
        let dir = tempfile::tempdir().unwrap();
        let rollback = Connection::open(dir.path().join("r.db")).unwrap();
        rollback.execute_batch("CREATE TABLE t (x)").unwrap();
        assert!(Checkpointer::start(&rollback).unwrap().is_none());
        let auto: i64 = rollback
            .query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0))
            .unwrap();
        assert_eq!(auto, 1000, "SQLite's default, untouched");
    }
}
