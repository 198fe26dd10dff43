//! pawndex: a pawn-structure search database for chess games.
//!
//! The ingestion pipeline reads PGN ([`reader`], over [`input`]), replays each game and computes
//! per-ply features ([`replay`], with the pure kernels in [`features`]) and writes SQLite
//! ([`store`]); [`index`] wires the three stages together.

pub mod cli;
pub mod export;
pub mod features;
pub mod find;
pub mod index;
pub mod input;
pub mod moves;
pub mod output;
pub mod query;
pub mod reader;
pub mod replay;
pub mod stats;
pub mod store;
