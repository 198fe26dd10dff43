//! The b-tree under construction: cells into nodes, nodes into pages, numbered at the write.

use anyhow::{Context, Result, ensure};
use rusqlite::{Connection, OptionalExtension};

use crate::pages::PageWriter;
use crate::record::{INT_CELL_ROOM, INT_CELL_VALUES, int_cell, put_varint};
use crate::{INTERIOR, LEAF, NEW, TABLE_INTERIOR, TABLE_LEAF};

/// The two kinds of b-tree.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Kind {
    /// A WITHOUT ROWID table or an index: the records are the keys, each stored once.
    Index,
    /// A rowid table: the records in the leaves, the rowids between them above.
    Table,
}

/// One level of the tree under construction: the node still filling (its cells back to back),
/// and the cell held back because it did not fit.
#[derive(Default)]
struct Level {
    cells: Vec<u8>,
    starts: Vec<u32>,
    held: Option<Vec<u8>>,
    /// The page the node was given at a commit, unless it was the root then.
    pgno: Option<u32>,
}

impl Level {
    /// Adds `cell` after the others, in the room SQLite gives it ([`stored_len`]).
    fn store(&mut self, cell: &[u8]) {
        self.starts.push(self.cells.len() as u32);
        self.cells.extend_from_slice(cell);
        self.cells
            .resize(self.cells.len() + stored_len(cell) - cell.len(), 0);
    }

    fn cells(&self) -> impl Iterator<Item = (usize, &[u8])> {
        let ends = self
            .starts
            .iter()
            .skip(1)
            .map(|&s| s as usize)
            .chain([self.cells.len()]);
        self.starts
            .iter()
            .zip(ends)
            .map(|(&s, e)| (s as usize, &self.cells[s as usize..e]))
    }
}

/// A page closed since the last write: its number (maybe `NEW | n`) and bytes.
struct Closed {
    pgno: u32,
    page: Vec<u8>,
    overflow: bool,
}
/// Builds a b-tree from records in key order; see the module documentation.
pub struct Tree {
    kind: Kind,
    page_size: usize,
    root: u32,
    /// The largest leaf cell of an index (payload length and payload).
    max_cell: usize,
    /// Level 0 holds the leaves.
    levels: Vec<Level>,
    closed: Vec<Closed>,
    new_pages: u32,
    /// Whether anything was added since the last write.
    dirty: bool,
    /// The last rowid of a table.
    last_rowid: Option<i64>,
    scratch: Vec<u8>,
}

impl Tree {
    /// A builder for the index (or WITHOUT ROWID table) whose root page is `root`, for
    /// records of at most `max_record` bytes (small enough to need no overflow pages).
    pub fn index(conn: &Connection, root: u32, max_record: usize) -> Result<Tree> {
        let mut t = Tree::new(conn, Kind::Index, root)?;
        // SQLite keeps an index cell whole in its page up to ((U-12)*64/255)-23 bytes of
        // payload.
        ensure!(
            max_record <= (t.page_size - 12) * 64 / 255 - 23,
            "records of {max_record} bytes need overflow pages"
        );
        t.max_cell = max_record + 9;
        Ok(t)
    }

    /// A builder for the rowid table whose root page is `root`.
    pub fn table(conn: &Connection, root: u32) -> Result<Tree> {
        Tree::new(conn, Kind::Table, root)
    }

