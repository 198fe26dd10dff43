//! SQLite's own integrity check: pages, records and indexes.

use anyhow::Result;
use rusqlite::Connection;
use rusqlite::types::ValueRef;

use super::report::INTEGRITY_MESSAGES;
use super::{Kind, Report, show};

/// `PRAGMA integrity_check`: each message but "ok" is a problem (up to 100 of them).
pub(super) fn integrity(conn: &Connection, f: &mut Report) -> Result<()> {
    let mut st = conn.prepare(&format!("PRAGMA integrity_check({INTEGRITY_MESSAGES})"))?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let msg = match r.get_ref(0)? {
            ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
            other => show(other),
        };
        if msg != "ok" {
            f.problem(Kind::Integrity, || format!("sqlite: {msg}"));
        }
    }
    Ok(())
}
