//! pawndex: a pawn-structure search database for chess games.
//!
//! The layers, top to bottom (an import only ever points down; `tests/architecture.rs` holds
//! the rule): [`cli`] parses the command line and glues each command together; `web` is the
//! server of `pawndex serve` (routing, parameters, JSON; the same functions the commands call);
//! `engine`
//! (work a command asks for: similar ranking, statistics, the structures report), `output`
//! (tables, CSV, JSON, PGN, charts), `ingest` (PGN in, replayed games out) and `dataset` (the
//! Parquet writer) do the work; `store` owns SQLite and every SQL text; [`model`] holds the chess
//! and data concepts they share: the feature kernels, named structures, the distance between
//! structures, the piece-set, the move encoding, results and the game record.
//!
//! The library's API is the command line ([`cli::main_with_args`]) plus the pieces its tests and
//! doc-tests use: the feature kernels, the outcome rules and the ingest stages.

pub mod cli;
mod dataset;
mod engine;
mod ingest;
pub mod model;
mod output;
mod store;
mod web;

pub use model::{features, outcome, similar, structure};

/// The ingest stages, for tests that drive them directly (the fuzz test).
pub use ingest::input::Counting;
pub use ingest::reader::PgnGames;
pub use ingest::replay::{RejectCategory, Replayed, replay};
