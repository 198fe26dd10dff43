//! Opening a database: for writing (created if needed, its schema brought up to date) or
//! read-only (refused unless it is a pawndex database this binary reads), with what a failure
//! to open means in words that say what to do.

use std::path::Path;

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OpenFlags};

use super::files::{existing_sqlite, hot_journal, in_wal_mode, wal_bytes};
use super::migrations::{SCHEMA_VERSION, migrate};

/// The page limit `PAWNDEX_MAX_PAGES` sets on the writing connection, if any (one place reads
/// the variable). A testing knob: SQLite then fails a write that would grow the file past that
/// many pages with SQLITE_FULL, as a full disk does, without filling one.
pub(crate) fn max_pages() -> Option<i64> {
    std::env::var("PAWNDEX_MAX_PAGES").ok()?.trim().parse().ok()
}

/// The page size of a new database: 8 KiB, or `PAWNDEX_PAGE_SIZE` (a power of two from 512 to
/// 65,536; for the tests that build the same games at several page sizes). Any other value is
/// refused: a knob that silently did nothing would make such a test pass for the wrong reason.
pub(crate) fn new_page_size() -> Result<i64> {
    let Ok(text) = std::env::var("PAWNDEX_PAGE_SIZE") else {
        return Ok(8192);
    };
    match text.trim().parse::<i64>() {
        Ok(n) if (512..=65536).contains(&n) && n.count_ones() == 1 => Ok(n),
        _ => anyhow::bail!(
            "PAWNDEX_PAGE_SIZE={text}: a page size is a power of two from 512 to 65536"
        ),
    }
}

/// Whether a run keeps a rollback journal throughout (`PAWNDEX_JOURNAL=delete`), instead of
/// writing through a write-ahead log and switching back at its end: for the tests that build
/// the same games in both journal modes.
pub(crate) fn rollback_journal() -> Result<bool> {
    match std::env::var("PAWNDEX_JOURNAL") {
        Err(_) => Ok(false),
        Ok(v) if v.eq_ignore_ascii_case("delete") => Ok(true),
        Ok(v) if v.eq_ignore_ascii_case("wal") => Ok(false),
        Ok(v) => anyhow::bail!("PAWNDEX_JOURNAL={v}: the journal modes are wal and delete"),
    }
}

/// What a failed first read of the database at `path` means, in words that say what to do:
/// a hot journal left by a killed run, a database still in WAL mode in a folder where SQLite
/// cannot open its log, a file that is not SQLite, or else the cause as SQLite gives it.
pub(crate) fn open_failure(path: &Path, e: rusqlite::Error) -> anyhow::Error {
    let db = path.display();
    let code = e.sqlite_error().map(|f| (f.code, f.extended_code));
    let read_only = matches!(code, Some((rusqlite::ErrorCode::ReadOnly, _)));
    // SQLITE_READONLY_ROLLBACK: a hot journal this read-only connection cannot play back.
    if let Some(bytes) = hot_journal(path)
        && (read_only || code.is_some_and(|(_, x)| x == rusqlite::ffi::SQLITE_READONLY_ROLLBACK))
    {
        return anyhow::anyhow!(
            "{db} was left mid-write by an interrupted run: its rollback journal {db}-journal \
             ({bytes} bytes) must be played back before the database can be read, and this \
             command only reads; run `pawndex migrate --db {db}` (or the `pawndex index` \
             command again), which plays it back to the last commit"
        );
    }
    let cannot_open = read_only || matches!(code, Some((rusqlite::ErrorCode::CannotOpen, _)));
    if cannot_open && in_wal_mode(path) {
        let wal = wal_bytes(path);
        let log = if wal > 0 {
            format!(" with its log {db}-wal ({wal} bytes) beside it")
        } else {
            String::new()
        };
        return anyhow::anyhow!(
            "{db} is still in write-ahead-log mode{log} (a `pawndex index` ended while another \
             connection had it open, or was killed), and SQLite cannot open it here: it must \
             create or update {db}-shm beside it, which a read-only folder does not allow; run \
             `pawndex migrate --db {db}` where the folder is writable, which folds the log in \
             and leaves one self-contained file ({e})"
        );
    }
    if matches!(code, Some((rusqlite::ErrorCode::NotADatabase, _))) {
        return anyhow::Error::new(e)
            .context(format!("{db} is not a SQLite database (or is damaged)"));
    }
    anyhow::Error::new(e).context(format!("cannot read database {db}"))
}

