//! Opening inputs: plain PGN, gzip, bzip2 or zstd (recognised by magic bytes), or stdin.
//!
//! Two byte counters are kept per input: bytes read from the file (compressed bytes for
//! compressed input, which drives the progress bar) and bytes produced by the decoder (the
//! offsets stored for games refer to this decompressed stream).

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
        format!(
            "{name}: {what} archives are not supported: unpack it first ({unpack}) and index the .pgn inside"
        )
    }
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
    let raw: Box<dyn Read + Send> = if name == "-" {
        Box::new(io::stdin())
    } else {
        let path = Path::new(name);
        let file = File::open(path)?;
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(io::Error::other("is a directory"));
        }
        Box::new(file)
    };
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
        raw_read,
        decoded,
        trapped,
        reader,
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
}
