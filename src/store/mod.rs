//! Storage: the only module that speaks SQL to the database file. It owns the schema and its
//! migrations (`migrations/`), the bulk writer ([`write`]), the derived tables built after a
//! load ([`derive`]), typed searches compiled to SQL with their count strategy ([`search`]) and
//! read-only opening for queries.
//!
//! Layout (version 2, see `migrations/0002_storage_v2.sql`): `games`, `game_summary`,
//! `rejects`; each distinct pawn set of one side once in `pawn_sets` with its features; `runs`
//! of plies with unchanged (White set, Black set, piece-set, bishop pairs); the inverted index
//! `set_games` and the aggregates `set_totals`, which cover the games up to `derived.through`
//! (version 3, `migrations/0003_unmerged_tail.sql`: a small append leaves its games above it, in
//! the unmerged tail that readers take from `runs`; `derived.finished` tells it from an
//! interrupted run); and the view `ply_features`, one row per game and ply.

// `Record::text` and `Tree::add` (records with text, for laid-out `games`, `game_summary` and
// `structure_changes`) have no caller since those tables go through SQL (issue 38).
#[allow(dead_code)]
mod bulk_tree;
pub mod check;
pub mod count;
mod derive;
pub mod dialect;
pub mod dump;
pub mod games;
pub mod ids;
pub mod info;
pub mod params;
mod rows;
pub mod search;
mod side_columns;
pub mod similar;
pub mod similar_sql;
pub mod sql_lex;
pub mod stats;
pub mod structure_report;
pub mod structures;
mod walk;
mod write;

use std::path::Path;

use crate::model::structure::Catalogue;
use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OpenFlags, TransactionBehavior};

pub use derive::{SetAggregate, TAIL_MAX_GAMES, decode_games, lag, tail_sets};
use write::checkpoint;
pub use write::{Unfolded, WriteFailed, Writer};

/// A way of reading forced from outside, for tests and measurements: `PAWNDEX_PLAN=scan`
/// (scan the runs, never the game lists or the top-sets shortcut) or `PAWNDEX_PLAN=lists`
/// (the game lists whenever they apply).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ForcedPlan {
    Scan,
    Lists,
}

/// The plan `PAWNDEX_PLAN` forces, if any (one place reads the variable).
#[must_use]
pub fn forced_plan() -> Option<ForcedPlan> {
    match std::env::var("PAWNDEX_PLAN").ok()?.as_str() {
        "scan" => Some(ForcedPlan::Scan),
        "lists" => Some(ForcedPlan::Lists),
        _ => None,
    }
}

/// The page limit `PAWNDEX_MAX_PAGES` sets on the writing connection, if any (one place reads
/// the variable). A testing knob: SQLite then fails a write that would grow the file past that
/// many pages with SQLITE_FULL, as a full disk does, without filling one.
fn max_pages() -> Option<i64> {
    std::env::var("PAWNDEX_MAX_PAGES").ok()?.trim().parse().ok()
}

/// The page size of a new database: 8 KiB, or `PAWNDEX_PAGE_SIZE` (a power of two from 512 to
/// 65,536; for the tests that build the same games at several page sizes). Any other value is
/// refused: a knob that silently did nothing would make such a test pass for the wrong reason.
fn new_page_size() -> Result<i64> {
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
fn rollback_journal() -> Result<bool> {
    match std::env::var("PAWNDEX_JOURNAL") {
        Err(_) => Ok(false),
        Ok(v) if v.eq_ignore_ascii_case("delete") => Ok(true),
        Ok(v) if v.eq_ignore_ascii_case("wal") => Ok(false),
        Ok(v) => anyhow::bail!("PAWNDEX_JOURNAL={v}: the journal modes are wal and delete"),
    }
}

/// Numbered migrations, applied in order; `PRAGMA user_version` holds how many ran.
/// Append only: never edit or remove one that has shipped.
pub const MIGRATIONS: &[&str] = &[
    include_str!("../../migrations/0001_init.sql"),
    include_str!("../../migrations/0002_storage_v2.sql"),
    include_str!("../../migrations/0003_unmerged_tail.sql"),
    include_str!("../../migrations/0004_structures.sql"),
];

/// The schema version this binary writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

fn schema_version(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// A file beside the database: `path` with `suffix` (`-wal`, `-journal`) appended.
fn beside(path: &Path, suffix: &str) -> std::path::PathBuf {
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
const JOURNAL_MAGIC: [u8; 8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7];

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

/// What a failed first read of the database at `path` means, in words that say what to do:
/// a hot journal left by a killed run, a database still in WAL mode in a folder where SQLite
/// cannot open its log, a file that is not SQLite, or else the cause as SQLite gives it.
fn open_failure(path: &Path, e: rusqlite::Error) -> anyhow::Error {
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
fn check_pawndex(conn: &Connection, path: &Path) -> Result<i64> {
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

/// Applies the migrations the database has not seen and brings its named structures to the
/// catalogue in force ([`structures::sync`]), all in one transaction: a reader sees the
/// database before or after the upgrade, never a schema half built (a fresh database at version
/// 1 of 4, say) nor runs half re-classified, and an interrupted upgrade leaves the old version
/// whole.
pub fn migrate(conn: &mut Connection, path: &Path) -> Result<()> {
    let version = check_pawndex(conn, path)?;
    let catalogue = Catalogue::active();
    if version >= SCHEMA_VERSION && structures::is_current(conn, catalogue)? {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Checked again inside the write transaction: another process may have upgraded the
    // database between the first check and taking the write lock.
    let version = schema_version(&tx)?;
    side_columns::register_kernels(&tx)?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tx.execute_batch(sql)
            .with_context(|| format!("applying migration {}", i + 1))?;
    }
    if version < SCHEMA_VERSION {
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    }
    let reclassifying = version > 0 && !structures::rules_current(&tx, catalogue)?;
    if reclassifying {
        eprintln!(
            "pawndex: classifying the named structures of {} with the current catalogue",
            path.display()
        );
    }
    structures::sync(&tx, catalogue, &|_, _| {}).context("classifying named structures")?;
    tx.commit()?;
    Ok(())
}

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

/// The first 16 bytes of every SQLite database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

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
fn existing_sqlite(path: &Path) -> Result<bool> {
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
    conn.pragma_update(None, "wal_autocheckpoint", checkpoint::AUTOCHECKPOINT_PAGES)?;
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
const QUICK_CHECK_MAX_BYTES: u64 = 64 << 20;

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

/// Settings for a reading command's connection: nothing can be written (`query_only`), pages
/// come memory-mapped, a 64 MiB page cache, temporary tables (piece masks) in memory.
pub fn tune_for_reading(conn: &Connection) -> Result<()> {
    conn.execute_batch(
        "PRAGMA query_only = ON;
         PRAGMA mmap_size = 17179869184;
         PRAGMA cache_size = -65536;
         PRAGMA temp_store = MEMORY;",
    )?;
    Ok(())
}

/// The database every command uses without `--db`.
pub const DEFAULT_DB: &str = "pawndex.db";

/// Opens a database for a reading command: read-only (no file is created), `query_only`,
/// memory-mapped, a large page cache, temporary tables in memory.
pub fn open_for_reading(db: &Path) -> Result<Connection> {
    let conn = open_read_only(db)?;
    tune_for_reading(&conn)?;
    ids::from_one(&conn)?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
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
