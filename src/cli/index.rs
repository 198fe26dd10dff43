//! `pawndex index`: its options, the input checks made before anything is created, Ctrl-C,
//! and the exit status from the run's summary.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::cli::common::{EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK};
use crate::cli::export::DatasetArgs;
use crate::dataset::{DatasetWriter, Target, Written};
use crate::ingest::{ReadOptions, Summary, drive, phase_spinner};
use crate::model::usage;
use crate::store::DEFAULT_DB;
use crate::store::{self, Writer};

#[derive(Args, Debug)]
pub struct IndexArgs {
    /// PGN files (plain, .gz, .bz2, .zst), or - for standard input
    #[arg(required = true, value_name = "FILE|-")]
    files: Vec<String>,
    /// Database file to create or extend
    #[arg(long, default_value = DEFAULT_DB, value_name = "PATH")]
    db: PathBuf,
    #[command(flatten)]
    threads: crate::cli::common::ThreadsArg,
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
/// compressed stream broken from its start ([`crate::ingest::input::check`]; standard input, `-`, is
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
        if let Err(message) = crate::ingest::input::check(name) {
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
    let threads = args.threads.count();
    let read = ReadOptions {
        files: args.files,
        threads,
        quiet: args.quiet,
        keep_duplicates: args.keep_duplicates,
    };
    let (summary, end) = match &parquet {
        Some(out) => to_dataset(&read, out, stop)?,
        None => to_database(&read, &args.db, stop)?,
    };
    if !read.quiet {
        eprint!("{}{}", summary.render(), end.render(summary.interrupted));
    }
    if let End::Database(Some(unfolded)) = end {
        // Every game is stored; what is left is said after the summary, with exit status 1.
        return Err(unfolded);
    }
    Ok(if summary.interrupted {
        EXIT_INTERRUPTED
    } else if summary.file_errors.is_empty() {
        EXIT_OK
    } else {
        EXIT_ERROR
    })
}

/// Where and how `pawndex index --parquet` writes.
#[derive(Clone, Debug)]
struct ParquetOutput {
    target: Target,
    max_file_bytes: u64,
}

/// How a run ended for its destination: the last line of the end summary.
enum End {
    /// Into a database; with the error when readers kept the end from folding the log in
    /// ([`store::Unfolded`]).
    Database(Option<anyhow::Error>),
    /// Interrupted: the dataset files written were removed, nothing was published.
    Discarded,
    Published {
        written: Written,
        shard: u32,
    },
}

impl End {
    fn render(&self, interrupted: bool) -> String {
        match self {
            End::Database(_) if interrupted => "  interrupted: every game committed so far is stored; run the same command again to finish\n".to_owned(),
            End::Database(_) => String::new(),
            End::Discarded => "  interrupted: nothing was published (a dataset partition is written whole or not at all); run the same command again\n".to_owned(),
            End::Published { written, shard } => format!(
                "  dataset: {} games, {} runs, {} rejects in {} file(s), {:.1} MB, shard {shard}\n",
                written.games,
                written.runs,
                written.rejects,
                written.files,
                written.bytes as f64 / 1e6
            ),
        }
    }
}

/// Runs the pipeline into the database `db`. `stop` is set by Ctrl-C: reading stops; what was
/// read is stored.
fn to_database(
    read: &ReadOptions,
    db: &std::path::Path,
    stop: Arc<AtomicBool>,
) -> Result<(Summary, End)> {
    let start = Instant::now();
    let _lock = store::lock_for_indexing(db)?;
    let conn = store::open_for_writing(db)?;
    let mut writer = Writer::new(conn, read.keep_duplicates)?;
    let (mut summary, result) = drive(read, &mut writer, &stop, start)?;
    result.with_context(|| {
        format!(
            "writing to the database {} failed; the last transaction was rolled back and the games committed before it are kept",
            db.display()
        )
    })?;
    let t_finish = Instant::now();
    let spinner = phase_spinner(read.quiet);
    let finished = writer.finish_with(false, |phase| spinner.set_message(phase.describe()));
    spinner.finish_and_clear();
    let unfolded = match finished {
        Err(e)
            if e.downcast_ref::<store::Unfolded>()
                .is_some_and(store::Unfolded::only_wal_mode) =>
        {
            // Every page is in the database file: a warning, the run succeeded.
            eprintln!("pawndex: warning: {e}");
            None
        }
        Err(e) if e.is::<store::Unfolded>() => Some(e),
        other => other.map(|()| None)?,
    };
    if std::env::var_os("PAWNDEX_TIMINGS").is_some() {
        eprintln!(
            "timings: load {:.1} s, finish {:.1} s; copies not replayed: {}",
            (t_finish - start).as_secs_f64(),
            t_finish.elapsed().as_secs_f64(),
            summary.copies
        );
    }
    summary.interrupted = stop.load(Ordering::Relaxed);
    summary.elapsed = start.elapsed();
    Ok((summary, End::Database(unfolded)))
}

/// Runs the pipeline into a dataset; an interrupted run publishes nothing.
fn to_dataset(
    read: &ReadOptions,
    out: &ParquetOutput,
    stop: Arc<AtomicBool>,
) -> Result<(Summary, End)> {
    let start = Instant::now();
    let claim = out.target.claim(&read.files)?;
    let mut writer = DatasetWriter::new(claim, read.keep_duplicates, out.max_file_bytes)?;
    let shard = writer.shard();
    let (mut summary, result) = drive(read, &mut writer, &stop, start)?;
    summary.interrupted = stop.load(Ordering::Relaxed);
    let dir = out.target.dir.display();
    if let Err(e) = result {
        let _ = writer.discard();
        return Err(e.context(format!(
            "writing the dataset {dir} failed; nothing was published"
        )));
    }
    if summary.interrupted {
        writer
            .discard()
            .with_context(|| format!("removing the unpublished files of {dir}"))?;
        summary.elapsed = start.elapsed();
        return Ok((summary, End::Discarded));
    }
    let spinner = phase_spinner(read.quiet);
    spinner.set_message("closing and publishing the Parquet files");
    let written = writer.finish();
    spinner.finish_and_clear();
    let written = written.with_context(|| format!("writing the dataset {dir} failed"))?;
    if std::env::var_os("PAWNDEX_TIMINGS").is_some() {
        eprintln!("timings: copies not replayed: {}", summary.copies);
    }
    summary.elapsed = start.elapsed();
    Ok((summary, End::Published { written, shard }))
}
