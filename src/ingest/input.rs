//! Opening inputs: plain PGN, gzip, bzip2 or zstd (recognised by magic bytes), or stdin.
//!
//! Two byte counters are kept per input: bytes read from the file (compressed bytes for
//! compressed input, which drives the progress bar) and bytes produced by the decoder (the
//! offsets stored for games refer to this decompressed stream).
//!
//! [`check`] looks at the first decoded bytes of every input before a run creates or opens
//! anything (archives, binary data, a stream broken from its start are refused); the run's
//! reader looks again ([`read_head`], [`judge_head`]) in case a file changed since.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// How the bytes of an input are encoded.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Compression {
    Plain,
    Gzip,
    Bzip2,
    Zstd,
}

impl Compression {
    /// The format's name, as messages say it.
    pub fn name(self) -> &'static str {
        match self {
            Compression::Plain => "plain",
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
            Compression::Zstd => "zstd",
        }
    }

    /// Recognises a compressed stream by its first bytes.
    pub fn sniff(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(b"BZh") {
            Compression::Bzip2
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::Plain
        }
    }
}

/// An archive format pawndex does not read, recognised by its first (decoded) bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Archive {
    Zip,
    SevenZip,
    Rar,
    Tar,
}

impl Archive {
    /// Recognises an archive by its magic bytes (a tar by `ustar` at byte 257).
    pub fn sniff(head: &[u8]) -> Option<Archive> {
        if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
            Some(Archive::Zip)
        } else if head.starts_with(b"7z\xbc\xaf\x27\x1c") {
            Some(Archive::SevenZip)
        } else if head.starts_with(b"Rar!\x1a\x07") {
            Some(Archive::Rar)
        } else if head.get(257..262) == Some(b"ustar") {
            Some(Archive::Tar)
        } else {
            None
        }
    }

    /// The error for file `name`: not supported, and how to unpack it.
    pub fn message(self, name: &str) -> String {
        let (what, unpack) = match self {
            Archive::Zip => ("zip", format!("unzip {name}")),
            Archive::SevenZip => ("7z", format!("7z x {name}")),
            Archive::Rar => ("rar", format!("unrar x {name}")),
            Archive::Tar => ("tar", format!("tar -xf {name}")),
        };
        if name == "-" {
            return format!(
                "{}: {what} archives are not supported: unpack it first and index the .pgn inside",
                shown(name)
            );
        }
        format!(
            "{name}: {what} archives are not supported: unpack it first ({unpack}) and index the .pgn inside"
        )
    }
}

/// An input as messages name it: its path, or `standard input` for `-`.
pub fn shown(name: &str) -> &str {
    if name == "-" { "standard input" } else { name }
}

/// Why an input cannot be indexed, seen in its first bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    Archive(Archive),
    /// NUL bytes or other control characters in numbers no PGN text has.
    Binary,
    /// The stream fails before its first decoded byte.
    Broken {
        compression: Compression,
        error: String,
    },
}

impl Refusal {
    /// The error line for input `name`.
    pub fn message(&self, name: &str) -> String {
        match self {
            Refusal::Archive(a) => a.message(name),
            Refusal::Binary => {
                format!("{}: not a PGN file (binary data at the start)", shown(name))
            }
            Refusal::Broken {
                compression: Compression::Plain,
                error,
            } => format!("{}: cannot read: {error}", shown(name)),
            Refusal::Broken { compression, error } => format!(
                "{}: cannot read: the {} stream is broken from its start ({error})",
                shown(name),
                compression.name()
            ),
        }
    }
}

/// Decoded bytes looked at to recognise an input.
pub const HEAD_BYTES: usize = 4096;

/// Reads the first [`HEAD_BYTES`] decoded bytes of a stream (fewer when it is shorter).
pub fn read_head(reader: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut head = vec![0u8; HEAD_BYTES];
    let mut len = 0;
    while len < head.len() {
        match reader.read(&mut head[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    head.truncate(len);
    Ok(head)
}

/// What the first decoded bytes of an input say against it: an archive, or binary data, which
/// no PGN file is: more than one byte in 20 a control character other than tab, line feed,
/// form feed and carriage return (random bytes have one in nine; UTF-16 text one in two). A
/// few stray NUL bytes, as some files have after a game, do not make a file binary.
pub fn judge_head(head: &[u8]) -> Option<Refusal> {
    if let Some(archive) = Archive::sniff(head) {
        return Some(Refusal::Archive(archive));
    }
    let control = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c))
        .count();
    (control * 20 > head.len()).then_some(Refusal::Binary)
}

/// Counts the bytes that pass through a reader.
pub struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R> Counting<R> {
    pub fn new(inner: R, count: Arc<AtomicU64>) -> Self {
        Counting { inner, count }
    }
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Remembers the first error the decoder (or the file) raised and reports end of stream from
/// then on, so that the PGN reader parses everything decoded before the fault (instead of
/// dropping its buffer on an error) and the PGN layer can tell a broken stream (fatal for the
/// rest of the file) from a PGN syntax problem (one game). Reads are capped at
/// [`TRAP_READ_BYTES`] because a decoder may lose the output of the call that fails.
pub struct ErrorTrap<R> {
    inner: R,
    trapped: Arc<Mutex<Option<String>>>,
}

/// Largest read passed to a decoder through [`ErrorTrap`].
pub const TRAP_READ_BYTES: usize = 16 * 1024;

impl<R: Read> Read for ErrorTrap<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut t = self.trapped.lock().unwrap_or_else(|p| p.into_inner());
        if t.is_some() {
            return Ok(0);
        }
        let len = buf.len().min(TRAP_READ_BYTES);
        loop {
            match self.inner.read(&mut buf[..len]) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    *t = Some(e.to_string());
                    return Ok(0);
                }
            }
        }
    }
}

