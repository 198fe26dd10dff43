//! What every command shares: the exit codes, how a usage error and a closed pipe end a command,
//! and the database every command uses without `--db`.

use std::io;
use std::path::Path;

use anyhow::Result;

/// The command did what was asked.
pub const EXIT_OK: i32 = 0;
/// An error: a file that cannot be read, a SQL error, a damaged database.
pub const EXIT_ERROR: i32 = 1;
/// A bad command line (the message names the argument).
pub const EXIT_USAGE: i32 = 2;
/// Interrupted by Ctrl-C.
pub const EXIT_INTERRUPTED: i32 = 130;

/// Maps the outcome of a command to its exit status: usage errors print and give 2, a closed
/// output pipe (`| head`) ends quietly with 0, other errors go up to the caller (status 1).
pub fn exit_status(result: Result<i32>) -> Result<i32> {
    match result {
        Err(e) if e.downcast_ref::<crate::model::UsageError>().is_some() => {
            eprintln!("pawndex: error: {e}");
            Ok(EXIT_USAGE)
        }
        Err(e) if is_broken_pipe(&e) => Ok(EXIT_OK),
        other => other,
    }
}

/// Whether the error is a closed output pipe (also inside a CSV or JSON writer's error).
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<serde_json::Error>()
                .is_some_and(|e| e.io_error_kind() == Some(io::ErrorKind::BrokenPipe))
            || c.downcast_ref::<csv::Error>().is_some_and(|e| {
                matches!(e.kind(), csv::ErrorKind::Io(e) if e.kind() == io::ErrorKind::BrokenPipe)
            })
    })
}

/// `--threads`: one option, one meaning, in every command that works in parallel (`index`
/// replays on them, `stats` and `similar` read slices of the database on them); the policy is
/// [`crate::engine::parallel::threads`].
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct ThreadsArg {
    /// Threads to work on (default: every core, at most 8; up to 64)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub threads: Option<u16>,
}

impl ThreadsArg {
    /// The number of threads to run.
    #[must_use]
    pub fn count(self) -> usize {
        crate::engine::parallel::threads(self.threads.map(usize::from))
    }
}

/// Refuses a `--db` that is a PGN file, not a database (the slip `pawndex info --db
/// games.pgn`; `pawndex index research.db` is refused the other way round), saying what to
/// run. `indexing`: the command is `pawndex index`, which would otherwise refuse the file as
/// not SQLite without saying it is PGN. It reads the first bytes of a file that is not SQLite
/// only.
pub fn refuse_pgn_as_database(db: &Path, indexing: bool) -> Result<()> {
    if db.is_file() && !crate::store::is_sqlite_file(db) && crate::ingest::input::looks_like_pgn(db)
    {
        let p = db.display();
        let stem = db
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.split('.').next())
            .filter(|s| !s.is_empty())
            .unwrap_or("pawndex");
        if indexing {
            anyhow::bail!(
                "{p} is PGN, not a pawndex database: --db names the database to write, as in \
                 `pawndex index --db {stem}.db {p}`; it was left untouched"
            );
        }
        anyhow::bail!(
            "{p} is PGN, not a pawndex database: index it first, as in `pawndex index --db \
             {stem}.db {p}`, then give --db {stem}.db"
        );
    }
    Ok(())
}

/// Adds a tip to clap's error for an unexpected argument when the command line holds a FEN
/// the shell split at its spaces (`--structure rnbqkbnr/... w KQkq - 0 1` without quotes):
/// an argument with the 7 slashes of a board, followed by the side to move.
#[must_use]
pub fn with_fen_hint(mut e: clap::Error, args: &[String]) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return e;
    }
    let at = args.windows(2).position(|w| {
        w[0].matches('/').count() == 7 && !w[0].contains(' ') && matches!(w[1].as_str(), "w" | "b")
    });
    let Some(at) = at else {
        return e;
    };
    // The board and the fields after it that look like a FEN's: side, castling, en passant,
    // and the two move counters.
    let mut fen = vec![args[at].as_str()];
    for field in args[at + 1..].iter().take(5) {
        let fen_like = field.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !field.starts_with("--");
        if !fen_like {
            break;
        }
        fen.push(field);
    }
    let tip = format!(
        "a FEN holds spaces, so the shell split it into arguments: quote it whole, as in \"{}\"",
        fen.join(" ")
    );
    let mut tips = match e.get(ContextKind::Suggested) {
        Some(ContextValue::StyledStrs(tips)) => tips.clone(),
        _ => Vec::new(),
    };
    tips.push(tip.into());
    e.insert(ContextKind::Suggested, ContextValue::StyledStrs(tips));
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `structures --format json | head` ended with "error: Broken pipe": the JSON writer's
    /// error holds the closed pipe.
    #[test]
    fn a_closed_pipe_under_a_json_writer_ends_quietly() {
        let e = anyhow::Error::from(serde_json::Error::io(io::Error::from(
            io::ErrorKind::BrokenPipe,
        )));
        assert!(is_broken_pipe(&e));
        assert_eq!(exit_status(Err(e)).ok(), Some(EXIT_OK));
        let other = anyhow::Error::from(serde_json::Error::io(io::Error::from(
            io::ErrorKind::PermissionDenied,
        )));
        assert!(!is_broken_pipe(&other));
    }
}
