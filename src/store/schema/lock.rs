//! The indexing lock: one `pawndex index` (or `migrate`) writes a database at a time.

use std::path::Path;

use anyhow::{Context, Result, bail};

use super::files::existing_sqlite;
use super::open::{new_page_size, rollback_journal};

/// Takes the indexing lock of a database (an advisory lock on the database file itself,
/// independent of SQLite's own locks), so that two `pawndex index` runs never write the same
/// database at once. Readers are not affected. The lock goes when the returned file is dropped.
/// A directory or a file that is not SQLite is refused before anything is created.
pub fn lock_for_indexing(path: &Path) -> Result<std::fs::File> {
    existing_sqlite(path)?;
    // The knobs of `open_for_writing`, checked before the lock creates the file.
    new_page_size()?;
    rollback_journal()?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .with_context(|| format!("cannot open database {} for writing", path.display()))?;
    // A read command that probes the lock ([`indexing_now`]) holds it for an instant: try a
    // few times before calling the database taken.
    let mut tries = 0;
    let locked = loop {
        match file.try_lock() {
            Err(std::fs::TryLockError::WouldBlock) if tries < 10 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            other => break other,
        }
    };
    match locked {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => bail!(
            "another `pawndex index` is writing to {}; wait for it to finish, or index into \
             another database",
            path.display()
        ),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(e).with_context(|| format!("cannot lock database {}", path.display()))
        }
    }
}

/// Whether a `pawndex index` (or `pawndex migrate`) is writing the database at `path` now,
/// i.e. holds its indexing lock ([`lock_for_indexing`]). Probed with a shared lock taken and
/// dropped at once (an index starting in that instant retries). Read commands use it to advise
/// what works: while an index runs, `pawndex migrate` would be refused.
#[must_use]
pub fn indexing_now(path: &Path) -> bool {
    std::fs::File::open(path)
        .is_ok_and(|f| matches!(f.try_lock_shared(), Err(std::fs::TryLockError::WouldBlock)))
}
