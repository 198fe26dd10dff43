//! The store's glue to the page builder (the workspace crate `sqlite-pages`, whose
//! documentation holds the rules of laid-out pages): whether this run lays out pages at all,
//! and the SQL path, said once, when this SQLite cannot.
//!
//! A first load writes the pages of the tables it fills in key order through the builder
//! instead of inserting their rows; the database is the same either way.

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;
use rusqlite::Connection;

pub(super) use sqlite_pages::{
    PageWriter, Record, Tree, int_record_max, register_index, reload_schema, schema_room,
};

/// Whether this run lays out pages at all (`PAWNDEX_NO_BULK` unset).
pub(super) fn bulk_wanted() -> bool {
    std::env::var_os("PAWNDEX_NO_BULK").is_none()
}

/// Whether the message that this SQLite takes no laid-out pages was said.
static SAID: AtomicBool = AtomicBool::new(false);

/// Whether rows can go into `table` through a [`Tree`], in records of the columns `columns`:
/// the table's root page, if so (see `sqlite_pages::eligibility` for every refusal). On a
/// SQLite the builder was not tested with, or without `sqlite_dbpage`, never, and the run says
/// so once on stderr.
pub(super) fn bulk_root(conn: &Connection, table: &str, columns: &[&str]) -> Result<Option<u32>> {
    if let Err(why) = sqlite_pages::supported(conn) {
        if !SAID.swap(true, Ordering::Relaxed) {
            eprintln!("pawndex: {why}: rows go in through SQL (slower, the same database)");
        }
        return Ok(None);
    }
    let dropping: &[&str] = match table {
        // `Writer::new` asks before it drops the hash index of an empty `games` (right after,
        // before any row; the index is laid out or built at the run's end). Until the writer
        // asks after the drop, this index is not a refusal.
        "games" => &["games_hash"],
        _ => &[],
    };
    Ok(sqlite_pages::eligibility_dropping(conn, table, columns, dropping)?.ok())
}
