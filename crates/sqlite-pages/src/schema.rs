//! Index entries registered in `sqlite_schema` for pages laid out in this transaction.

use anyhow::Result;
use rusqlite::Connection;

use crate::TABLE_LEAF;

/// Registers an index whose pages are laid out in this transaction (root page `root`) in
/// `sqlite_schema`, as `CREATE INDEX` would: `sql` is the text SQLite keeps (`CREATE [UNIQUE]
/// INDEX name ON ...`, without `IF NOT EXISTS`). Call it after [`PageWriter::begin`](crate::PageWriter::begin) and before
/// any page is written: it changes only page 1, and `Ok(false)`, with nothing changed, if the row
/// would have needed a page of its own (which a tree's pages may be given). After the commit,
/// [`reload_schema`] makes the index known.
pub fn register_index(
    conn: &Connection,
    name: &str,
    table: &str,
    root: u32,
    sql: &str,
) -> Result<bool> {
    let pages = |conn: &Connection| -> Result<i64> {
        Ok(conn.query_row("PRAGMA page_count", [], |r| r.get(0))?)
    };
    let before = pages(conn)?;
    conn.execute_batch("SAVEPOINT register_index; PRAGMA writable_schema = ON")?;
    let inserted = conn.execute(
        "INSERT INTO sqlite_schema (type, name, tbl_name, rootpage, sql)
         VALUES ('index', ?1, ?2, ?3, ?4)",
        rusqlite::params![name, table, root, sql],
    );
    let off = conn.execute_batch("PRAGMA writable_schema = OFF");
    let grown = pages(conn)? != before;
    if inserted.is_err() || off.is_err() || grown {
        conn.execute_batch("ROLLBACK TO register_index; RELEASE register_index")?;
        inserted?;
        off?;
        return Ok(false);
    }
    conn.execute_batch("RELEASE register_index")?;
    Ok(true)
}

/// Free bytes in page 1 between its cell pointers and its cells, where a new `sqlite_schema`
/// row goes; 0 unless page 1 is a leaf (the whole schema in it). See [`register_index`].
pub fn schema_room(conn: &Connection) -> Result<usize> {
    let page: Vec<u8> =
        conn.query_row("SELECT data FROM sqlite_dbpage WHERE pgno = 1", [], |r| {
            r.get(0)
        })?;
    let u16_at = |at: usize| {
        page.get(at..at + 2)
            .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
    };
    if page.get(100) != Some(&TABLE_LEAF) {
        return Ok(0);
    }
    let (Some(cells), Some(content)) = (u16_at(103), u16_at(105)) else {
        return Ok(0);
    };
    let content = if content == 0 { 65536 } else { content };
    Ok(content.saturating_sub(108 + 2 * cells))
}

/// After the commit of [`register_index`]: this connection reads the schema again, and the
/// schema's version moves on so that every other connection does too. (Not in the same
/// transaction: SQLite checks an index's root page against the size of the database as the
/// transaction began, which the tree's pages extend.)
pub fn reload_schema(conn: &Connection) -> Result<()> {
    conn.execute_batch("PRAGMA writable_schema = RESET")?;
    let version: i64 = conn.query_row("PRAGMA schema_version", [], |r| r.get(0))?;
    conn.execute_batch(&format!(
        "BEGIN IMMEDIATE; PRAGMA schema_version = {}; COMMIT",
        version + 1
    ))?;
    Ok(())
}
