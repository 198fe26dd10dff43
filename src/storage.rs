//! Stage 3 of the pipeline, and the only module that speaks SQL to the database file: schema
//! migrations, the bulk writer, and read-only opening for queries.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::features::SideFeatures;
use crate::replay::{GameRecord, Reject, roster};

/// Numbered migrations, applied in order; `PRAGMA user_version` holds how many ran.
/// Append only: never edit or remove one that has shipped.
pub const MIGRATIONS: &[&str] = &[include_str!("../migrations/0001_init.sql")];

/// The schema version this binary writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

fn schema_version(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// Checks that an opened file is a pawndex database this binary understands.
fn check_pawndex(conn: &Connection, path: &Path) -> Result<i64> {
    let version = schema_version(conn).with_context(|| {
        format!(
            "{} is not a SQLite database (or is damaged)",
            path.display()
        )
    })?;
    if version > SCHEMA_VERSION {
        bail!(
            "{} has schema version {version}, newer than this pawndex understands ({SCHEMA_VERSION}); \
             use a newer pawndex",
            path.display()
        );
    }
    let tables: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'",
        [],
        |r| r.get(0),
    )?;
    if version == 0 && tables > 0 {
        bail!(
            "{} is a SQLite database but not a pawndex database (it has other tables)",
            path.display()
        );
    }
    Ok(version)
}

/// Applies the migrations the database has not seen, each in its own transaction.
pub fn migrate(conn: &mut Connection, path: &Path) -> Result<()> {
    let version = check_pawndex(conn, path)?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)
            .with_context(|| format!("applying migration {}", i + 1))?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
    }
    Ok(())
}

/// Takes the indexing lock of a database (an advisory lock on the database file itself,
/// independent of SQLite's own locks), so that two `pawndex index` runs never write the same
/// database at once. Readers are not affected. The lock goes when the returned file is dropped.
pub fn lock_for_indexing(path: &Path) -> Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .with_context(|| format!("cannot open database {} for writing", path.display()))?;
    match file.try_lock() {
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

/// Opens (creating if needed) a database for writing and brings its schema up to date.
pub fn open_for_writing(path: &Path) -> Result<Connection> {
    let mut conn = Connection::open(path)
        .with_context(|| format!("cannot open database {}", path.display()))?;
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    let fresh = schema_version(&conn).unwrap_or(0) == 0;
    if fresh {
        // Only takes effect on an empty file; larger pages suit the bulk, append-mostly load.
        let _ = conn.pragma_update(None, "page_size", 8192);
    }
    // WAL: readers keep a consistent snapshot while a run writes.
    conn.pragma_update(None, "journal_mode", "WAL")
        .with_context(|| format!("{} is not a SQLite database", path.display()))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "cache_size", -512_000)?;
    // Sorts larger than the cache (building the deferred indexes) spill to temporary files, not
    // to memory, so memory does not grow with the input.
    conn.pragma_update(None, "temp_store", "FILE")?;
    migrate(&mut conn, path)?;
    restore_deferred_indexes(&conn)?;
    Ok(conn)
}

/// Secondary indexes that a bulk load into an empty database builds once at the end (sorting
/// is far cheaper than millions of random B-tree inserts).
const DEFERRED_INDEXES: &[&str] = &[
    "positions_structure",
    "structures_pawns",
    "structures_white_shape",
    "structures_black_shape",
];

