//! The builder against SQLite: trees read back, by SQLite and by another connection.

use rusqlite::Connection;

use super::*;
use crate::record::{INT_CELL_ROOM, int_cell, put_varint};

/// The columns of the test table `t`.
const T: [&str; 3] = ["a", "b", "c"];

/// The record of the integers `values`.
fn ints<'r>(rec: &'r mut Record, values: &[i64]) -> &'r [u8] {
    rec.start();
    for &v in values {
        rec.int(v);
    }
    rec.bytes()
}

/// Rows of three integers of many widths, in key order (the first two columns), from a
/// seeded generator.
fn rows(n: usize, seed: u64) -> Vec<[i64; 3]> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut key = (1i64, 0i64);
    (0..n)
        .map(|_| {
            let r = next();
            if r % 4 == 0 {
                key = (key.0 + 1 + (r >> 60) as i64, 0);
            } else {
                key.1 += 1 + (r >> 62) as i64;
            }
            // Values of 0 to 8 bytes, and negative ones.
            let width = (r >> 8) % 9;
            let v = if width == 0 {
                (r >> 20 & 1) as i64
            } else {
                (r as i64) >> (64 - 8 * width)
            };
            [key.0, key.1, v]
        })
        .collect()
}

/// A WAL database with 512-byte pages (deep trees from few rows) and the table `t`.
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

fn table(conn: &Connection, order: &str) -> Vec<[i64; 3]> {
    let mut st = conn
        .prepare(&format!(
            "SELECT a, b, c FROM t ORDER BY a {order}, b {order}"
        ))
        .unwrap();
    st.query_map([], |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?]))
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

fn integrity(conn: &Connection) -> String {
    conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

/// Loads `rows` through the builder, committing every `every` rows, each transaction also
/// inserting into another table (its pages come first); checks the tree at each commit.
fn load(conn: &Connection, rows: &[[i64; 3]], every: usize) -> usize {
    let root = bulk_root(conn, "t", &T)
        .unwrap()
        .expect("t can be bulk-loaded");
    let mut tree = Tree::index(conn, root, int_record_max(3)).unwrap();
    let mut record = Record::default();
    for (i, chunk) in rows.chunks(every).enumerate() {
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        conn.execute("INSERT INTO other (y) VALUES (zeroblob(700))", [])
            .unwrap();
        for r in chunk {
            tree.add(ints(&mut record, r)).unwrap();
        }
        let mut w = PageWriter::begin(conn).unwrap();
        tree.write(&mut w).unwrap();
        w.end().unwrap();
        conn.execute_batch("COMMIT").unwrap();
        let upto = (i * every + chunk.len()).min(rows.len());
        assert_eq!(integrity(conn), "ok", "after {upto} rows");
        assert_eq!(table(conn, "ASC"), rows[..upto], "after {upto} rows");
    }
    tree.depth()
}

/// An index row that page 1 cannot hold is not registered: SQLite would have taken a new
/// page for it, which the index's own pages may be given. Nothing is left of the attempt.
#[test]
fn an_index_page_1_cannot_hold_is_not_registered() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(dir.path());
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    let pages = |conn: &Connection| -> i64 {
        conn.query_row("PRAGMA page_count", [], |r| r.get(0))
            .unwrap()
    };
    let before = pages(&conn);
    let mut w = PageWriter::begin(&conn).unwrap();
    let root = w.alloc();
    // Longer than a 512-byte page: the row would go on in an overflow page.
    let sql = format!("CREATE INDEX t_c ON t(c) /* {} */", "x".repeat(600));
    assert!(!register_index(&conn, "t_c", "t", root, &sql).unwrap());
    assert_eq!(pages(&conn), before);
    let rows: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name = 't_c'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rows, 0);
    conn.execute_batch("COMMIT").unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

#[test]
fn a_loaded_tree_is_sqlites_tree() {
    for (n, every) in [
        (1, 1),
        (2, 1),
        (7, 3),
        (40, 40),
        (300, 17),
        (5000, 1200),
        (20000, 20000),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let conn = database(dir.path());
        let rows = rows(n, n as u64 * 7919);
        let depth = load(&conn, &rows, every);
        // 512-byte pages hold about 25 rows: 5,000 rows need interior pages over interior
        // pages.
        assert!(n < 5000 || depth >= 3, "{n} rows, depth {depth}");
        // Another connection reads it as well, both ways, and by key.
        let other = Connection::open(dir.path().join("t.db")).unwrap();
        let mut back = table(&other, "DESC");
        back.reverse();
        assert_eq!(back, rows, "{n} rows");
        for r in rows.iter().step_by(97) {
            let c: i64 = other
                .query_row(
                    "SELECT c FROM t WHERE a = ?1 AND b = ?2",
                    [r[0], r[1]],
                    |x| x.get(0),
                )
                .unwrap();
            assert_eq!(c, r[2]);
        }
        let other_rows: i64 = other
            .query_row("SELECT count(*) FROM other", [], |r| r.get(0))
            .unwrap();
        assert_eq!(other_rows as usize, n.div_ceil(every));
    }
}

