//! Random tables built both ways, through the builder and through SQL inserts: the same rows,
//! and `integrity_check` ok. Random integers of every width, texts (short, and long enough for
//! chains of overflow pages), NULLs; any row count; pages of 512, 4096 and 65536 bytes; rowid
//! tables (with and without a rowid alias) and WITHOUT ROWID tables; a write-ahead log and a
//! rollback journal; commits every few rows, each with SQLite's own rows in another table first.

mod common;

use common::integrity;
use proptest::prelude::*;
use rusqlite::Connection;
use rusqlite::types::Value;
use sqlite_pages::{PageWriter, Record, Tree, bulk_root};

#[derive(Debug, Clone)]
enum Cell {
    Null,
    Int(i64),
    Text(String),
}

impl Cell {
    fn value(&self) -> Value {
        match self {
            Cell::Null => Value::Null,
            Cell::Int(v) => Value::Integer(*v),
            Cell::Text(t) => Value::Text(t.clone()),
        }
    }

    fn put(&self, rec: &mut Record) {
        match self {
            Cell::Null => rec.null(),
            Cell::Int(v) => rec.int(*v),
            Cell::Text(t) => rec.text(t),
        };
    }
}

#[derive(Debug, Clone, Copy)]
enum Shape {
    /// `id INTEGER PRIMARY KEY` first (NULL in the record), then the columns.
    RowidAlias,
    /// An implicit rowid: the record holds every column.
    Rowid,
    /// WITHOUT ROWID, keyed by the first `k` columns.
    WithoutRowid(usize),
}

#[derive(Debug, Clone)]
struct Case {
    page_size: usize,
    wal: bool,
    shape: Shape,
    columns: usize,
    rows: Vec<Vec<Cell>>,
    /// Rowid gaps of a rowid table (1 is none).
    gaps: Vec<u8>,
    every: usize,
}

/// A value for any column: integers of every width, NULLs, texts short and (for a rowid
/// table, `long`) long.
fn cell(long: bool) -> impl Strategy<Value = Cell> {
    // Short texts of at most 12 bytes: a WITHOUT ROWID record of 4 columns stays within what a
    // 512-byte page keeps in its cells.
    let (text, text_len) = if long {
        ("[a-zé€]{0,9}", 0..6000usize)
    } else {
        ("[a-zé€]{0,4}", 0..10)
    };
    prop_oneof![
        2 => Just(Cell::Null),
        3 => any::<i64>().prop_map(Cell::Int),
        3 => (-300i64..300).prop_map(Cell::Int),
        1 => prop::sample::select(vec![0i64, 1, i64::MIN, i64::MAX, 1 << 47, -(1 << 23)]).prop_map(Cell::Int),
        3 => (text, text_len).prop_map(|(s, n)| {
            let mut t = s;
            if n > 9 {
                t.extend(std::iter::repeat_n('x', n));
            }
            Cell::Text(t)
        }),
    ]
}

/// A key value of a WITHOUT ROWID table (never NULL).
fn key_cell() -> impl Strategy<Value = Cell> {
    prop_oneof![
        3 => (-50i64..50).prop_map(Cell::Int),
        1 => any::<i64>().prop_map(Cell::Int),
        2 => "[a-c]{0,3}".prop_map(Cell::Text),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::sample::select(vec![512usize, 4096, 65536]),
        any::<bool>(),
        0..3u8,
        1..5usize,
    )
        .prop_flat_map(|(page_size, wal, shape, columns)| {
            let shape = match shape {
                0 => Just(Shape::RowidAlias).boxed(),
                1 => Just(Shape::Rowid).boxed(),
                _ => (1..=columns).prop_map(Shape::WithoutRowid).boxed(),
            };
            (Just(page_size), Just(wal), shape, Just(columns))
        })
        .prop_flat_map(|(page_size, wal, shape, columns)| {
            let row = match shape {
                Shape::WithoutRowid(k) => (
                    prop::collection::vec(key_cell(), k),
                    prop::collection::vec(cell(false), columns - k),
                )
                    .prop_map(|(mut a, b)| {
                        a.extend(b);
                        a
                    })
                    .boxed(),
                _ => prop::collection::vec(cell(true), columns).boxed(),
            };
            let n = prop_oneof![1 => 0..3usize, 3 => 0..400usize];
            (
                Just(page_size),
                Just(wal),
                Just(shape),
                Just(columns),
                n.prop_flat_map(move |n| prop::collection::vec(row.clone(), n)),
                prop::collection::vec(1..4u8, 400),
                1..200usize,
            )
        })
        .prop_map(|(page_size, wal, shape, columns, rows, gaps, every)| Case {
            page_size,
            wal,
            shape,
            columns,
            rows,
            gaps,
            every,
        })
}

fn names(c: &Case) -> Vec<String> {
    let mut names: Vec<String> = (0..c.columns).map(|i| format!("c{i}")).collect();
    if let Shape::RowidAlias = c.shape {
        names.insert(0, "id".to_owned());
    }
    names
}

