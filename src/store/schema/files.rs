//! The files of a database as the file system sees them, before SQLite opens it: the log and
//! journal beside it, and the first bytes of its header. Nothing here writes.

use std::path::Path;

use anyhow::{Context, Result, bail};

/// A file beside the database: `path` with `suffix` (`-wal`, `-journal`) appended.
pub(crate) fn beside(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    name.into()
}

/// Bytes of the write-ahead log beside `path` (0 when there is none).
#[must_use]
pub fn wal_bytes(path: &Path) -> u64 {
    std::fs::metadata(beside(path, "-wal")).map_or(0, |m| m.len())
}

/// Whether the database header says WAL mode (its read and write versions, bytes 18 and 19,
/// are 2): then SQLite opens it only with its `-wal` and `-shm` beside it, which it must be
/// able to create or update. Reads 20 bytes, writes nothing.
#[must_use]
pub fn in_wal_mode(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 20];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head[..16] == SQLITE_MAGIC && head[18] == 2 && head[19] == 2)
}

/// The first 8 bytes of a rollback journal that holds pages to play back.
pub(crate) const JOURNAL_MAGIC: [u8; 8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7];

/// The rollback journal a killed writer left beside `path` (a "hot journal": non-empty, with a
/// valid header), and its size. SQLite plays it back (restoring the last commit) when a
/// connection that may write opens the database; a read-only one cannot. Reads 8 bytes.
#[must_use]
pub fn hot_journal(path: &Path) -> Option<u64> {
    use std::io::Read;
    let mut f = std::fs::File::open(beside(path, "-journal")).ok()?;
    let len = f.metadata().ok()?.len();
    let mut head = [0u8; 8];
    f.read_exact(&mut head).ok()?;
    (head == JOURNAL_MAGIC).then_some(len)
}

/// The first 16 bytes of every SQLite database file.
pub(crate) const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Whether `path` is a file that starts like a SQLite database (its first 16 bytes); `false`
/// for anything that cannot be read. Reads 16 bytes, writes nothing.
#[must_use]
pub fn is_sqlite_file(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head == SQLITE_MAGIC)
}

/// Looks at a file before SQLite opens it for writing: `Ok(false)` when it does not exist or is
/// empty (a new database), `Ok(true)` for a SQLite file; an error for a directory or a file
/// that is not SQLite. Nothing is written.
pub(crate) fn existing_sqlite(path: &Path) -> Result<bool> {
    use std::io::Read;
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => {
            return Err(e).with_context(|| format!("cannot open database {}", path.display()));
        }
    };
    if meta.is_dir() {
        bail!("{} is a directory, not a database file", path.display());
    }
    if meta.len() == 0 {
        return Ok(false);
    }
    let mut head = [0u8; 16];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .with_context(|| format!("cannot read database {}", path.display()))?;
    if n < 16 || &head != SQLITE_MAGIC {
        bail!(
            "{} is not a SQLite database, so not a pawndex database; it was left untouched",
            path.display()
        );
    }
    Ok(true)
}