#[test]
fn sqlite_goes_on_from_a_loaded_tree() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(dir.path());
    let all = rows(6000, 42);
    let (first, later) = all.split_at(4000);
    assert!(load(&conn, first, 1000) >= 3);
    // Rows after the loaded ones, and rows between them, inserted and deleted by SQLite.
    conn.execute_batch("BEGIN").unwrap();
    for r in later {
        conn.execute("INSERT INTO t VALUES (?1, ?2, ?3)", *r)
            .unwrap();
    }
    for r in first.iter().step_by(3) {
        conn.execute("DELETE FROM t WHERE a = ?1 AND b = ?2", [r[0], r[1]])
            .unwrap();
    }
    conn.execute_batch("COMMIT").unwrap();
    assert_eq!(integrity(&conn), "ok");
    let want: Vec<[i64; 3]> = first
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 3 != 0)
        .map(|(_, r)| *r)
        .chain(later.iter().copied())
        .collect();
    assert_eq!(table(&conn, "ASC"), want);
}

/// SQLite keeps what it parsed of a page beside its bytes: a connection that read the
/// empty root page in the transaction that rewrites it would go on seeing it empty. The
/// writer empties the cache itself: the caller does nothing after its commit.
#[test]
fn a_page_sqlite_had_read_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(dir.path());
    let root = bulk_root(&conn, "t", &T).unwrap().unwrap();
    let mut tree = Tree::index(&conn, root, int_record_max(3)).unwrap();
    let rows = rows(3, 5);
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    assert_eq!(table(&conn, "ASC").len(), 0);
    let mut record = Record::default();
    for r in &rows {
        tree.add(ints(&mut record, r)).unwrap();
    }
    let mut w = PageWriter::begin(&conn).unwrap();
    tree.write(&mut w).unwrap();
    w.end().unwrap();
    conn.execute_batch("COMMIT").unwrap();
    assert_eq!(table(&conn, "ASC"), rows);
}

/// Rows of a rowid table: rowids with gaps, an integer, and blobs from empty to several
/// overflow pages long (512-byte pages).
fn table_rows(n: usize, seed: u64) -> Vec<(i64, i64, Vec<u8>)> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut rowid = 0i64;
    (0..n)
        .map(|i| {
            let r = next();
            rowid += 1 + (r % 3) as i64;
            let len = match r >> 60 {
                0..=9 => (r >> 20) as usize % 60,
                10..=13 => (r >> 20) as usize % 600,
                _ => (r >> 20) as usize % 3000,
            };
            let blob = (0..len).map(|j| (i * 31 + j * 7) as u8).collect();
            (rowid, (r >> 30) as i64 - (1 << 33), blob)
        })
        .collect()
}

