//! `pawndex player NAME`: a player's structure profile. The work is `engine::profile`; the
//! rules are in `model::profile` (docs/players.md).

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};
use shakmaty::Color;

use crate::cli::common::{self as command, ThreadsArg};
use crate::cli::filters::GameFilterArgs;
use crate::engine::find::Filters;
use crate::engine::profile::{DEFAULT_EXACT, Request, profile};
use crate::output::profile::{write_csv, write_json, write_table};
use crate::output::table::{Format, formats};
use crate::store::DEFAULT_DB;

const AFTER_HELP: &str = "\
The name is matched as people type it (case, accents, spacing after the comma and a trailing
initial's period do not matter); every stored spelling of the player is profiled. An unknown
or ambiguous name lists the candidates (exit status 1).

Rows: every named structure form the player's games reached, and the --exact N exact pawn
structures most of them stayed in for at least 8 plies, per colour, with the player's colour:
  games, plies   the player's games reaching it, and their positions there
  score          the player's score there (percent, one decimal, games with a result)
  95%            the Wilson interval of that score
  baseline       the score of the other games reaching it with the same colour (games whose
                 player of that colour is not one of the player's spellings); band: the same
                 over the games whose player of that colour is rated within the player's
                 median rating +-100
  delta          score - baseline; trust: \"too few games\" under 10 games with a result,
                 \"below\"/\"above\" when the baseline lies outside the interval, else \"in line\"
The game filters choose the player's games; --time-class and --exclude-time-class also apply
to the baselines. --format json adds the player's most played moves and pawn breaks in each
structure and the share of the player's games per structure by year (docs/players.md).

Exit status: 0 success, 1 error (unknown or ambiguous name, missing database, a --baseline
database classified with another catalogue), 2 bad command line.

Examples:
  pawndex player --db masters.db \"Carlsen, Magnus\"
  pawndex player --db masters.db carlsen --as black --time-class classical
  pawndex player --db masters.db \"Caruana,F\" --vs \"Nakamura,Hi\" --format json
  pawndex player --db me.db \"Doe, John\" --baseline masters.db";

/// `--as`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum AsArg {
    White,
    Black,
}

/// Options of `pawndex player`.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct PlayerArgs {
    /// The player's name ("Carlsen, Magnus", "carlsen", "Carlsen,M")
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Only the games with this colour
    #[arg(long = "as", value_enum, value_name = "COLOUR")]
    pub colour: Option<AsArg>,
    #[command(flatten)]
    pub games: GameFilterArgs,
    /// Also the games against this opponent and the opponent's profile (with the other colour
    /// under --as)
    #[arg(long, value_name = "OPPONENT")]
    pub vs: Option<String>,
    /// Take the baselines from this other pawndex database (classified with the same catalogue)
    #[arg(long, value_name = "OTHER.db")]
    pub baseline: Option<PathBuf>,
    /// How many exact pawn structures per colour
    #[arg(long, value_name = "N", default_value_t = DEFAULT_EXACT as u16,
          value_parser = clap::value_parser!(u16).range(0..=100))]
    pub exact: u16,
    /// Output format
    #[arg(long, short, default_value = "table", value_parser = formats(&[Format::Table, Format::Csv, Format::Json]))]
    pub format: Format,
    /// Database to read (opened read-only)
    #[arg(long, default_value = DEFAULT_DB, value_name = "PATH")]
    pub db: PathBuf,
    #[command(flatten)]
    pub threads: ThreadsArg,
}

/// Runs `pawndex player`.
pub fn run(args: PlayerArgs) -> Result<i32> {
    command::exit_status(run_player(args))
}

fn run_player(args: PlayerArgs) -> Result<i32> {
    let mut filters = Filters::default();
    args.games.fill(&mut filters);
    let conn = crate::store::read::Snapshot::open(&args.db, &crate::store::read::Limit::none())?;
    crate::cli::query::warn_if_unfinished(&crate::store::lag(&conn)?, &args.db);
    let p = profile(
        &conn,
        &Request {
            name: args.name.clone(),
            only: args.colour.map(|c| match c {
                AsArg::White => Color::White,
                AsArg::Black => Color::Black,
            }),
            filters,
            vs: args.vs.clone(),
            baseline: args.baseline.clone(),
            exact: usize::from(args.exact),
            threads: args.threads.count(),
        },
    )?;
    let mut out = io::stdout().lock();
    match args.format {
        Format::Csv => write_csv(&mut out, &p)?,
        Format::Json => write_json(&mut out, &p)?,
        _ => write_table(&mut out, &p)?,
    }
    out.flush()?;
    Ok(0)
}
