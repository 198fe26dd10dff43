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
    let (before, merged) = crate::store::upgrade(&args.db)?;
    let now = crate::store::SCHEMA_VERSION;
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
