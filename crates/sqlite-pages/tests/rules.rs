//! The rules of a transaction that writes pages, each broken once: an error that names it,
//! never a panic, and the caller's rollback leaves the database as it was.

mod common;

use common::integrity;
use rusqlite::Connection;
use sqlite_pages::{PageWriter, Record, RuleBroken, Tree, bulk_root, int_record_max};

/// A WAL database with 512-byte pages, the WITHOUT ROWID table `t` and the rowid table `other`.
fn database(dir: &std::path::Path) -> Connection {
    let conn = Connection::open(dir.join("t.db")).unwrap();
    conn.execute_batch(
        "PRAGMA page_size = 512; PRAGMA journal_mode = WAL;
         CREATE TABLE other (x INTEGER PRIMARY KEY, y BLOB);
         CREATE TABLE t (a INTEGER NOT NULL, b INTEGER NOT NULL, c INTEGER NOT NULL,
                         PRIMARY KEY (a, b)) WITHOUT ROWID;",
    )
    .unwrap();
    conn
}

/// The rule an error says was broken.
fn rule(e: anyhow::Error) -> String {
    match e.downcast_ref::<RuleBroken>() {
        Some(r) => r.0.clone(),
        None => panic!("not a broken rule: {e:#}"),
    }
}

fn count(conn: &Connection, table: &str) -> i64 {
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

/// A tree of `t` holding `n` rows, not written yet.
fn tree(conn: &Connection, n: i64) -> Tree {
    let root = bulk_root(conn, "t", &["a", "b", "c"]).unwrap().unwrap();
    let mut tree = Tree::index(conn, root, int_record_max(3)).unwrap();
    let mut rec = Record::default();
    for i in 0..n {
        tree.add(rec.start().int(i).int(0).int(-i).bytes()).unwrap();
    }
    tree
}

#[test]
fn a_writer_needs_an_open_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(dir.path());
    let e = PageWriter::begin(&conn).err().expect("refused");
    assert!(rule(e).contains("no open transaction"));
}

#[test]
fn one_writer_at_a_time_on_a_connection() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(dir.path());
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    let first = PageWriter::begin(&conn).unwrap();
    let e = PageWriter::begin(&conn)
        .err()
        .expect("a second writer refused");
    assert!(rule(e).contains("still open"), "second writer");
    drop(first);
    // Another connection (another transaction) is not this one's business.
    let dir2 = tempfile::tempdir().unwrap();
    let other = database(dir2.path());
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let _w = PageWriter::begin(&other).unwrap();
    conn.execute_batch("ROLLBACK").unwrap();
}

/// A second writer in the same transaction would number its pages from SQLite's count, over
/// the first one's pages.
#[test]
fn one_writer_per_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(dir.path());
    let mut t = tree(&conn, 200);
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    let mut w = PageWriter::begin(&conn).unwrap();
    t.write(&mut w).unwrap();
    w.end().unwrap();
    let e = PageWriter::begin(&conn)
        .err()
        .expect("a second writer refused");
    assert!(rule(e).contains("already laid out in this transaction"));
    conn.execute_batch("COMMIT").unwrap();
    assert_eq!(integrity(&conn), "ok");
    assert_eq!(count(&conn, "t"), 200);
    // The next transaction may have its writer.
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    PageWriter::begin(&conn).unwrap().end().unwrap();
    conn.execute_batch("COMMIT").unwrap();
}

/// SQLite allocating pages after the writer began would give out the tree's page numbers: the
/// end refuses, and the rollback leaves the database whole.
#[test]
fn sqlite_allocates_no_page_after_the_writer_began() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(dir.path());
    let mut t = tree(&conn, 200);
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    let mut w = PageWriter::begin(&conn).unwrap();
    t.write(&mut w).unwrap();
    conn.execute("INSERT INTO other (y) VALUES (zeroblob(2000))", [])
        .unwrap();
    let e = w.end().expect_err("refused");
    assert!(rule(e).contains("SQLite allocated pages"));
    conn.execute_batch("ROLLBACK").unwrap();
    assert_eq!(integrity(&conn), "ok");
    assert_eq!((count(&conn, "t"), count(&conn, "other")), (0, 0));
}

