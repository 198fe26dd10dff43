//! pawndex: a pawn-structure search database for chess games.
//!
//! The layers, top to bottom: [`cli`] parses the command line; `ingest` reads PGN, replays each
//! game and computes its per-ply features; `store` owns the SQLite schema and every SQL text;
//! `query` (named queries, `find`, export) and `stats` read the database. The chess concepts
//! they share sit flat beside them: [`features`] (the pure pawn-structure kernels), [`structure`]
//! (the named structures of `structures/*.toml`), [`similar`] (the distance between structures), `pieceset`
//! (which starting pieces remain), `moves` (the stored move encoding) and [`outcome`] (results,
//! the tag roster, side names).
//!
//! The library's API is the command line ([`cli::main_with_args`]) plus the pieces its tests and
//! doc-tests use: the feature kernels, the outcome rules and the ingest stages.

pub mod cli;
mod command;
mod dataset;
pub mod features;
mod info;
mod ingest;
mod moves;
pub mod outcome;
mod pieceset;
mod query;
pub mod similar;
mod stats;
mod store;
pub mod structure;

/// The ingest stages, for tests that drive them directly (the fuzz test).
pub use ingest::input::Counting;
pub use ingest::reader::PgnGames;
pub use ingest::replay::{RejectCategory, Replayed, replay};
