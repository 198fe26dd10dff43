//! The numbered migrations and their runner.

use std::path::Path;

use anyhow::{Context, Result};
use rusqlite::functions::FunctionFlags;
use rusqlite::{Connection, TransactionBehavior};

use super::open::check_pawndex;
use super::{players, side_columns, structures};
use crate::model::structure::Catalogue;

/// Numbered migrations, applied in order; `PRAGMA user_version` holds how many ran.
/// Append only: never edit or remove one that has shipped.
pub const MIGRATIONS: &[&str] = &[
    include_str!("../../../migrations/0001_init.sql"),
    include_str!("../../../migrations/0002_storage_v2.sql"),
    include_str!("../../../migrations/0003_unmerged_tail.sql"),
    include_str!("../../../migrations/0004_structures.sql"),
    include_str!("../../../migrations/0005_time_class.sql"),
    include_str!("../../../migrations/0006_players.sql"),
];

/// The version whose migration created the players' tables ([`players::rebuild`] fills them).
const PLAYERS_VERSION: i64 = 6;

/// The schema version this binary writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Adds the SQL function `pawndex_time_class(time_control, event)`: the class
/// [`time_class`](crate::model::time_class::time_class) gives, by name (migration 5 fills
/// `games.time_class` of the stored games with it).
fn register_time_class(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "pawndex_time_class",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let tc: Option<String> = ctx.get(0)?;
            let event: Option<String> = ctx.get(1)?;
            Ok(crate::model::time_class::time_class(tc.as_deref(), event.as_deref()).name())
        },
    )
}

pub(crate) fn schema_version(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// Applies the migrations the database has not seen and brings its named structures to the
/// catalogue in force ([`structures::sync`]), all in one transaction: a reader sees the
/// database before or after the upgrade, never a schema half built (a fresh database at version
/// 1 of 4, say) nor runs half re-classified, and an interrupted upgrade leaves the old version
/// whole.
pub fn migrate(conn: &mut Connection, path: &Path) -> Result<()> {
    let version = check_pawndex(conn, path)?;
    let catalogue = Catalogue::active();
    if version >= SCHEMA_VERSION && structures::is_current(conn, catalogue)? {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Checked again inside the write transaction: another process may have upgraded the
    // database between the first check and taking the write lock.
    let version = schema_version(&tx)?;
    side_columns::register_kernels(&tx)?;
    register_time_class(&tx)?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tx.execute_batch(sql)
            .with_context(|| format!("applying migration {}", i + 1))?;
    }
    if version < SCHEMA_VERSION {
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    }
    let reclassifying = version > 0 && !structures::rules_current(&tx, catalogue)?;
    if reclassifying {
        eprintln!(
            "pawndex: classifying the named structures of {} with the current catalogue",
            path.display()
        );
    }
    let synced =
        structures::sync(&tx, catalogue, &|_, _| {}).context("classifying named structures")?;
    if version < PLAYERS_VERSION {
        players::rebuild(&tx).context("filling the players' tables")?;
    } else if synced.reclassified {
        players::rebuild_results(&tx).context("counting the named structures' results")?;
    }
    tx.commit()?;
    Ok(())
}
