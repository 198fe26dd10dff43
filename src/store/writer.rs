//! The single writer of `pawndex index`: games, runs and pawn sets in large transactions.
//!
//! Memory follows the work in flight, not the database: pawn-set ids and game hashes are looked
//! up through the database's indexes behind bounded caches. While the caches hold everything
//! the database holds (a load into an empty database that has not yet filled them), a miss
//! needs no lookup at all.

use std::sync::OnceLock;

use anyhow::Result;
use rusqlite::{Connection, ErrorCode, OptionalExtension, ffi, params};

use super::bulk_tree::{self, PageWriter, Record, Tree};
use super::checkpoint::{self, Checkpointer, Left};
use super::derive;
use crate::model::features::{SIDE_FEATURE_COUNT, SideFeatures};
use crate::model::game::{GameRecord, GameSummary, Reject};
use crate::model::hash::IntMap;
use crate::model::sink::{Sink, Stored};
use crate::store::side_columns;

/// Pawn sets of one side kept in the id cache at most: a map of 2^22 buckets of 17 bytes
/// (pawns, id and a control byte), about 71 MB per side. (A map of both sides keyed by
/// (pawns, side) with 64-bit ids held 2 million sets in 105 MB; at scale, sets it had let go
/// were looked up in `pawn_sets_key`, a fifth of the writer's time.)
const SET_CACHE: usize = 3_600_000;
/// Game hashes kept in the duplicate cache at most (about 16 bytes each).
const HASH_CACHE: usize = 4_000_000;

/// A bounded cache in front of a unique index. `complete` while it holds every key the table
/// holds: then a miss means "absent" without a lookup.
struct Cache<K, V> {
    /// Integer keys (pawn bitboards, game hashes), hashed by
    /// [`IntHasher`](crate::model::hash::IntHasher): SipHash took a fifth of the writer's time.
    map: IntMap<K, V>,
    cap: usize,
    complete: bool,
}

impl<K: std::hash::Hash + Eq, V: Copy> Cache<K, V> {
    fn new(cap: usize, complete: bool) -> Self {
        Cache {
            map: IntMap::default(),
            cap,
            complete,
        }
    }

    /// Inserts, first emptying the cache when it is full (it then no longer holds everything).
    fn insert(&mut self, k: K, v: V) {
        if self.map.len() >= self.cap {
            self.map.clear();
            self.map.shrink_to(self.cap);
            self.complete = false;
        }
        self.map.insert(k, v);
    }
}

/// The step of a run a write failed in: it decides what is safe and what to run next.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Storing games (committed in batches): the batches committed before are kept.
    Storing,
    /// Building the derived tables (one transaction, rolled back): every game is stored.
    Deriving,
    /// Planner statistics, after the derived tables were committed.
    Finishing,
    /// The last checkpoint: the write-ahead log folded into the database file, and the switch
    /// back to a rollback journal. Everything is committed (in the log, at worst).
    Folding,
}

/// A write of `pawndex index` (or `migrate`) that failed for lack of space, or on an I/O error:
/// says which file, what is safe and what to run once there is room. The database is
/// consistent (SQLite rolled the failed transaction back).
#[derive(Debug)]
pub struct WriteFailed {
    db: String,
    step: Step,
    /// The disk (or SQLite's page limit) was full; otherwise an I/O error.
    full: bool,
    /// Games stored in the database after the rollback.
    games: i64,
    cause: String,
}

impl std::fmt::Display for WriteFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let db = &self.db;
        let what = if self.full {
            "disk full".to_owned()
        } else {
            format!("I/O error ({})", self.cause)
        };
        let step = match self.step {
            Step::Storing => "storing games",
            Step::Deriving => "building the derived tables",
            Step::Finishing => "writing planner statistics",
            Step::Folding => "folding the write-ahead log into the database",
        };
        let n = self.games;
        let games = if n == 1 { "game" } else { "games" };
        let safe = match self.step {
            Step::Storing => format!("the {n} {games} committed so far are safe"),
            Step::Deriving => format!("all {n} {games} are stored and safe"),
            Step::Finishing => {
                format!("all {n} {games} and the derived tables are stored and safe")
            }
            Step::Folding => format!(
                "all {n} {games} and the derived tables are committed and safe (what is not yet \
                 in {db} is in its log, {db}-wal: copy or move the two together)"
            ),
        };
        let room = if self.full {
            "free space (on the disk of the database, and in the temporary directory, where \
             large sorts spill)"
        } else {
            "check the disk"
        };
        let next = match self.step {
            Step::Storing => "run the same `pawndex index` command again (the games already \
                              stored are skipped)"
                .to_owned(),
            Step::Deriving | Step::Finishing | Step::Folding => format!(
                "run `pawndex migrate --db {db}` to finish (the same `pawndex index` command \
                 again does too)"
            ),
        };
        write!(
            f,
            "{what} while writing {db} ({step}): {safe}; {room} and {next}"
        )
    }
}

impl std::error::Error for WriteFailed {}

/// The end of a run (of `pawndex index` or `migrate`) that other connections kept from folding
/// the write-ahead log into the database, or from switching it back to a rollback journal,
/// for as long as it waited: says what is left and what to run. Every game is committed.
#[derive(Debug)]
pub struct Unfolded {
    db: String,
    left: Left,
    /// Bytes of the log when the run gave up.
    wal_bytes: u64,
    waited: std::time::Duration,
    /// The processes that held the log's shared memory when the run gave up (not known
    /// everywhere: [`checkpoint::shm_holders`]).
    holders: Vec<u32>,
}

impl std::fmt::Display for Unfolded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let db = &self.db;
        let waited = self.waited.as_secs();
        let pids = match self.holders.as_slice() {
            [] => "pid unknown".to_owned(),
            [one] => format!("pid {one}"),
            many => format!(
                "pids {}",
                many.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        match self.left {
            Left::Log => write!(
                f,
                "the log {db}-wal holds {:.1} MiB not yet folded into {db}: a reader (another \
                 process or connection, {pids}) kept a read transaction open for the \
                 {waited} s this run waited. Every game is committed and readers see them all, \
                 but {db} alone is not the whole database (copy or move it with its -wal); run \
                 `pawndex migrate --db {db}` once the reader has finished, to fold the log in",
                self.wal_bytes as f64 / f64::from(1 << 20)
            ),
            Left::WalMode => write!(
                f,
                "{db} holds every game, but stays in write-ahead-log mode: another connection \
                 (another process or connection, {pids}) kept it open for the {waited} s this run \
                 waited, so it could not switch back to a rollback journal, and a read-only \
                 folder cannot open it; run `pawndex migrate --db {db}` once that connection \
                 has closed"
            ),
        }
    }
}

impl std::error::Error for Unfolded {}

impl Unfolded {
    /// Whether only the journal mode is left: every page is in the database file, which stays
    /// in WAL mode (`pawndex index` warns and exits 0; `pawndex migrate`, whose work that is,
    /// fails).
    #[must_use]
    pub fn only_wal_mode(&self) -> bool {
        self.left == Left::WalMode
    }
}

