//! The Parquet dataset: what `pawndex index --parquet` and `pawndex export parquet` write for
//! engines beyond SQLite (DuckDB, Spark, Trino). The contract is `docs/dataset.md`.
//!
//! ```text
//! ingest pipeline (read -> replay) -> DatasetWriter -> staging files -> publish (renames)
//! SQLite database (export)         -^
//! ```
//!
//! [`layout`] owns the directory (partitions, shard claims, staging, publish), [`tables`] the
//! Arrow schemas and column buffers, [`writer`] the rolling Parquet files and the sink the
//! pipeline writes to, [`export`] the copy out of a database.

mod export;
mod failed;
pub mod layout;
pub mod tables;
pub mod writer;

pub use export::export as export_database;
pub use failed::Failed;
pub use layout::{Target, parse_partition};
pub use writer::{DatasetWriter, Written};
