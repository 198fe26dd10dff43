//! Eligibility: every kind of table and database the builder does not cover is refused, so the
//! caller inserts its rows through SQL; and what it covers is accepted.

use rusqlite::Connection;
use rusqlite::config::DbConfig;
use sqlite_pages::{Refusal, eligibility};

/// The WITHOUT ROWID table `t` (a, b, c) keyed by (a, b), as the builder covers it.
const T: &str = "CREATE TABLE t (a INTEGER NOT NULL, b INTEGER NOT NULL, c INTEGER,
                 PRIMARY KEY (a, b)) WITHOUT ROWID";
const COLUMNS: [&str; 3] = ["a", "b", "c"];

/// A database in `dir` set up by `before` (pragmas that must come before the first table),
/// then `schema`.
fn database(dir: &tempfile::TempDir, before: &str, schema: &str) -> Connection {
    let conn = Connection::open(dir.path().join("t.db")).unwrap();
    conn.execute_batch(before).unwrap();
    conn.execute_batch(schema).unwrap();
    conn
}

fn verdict(conn: &Connection, table: &str, columns: &[&str]) -> Result<u32, Refusal> {
    eligibility(conn, table, columns).unwrap()
}

#[test]
fn covered_tables_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(
        &dir,
        "",
        &format!(
            "{T}; CREATE TABLE r (id INTEGER PRIMARY KEY, n INTEGER, s TEXT);
             CREATE TABLE k (a, b, PRIMARY KEY (a COLLATE BINARY ASC)) WITHOUT ROWID"
        ),
    );
    assert!(verdict(&conn, "t", &COLUMNS).is_ok());
    assert!(verdict(&conn, "r", &["id", "n", "s"]).is_ok());
    assert!(verdict(&conn, "k", &["a", "b"]).is_ok());
}

#[test]
fn a_missing_table_a_view_or_a_virtual_table_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(
        &dir,
        "",
        &format!("{T}; CREATE VIEW v AS SELECT a, b, c FROM t"),
    );
    assert_eq!(verdict(&conn, "missing", &COLUMNS), Err(Refusal::NoTable));
    assert_eq!(verdict(&conn, "v", &COLUMNS), Err(Refusal::NoTable));
    assert_eq!(
        verdict(&conn, "sqlite_dbpage", &["pgno", "data"]),
        Err(Refusal::NoTable)
    );
}

#[test]
fn a_table_with_rows_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(&dir, "", &format!("{T}; INSERT INTO t VALUES (1, 2, 3)"));
    assert_eq!(verdict(&conn, "t", &COLUMNS), Err(Refusal::NotEmpty));
}

#[test]
fn columns_not_as_given_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(
        &dir,
        "",
        &format!(
            "{T}; CREATE TABLE g (id INTEGER PRIMARY KEY, n INTEGER,
                                  twice INTEGER GENERATED ALWAYS AS (2 * n))"
        ),
    );
    let names = |v: &[&str]| Err(Refusal::Columns(v.iter().map(|s| s.to_string()).collect()));
    assert_eq!(verdict(&conn, "t", &["a", "c", "b"]), names(&COLUMNS));
    assert_eq!(verdict(&conn, "t", &["a", "b"]), names(&COLUMNS));
    assert_eq!(verdict(&conn, "t", &["a", "b", "c", "d"]), names(&COLUMNS));
    // A generated column is not in the stored record as the caller would write it.
    assert_eq!(
        verdict(&conn, "g", &["id", "n", "twice"]),
        names(&["id", "n", "twice"])
    );
    assert_eq!(
        verdict(&conn, "g", &["id", "n"]),
        names(&["id", "n", "twice"])
    );
}

#[test]
fn a_table_with_an_index_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(
        &dir,
        "",
        &format!(
            "{T}; CREATE INDEX t_c ON t(c);
             CREATE TABLE u (id INTEGER PRIMARY KEY, code TEXT UNIQUE);
             CREATE TABLE p (code TEXT PRIMARY KEY, n INTEGER)"
        ),
    );
    assert_eq!(
        verdict(&conn, "t", &COLUMNS),
        Err(Refusal::Index("t_c".into()))
    );
    // UNIQUE, and a rowid table's PRIMARY KEY that is not its rowid: indexes SQLite made.
    assert_eq!(
        verdict(&conn, "u", &["id", "code"]),
        Err(Refusal::Index("sqlite_autoindex_u_1".into()))
    );
    assert_eq!(
        verdict(&conn, "p", &["code", "n"]),
        Err(Refusal::Index("sqlite_autoindex_p_1".into()))
    );
}

