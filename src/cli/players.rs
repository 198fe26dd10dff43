//! `pawndex players`: the players whose names hold a text, with their games, years, ratings and
//! openings, and every spelling each covers (the name rule: docs/players.md).

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::cli::common as command;
use crate::output::players::{write_csv, write_json, write_table};
use crate::output::table::{Format, formats};
use crate::store::DEFAULT_DB;

const AFTER_HELP: &str = "\
Names are compared folded: without accents, case and periods, with no space next to a comma
(\"carlsen,magnus\", \"Carlsen, M.\" and \"CARLSEN,Magnus\" are alike). A player's spellings are
merged: those that fold alike, and a spelling with initials (Carlsen,M) into the one player of
that surname whose given names start with them, when exactly one does (docs/players.md).

Exit status: 0 success (also when no name holds the text: it says so), 1 error, 2 bad command
line.

Examples:
  pawndex players --db masters.db --search carlsen
  pawndex players --db masters.db --search \"polgar\" --format json
  pawndex players --db masters.db --min-games 2000 --limit 50";

/// Options of `pawndex players`.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct PlayersArgs {
    /// Only the players one of whose spellings holds TEXT (folded; all players without it)
    #[arg(long, value_name = "TEXT", default_value = "")]
    pub search: String,
    /// Only the players with at least N games
    #[arg(long = "min-games", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(i64).range(0..))]
    pub min_games: i64,
    /// At most N players (most games first)
    #[arg(long, value_name = "N", default_value_t = 20,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub limit: u32,
    /// Output format
    #[arg(long, short, default_value = "table", value_parser = formats(&[Format::Table, Format::Csv, Format::Json]))]
    pub format: Format,
    /// Database to read (opened read-only)
    #[arg(long, default_value = DEFAULT_DB, value_name = "PATH")]
    pub db: PathBuf,
}

/// Runs `pawndex players`.
pub fn run(args: PlayersArgs) -> Result<i32> {
    command::exit_status(run_players(&args))
}

fn run_players(args: &PlayersArgs) -> Result<i32> {
    let conn = crate::store::read::Snapshot::open(&args.db, &crate::store::read::Limit::none())?;
    let rows = crate::store::read::names::search(
        &conn,
        &args.search,
        args.min_games,
        args.limit as usize,
    )?;
    if rows.is_empty() {
        eprintln!(
            "pawndex: no player's name holds {:?} (with at least {} games)",
            args.search, args.min_games
        );
    }
    let mut out = io::stdout().lock();
    match args.format {
        Format::Csv => write_csv(&mut out, &rows)?,
        Format::Json => write_json(&mut out, &args.search, &rows)?,
        _ => write_table(&mut out, &rows)?,
    }
    out.flush()?;
    Ok(0)
}