/// An opened input, ready for the PGN reader.
pub struct Input {
    pub compression: Compression,
    /// Bytes read from the file so far (compressed bytes for compressed input).
    pub raw_read: Arc<AtomicU64>,
    /// Decompressed bytes produced so far.
    pub decoded: Arc<AtomicU64>,
    /// The first I/O or decompression error, if any.
    pub trapped: Arc<Mutex<Option<String>>>,
    pub reader: Box<dyn Read + Send>,
}

/// Opens `name` (a path, or `-` for stdin) and wraps it in the right decoder.
pub fn open(name: &str) -> io::Result<Input> {
    decode(open_raw(name)?)
}

/// The bytes of `name` as stored (compressed or not): the file, standard input, or what
/// [`check`] read ahead from a stream that cannot be read twice followed by the rest of it.
fn open_raw(name: &str) -> io::Result<Box<dyn Read + Send>> {
    let ahead = {
        let mut read_ahead = READ_AHEAD.lock().unwrap_or_else(|p| p.into_inner());
        let at = read_ahead.iter().position(|(n, _)| n == name);
        at.map(|i| read_ahead.swap_remove(i).1)
    };
    if let Some(ahead) = ahead {
        return Ok(Box::new(io::Cursor::new(ahead.bytes).chain(ahead.rest)));
    }
    if name == "-" {
        return Ok(Box::new(io::stdin()));
    }
    let file = File::open(Path::new(name))?;
    if file.metadata()?.is_dir() {
        return Err(io::Error::other("is a directory"));
    }
    Ok(Box::new(file))
}

/// Wraps the stored bytes of an input in the decoder its first bytes call for.
fn decode(raw: Box<dyn Read + Send>) -> io::Result<Input> {
    let raw_read = Arc::new(AtomicU64::new(0));
    let decoded = Arc::new(AtomicU64::new(0));
    let trapped = Arc::new(Mutex::new(None));
    let counted = Counting {
        inner: raw,
        count: raw_read.clone(),
    };
    let mut buffered = BufReader::with_capacity(1 << 16, counted);
    let head = buffered.fill_buf()?;
    let compression = Compression::sniff(head);
    let decoder: Box<dyn Read + Send> = match compression {
        Compression::Plain => Box::new(buffered),
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(buffered)),
        Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(buffered)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(buffered)?),
    };
    let trap = ErrorTrap {
        inner: decoder,
        trapped: trapped.clone(),
    };
    let reader = Box::new(Counting {
        inner: trap,
        count: decoded.clone(),
    });
    Ok(Input {
        compression,
        raw_read,
        decoded,
        trapped,
        reader,
    })
}

/// What [`check`] read from a stream that cannot be read twice (standard input, a pipe), and
/// the stream: [`open`] gives the bytes back before the rest.
struct ReadAhead {
    bytes: Vec<u8>,
    rest: Box<dyn Read + Send>,
}

static READ_AHEAD: Mutex<Vec<(String, ReadAhead)>> = Mutex::new(Vec::new());

/// Most bytes [`check`] reads ahead from a stream that cannot be read twice (kept in memory
/// until the run reads them); enough to decode the first [`HEAD_BYTES`] of any supported
/// compression (a bzip2 block is under 1 MB).
const READ_AHEAD_MAX: usize = 4 << 20;

/// A stream that keeps a copy of what is read from it, up to `max` bytes (then it reports the
/// end).
struct Recording {
    state: Arc<Mutex<Recorded>>,
}

struct Recorded {
    inner: Option<Box<dyn Read + Send>>,
    bytes: Vec<u8>,
    /// The stream was cut at `max` bytes: what was decoded may end early.
    cut: bool,
}