fn table_rows_of(conn: &Connection) -> Vec<(i64, i64, Vec<u8>)> {
    let mut st = conn.prepare("SELECT id, n, b FROM r ORDER BY id").unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

/// A rowid table and an index loaded in the same transactions, one page writer for both,
/// the table's closed pages written in the middle of each (as the derived tables do).
#[test]
fn a_loaded_table_is_sqlites_table() {
    for (n, every) in [(1, 1), (5, 2), (300, 70), (3000, 1000)] {
        let dir = tempfile::tempdir().unwrap();
        let conn = database(dir.path());
        conn.execute_batch("CREATE TABLE r (id INTEGER PRIMARY KEY, n INTEGER, b BLOB)")
            .unwrap();
        let data = table_rows(n, 99 + n as u64);
        let keys = rows(n, 5);
        let mut rowids = Tree::table(
            &conn,
            bulk_root(&conn, "r", &["id", "n", "b"]).unwrap().unwrap(),
        )
        .unwrap();
        let mut index = Tree::index(
            &conn,
            bulk_root(&conn, "t", &T).unwrap().unwrap(),
            int_record_max(3),
        )
        .unwrap();
        let mut record = Record::default();
        for (c, (chunk, key_chunk)) in data.chunks(every).zip(keys.chunks(every)).enumerate() {
            conn.execute_batch("BEGIN IMMEDIATE").unwrap();
            conn.execute("INSERT INTO other (y) VALUES (zeroblob(700))", [])
                .unwrap();
            let mut w = PageWriter::begin(&conn).unwrap();
            for (i, ((id, v, blob), key)) in chunk.iter().zip(key_chunk).enumerate() {
                let row = record.start().null().int(*v).blob(blob).bytes();
                rowids.add_row(*id, row).unwrap();
                index.add(ints(&mut record, key)).unwrap();
                if i == chunk.len() / 2 {
                    rowids.write_closed(&mut w).unwrap();
                }
            }
            rowids.write(&mut w).unwrap();
            index.write(&mut w).unwrap();
            w.end().unwrap();
            conn.execute_batch("COMMIT").unwrap();
            let upto = (c * every + chunk.len()).min(n);
            assert_eq!(integrity(&conn), "ok", "{n} rows, after {upto}");
            assert_eq!(table_rows_of(&conn), data[..upto], "{n} rows, after {upto}");
            assert_eq!(table(&conn, "ASC"), keys[..upto], "{n} rows, after {upto}");
        }
        // SQLite goes on: a row after, a row in a gap, a row removed.
        let last = data.last().unwrap().0;
        conn.execute("INSERT INTO r VALUES (?1, 7, zeroblob(900))", [last + 1])
            .unwrap();
        conn.execute("DELETE FROM r WHERE id = ?1", [data[0].0])
            .unwrap();
        assert_eq!(integrity(&conn), "ok", "{n} rows, then changed");
        let count: usize = conn
            .query_row("SELECT count(*) FROM r", [], |r| r.get(0))
            .unwrap();
        assert_eq!(count, n);
    }
}

#[test]
fn records_with_long_headers_are_sqlites() {
    // 150 columns: a header of two-byte size, one of the ways a record can be laid out.
    let dir = tempfile::tempdir().unwrap();
    let conn = Connection::open(dir.path().join("h.db")).unwrap();
    let columns: Vec<String> = (0..150).map(|i| format!("c{i} INTEGER")).collect();
    conn.execute_batch(&format!(
        "CREATE TABLE wide (id INTEGER PRIMARY KEY, {})",
        columns.join(", ")
    ))
    .unwrap();
    let names: Vec<String> = std::iter::once("id".to_owned())
        .chain((0..150).map(|i| format!("c{i}")))
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let root = bulk_root(&conn, "wide", &names).unwrap().unwrap();
    let mut tree = Tree::table(&conn, root).unwrap();
    let mut rec = Record::default();
    rec.start().null();
    for i in 0..150 {
        rec.int(i * 1000 - 7);
    }
    let record = rec.bytes().to_vec();
    assert_eq!(record[..2], [0x81, 0x19], "a header of 1 + 150 + 2 bytes");
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    let mut w = PageWriter::begin(&conn).unwrap();
    tree.add_row(5, &record).unwrap();
    tree.write(&mut w).unwrap();
    w.end().unwrap();
    conn.execute_batch("COMMIT").unwrap();
    assert_eq!(integrity(&conn), "ok");
    let (id, last): (i64, i64) = conn
        .query_row("SELECT id, c149 FROM wide", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((id, last), (5, 149 * 1000 - 7));
}

/// A database past 1 GiB has a page SQLite never uses (it holds the byte SQLite locks):
/// a tree written over it was "malformed" at the next read (the scale corpus, 778,240
/// games in). Here the lock page is moved to where a small tree's pages go.
#[test]
fn no_page_is_written_on_the_lock_page() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(dir.path());
    let root = bulk_root(&conn, "t", &T).unwrap().unwrap();
    let mut tree = Tree::index(&conn, root, int_record_max(3)).unwrap();
    let rows = rows(500, 3);
    let mut record = Record::default();
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    let mut w = PageWriter::begin(&conn).unwrap();
    let lock = w.base + 5;
    w.lock_page = lock;
    for r in &rows {
        tree.add(ints(&mut record, r)).unwrap();
    }
    tree.write(&mut w).unwrap();
    assert!(
        w.next > lock + 10,
        "the tree's pages reach past the lock page"
    );
    w.end().unwrap();
    // (Committed to be read: `sqlite_dbpage` reads up to the size the transaction began
    // with. For SQLite, this file's lock page is a page that is never used.)
    conn.execute_batch("COMMIT").unwrap();
    let page = |pgno: u32| -> Vec<u8> {
        conn.query_row(
            "SELECT data FROM sqlite_dbpage WHERE pgno = ?1",
            [pgno],
            |r| r.get(0),
        )
        .unwrap()
    };
    assert!(
        page(lock).iter().all(|&b| b == 0),
        "the lock page is untouched"
    );
    for p in [lock - 1, lock + 1] {
        assert!(
            [LEAF, INTERIOR].contains(&page(p)[0]),
            "page {p} is the tree's"
        );
    }
}

#[test]
fn only_an_empty_table_is_bulk_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let conn = database(dir.path());
    assert!(bulk_root(&conn, "t", &T).unwrap().is_some());
    assert_eq!(bulk_root(&conn, "missing", &T).unwrap(), None);
    conn.execute("INSERT INTO t VALUES (1, 2, 3)", []).unwrap();
    assert_eq!(bulk_root(&conn, "t", &T).unwrap(), None);
}

