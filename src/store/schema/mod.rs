//! The schema: opening a database (for writing, or read-only), the numbered migrations and
//! their runner, the column lists every room names its columns through, the files beside a
//! database (its log, its journal, its header) and the indexing lock.
//!
//! Layout (version 2, see `migrations/0002_storage_v2.sql`): `games`, `game_summary`,
//! `rejects`; each distinct pawn set of one side once in `pawn_sets` with its features; `runs`
//! of plies with unchanged (White set, Black set, piece-set, bishop pairs); the inverted index
//! `set_games` and the aggregates `set_totals`, which cover the games up to `derived.through`
//! (version 3, `migrations/0003_unmerged_tail.sql`: a small append leaves its games above it, in
//! the unmerged tail that readers take from `runs`; `derived.finished` tells it from an
//! interrupted run); and the view `ply_features`, one row per game and ply. Version 4 adds the
//! named structures ([`structures`], kept current with the catalogue by the migration runner);
//! version 6 the players' names and the named structures' results ([`players`]).
//!
//! This room uses only the model (and the page count of the writer's checkpoints when it opens
//! a database for writing); the reads, the writer and the derived tables build on it.

mod files;
pub mod games;
mod lock;
mod migrations;
mod open;
pub mod players;
pub mod side_columns;
pub mod structures;

pub(crate) use files::existing_sqlite;
pub use files::{hot_journal, in_wal_mode, is_sqlite_file, wal_bytes};
pub use lock::{indexing_now, lock_for_indexing};
pub use migrations::SCHEMA_VERSION;
pub(in crate::store) use open::AUTOCHECKPOINT_PAGES;
pub(crate) use open::{check_pawndex, open_failure};
pub use open::{open_for_writing, open_read_only};