/// Whether an error is a failed write: `Some(true)` for a full disk (SQLITE_FULL, which is also
/// what SQLite's page limit gives, or a full temporary directory), `Some(false)` for an I/O error
/// while writing, `None` for anything else.
fn write_failure(e: &anyhow::Error) -> Option<bool> {
    e.chain().find_map(|c| {
        if let Some(rusqlite::Error::SqliteFailure(f, _)) = c.downcast_ref::<rusqlite::Error>() {
            return match f.code {
                ErrorCode::DiskFull => Some(true),
                ErrorCode::SystemIoFailure
                    if matches!(
                        f.extended_code,
                        ffi::SQLITE_IOERR_WRITE
                            | ffi::SQLITE_IOERR_FSYNC
                            | ffi::SQLITE_IOERR_DIR_FSYNC
                            | ffi::SQLITE_IOERR_TRUNCATE
                    ) =>
                {
                    Some(false)
                }
                _ => None,
            };
        }
        c.downcast_ref::<std::io::Error>()
            .filter(|io| io.kind() == std::io::ErrorKind::StorageFull)
            .map(|_| true)
    })
}

/// A step of [`Writer::finish`], announced as it starts so that a progress display can name
/// it (the finishing steps can take as long as the load on a big run).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FinishPhase {
    /// Committing the last games.
    Commit,
    /// Merging the new games into the derived tables.
    Derive,
    /// Refreshing the planner statistics.
    Statistics,
    /// Folding the write-ahead log into the database file.
    Checkpoint,
}

impl FinishPhase {
    /// What the step does, for a person watching.
    pub fn describe(self) -> &'static str {
        match self {
            FinishPhase::Commit => "committing the last games",
            FinishPhase::Derive => "merging the derived tables",
            FinishPhase::Statistics => "writing planner statistics",
            FinishPhase::Checkpoint => "checkpoint: folding the log into the database",
        }
    }
}

/// The single writer: owns the connection while loading.
pub struct Writer {
    conn: Connection,
    keep_duplicates: bool,
    /// Per side (0 White, 1 Black), pawns -> pawn set id.
    sets: [Cache<u64, u32>; 2],
    /// Per side, the last pawn set asked for and its id.
    last_set: [Option<(u64, i64)>; 2],
    next_set_id: i64,
    /// Hashes of stored games -> the id of the (last) game stored with it.
    hashes: Cache<i64, i64>,
    /// The other games of a hash that more than one stored game has (a collision: distinct
    /// games, one hash), so that a duplicate of any of them is recognised.
    collided: IntMap<i64, Vec<i64>>,
    /// Whether a key index (`KEY_INDEXES`, by position) was dropped for this run: a load into
    /// an empty table finds every key in the cache and builds the index in one sort at the end
    /// instead of row by row (a third of the load of masters-1 went to `pawn_sets_key`).
    deferred: [bool; 2],
    ply_numbers: i64,
    in_transaction: bool,
    /// Rows waiting for a multi-row INSERT (far fewer statement executions than row by row).
    pending_runs: Vec<[i64; RUN_COLUMNS]>,
    /// A first load (`runs` empty, `sqlite_dbpage` at hand) lays out the pages of `runs`
    /// itself: the rows arrive in key order, and SQLite's inserts were a third of the load.
    runs_tree: Option<KeyedTree>,
    /// The same for `game_summary` (by game id, with its record's buffers) and
    /// `structure_changes` (by game and ply).
    summary_tree: Option<(Tree, Record)>,
    changes_tree: Option<KeyedTree>,
    /// The same for `games`, while its rows may be laid out (see [`GamesTree`]).
    games_tree: Option<GamesTree>,
    pending_sets: Vec<[i64; SET_COLUMNS]>,
    /// Rows of `structure_changes`: game, ply, from, to, move.
    pending_changes: Vec<([i64; 4], Option<String>)>,
    /// The (set, game) pairs of the games stored, for the derived tables at the end (so that
    /// they need not be read back from the runs).
    pairs: derive::PairCollector,
    /// The entries of the key indexes (`KEY_INDEXES`) of a first load, taken from the caches at
    /// its end and sorted, waiting to be laid out at the last commit: (pawns, side, id) and
    /// (hash, id).
    laid_sets: Option<Vec<[i64; 3]>>,
    laid_hashes: Option<Vec<[i64; 2]>>,
    /// The (White, Black) set ids of the game being stored (a buffer kept between games).
    run_sets: Vec<(i64, i64)>,
    /// Checkpoints the WAL after each commit, on its own thread (see `checkpoint`).
    checkpointer: Option<Checkpointer>,
}

/// The indexes on the writer's two keys, as the migrations make them.
const KEY_INDEXES: [(&str, &str, &str); 2] = [
    (
        "pawn_sets_key",
        "pawn_sets",
        "CREATE UNIQUE INDEX IF NOT EXISTS pawn_sets_key ON pawn_sets(pawns, side)",
    ),
    (
        "games_hash",
        "games",
        "CREATE INDEX IF NOT EXISTS games_hash ON games(hash)",
    ),
];

/// Lays out the pages of a key index from its entries in key order (the index's columns, then
/// the rowid), its top in page `root`.
fn lay_out_index<const N: usize>(
    conn: &Connection,
    w: &mut PageWriter<'_>,
    root: u32,
    entries: &[[i64; N]],
) -> Result<()> {
    let mut tree = Tree::index(conn, root, bulk_tree::int_record_max(N))?;
    for e in entries {
        tree.add_ints(e)?;
        if tree.closed_bytes() >= 8 << 20 {
            tree.write_closed(w)?;
        }
    }
    tree.write(w)
}

const RUN_COLUMNS: usize = 8;

/// The pages of a WITHOUT ROWID table during a first load (`runs`, `structure_changes`), and
/// the last key added: the rows must come in key order, which the writer's ascending game ids
/// give.
struct KeyedTree {
    tree: Tree,
    table: &'static str,
    last: (i64, i64),
    record: Record,
}

impl KeyedTree {
    fn new(tree: Tree, table: &'static str) -> KeyedTree {
        KeyedTree {
            tree,
            table,
            last: (i64::MIN, i64::MIN),
            record: Record::default(),
        }
    }

    /// Adds the row whose key (game, ply) is `key` and whose record `fill` writes.
    fn add(&mut self, key: (i64, i64), fill: impl FnOnce(&mut Record)) -> Result<()> {
        self.next_key(key)?;
        fill(self.record.start());
        self.tree.add(self.record.bytes())
    }

    /// [`KeyedTree::add`] of a row of integers only.
    fn add_ints(&mut self, key: (i64, i64), row: &[i64]) -> Result<()> {
        self.next_key(key)?;
        self.tree.add_ints(row)
    }

    /// Checks that `key` comes after the last key added, and makes it the last.
    fn next_key(&mut self, key: (i64, i64)) -> Result<()> {
        anyhow::ensure!(
            key > self.last,
            "{} out of key order: {key:?} after {:?}",
            self.table,
            self.last
        );
        self.last = key;
        Ok(())
    }
}

/// The pages of `games` during a first load: SQLite's statement per game (binding 17 values,
/// running the VDBE, inserting into the b-tree) was a sixth of the writer's time. The writer
/// numbers the games itself, from 1 (the table is empty).
///
/// A game laid out since the last commit is not in the database yet, so before SQLite reads a
/// game back (a duplicate's original, see [`Writer::is_duplicate`]) the writer commits; and
/// once SQLite builds the index on `games(hash)` (the hash cache overflowed), the rest of the
/// games go through SQLite, which keeps the index up to date.
struct GamesTree {
    tree: Tree,
    record: Record,
    next_id: i64,
    /// The first game laid out since the last commit.
    pending_from: Option<i64>,
}

/// The column names of `games`, in order (see [`bulk_tree::bulk_root`]).
const GAMES_COLUMNS: [&str; 18] = [
    "id",
    "event",
    "site",
    "date",
    "round",
    "white",
    "black",
    "result",
    "white_elo",
    "black_elo",
    "eco",
    "plies",
    "source",
    "offset",
    "fen",
    "chess960",
    "moves",
    "hash",
];

