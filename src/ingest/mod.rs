//! Ingestion: PGN in, rows out, as a visible pipeline.
//!
//! [`input`] opens files and streams (plain, gzip, bzip2, zstd, stdin) -> [`reader`] splits
//! them into raw games -> [`replay`] replays each game and computes its per-ply features (in
//! parallel) -> the storage writer ([`crate::store`]). [`pipeline`] wires the stages together
//! with bounded channels, a progress bar and the end summary.

mod copies;
pub mod games;
pub mod input;
mod pipeline;
pub mod reader;
pub mod replay;
mod resolve;

pub use pipeline::{ReadOptions, Summary, drive, phase_spinner};
