//! The rows of each table the writer fills, and the one way each table is written in a run.
//!
//! [`Paths::choose`] decides, once, when the writer starts: a table is laid out in pages
//! ([`bulk_tree`]) only where that was measured to pay (`bench/README.md`, issue 38) and the
//! table can take it (a first load: the table empty, its columns those the pages are written
//! with, `sqlite_dbpage` at hand, `PAWNDEX_NO_BULK` unset); every other table, and every
//! table of an append, goes through SQL. Nothing switches a table's path during the run. A
//! table the pages should take but cannot is said once on stderr, with the reason, and goes
//! through SQL.
//!
//! - `games` and `game_summary`: through SQL, one statement per game, their columns named from
//!   one list each ([`GAME_COLUMNS`], `GameSummary::columns` from the side features), so that
//!   a column added the documented way (an `ALTER TABLE` in a migration, and a list entry) is
//!   written on every path. Laid out, `game_summary` saved 2.6% of a first load's
//!   instructions and `games` 3.4%, at the cost of a commit in the middle of a batch before a
//!   duplicate's original could be read back (bench/README.md, issue 38).
//! - `runs`: laid out in a first load ([`TableOut`]), else multi-row statements.
//! - `structure_changes`: through multi-row statements (laid out, 2.1% of the instructions).
//! - `pawn_sets`: through multi-row statements (its key index waits for the end, `keys`).
//! - the key indexes and the derived tables: laid out in a first load (`keys`, `derive`). A key
//!   index whose cache overflows is built by SQLite when it does (its lookups need it), as in
//!   any run that is not a first load; so is one that page 1 has no room to register.

use std::sync::OnceLock;

use anyhow::Result;
use rusqlite::Connection;
use rusqlite::types::{ToSqlOutput, ValueRef};

use crate::model::features::{COUNT_FEATURES, SQUARE_FEATURES};
use crate::model::game::{GameRecord, GameSummary};
use crate::model::time_class::time_class;
use crate::store::bulk_tree::{self, PageWriter, Tree};
use crate::store::rows::{ROWS_PER_INSERT, insert_rows, multi_row_insert};

pub(super) const RUN_COLUMNS: usize = 8;

/// The column names of `runs`, in order: a row of [`RunRow`] (see [`bulk_tree::bulk_root`]).
const RUNS_COLUMNS: [&str; RUN_COLUMNS] = [
    "game_id",
    "first_ply",
    "last_ply",
    "white_set",
    "black_set",
    "missing",
    "bishop_pairs",
    "structure",
];

/// A row of `runs`, its columns in the order of [`RUNS_COLUMNS`].
pub(super) type RunRow = [i64; RUN_COLUMNS];

/// How the rows of one table reach the database in a run: through SQL, or laid out in pages.
/// Chosen once, when the writer starts ([`Paths::choose`]).
pub(super) trait TableOut<R> {
    /// Takes one row; rows come in key order.
    fn add(&mut self, conn: &Connection, row: R) -> Result<()>;
    /// Writes the rows waiting for a multi-row statement: whole statements only, or every row
    /// when `all` (before a commit, or before SQLite reads the table).
    fn flush(&mut self, conn: &Connection, all: bool) -> Result<()>;
    /// Writes the pages of the rows added since the last commit, when the path lays out pages:
    /// at a commit, after every row SQLite writes in the transaction.
    fn write_pages(&mut self, w: &mut PageWriter<'_>) -> Result<()>;
    /// Whether this path lays out pages.
    fn pages(&self) -> bool;
    /// Rows waiting for a statement.
    fn waiting(&self) -> usize;
    /// Forgets the rows not yet written (the transaction that would have held them was rolled
    /// back).
    fn forget(&mut self);
}

/// Rows of integers through multi-row statements.
pub(super) struct IntRows<const N: usize> {
    /// `table (columns)` or `table`.
    table: String,
    pending: Vec<[i64; N]>,
}

impl<const N: usize> IntRows<N> {
    pub(super) fn new(table: String) -> Self {
        IntRows {
            table,
            pending: Vec::new(),
        }
    }
}

impl<const N: usize> TableOut<[i64; N]> for IntRows<N> {
    fn add(&mut self, _: &Connection, row: [i64; N]) -> Result<()> {
        self.pending.push(row);
        Ok(())
    }

