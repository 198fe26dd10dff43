//! Rows written through SQLite many to a statement: the one way the writer (`write`) and the
//! derived tables (`derive`) insert rows through SQL, so neither imports the other for it.

use anyhow::Result;
use rusqlite::Connection;

/// Rows per multi-row INSERT statement.
pub(super) const ROWS_PER_INSERT: usize = 128;

/// `INSERT OR ROLLBACK INTO table VALUES (?, …), (?, …), …` for `rows` rows of `columns`
/// values.
///
/// `OR ROLLBACK`: a statement that writes several rows and may fail part way (`ABORT`, the
/// default) makes SQLite copy each page it first touches into a statement journal, which it
/// writes to a temporary file (`temp_store = FILE`), to undo just that statement. The writer
/// never goes on after a failed insert (the run stops and keeps what it committed), so undoing
/// the whole transaction is as good and the copies are not needed: they cost 14% of the load
/// of masters-1 (4.97 s against 4.25 s; half the system time).
pub(super) fn multi_row_insert(table: &str, columns: usize, rows: usize) -> String {
    let row = format!("({})", vec!["?"; columns].join(","));
    format!(
        "INSERT OR ROLLBACK INTO {table} VALUES {}",
        vec![row; rows].join(",")
    )
}

/// Inserts rows through multi-row statements of [`ROWS_PER_INSERT`] rows, the rest singly.
pub(super) fn insert_rows<const N: usize>(
    conn: &Connection,
    table: &str,
    rows: &[[i64; N]],
) -> Result<()> {
    let mut chunks = rows.chunks_exact(ROWS_PER_INSERT);
    if chunks.len() > 0 {
        let mut st = conn.prepare_cached(&multi_row_insert(table, N, ROWS_PER_INSERT))?;
        for chunk in &mut chunks {
            for (i, v) in chunk.iter().flatten().enumerate() {
                st.raw_bind_parameter(i + 1, v)?;
            }
            st.raw_execute()?;
        }
    }
    let mut st = conn.prepare_cached(&multi_row_insert(table, N, 1))?;
    for row in chunks.remainder() {
        for (i, v) in row.iter().enumerate() {
            st.raw_bind_parameter(i + 1, v)?;
        }
        st.raw_execute()?;
    }
    Ok(())
}