impl Read for Recording {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let room = READ_AHEAD_MAX - st.bytes.len();
        if room == 0 {
            st.cut = true;
            return Ok(0);
        }
        let len = buf.len().min(room);
        let Some(inner) = st.inner.as_mut() else {
            return Ok(0);
        };
        let n = inner.read(&mut buf[..len])?;
        st.bytes.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

/// Checks input `name` before a run creates or opens anything: it can be opened and its first
/// decoded bytes are no archive, no binary data and no stream broken from its start. `Err` is
/// the error line. A stream that cannot be read twice (standard input, a pipe) is read ahead
/// and given back to the run by [`open`].
pub fn check(name: &str) -> Result<(), String> {
    let cannot_read = |e: io::Error| format!("{}: cannot read: {e}", shown(name));
    let raw = open_raw(name).map_err(cannot_read)?;
    let once = name == "-" || !std::fs::metadata(name).is_ok_and(|m| m.is_file());
    let refusal = if once {
        let state = Arc::new(Mutex::new(Recorded {
            inner: Some(raw),
            bytes: Vec::new(),
            cut: false,
        }));
        let refusal = refusal_of(Box::new(Recording {
            state: state.clone(),
        }));
        let mut st = state.lock().unwrap_or_else(|p| p.into_inner());
        let cut = st.cut;
        let ahead = ReadAhead {
            bytes: std::mem::take(&mut st.bytes),
            rest: st.inner.take().expect("the stream is given back once"),
        };
        READ_AHEAD
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((name.to_owned(), ahead));
        // A stream cut at READ_AHEAD_MAX ends early for the decoder: not broken.
        match refusal {
            Ok(Some(Refusal::Broken { .. })) if cut => Ok(None),
            r => r,
        }
    } else {
        refusal_of(raw)
    };
    match refusal.map_err(cannot_read)? {
        Some(r) => Err(r.message(name)),
        None => Ok(()),
    }
}

/// Whether the regular file at `path` reads as PGN (the slip `pawndex info --db games.pgn`):
/// its first decoded bytes (plain, gzip, bzip2 or zstd, as `pawndex index` reads them) pass
/// [`judge_head`] and, after a byte-order mark and blank space, open a tag pair (`[`) or a
/// move number (`1.`). Reads at most [`HEAD_BYTES`] decoded bytes; writes nothing.
#[must_use]
pub fn looks_like_pgn(path: &Path) -> bool {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Ok(file) = File::open(path) else {
        return false;
    };
    let Ok(mut input) = decode(Box::new(file)) else {
        return false;
    };
    let Ok(head) = read_head(&mut input.reader) else {
        return false;
    };
    if head.is_empty() || judge_head(&head).is_some() {
        return false;
    }
    let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&head);
    let start = text
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(&[][..], |i| &text[i..]);
    start.starts_with(b"[") || start.starts_with(b"1.")
}

/// What the first decoded bytes of `raw` say against it.
fn refusal_of(raw: Box<dyn Read + Send>) -> io::Result<Option<Refusal>> {
    let mut input = decode(raw)?;
    let head = read_head(&mut input.reader)?;
    let trapped = input
        .trapped
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    Ok(match trapped {
        Some(error) if head.is_empty() => Some(Refusal::Broken {
            compression: input.compression,
            error,
        }),
        _ => judge_head(&head),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_magic_bytes() {
        assert_eq!(Compression::sniff(&[0x1f, 0x8b, 8]), Compression::Gzip);
        assert_eq!(Compression::sniff(b"BZh91AY"), Compression::Bzip2);
        assert_eq!(
            Compression::sniff(&[0x28, 0xb5, 0x2f, 0xfd, 0]),
            Compression::Zstd
        );
        assert_eq!(Compression::sniff(b"[Event \"x\"]"), Compression::Plain);
        assert_eq!(Compression::sniff(b""), Compression::Plain);
    }

    #[test]
    fn sniffs_archives() {
        assert_eq!(Archive::sniff(b"PK\x03\x04\x14\0"), Some(Archive::Zip));
        assert_eq!(
            Archive::sniff(b"7z\xbc\xaf\x27\x1c\0\x04"),
            Some(Archive::SevenZip)
        );
        assert_eq!(Archive::sniff(b"Rar!\x1a\x07\x01\0"), Some(Archive::Rar));
        let mut tar = vec![0u8; 512];
        tar[257..263].copy_from_slice(b"ustar\0");
        assert_eq!(Archive::sniff(&tar), Some(Archive::Tar));
        assert_eq!(Archive::sniff(b"[Event \"PK\"]"), None);
        assert!(Archive::Zip.message("g.zip").contains("unzip g.zip"));
    }

    #[test]
    fn a_few_nul_bytes_do_not_make_a_file_binary() {
        let game = b"[Event \"x\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 1/2-1/2\0\0\r\n\r\n";
        assert_eq!(judge_head(game), None);
        let utf16: Vec<u8> = game.iter().flat_map(|&b| [b, 0]).collect();
        assert_eq!(judge_head(&utf16), Some(Refusal::Binary));
        let noise: Vec<u8> = (0u32..4096)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        assert_eq!(judge_head(&noise), Some(Refusal::Binary));
        assert_eq!(judge_head(b""), None);
    }
}