/// Drops the deferred indexes, remembering their definitions in `deferred_indexes` in the same
/// transaction, so that a run killed before [`restore_deferred_indexes`] leaves a database
/// that the next open repairs.
pub fn defer_indexes(conn: &Connection) -> Result<()> {
    conn.execute_batch(
        "BEGIN IMMEDIATE;
         CREATE TABLE IF NOT EXISTS deferred_indexes (name TEXT PRIMARY KEY, sql TEXT NOT NULL);",
    )?;
    let result = (|| -> Result<()> {
        for name in DEFERRED_INDEXES {
            let sql: Option<String> = conn
                .query_row(
                    "SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?1",
                    [name],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(sql) = sql {
                conn.execute(
                    "INSERT OR REPLACE INTO deferred_indexes (name, sql) VALUES (?1, ?2)",
                    params![name, sql],
                )?;
                conn.execute_batch(&format!("DROP INDEX {name}"))?;
            }
        }
        Ok(())
    })();
    match result {
        Ok(()) => Ok(conn.execute_batch("COMMIT")?),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Builds any index a previous bulk load deferred (after it finished, or was killed).
pub fn restore_deferred_indexes(conn: &Connection) -> Result<()> {
    let exists: bool = conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE name = 'deferred_indexes'",
        [],
        |r| r.get(0),
    )?;
    if !exists {
        return Ok(());
    }
    let pending: Vec<(String, String)> = conn
        .prepare("SELECT name, sql FROM deferred_indexes ORDER BY name")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| -> Result<()> {
        for (name, sql) in &pending {
            conn.execute_batch(sql)
                .with_context(|| format!("building index {name}"))?;
        }
        conn.execute_batch("DROP TABLE deferred_indexes")?;
        Ok(())
    })();
    match result {
        Ok(()) => Ok(conn.execute_batch("COMMIT")?),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Opens an existing database read-only (queries and statistics).
pub fn open_read_only(path: &Path) -> Result<Connection> {
    if !path.exists() {
        bail!(
            "database {} does not exist; create it with `pawndex index --db {} GAMES.pgn`",
            path.display(),
            path.display()
        );
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .with_context(|| format!("cannot open database {}", path.display()))?;
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    let version = check_pawndex(&conn, path)?;
    if version == 0 {
        bail!("{} is empty, not a pawndex database", path.display());
    }
    if version < SCHEMA_VERSION {
        bail!(
            "{} has schema version {version}; run `pawndex index --db {}` once to upgrade it",
            path.display(),
            path.display()
        );
    }
    Ok(conn)
}

/// What happened to one game handed to the writer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stored {
    Indexed,
    Duplicate,
    Rejected,
}

/// The single writer: owns the connection and the in-memory caches used while loading.
pub struct Writer {
    conn: Connection,
    keep_duplicates: bool,
    structure_ids: HashMap<(u64, u64), i64>,
    next_structure_id: i64,
    game_hashes: HashSet<i64>,
    ply_numbers: i64,
    in_transaction: bool,
    /// Rows waiting for a multi-row INSERT (far fewer statement executions than row by row).
    pending_positions: Vec<[i64; POSITION_COLUMNS]>,
    pending_structures: Vec<[i64; STRUCTURE_COLUMNS]>,
}

const POSITION_COLUMNS: usize = 6;
const STRUCTURE_COLUMNS: usize = 15;
/// Rows per multi-row INSERT statement.
const ROWS_PER_INSERT: usize = 128;

/// `INSERT INTO table VALUES (?, …), (?, …), …` for `rows` rows of `columns` values.
fn multi_row_insert(table: &str, columns: usize, rows: usize) -> String {
    let row = format!("({})", vec!["?"; columns].join(","));
    format!("INSERT INTO {table} VALUES {}", vec![row; rows].join(","))
}

/// Inserts rows through multi-row statements of [`ROWS_PER_INSERT`] rows, the rest singly.
fn insert_rows<const N: usize>(conn: &Connection, table: &str, rows: &[[i64; N]]) -> Result<()> {
    let mut chunks = rows.chunks_exact(ROWS_PER_INSERT);
    if chunks.len() > 0 {
        let mut st = conn.prepare_cached(&multi_row_insert(table, N, ROWS_PER_INSERT))?;
        for chunk in &mut chunks {
            for (i, v) in chunk.iter().flatten().enumerate() {
                st.raw_bind_parameter(i + 1, v)?;
            }
            st.raw_execute()?;
        }
    }
    let mut st = conn.prepare_cached(&multi_row_insert(table, N, 1))?;
    for row in chunks.remainder() {
        for (i, v) in row.iter().enumerate() {
            st.raw_bind_parameter(i + 1, v)?;
        }
        st.raw_execute()?;
    }
    Ok(())
}

impl Writer {
    pub fn new(conn: Connection, keep_duplicates: bool) -> Result<Writer> {
        let empty: bool =
            conn.query_row("SELECT NOT EXISTS (SELECT 1 FROM games)", [], |r| r.get(0))?;
        if empty {
            defer_indexes(&conn)?;
        }
        let mut structure_ids = HashMap::new();
        {
            let mut st = conn.prepare("SELECT id, white_pawns, black_pawns FROM structures")?;
            let rows = st.query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })?;
            for row in rows {
                let (id, w, b) = row?;
                structure_ids.insert((w as u64, b as u64), id);
            }
        }
        let next_structure_id: i64 =
            conn.query_row("SELECT coalesce(max(id), 0) + 1 FROM structures", [], |r| {
                r.get(0)
            })?;
        let mut game_hashes = HashSet::new();
        if !keep_duplicates {
            let mut st = conn.prepare("SELECT hash FROM games")?;
            let rows = st.query_map([], |r| r.get::<_, i64>(0))?;
            for h in rows {
                game_hashes.insert(h?);
            }
        }
        let ply_numbers: i64 =
            conn.query_row("SELECT count(*) FROM ply_numbers", [], |r| r.get(0))?;
        Ok(Writer {
            conn,
            keep_duplicates,
            structure_ids,
            next_structure_id,
            game_hashes,
            ply_numbers,
            in_transaction: false,
            pending_positions: Vec::new(),
            pending_structures: Vec::new(),
        })
    }

    fn begin(&mut self) -> Result<()> {
        if !self.in_transaction {
            self.conn.execute_batch("BEGIN IMMEDIATE")?;
            self.in_transaction = true;
        }
        Ok(())
    }

    /// Makes everything written so far durable.
    pub fn commit(&mut self) -> Result<()> {
        self.flush(true)?;
        if self.in_transaction {
            self.conn.execute_batch("COMMIT")?;
            self.in_transaction = false;
        }
        Ok(())
    }

    /// Writes buffered rows: whole multi-row chunks only, or everything when `all`.
    fn flush(&mut self, all: bool) -> Result<()> {
        let take = |len: usize| {
            if all {
                len
            } else {
                len - len % ROWS_PER_INSERT
            }
        };
        let n = take(self.pending_structures.len());
        insert_rows(&self.conn, "structures", &self.pending_structures[..n])?;
        self.pending_structures.drain(..n);
        let n = take(self.pending_positions.len());
        insert_rows(&self.conn, "positions", &self.pending_positions[..n])?;
        self.pending_positions.drain(..n);
        Ok(())
    }

    /// Is this game already stored (same roster, start position and moves)?
    fn is_duplicate(&self, g: &GameRecord) -> Result<bool> {
        if self.keep_duplicates || !self.game_hashes.contains(&g.hash) {
            return Ok(false);
        }
        // The hash matched: compare the real contents, so a hash collision never loses a game.
        let mut st = self.conn.prepare_cached(
            "SELECT event, site, date, round, white, black, result, fen, moves
             FROM games WHERE hash = ?1",
        )?;
        let mut rows = st.query([g.hash])?;
        let wanted = roster(&g.tags);
        while let Some(r) = rows.next()? {
            let mut same = true;
            for (i, w) in wanted.iter().enumerate() {
                let have: Option<String> = r.get(i)?;
                same &= have.as_deref() == *w;
            }
            let fen: Option<String> = r.get(7)?;
            let moves: Vec<u8> = r.get(8)?;
            if same && fen == g.fen && moves == g.moves {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn structure_id(&mut self, white: u64, black: u64) -> Result<i64> {
        if let Some(&id) = self.structure_ids.get(&(white, black)) {
            return Ok(id);
        }
        let id = self.next_structure_id;
        let w = SideFeatures::white(white);
        let b = SideFeatures::black(black);
        self.pending_structures.push([
            id,
            white as i64,
            black as i64,
            w.islands.into(),
            b.islands.into(),
            w.dispersion.into(),
            b.dispersion.into(),
            w.distortion.into(),
            b.distortion.into(),
            w.duo as i64,
            b.duo as i64,
            w.trio as i64,
            b.trio as i64,
            w.quart as i64,
            b.quart as i64,
        ]);
        self.next_structure_id += 1;
        self.structure_ids.insert((white, black), id);
        Ok(id)
    }

    fn ensure_ply_numbers(&mut self, plies: u32) -> Result<()> {
        let needed = i64::from(plies) + 1;
        if needed > self.ply_numbers {
            let mut st = self
                .conn
                .prepare_cached("INSERT INTO ply_numbers (n) VALUES (?1)")?;
            for n in self.ply_numbers..needed {
                st.execute([n])?;
            }
            self.ply_numbers = needed;
        }
        Ok(())
    }

    /// Stores one replayed game unless it is a duplicate.
    pub fn add_game(&mut self, g: &GameRecord, source: &str) -> Result<Stored> {
        self.begin()?;
        if self.is_duplicate(g)? {
            return Ok(Stored::Duplicate);
        }
        self.ensure_ply_numbers(g.plies)?;
        let t = &g.tags;
        let elo = |v: &Option<String>| v.as_deref().and_then(|s| s.trim().parse::<i64>().ok());
        self.conn
            .prepare_cached(
                "INSERT INTO games (event, site, date, round, white, black, result, white_elo,
                 black_elo, eco, plies, source, offset, fen, chess960, moves, hash)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
            )?
            .execute(params![
                t.event,
                t.site,
                t.date,
                t.round,
                t.white,
                t.black,
                t.result,
                elo(&t.white_elo),
                elo(&t.black_elo),
                t.eco,
                g.plies,
                source,
                g.offset as i64,
                g.fen,
                g.chess960,
                g.moves,
                g.hash,
            ])?;
        let game_id = self.conn.last_insert_rowid();
        {
            let sm = &g.summary;
            let mut st = self.conn.prepare_cached(
            "INSERT INTO game_summary VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        )?;
            st.raw_bind_parameter(1, game_id)?;
            for (i, a) in sm.any.iter().enumerate() {
                st.raw_bind_parameter(2 + i, a)?;
            }
            for (i, m) in sm.max.iter().enumerate() {
                st.raw_bind_parameter(10 + i, m)?;
            }
            st.raw_execute()?;
        }
        for run in &g.runs {
            let sid = self.structure_id(run.white_pawns, run.black_pawns)?;
            self.pending_positions.push([
                game_id,
                run.first_ply.into(),
                run.last_ply.into(),
                sid,
                (u32::MAX - run.pieceset).into(),
                run.bishop_pairs.into(),
            ]);
        }
        if self.pending_positions.len() >= 4 * ROWS_PER_INSERT {
            self.flush(false)?;
        }
        if !self.keep_duplicates {
            self.game_hashes.insert(g.hash);
        }
        Ok(Stored::Indexed)
    }

    /// Records a rejected game (once per source and offset, so re-runs add nothing).
    pub fn add_reject(&mut self, r: &Reject, source: &str) -> Result<Stored> {
        self.begin()?;
        self.conn
            .prepare_cached(
                "INSERT OR IGNORE INTO rejects (source, offset, event, white, black, ply, reason)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                source,
                r.offset as i64,
                r.event,
                r.white,
                r.black,
                r.ply,
                r.reason
            ])?;
        Ok(Stored::Rejected)
    }

    /// Final step of a run: commit, refresh planner statistics, fold the WAL into the file.
    pub fn finish(mut self) -> Result<()> {
        self.commit()?;
        restore_deferred_indexes(&self.conn)?;
        write_planner_statistics(&self.conn)?;
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .optional()?;
        Ok(())
    }
}

/// Fills `sqlite_stat1` from exact row counts instead of running ANALYZE. A full ANALYZE reads
/// every index (seconds on a large database), and a sampled one is badly wrong here: the first
/// entries of `positions_structure` all belong to the start position, so a sample claims about
/// a thousand runs per structure where the real figure is two or three, which steers SQLite to
/// scans. The shape indexes' figures are the typical number of structures per islands value,
/// per (islands, dispersion) and per (islands, dispersion, distortion), measured on master games.
fn write_planner_statistics(conn: &Connection) -> Result<()> {
    let count = |sql: &str| -> Result<i64> { Ok(conn.query_row(sql, [], |r| r.get::<_, i64>(0))?) };
    let games = count("SELECT count(*) FROM games")?.max(1);
    let runs = count("SELECT count(*) FROM positions")?.max(1);
    let structures = count("SELECT count(*) FROM structures")?.max(1);
    let rejects = count("SELECT count(*) FROM rejects")?.max(1);
    let per = |n: i64, d: i64| (n / d.max(1)).max(1);
    let stats: Vec<(&str, Option<&str>, String)> = vec![
        ("games", None, format!("{games}")),
        ("games", Some("games_hash"), format!("{games} 1")),
        ("game_summary", None, format!("{games}")),
        (
            "positions",
            Some("positions"),
            format!("{runs} {} 1", per(runs, games)),
        ),
        (
            "positions",
            Some("positions_structure"),
            format!("{runs} {} 2 1", per(runs, structures)),
        ),
        ("structures", None, format!("{structures}")),
        (
            "structures",
            Some("structures_pawns"),
            format!("{structures} 8 1"),
        ),
        (
            "structures",
            Some("structures_white_shape"),
            format!(
                "{structures} {} {} {}",
                per(structures, 5),
                per(structures, 40),
                per(structures, 400)
            ),
        ),
        (
            "structures",
            Some("structures_black_shape"),
            format!(
                "{structures} {} {} {}",
                per(structures, 5),
                per(structures, 40),
                per(structures, 400)
            ),
        ),
        (
            "rejects",
            Some("sqlite_autoindex_rejects_1"),
            format!("{rejects} {} 1", per(rejects, 4)),
        ),
    ];
    conn.execute_batch("ANALYZE sqlite_schema")?; // creates sqlite_stat1 if needed
    let tx = conn.unchecked_transaction()?;
    tx.execute("DELETE FROM sqlite_stat1", [])?;
    {
        let mut st = tx.prepare("INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?1, ?2, ?3)")?;
        for (tbl, idx, stat) in &stats {
            st.execute(params![tbl, idx, stat])?;
        }
    }
    tx.commit()?;
    Ok(())
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
