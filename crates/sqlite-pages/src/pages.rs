//! Where new pages go in one transaction, and the rules of a transaction that writes pages.

use std::fmt;
use std::sync::Mutex;

use anyhow::Result;
use rusqlite::Connection;

/// A rule of the page format broken: by the caller (the call order) or found broken in the
/// database. Inside the [`anyhow::Error`] of the call that found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleBroken(pub String);

impl fmt::Display for RuleBroken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "laid-out pages: {}", self.0)
    }
}

impl std::error::Error for RuleBroken {}

pub(crate) fn broken(why: String) -> anyhow::Error {
    anyhow::Error::new(RuleBroken(why))
}

/// SQLite's default pending byte (its `PENDING_BYTE`, at 1 GiB): the page that holds it is
/// never a b-tree page.
const DEFAULT_PENDING_BYTE: u32 = 0x4000_0000;

/// The offset of SQLite's pending byte: 1 GiB unless a test moved it
/// (`SQLITE_TESTCTRL_PENDING_BYTE`).
fn pending_byte() -> u32 {
    // SAFETY: SQLITE_TESTCTRL_PENDING_BYTE takes one unsigned int and returns the pending byte;
    // 0 reads it without changing it.
    let at = unsafe {
        rusqlite::ffi::sqlite3_test_control(
            rusqlite::ffi::SQLITE_TESTCTRL_PENDING_BYTE,
            0 as std::os::raw::c_uint,
        )
    };
    // A build without test controls answers 0: the byte is where it always is.
    u32::try_from(at)
        .ok()
        .filter(|&b| b > 0)
        .unwrap_or(DEFAULT_PENDING_BYTE)
}

/// The page that holds SQLite's pending byte (its lock-byte page) in a database of pages of
/// `page_size` bytes: SQLite never uses it, and neither does a [`PageWriter`].
pub fn lock_byte_page(page_size: usize) -> u32 {
    let page_size = u32::try_from(page_size.max(512)).unwrap_or(u32::MAX);
    pending_byte() / page_size + 1
}

/// The connections with a [`PageWriter`] alive (their addresses): one at a time each.
static OPEN: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// A connection's place in [`OPEN`], given back when the writer goes.
struct Open(usize);

impl Open {
    fn take(conn: &Connection) -> Result<Open> {
        let key = std::ptr::from_ref(conn) as usize;
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        if open.contains(&key) {
            return Err(broken(
                "a second page writer on a connection whose page writer is still open \
                 (one per transaction)"
                    .to_owned(),
            ));
        }
        open.push(key);
        Ok(Open(key))
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        open.retain(|&k| k != self.0);
    }
}

/// The database size in page 1's header (bytes 28..32), as this transaction sees it.
pub(crate) fn header_page_count(conn: &Connection) -> Result<u32> {
    let page1: Vec<u8> =
        conn.query_row("SELECT data FROM sqlite_dbpage WHERE pgno = 1", [], |r| {
            r.get(0)
        })?;
    match page1.get(28..32) {
        Some(b) => Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]])),
        None => Err(broken(format!("page 1 is {} bytes", page1.len()))),
    }
}

fn page_count(conn: &Connection) -> Result<u32> {
    let n: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    Ok(u32::try_from(n)?)
}

/// Where new pages go in one transaction: after the last page SQLite itself allocated in it.
/// [`PageWriter::end`] sets the database size in the header. See the crate's rules: one per
/// transaction, begun after every row SQLite writes in it.
pub struct PageWriter<'c> {
    conn: &'c Connection,
    pub(crate) base: u32,
    pub(crate) next: u32,
    /// The page holding SQLite's pending byte, which SQLite keeps for its file locks and never
    /// uses (a database past 1 GiB has it).
    pub(crate) lock_page: u32,
    _open: Open,
}

impl<'c> PageWriter<'c> {
    /// Starts writing pages in the connection's open transaction; SQLite must allocate no page
    /// in it from here on. Fails (a [`RuleBroken`]) on a SQLite not in
    /// [`TESTED_VERSIONS`](crate::TESTED_VERSIONS), without an open transaction, while another
    /// writer of the connection is alive, and when the header's page count is not SQLite's
    /// (a writer already ended in this transaction, or a header SQLite does not keep).
    pub fn begin(conn: &'c Connection) -> Result<PageWriter<'c>> {
        crate::check::check_version(rusqlite::version_number())
            .map_err(|why| broken(why.to_string()))?;
        if conn.is_autocommit() {
            return Err(broken(
                "no open transaction: each page would be committed on its own".to_owned(),
            ));
        }
        let open = Open::take(conn)?;
        let base = page_count(conn)?;
        let header = header_page_count(conn)?;
        if header != base {
            return Err(broken(format!(
                "the header counts {header} pages where SQLite counts {base}: pages were \
                 already laid out in this transaction, or the header is stale"
            )));
        }
        let page_size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        let page_size = usize::try_from(page_size)?;
        let w = PageWriter {
            conn,
            base,
            next: base + 1,
            lock_page: lock_byte_page(page_size),
            _open: open,
        };
        w.forget_parsed()?;
        Ok(w)
    }

    /// The next free page number (never the lock page).
    pub fn alloc(&mut self) -> u32 {
        if self.next == self.lock_page {
            self.next += 1;
        }
        self.next += 1;
        self.next - 1
    }

    /// Empties the connection's page cache of every page no statement holds: SQLite keeps what
    /// it parsed of a page beside its bytes, and `sqlite_dbpage` replaces only the bytes. A
    /// page read after this is parsed from what it holds then. (Pages SQLite changed in this
    /// transaction stay; a tree's pages are not among them, page 1 is, and only its size,
    /// which SQLite reads again at its next transaction, changes.)
    pub(crate) fn forget_parsed(&self) -> Result<()> {
        self.conn.release_memory()?;
        Ok(())
    }

    pub(crate) fn put(&self, pgno: u32, page: &[u8]) -> Result<()> {
        if pgno == self.lock_page || pgno == 0 {
            return Err(broken(format!("a write to page {pgno}")));
        }
        self.conn
            .prepare_cached("INSERT INTO sqlite_dbpage (pgno, data) VALUES (?1, ?2)")?
            .execute(rusqlite::params![pgno, page])?;
        Ok(())
    }

    /// Sets the database size in the header to include the pages written, and checks that
    /// SQLite allocated no page since [`PageWriter::begin`] and that the header says the
    /// builder's page count.
    pub fn end(self) -> Result<()> {
        let count = self.next - 1;
        let now = page_count(self.conn)?;
        if now != self.base {
            return Err(broken(format!(
                "SQLite allocated pages {}..={now} after the page writer began, where the \
                 builder writes its own",
                self.base + 1
            )));
        }
        if count > self.base {
            let mut page1: Vec<u8> =
                self.conn
                    .query_row("SELECT data FROM sqlite_dbpage WHERE pgno = 1", [], |r| {
                        r.get(0)
                    })?;
            if page1.len() < 100 {
                return Err(broken(format!("page 1 is {} bytes", page1.len())));
            }
            page1[28..32].copy_from_slice(&count.to_be_bytes());
            self.put(1, &page1)?;
        }
        let header = header_page_count(self.conn)?;
        if header != count {
            return Err(broken(format!(
                "the header counts {header} pages after the writes, the builder {count}"
            )));
        }
        Ok(())
    }
}
