//! `pawndex plans`: what the games do in a structure: each side's most played moves there with
//! the mover's score, where the pieces stand (heat maps), the pawn breaks and other ways out,
//! and the model games. The work is `engine::plans`; the rules are in `model::plans`.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};
use shakmaty::Color;

use crate::cli::common::{self as command, ThreadsArg};
use crate::cli::filters::GameFilterArgs;
use crate::engine::find::Filters;
use crate::output::plans::{Sides, write_csv, write_json, write_table};
use crate::output::table::{Format, formats};
use crate::store::DEFAULT_DB;

const AFTER_HELP: &str = "\
The structure is a named one (--structure-name KEY, KEY~ for the colour-reversed form; repeat
for several), the exact pawns of a FEN (--structure FEN), or the structures within a `similar`
distance of them (--structure FEN --within N). A position is in the structure when its named
structure (or its pawns) is the one asked for; a move counts when the position before it is.

Lists (docs/plans.md has every rule):
  moves        each side's moves played in the structure, most played first: SAN without
               check mark nor disambiguation (Nbd2 is Nd2), games = the games in which the side
               played it there, median = the median move number of its first play, score = the
               mover's score in those games, delta = that score minus the side's score over
               all the structure's games (percentage points). Recaptures and answers to a
               check are listed apart (replies, in the JSON and CSV): the position forces them.
  breaks       pawn moves (or pawn captures) that leave the structure, Black's written …c5,
               with the mover's score after it and the structure it leads to
  other exits  piece captures of a pawn that leave it
  model games  the most typical games: how many of its side's 10 most played moves the
               winner played there (for a draw, the smaller of both sides), then rating, stay
Scores are percent with one decimal: the mover's (moves, breaks) or the side's (baseline).
--format json adds where the pieces stand (squares: per side and piece, 64 shares a1..h8 over
the structure's positions, for all games, those the side won and those it lost) and the share
of games per decade that reach the structure; --chart draws those squares as heat maps.

Exit status: 0 success (also when no game reaches the structure: it says so), 1 error, 2 bad
command line.

Examples:
  pawndex plans --db masters.db --structure-name carlsbad
  pawndex plans --db masters.db --structure-name isolani --side white --min-elo 2500 --top 10
  pawndex plans --db masters.db --structure-name carlsbad --format json | jq '.breaks[:5]'
  pawndex plans --db masters.db --structure-name carlsbad --side white --chart carlsbad.svg
  pawndex plans --db masters.db --structure \"8/pp3ppp/2p5/3p4/3P4/4P3/PP3PPP/8\" --within 2";

/// `--side`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum SideArg {
    White,
    Black,
}

/// Options of `pawndex plans`.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct PlansArgs {
    /// The named structure (a catalogue key or name; KEY~ for the colour-reversed form;
    /// repeatable: any of them)
    #[arg(long = "structure-name", value_name = "KEY")]
    pub structure_name: Vec<String>,
    /// Exactly the pawn structure of this position (a FEN, or only its board part)
    #[arg(long, value_name = "FEN", allow_hyphen_values = true)]
    pub structure: Option<String>,
    /// With --structure: every structure within this distance of it (as `similar` measures)
    #[arg(long, value_name = "N", requires = "structure",
          value_parser = clap::value_parser!(u32).range(0..=64))]
    pub within: Option<u32>,
    #[command(flatten)]
    pub games: GameFilterArgs,
    /// Only this side's moves, breaks and squares
    #[arg(long, value_enum)]
    pub side: Option<SideArg>,
    /// Length of each list (moves per side, breaks, other exits)
    #[arg(long, value_name = "N", default_value_t = 15,
          value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub top: u16,
    /// How many model games
    #[arg(long = "model-games", value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub model_games: u16,
    /// Output format
    #[arg(long, short, default_value = "table", value_parser = formats(&[Format::Table, Format::Csv, Format::Json]))]
    pub format: Format,
    /// Also draw where the pieces stand as heat maps on boards (by extension)
    #[arg(long, value_name = "FILE.svg|FILE.png")]
    pub chart: Option<PathBuf>,
    /// Database to read (opened read-only)
    #[arg(long, default_value = DEFAULT_DB, value_name = "PATH")]
    pub db: PathBuf,
    #[command(flatten)]
    pub threads: ThreadsArg,
}

/// Runs `pawndex plans`.
pub fn run(args: PlansArgs) -> Result<i32> {
    command::exit_status(run_plans(args))
}

fn run_plans(args: PlansArgs) -> Result<i32> {
    let mut filters = Filters {
        structure: args.structure.clone(),
        structure_name: args.structure_name.clone(),
        ..Filters::default()
    };
    args.games.fill(&mut filters);
    let sides = match args.side {
        None => Sides::Both,
        Some(SideArg::White) => Sides::One(Color::White),
        Some(SideArg::Black) => Sides::One(Color::Black),
    };
    let chart_png = match &args.chart {
        Some(path) => Some(crate::output::chart::boards::prepare(path)?),
        None => None,
    };
    let conn = crate::store::read::Snapshot::open(&args.db, &crate::store::read::Limit::none())?;
    crate::cli::query::warn_if_unfinished(&crate::store::lag(&conn)?, &args.db);
    let report = crate::engine::plans::plans(
        &conn,
        &crate::engine::plans::Request {
            filters,
            within: args.within,
            top: usize::from(args.top),
            model_games: usize::from(args.model_games),
            threads: args.threads.count(),
            ranking_only: false,
        },
    )?;
    if report.game_count() == 0 {
        eprintln!(
            "pawndex: no game reaches {} under these filters",
            report.target
        );
    }
    let mut out = io::stdout().lock();
    match args.format {
        Format::Csv => write_csv(&mut out, &report, sides)?,
        Format::Json => write_json(&mut out, &report, sides)?,
        _ => write_table(&mut out, &report, sides)?,
    }
    out.flush()?;
    if let (Some(path), Some(png)) = (&args.chart, chart_png) {
        crate::output::chart::boards::write(path, png, &report, sides)?;
        eprintln!("pawndex: wrote {}", path.display());
    }
    Ok(0)
}
