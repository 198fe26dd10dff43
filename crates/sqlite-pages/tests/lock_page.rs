//! The lock-byte page with SQLite's pending byte moved near the start of the file (this test
//! binary's own process: the pending byte is process-wide, set before any database opens), so
//! that trees of a few hundred pages are written across it: `integrity_check` is ok, every row
//! reads back, and the page is untouched. `past_one_gib.rs` does the same at the real offset.

mod common;

use std::sync::Once;

use rusqlite::Connection;
use sqlite_pages::{PageWriter, Record, Tree, bulk_root, int_record_max, lock_byte_page};

/// The pending byte of this process: page 513 of 512-byte pages, 65 of 4 KiB, 5 of 64 KiB.
const PENDING: u32 = 0x4_0000;

fn move_pending_byte() {
    static MOVED: Once = Once::new();
    MOVED.call_once(|| {
        // SAFETY: one unsigned int; set before this process opens a database.
        let before = unsafe {
            rusqlite::ffi::sqlite3_test_control(
                rusqlite::ffi::SQLITE_TESTCTRL_PENDING_BYTE,
                PENDING as std::os::raw::c_uint,
            )
        };
        assert_eq!(before, 0x4000_0000, "the default pending byte");
    });
}

/// A blob of `len` bytes, the same for the same `(row, len)`.
fn blob(row: i64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|j| (row as usize * 131 + j * 7 + j / 251) as u8)
        .collect()
}

/// Length of row `i`'s blob: mostly a cell in its leaf, sometimes a chain of overflow pages.
fn blob_len(i: i64, page_size: usize) -> usize {
    match i % 7 {
        0 => page_size * 3 + (i as usize % 100),
        1 => page_size / 2,
        _ => (i as usize * 37) % 90,
    }
}

/// Loads `n` rows into `r` (a rowid table with blobs) and `t` (a WITHOUT ROWID table), over
/// `commits` transactions, each with SQLite's own rows in `other` first; then reads them back.
fn across_the_lock_page(page_size: usize, journal: &str, n: i64, commits: i64) {
    move_pending_byte();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(&format!(
        "PRAGMA page_size = {page_size}; PRAGMA journal_mode = {journal};
         CREATE TABLE other (x INTEGER PRIMARY KEY, y BLOB);
         CREATE TABLE r (id INTEGER PRIMARY KEY, b BLOB);
         CREATE TABLE t (a INTEGER NOT NULL, b INTEGER NOT NULL, c INTEGER,
                         PRIMARY KEY (a, b)) WITHOUT ROWID;"
    ))
    .unwrap();
    let lock = lock_byte_page(page_size);
    assert_eq!(lock, PENDING / page_size as u32 + 1);
    let mut rows =
        Tree::table(&conn, bulk_root(&conn, "r", &["id", "b"]).unwrap().unwrap()).unwrap();
    let mut keys = Tree::index(
        &conn,
        bulk_root(&conn, "t", &["a", "b", "c"]).unwrap().unwrap(),
        int_record_max(3),
    )
    .unwrap();
    let mut rec = Record::default();
    let per = n / commits + 1;
    for c in 0..commits {
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        conn.execute(
            "INSERT INTO other (y) VALUES (zeroblob(?1))",
            [page_size as i64 * 2],
        )
        .unwrap();
        let mut w = PageWriter::begin(&conn).unwrap();
        for i in c * per..((c + 1) * per).min(n) {
            let row = rec
                .start()
                .null()
                .blob(&blob(i, blob_len(i, page_size)))
                .bytes();
            rows.add_row(i * 3 + 1, row).unwrap();
            keys.add(rec.start().int(i / 5).int(i % 5).int(-i * 1000).bytes())
                .unwrap();
            if i % 50 == 0 {
                rows.write_closed(&mut w).unwrap();
            }
        }
        rows.write(&mut w).unwrap();
        keys.write(&mut w).unwrap();
        w.end().unwrap();
        conn.execute_batch("COMMIT").unwrap();
    }
    drop(conn);
    let conn = Connection::open(&path).unwrap();
    let pages: u32 = conn
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .unwrap();
    assert!(pages > lock + 20, "{pages} pages, the lock page is {lock}");
    let check = common::integrity(&conn);
    assert_eq!(check, "ok", "{page_size}-byte pages, {journal}");
    common::assert_lock_page_untouched(&conn, lock);
    let mut st = conn.prepare("SELECT id, b FROM r ORDER BY id").unwrap();
    let mut back = st
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?)))
        .unwrap();
    for i in 0..n {
        let (id, b) = back.next().unwrap().unwrap();
        assert_eq!(id, i * 3 + 1);
        assert!(b == blob(i, blob_len(i, page_size)), "row {i}");
    }
    assert!(back.next().is_none());
    let mut st = conn.prepare("SELECT a, b, c FROM t ORDER BY a, b").unwrap();
    let keys: Vec<[i64; 3]> = st
        .query_map([], |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?]))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let want: Vec<[i64; 3]> = (0..n).map(|i| [i / 5, i % 5, -i * 1000]).collect();
    assert_eq!(keys, want);
    // SQLite goes on past the lock page too.
    conn.execute(
        "INSERT INTO r (b) VALUES (zeroblob(?1))",
        [page_size as i64 * 5],
    )
    .unwrap();
    conn.execute("DELETE FROM t WHERE a % 3 = 0", []).unwrap();
    let check = common::integrity(&conn);
    assert_eq!(check, "ok");
}

#[test]
fn pages_of_512_bytes_in_a_write_ahead_log() {
    across_the_lock_page(512, "WAL", 900, 3);
}

#[test]
fn pages_of_4096_bytes_in_a_rollback_journal() {
    across_the_lock_page(4096, "DELETE", 300, 4);
}

#[test]
fn pages_of_65536_bytes_in_a_write_ahead_log() {
    across_the_lock_page(65536, "WAL", 60, 2);
}