#[test]
fn a_table_with_a_trigger_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(
        &dir,
        "",
        &format!(
            "{T}; CREATE TABLE log (n INTEGER);
             CREATE TRIGGER t_log AFTER INSERT ON t BEGIN INSERT INTO log VALUES (new.a); END"
        ),
    );
    assert_eq!(
        verdict(&conn, "t", &COLUMNS),
        Err(Refusal::Trigger("t_log".into()))
    );
}

#[test]
fn a_key_other_than_the_leading_columns_ascending_in_binary_is_refused() {
    for key in [
        "PRIMARY KEY (b, a)",
        "PRIMARY KEY (a DESC, b)",
        "PRIMARY KEY (a, b DESC)",
        "PRIMARY KEY (a COLLATE NOCASE, b)",
        "PRIMARY KEY (b)",
        "PRIMARY KEY (a, c)",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let conn = database(
            &dir,
            "",
            &format!(
                "CREATE TABLE t (a TEXT NOT NULL, b INTEGER NOT NULL, c INTEGER, {key}) WITHOUT ROWID"
            ),
        );
        assert_eq!(
            verdict(&conn, "t", &COLUMNS),
            Err(Refusal::KeyOrder),
            "{key}"
        );
    }
    // A column declared with a collation other than BINARY, keyed without naming one.
    let dir = tempfile::tempdir().unwrap();
    let conn = database(
        &dir,
        "",
        "CREATE TABLE t (a TEXT COLLATE NOCASE, b INTEGER, c INTEGER, PRIMARY KEY (a, b)) WITHOUT ROWID",
    );
    assert_eq!(verdict(&conn, "t", &COLUMNS), Err(Refusal::KeyOrder));
}

#[test]
fn a_text_encoding_other_than_utf8_is_refused() {
    for encoding in ["UTF-16le", "UTF-16be"] {
        let dir = tempfile::tempdir().unwrap();
        let conn = database(&dir, &format!("PRAGMA encoding = '{encoding}'"), T);
        assert_eq!(
            verdict(&conn, "t", &COLUMNS),
            Err(Refusal::Encoding(encoding.to_owned())),
            "{encoding}"
        );
    }
}

#[test]
fn a_schema_format_other_than_4_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(&dir, "", T);
    // SQLite reads formats 1 to 4; this one is said to be 1 in its header.
    let mut page1: Vec<u8> = conn
        .query_row("SELECT data FROM sqlite_dbpage WHERE pgno = 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    page1[44..48].copy_from_slice(&1u32.to_be_bytes());
    conn.execute(
        "INSERT INTO sqlite_dbpage (pgno, data) VALUES (1, ?1)",
        [&page1],
    )
    .unwrap();
    drop(conn);
    let conn = Connection::open(dir.path().join("t.db")).unwrap();
    assert_eq!(verdict(&conn, "t", &COLUMNS), Err(Refusal::SchemaFormat(1)));
}

#[test]
fn reserved_bytes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let conn = Connection::open(dir.path().join("t.db")).unwrap();
    let mut reserve: std::os::raw::c_int = 8;
    // SAFETY: SQLITE_FCNTL_RESERVE_BYTES takes a pointer to an int, live for the call.
    let rc = unsafe {
        rusqlite::ffi::sqlite3_file_control(
            conn.handle(),
            c"main".as_ptr(),
            rusqlite::ffi::SQLITE_FCNTL_RESERVE_BYTES,
            (&raw mut reserve).cast(),
        )
    };
    assert_eq!(rc, rusqlite::ffi::SQLITE_OK);
    conn.execute_batch(T).unwrap();
    conn.execute_batch("VACUUM").unwrap();
    assert_eq!(
        verdict(&conn, "t", &COLUMNS),
        Err(Refusal::ReservedBytes(8))
    );
}

#[test]
fn auto_vacuum_is_refused() {
    for mode in ["FULL", "INCREMENTAL"] {
        let dir = tempfile::tempdir().unwrap();
        let conn = database(&dir, &format!("PRAGMA auto_vacuum = {mode}"), T);
        assert_eq!(
            verdict(&conn, "t", &COLUMNS),
            Err(Refusal::AutoVacuum),
            "{mode}"
        );
    }
}

#[test]
fn defensive_mode_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(&dir, "", T);
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)
        .unwrap();
    assert_eq!(verdict(&conn, "t", &COLUMNS), Err(Refusal::Defensive));
}

#[test]
fn an_index_the_caller_drops_first_is_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(
        &dir,
        "",
        &format!("{T}; CREATE INDEX t_c ON t(c); CREATE INDEX t_cb ON t(c, b)"),
    );
    let dropping =
        |names: &[&str]| sqlite_pages::eligibility_dropping(&conn, "t", &COLUMNS, names).unwrap();
    assert!(dropping(&["t_c", "t_cb"]).is_ok());
    assert_eq!(dropping(&["t_c"]), Err(Refusal::Index("t_cb".into())));
}