/// The column names of `runs` and `structure_changes`, in order (see [`bulk_tree::bulk_root`]).
const RUNS_COLUMNS: [&str; RUN_COLUMNS] = [
    "game_id",
    "first_ply",
    "last_ply",
    "white_set",
    "black_set",
    "missing",
    "bishop_pairs",
    "structure",
];
const CHANGES_COLUMNS: [&str; 5] = ["game_id", "ply", "from_structure", "to_structure", "move"];

/// The longest move text a change row may hold in a laid-out page (SAN is at most 7 bytes).
const CHANGE_MOVE_MAX: usize = 32;

const SET_COLUMNS: usize = 3 + SIDE_FEATURE_COUNT;
/// The stored games with a hash, to compare with a new game. INDEXED BY: the planner
/// statistics are those of the run before; for a database that was small then they make a scan
/// of `games` look cheaper, and the statement keeps that plan while the run makes the table
/// large (appending masters-1, 5,338 duplicates, to a database made from an empty file took
/// 13.9 s instead of 3.3 s).
const DUPLICATE_SQL: &str = "SELECT event, site, date, round, white, black, result, fen, moves
    FROM games INDEXED BY games_hash WHERE hash = ?1";

/// One stored game by id, as [`DUPLICATE_SQL`] reads them.
const STORED_GAME_SQL: &str = "SELECT event, site, date, round, white, black, result, fen, moves
    FROM games WHERE id = ?1";

/// A TEXT value, or NULL.
fn opt_text(rec: &mut Record, v: Option<&str>) {
    match v {
        Some(s) => rec.text(s),
        None => rec.null(),
    };
}

/// An INTEGER value, or NULL.
fn opt_int(rec: &mut Record, v: Option<i64>) {
    match v {
        Some(n) => rec.int(n),
        None => rec.null(),
    };
}

/// Whether a stored game (a row of [`DUPLICATE_SQL`]) is `g`: same roster, start and moves.
fn same_game(r: &rusqlite::Row<'_>, g: &GameRecord) -> Result<bool> {
    for (i, w) in g.header.roster().iter().enumerate() {
        if r.get_ref(i)?.as_str_or_null()? != *w {
            return Ok(false);
        }
    }
    Ok(r.get_ref(7)?.as_str_or_null()? == g.fen.as_deref()
        && r.get_ref(8)?.as_blob()? == g.moves.as_slice())
}

/// Rows per multi-row INSERT statement.
pub(super) const ROWS_PER_INSERT: usize = 128;

/// `INSERT OR ROLLBACK INTO table VALUES (?, …), (?, …), …` for `rows` rows of `columns`
/// values.
///
/// `OR ROLLBACK`: a statement that writes several rows and may fail part way (`ABORT`, the
/// default) makes SQLite copy each page it first touches into a statement journal, which it
/// writes to a temporary file (`temp_store = FILE`), to undo just that statement. The writer
/// never goes on after a failed insert (the run stops and keeps what it committed), so undoing
/// the whole transaction is as good and the copies are not needed: they cost 14% of the load
/// of masters-1 (4.97 s against 4.25 s; half the system time).
pub(super) fn multi_row_insert(table: &str, columns: usize, rows: usize) -> String {
    let row = format!("({})", vec!["?"; columns].join(","));
    format!(
        "INSERT OR ROLLBACK INTO {table} VALUES {}",
        vec![row; rows].join(",")
    )
}

/// Inserts rows through multi-row statements of [`ROWS_PER_INSERT`] rows, the rest singly.
pub(super) fn insert_rows<const N: usize>(
    conn: &Connection,
    table: &str,
    rows: &[[i64; N]],
) -> Result<()> {
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

/// Inserts rows of `structure_changes` as [`insert_rows`] does.
fn insert_changes(conn: &Connection, rows: &[([i64; 4], Option<String>)]) -> Result<()> {
    for chunk in rows.chunks(ROWS_PER_INSERT) {
        let mut st = conn.prepare_cached(&multi_row_insert("structure_changes", 5, chunk.len()))?;
        for (i, (ints, san)) in chunk.iter().enumerate() {
            for (j, v) in ints.iter().enumerate() {
                st.raw_bind_parameter(i * 5 + j + 1, v)?;
            }
            st.raw_bind_parameter(i * 5 + 5, san)?;
        }
        st.raw_execute()?;
    }
    Ok(())
}

/// Keeps the memory glibc's malloc frees in the process during the load, rather than handing
/// the top of the heap back to the kernel at each free. SQLite's page cache comes from glibc's
/// malloc (Rust's allocations go to mimalloc), and the writer empties it after each commit that
/// wrote laid-out pages (see `bulk_tree`): with the default trim threshold (128 KiB) each
/// transaction faulted its cache back in, zeroed by the kernel (`clear_page_erms` 3.4-6.8% of
/// all CPU, 1.8-2.3% with this). [`give_back_heap`] hands it back before the finishing steps.
fn keep_freed_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a tuning value of the allocator.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}

/// Returns the free memory of glibc's heap to the kernel, and the default trim threshold: the
/// load is over, and the derived tables want the memory for their merge.
fn give_back_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: plain calls into the allocator, which is thread-safe.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 128 << 10);
        libc::malloc_trim(0);
    }
}

