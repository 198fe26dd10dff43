//! The reads: typed questions answered from an open database, returning model types.

pub mod check;
pub mod count;
pub mod dump;
pub mod ids;
pub mod info;
pub mod names;
pub mod params;
pub mod plans;
pub mod query;
pub mod search;
pub mod similar;
pub mod similar_sql;
mod snapshot;
pub mod stats;
pub mod structure_report;

pub use snapshot::{Interrupter, Limit, Reader, Snapshot, interrupted, is_corrupt, is_interrupted};

use std::path::Path;

use anyhow::Result;
use rusqlite::Connection;

use crate::store::schema::open_read_only;

/// A way of reading forced from outside, for tests and measurements: `PAWNDEX_PLAN=scan`
/// (scan the runs, never the game lists or the top-sets shortcut) or `PAWNDEX_PLAN=lists`
/// (the game lists whenever they apply).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ForcedPlan {
    Scan,
    Lists,
}

/// The plan `PAWNDEX_PLAN` forces, if any (one place reads the variable).
#[must_use]
pub fn forced_plan() -> Option<ForcedPlan> {
    match std::env::var("PAWNDEX_PLAN").ok()?.as_str() {
        "scan" => Some(ForcedPlan::Scan),
        "lists" => Some(ForcedPlan::Lists),
        _ => None,
    }
}

/// Settings for a reading command's connection: nothing can be written (`query_only`), pages
/// come memory-mapped, a 64 MiB page cache, temporary tables (piece masks) in memory.
pub fn tune_for_reading(conn: &Connection) -> Result<()> {
    conn.execute_batch(
        "PRAGMA query_only = ON;
         PRAGMA mmap_size = 17179869184;
         PRAGMA cache_size = -65536;
         PRAGMA temp_store = MEMORY;",
    )?;
    Ok(())
}

/// Opens a database for a reading command: read-only (no file is created), `query_only`,
/// memory-mapped, a large page cache, temporary tables in memory.
pub fn open_for_reading(db: &Path) -> Result<Connection> {
    let conn = open_read_only(db)?;
    tune_for_reading(&conn)?;
    ids::from_one(&conn)?;
    Ok(conn)
}
