//! What the builder covers: the SQLite it was tested with, and the tables and databases it can
//! lay out. Anything else is refused, and the caller inserts rows through SQL.

use std::fmt;

use anyhow::Result;
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OptionalExtension};

/// The SQLite versions (as `sqlite3_libversion_number()`) the builder was tested with: this
/// crate's tests pass on each. Adding one: build with it (the `libsqlite3-sys` that bundles it,
/// `SQLITE_ENABLE_DBPAGE_VTAB` set), add it here, run this crate's tests and the caller's
/// with the pages on and off, and add it to the README.
pub const TESTED_VERSIONS: &[i32] = &[3_050_002];

/// Why this SQLite cannot take laid-out pages at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unsupported {
    /// A version not in [`TESTED_VERSIONS`].
    Version(i32),
    /// No `sqlite_dbpage` table (SQLite built without `SQLITE_ENABLE_DBPAGE_VTAB`).
    NoDbpage,
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unsupported::Version(v) => {
                let tested: Vec<String> =
                    TESTED_VERSIONS.iter().map(|&t| sqlite_version(t)).collect();
                write!(
                    f,
                    "SQLite {} is not a version the page builder was tested with ({})",
                    sqlite_version(*v),
                    tested.join(", ")
                )
            }
            Unsupported::NoDbpage => write!(
                f,
                "this SQLite has no sqlite_dbpage table (it was built without \
                 SQLITE_ENABLE_DBPAGE_VTAB)"
            ),
        }
    }
}

/// A version number as SQLite writes it: 3050002 is "3.50.2".
pub fn sqlite_version(number: i32) -> String {
    format!(
        "{}.{}.{}",
        number / 1_000_000,
        number / 1000 % 1000,
        number % 1000
    )
}

pub(crate) fn check_version(number: i32) -> Result<(), Unsupported> {
    if TESTED_VERSIONS.contains(&number) {
        Ok(())
    } else {
        Err(Unsupported::Version(number))
    }
}

/// Whether the SQLite of this process can take laid-out pages: a tested version, with
/// `sqlite_dbpage`.
pub fn supported(conn: &Connection) -> Result<(), Unsupported> {
    check_version(rusqlite::version_number())?;
    if conn
        .prepare("SELECT 1 FROM sqlite_dbpage WHERE pgno = 1")
        .is_err()
    {
        return Err(Unsupported::NoDbpage);
    }
    Ok(())
}

/// Why a table cannot take laid-out pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// This SQLite cannot ([`supported`]).
    Unsupported(Unsupported),
    /// Defensive mode (`SQLITE_DBCONFIG_DEFENSIVE`) forbids writes to `sqlite_dbpage`.
    Defensive,
    /// A text encoding other than UTF-8 (the records hold UTF-8).
    Encoding(String),
    /// A schema format other than 4 (the records use format 4's integer types).
    SchemaFormat(u32),
    /// Pages with reserved bytes at their end (the builder fills whole pages).
    ReservedBytes(u8),
    /// Auto-vacuum or incremental vacuum: pointer-map pages the builder does not keep.
    AutoVacuum,
    /// No such table (or a view, or a virtual table).
    NoTable,
    /// Columns other than the records' (the names in order; hidden or generated ones too).
    Columns(Vec<String>),
    /// An index on the table, which the builder would leave empty.
    Index(String),
    /// A trigger on the table, which the builder would not fire.
    Trigger(String),
    /// A WITHOUT ROWID table whose key is not its leading columns, ascending, in BINARY
    /// collation: the records' order would not be SQLite's.
    KeyOrder,
    /// The table has rows.
    NotEmpty,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Unsupported(u) => u.fmt(f),
            Refusal::Defensive => write!(f, "defensive mode is on"),
            Refusal::Encoding(e) => write!(f, "the database's text encoding is {e}, not UTF-8"),
            Refusal::SchemaFormat(n) => write!(f, "the schema format is {n}, not 4"),
            Refusal::ReservedBytes(n) => write!(f, "pages keep {n} reserved bytes"),
            Refusal::AutoVacuum => write!(f, "the database has auto-vacuum on"),
            Refusal::NoTable => write!(f, "no such table"),
            Refusal::Columns(c) => write!(f, "the table's columns are {}", c.join(", ")),
            Refusal::Index(n) => write!(f, "the table has the index {n}"),
            Refusal::Trigger(n) => write!(f, "the table has the trigger {n}"),
            Refusal::KeyOrder => write!(
                f,
                "the table's key is not its leading columns ascending in BINARY collation"
            ),
            Refusal::NotEmpty => write!(f, "the table has rows"),
        }
    }
}

/// Whether rows can go into `table` through a [`Tree`](crate::Tree), in records of the
/// columns `columns` in that order: its root page, or why not (every [`Refusal`]).
pub fn eligibility(
    conn: &Connection,
    table: &str,
    columns: &[&str],
) -> Result<Result<u32, Refusal>> {
    eligibility_dropping(conn, table, columns, &[])
}

