//! Storage: the only module that speaks SQL to the database file. Its rooms, one folder each:
//!
//! - [`schema`]: opening a database, the migrations and their runner, the column lists, the
//!   files beside a database and the indexing lock;
//! - the write path: the bulk writer ([`write`], with its checkpoints and the laid-out pages
//!   of a first load) and the derived tables built after a load ([`derive`]);
//! - [`read`]: typed reads returning model types (searches compiled to SQL with their count
//!   plans, `similar`, the structures report, the dump, `info`, `stats`' scans, and every read
//!   of `pawndex check` in [`read::check`], whose comparisons are the engine's);
//! - [`sql`]: the SQL that is not SQLite's: the one walk over a typed search both back ends
//!   share, the DuckDB/Spark dialect and the SQL lexer.
//!
//! The rooms import in one direction: `sql` and `schema` use only the model, the write path
//! uses `schema`, `read` uses all three, and [`upgrade`] (`pawndex migrate`) the schema and the
//! writer.

mod bulk_tree;
mod derive;
pub mod read;
mod rows;
pub mod schema;
pub mod sql;
mod upgrade;
mod write;

pub use derive::{Lag, SetAggregate, TAIL_MAX_GAMES, decode_games, lag, tail_sets};
pub use read::open_for_reading;
pub use schema::{
    SCHEMA_VERSION, indexing_now, is_sqlite_file, lock_for_indexing, open_for_writing, wal_bytes,
};
pub use upgrade::upgrade;
pub use write::{Unfolded, WriteFailed, Writer};

// The paths the write path names (`writer.rs`, `derive.rs`), kept while it moves to its folder.
pub(crate) use schema::side_columns;

/// The database every command uses without `--db`.
pub const DEFAULT_DB: &str = "pawndex.db";
