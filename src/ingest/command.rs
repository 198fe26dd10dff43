//! `pawndex index`: its options, the input checks made before anything is created, Ctrl-C,
//! and the exit status from the run's summary.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result, bail};
use clap::Args;

use super::IndexOptions;
use crate::command::{DEFAULT_DB, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK};

#[derive(Args, Debug)]
pub struct IndexArgs {
    /// PGN files (plain, .gz, .bz2, .zst), or - for standard input
    #[arg(required = true, value_name = "FILE")]
    files: Vec<String>,
    /// Database file to create or extend
    #[arg(long, default_value = DEFAULT_DB, value_name = "PATH")]
    db: PathBuf,
    /// Replay threads (default: every core)
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// No progress bar and no summary (errors are still printed)
    #[arg(long, short)]
    quiet: bool,
    /// Store games even when an identical game is already in the database
    #[arg(long)]
    keep_duplicates: bool,
}

/// Checks every input file before the database is created or opened: each one exists and is a
/// readable file (standard input, `-`, is not checked), and none is a SQLite database (the
/// usual slip: `pawndex index research.db`, `--db` forgotten). Nothing is written.
fn check_inputs(files: &[String]) -> Result<()> {
    for name in files.iter().filter(|f| f.as_str() != "-") {
        let path = std::path::Path::new(name);
        let meta = std::fs::metadata(path).with_context(|| format!("{name}: cannot read"))?;
        if meta.is_dir() {
            bail!("{name} is a directory, not a PGN file");
        }
        std::fs::File::open(path).with_context(|| format!("{name}: cannot read"))?;
        if crate::store::is_sqlite_file(path) {
            bail!("{name} is a SQLite database, not PGN: did you mean --db {name}?");
        }
    }
    Ok(())
}

pub fn run(args: IndexArgs) -> Result<i32> {
    check_inputs(&args.files)?;
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        let _ = ctrlc::set_handler(move || {
            if stop.swap(true, Ordering::SeqCst) {
                // Second Ctrl-C: leave now; SQLite keeps the database consistent.
                std::process::exit(EXIT_INTERRUPTED);
            }
        });
    }
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let opts = IndexOptions {
        db: args.db,
        files: args.files,
        threads,
        quiet: args.quiet,
        keep_duplicates: args.keep_duplicates,
    };
    let summary = super::run(&opts, stop)?;
    if !opts.quiet {
        eprint!("{}", summary.render());
    }
    Ok(if summary.interrupted {
        EXIT_INTERRUPTED
    } else if summary.file_errors.is_empty() {
        EXIT_OK
    } else {
        EXIT_ERROR
    })
}