/// The header's page count is what SQLite reads back the database's size from: a header that
/// does not say SQLite's count at the start is refused.
#[test]
fn the_header_counts_sqlites_pages_at_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(dir.path());
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    let mut page1: Vec<u8> = conn
        .query_row("SELECT data FROM sqlite_dbpage WHERE pgno = 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    page1[28..32].copy_from_slice(&99u32.to_be_bytes());
    conn.execute(
        "INSERT INTO sqlite_dbpage (pgno, data) VALUES (1, ?1)",
        [&page1],
    )
    .unwrap();
    let e = PageWriter::begin(&conn).err().expect("refused");
    assert!(rule(e).contains("the header counts 99 pages"));
    conn.execute_batch("ROLLBACK").unwrap();
    assert_eq!(integrity(&conn), "ok");
}

/// The end leaves the header at the builder's count, and SQLite takes it as the database's
/// size at its next transaction.
#[test]
fn the_header_counts_the_builders_pages_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(dir.path());
    let mut t = tree(&conn, 500);
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    let before: u32 = conn
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .unwrap();
    let mut w = PageWriter::begin(&conn).unwrap();
    t.write(&mut w).unwrap();
    w.end().unwrap();
    conn.execute_batch("COMMIT").unwrap();
    let after: u32 = conn
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .unwrap();
    assert!(after > before + 10, "{before} -> {after} pages");
    let page1: Vec<u8> = conn
        .query_row("SELECT data FROM sqlite_dbpage WHERE pgno = 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(page1[28..32], after.to_be_bytes());
    assert_eq!(integrity(&conn), "ok");
    assert_eq!(count(&conn, "t"), 500);
}

/// Records out of their declared size, or rows of the wrong kind of tree, are errors.
#[test]
fn misuse_of_a_tree_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(dir.path());
    let root = bulk_root(&conn, "t", &["a", "b", "c"]).unwrap().unwrap();
    let mut index = Tree::index(&conn, root, int_record_max(3)).unwrap();
    assert!(index.add_row(1, &[2, 1, 1]).is_err());
    assert!(index.add_ints(&[0; 15]).is_err());
    assert!(
        index.add_ints(&[i64::MAX; 4]).is_err(),
        "longer than declared"
    );
    assert!(Tree::index(&conn, root, 200).is_err(), "overflow pages");
    assert!(Tree::table(&conn, 1).is_err(), "page 1");
    // The root of a WITHOUT ROWID table is not a rowid table's, nor the other way round.
    assert!(
        Tree::table(&conn, root).is_err(),
        "an index root as a table"
    );
    let other = bulk_root(&conn, "other", &["x", "y"]).unwrap().unwrap();
    assert!(Tree::index(&conn, other, int_record_max(3)).is_err());
    let mut table = Tree::table(&conn, other).unwrap();
    assert!(table.add(&[2, 1, 1]).is_err());
    table.add_row(5, &[2, 1, 1]).unwrap();
    assert!(table.add_row(5, &[2, 1, 1]).is_err(), "rowids ascending");
    // A root that holds rows (a table that filled since it was found eligible).
    conn.execute("INSERT INTO t VALUES (1, 2, 3)", []).unwrap();
    assert!(
        Tree::index(&conn, root, int_record_max(3)).is_err(),
        "a root with rows"
    );
    // A root a page writer gives out is past the database's end: nothing to check.
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    let mut w = PageWriter::begin(&conn).unwrap();
    let fresh = w.alloc();
    assert!(Tree::index(&conn, fresh, int_record_max(3)).is_ok());
    drop(w);
    conn.execute_batch("ROLLBACK").unwrap();
}
