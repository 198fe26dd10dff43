//! `pawndex migrate`: a database brought to the current schema, its derived work finished,
//! a journal a killed run left played back and a log a reader kept unfolded folded in. It uses
//! the schema's opening and the writer's finish, so it stands beside both rooms.

use std::path::Path;

use anyhow::{Result, bail};
use rusqlite::{Connection, OpenFlags};

use super::Writer;
use super::derive::lag;
use super::schema::{
    check_pawndex, existing_sqlite, hot_journal, in_wal_mode, lock_for_indexing, open_failure,
    open_for_writing, wal_bytes,
};

/// What `pawndex migrate` did ([`upgrade`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Upgraded {
    /// The schema version found.
    pub before: i64,
    /// Games merged into the derived tables.
    pub merged: i64,
    /// The bytes of the write-ahead log folded into the database, when the database was left
    /// in WAL mode (by a reader at the end of a run, or a kill).
    pub folded: Option<u64>,
    /// The bytes of the rollback journal an interrupted run left, played back.
    pub rolled_back: Option<u64>,
}

/// Upgrades a database to the current schema, finishes any derived work an interrupted run
/// left, merges the unmerged tail, plays back a journal a killed run left and folds in a log a
/// reader kept unfolded (`pawndex migrate`).
pub fn upgrade(path: &Path) -> Result<Upgraded> {
    if !existing_sqlite(path)? {
        bail!("database {} does not exist", path.display());
    }
    let _lock = lock_for_indexing(path)?;
    // Under the lock no run writes: a journal is a killed run's. A connection that may write
    // plays it back at its first read.
    let rolled_back = hot_journal(path);
    if rolled_back.is_some() {
        Connection::open(path)
            .and_then(|c| c.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0)))
            .map_err(|e| open_failure(path, e))?;
    }
    let folded = in_wal_mode(path).then(|| wal_bytes(path));
    let before = {
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        check_pawndex(&conn, path)?
    };
    let conn = open_for_writing(path)?;
    let merged = lag(&conn)?.pending();
    Writer::new(conn, false)?.finish(true)?;
    Ok(Upgraded {
        before,
        merged,
        folded,
        rolled_back,
    })
}