    fn new(conn: &Connection, kind: Kind, root: u32) -> Result<Tree> {
        let page_size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        let page_size = usize::try_from(page_size)?;
        ensure!(
            (512..=65536).contains(&page_size),
            "pages of {page_size} bytes"
        );
        ensure!(root > 1, "root page {root}");
        // A root page the database has (not one a page writer just gave out) is the empty
        // leaf of its kind that CREATE TABLE made: a tree is never laid over rows, nor over
        // the other kind of b-tree.
        let page: Option<Vec<u8>> = conn
            .query_row(
                "SELECT data FROM sqlite_dbpage WHERE pgno = ?1",
                [root],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(page) = page {
            let leaf = match kind {
                Kind::Index => LEAF,
                Kind::Table => TABLE_LEAF,
            };
            ensure!(
                page.first() == Some(&leaf) && page.get(3..5) == Some(&[0, 0][..]),
                "root page {root} is not an empty {kind:?} leaf"
            );
        }
        Ok(Tree {
            kind,
            page_size,
            root,
            max_cell: 0,
            levels: Vec::new(),
            closed: Vec::new(),
            new_pages: 0,
            dirty: false,
            last_rowid: None,
            scratch: Vec::new(),
        })
    }

    fn new_page(&mut self) -> u32 {
        let p = NEW | self.new_pages;
        self.new_pages += 1;
        p
    }

    /// Adds the next record of an index (greater than every record before it).
    pub fn add(&mut self, record: &[u8]) -> Result<()> {
        ensure!(
            self.kind == Kind::Index,
            "a record without a rowid added to a table"
        );
        let mut cell = std::mem::take(&mut self.scratch);
        cell.clear();
        put_varint(&mut cell, record.len() as u64);
        cell.extend_from_slice(record);
        ensure!(cell.len() <= self.max_cell, "a record longer than declared");
        let r = self.push(0, &cell);
        self.scratch = cell;
        self.dirty = true;
        r
    }

    /// [`Tree::add`] of a record of the integers `vals` (at most [`INT_CELL_VALUES`]).
    pub fn add_ints(&mut self, vals: &[i64]) -> Result<()> {
        ensure!(
            self.kind == Kind::Index,
            "a record without a rowid added to a table"
        );
        ensure!(
            vals.len() <= INT_CELL_VALUES,
            "{} integers in one record, at most {INT_CELL_VALUES}",
            vals.len()
        );
        let mut cell = [0u8; INT_CELL_ROOM];
        let n = int_cell(vals, &mut cell);
        ensure!(n <= self.max_cell, "a record longer than declared");
        self.dirty = true;
        self.push(0, &cell[..n])
    }

    /// Adds the next row of a table (its rowid greater than every rowid before it).
    pub fn add_row(&mut self, rowid: i64, record: &[u8]) -> Result<()> {
        ensure!(
            self.kind == Kind::Table,
            "a row with a rowid added to an index"
        );
        ensure!(
            self.last_rowid.is_none_or(|last| rowid > last),
            "rowid {rowid} after {:?}",
            self.last_rowid
        );
        let mut cell = std::mem::take(&mut self.scratch);
        cell.clear();
        put_varint(&mut cell, record.len() as u64);
        put_varint(&mut cell, rowid as u64);
        let local = table_local(self.page_size, record.len());
        cell.extend_from_slice(&record[..local]);
        if local < record.len() {
            // The rest in a chain of overflow pages, each naming the next.
            let first = NEW | self.new_pages;
            cell.extend_from_slice(&first.to_be_bytes());
            let chunks: Vec<&[u8]> = record[local..].chunks(self.page_size - 4).collect();
            for (i, chunk) in chunks.iter().enumerate() {
                let pgno = self.new_page();
                let next = if i + 1 < chunks.len() { pgno + 1 } else { 0 };
                let mut page = vec![0u8; self.page_size];
                page[..4].copy_from_slice(&next.to_be_bytes());
                page[4..4 + chunk.len()].copy_from_slice(chunk);
                self.closed.push(Closed {
                    pgno,
                    page,
                    overflow: true,
                });
            }
        }
        let r = self.push_leaf_row(rowid, &cell);
        self.scratch = cell;
        self.last_rowid = Some(rowid);
        self.dirty = true;
        r
    }

    /// A table leaf closes when a cell does not fit: its last rowid goes up with it.
    fn push_leaf_row(&mut self, rowid: i64, cell: &[u8]) -> Result<()> {
        if self.levels.is_empty() {
            self.levels.push(Level::default());
        }
        let l = &mut self.levels[0];
        let used = header_size(true) + 2 * l.starts.len() + l.cells.len();
        if l.starts.is_empty() || used + 2 + stored_len(cell) <= self.page_size {
            l.store(cell);
            return Ok(());
        }
        let pgno = self.close(0, None, cell);
        let last = self.last_rowid.unwrap_or(rowid);
        let mut up = Vec::with_capacity(13);
        up.extend_from_slice(&pgno.to_be_bytes());
        put_varint(&mut up, last as u64);
        self.push(1, &up)
    }

    /// Closes the node of `level` (`right`: its right-most child) and starts the next with
    /// `cell`; the closed node's page number.
    fn close(&mut self, level: usize, right: Option<u32>, cell: &[u8]) -> u32 {
        let l = &mut self.levels[level];
        let page = render(self.kind, self.page_size, level, l, None, right);
        let pgno = match l.pgno.take() {
            Some(p) => p,
            None => self.new_page(),
        };
        let l = &mut self.levels[level];
        l.cells.clear();
        l.starts.clear();
        l.store(cell);
        self.closed.push(Closed {
            pgno,
            page,
            overflow: false,
        });
        pgno
    }

    /// The largest cell of `level` (but a table's leaves).
    fn cell_max(&self, level: usize) -> usize {
        match (self.kind, level) {
            (Kind::Index, 0) => self.max_cell,
            (Kind::Index, _) => 4 + self.max_cell,
            (Kind::Table, _) => 4 + 9,
        }
    }

    /// Adds a cell to `level` (an index's leaves, or interior pages): the node closes when a
    /// cell arrives after the one held back, which goes up with the node on its left.
    fn push(&mut self, level: usize, cell: &[u8]) -> Result<()> {
        if level == self.levels.len() {
            ensure!(level < 32, "the tree grew too deep");
            self.levels.push(Level::default());
        }
        let reserve = 2 + self.cell_max(level);
        let page_size = self.page_size;
        let l = &mut self.levels[level];
        if l.held.is_none() {
            let used = header_size(level == 0) + 2 * l.starts.len() + l.cells.len();
            if l.starts.is_empty() || used + 2 + stored_len(cell) + reserve <= page_size {
                l.store(cell);
            } else {
                l.held = Some(cell.to_vec());
            }
            return Ok(());
        }
        let held = l.held.take().unwrap_or_default();
        let right = (level > 0).then(|| u32::from_be_bytes([held[0], held[1], held[2], held[3]]));
        let pgno = self.close(level, right, cell);
        let mut up = Vec::with_capacity(4 + held.len());
        up.extend_from_slice(&pgno.to_be_bytes());
        up.extend_from_slice(if level > 0 { &held[4..] } else { &held[..] });
        self.push(level + 1, &up)
    }

    /// Writes the pages closed since the last write (they no longer change), numbered after
    /// the pages `w` gave out so far.
    pub fn write_closed(&mut self, w: &mut PageWriter<'_>) -> Result<()> {
        w.forget_parsed()?;
        let numbers: Vec<u32> = (0..self.new_pages).map(|_| w.alloc()).collect();
        let real = |p: u32| {
            if p & NEW != 0 {
                numbers[(p & !NEW) as usize]
            } else {
                p
            }
        };
        let (kind, page_size) = (self.kind, self.page_size);
        for c in &mut self.closed {
            c.pgno = real(c.pgno);
            if c.overflow {
                renumber_at(&mut c.page, 0, real);
            } else {
                renumber_page(kind, page_size, &mut c.page, real);
            }
        }
        for (i, l) in self.levels.iter_mut().enumerate() {
            let starts: Vec<usize> = l
                .cells()
                .filter_map(|(s, c)| pointer_in(kind, page_size, i == 0, c).map(|p| s + p))
                .collect();
            for at in starts {
                renumber_at(&mut l.cells, at, real);
            }
            if let Some(h) = &mut l.held
                && let Some(at) = pointer_in(kind, page_size, i == 0, h)
            {
                renumber_at(h, at, real);
            }
        }
        for c in self.closed.drain(..) {
            w.put(c.pgno, &c.page)?;
        }
        self.new_pages = 0;
        Ok(())
    }

    /// Writes what was closed and the right edge as it stands: a whole tree.
    pub fn write(&mut self, w: &mut PageWriter<'_>) -> Result<()> {
        if !self.dirty || self.levels.is_empty() {
            return Ok(());
        }
        self.write_closed(w)?;
        let top = self.levels.len() - 1;
        for l in &mut self.levels[..top] {
            if l.pgno.is_none() {
                l.pgno = Some(w.alloc());
            }
        }
        let mut child = None;
        for (i, l) in self.levels.iter().enumerate() {
            let page = render(self.kind, self.page_size, i, l, l.held.as_deref(), child);
            let pgno = if i == top {
                self.root
            } else {
                l.pgno
                    .context("a page of the right edge without a number")?
            };
            w.put(pgno, &page)?;
            child = Some(pgno);
        }
        self.dirty = false;
        Ok(())
    }

    /// The levels of the tree so far (1: the root is a leaf).
    pub fn depth(&self) -> usize {
        self.levels.len()
    }

    /// The kind of b-tree being built.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Bytes of closed pages waiting for [`Tree::write_closed`].
    pub fn closed_bytes(&self) -> usize {
        self.closed.len() * self.page_size
    }
}

/// The bytes a cell takes in its page: SQLite gives every cell at least 4 (room for a freeblock
/// when it is deleted), and counts a smaller one (a record of one small integer, in an index) as
/// 4 bytes long.
fn stored_len(cell: &[u8]) -> usize {
    cell.len().max(4)
}

fn header_size(leaf: bool) -> usize {
    if leaf { 8 } else { 12 }
}

/// The bytes of a table record of `len` bytes kept in its leaf cell (SQLite's rule: all of
/// it up to U-35 bytes; beyond, a part that fills whole overflow pages).
fn table_local(page_size: usize, len: usize) -> usize {
    let max = page_size - 35;
    if len <= max {
        return len;
    }
    let min = (page_size - 12) * 32 / 255 - 23;
    let k = min + (len - min) % (page_size - 4);
    if k <= max { k } else { min }
}

/// Reads a varint at the start of `b`: its value and length.
fn get_varint(b: &[u8]) -> (u64, usize) {
    let mut v = 0u64;
    for (i, &byte) in b.iter().enumerate().take(9) {
        if i == 8 {
            return ((v << 8) | u64::from(byte), 9);
        }
        v = (v << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return (v, i + 1);
        }
    }
    (v, b.len())
}

/// Where a cell names a page: an interior cell its child (at 0), a table leaf cell its first
/// overflow page, if it has one.
fn pointer_in(kind: Kind, page_size: usize, leaf: bool, cell: &[u8]) -> Option<usize> {
    match (kind, leaf) {
        (_, false) => Some(0),
        (Kind::Index, true) => None,
        (Kind::Table, true) => {
            let (len, a) = get_varint(cell);
            let (_, b) = get_varint(&cell[a..]);
            let local = table_local(page_size, len as usize);
            (local < len as usize).then_some(a + b + local)
        }
    }
}

/// Replaces the page number at `at` by `real` of it.
fn renumber_at(bytes: &mut [u8], at: usize, real: impl Fn(u32) -> u32) {
    let b = &mut bytes[at..at + 4];
    let p = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    if p != 0 {
        b.copy_from_slice(&real(p).to_be_bytes());
    }
}

/// Replaces every page number of a rendered b-tree page by `real` of it.
fn renumber_page(kind: Kind, page_size: usize, page: &mut [u8], real: impl Fn(u32) -> u32 + Copy) {
    let leaf = page[0] == LEAF || page[0] == TABLE_LEAF;
    let header = header_size(leaf);
    if !leaf {
        renumber_at(page, 8, real);
    }
    let n = usize::from(u16::from_be_bytes([page[3], page[4]]));
    for i in 0..n {
        let at = usize::from(u16::from_be_bytes([
            page[header + 2 * i],
            page[header + 2 * i + 1],
        ]));
        if let Some(p) = pointer_in(kind, page_size, leaf, &page[at..]) {
            renumber_at(page, at + p, real);
        }
    }
}

/// The page of `level` holding the cells of `l` (and `held` after them), with `right` as the
/// right-most child of an interior page. Cells go from the end of the page down, in order.
fn render(
    kind: Kind,
    page_size: usize,
    level: usize,
    l: &Level,
    held: Option<&[u8]>,
    right: Option<u32>,
) -> Vec<u8> {
    let mut page = vec![0u8; page_size];
    let leaf = level == 0;
    let header = header_size(leaf);
    page[0] = match (kind, leaf) {
        (Kind::Index, true) => LEAF,
        (Kind::Index, false) => INTERIOR,
        (Kind::Table, true) => TABLE_LEAF,
        (Kind::Table, false) => TABLE_INTERIOR,
    };
    if let Some(r) = right {
        page[8..12].copy_from_slice(&r.to_be_bytes());
    }
    let mut top = page_size;
    let mut n = 0;
    for cell in l.cells().map(|(_, c)| c).chain(held) {
        top -= stored_len(cell);
        page[top..top + cell.len()].copy_from_slice(cell);
        let ptr = header + 2 * n;
        page[ptr..ptr + 2].copy_from_slice(&(top as u16).to_be_bytes());
        n += 1;
    }
    page[3..5].copy_from_slice(&(n as u16).to_be_bytes());
    let start = if top == 65536 { 0 } else { top as u16 };
    page[5..7].copy_from_slice(&start.to_be_bytes());
    page
}