    fn flush(&mut self, conn: &Connection, all: bool) -> Result<()> {
        let n = whole(self.pending.len(), all);
        insert_rows(conn, &self.table, &self.pending[..n])?;
        self.pending.drain(..n);
        Ok(())
    }

    fn write_pages(&mut self, _: &mut PageWriter<'_>) -> Result<()> {
        Ok(())
    }

    fn pages(&self) -> bool {
        false
    }

    fn waiting(&self) -> usize {
        self.pending.len()
    }

    fn forget(&mut self) {
        self.pending.clear();
    }
}

/// Of `len` rows waiting, how many to write: whole multi-row statements, or all.
fn whole(len: usize, all: bool) -> usize {
    if all {
        len
    } else {
        len - len % ROWS_PER_INSERT
    }
}

/// The pages of a WITHOUT ROWID table of integers (`runs`) during a first load, and the last
/// key added: the rows must come in key order, which the writer's ascending game ids give.
struct IntPages {
    tree: Tree,
    table: &'static str,
    last: (i64, i64),
}

impl<const N: usize> TableOut<[i64; N]> for IntPages {
    fn add(&mut self, _: &Connection, row: [i64; N]) -> Result<()> {
        let key = (row[0], row[1]);
        anyhow::ensure!(
            key > self.last,
            "{} out of key order: {key:?} after {:?}",
            self.table,
            self.last
        );
        self.last = key;
        self.tree.add_ints(&row)
    }

    fn flush(&mut self, _: &Connection, _: bool) -> Result<()> {
        Ok(())
    }

    fn write_pages(&mut self, w: &mut PageWriter<'_>) -> Result<()> {
        self.tree.write(w)
    }

    fn pages(&self) -> bool {
        true
    }

    fn waiting(&self) -> usize {
        0
    }

    fn forget(&mut self) {
        // What the tree closed since the last commit was rolled back with it: the writer stops
        // (see `Writer::explain`), and the tree is not written again.
    }
}

/// A row of `structure_changes`: game, ply, from, to, and the move.
pub(super) type ChangeRow = ([i64; 4], Option<String>);

/// `structure_changes` through multi-row statements.
#[derive(Default)]
pub(super) struct ChangeRows {
    pending: Vec<ChangeRow>,
}

impl ChangeRows {
    /// Rows waiting.
    pub(super) fn waiting(&self) -> usize {
        self.pending.len()
    }

    pub(super) fn add(&mut self, row: ChangeRow) {
        self.pending.push(row);
    }

    pub(super) fn flush(&mut self, conn: &Connection, all: bool) -> Result<()> {
        let n = whole(self.pending.len(), all);
        for chunk in self.pending[..n].chunks(ROWS_PER_INSERT) {
            let mut st =
                conn.prepare_cached(&multi_row_insert("structure_changes", 5, chunk.len()))?;
            for (i, (ints, san)) in chunk.iter().enumerate() {
                for (j, v) in ints.iter().enumerate() {
                    st.raw_bind_parameter(i * 5 + j + 1, v)?;
                }
                st.raw_bind_parameter(i * 5 + 5, san)?;
            }
            st.raw_execute()?;
        }
        self.pending.drain(..n);
        Ok(())
    }

    pub(super) fn forget(&mut self) {
        self.pending.clear();
    }
}

/// A column of `games` after `id`: its name, and its value for a game read from a source.
pub(super) struct GameColumn {
    pub(super) name: &'static str,
    pub(super) value: for<'a> fn(&'a GameRecord, &'a str) -> ValueRef<'a>,
}

fn text(v: Option<&str>) -> ValueRef<'_> {
    v.map_or(ValueRef::Null, |s| ValueRef::Text(s.as_bytes()))
}

fn int(v: Option<i64>) -> ValueRef<'static> {
    v.map_or(ValueRef::Null, ValueRef::Integer)
}

