//! Where replayed games go: the SQLite writer or a Parquet dataset, behind one trait the ingest
//! pipeline writes to without knowing which.

use anyhow::Result;

use crate::model::game::{GameRecord, Reject};

/// What happened to one game handed to the writer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stored {
    Indexed,
    Duplicate,
}

/// Where the pipeline's replayed games go: the SQLite writer or a Parquet dataset.
pub trait Sink {
    fn add_game(&mut self, g: &GameRecord, source: &str) -> Result<Stored>;
    fn add_reject(&mut self, r: &Reject, source: &str) -> Result<()>;
    /// Makes what was added so far durable and visible (SQLite commits; a dataset publishes
    /// only at the end, so it has nothing to do).
    fn commit(&mut self) -> Result<()>;
}