/// Checks that an opened file is a pawndex database this binary understands.
pub(crate) fn check_pawndex(conn: &Connection, path: &Path) -> Result<i64> {
    let version = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| open_failure(path, e))?;
    let tables: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'",
        [],
        |r| r.get(0),
    )?;
    let ours: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_schema
         WHERE (type = 'table' AND name IN ('games', 'rejects', 'game_summary'))
            OR (type = 'view' AND name = 'ply_features')",
        [],
        |r| r.get(0),
    )?;
    if (version == 0 && tables > 0) || (version > 0 && ours < 4) {
        bail!(
            "{} is a SQLite database but not a pawndex database; it was left untouched",
            path.display()
        );
    }
    if version > SCHEMA_VERSION {
        bail!(
            "{} has schema version {version}, newer than this pawndex understands ({SCHEMA_VERSION}); \
             use a newer pawndex",
            path.display()
        );
    }
    Ok(version)
}

/// The writer's automatic checkpoint when no thread does it (the write path's checkpoint thread
/// turns it back to this when it ends).
pub(in crate::store) const AUTOCHECKPOINT_PAGES: i64 = 4000;

/// Opens (creating if needed) a database for writing and brings its schema up to date. A file
/// that is not a pawndex database is refused before anything is written to it.
pub fn open_for_writing(path: &Path) -> Result<Connection> {
    let existed = existing_sqlite(path)?;
    // The knobs are read before the file is created: a bad value leaves nothing behind.
    let (page_size, rollback) = (new_page_size()?, rollback_journal()?);
    let mut conn = Connection::open(path)
        .with_context(|| format!("cannot open database {}", path.display()))?;
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    if existed {
        // Read-only checks first: a foreign or newer file must stay byte-identical.
        check_pawndex(&conn, path)?;
        // A small file is checked whole before anything is added (well under a second). A
        // larger one is not: the check reads every page, so an append of a few thousand games
        // to a 6 GB database would cost 40 s. SQLite still refuses any damaged page the run
        // touches, and the run then rolls back; `pawndex check` verifies a file whole.
        if std::fs::metadata(path).map_or(true, |m| m.len() <= QUICK_CHECK_MAX_BYTES) {
            quick_check(&conn, path)?;
        }
    } else {
        // Only takes effect on an empty file; larger pages suit the bulk, append-mostly load.
        conn.pragma_update(None, "page_size", page_size)?;
    }
    // WAL while writing: readers keep a consistent snapshot while a run writes. The run's
    // last step switches the file back to a rollback journal, so a finished database is one
    // self-contained file (see `Writer::finish`).
    let mode = if rollback { "DELETE" } else { "WAL" };
    conn.pragma_update(None, "journal_mode", mode)
        .with_context(|| format!("cannot write to database {}", path.display()))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "cache_size", -256_000)?;
    // While games are stored, pages are read through a memory map: an append's lookups in the
    // indexes of a large database then cost no system call each. (`Writer::finish` turns it
    // off before the derived tables are built, which read every new run: mapped pages count
    // in the resident size.)
    conn.pragma_update(None, "mmap_size", 1i64 << 34)?;
    // A bounded WAL: checkpoints every 4,000 pages (32 MB) unless a long reader holds it.
    // (`Writer` moves the checkpoints to a thread of their own: `checkpoint`.)
    conn.pragma_update(None, "wal_autocheckpoint", AUTOCHECKPOINT_PAGES)?;
    conn.pragma_update(None, "journal_size_limit", 64 << 20)?;
    // Sorts larger than the cache spill to temporary files, not to memory, so memory does not
    // grow with the input.
    conn.pragma_update(None, "temp_store", "FILE")?;
    if let Some(pages) = max_pages() {
        conn.pragma_update(None, "max_page_count", pages)?;
    }
    migrate(&mut conn, path)?;
    Ok(conn)
}

