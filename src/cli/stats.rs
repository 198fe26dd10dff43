//! `pawndex stats`: counts and White's score grouped by feature columns, as CSV and charts.
//!
//! [`columns`] names the columns and holds their rules, [`crate::store::read::stats`] the reads and
//! every SQL text, [`engine`] the grouping, [`report`] the built-in reports and [`chart`] the
//! pictures.

use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::Args;

use crate::engine::stats as engine;
use crate::model::report;
use crate::output::chart;
use crate::output::stats::write_csv;
pub use engine::PlyRange;

use crate::cli::common::{self as command};
use crate::model::Per;
use crate::model::UsageError;
use crate::store::DEFAULT_DB;
use report::{ChartKind, Report};

const AFTER_HELP: &str = "\
Columns (--by): game_id, ply, white_pawns, black_pawns, white_islands, black_islands,
  white_dispersion, black_dispersion, white_distortion, black_distortion, white_duo,
  black_duo, white_trio, black_trio, white_quart, black_quart, white_bishop_pair,
  black_bishop_pair, pieceset (the ply_features columns), and derived:
  ply_bucket       ply / 10 * 10
  elo_band         mean of both Elos floored to 100 (empty when an Elo is missing)
  year             the year of the Date tag (its first four characters when they are
                   digits); in --by `unknown` when it has none, sorted last; in --where
                   a number, NULL when unknown
  decade           the year floored to 10, shown 1990s in --by (1990 in --where)
  phase            endgame when each side has no queen or at most one rook, bishop or
                   knight (pieces as they started; promoted pieces do not count);
                   else opening up to ply 20; else middlegame
  white_duo_count, black_duo_count, white_trio_count, black_trio_count,
  white_quart_count, black_quart_count   pawns in the mask
  pawn_fen         the pawns as a FEN board (--by only)
  structure        the named structure (structures/*.toml): in --by one value per form,
                   the key (carlsbad), the key and ~ for the colour-reversed form
                   (carlsbad~), or none; in --where the ply_features column: the key, or
                   NULL (structure = 'carlsbad' AND structure_reversed = 0)
  structure_reversed  1 for the colour-reversed form of a named structure, else 0
--where may also use the games columns event, site, date, round, white, black, result,
  white_elo, black_elo, eco, plies, source, fen, chess960.

CSV columns: the --by columns, positions, games, white_wins, draws, black_wins,
  white_score (White's score in percent, one decimal), avg_white_elo, avg_black_elo.
  Results count positions (--per position) or games (--per game); games without a 1-0,
  0-1 or 1/2-1/2 result count in positions and games only.

Examples:
  pawndex stats --by white_islands
  pawndex stats --by phase,white_islands --per game --min-elo 2500 -o islands.csv
  pawndex stats --by elo_band --where \"white_bishop_pair = 1 AND black_bishop_pair = 0\"
  pawndex stats --by structure --per game --min-elo 2500
  pawndex stats --by decade --per game --where \"structure = 'carlsbad'\"
  pawndex stats --by structure,white_islands --where \"structure IS NOT NULL\"
  pawndex stats --report islands-vs-score --chart islands.svg";

#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["by", "report"])))]
pub struct StatsArgs {
    /// Columns to group by, comma-separated (list below)
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "COLUMN[,COLUMN...]",
        conflicts_with = "report"
    )]
    pub by: Vec<String>,
    /// A built-in report (a --by with filters, and its own chart)
    #[arg(long, value_enum, value_name = "NAME")]
    pub report: Option<Report>,
    /// What to count: each position once, or each game once in every group of --by values it
    /// reaches [default: position]
    #[arg(long, value_enum, value_name = "UNIT")]
    pub per: Option<Per>,
    /// Count only positions where this SQL expression holds (may be repeated: all must hold)
    #[arg(long = "where", value_name = "SQL-EXPR")]
    pub filters: Vec<String>,
    /// Count only plies A to B (inclusive; A.. and ..B leave a side open)
    #[arg(long, value_name = "A..B", value_parser = parse_ply_range)]
    pub ply: Option<PlyRange>,
    /// Count only games where both players are rated at least N
    #[arg(long, value_name = "N")]
    pub min_elo: Option<i64>,
    /// Keep the N groups with the most positions (games with --per game)
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// The most groups the request may make (each is counted in memory, a few hundred bytes);
    /// more is refused, naming the columns (exit status 2)
    #[arg(long, value_name = "N", default_value_t = engine::MAX_GROUPS_COMMAND)]
    pub max_groups: usize,
    /// Database to read (opened read-only)
    #[arg(long, default_value = DEFAULT_DB, value_name = "PATH")]
    pub db: PathBuf,
    #[command(flatten)]
    pub threads: crate::cli::common::ThreadsArg,
    /// Write the CSV to this file instead of standard output
    #[arg(short = 'o', long = "output", value_name = "FILE.csv")]
    pub output: Option<PathBuf>,
    /// Draw a chart (the format follows the extension)
    #[arg(long, value_name = "FILE.svg|FILE.png")]
    pub chart: Option<PathBuf>,
}

/// What the command will draw.
enum ChartFormat {
    Svg,
    Png,
}

fn chart_format(path: &Path) -> Result<ChartFormat> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("svg") => Ok(ChartFormat::Svg),
        Some("png") => Ok(ChartFormat::Png),
        _ => Err(UsageError(format!(
            "--chart {}: the file name must end in .svg or .png",
            path.display()
        ))
        .into()),
    }
}

pub fn run(args: StatsArgs) -> Result<i32> {
    command::exit_status(run_stats(args))
}

fn parse_ply_range(s: &str) -> Result<PlyRange, String> {
    crate::model::ply_range(s).map(|(first, last)| PlyRange { first, last })
}

/// The request the options make: the query, the chart it draws and the chart's title.
fn request(args: &StatsArgs) -> Result<(engine::Query, ChartKind, String)> {
    engine::request::query(&engine::request::Ask {
        report: args.report,
        by: args.by.clone(),
        per: args.per,
        filters: args.filters.clone(),
        ply: args.ply,
        min_elo: args.min_elo,
        top: args.top,
    })
}

fn run_stats(args: StatsArgs) -> Result<i32> {
    let (query, kind, title) = request(&args)?;
    if let Some(path) = &args.output {
        crate::output::check_output_path("--output", path)?;
    }
    let chart = match &args.chart {
        Some(path) => {
            let format = chart_format(path)?;
            crate::output::check_output_path("--chart", path)?;
            chart::check(&query.by, kind)?;
            if let ChartFormat::Png = format {
                chart::load_font()?;
            }
            Some((path.clone(), format))
        }
        None => None,
    };
    if query.plies.first > query.plies.last {
        bail!(UsageError(
            "--ply does not overlap the report's own ply range".into()
        ));
    }

    let limit = crate::store::read::Limit::none();
    let connect = || engine::StatsDb::open(&args.db, &limit);
    let db = connect()?;
    crate::cli::query::warn_if_unfinished(&db.lag()?, &args.db);
    let threads = args.threads.count();
    let bounds = engine::Bounds {
        max_groups: args.max_groups,
        stop: &|| false,
    };
    let groups = engine::run(&db, &connect, threads, &query, bounds)?;

    match &args.output {
        Some(path) => {
            crate::output::write_output(path, "CSV", |w| write_csv(w, &query, &groups))?;
        }
        None => write_csv(io::stdout().lock(), &query, &groups)?,
    }
    if groups.is_empty() {
        eprintln!("pawndex: no positions matched; the CSV has its header only");
    }
    if let Some((path, format)) = chart {
        let spec = chart::Spec {
            by: &query.by,
            per: query.per,
            kind,
            title: &title,
            subtitle: &subtitle(&args, &query),
        };
        match format {
            ChartFormat::Svg => chart::draw_svg(&path, &spec, &groups)?,
            ChartFormat::Png => chart::draw_png(&path, &spec, &groups)?,
        }
    }
    Ok(0)
}

/// The filters of a chart, for the line under its title.
fn subtitle(args: &StatsArgs, q: &engine::Query) -> String {
    let mut parts = vec![format!(
        "per {}",
        match q.per {
            Per::Position => "position",
            Per::Game => "game",
        }
    )];
    for f in &q.filters {
        parts.push(format!("where {f}"));
    }
    if q.plies != PlyRange::ALL {
        parts.push(if q.plies.last == u32::MAX {
            format!("plies {}..", q.plies.first)
        } else {
            format!("plies {}..{}", q.plies.first, q.plies.last)
        });
    }
    if let Some(e) = q.min_elo {
        parts.push(format!("both Elos >= {e}"));
    }
    if let Some(n) = q.top {
        parts.push(format!("top {n}"));
    }
    if let Some(name) = args.db.file_name() {
        parts.push(name.to_string_lossy().into_owned());
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::columns;

    /// `--help` names every column `--by` takes: a new side feature fails here until its
    /// columns are described.
    #[test]
    fn help_names_every_column() {
        let words: Vec<&str> = AFTER_HELP
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .collect();
        for c in columns::all() {
            assert!(
                words.contains(&c.name().as_str()),
                "{} is not in --help",
                c.name()
            );
        }
    }
}