#[test]
fn every_integer_width_reads_back() {
    let values = [
        0,
        1,
        -1,
        127,
        -128,
        128,
        32767,
        -32769,
        1 << 23,
        -(1 << 31),
        1 << 40,
        -(1 << 47),
        1 << 47,
        i64::MAX,
        i64::MIN,
    ];
    let rows: Vec<[i64; 3]> = values
        .iter()
        .enumerate()
        .map(|(i, &v)| [i as i64, v, -v.wrapping_add(3)])
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let conn = database(dir.path());
    assert_eq!(load(&conn, &rows, 4), 1);
    let mut record = Record::default();
    assert!(ints(&mut record, &values).len() <= int_record_max(values.len()));
}

proptest::proptest! {
    /// The one-pass cell of integers is the cell `Record` and `Tree::add` make.
    #[test]
    fn int_cells_are_record_cells(
        vals in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::prelude::any::<i64>(),
                -70_000i64..70_000,
                proptest::sample::select(vec![0i64, 1, -1, 127, 128, -128, -129, i64::MIN, i64::MAX]),
            ],
            0..=INT_CELL_VALUES,
        )
    ) {
        let mut record = Record::default();
        let bytes = ints(&mut record, &vals).to_vec();
        let mut want = Vec::new();
        put_varint(&mut want, bytes.len() as u64);
        want.extend_from_slice(&bytes);
        let mut cell = [0xAAu8; INT_CELL_ROOM];
        let n = int_cell(&vals, &mut cell);
        proptest::prop_assert_eq!(&cell[..n], &want[..]);
    }
}

#[test]
fn varints_are_sqlites() {
    let cases: [(u64, &[u8]); 6] = [
        (0, &[0x00]),
        (127, &[0x7f]),
        (128, &[0x81, 0x00]),
        (300, &[0x82, 0x2c]),
        (0x3fff, &[0xff, 0x7f]),
        (0x4000, &[0x81, 0x80, 0x00]),
    ];
    for (v, want) in cases {
        let mut out = Vec::new();
        put_varint(&mut out, v);
        assert_eq!(out, want, "{v}");
    }
    let mut out = Vec::new();
    put_varint(&mut out, u64::MAX);
    assert_eq!(out, [0xff; 9]);
}

/// Cells under 4 bytes (a one-column key of 0, 1, '' or x''): SQLite counts each as 4 bytes
/// long, and so must their page ("Multiple uses for byte ..." otherwise, found by
/// `tests/both_ways.rs`).
#[test]
fn cells_under_four_bytes_take_four() {
    let dir = tempfile::tempdir().unwrap();
    let conn = Connection::open(dir.path().join("k.db")).unwrap();
    conn.execute_batch("CREATE TABLE k (a NOT NULL PRIMARY KEY) WITHOUT ROWID")
        .unwrap();
    let root = bulk_root(&conn, "k", &["a"]).unwrap().unwrap();
    let mut tree = Tree::index(&conn, root, 20).unwrap();
    let mut rec = Record::default();
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    let mut w = PageWriter::begin(&conn).unwrap();
    tree.add(rec.start().int(-5).bytes()).unwrap();
    tree.add(rec.start().int(0).bytes()).unwrap();
    tree.add(rec.start().int(1).bytes()).unwrap();
    tree.add(rec.start().int(7).bytes()).unwrap();
    tree.add(rec.start().text("").bytes()).unwrap();
    tree.add(rec.start().text("a").bytes()).unwrap();
    tree.add(rec.start().blob(b"").bytes()).unwrap();
    tree.add(rec.start().blob(b"\x01").bytes()).unwrap();
    tree.write(&mut w).unwrap();
    w.end().unwrap();
    conn.execute_batch("COMMIT").unwrap();
    assert_eq!(integrity(&conn), "ok");
    let n: i64 = conn
        .query_row("SELECT count(*) FROM k", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 8);
    // SQLite deletes one of them and inserts another: the freeblock fits.
    conn.execute("DELETE FROM k WHERE a = 0", []).unwrap();
    conn.execute("INSERT INTO k VALUES (2)", []).unwrap();
    assert_eq!(integrity(&conn), "ok");
}