/// The columns of `games` the writer fills, and how: the one list its statement is made from.
/// A new column is a migration that adds it (`ALTER TABLE games ADD COLUMN`) and an entry here.
pub(super) const GAME_COLUMNS: [GameColumn; 19] = [
    GameColumn {
        name: "event",
        value: |g, _| text(g.header.event.as_deref()),
    },
    GameColumn {
        name: "site",
        value: |g, _| text(g.header.site.as_deref()),
    },
    GameColumn {
        name: "date",
        value: |g, _| text(g.header.date.as_deref()),
    },
    GameColumn {
        name: "round",
        value: |g, _| text(g.header.round.as_deref()),
    },
    GameColumn {
        name: "white",
        value: |g, _| text(g.header.white.as_deref()),
    },
    GameColumn {
        name: "black",
        value: |g, _| text(g.header.black.as_deref()),
    },
    GameColumn {
        name: "result",
        value: |g, _| text(g.header.result.as_deref()),
    },
    GameColumn {
        name: "white_elo",
        value: |g, _| int(g.header.white_elo),
    },
    GameColumn {
        name: "black_elo",
        value: |g, _| int(g.header.black_elo),
    },
    GameColumn {
        name: "eco",
        value: |g, _| text(g.header.eco.as_deref()),
    },
    GameColumn {
        name: "plies",
        value: |g, _| ValueRef::Integer(g.plies.into()),
    },
    GameColumn {
        name: "source",
        value: |_, source| ValueRef::Text(source.as_bytes()),
    },
    GameColumn {
        name: "offset",
        // A byte offset into a file, far below 2^63.
        value: |g, _| ValueRef::Integer(g.offset as i64),
    },
    GameColumn {
        name: "fen",
        value: |g, _| text(g.fen.as_deref()),
    },
    GameColumn {
        name: "chess960",
        value: |g, _| ValueRef::Integer(g.chess960.into()),
    },
    GameColumn {
        name: "moves",
        value: |g, _| ValueRef::Blob(&g.moves),
    },
    GameColumn {
        name: "hash",
        value: |g, _| ValueRef::Integer(g.hash),
    },
    GameColumn {
        name: "time_control",
        value: |g, _| text(g.time_control.as_deref()),
    },
    GameColumn {
        name: "time_class",
        value: |g, _| {
            let class = time_class(g.time_control.as_deref(), g.header.event.as_deref());
            ValueRef::Text(class.name().as_bytes())
        },
    },
];

/// Inserts the `games` row of `g`, read from `source`; its id (SQLite numbers the games).
pub(super) fn insert_game(conn: &Connection, g: &GameRecord, source: &str) -> Result<i64> {
    static SQL: OnceLock<String> = OnceLock::new();
    let sql = SQL.get_or_init(|| {
        let names: Vec<&str> = GAME_COLUMNS.iter().map(|c| c.name).collect();
        format!(
            "INSERT INTO games ({}) VALUES ({})",
            names.join(", "),
            vec!["?"; names.len()].join(", ")
        )
    });
    let mut st = conn.prepare_cached(sql)?;
    for (i, c) in GAME_COLUMNS.iter().enumerate() {
        st.raw_bind_parameter(i + 1, ToSqlOutput::Borrowed((c.value)(g, source)))?;
    }
    st.raw_execute()?;
    Ok(conn.last_insert_rowid())
}

/// Values of a `game_summary` row: the game's id, then `GameSummary::any` and
/// `GameSummary::max` in their order.
pub(super) const SUMMARY_COLUMNS: usize = 1 + 2 * SQUARE_FEATURES + 2 + 2 * COUNT_FEATURES;

/// `game_summary` through multi-row statements, its columns named from `GameSummary::columns`
/// (the side features' one list). Nothing reads the table during a load, so its rows wait for
/// whole statements as those of `runs` do.
pub(super) fn summary_rows() -> IntRows<SUMMARY_COLUMNS> {
    let columns = GameSummary::columns();
    debug_assert_eq!(columns.len() + 1, SUMMARY_COLUMNS);
    IntRows::new(format!("game_summary (game_id, {})", columns.join(", ")))
}

