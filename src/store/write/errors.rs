//! What a run of the writer says when it cannot finish: a failed write ([`WriteFailed`], with
//! the [`Step`] it failed in), a log other connections kept from being folded in
//! ([`Unfolded`]), and the steps of the end of a run ([`FinishPhase`]).

use rusqlite::{ErrorCode, ffi};

use super::checkpoint::Left;

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
    pub(super) db: String,
    pub(super) step: Step,
    /// The disk (or SQLite's page limit) was full; otherwise an I/O error.
    pub(super) full: bool,
    /// Games stored in the database after the rollback.
    pub(super) games: i64,
    pub(super) cause: String,
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
    pub(super) db: String,
    pub(super) left: Left,
    /// Bytes of the log when the run gave up.
    pub(super) wal_bytes: u64,
    pub(super) waited: std::time::Duration,
    /// The processes that held the log's shared memory when the run gave up (not known
    /// everywhere: [`super::checkpoint::shm_holders`]).
    pub(super) holders: Vec<u32>,
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
pub(super) fn write_failure(e: &anyhow::Error) -> Option<bool> {
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
