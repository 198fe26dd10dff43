//! `pawndex structures`: per named structure form (normal and colour-reversed apart), how often
//! it occurs, how games in it end, how long they stay in it, its openings, what it turns into
//! and the moves that leave it.
//!
//! Everything comes from one ordered pass over `structure_changes` joined to `games`
//! ([`crate::store::read::structure_report`]): a *stay* in a form runs from a change into it to the
//! game's next change (exclusive) or to the game's last position, so the positions in a form are
//! the sum of its stays. The report never reads `runs`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;

use crate::cli::common::{self as command};
use crate::model::UsageError;
use crate::model::structure_report::{Form, Row};
use crate::model::usage;
use crate::output::chart;
use crate::output::structures::{summary, write_csv, write_json, write_table};
use crate::output::table::{Format, formats};
use crate::store::DEFAULT_DB;
use crate::store::read::structure_report;

/// The end of `--help`: the columns and examples.
const AFTER_HELP: &str = "\
One row per structure form, in catalogue order: the normal form, then the colour-reversed one
(colours swapped, board turned) when the definition looks for it. Forms no game reaches are
listed too (--min-games 1 leaves them out).

Columns:
  positions      positions (game and ply) in the form
  games          games that reach the form
  white_score    White's score in percent over the games that reach it with a result
                 (1-0, 1/2-1/2, 0-1); empty when none has one
  stays          times a game enters the form; avg_stay = positions / stays: the plies
                 from entering it to leaving it (or to the game's end), on average
  eco            the most common ECO codes of its games, with their share of its games
  turns_into     the forms the game changes to when it leaves, with counts (none = no name)
  leaving_moves  the moves that leave it, with counts and White's score in those games;
                 Black's moves written …exd5 (JSON gives each move's side)
The last line on stderr gives the share of all positions that have a name, and of plies
20..60.

Examples:
  pawndex structures --db masters.db --top 3
  pawndex structures --db masters.db --family d4-d5 --format csv > d4d5.csv
  pawndex structures --db masters.db --min-games 100 --chart structures.png
  pawndex structures --db masters.db --format json | jq '.[0].turns_into'";

/// Options of `pawndex structures`.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct StructuresArgs {
    /// Database to read (opened read-only)
    #[arg(long, default_value = DEFAULT_DB, value_name = "PATH")]
    pub db: PathBuf,
    /// Output format
    #[arg(long, short, default_value = "table", value_parser = formats(&[Format::Table, Format::Csv, Format::Json]))]
    pub format: Format,
    /// Also draw a chart of games per form, coloured by White's score (by extension)
    #[arg(long, value_name = "FILE.png|FILE.svg")]
    pub chart: Option<PathBuf>,
    /// Only the structures of this family (as in the catalogue, case ignored); several
    /// (repeated, or "d4-d5,Benoni"): any of them
    #[arg(long, value_name = "TEXT")]
    pub family: Vec<String>,
    /// Only the forms that at least N games reach
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub min_games: u64,
    /// Length of the lists (ECO codes, next structures, leaving moves)
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub top: u16,
}

/// Runs `pawndex structures`.
pub fn run(args: StructuresArgs) -> Result<i32> {
    command::exit_status(run_report(args))
}

/// The command, with usage errors still to be turned into exit status 2.
fn run_report(args: StructuresArgs) -> Result<i32> {
    let chart_png = match &args.chart {
        Some(path) => {
            let png = chart_kind(path)?;
            crate::output::check_output_path("--chart", path)?;
            if png {
                chart::load_font()?;
            }
            Some(png)
        }
        None => None,
    };
    let conn = crate::store::read::Snapshot::open(&args.db, &crate::store::read::Limit::none())?;
    crate::cli::query::warn_if_unfinished(&crate::store::lag(&conn)?, &args.db);
    let names = structure_report::names(&conn)?;
    let mut wanted = Vec::new();
    if !args.family.is_empty() {
        // In catalogue order, each once.
        let mut families: Vec<&str> = Vec::new();
        for n in &names {
            if !families.contains(&n.family.as_str()) {
                families.push(&n.family);
            }
        }
        for given in &args.family {
            let before = wanted.len();
            for family in given.split(',').map(str::trim).filter(|f| !f.is_empty()) {
                if !families
                    .iter()
                    .any(|f| f.to_lowercase() == family.to_lowercase())
                {
                    usage!(
                        "--family {family:?}: no structure of {} has that family{}; its \
                         families: {}",
                        args.db.display(),
                        crate::model::names::did_you_mean(family, families.iter().copied()),
                        families.join(", ")
                    );
                }
                wanted.push(family.to_lowercase());
            }
            if wanted.len() == before {
                usage!("--family {given:?}: the value is empty (give at least one family)");
            }
        }
    }
    let keep = |f: &Form| wanted.is_empty() || wanted.contains(&f.family.to_lowercase());
    let report = crate::engine::structures::report(&conn, &names, keep, usize::from(args.top))?;
    let mut rows = report.rows;
    rows.retain(|r| r.games >= args.min_games);

    let mut out = io::stdout().lock();
    match args.format {
        Format::Csv => write_csv(&mut out, &rows)?,
        Format::Json => write_json(&mut out, &rows)?,
        _ => write_table(&mut out, &rows)?,
    }
    out.flush()?;
    drop(out);

    if let (Some(path), Some(png)) = (&args.chart, chart_png) {
        draw_chart(path, png, &args, &rows)?;
    }
    if names.is_empty() {
        eprintln!("pawndex: {} holds no named structures", args.db.display());
    } else if rows.is_empty() {
        eprintln!(
            "pawndex: no structure form has {} games or more",
            args.min_games
        );
    }
    eprintln!(
        "{}",
        summary(&report.totals, report.named, report.named_window)
    );
    Ok(0)
}

/// Draws the chart: a bar of games per form with games, coloured by White's score.
fn draw_chart(path: &Path, png: bool, args: &StructuresArgs, rows: &[Row]) -> Result<()> {
    let bars: Vec<chart::NamedBar> = rows
        .iter()
        .filter(|r| r.games > 0)
        .map(|r| chart::NamedBar {
            label: r.form.display(),
            games: r.games,
            results: r.results.games(),
            score: r.results.white_score(),
        })
        .collect();
    let mut parts = vec!["games that reach each form".to_string()];
    if !args.family.is_empty() {
        parts.push(format!("family {}", args.family.join(", ")));
    }
    if args.min_games > 0 {
        parts.push(format!("at least {} games", args.min_games));
    }
    if let Some(name) = args.db.file_name() {
        parts.push(name.to_string_lossy().into_owned());
    }
    chart::draw_named(
        path,
        png,
        "Named pawn structures: games and White's score",
        &parts.join(", "),
        &bars,
    )
}

/// Refuses a chart file name pawndex cannot draw (before any work).
fn chart_kind(path: &Path) -> Result<bool> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("svg") => Ok(false),
        Some("png") => Ok(true),
        _ => Err(UsageError(format!(
            "--chart {}: the file name must end in .svg or .png",
            path.display()
        ))
        .into()),
    }
}