/// Databases up to this size are quick-checked whole before an index run adds to them.
pub(crate) const QUICK_CHECK_MAX_BYTES: u64 = 64 << 20;

/// SQLite's quick check (structure of every page and index); refuses a damaged database.
pub fn quick_check(conn: &Connection, path: &Path) -> Result<()> {
    let mut st = conn.prepare("PRAGMA quick_check(20)")?;
    let problems: Vec<String> = st
        .query_map([], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect())
        .with_context(|| {
            format!(
                "{} is damaged (the quick check cannot read it)",
                path.display()
            )
        })?;
    if problems != ["ok"] {
        bail!(
            "{} is damaged; SQLite's quick check says:\n  {}\nrun `pawndex check --db {}` for details; the file was left untouched",
            path.display(),
            problems.join("\n  "),
            path.display()
        );
    }
    Ok(())
}

/// Opens an existing database read-only (queries and statistics). Creates no file beside it
/// when the database is finished (rollback journal); a run still writing keeps it in WAL mode.
pub fn open_read_only(path: &Path) -> Result<Connection> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "database {} does not exist; create it with `pawndex index --db {} GAMES.pgn`",
            path.display(),
            path.display()
        ),
        Err(e) => {
            return Err(e).with_context(|| format!("cannot open database {}", path.display()));
        }
        Ok(m) if m.is_dir() => bail!("{} is a directory, not a database file", path.display()),
        Ok(_) => {}
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .with_context(|| format!("cannot open database {}", path.display()))?;
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    let version = check_pawndex(&conn, path)?;
    if version == 0 {
        // No table at all (`check_pawndex` refuses a SQLite file with tables of its own).
        bail!(
            "{} is empty: it holds no pawndex tables yet. A first `pawndex index` interrupted \
             before it created them leaves such a file; run `pawndex index --db {} GAMES.pgn` \
             to fill it",
            path.display(),
            path.display()
        );
    }
    if version < SCHEMA_VERSION {
        bail!(
            "{} has schema version {version} (this pawndex reads {SCHEMA_VERSION}); upgrade it with `pawndex migrate --db {}`",
            path.display(),
            path.display()
        );
    }
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::super::migrations::{MIGRATIONS, schema_version};
    use super::*;

    #[test]
    fn migrations_set_the_version_and_refuse_newer_databases() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let conn = open_for_writing(&path).unwrap();
        assert_eq!(schema_version(&conn).unwrap(), SCHEMA_VERSION);
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        drop(conn);
        let err = open_for_writing(&path).unwrap_err().to_string();
        assert!(err.contains("newer than this pawndex"), "{err}");
    }

    /// A reader polling a database being created must never see a schema half built: every
    /// migration lands in one commit, and an upgrade from version 1 in one more.
    #[test]
    fn a_fresh_database_and_an_upgrade_each_take_one_commit() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let dir = tempfile::tempdir().unwrap();
        for from in [0, 1] {
            let path = dir.path().join(format!("from{from}.db"));
            let mut conn = Connection::open(&path).unwrap();
            if from == 1 {
                conn.execute_batch(MIGRATIONS[0]).unwrap();
                conn.pragma_update(None, "user_version", 1).unwrap();
            }
            let commits = Arc::new(AtomicUsize::new(0));
            let seen = Arc::clone(&commits);
            conn.commit_hook(Some(move || {
                seen.fetch_add(1, Ordering::SeqCst);
                false
            }));
            migrate(&mut conn, &path).unwrap();
            assert_eq!(schema_version(&conn).unwrap(), SCHEMA_VERSION);
            assert_eq!(commits.load(Ordering::SeqCst), 1, "from version {from}");
        }
    }

    #[test]
    fn foreign_sqlite_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.db");
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE t(x)")
            .unwrap();
        let err = open_for_writing(&path).unwrap_err().to_string();
        assert!(err.contains("not a pawndex database"), "{err}");
    }
}
