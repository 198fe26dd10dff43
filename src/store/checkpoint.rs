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

use std::thread::JoinHandle;

use anyhow::{Context, Result};
use crossbeam_channel::{Sender, TrySendError, bounded};
use rusqlite::{Connection, OpenFlags};

/// The writer's automatic checkpoint when no thread does it (`store::open` sets the same).
pub(super) const AUTOCHECKPOINT_PAGES: i64 = 4000;
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
