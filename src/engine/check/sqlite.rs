//! SQLite's own integrity check: pages, records and indexes.

use anyhow::Result;

use super::report::INTEGRITY_MESSAGES;
use super::{Kind, Report, show};
use crate::store::read::Snapshot;
use crate::store::read::check::{self as read, Cell};

/// `PRAGMA integrity_check`: each message but "ok" is a problem (up to 100 of them).
pub(super) fn integrity(conn: &Snapshot, f: &mut Report) -> Result<()> {
    let mut st = read::integrity(conn, INTEGRITY_MESSAGES)?;
    let mut rows = st.rows(&[])?;
    while let Some(r) = rows.next()? {
        let msg = match r.get(0)? {
            Cell::Text(t) => String::from_utf8_lossy(t).into_owned(),
            other => show(other),
        };
        if msg != "ok" {
            f.problem(Kind::Integrity, || format!("sqlite: {msg}"));
        }
    }
    Ok(())
}
