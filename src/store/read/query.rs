//! Statements whose rows another layer writes out: `query`'s SQL (from a file or `--sql`,
//! checked to be one statement that only reads) and the rows of a typed search. A
//! [`Prepared`] statement gives its column names and then each row's values as [`Cell`]s; the
//! errors of SQL text are worded here, with the SQL and the failing token marked
//! ([`explain`]).

use anyhow::{Context, Result, bail};

use super::Snapshot;
use super::params::{Value, bind_params};

/// A prepared statement of a snapshot.
pub struct Prepared<'s> {
    stmt: rusqlite::Statement<'s>,
}

/// One value of a row, as SQLite holds it (text and blobs borrowed from the row).
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Cell<'a> {
    Null,
    Integer(i64),
    Real(f64),
    Text(&'a [u8]),
    Blob(&'a [u8]),
}

/// One row of a [`Prepared`] statement.
pub struct Record<'r, 's> {
    row: &'r rusqlite::Row<'s>,
}

impl Record<'_, '_> {
    /// The value of column `i`.
    pub fn get(&self, i: usize) -> Result<Cell<'_>> {
        use rusqlite::types::ValueRef;
        Ok(match self.row.get_ref(i)? {
            ValueRef::Null => Cell::Null,
            ValueRef::Integer(v) => Cell::Integer(v),
            ValueRef::Real(v) => Cell::Real(v),
            ValueRef::Text(t) => Cell::Text(t),
            ValueRef::Blob(b) => Cell::Blob(b),
        })
    }
}

impl<'s> Prepared<'s> {
    pub(crate) fn new(stmt: rusqlite::Statement<'s>) -> Prepared<'s> {
        Prepared { stmt }
    }

    /// The statement's column names, in order.
    #[must_use]
    pub fn columns(&self) -> Vec<String> {
        self.stmt
            .column_names()
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    /// Binds the named parameters (`:NAME`) of the statement.
    pub fn bind(&mut self, params: &[(String, Value)]) -> Result<()> {
        bind_params(&mut self.stmt, params)
    }

    /// Runs the statement and calls `each` on its rows, in order, until it returns `false` or
    /// the rows end.
    pub fn each(&mut self, mut each: impl FnMut(&Record<'_, '_>) -> Result<bool>) -> Result<()> {
        let mut rows = self.stmt.raw_query();
        while let Some(row) = rows.next()? {
            if !each(&Record { row })? {
                break;
            }
        }
        Ok(())
    }
}

/// Prepares one read-only statement of SQL text, with a clear error for SQL mistakes and for
/// writes.
pub fn prepare<'s>(snapshot: &'s Snapshot, sql: &str) -> Result<Prepared<'s>> {
    let stmt = snapshot.prepare(sql).map_err(|e| match e {
        rusqlite::Error::MultipleStatement => anyhow::anyhow!(
            "SQL error: more than one statement; pawndex query runs one statement at a time"
        ),
        e => sql_error(&e, sql),
    })?;
    if !stmt.readonly() {
        bail!(
            "refusing to run a statement that changes the database: pawndex query only reads \
             (the database is opened read-only)\nin this SQL:\n  {}",
            sql.trim()
        );
    }
    Ok(Prepared { stmt })
}

/// Runs SQL text whose first column of its first row is a count.
pub fn count(snapshot: &Snapshot, sql: &str, params: &[(String, Value)]) -> Result<u64> {
    let mut prepared = prepare(snapshot, sql)?;
    prepared.bind(params)?;
    let mut rows = prepared.stmt.raw_query();
    let row = rows
        .next()
        .map_err(|e| sql_error(&e, sql))?
        .context("the count query returned no row")?;
    let n: i64 = row.get(0)?;
    Ok(n as u64)
}

/// An error of running `sql` in the words of [`prepare`]'s errors when SQLite gave it (the SQL
/// with its failing token marked); any other error as it is.
#[must_use]
pub fn explain(e: anyhow::Error, sql: &str) -> anyhow::Error {
    match e.downcast::<rusqlite::Error>() {
        Ok(e) => sql_error(&e, sql),
        Err(e) => e,
    }
}

/// Formats an SQL error with SQLite's message and the SQL, the failing token marked.
fn sql_error(e: &rusqlite::Error, sql: &str) -> anyhow::Error {
    // A damaged database is not a mistake in the SQL: the error stays SQLite's, for the
    // message about the damage.
    if let rusqlite::Error::SqliteFailure(f, msg) = e
        && f.code == rusqlite::ErrorCode::DatabaseCorrupt
    {
        return rusqlite::Error::SqliteFailure(*f, msg.clone()).into();
    }
    let (message, offset) = match e {
        rusqlite::Error::SqlInputError { msg, offset, .. } => {
            (msg.clone(), usize::try_from(*offset).ok())
        }
        rusqlite::Error::SqliteFailure(_, Some(msg)) => (msg.clone(), None),
        e => (e.to_string(), None),
    };
    let mut msg = format!("SQL error: {message}\nin this SQL:\n");
    let mut at = 0usize;
    for line in sql.trim_end().lines() {
        msg.push_str("  ");
        msg.push_str(line);
        msg.push('\n');
        if let Some(o) = offset
            && o >= at
            && o <= at + line.len()
        {
            let col = line[..o - at].chars().count();
            msg.push_str(&format!("  {}^\n", " ".repeat(col)));
        }
        at += line.len() + 1;
    }
    anyhow::anyhow!(msg.trim_end().to_string())
}
