//! `pawndex migrate`: its options, and what it says when it has upgraded a database.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::cli::common::EXIT_OK;
use crate::store::DEFAULT_DB;

#[derive(Args, Debug)]
pub struct MigrateArgs {
    /// Database file to upgrade
    #[arg(long, default_value = DEFAULT_DB, value_name = "PATH")]
    pub db: PathBuf,
}

pub fn run(args: MigrateArgs) -> Result<i32> {
    let done = crate::store::upgrade(&args.db)?;
    let (before, merged) = (done.before, done.merged);
    let now = crate::store::SCHEMA_VERSION;
    let db = args.db.display();
    if let Some(bytes) = done.rolled_back {
        eprintln!(
            "pawndex: played back {db}-journal ({bytes} bytes), the rollback journal an \
             interrupted run left: {db} is as its last commit left it"
        );
    }
    match done.folded {
        Some(0) => eprintln!(
            "pawndex: switched {db} from write-ahead-log mode back to a rollback journal: it is \
             one self-contained file again"
        ),
        Some(bytes) => eprintln!(
            "pawndex: folded the write-ahead log {db}-wal ({}) into {db}: it is one \
             self-contained file again",
            if bytes < 1 << 20 {
                format!("{:.1} KiB", bytes as f64 / 1024.0)
            } else {
                format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
            }
        ),
        None => {}
    }
    if merged > 0 {
        let games = if merged == 1 { "game" } else { "games" };
        eprintln!("pawndex: {} {games} merged into the derived tables", merged);
    }
    if before < now {
        eprintln!(
            "pawndex: {} upgraded from schema version {before} to {now}",
            args.db.display()
        );
    } else {
        eprintln!(
            "pawndex: {} is up to date (schema version {now})",
            args.db.display()
        );
    }
    Ok(EXIT_OK)
}
