//! The one way the layers above the store read a database: a [`Snapshot`], one read-only
//! connection inside one read transaction (every statement of a command or a request sees the
//! same state, whatever a concurrent `pawndex index` appends meanwhile), under one [`Limit`]
//! (a deadline and a cancel flag: `query --timeout` and Ctrl-C on the command line, the time
//! limit of a request and the client going away in the server). Reads that run on several
//! threads take more connections from the same snapshot ([`Snapshot::fork`]), under the same
//! limit.
//!
//! The errors a read ends with are classified here ([`is_interrupted`], [`is_corrupt`],
//! [`sql_input_error`]), so that no layer above names SQLite's error types.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;
use rusqlite::Connection;

/// How many SQLite virtual-machine steps pass between two looks at the limit.
const STEPS_PER_CHECK: i32 = 1000;

/// When reads must stop: past a deadline, or once cancelled (Ctrl-C, a client gone). Clones
/// share the cancel flag.
#[derive(Clone, Debug, Default)]
pub struct Limit {
    cancelled: Arc<AtomicBool>,
    deadline: Option<Instant>,
}

impl Limit {
    /// No deadline; stops only when cancelled.
    #[must_use]
    pub fn none() -> Limit {
        Limit::default()
    }

    /// A deadline `time` from now (none without one).
    #[must_use]
    pub fn within(time: Option<Duration>) -> Limit {
        Limit {
            cancelled: Arc::default(),
            deadline: time.map(|t| Instant::now() + t),
        }
    }

    /// Stops every read under this limit: the statements running stop within a few thousand
    /// steps and fail as interrupted ([`is_interrupted`]).
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
    }

    /// Whether [`Limit::cancel`] was called.
    #[must_use]
    pub fn cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// Whether the deadline has passed.
    #[must_use]
    pub fn timed_out(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Whether the work should stop now (cancelled, or past the deadline): for work between
    /// statements.
    #[must_use]
    pub fn passed(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed) || self.timed_out()
    }

    /// Makes `conn`'s statements stop once the limit has passed.
    pub(crate) fn install(&self, conn: &Connection) {
        let limit = self.clone();
        conn.progress_handler(STEPS_PER_CHECK, Some(move || limit.passed()));
    }
}

/// An open read-only connection, outside any transaction: what a pool keeps between requests.
pub struct Reader {
    conn: Connection,
    path: PathBuf,
}

impl Reader {
    /// Opens the database at `path` for reading ([`crate::store::open_for_reading`]).
    pub fn open(path: &Path) -> Result<Reader> {
        Ok(Reader {
            conn: super::open_for_reading(path)?,
            path: path.to_path_buf(),
        })
    }

    /// Begins a read transaction under `limit`.
    pub fn snapshot(self, limit: &Limit) -> Result<Snapshot> {
        limit.install(&self.conn);
        let snapshot = Snapshot {
            conn: Some(self.conn),
            path: self.path,
            limit: limit.clone(),
        };
        snapshot.execute_batch("BEGIN")?;
        Ok(snapshot)
    }

    /// Opens the database at `path` read-only as it is found
    /// ([`crate::store::schema::open_read_only`]: a pawndex database this binary reads), not
    /// tuned and with its ids not checked: for `check` and `info`, which report what they find.
    pub fn open_as_found(path: &Path) -> Result<Reader> {
        Ok(Reader {
            conn: crate::store::schema::open_read_only(path)?,
            path: path.to_path_buf(),
        })
    }

    /// A reader over an in-memory database, for tests of what runs readers.
    #[cfg(test)]
    pub(crate) fn in_memory() -> Reader {
        Reader {
            conn: Connection::open_in_memory().unwrap(),
            path: PathBuf::from(":memory:"),
        }
    }
}

impl std::ops::Deref for Reader {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.conn
    }
}

/// Stops the statement a connection runs now, from another thread (its read fails as
/// interrupted, see [`is_interrupted`]).
pub struct Interrupter(rusqlite::InterruptHandle);

impl Interrupter {
    /// The interrupter of `conn`.
    pub(crate) fn of(conn: &Connection) -> Interrupter {
        Interrupter(conn.get_interrupt_handle())
    }

    /// Stops the statement running now, if any.
    pub fn interrupt(&self) {
        self.0.interrupt();
    }
}

/// One read-only connection in one read transaction, under a [`Limit`]. The store's reads take
/// it (it dereferences to the connection, for them); the transaction ends when it is dropped
/// or [`Snapshot::end`]ed.
pub struct Snapshot {
    /// Taken out only by [`Snapshot::end`].
    conn: Option<Connection>,
    path: PathBuf,
    limit: Limit,
}

