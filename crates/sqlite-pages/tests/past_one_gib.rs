//! The lock-byte page at its real offset: a database written by the builder past 1 GiB
//! (SQLite's pending byte), in several commits, each with SQLite's own rows first; then
//! `integrity_check` is ok, every row reads back, and the lock page is untouched.
//!
//! It writes 1.2 GB in a temporary folder and reads it twice: 13 s on a 2-core machine, so it
//! runs with the others. `lock_page.rs` does the same across a moved pending byte, at three
//! page sizes. Without the lock page skipped, this database reads back "malformed".

mod common;

use rusqlite::Connection;
use sqlite_pages::{PageWriter, Record, Tree, bulk_root, int_record_max, lock_byte_page};

const PAGE: usize = 8192;
/// Rows of the rowid table, of about 20 KB each: 1.2 GB in all.
const ROWS: i64 = 60_000;
const COMMITS: i64 = 6;

fn blob_len(i: i64) -> usize {
    match i % 5 {
        0 => 60_000 + (i as usize * 13) % 9000,
        1 => PAGE / 3,
        2 => 30_000,
        _ => (i as usize * 37) % 200,
    }
}

/// The bytes of row `i`'s blob, into `out`.
fn fill(i: i64, out: &mut Vec<u8>) {
    out.clear();
    out.extend((0..blob_len(i)).map(|j| (i as usize * 131 + j * 7 + j / 251) as u8));
}

#[test]
fn a_database_past_one_gib() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.db");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(&format!(
        "PRAGMA page_size = {PAGE}; PRAGMA journal_mode = DELETE; PRAGMA synchronous = OFF;
         CREATE TABLE other (x INTEGER PRIMARY KEY, y BLOB);
         CREATE TABLE r (id INTEGER PRIMARY KEY, b BLOB);
         CREATE TABLE t (a INTEGER NOT NULL, b INTEGER NOT NULL, c INTEGER,
                         PRIMARY KEY (a, b)) WITHOUT ROWID;"
    ))
    .unwrap();
    let mut rows =
        Tree::table(&conn, bulk_root(&conn, "r", &["id", "b"]).unwrap().unwrap()).unwrap();
    let mut keys = Tree::index(
        &conn,
        bulk_root(&conn, "t", &["a", "b", "c"]).unwrap().unwrap(),
        int_record_max(3),
    )
    .unwrap();
    let mut rec = Record::default();
    let mut blob = Vec::new();
    let per = ROWS / COMMITS + 1;
    for c in 0..COMMITS {
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        conn.execute("INSERT INTO other (y) VALUES (zeroblob(100000))", [])
            .unwrap();
        let mut w = PageWriter::begin(&conn).unwrap();
        for i in c * per..((c + 1) * per).min(ROWS) {
            fill(i, &mut blob);
            rows.add_row(i + 1, rec.start().null().blob(&blob).bytes())
                .unwrap();
            for k in 0..4 {
                keys.add_ints(&[i, k, i * k - 7]).unwrap();
            }
            if rows.closed_bytes() + keys.closed_bytes() > 32 << 20 {
                rows.write_closed(&mut w).unwrap();
                keys.write_closed(&mut w).unwrap();
            }
        }
        rows.write(&mut w).unwrap();
        keys.write(&mut w).unwrap();
        w.end().unwrap();
        conn.execute_batch("COMMIT").unwrap();
    }
    drop(conn);
    let conn = Connection::open(&path).unwrap();
    let lock = lock_byte_page(PAGE);
    let pages: u32 = conn
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .unwrap();
    assert!(
        pages > lock + 1000,
        "{pages} pages, the lock page is {lock}"
    );
    let check = common::integrity(&conn);
    assert_eq!(check, "ok");
    common::assert_lock_page_untouched(&conn, lock);
    let mut st = conn.prepare("SELECT id, b FROM r ORDER BY id").unwrap();
    let mut back = st
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?)))
        .unwrap();
    for i in 0..ROWS {
        let (id, b) = back.next().unwrap().unwrap();
        fill(i, &mut blob);
        assert_eq!(id, i + 1);
        assert!(b == blob, "row {i}");
    }
    assert!(back.next().is_none());
    let mut st = conn.prepare("SELECT a, b, c FROM t ORDER BY a, b").unwrap();
    let mut back = st
        .query_map([], |r| Ok([r.get::<_, i64>(0)?, r.get(1)?, r.get(2)?]))
        .unwrap();
    for i in 0..ROWS {
        for k in 0..4 {
            assert_eq!(back.next().unwrap().unwrap(), [i, k, i * k - 7]);
        }
    }
    assert!(back.next().is_none());
}
