//! The dataset options shared by `pawndex index --parquet` and `pawndex export parquet`, and
//! the `export` command.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::cli::common::EXIT_OK;
use crate::dataset::layout::Target;
use crate::model::usage;
use crate::store::DEFAULT_DB;

/// How a run writes into a dataset directory (see `docs/dataset.md`).
#[derive(Args, Debug, Clone)]
pub struct DatasetArgs {
    /// Write this run's files under NAME=VALUE directories of each table (Hive-style,
    /// repeatable, e.g. --partition month=2024-01)
    #[arg(long, value_name = "NAME=VALUE")]
    pub partition: Vec<String>,
    /// The run's shard number, the high bits of its game ids (0..8388607; default: the
    /// smallest number not yet claimed in the directory). A driver that fans inputs out to
    /// several machines gives each input its own.
    #[arg(long, value_name = "N")]
    pub shard: Option<u32>,
    /// Replace the partition if it already holds files (default: refuse). Only pawndex's
    /// own part-*.parquet files are replaced: a file or folder it did not write inside a table
    /// folder makes the run refuse (naming it) before anything is changed
    #[arg(long)]
    pub overwrite: bool,
    /// Start a new file when one reaches this many megabytes [default: 256]
    #[arg(long, value_name = "MB")]
    pub max_file_mb: Option<u64>,
}

impl DatasetArgs {
    /// The target directory `dir` with these options, checked (nothing is created).
    pub fn target(&self, dir: PathBuf) -> Result<Target> {
        if self.max_file_mb == Some(0) {
            usage!("--max-file-mb must be at least 1");
        }
        let partition = self
            .partition
            .iter()
            .map(|p| crate::dataset::parse_partition(p))
            .collect::<Result<Vec<_>>>()?;
        let mut names: Vec<&str> = partition.iter().map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        if names.windows(2).any(|w| w[0] == w[1]) {
            usage!("--partition: each name may be given once");
        }
        let target = Target {
            dir,
            partition,
            shard: self.shard,
            overwrite: self.overwrite,
        };
        target.check()?;
        Ok(target)
    }

    pub fn max_file_bytes(&self) -> u64 {
        self.max_file_mb.unwrap_or(256).saturating_mul(1 << 20)
    }
}

#[derive(Args, Debug)]
#[command(after_help = "Example:\n  pawndex export parquet --db masters.db --out masters-parquet")]
pub struct ExportArgs {
    #[command(subcommand)]
    pub what: ExportWhat,
}

#[derive(Subcommand, Debug)]
pub enum ExportWhat {
    /// Write a database's games, runs, structure changes and rejects as a Parquet dataset.
    #[command(
        long_about = "Writes the games, runs, structure changes (structure_changes) and rejects \
                      of a pawndex database as a Parquet dataset (zstd, Hive-style partitions; \
                      layout in docs/dataset.md), the same dataset `pawndex index --parquet` \
                      writes from PGN. Game ids keep the \
                      database's ids under the run's shard number (shard << 40 | id), so into a \
                      fresh directory they are the database's ids. Nothing is visible in DIR \
                      until the whole export is written.\n\nExit status: 0 success, 1 error, \
                      2 usage error.",
        after_help = "Examples:\n  pawndex export parquet --db masters.db --out masters-parquet\n  duckdb -c \"SELECT count(*) FROM 'masters-parquet/games/**/*.parquet'\""
    )]
    Parquet(ExportParquetArgs),
}

#[derive(Args, Debug)]
pub struct ExportParquetArgs {
    /// Database to read (it is not modified)
    #[arg(long, default_value = DEFAULT_DB, value_name = "PATH")]
    pub db: PathBuf,
    /// Dataset directory to write into (created if needed)
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    #[command(flatten)]
    pub dataset: DatasetArgs,
    /// No summary
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(args: ExportArgs) -> Result<i32> {
    match args.what {
        ExportWhat::Parquet(a) => {
            let target = a.dataset.target(a.out.clone())?;
            let written =
                crate::dataset::export_database(&a.db, &target, a.dataset.max_file_bytes())?;
            if !a.quiet {
                eprintln!(
                    "pawndex: exported {} games, {} runs, {} structure changes, {} rejects to {} \
                     ({} file(s), {:.1} MB)",
                    written.games,
                    written.runs,
                    written.changes,
                    written.rejects,
                    a.out.display(),
                    written.files,
                    written.bytes as f64 / 1e6
                );
            }
            Ok(EXIT_OK)
        }
    }
}
