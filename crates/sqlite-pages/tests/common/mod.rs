//! What the integration tests of the page builder check the same way: SQLite's own verdict on
//! a database, and the lock page left as SQLite leaves it.

#![allow(dead_code)] // each test file uses a different subset

use rusqlite::Connection;

/// `PRAGMA integrity_check`'s first line ("ok" for a sound database).
pub fn integrity(conn: &Connection) -> String {
    conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

/// Fails unless page `lock` (the lock-byte page) holds only zeros: no tree wrote into it.
pub fn assert_lock_page_untouched(conn: &Connection, lock: u32) {
    let bytes: Vec<u8> = conn
        .query_row(
            "SELECT data FROM sqlite_dbpage WHERE pgno = ?1",
            [lock],
            |r| r.get(0),
        )
        .unwrap();
    assert!(bytes.iter().all(|&b| b == 0), "the lock page is untouched");
}
