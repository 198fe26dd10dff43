//! What every command shares: the exit codes, usage errors, the broken-pipe rule, the default
//! database path, read-only opening, ply ranges and the per-position / per-game choice.

use std::fmt;
use std::io;
use std::path::Path;

use anyhow::Result;
use clap::ValueEnum;
use rusqlite::Connection;

/// The command did what was asked.
pub const EXIT_OK: i32 = 0;
/// An error: a file that cannot be read, a SQL error, a damaged database.
pub const EXIT_ERROR: i32 = 1;
/// A bad command line (the message names the argument).
pub const EXIT_USAGE: i32 = 2;
/// Interrupted by Ctrl-C.
pub const EXIT_INTERRUPTED: i32 = 130;

/// The database every command uses without `--db`.
pub const DEFAULT_DB: &str = "pawndex.db";

/// A mistake on the command line found after parsing (a bad name, value or argument):
/// reported like clap's, exit status 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Returns a [`UsageError`] from the current function.
macro_rules! usage {
    ($($arg:tt)*) => {
        return Err(anyhow::Error::new($crate::command::UsageError(format!($($arg)*))))
    };
}
pub(crate) use usage;

/// Maps the outcome of a command to its exit status: usage errors print and give 2, a closed
/// output pipe (`| head`) ends quietly with 0, other errors go up to the caller (status 1).
pub fn exit_status(result: Result<i32>) -> Result<i32> {
    match result {
        Err(e) if e.downcast_ref::<UsageError>().is_some() => {
            eprintln!("pawndex: error: {e}");
            Ok(EXIT_USAGE)
        }
        Err(e) if is_broken_pipe(&e) => Ok(EXIT_OK),
        other => other,
    }
}

/// Whether the error is a closed output pipe (also inside a CSV writer's error).
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<csv::Error>().is_some_and(|e| {
                matches!(e.kind(), csv::ErrorKind::Io(e) if e.kind() == io::ErrorKind::BrokenPipe)
            })
    })
}

/// Checks the path of an output file (`option` names it in the message) before any work: its
/// folder exists and is a folder, the path is not a folder, and it can be written (an existing
/// file is opened for writing without truncating it; in its folder, a probe file is made and
/// removed at once). Nothing is left behind.
pub fn check_output_path(option: &str, path: &Path) -> Result<()> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let (p, f) = (path.display(), folder.display());
    match std::fs::metadata(folder) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => anyhow::bail!(
            "{option} {p}: the folder {f} does not exist; create it first, or give a path in a \
             folder that exists"
        ),
        Err(e) => anyhow::bail!("{option} {p}: cannot use the folder {f}: {e}"),
        Ok(m) if !m.is_dir() => anyhow::bail!("{option} {p}: {f} is not a folder"),
        Ok(_) => {}
    }
    if path.is_dir() {
        anyhow::bail!("{option} {p}: {p} is a folder; give a file name");
    }
    if path.exists() {
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| anyhow::anyhow!("{option} {p}: cannot write it: {e}"))?;
    } else {
        tempfile::Builder::new()
            .prefix(".pawndex-probe-")
            .tempfile_in(folder)
            .map_err(|e| anyhow::anyhow!("{option} {p}: cannot write in the folder {f}: {e}"))?;
    }
    Ok(())
}

/// Writes an output file with `write`; when that fails, a file this call created is removed
/// (no empty or half-written file is left), and the message says the path and the reason.
pub fn write_output(
    path: &Path,
    what: &str,
    write: impl FnOnce(io::BufWriter<std::fs::File>) -> Result<()>,
) -> Result<()> {
    let existed = path.symlink_metadata().is_ok();
    let result = std::fs::File::create(path)
        .map_err(anyhow::Error::from)
        .and_then(|file| write(io::BufWriter::new(file)));
    result.map_err(|e| {
        if !existed {
            let _ = std::fs::remove_file(path);
        }
        anyhow::anyhow!("cannot write the {what} {}: {e:#}", path.display())
    })
}

/// Opens a database for a reading command: read-only (no file is created), `query_only`,
/// memory-mapped, a large page cache, temporary tables in memory.
pub fn open_for_reading(db: &Path) -> Result<Connection> {
    let conn = crate::store::open_read_only(db)?;
    crate::store::tune_for_reading(&conn)?;
    crate::store::ids::from_one(&conn)?;
    Ok(conn)
}

/// Every position (game and ply) or every game once.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Per {
    /// Every matching position (game and ply) counts once
    Position,
    /// Every matching game counts once
    Game,
}

/// Parses a ply range `A..B` (both included), `A..`, `..B` or one ply `N`.
///
/// ```text
/// 10..20 -> (10, 20)    30.. -> (30, u32::MAX)    ..4 -> (0, 4)    7 -> (7, 7)
/// ```
pub fn ply_range(text: &str) -> std::result::Result<(u32, u32), String> {
    let t = text.trim();
    let bad = || "expected A..B, A.., ..B or N with whole numbers of plies (0 or more)".to_string();
    let number = |s: &str, default: u32| -> std::result::Result<u32, String> {
        let s = s.trim();
        if s.is_empty() {
            Ok(default)
        } else {
            s.parse().map_err(|_| bad())
        }
    };
    let (from, to) = match t.split_once("..") {
        Some((a, b)) if !(a.trim().is_empty() && b.trim().is_empty()) => {
            (number(a, 0)?, number(b, u32::MAX)?)
        }
        Some(_) => return Err(bad()),
        None => {
            let n = t.parse().map_err(|_| bad())?;
            (n, n)
        }
    };
    if from > to {
        return Err(format!("the range is empty ({from} > {to})"));
    }
    Ok((from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ply_ranges() {
        assert_eq!(ply_range("10..20"), Ok((10, 20)));
        assert_eq!(ply_range("10.."), Ok((10, u32::MAX)));
        assert_eq!(ply_range("..20"), Ok((0, 20)));
        assert_eq!(ply_range(" 7 "), Ok((7, 7)));
        for bad in ["..", "a..b", "20..10", "-1..3", "", "1..2..3"] {
            assert!(ply_range(bad).is_err(), "{bad}");
        }
    }
}