/// A database of the case's page size and journal with the table `t` (no declared types: the
/// values are stored as they come) and the table `other`.
fn database(path: &std::path::Path, c: &Case) -> Connection {
    let conn = Connection::open(path).unwrap();
    let columns: Vec<String> = (0..c.columns).map(|i| format!("c{i}")).collect();
    let table = match c.shape {
        Shape::RowidAlias => format!(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, {})",
            columns.join(", ")
        ),
        Shape::Rowid => format!("CREATE TABLE t ({})", columns.join(", ")),
        Shape::WithoutRowid(k) => {
            let key: Vec<String> = columns[..k]
                .iter()
                .map(|c| format!("{c} NOT NULL"))
                .collect();
            let rest = &columns[k..];
            let all: Vec<String> = key.into_iter().chain(rest.iter().cloned()).collect();
            format!(
                "CREATE TABLE t ({}, PRIMARY KEY ({})) WITHOUT ROWID",
                all.join(", "),
                columns[..k].join(", ")
            )
        }
    };
    conn.execute_batch(&format!(
        "PRAGMA page_size = {}; PRAGMA journal_mode = {};
         CREATE TABLE other (x INTEGER PRIMARY KEY, y BLOB); {table};",
        c.page_size,
        if c.wal { "WAL" } else { "DELETE" }
    ))
    .unwrap();
    conn
}

/// Every row of `t` in its b-tree's order (rowid, or key), with its rowid when it has one.
fn read(conn: &Connection, c: &Case) -> Vec<Vec<Value>> {
    let sql = match c.shape {
        Shape::WithoutRowid(k) => format!(
            "SELECT * FROM t ORDER BY {}",
            (0..k)
                .map(|i| format!("c{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => "SELECT rowid, * FROM t ORDER BY rowid".to_owned(),
    };
    let mut st = conn.prepare(&sql).unwrap();
    let n = st.column_count();
    st.query_map([], |r| (0..n).map(|i| r.get::<_, Value>(i)).collect())
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn both_ways(c: &Case) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    // Through SQL, the rows as they come; a WITHOUT ROWID table keeps the first of equal keys.
    let sql = database(&dir.path().join("sql.db"), c);
    let mut rowids = Vec::with_capacity(c.rows.len());
    let mut rowid = 0i64;
    for (i, g) in c.gaps.iter().cycle().take(c.rows.len()).enumerate() {
        rowid += i64::from(*g) + i as i64 % 2 * 1000;
        rowids.push(rowid);
    }
    {
        let tx = sql.unchecked_transaction().unwrap();
        let marks = vec!["?"; c.columns].join(", ");
        for (row, &rowid) in c.rows.iter().zip(&rowids) {
            let mut values: Vec<Value> = row.iter().map(Cell::value).collect();
            let stmt = match c.shape {
                Shape::RowidAlias => format!("INSERT INTO t VALUES (?, {marks})"),
                Shape::Rowid => format!(
                    "INSERT INTO t (rowid, {}) VALUES (?, {marks})",
                    (0..c.columns)
                        .map(|i| format!("c{i}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                Shape::WithoutRowid(_) => format!("INSERT OR IGNORE INTO t VALUES ({marks})"),
            };
            if !matches!(c.shape, Shape::WithoutRowid(_)) {
                values.insert(0, Value::Integer(rowid));
            }
            tx.execute(&stmt, rusqlite::params_from_iter(values))
                .unwrap();
        }
        tx.commit().unwrap();
    }
    let want = read(&sql, c);
    prop_assert_eq!(integrity(&sql), "ok");

    // Through the builder: the rows in the b-tree's order, as SQLite sorted them.
    let path = dir.path().join("pages.db");
    let pages = database(&path, c);
    let names = names(c);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let root = bulk_root(&pages, "t", &names).unwrap();
    prop_assert!(root.is_some(), "t is eligible");
    let root = root.unwrap();
    let mut rec = Record::default();
    let records: Vec<(Option<i64>, Vec<u8>)> = want
        .iter()
        .map(|row| {
            rec.start();
            let (rowid, values) = match c.shape {
                Shape::WithoutRowid(_) => (None, &row[..]),
                Shape::RowidAlias => {
                    rec.null();
                    (Some(&row[0]), &row[2..])
                }
                Shape::Rowid => (Some(&row[0]), &row[1..]),
            };
            for v in values {
                match v {
                    Value::Null => Cell::Null,
                    Value::Integer(i) => Cell::Int(*i),
                    Value::Text(t) => Cell::Text(t.clone()),
                    other => panic!("{other:?}"),
                }
                .put(&mut rec);
            }
            let rowid = rowid.map(|v| match v {
                Value::Integer(i) => *i,
                other => panic!("{other:?}"),
            });
            (rowid, rec.bytes().to_vec())
        })
        .collect();
    let mut tree = match c.shape {
        Shape::WithoutRowid(_) => {
            let longest = records.iter().map(|r| r.1.len()).max().unwrap_or(1);
            Tree::index(&pages, root, longest).unwrap()
        }
        _ => Tree::table(&pages, root).unwrap(),
    };
    for chunk in records.chunks(c.every) {
        pages.execute_batch("BEGIN IMMEDIATE").unwrap();
        pages
            .execute(
                "INSERT INTO other (y) VALUES (zeroblob(?1))",
                [c.page_size as i64 / 3],
            )
            .unwrap();
        let mut w = PageWriter::begin(&pages).unwrap();
        for (rowid, record) in chunk {
            match rowid {
                Some(id) => tree.add_row(*id, record).unwrap(),
                None => tree.add(record).unwrap(),
            }
        }
        tree.write(&mut w).unwrap();
        w.end().unwrap();
        pages.execute_batch("COMMIT").unwrap();
        prop_assert_eq!(integrity(&pages), "ok");
    }
    prop_assert_eq!(read(&pages, c), want.clone());
    drop(pages);
    let again = Connection::open(&path).unwrap();
    prop_assert_eq!(integrity(&again), "ok");
    prop_assert_eq!(read(&again, c), want);
    Ok(())
}

proptest! {
    // 64 cases unless PROPTEST_CASES says otherwise (a longer hunt).
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(64),
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_table_built_both_ways_is_the_same(c in case()) {
        both_ways(&c)?;
    }
}