impl Snapshot {
    /// Opens the database at `path` for reading and begins the snapshot under `limit`.
    pub fn open(path: &Path, limit: &Limit) -> Result<Snapshot> {
        Reader::open(path)?.snapshot(limit)
    }

    /// One more connection to the same database, in a read transaction of its own and under
    /// the same limit: for reads that run on several threads at once.
    pub fn fork(&self) -> Result<Snapshot> {
        self.forks().open()
    }

    /// What forks this snapshot from other threads (a snapshot stays on its thread).
    #[must_use]
    pub fn forks(&self) -> Forks {
        Forks {
            path: self.path.clone(),
            limit: self.limit.clone(),
        }
    }

    /// The database file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The limit the reads run under.
    #[must_use]
    pub fn limit(&self) -> &Limit {
        &self.limit
    }

    /// Ends the read transaction and lifts the limit; the connection can serve again.
    #[must_use]
    pub fn end(mut self) -> Option<Reader> {
        self.close();
        Some(Reader {
            conn: self.conn.take()?,
            path: std::mem::take(&mut self.path),
        })
    }

    fn close(&self) {
        if let Some(conn) = &self.conn {
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
            conn.progress_handler(0, None::<fn() -> bool>);
        }
    }
}

/// Opens more snapshots of one database under one limit, from any thread
/// ([`Snapshot::forks`]).
#[derive(Clone, Debug)]
pub struct Forks {
    path: PathBuf,
    limit: Limit,
}

impl Forks {
    /// One more connection to the database, in a read transaction of its own, under the limit.
    pub fn open(&self) -> Result<Snapshot> {
        Snapshot::open(&self.path, &self.limit)
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.close();
    }
}

impl std::ops::Deref for Snapshot {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn
            .as_ref()
            .expect("a snapshot holds its connection until it ends")
    }
}

/// Whether the error (anywhere in its chain) is a read stopped by its [`Limit`], or by
/// [`interrupted`].
#[must_use]
pub fn is_interrupted(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<rusqlite::Error>(),
            Some(rusqlite::Error::SqliteFailure(f, _))
                if f.code == rusqlite::ErrorCode::OperationInterrupted
        )
    })
}

/// Whether SQLite found a damaged page somewhere in the error's chain.
#[must_use]
pub fn is_corrupt(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<rusqlite::Error>(),
            Some(rusqlite::Error::SqliteFailure(f, _))
                if f.code == rusqlite::ErrorCode::DatabaseCorrupt
        )
    })
}

/// The error of work stopped between statements (its limit passed): SQLite's "interrupted",
/// as a statement stopped by the same limit fails, with `why`.
#[must_use]
pub fn interrupted(why: &str) -> anyhow::Error {
    anyhow::Error::new(rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_INTERRUPT),
        Some(why.into()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A statement that never ends by itself.
    const ENDLESS: &str =
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

    fn endless(s: &Snapshot) -> anyhow::Error {
        anyhow::Error::from(
            s.query_row(ENDLESS, [], |r| r.get::<_, i64>(0))
                .unwrap_err(),
        )
    }

    #[test]
    fn a_cancelled_limit_stops_the_snapshot_and_its_forks_as_interrupted() {
        let limit = Limit::none();
        let first = Reader::in_memory().snapshot(&limit).unwrap();
        let stopper = limit.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            stopper.cancel();
        });
        let e = endless(&first);
        t.join().unwrap();
        assert!(is_interrupted(&e), "{e:#}");
        assert!(!is_corrupt(&e));
        assert!(first.limit().cancelled() && first.limit().passed());
        assert!(is_interrupted(&interrupted("stopped between runs")));
    }

    #[test]
    fn a_deadline_stops_a_statement_and_an_ended_snapshot_serves_again() {
        let snapshot = Reader::in_memory()
            .snapshot(&Limit::within(Some(Duration::from_millis(30))))
            .unwrap();
        assert!(
            !snapshot.is_autocommit(),
            "the snapshot reads in a transaction"
        );
        let e = endless(&snapshot);
        assert!(is_interrupted(&e), "{e:#}");
        assert!(snapshot.limit().timed_out());
        // Ended: out of its transaction, its limit lifted; the next snapshot reads again.
        let again = snapshot.end().unwrap().snapshot(&Limit::none()).unwrap();
        let n: i64 = again.query_row("SELECT 7", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 7);
    }
}