/// The `game_summary` row of game `game_id`.
pub(super) fn summary_row(game_id: i64, sm: &GameSummary) -> [i64; SUMMARY_COLUMNS] {
    let mut row = [0; SUMMARY_COLUMNS];
    row[0] = game_id;
    for (i, &a) in sm.any.iter().enumerate() {
        row[1 + i] = a.into();
    }
    for (i, &m) in sm.max.iter().enumerate() {
        row[1 + sm.any.len() + i] = m.into();
    }
    row
}

/// `runs` through multi-row statements, its columns named (a column appended to the table
/// takes its default).
pub(super) fn runs_rows() -> IntRows<RUN_COLUMNS> {
    IntRows::new(format!("runs ({})", RUNS_COLUMNS.join(", ")))
}

/// The way each table is written in this run, chosen once when the writer starts.
pub(super) struct Paths {
    /// `runs`: laid out in pages, or multi-row statements.
    pub(super) runs: Box<dyn TableOut<RunRow>>,
    /// Whether the key indexes are laid out at the end (from the caches, when they hold every
    /// key) rather than built by SQLite: in a first load whose `runs` are laid out.
    pub(super) key_pages: bool,
    /// The root pages of `set_games` and `set_totals` when the derived tables of this run are
    /// laid out (a first derivation, see `derive`).
    pub(super) derived: Option<(u32, u32)>,
}

impl Paths {
    /// Chooses the way each table is written in this run (see the module's text).
    pub(super) fn choose(conn: &Connection) -> Result<Paths> {
        let runs: Box<dyn TableOut<RunRow>> = match page_root(conn, "runs", &RUNS_COLUMNS)? {
            Some(root) => Box::new(IntPages {
                tree: Tree::index(conn, root, bulk_tree::int_record_max(RUN_COLUMNS))?,
                table: "runs",
                last: (i64::MIN, i64::MIN),
            }),
            None => Box::new(runs_rows()),
        };
        let key_pages = runs.pages();
        let derived = crate::store::derive::fresh_roots(conn, page_root)?;
        Ok(Paths {
            runs,
            key_pages,
            derived,
        })
    }

    /// The tables this run lays out in pages, for `PAWNDEX_TIMINGS` ("none" when every row goes
    /// through SQL): `tests/write_paths.rs` checks the page path was taken where it compares it.
    pub(super) fn describe(&self) -> String {
        let mut laid = Vec::new();
        if self.runs.pages() {
            laid.push("runs");
        }
        if self.key_pages {
            laid.push("key indexes (when their caches hold every key)");
        }
        if self.derived.is_some() {
            laid.push("set_games, set_totals");
        }
        if laid.is_empty() {
            "none".to_string()
        } else {
            laid.join(", ")
        }
    }
}

/// The root page of `table` when its rows are to be laid out in pages: a first load (the table
/// empty) with `PAWNDEX_NO_BULK` unset, and a table the page writer takes
/// ([`bulk_tree::bulk_root`]). An empty table it does not take is said on stderr, with what
/// differs, and goes through SQL.
pub(in crate::store) fn page_root(
    conn: &Connection,
    table: &str,
    columns: &[&str],
) -> Result<Option<u32>> {
    if !bulk_tree::bulk_wanted() {
        return Ok(None);
    }
    if let Some(root) = bulk_tree::bulk_root(conn, table, columns)? {
        return Ok(Some(root));
    }
    let empty: bool = conn.query_row(
        &format!("SELECT NOT EXISTS (SELECT 1 FROM \"{table}\")"),
        [],
        |r| r.get(0),
    )?;
    if !empty {
        // An append: rows go through SQL, as they always do into a table that has some.
        return Ok(None);
    }
    let names: Vec<String> = conn
        .prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")?
        .query_map([table], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let why = if names != columns {
        format!(
            "its columns ({}) are not the {} the pages are written with ({})",
            names.join(", "),
            columns.len(),
            columns.join(", ")
        )
    } else {
        "the page writer does not take it in this database or with this SQLite (see \
         `PAWNDEX_NO_BULK` in docs/environment.md)"
            .to_owned()
    };
    eprintln!("pawndex: {table} is written row by row through SQL, not laid out in pages: {why}");
    Ok(None)
}
