//! SQLite's record format: varints, records, the one-pass cell of integers.

/// Appends `v` as a SQLite varint (big-endian groups of 7 bits, the 9th byte whole).
pub(crate) fn put_varint(out: &mut Vec<u8>, v: u64) {
    if v < 0x80 {
        out.push(v as u8);
        return;
    }
    let (buf, n) = varint(v);
    out.extend_from_slice(&buf[..n]);
}

/// `v` as a SQLite varint: the bytes and how many of them count.
pub(crate) fn varint(v: u64) -> ([u8; 9], usize) {
    let mut buf = [0u8; 9];
    if v < 0x80 {
        buf[0] = v as u8;
        return (buf, 1);
    }
    if v > 0x00ff_ffff_ffff_ffff {
        buf[8] = v as u8;
        let mut x = v >> 8;
        for b in buf[..8].iter_mut().rev() {
            *b = (x & 0x7f) as u8 | 0x80;
            x >>= 7;
        }
        return (buf, 9);
    }
    let mut n = 0;
    let mut x = v;
    loop {
        buf[n] = (x & 0x7f) as u8 | 0x80;
        n += 1;
        x >>= 7;
        if x == 0 {
            break;
        }
    }
    buf[0] &= 0x7f;
    buf[..n].reverse();
    (buf, n)
}

/// The serial type of an integer (SQLite's record format, schema format 4) and its width.
fn int_serial(v: i64) -> (u8, usize) {
    match v {
        0 => (8, 0),
        1 => (9, 0),
        -0x80..=0x7f => (1, 1),
        -0x8000..=0x7fff => (2, 2),
        -0x80_0000..=0x7f_ffff => (3, 3),
        -0x8000_0000..=0x7fff_ffff => (4, 4),
        -0x8000_0000_0000..=0x7fff_ffff_ffff => (5, 6),
        _ => (6, 8),
    }
}

/// The largest record of `N` integers: a one-byte header size, a one-byte serial type each,
/// and 8 bytes each.
pub const fn int_record_max(n: usize) -> usize {
    1 + n + 8 * n
}

/// The most integers [`int_cell`] writes in one cell: then the record (its header size, a
/// serial type per value, at most 8 bytes per value) stays under 128 bytes, and every varint
/// of the cell is one byte.
pub const INT_CELL_VALUES: usize = 14;

/// Room for an index cell of [`INT_CELL_VALUES`] integers, and the 8 bytes a value's store
/// may reach past the cell's end.
pub(crate) const INT_CELL_ROOM: usize = 1 + int_record_max(INT_CELL_VALUES) + 8;

/// The index cell of a record of the integers `vals` (at most [`INT_CELL_VALUES`]), written
/// into `out` in one pass: the payload size, the record's header size, a serial type per value,
/// the values. Its length. The same bytes as [`Record::int`] for each value, [`Record::bytes`]
/// and [`Tree::add`](crate::Tree::add), without their buffers (the 11 million rows of the masters' `runs`).
///
/// ```text
/// [5, 10]  ->  07 03 01 01 05 0A
///              |  |  |  |  values
///              |  |  serial types (1: a one-byte integer)
///              |  header size (itself, and two types)
///              payload size
/// ```
pub(crate) fn int_cell(vals: &[i64], out: &mut [u8; INT_CELL_ROOM]) -> usize {
    assert!(vals.len() <= INT_CELL_VALUES, "{} values", vals.len());
    let header = 1 + vals.len();
    out[1] = header as u8;
    let mut at = 1 + header;
    for (i, &v) in vals.iter().enumerate() {
        let (t, w) = int_serial(v);
        out[2 + i] = t;
        // All eight bytes in one store, the low `w` of them first (as in `Record::int`).
        out[at..at + 8].copy_from_slice(&(v << (8 * (8 - w) % 64)).to_be_bytes());
        at += w;
    }
    out[0] = (at - 1) as u8;
    at
}

/// A record in SQLite's format (schema format 4), built value by value:
/// `rec.start().int(1).text("e4").null()` then [`Record::bytes`]. Its buffers are kept from one
/// record to the next.
#[derive(Default)]
pub struct Record {
    header: Vec<u8>,
    body: Vec<u8>,
    bytes: Vec<u8>,
}

impl Record {
    /// Starts a new record.
    pub fn start(&mut self) -> &mut Record {
        self.header.clear();
        self.body.clear();
        self
    }

    /// A NULL value (also the value of a rowid alias column, stored as the rowid).
    pub fn null(&mut self) -> &mut Record {
        self.header.push(0);
        self
    }

    pub fn int(&mut self, v: i64) -> &mut Record {
        let (t, w) = int_serial(v);
        self.header.push(t);
        if w > 0 {
            // The low `w` bytes, big-endian: all eight written at once (one store, where a
            // copy of `w` bytes was a call to memcpy), then the extra ones dropped.
            let at = self.body.len();
            self.body
                .extend_from_slice(&(v << (8 * (8 - w))).to_be_bytes());
            self.body.truncate(at + w);
        }
        self
    }

    /// A text value (UTF-8, the database's encoding).
    pub fn text(&mut self, text: &str) -> &mut Record {
        put_varint(&mut self.header, 13 + 2 * text.len() as u64);
        self.body.extend_from_slice(text.as_bytes());
        self
    }

    pub fn blob(&mut self, blob: &[u8]) -> &mut Record {
        put_varint(&mut self.header, 12 + 2 * blob.len() as u64);
        self.body.extend_from_slice(blob);
        self
    }

    /// The record: its header's size (counting its own varint), the header, the values.
    pub fn bytes(&mut self) -> &[u8] {
        let mut size = self.header.len() + 1;
        let (len, n) = loop {
            let (len, n) = varint(size as u64);
            if n + self.header.len() == size {
                break (len, n);
            }
            size = n + self.header.len();
        };
        self.bytes.clear();
        self.bytes.extend_from_slice(&len[..n]);
        self.bytes.extend_from_slice(&self.header);
        self.bytes.extend_from_slice(&self.body);
        &self.bytes
    }
}
