//! B-tree pages laid out for a first load, written into a SQLite database through its
//! `sqlite_dbpage` table.
//!
//! SQLite inserts a row into a b-tree at about 0.4 µs, and rows appended one by one to a
//! WITHOUT ROWID table leave its pages about 12% empty (a page splits in two halves). Rows that
//! arrive in key order into an empty table can instead be laid out in pages directly, the way
//! `CREATE INDEX` lays out an index: full leaves, and above them, level by level, interior pages
//! that hold the keys between them. Two kinds of tree ([`Kind`]):
//! - an index b-tree (a WITHOUT ROWID table, or an index): every key is stored once, and a key
//!   that goes up into an interior page is not also in a leaf;
//! - a table b-tree (a rowid table): the rows in the leaves, each leaf's last rowid in the page
//!   above; a row too long for its leaf goes on in a chain of overflow pages, as SQLite would
//!   cut it.
//!
//! ```text
//!                         root page (the table's own)
//!                      [ k3 | k6 | right-most ]
//!                     /       |              \
//!       [ k1 | k2 | → ]   [ k4 | k5 | → ]      (the right edge: still filling)
//!        /    |     \      /    |     \
//!    leaf   leaf   leaf  leaf  leaf   leaf
//! ```
//!
//! The builder closes a full index node (or interior node) only when one more key arrives after
//! the one that did not fit: that key goes up, and the next starts the new node, so no node is
//! ever empty. A node counts as full while it still has room for one more cell (its reserve), so
//! that the key held back can join it when the tree must be whole (at a commit).
//!
//! The pages go into the database through `sqlite_dbpage` (SQLite built with
//! `SQLITE_ENABLE_DBPAGE_VTAB`), inside the caller's transaction: they are committed with the
//! rows they belong to, or not at all. Each commit leaves a whole tree: the pages already full,
//! and the nodes still filling (the right edge) as they stand, the top one in the table's root
//! page. The next commit rewrites the right edge in place.
//!
//! # The rules, and where the code enforces them
//!
//! `sqlite_dbpage` works below SQLite's b-tree layer, which neither sees nor checks what it
//! writes. What keeps the database whole:
//!
//! - **A SQLite this crate was tested with** ([`TESTED_VERSIONS`]) with `sqlite_dbpage` compiled
//!   in: [`supported`] says why not otherwise, and [`bulk_root`] then refuses every table (the
//!   caller inserts rows through SQL). [`PageWriter::begin`] fails on any other version.
//! - **Only tables the builder covers** ([`eligibility`], every [`Refusal`]): an empty table with
//!   exactly the columns of the records, no other index and no trigger on it, a WITHOUT ROWID
//!   table keyed by its leading columns ascending in BINARY collation; a database in UTF-8,
//!   schema format 4, without reserved bytes, auto-vacuum or defensive mode.
//! - **SQLite allocates no page after the builder's**: the pages of a transaction are numbered
//!   after the last page SQLite allocated in it, so [`PageWriter::begin`] comes after every row
//!   SQLite inserts. [`PageWriter::end`] fails if SQLite's page count moved since `begin`.
//! - **The header's page count**: at `begin` it must equal `PRAGMA page_count`; `end` sets it
//!   to the builder's last page and reads it back (SQLite takes the database's size from it at
//!   its next transaction).
//! - **One builder per transaction**: `begin` fails if the connection has no open transaction,
//!   if another [`PageWriter`] of the same connection is alive, or if one already ended in this
//!   transaction (the header's page count then differs from SQLite's).
//! - **No page parsed before the write is kept**: SQLite keeps what it parsed of a page beside
//!   the page's bytes, and `sqlite_dbpage` replaces only the bytes. The writer empties the
//!   connection's page cache (of every page no statement holds) before it writes a page, so a
//!   page SQLite reads after the commit is parsed again from what was written.
//! - **The lock-byte page** (the page holding SQLite's pending byte, past 1 GiB at the default
//!   offset) is never given to a tree.
//!
//! A broken rule is an error ([`RuleBroken`] inside the [`anyhow::Error`]), never a panic and
//! never a silent continue: the caller rolls its transaction back.

mod check;
mod pages;
mod record;
mod schema;
mod tree;

pub use check::{
    Refusal, TESTED_VERSIONS, Unsupported, bulk_root, eligibility, eligibility_dropping,
    sqlite_version, supported,
};
pub use pages::{PageWriter, RuleBroken, lock_byte_page};
pub use record::{INT_CELL_VALUES, Record, int_record_max};
pub use schema::{register_index, reload_schema, schema_room};
pub use tree::{Kind, Tree};

/// Page type of an index b-tree leaf.
const LEAF: u8 = 0x0A;
/// Page type of an index b-tree interior page.
const INTERIOR: u8 = 0x02;
/// Page type of a table b-tree leaf.
const TABLE_LEAF: u8 = 0x0D;
/// Page type of a table b-tree interior page.
const TABLE_INTERIOR: u8 = 0x05;
/// Marks a page number handed out before its transaction knows where the file ends: the n-th
/// new page of the transaction is `NEW | n`, numbered at the commit.
const NEW: u32 = 0x8000_0000;

#[cfg(test)]
mod tests;