impl Writer {
    pub fn new(conn: Connection, keep_duplicates: bool) -> Result<Writer> {
        keep_freed_heap();
        let no_games: bool =
            conn.query_row("SELECT NOT EXISTS (SELECT 1 FROM games)", [], |r| r.get(0))?;
        let no_sets: bool =
            conn.query_row("SELECT NOT EXISTS (SELECT 1 FROM pawn_sets)", [], |r| {
                r.get(0)
            })?;
        let next_set_id: i64 =
            conn.query_row("SELECT coalesce(max(id), 0) + 1 FROM pawn_sets", [], |r| {
                r.get(0)
            })?;
        let ply_numbers: i64 =
            conn.query_row("SELECT count(*) FROM ply_numbers", [], |r| r.get(0))?;
        // An empty table's index waits for the end of the run; any other index must exist (a
        // run killed before its end left it dropped).
        let deferred = [no_sets, no_games];
        let bulk = bulk_tree::bulk_wanted();
        let root = |table: &str, columns: &[&str]| -> Result<Option<u32>> {
            Ok(if bulk {
                bulk_tree::bulk_root(&conn, table, columns)?
            } else {
                None
            })
        };
        let runs_tree = match root("runs", &RUNS_COLUMNS)? {
            Some(r) => Some(KeyedTree::new(
                Tree::index(&conn, r, bulk_tree::int_record_max(RUN_COLUMNS))?,
                "runs",
            )),
            None => None,
        };
        let summary_columns: Vec<String> = std::iter::once("game_id".to_owned())
            .chain(GameSummary::columns())
            .collect();
        let summary_columns: Vec<&str> = summary_columns.iter().map(String::as_str).collect();
        let summary_tree = match root("game_summary", &summary_columns)? {
            Some(r) => Some((Tree::table(&conn, r)?, Record::default())),
            None => None,
        };
        let changes_tree = match root("structure_changes", &CHANGES_COLUMNS)? {
            Some(r) => Some(KeyedTree::new(
                Tree::index(&conn, r, bulk_tree::int_record_max(4) + 3 + CHANGE_MOVE_MAX)?,
                "structure_changes",
            )),
            None => None,
        };
        let games_tree = match root("games", &GAMES_COLUMNS)? {
            Some(r) => Some(GamesTree {
                tree: Tree::table(&conn, r)?,
                record: Record::default(),
                next_id: 1,
                pending_from: None,
            }),
            None => None,
        };
        for (&(name, _, create), defer) in KEY_INDEXES.iter().zip(deferred) {
            if defer {
                conn.execute_batch(&format!("DROP INDEX IF EXISTS {name}"))?;
            } else {
                conn.execute_batch(create)?;
            }
        }
        let checkpointer = Checkpointer::start(&conn)?;
        Ok(Writer {
            conn,
            keep_duplicates,
            sets: [
                Cache::new(SET_CACHE, no_sets),
                Cache::new(SET_CACHE, no_sets),
            ],
            last_set: [None, None],
            next_set_id,
            hashes: Cache::new(HASH_CACHE, no_games),
            collided: IntMap::default(),
            deferred,
            ply_numbers,
            in_transaction: false,
            pending_runs: Vec::new(),
            runs_tree,
            summary_tree,
            changes_tree,
            games_tree,
            pending_sets: Vec::new(),
            pending_changes: Vec::new(),
            pairs: derive::PairCollector::new(),
            laid_sets: None,
            laid_hashes: None,
            run_sets: Vec::new(),
            checkpointer,
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
        let r = self.commit_inner();
        self.explain(r, Step::Storing)
    }

    fn commit_inner(&mut self) -> Result<()> {
        self.flush(true)?;
        if self.in_transaction {
            // Last: SQLite must allocate no page after the tree's (see `bulk_tree`).
            let laid = (self.laid_sets.take(), self.laid_hashes.take());
            let mut registered = false;
            let pages = self.runs_tree.is_some()
                || self.games_tree.is_some()
                || self.summary_tree.is_some()
                || self.changes_tree.is_some()
                || laid.0.is_some()
                || laid.1.is_some();
            if pages {
                let mut w = PageWriter::begin(&self.conn)?;
                registered = self.lay_out_key_indexes(&mut w, laid.0, laid.1)?;
                if let Some(t) = &mut self.games_tree {
                    t.tree.write(&mut w)?;
                }
                if let Some(t) = &mut self.runs_tree {
                    t.tree.write(&mut w)?;
                }
                if let Some((t, _)) = &mut self.summary_tree {
                    t.write(&mut w)?;
                }
                if let Some(t) = &mut self.changes_tree {
                    t.tree.write(&mut w)?;
                }
                w.end()?;
            }
            self.conn.execute_batch("COMMIT")?;
            self.in_transaction = false;
            if let Some(t) = &mut self.games_tree {
                t.pending_from = None;
            }
            if registered {
                bulk_tree::reload_schema(&self.conn)?;
            }
            if let Some(c) = &mut self.checkpointer {
                c.nudge(&self.conn)?;
            }
            if pages {
                // Forget what SQLite parsed of pages now rewritten (see `bulk_tree`).
                self.conn.release_memory()?;
            }
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
        let n = take(self.pending_sets.len());
        static PAWN_SETS: OnceLock<String> = OnceLock::new();
        let pawn_sets =
            PAWN_SETS.get_or_init(|| format!("pawn_sets ({})", side_columns::pawn_sets()));
        insert_rows(&self.conn, pawn_sets, &self.pending_sets[..n])?;
        self.pending_sets.drain(..n);
        let n = take(self.pending_runs.len());
        insert_rows(&self.conn, "runs", &self.pending_runs[..n])?;
        self.pending_runs.drain(..n);
        let n = take(self.pending_changes.len());
        insert_changes(&self.conn, &self.pending_changes[..n])?;
        self.pending_changes.drain(..n);
        Ok(())
    }

    /// Registers the key indexes laid out from the caches and writes their pages: first in the
    /// commit's pages, before any other page is written. Whether there were any.
    fn lay_out_key_indexes(
        &self,
        w: &mut PageWriter<'_>,
        sets: Option<Vec<[i64; 3]>>,
        hashes: Option<Vec<[i64; 2]>>,
    ) -> Result<bool> {
        let roots = [
            sets.as_ref().map(|_| w.alloc()),
            hashes.as_ref().map(|_| w.alloc()),
        ];
        for (&(name, table, create), root) in KEY_INDEXES.iter().zip(roots) {
            if let Some(root) = root {
                let stored = create.replace(" IF NOT EXISTS", "");
                anyhow::ensure!(
                    bulk_tree::register_index(&self.conn, name, table, root, &stored)?,
                    "no room in page 1 to register {name}"
                );
            }
        }
        if let (Some(entries), Some(root)) = (&sets, roots[0]) {
            lay_out_index(&self.conn, w, root, entries)?;
        }
        if let (Some(entries), Some(root)) = (&hashes, roots[1]) {
            lay_out_index(&self.conn, w, root, entries)?;
        }
        Ok(roots.iter().any(Option::is_some))
    }

    /// At the end of a run, the key indexes it dropped: laid out from the caches when they hold
    /// every key and this run lays out pages (a first load), else built by SQLite.
    fn finish_key_indexes(&mut self) -> Result<()> {
        // Only a tree of at least one entry (an empty index has nothing to lay out).
        let laying = self.runs_tree.is_some();
        let sets = self.deferred[0]
            && laying
            && self.sets.iter().all(|c| c.complete)
            && self.sets.iter().any(|c| !c.map.is_empty());
        // With duplicates kept, the hash cache records nothing.
        let hashes = self.deferred[1]
            && laying
            && !self.keep_duplicates
            && self.hashes.complete
            && !self.hashes.map.is_empty();
        if (sets || hashes) && bulk_tree::schema_room(&self.conn)? >= 512 {
            // Laid out at the next commit: there must be a transaction to commit.
            self.begin()?;
            if sets {
                let mut entries =
                    Vec::with_capacity(self.sets[0].map.len() + self.sets[1].map.len());
                for (side, cache) in self.sets.iter_mut().enumerate() {
                    // The cache is done with: its memory goes back before the sort.
                    let map = std::mem::take(&mut cache.map);
                    cache.complete = false;
                    entries.extend(
                        map.into_iter()
                            .map(|(pawns, id)| [pawns as i64, side as i64, i64::from(id)]),
                    );
                }
                entries.sort_unstable();
                self.laid_sets = Some(entries);
                self.deferred[0] = false;
            }
            if hashes {
                let map = std::mem::take(&mut self.hashes.map);
                self.hashes.complete = false;
                let mut entries: Vec<[i64; 2]> = map.into_iter().map(|(h, id)| [h, id]).collect();
                for (&h, ids) in &self.collided {
                    entries.extend(ids.iter().map(|&id| [h, id]));
                }
                entries.sort_unstable();
                self.laid_hashes = Some(entries);
                self.deferred[1] = false;
            }
        }
        (0..KEY_INDEXES.len()).try_for_each(|i| self.restore_index(i))
    }

    /// Builds the key index `i` of [`KEY_INDEXES`] if this run dropped it (first writing the
    /// rows still waiting): at the end, or once its cache no longer holds every key.
    fn restore_index(&mut self, i: usize) -> Result<()> {
        if self.deferred[i] {
            if KEY_INDEXES[i].1 == "games" {
                // The index must see every game, and the games after it go through SQLite,
                // which keeps it up to date (see `GamesTree`).
                self.commit_laid_games(i64::MAX)?;
                self.games_tree = None;
            }
            self.flush(true)?;
            // Read through SQLite's bounded page cache, not the memory map: building the index
            // reads the whole table, and mapped pages count in the resident size (4 million
            // games: a peak of 2.7 GiB instead of under 1).
            let mapped: i64 = self.conn.query_row("PRAGMA mmap_size", [], |r| r.get(0))?;
            self.conn.pragma_update(None, "mmap_size", 0)?;
            let built = self.conn.execute_batch(KEY_INDEXES[i].2);
            self.conn.pragma_update(None, "mmap_size", mapped)?;
            built?;
            self.deferred[i] = false;
        }
        Ok(())
    }

    /// Commits the games laid out since the last commit when SQLite is about to read a game
    /// whose id is at most `newest` and one of them is still pending: SQLite reads only
    /// committed laid-out games (see `GamesTree`). The transaction goes on.
    fn commit_laid_games(&mut self, newest: i64) -> Result<()> {
        let pending = self.games_tree.as_ref().and_then(|t| t.pending_from);
        if pending.is_some_and(|first| newest >= first) {
            self.commit_inner()?;
            self.begin()?;
        }
        Ok(())
    }

    /// Is this game already stored (same roster, start position and moves)?
    fn is_duplicate(&mut self, g: &GameRecord) -> Result<bool> {
        if self.keep_duplicates {
            return Ok(false);
        }
        // Compare the real contents, so a hash collision never loses a game.
        if let Some(&id) = self.hashes.map.get(&g.hash) {
            let newest = (self.collided.get(&g.hash))
                .map_or(id, |others| others.iter().copied().fold(id, i64::max));
            self.commit_laid_games(newest)?;
            let mut st = self.conn.prepare_cached(STORED_GAME_SQL)?;
            let others = self.collided.get(&g.hash).map_or(&[][..], Vec::as_slice);
            for id in std::iter::once(id).chain(others.iter().copied()) {
                let mut rows = st.query([id])?;
                if let Some(r) = rows.next()?
                    && same_game(r, g)?
                {
                    return Ok(true);
                }
            }
            if self.hashes.complete {
                return Ok(false);
            }
        } else if self.hashes.complete {
            return Ok(false);
        }
        // The cache forgot some hashes: ask the index.
        self.restore_index(1)?;
        let mut st = self.conn.prepare_cached(DUPLICATE_SQL)?;
        let mut rows = st.query([g.hash])?;
        while let Some(r) = rows.next()? {
            if same_game(r, g)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The id of a pawn set of one side (0 White, 1 Black), stored on first sight.
    fn set_id(&mut self, pawns: u64, side: u8) -> Result<i64> {
        // Consecutive runs mostly keep one side's pawns (a run ends when either side's pawns,
        // the piece-set or the bishop pairs change).
        let last = &mut self.last_set[usize::from(side & 1)];
        if let Some((p, id)) = *last
            && p == pawns
        {
            return Ok(id);
        }
        let id = self.lookup_set(pawns, side)?;
        self.last_set[usize::from(side & 1)] = Some((pawns, id));
        Ok(id)
    }

    /// [`Self::set_id`] through the cache and the index.
    fn lookup_set(&mut self, pawns: u64, side: u8) -> Result<i64> {
        let cache = &self.sets[usize::from(side & 1)];
        if let Some(&id) = cache.map.get(&pawns) {
            return Ok(id.into());
        }
        if !cache.complete {
            self.restore_index(0)?;
            let found: Option<i64> = self
                .conn
                .prepare_cached("SELECT id FROM pawn_sets WHERE pawns = ?1 AND side = ?2")?
                .query_row(params![pawns as i64, side], |r| r.get(0))
                .optional()?;
            if let Some(id) = found {
                self.remember_set(pawns, side, id)?;
                return Ok(id);
            }
        }
        let id = self.next_set_id;
        self.next_set_id += 1;
        let f = if side == 0 {
            SideFeatures::white(pawns)
        } else {
            SideFeatures::black(pawns)
        };
        let values = f.values();
        self.pending_sets.push(std::array::from_fn(|i| match i {
            0 => id,
            1 => side.into(),
            2 => pawns as i64,
            // A bitboard is stored as the i64 of the same bits.
            _ => values[i - 3] as i64,
        }));
        self.remember_set(pawns, side, id)?;
        Ok(id)
    }

    fn remember_set(&mut self, pawns: u64, side: u8, id: i64) -> Result<()> {
        let s = usize::from(side & 1);
        if self.sets[s].map.len() >= self.sets[s].cap {
            // Sets still waiting to be inserted must be findable by the index once the cache
            // forgets them.
            self.flush(true)?;
        }
        match u32::try_from(id) {
            Ok(id) => self.sets[s].insert(pawns, id),
            // An id the cache cannot hold: then a miss no longer means "absent".
            Err(_) => self.sets[s].complete = false,
        }
        Ok(())
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

    /// Turns a failed write (disk full, I/O error) into a [`WriteFailed`] that says what is
    /// safe and what to run, after rolling back what was not committed.
    fn explain<T>(&mut self, r: Result<T>, step: Step) -> Result<T> {
        let e = match r {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        let Some(full) = write_failure(&e) else {
            return Err(e);
        };
        if !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        self.in_transaction = false;
        self.pending_runs.clear();
        // What the tree closed since the last commit was rolled back with it: no more pages.
        self.runs_tree = None;
        self.summary_tree = None;
        self.changes_tree = None;
        self.games_tree = None;
        self.pending_sets.clear();
        self.pending_changes.clear();
        let games = self
            .conn
            .query_row("SELECT count(*) FROM games", [], |r| r.get(0))
            .unwrap_or(0);
        Err(WriteFailed {
            db: self.conn.path().unwrap_or("the database").to_owned(),
            step,
            full,
            games,
            cause: format!("{e:#}"),
        }
        .into())
    }

    /// Stores one replayed game unless it is a duplicate.
    pub fn add_game(&mut self, g: &GameRecord, source: &str) -> Result<Stored> {
        let r = self.add_game_inner(g, source);
        self.explain(r, Step::Storing)
    }

    /// Inserts the `games` row of `g`; its id.
    fn insert_game(&mut self, g: &GameRecord, source: &str) -> Result<i64> {
        let t = &g.header;
        if let Some(gt) = &mut self.games_tree {
            let id = gt.next_id;
            let rec = gt.record.start();
            // The rowid alias (`id`) is NULL in the record. The values as SQLite stores them
            // bound: TEXT and INTEGER columns, so no affinity changes any of them.
            rec.null();
            for v in [
                &t.event, &t.site, &t.date, &t.round, &t.white, &t.black, &t.result,
            ] {
                opt_text(rec, v.as_deref());
            }
            opt_int(rec, t.white_elo);
            opt_int(rec, t.black_elo);
            opt_text(rec, t.eco.as_deref());
            rec.int(g.plies.into());
            rec.text(source);
            rec.int(i64::try_from(g.offset)?);
            opt_text(rec, g.fen.as_deref());
            rec.int(g.chess960.into());
            rec.blob(&g.moves);
            rec.int(g.hash);
            gt.tree.add_row(id, gt.record.bytes())?;
            gt.next_id += 1;
            gt.pending_from.get_or_insert(id);
            return Ok(id);
        }
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
                t.white_elo,
                t.black_elo,
                t.eco,
                g.plies,
                source,
                g.offset as i64,
                g.fen,
                g.chess960,
                g.moves,
                g.hash,
            ])?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Inserts the `game_summary` row of `g` (game `game_id`).
    fn insert_summary(&mut self, game_id: i64, g: &GameRecord) -> Result<()> {
        let sm = &g.summary;
        if let Some((t, rec)) = &mut self.summary_tree {
            // The rowid alias (`game_id`) is NULL in the record.
            rec.start().null();
            for &a in &sm.any {
                rec.int(i64::from(a));
            }
            for &m in &sm.max {
                rec.int(i64::from(m));
            }
            return t.add_row(game_id, rec.bytes());
        }
        static SQL: OnceLock<String> = OnceLock::new();
        let sql = SQL.get_or_init(|| {
            let columns = GameSummary::columns();
            format!(
                "INSERT INTO game_summary (game_id, {}) VALUES ({})",
                columns.join(", "),
                vec!["?"; columns.len() + 1].join(", ")
            )
        });
        let mut st = self.conn.prepare_cached(sql)?;
        st.raw_bind_parameter(1, game_id)?;
        for (i, a) in sm.any.iter().enumerate() {
            st.raw_bind_parameter(2 + i, a)?;
        }
        for (i, m) in sm.max.iter().enumerate() {
            st.raw_bind_parameter(2 + sm.any.len() + i, m)?;
        }
        st.raw_execute()?;
        Ok(())
    }

    fn add_game_inner(&mut self, g: &GameRecord, source: &str) -> Result<Stored> {
        self.begin()?;
        if self.is_duplicate(g)? {
            return Ok(Stored::Duplicate);
        }
        self.ensure_ply_numbers(g.plies)?;
        let game_id = self.insert_game(g, source)?;
        self.insert_summary(game_id, g)?;
        let t = &g.header;
        self.pairs
            .start_game(game_id, t.result.as_deref(), t.white_elo, t.black_elo)?;
        // The set ids first, in a loop of their own: the lookups miss the CPU's caches (the
        // maps hold millions of sets), and back to back their misses overlap.
        let mut ids = std::mem::take(&mut self.run_sets);
        ids.clear();
        for run in &g.runs {
            ids.push((
                self.set_id(run.white_pawns, 0)?,
                self.set_id(run.black_pawns, 1)?,
            ));
        }
        for (run, &(white, black)) in g.runs.iter().zip(&ids) {
            self.pairs.add_run(
                white,
                black,
                i64::from(run.last_ply) - i64::from(run.first_ply) + 1,
                run.bishop_pairs.into(),
            )?;
            let row = [
                game_id,
                run.first_ply.into(),
                run.last_ply.into(),
                white,
                black,
                (u32::MAX - run.pieceset).into(),
                run.bishop_pairs.into(),
                run.structure.into(),
            ];
            match &mut self.runs_tree {
                Some(t) => t.add_ints((row[0], row[1]), &row)?,
                None => self.pending_runs.push(row),
            }
        }
        self.run_sets = ids;
        for c in &g.changes {
            let ints = [game_id, c.ply.into(), c.from.into(), c.to.into()];
            match (&mut self.changes_tree, c.san.as_deref()) {
                (Some(_), Some(m)) if m.len() > CHANGE_MOVE_MAX => {
                    anyhow::bail!("a move of {} bytes ({m:?})", m.len())
                }
                (Some(t), san) => t.add((ints[0], ints[1]), |rec| {
                    for &v in &ints {
                        rec.int(v);
                    }
                    match san {
                        Some(m) => rec.text(m),
                        None => rec.null(),
                    };
                })?,
                (None, _) => self.pending_changes.push((ints, c.san.clone())),
            }
        }
        if self.pending_runs.len() >= 4 * ROWS_PER_INSERT
            || self.pending_changes.len() >= 4 * ROWS_PER_INSERT
        {
            self.flush(false)?;
        }
        if !self.keep_duplicates {
            if let Some(&other) = self.hashes.map.get(&g.hash) {
                // Not a duplicate (checked above), so a collision: keep both ids.
                self.collided.entry(g.hash).or_default().push(other);
            }
            self.hashes.insert(g.hash, game_id);
        }
        Ok(Stored::Indexed)
    }

    /// Records a rejected game (once per source and offset, so re-runs add nothing).
    pub fn add_reject(&mut self, r: &Reject, source: &str) -> Result<()> {
        let result = self.add_reject_inner(r, source);
        self.explain(result, Step::Storing)
    }

    fn add_reject_inner(&mut self, r: &Reject, source: &str) -> Result<()> {
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
        Ok(())
    }

    /// [`Writer::finish_with`] without a progress display.
    pub fn finish(self, merge_all: bool) -> Result<()> {
        self.finish_with(merge_all, |_| {})
    }

    /// Final step of a run: commit, merge the new games into the derived tables (unless they
    /// stay in the unmerged tail, see [`derive::merge_due`]; always with `merge_all`), refresh
    /// planner statistics, and leave one self-contained file (WAL folded in, rollback journal).
    /// `phase` hears of each [`FinishPhase`] as it starts.
    pub fn finish_with(
        mut self,
        merge_all: bool,
        mut phase: impl FnMut(FinishPhase),
    ) -> Result<()> {
        let t0 = std::time::Instant::now();
        phase(FinishPhase::Commit);
        // A first derivation's fold starts now, beside the key indexes and the commit.
        let r = derive::fold_early(&self.conn, &mut self.pairs);
        let early = self.explain(r, Step::Deriving)?;
        let r = self.finish_key_indexes();
        self.explain(r, Step::Storing)?;
        self.commit()?;
        self.conn.pragma_update(None, "mmap_size", 0)?;
        self.conn.release_memory()?;
        give_back_heap();
        let t_commit = t0.elapsed();
        let pairs = match early {
            Some(fold) => derive::Pairs::Folding(fold),
            None => derive::Pairs::Collected(std::mem::take(&mut self.pairs)),
        };
        phase(FinishPhase::Derive);
        let r = derive::finish_run(&self.conn, merge_all, Some(pairs));
        self.explain(r, Step::Deriving)?;
        let t_derive = t0.elapsed() - t_commit;
        let start = std::time::Instant::now();
        phase(FinishPhase::Statistics);
        let r = derive::write_planner_statistics(&self.conn);
        self.explain(r, Step::Finishing)?;
        let statistics = start.elapsed();
        phase(FinishPhase::Checkpoint);
        let checkpoints = self.checkpointer.take().map(Checkpointer::stop);
        // The log folded in and the file back to a rollback journal: the finished database is
        // one file that opens from a read-only directory or medium. Readers may be in the
        // way: the fold waits for them, within reason, and says so.
        let db = self.conn.path().unwrap_or("the database").to_owned();
        let waits = checkpoint::fold_wait();
        let r = checkpoint::fold(&self.conn, waits, |left| {
            eprintln!(
                "pawndex: waiting up to {} s for {} of {db}, to fold its write-ahead log in",
                waits.of(left).as_secs(),
                left.waiting_for()
            );
        });
        let left = self.explain(r, Step::Folding)?;
        if std::env::var_os("PAWNDEX_TIMINGS").is_some() {
            eprintln!(
                "timings: last commit {:.1} s, derived tables {:.1} s, planner statistics {:.1} s, \
                 checkpoint {:.1} s; checkpoints on their own thread: {checkpoints:?}",
                t_commit.as_secs_f64(),
                t_derive.as_secs_f64(),
                statistics.as_secs_f64(),
                (start.elapsed() - statistics).as_secs_f64()
            );
        }
        if let Some(left) = left {
            return Err(Unfolded {
                holders: checkpoint::shm_holders(&db),
                wal_bytes: super::wal_bytes(std::path::Path::new(&db)),
                db,
                left,
                waited: waits.of(left),
            }
            .into());
        }
        Ok(())
    }
}

impl Sink for Writer {
    fn add_game(&mut self, g: &GameRecord, source: &str) -> Result<Stored> {
        Writer::add_game(self, g, source)
    }
    fn add_reject(&mut self, r: &Reject, source: &str) -> Result<()> {
        Writer::add_reject(self, r, source)
    }
    fn commit(&mut self) -> Result<()> {
        Writer::commit(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The replayed games of `examples/sample.pgn`.
    fn sample_games() -> Vec<GameRecord> {
        use crate::ingest::replay::{Replayed, replay};
        use std::sync::atomic::AtomicU64;
        use std::sync::{Arc, Mutex};
        let pgn =
            std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sample.pgn")).unwrap();
        let decoded = Arc::new(AtomicU64::new(0));
        let counting = crate::ingest::input::Counting::new(&pgn[..], decoded.clone());
        let mut read =
            crate::ingest::reader::PgnGames::new(counting, decoded, Arc::new(Mutex::new(None)));
        let mut games = Vec::new();
        while let Some(g) = read.next_game().unwrap() {
            if let Replayed::Game(g) = replay(g) {
                games.push(*g);
            }
        }
        games
    }

    #[test]
    fn finish_announces_its_phases_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open_for_writing(&dir.path().join("t.db")).unwrap();
        let writer = Writer::new(conn, false).unwrap();
        let mut phases = Vec::new();
        writer.finish_with(false, |p| phases.push(p)).unwrap();
        assert_eq!(
            phases,
            [
                FinishPhase::Commit,
                FinishPhase::Derive,
                FinishPhase::Statistics,
                FinishPhase::Checkpoint
            ]
        );
    }

    /// A load into empty tables drops the key indexes and builds them at its end; a run
    /// into tables that have rows (after a killed first run, say) restores any that is missing.
    #[test]
    fn key_indexes_wait_for_the_end_of_a_first_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let indexes = |conn: &Connection| -> Vec<String> {
            conn.prepare(
                "SELECT name FROM sqlite_schema WHERE name IN ('pawn_sets_key', 'games_hash') \
                 ORDER BY name",
            )
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
        };
        // Reopens the database after a finished run: both indexes are there.
        let built_at_the_end = || {
            let conn = crate::store::open_for_writing(&path).unwrap();
            assert_eq!(
                indexes(&conn),
                ["games_hash", "pawn_sets_key"],
                "built at the end"
            );
            conn
        };
        let conn = crate::store::open_for_writing(&path).unwrap();
        let writer = Writer::new(conn, false).unwrap();
        assert!(indexes(&writer.conn).is_empty(), "dropped for the load");
        writer.finish(true).unwrap();
        let conn = built_at_the_end();
        // As a killed first run leaves them: rows stored, indexes dropped.
        conn.execute_batch(
            "INSERT INTO pawn_sets (id, side, pawns, islands, dispersion, distortion, duo, trio, quart)
             VALUES (1, 0, 65280, 1, 0, 0, 0, 0, 0);
             DROP INDEX pawn_sets_key; DROP INDEX games_hash;",
        )
        .unwrap();
        // pawn_sets has a row: its index is restored; games has none: its index waits.
        let writer = Writer::new(conn, false).unwrap();
        assert_eq!(indexes(&writer.conn), ["pawn_sets_key"], "restored");
        assert_eq!(writer.deferred, [false, true]);
        writer.finish(true).unwrap();
        built_at_the_end();
    }

    /// The set-id cache forgets its sets when it is full, then finds them in `pawn_sets_key`:
    /// with room for two sets per side, the sets and runs are those of a cache that holds
    /// every set.
    #[test]
    fn a_full_set_cache_gives_the_same_ids() {
        let games = sample_games();
        let stored = |cap: usize| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.db");
            let conn = crate::store::open_for_writing(&path).unwrap();
            let mut writer = Writer::new(conn, false).unwrap();
            for cache in &mut writer.sets {
                cache.cap = cap;
            }
            for g in &games {
                writer.add_game(g, "sample.pgn").unwrap();
            }
            let forgot = writer.sets.iter().all(|c| !c.complete);
            writer.finish(true).unwrap();
            let conn = crate::store::open_for_writing(&path).unwrap();
            let rows = |sql: &str| -> Vec<Vec<i64>> {
                let mut st = conn.prepare(sql).unwrap();
                let n = st.column_count();
                st.query_map([], |r| (0..n).map(|i| r.get(i)).collect())
                    .unwrap()
                    .collect::<rusqlite::Result<_>>()
                    .unwrap()
            };
            let sets = rows("SELECT id, side, pawns FROM pawn_sets ORDER BY id");
            let runs =
                rows("SELECT game_id, first_ply, white_set, black_set FROM runs ORDER BY 1, 2");
            (forgot, sets, runs)
        };
        let (forgot_all, sets, runs) = stored(SET_CACHE);
        let (forgot_some, small_sets, small_runs) = stored(2);
        assert!(
            !forgot_all && forgot_some,
            "only the small cache was emptied"
        );
        assert!(sets.len() > 20, "{} sets", sets.len());
        assert_eq!(small_sets, sets);
        assert_eq!(small_runs, runs);
    }

    /// Every row `sql` gives, every column.
    fn all_rows(conn: &Connection, sql: &str) -> Vec<Vec<rusqlite::types::Value>> {
        let mut st = conn.prepare(sql).unwrap();
        let n = st.column_count();
        st.query_map([], |r| (0..n).map(|i| r.get(i)).collect())
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    /// A first load lays out the pages of `games`, `runs`, `game_summary` and
    /// `structure_changes` itself (see `bulk_tree`): the same rows as SQLite's inserts, a
    /// database that passes `integrity_check`, and a second run that inserts into the tree as
    /// usual.
    #[test]
    fn a_first_load_builds_the_runs_pages_itself() {
        let games = sample_games();
        let (first, second) = games.split_at(games.len() / 2);
        let stored = |bulk: bool, small_caches: bool| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.db");
            let mut runs_pages = Vec::new();
            for (part, source) in [(first, "a.pgn"), (second, "b.pgn")] {
                let conn = crate::store::open_for_writing(&path).unwrap();
                let mut writer = Writer::new(conn, false).unwrap();
                if !bulk {
                    writer.runs_tree = None;
                    writer.summary_tree = None;
                    writer.changes_tree = None;
                    writer.games_tree = None;
                }
                // Caches that overflow: their indexes are built in the middle of the load, and
                // the writer asks SQLite for keys.
                if small_caches {
                    writer.hashes.cap = 2;
                    for cache in &mut writer.sets {
                        cache.cap = 2;
                    }
                }
                runs_pages.push(
                    writer.runs_tree.is_some()
                        && writer.summary_tree.is_some()
                        && writer.changes_tree.is_some()
                        && writer.games_tree.is_some(),
                );
                for (i, g) in part.iter().enumerate() {
                    writer.add_game(g, source).unwrap();
                    if i % 2 == 1 {
                        writer.commit().unwrap();
                    }
                }
                writer.finish(true).unwrap();
            }
            let conn = crate::store::open_for_writing(&path).unwrap();
            let check: String = conn
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .unwrap();
            let mut tables = Vec::new();
            for sql in [
                "SELECT * FROM games ORDER BY id",
                "SELECT * FROM runs ORDER BY game_id, first_ply",
                "SELECT * FROM game_summary ORDER BY game_id",
                "SELECT * FROM structure_changes ORDER BY game_id, ply",
                // The key indexes, read by themselves (laid out or built by SQLite).
                "SELECT pawns, side, id FROM pawn_sets INDEXED BY pawn_sets_key \
                 ORDER BY pawns, side",
                "SELECT hash, id FROM games INDEXED BY games_hash ORDER BY hash, id",
            ] {
                tables.push(all_rows(&conn, sql));
            }
            (runs_pages, check, tables)
        };
        let (pages, check, inserted) = stored(false, false);
        assert_eq!(pages, [false, false]);
        assert_eq!(check, "ok");
        assert!(inserted[0].len() > 5, "{} games", inserted[0].len());
        assert!(inserted[1].len() > 100, "{} runs", inserted[1].len());
        assert!(inserted[2].len() > 5, "{} summaries", inserted[2].len());
        assert!(
            inserted[3]
                .iter()
                .any(|r| matches!(r[4], rusqlite::types::Value::Text(_))),
            "changes with moves: {:?}",
            inserted[3]
        );
        for small_caches in [false, true] {
            let (pages, check, runs) = stored(true, small_caches);
            assert_eq!(pages, [true, false], "only the first run lays out pages");
            assert_eq!(check, "ok", "small caches: {small_caches}");
            assert_eq!(runs, inserted, "small caches: {small_caches}");
        }
    }

    /// A first load folds the pairs it collected while it commits (`derive::fold_early`):
    /// the derived tables are those derived from the stored runs.
    #[test]
    fn a_first_load_folds_its_pairs_early() {
        let games = sample_games();
        let derived = |early: bool| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.db");
            let conn = crate::store::open_for_writing(&path).unwrap();
            let mut writer = Writer::new(conn, false).unwrap();
            for g in &games {
                writer.add_game(g, "a.pgn").unwrap();
            }
            if !early {
                // No pairs collected: the derivation reads them from `runs`.
                writer.pairs = derive::PairCollector::new();
            }
            assert_eq!(writer.pairs.first_game(), early.then_some(1));
            writer.finish(true).unwrap();
            let conn = crate::store::open_for_writing(&path).unwrap();
            let check: String = conn
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .unwrap();
            assert_eq!(check, "ok");
            let mut tables = Vec::new();
            for sql in [
                "SELECT * FROM set_games ORDER BY set_id",
                "SELECT * FROM set_totals ORDER BY set_id",
                "SELECT * FROM bishop_totals ORDER BY bishop_pairs",
                "SELECT through, finished FROM derived",
            ] {
                tables.push(all_rows(&conn, sql));
            }
            tables
        };
        let early = derived(true);
        assert!(early[0].len() > 20, "{} sets", early[0].len());
        assert_eq!(early, derived(false));
    }

    /// A game laid out since the last commit is not in the database yet: the duplicate check
    /// commits before it reads a game back, and the hash index that SQLite builds when the
    /// cache overflows holds every game (the games after it go through SQLite).
    #[test]
    fn a_duplicate_of_a_game_not_yet_committed_is_found() {
        let games = sample_games();
        for small_cache in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.db");
            let conn = crate::store::open_for_writing(&path).unwrap();
            let mut writer = Writer::new(conn, false).unwrap();
            assert!(writer.games_tree.is_some(), "a first load lays out games");
            if small_cache {
                writer.hashes.cap = 2;
            }
            // No commit: every original is still in the tree when its copy arrives.
            let first: Vec<Stored> = games
                .iter()
                .map(|g| writer.add_game(g, "a.pgn").unwrap())
                .collect();
            let again: Vec<Stored> = games
                .iter()
                .map(|g| writer.add_game(g, "b.pgn").unwrap())
                .collect();
            assert_eq!(
                writer.games_tree.is_none(),
                small_cache,
                "SQLite's own index ends the layout"
            );
            writer.finish(true).unwrap();
            let indexed = first.iter().filter(|s| **s == Stored::Indexed).count();
            assert!(indexed > 5, "{indexed} games");
            assert!(
                again.iter().all(|s| *s == Stored::Duplicate),
                "small cache {small_cache}: {again:?}"
            );
            let conn = crate::store::open_for_writing(&path).unwrap();
            let check: String = conn
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .unwrap();
            assert_eq!(check, "ok", "small cache {small_cache}");
            let (stored, hashed): (usize, usize) = conn
                .query_row(
                    "SELECT (SELECT count(*) FROM games),
                            (SELECT count(*) FROM games INDEXED BY games_hash WHERE hash IS NOT NULL)",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap();
            assert_eq!(
                (stored, hashed),
                (indexed, indexed),
                "small cache {small_cache}"
            );
        }
    }

    /// A first load lays out its key indexes from the caches (duplicates kept: only the sets'),
    /// and a connection opened before sees them once the run has committed.
    #[test]
    fn a_first_load_lays_out_its_key_indexes() {
        let games = sample_games();
        for keep_duplicates in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.db");
            let conn = crate::store::open_for_writing(&path).unwrap();
            let mut writer = Writer::new(conn, keep_duplicates).unwrap();
            for g in &games {
                writer.add_game(g, "a.pgn").unwrap();
            }
            writer.commit().unwrap();
            let reader = Connection::open(&path).unwrap();
            let known = |conn: &Connection| -> i64 {
                conn.query_row(
                    "SELECT count(*) FROM sqlite_schema
                     WHERE name IN ('pawn_sets_key', 'games_hash')",
                    [],
                    |r| r.get(0),
                )
                .unwrap()
            };
            assert_eq!(known(&reader), 0);
            writer.finish_key_indexes().unwrap();
            assert!(writer.laid_sets.is_some());
            assert_eq!(writer.laid_hashes.is_some(), !keep_duplicates);
            writer.commit().unwrap();
            assert_eq!(known(&reader), 2, "keep duplicates: {keep_duplicates}");
            let plan: String = reader
                .query_row(
                    "EXPLAIN QUERY PLAN SELECT id FROM pawn_sets WHERE pawns = 1 AND side = 0",
                    [],
                    |r| r.get(3),
                )
                .unwrap();
            assert!(plan.contains("pawn_sets_key"), "{plan}");
            let check: String = reader
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .unwrap();
            assert_eq!(check, "ok");
            // An open connection would keep the end of the run from leaving WAL mode.
            drop(reader);
            writer.finish(true).unwrap();
        }
    }

    /// The writer rebuilds the key indexes from its own statements: they must make what the
    /// migrations make.
    #[test]
    fn key_indexes_are_the_migrations_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open_for_writing(&dir.path().join("t.db")).unwrap();
        for (name, _, create) in KEY_INDEXES {
            let migrated: String = conn
                .query_row(
                    "SELECT sql FROM sqlite_schema WHERE name = ?1",
                    [name],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(create.replace(" IF NOT EXISTS", ""), migrated, "{name}");
        }
    }

    /// A database first written from an empty file has planner statistics of one game; the
    /// duplicate check must still look hashes up by the index, not scan every game.
    #[test]
    fn the_duplicate_check_uses_the_hash_index_after_a_tiny_run() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let conn = crate::store::open_for_writing(&path).unwrap();
        Writer::new(conn, false).unwrap().finish(true).unwrap();
        let conn = crate::store::open_for_writing(&path).unwrap();
        let stat: String = conn
            .query_row(
                "SELECT stat FROM sqlite_stat1 WHERE tbl = 'games' AND idx = 'games_hash'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(stat, "1 1", "the statistics of an empty run");
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {DUPLICATE_SQL}"))
            .unwrap()
            .query_map([0], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(
            plan.iter().any(|p| p.contains("USING INDEX games_hash")),
            "{plan:?}"
        );
        // Without INDEXED BY, these statistics give the scan this test guards against.
        let unforced = DUPLICATE_SQL.replace(" INDEXED BY games_hash", "");
        let plan: String = conn
            .query_row(&format!("EXPLAIN QUERY PLAN {unforced}"), [0], |r| r.get(3))
            .unwrap();
        assert_eq!(plan, "SCAN games");
    }
}