/// [`eligibility`] of a table whose indexes named in `dropping` the caller drops before it
/// writes a row (and builds again after the load): they are not refused, any other index is.
pub fn eligibility_dropping(
    conn: &Connection,
    table: &str,
    columns: &[&str],
    dropping: &[&str],
) -> Result<Result<u32, Refusal>> {
    if let Err(u) = supported(conn) {
        return Ok(Err(Refusal::Unsupported(u)));
    }
    if conn.db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE)? {
        return Ok(Err(Refusal::Defensive));
    }
    let encoding: String = conn.query_row("PRAGMA encoding", [], |r| r.get(0))?;
    if encoding != "UTF-8" {
        return Ok(Err(Refusal::Encoding(encoding)));
    }
    let header: Vec<u8> =
        conn.query_row("SELECT data FROM sqlite_dbpage WHERE pgno = 1", [], |r| {
            r.get(0)
        })?;
    let u32_at = |at: usize| {
        header
            .get(at..at + 4)
            .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    let format = u32_at(44);
    if format != 4 {
        return Ok(Err(Refusal::SchemaFormat(format)));
    }
    let reserved = header.get(20).copied().unwrap_or(0);
    if reserved != 0 {
        return Ok(Err(Refusal::ReservedBytes(reserved)));
    }
    let auto_vacuum: i64 = conn.query_row("PRAGMA auto_vacuum", [], |r| r.get(0))?;
    if auto_vacuum != 0 || u32_at(52) != 0 {
        return Ok(Err(Refusal::AutoVacuum));
    }
    let found: Option<(i64, bool)> = conn
        .query_row(
            "SELECT s.rootpage, l.wr FROM sqlite_schema AS s
             JOIN pragma_table_list AS l ON l.schema = 'main' AND l.name = s.name
             WHERE s.type = 'table' AND s.name = ?1 AND l.type = 'table'",
            [table],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let Some((root, without_rowid)) = found else {
        return Ok(Err(Refusal::NoTable));
    };
    let Some(root) = u32::try_from(root).ok().filter(|&r| r > 1) else {
        return Ok(Err(Refusal::NoTable));
    };
    let names: Vec<(String, i64)> = conn
        .prepare("SELECT name, hidden FROM pragma_table_xinfo(?1) ORDER BY cid")?
        .query_map([table], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    if names.len() != columns.len()
        || names
            .iter()
            .zip(columns)
            .any(|((n, hidden), c)| n != c || *hidden != 0)
    {
        return Ok(Err(Refusal::Columns(
            names.into_iter().map(|(n, _)| n).collect(),
        )));
    }
    let others: Vec<(String, String)> = conn
        .prepare(
            "SELECT type, name FROM sqlite_schema
             WHERE type IN ('index', 'trigger') AND tbl_name = ?1 COLLATE NOCASE
             ORDER BY type, name",
        )?
        .query_map([table], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut others = others
        .into_iter()
        .filter(|(kind, name)| !(kind == "index" && dropping.contains(&name.as_str())));
    if let Some((kind, name)) = others.next() {
        return Ok(Err(if kind == "index" {
            Refusal::Index(name)
        } else {
            Refusal::Trigger(name)
        }));
    }
    if without_rowid && !key_is_leading_columns(conn, table)? {
        return Ok(Err(Refusal::KeyOrder));
    }
    let empty: bool = conn.query_row(
        &format!(
            "SELECT NOT EXISTS (SELECT 1 FROM \"{}\")",
            table.replace('"', "\"\"")
        ),
        [],
        |r| r.get(0),
    )?;
    if !empty {
        return Ok(Err(Refusal::NotEmpty));
    }
    Ok(Ok(root))
}

/// Whether the key of the WITHOUT ROWID table `table` is its first columns in order, each
/// ascending in BINARY collation.
fn key_is_leading_columns(conn: &Connection, table: &str) -> Result<bool> {
    let pk: Option<String> = conn
        .query_row(
            "SELECT name FROM pragma_index_list(?1) WHERE origin = 'pk'",
            [table],
            |r| r.get(0),
        )
        .optional()?;
    let Some(pk) = pk else {
        return Ok(false);
    };
    let keys: Vec<(i64, i64, bool, String)> = conn
        .prepare(
            "SELECT seqno, cid, desc, coll FROM pragma_index_xinfo(?1) WHERE key ORDER BY seqno",
        )?
        .query_map([&pk], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(!keys.is_empty()
        && keys
            .iter()
            .all(|(seqno, cid, desc, coll)| seqno == cid && !desc && coll == "BINARY"))
}

/// [`eligibility`] as an option: the root page of `table` if it can take laid-out pages.
pub fn bulk_root(conn: &Connection, table: &str, columns: &[&str]) -> Result<Option<u32>> {
    Ok(eligibility(conn, table, columns)?.ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_not_tested_is_refused() {
        assert_eq!(check_version(3_050_002), Ok(()));
        for other in [3_050_001, 3_051_000, 3_045_000] {
            assert_eq!(check_version(other), Err(Unsupported::Version(other)));
        }
        assert_eq!(
            Unsupported::Version(3_051_000).to_string(),
            "SQLite 3.51.0 is not a version the page builder was tested with (3.50.2)"
        );
    }

    /// The tests run with a SQLite the builder was tested with: a new `libsqlite3-sys` fails
    /// here until its version is tested and listed.
    #[test]
    fn this_sqlite_is_one_tested() {
        assert_eq!(check_version(rusqlite::version_number()), Ok(()));
        let conn = Connection::open_in_memory().unwrap();
        assert_eq!(supported(&conn), Ok(()));
    }
}
