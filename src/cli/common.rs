//! What every command shares: the exit codes, how a usage error and a closed pipe end a command,
//! and the database every command uses without `--db`.

use std::io;

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

pub(crate) use crate::model::usage;
pub use crate::model::{Per, UsageError, ply_range};
pub use crate::output::{check_output_path, write_output};
pub use crate::store::{DEFAULT_DB, open_for_reading};
