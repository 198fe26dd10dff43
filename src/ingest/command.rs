//! `pawndex index`: its options, the input checks made before anything is created, Ctrl-C,
//! and the exit status from the run's summary.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result, bail};
use clap::Args;

use super::{IndexOptions, ParquetOutput};
use crate::command::{DEFAULT_DB, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, usage};
use crate::dataset::command::DatasetArgs;

#[derive(Args, Debug)]
pub struct IndexArgs {
    /// PGN files (plain, .gz, .bz2, .zst), or - for standard input
    #[arg(required = true, value_name = "FILE|-")]
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
    /// Write a Parquet dataset into DIR instead of a database (layout: docs/dataset.md)
    #[arg(long, value_name = "DIR", conflicts_with = "db")]
    parquet: Option<PathBuf>,
    #[command(flatten)]
    dataset: DatasetArgs,
}

/// Checks every input before the database is created or opened: each one exists and is a
/// readable file, none is a SQLite database (the usual slip: `pawndex index research.db`,
/// `--db` forgotten), and its first decoded bytes are no archive, no binary data and no
/// compressed stream broken from its start ([`super::input::check`]; standard input, `-`, is
/// read ahead for this). Nothing is written.
fn check_inputs(files: &[String]) -> Result<()> {
    for name in files {
        if name != "-" {
            let path = std::path::Path::new(name);
            let meta = std::fs::metadata(path).with_context(|| format!("{name}: cannot read"))?;
            if meta.is_dir() {
                bail!("{name} is a directory, not a PGN file");
            }
            std::fs::File::open(path).with_context(|| format!("{name}: cannot read"))?;
            // Only a regular file is read here: the bytes of a pipe (`<(zcat …)`) would be
            // lost to the run; `input::check` reads those ahead and gives them back.
            if meta.is_file() && crate::store::is_sqlite_file(path) {
                bail!("{name} is a SQLite database, not PGN: did you mean --db {name}?");
            }
        }
        if let Err(message) = super::input::check(name) {
            bail!("{message}");
        }
    }
    Ok(())
}

/// The dataset a `--parquet` run writes, checked before anything is created; the dataset
/// options without `--parquet` are a usage error.
fn parquet_output(args: &IndexArgs) -> Result<Option<ParquetOutput>> {
    let d = &args.dataset;
    let Some(dir) = &args.parquet else {
        if !d.partition.is_empty() || d.shard.is_some() || d.overwrite || d.max_file_mb.is_some() {
            usage!("--partition, --shard, --overwrite and --max-file-mb go with --parquet DIR");
        }
        return Ok(None);
    };
    Ok(Some(ParquetOutput {
        target: d.target(dir.clone())?,
        max_file_bytes: d.max_file_bytes(),
    }))
}

pub fn run(args: IndexArgs) -> Result<i32> {
    check_inputs(&args.files)?;
    let parquet = parquet_output(&args)?;
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
        parquet,
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
