//! `pawndex find`: position search by pawn-structure, game and ply filters, without writing SQL.
//! The filters compile to one parameterised query of the same shape as the named queries
//! (`matching_structures`, `matching_runs`, expansion into plies); `--print-sql` shows it.

use std::io::{self, Write};

use crate::store::read::params::Value;
use anyhow::Result;
use clap::Args;

use crate::cli::filters::GameFilterArgs;
use crate::cli::query;
use crate::engine::find::{Filters, resolve_names};
use crate::model::Per;
use crate::output::table::OutputArgs;
use crate::store::read::search::{Form, Rows, Search, Sql};

#[derive(Args, Debug)]
#[command(
    mut_arg("count", |a| a.help(
        "Print only the number of matching positions (games with --per game)"
    )),
    after_help = "Filters combine with AND. The search compiles to parameterised SQL \
(see --print-sql), run read-only.\n\n\
SEVERAL VALUES: --result, --eco, --date and --structure-name take several values, by repeating \
the option or separating values by commas (--result 1-0,0-1); --player, --white-player, \
--black-player, --event and --site by repeating it (a comma is part of a PGN name: \
\"Kasparov, Garry\"). A position then matches any of the values. --white, --black, --pawns \
and --no-pawns add conditions (all must hold). A condition no position can meet \
(islands:5..3, --pawns \"wd4 bd4\", a pawn on rank 1 or 8) is refused, by name.\n\n\
FEATURE (for --white and --black):
  duo, trio, quart             the side has such a group of pawns side by side
  bishop-pair, no-bishop-pair  the side has (not) a bishop on each colour
  islands:3.. islands:2..4     a range (both ends included) or islands:3 for exactly 3;
  islands:..2                  also dispersion, distortion; needs no quotes
  'islands>=N', islands=N, …   comparisons =, !=, <, <=, >, >= (quote those with < or >:
                               the shell reads them as redirections)

MODEL GAMES: --min-stay N keeps the games with at least N matching positions (for a structure,
  the plies they spend in it, inside --ply); with --per game, --sort KEY orders them: id (the
  default), elo (the average of both ratings, highest first), white-elo, black-elo, date (newest
  first), stay (most matching plies first), typicality (with a structure: most typical first,
  as `pawndex plans` ranks its model games); games without the key (unrated, no year) come
  last; ties by game id; --reverse flips the order.

TIME CLASS (--time-class, --exclude-time-class): classical, rapid, blitz, bullet, simul,
  blindfold or unknown, from the TimeControl tag (base + 40 increments: bullet under 3 minutes,
  blitz under 10, rapid under 60), else from words of the Event tag (Blitz, Rapid, Rapidplay,
  Simul, Blindfold, ...); a simul or blindfold Event wins (docs/find.md, \"Time class\").

NAMED STRUCTURES (--structure-name): the keys of the structure catalogue (structures/*.toml;
  `pawndex query --list` lists them), or their names (\"Maroczy Bind\"), case ignored. KEY alone is
  the normal form, KEY~ the colour-reversed form (colours swapped, board flipped: in
  carlsbad~ Black has White's Carlsbad pawns). Repeat the option (or separate keys by commas) for any of them.

Exit status: 0 success, 1 error, 2 bad command line (the message names the argument).

Examples:
  pawndex find --white quart --black islands:3.. --limit 20
  pawndex find --pawns \"wd4 we3 bd5 bc6\" --no-pawns \"wc be\" --per game
  pawndex find --structure \"rnbqkbnr/pp3ppp/2p5/3p4/3P4/4P3/PP3PPP/RNBQKBNR w KQkq - 0 5\"
  pawndex find --white bishop-pair --black no-bishop-pair --ply 40.. --result 1-0 --count
  pawndex find --player Carlsen --white 'islands>=3' --per game --format pgn > games.pgn
  pawndex find --pawns \"wd4 we3 bc6 bd5\" --no-pawns \"wc be\" --eco D35 --date 2020.. --per game
  pawndex find --white-player Kasparov --event Olympiad --site Moscow --black quart --count
  pawndex find --structure-name carlsbad --eco D3 --per game --count
  pawndex find --structure-name isolani --structure-name isolani~ --ply 20..40
  pawndex find --structure-name carlsbad --time-class classical --min-elo 2600 --per game --sort elo
  pawndex find --structure-name isolani --exclude-time-class blitz,bullet --min-stay 20 --per game --sort stay
  pawndex find --structure-name carlsbad --per game --sort typicality --limit 10 -f pgn"
)]
pub struct FindArgs {
    /// A White feature (repeatable): duo, trio, quart, bishop-pair, no-bishop-pair,
    /// islands:3.., dispersion:..2, distortion:2..4, islands=N, 'islands>=N', …
    #[arg(long = "white", value_name = "FEATURE")]
    pub white: Vec<String>,
    /// A Black feature (repeatable), as for --white
    #[arg(long = "black", value_name = "FEATURE")]
    pub black: Vec<String>,
    /// Pawns required on squares, side first: "wd4 we5 bd5"
    #[arg(long, value_name = "SQUARES")]
    pub pawns: Vec<String>,
    /// Files (or squares) without pawns of that side: "wc be" (or "wd4")
    #[arg(long = "no-pawns", value_name = "FILES")]
    pub no_pawns: Vec<String>,
    /// Exactly the pawn structure of this position (a FEN, or only its board part)
    #[arg(long, value_name = "FEN", allow_hyphen_values = true)]
    pub structure: Option<String>,
    /// The position's named structure is KEY (repeatable: any of them); KEY alone is the
    /// normal form, KEY~ the colour-reversed one (carlsbad~)
    #[arg(long = "structure-name", value_name = "KEY")]
    pub structure_name: Vec<String>,
    /// Plies A..B, both included (A.., ..B, or one ply N)
    #[arg(long, value_name = "A..B")]
    pub ply: Option<String>,
    #[command(flatten)]
    pub games: GameFilterArgs,
    /// With --per game, the order of the games: id (the default), elo (average of both
    /// ratings), white-elo, black-elo, date (newest first), stay (most matching plies first),
    /// typicality (most typical of the structure first)
    #[arg(long, value_name = "KEY")]
    pub sort: Option<String>,
    /// With --per game, the order of --sort flipped (ties stay by ascending game id)
    #[arg(long)]
    pub reverse: bool,
    /// One row per matching position, or per game (its first matching ply)
    #[arg(long, value_enum, default_value_t = Per::Position)]
    pub per: Per,
    /// Print the SQL and its parameters instead of running it
    #[arg(long, conflicts_with = "count")]
    pub print_sql: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl FindArgs {
    /// The filters of the command line, for [`crate::engine::find::search`].
    pub fn filters(&self) -> Filters {
        let mut f = Filters {
            white: self.white.clone(),
            black: self.black.clone(),
            pawns: self.pawns.clone(),
            no_pawns: self.no_pawns.clone(),
            structure: self.structure.clone(),
            structure_name: self.structure_name.clone(),
            ply: self.ply.clone(),
            sort: self.sort.clone(),
            reverse: self.reverse,
            ..Filters::default()
        };
        self.games.fill(&mut f);
        f
    }
}

/// The search described by a `find` command line.
pub fn search(args: &FindArgs) -> Result<Search> {
    if args.per == Per::Position {
        for (given, flag) in [(args.sort.is_some(), "--sort"), (args.reverse, "--reverse")] {
            if given {
                crate::model::usage!(
                    "{flag} orders games: give --per game with it (positions come in game and \
                     ply order)"
                );
            }
        }
    }
    crate::engine::find::search(&args.filters())
}

fn rows(per: Per) -> Rows {
    match per {
        Per::Position => Rows::PositionsWithGame,
        Per::Game => Rows::Games,
    }
}

/// `--print-sql`: the SQL, preceded by its parameter values as comments.
pub(crate) fn print_sql(sql: &Sql) -> Result<()> {
    let mut out = io::stdout().lock();
    if !sql.params.is_empty() {
        writeln!(
            out,
            "-- Parameters (pawndex query FILE --param NAME=VALUE, or .param set :NAME VALUE in sqlite3):"
        )?;
        for (name, value) in &sql.params {
            let v = match value {
                Value::Integer(i) => i.to_string(),
                Value::Text(t) => format!("'{}'", t.replace('\'', "''")),
                other => format!("{other:?}"),
            };
            writeln!(out, "--   :{name} = {v}")?;
        }
    }
    writeln!(out, "{};", sql.text)?;
    Ok(())
}

pub fn run(args: FindArgs) -> Result<i32> {
    query::exit_status(run_inner(args))
}

fn run_inner(args: FindArgs) -> Result<i32> {
    let mut search = search(&args)?;
    // --print-sql needs no database: without one, the names stay as typed.
    let names = !search.structures.is_empty() || !args.games.player_name.is_empty();
    if names && (!args.print_sql || args.output.db.exists()) {
        resolve_names(&query::open(&args.output.db)?, &mut search)?;
    }
    if args.print_sql {
        print_sql(&search.rows_sql(Form::Scan, rows(args.per)))?;
        return Ok(0);
    }
    if !args.output.count {
        crate::engine::find::rank_typical(
            &query::open(&args.output.db)?,
            &args.filters(),
            &mut search,
        )?;
    }

    query::execute(
        &query::Plan::Search(search, rows(args.per)),
        &[],
        &args.output,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::find::{date_range, eco_range, side_squares};
    use crate::model::fen::structure_of;
    use crate::store::read::search::{Feature, GameCond, Op, RunCond, SetCond, Side};
    use clap::Parser;
    use shakmaty::Color;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        find: FindArgs,
    }

    /// `--help` names every side feature: a new one fails here until FEATURE describes it.
    #[test]
    fn help_names_every_feature() {
        use clap::CommandFactory;
        let help = Cli::command().render_long_help().to_string();
        for f in Feature::all() {
            assert!(help.contains(f.name()), "{} is not in --help", f.name());
        }
    }

    fn args(list: &[&str]) -> FindArgs {
        Cli::try_parse_from(std::iter::once("find").chain(list.iter().copied()))
            .unwrap()
            .find
    }

    fn error(list: &[&str]) -> String {
        search(&args(list)).unwrap_err().to_string()
    }

    #[test]
    fn bad_arguments_name_the_argument() {
        assert!(error(&["--white", "quartet"]).contains("--white quartet"));
        assert!(error(&["--black", "islands>=x"]).contains("--black islands>=x"));
        assert!(error(&["--pawns", "wd9"]).contains("--pawns: \"wd9\""));
        assert!(error(&["--pawns", "d4"]).contains("must start with w"));
        assert!(error(&["--no-pawns", "bz"]).contains("--no-pawns: \"bz\""));
        assert!(error(&["--structure", "8/8/9"]).contains("--structure"));
        assert!(error(&["--ply", "5..2"]).contains("--ply 5..2"));
        assert!(error(&["--pawns", "wd4", "--no-pawns", "wd"]).contains("contradict"));
    }

    #[test]
    fn quote_free_ranges_are_comparisons() {
        const ISLANDS: Feature = Feature::ISLANDS;
        const DISPERSION: Feature = Feature::DISPERSION;
        const DISTORTION: Feature = Feature::DISTORTION;
        let white = |feature: &str| search(&args(&["--white", feature])).unwrap().white;
        assert_eq!(
            white("islands:3.."),
            vec![SetCond::Compare(ISLANDS, Op::Ge, 3)]
        );
        assert_eq!(
            white("dispersion:..2"),
            vec![SetCond::Compare(DISPERSION, Op::Le, 2)]
        );
        assert_eq!(
            white("distortion:2..4"),
            vec![
                SetCond::Compare(DISTORTION, Op::Ge, 2),
                SetCond::Compare(DISTORTION, Op::Le, 4)
            ]
        );
        assert_eq!(
            white("islands:3"),
            vec![SetCond::Compare(ISLANDS, Op::Eq, 3)]
        );
        assert_eq!(white("islands:3.."), white("islands>=3"));
        for bad in ["islands:..", "islands:x..", "islands:", "islandz:3.."] {
            assert!(
                error(&["--white", bad]).contains(&format!("--white {bad}")),
                "{bad}"
            );
        }
        // Every way of writing a feature is named in the error for an unknown one.
        let e = error(&["--white", "foo"]);
        for op in ["islands:3..", "=", "!=", "<", "<=", ">", ">="] {
            assert!(e.contains(op), "{op} missing from: {e}");
        }
    }

    #[test]
    fn eco_and_date_ranges() {
        let eco = |s: &str| eco_range(s).map(|(a, b)| format!("{a}..{b}"));
        assert_eq!(eco("B").unwrap(), "B00..B99");
        assert_eq!(eco("b2").unwrap(), "B20..B29");
        assert_eq!(eco("D35").unwrap(), "D35..D35");
        assert_eq!(eco("A00-E99").unwrap(), "A00..E99");
        assert_eq!(eco("C4-C5").unwrap(), "C40..C59");
        for bad in ["F00", "B123", "B2x", "", "E-A", "-"] {
            assert!(eco_range(bad).is_err(), "{bad}");
        }
        let date = |s: &str| date_range(s).unwrap();
        assert_eq!(date("2020.."), (Some("2020".into()), None));
        assert_eq!(date("..2019-06"), (None, Some("2019.06".into())));
        assert_eq!(
            date("2020/05/17"),
            (Some("2020.05.17".into()), Some("2020.05.17".into()))
        );
        for bad in [
            "..",
            "20..",
            "2020.5..",
            "2021..2020",
            "abcd",
            "2020.05.17.1",
        ] {
            assert!(date_range(bad).is_err(), "{bad}");
        }
        assert!(error(&["--eco", "Z1"]).contains("--eco Z1"));
        assert!(error(&["--date", "x.."]).contains("--date x.."));
        assert!(error(&["--event", " "]).contains("--event"));
    }

    #[test]
    fn squares_and_files() {
        assert_eq!(
            side_squares("--pawns", "wd4", false).unwrap(),
            (Color::White, 1 << 27)
        );
        assert_eq!(
            side_squares("--no-pawns", "Bc", true).unwrap(),
            (Color::Black, 0x0404_0404_0404_0404)
        );
    }

    #[test]
    fn structure_from_fen_or_board() {
        let start = (0xFF00, 0x00FF_0000_0000_0000);
        assert_eq!(
            structure_of("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").unwrap(),
            start
        );
        assert_eq!(
            structure_of("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR").unwrap(),
            start
        );
    }

    #[test]
    fn filters_become_a_search() {
        let s = search(&args(&[
            "--white",
            "islands>=3",
            "--player",
            "O'Kelly",
            "--ply",
            "10..20",
            "--black",
            "no-bishop-pair",
        ]))
        .unwrap();
        assert_eq!(s.white, vec![SetCond::Compare(Feature::ISLANDS, Op::Ge, 3)]);
        assert_eq!(s.runs, vec![RunCond::BishopPair(Side::Black, false)]);
        assert_eq!(s.games, vec![GameCond::Player("O'Kelly".into())]);
        assert_eq!(s.plies, (10, 20));
        let sql = s.rows_sql(Form::Scan, Rows::Games);
        assert!(!sql.text.contains("O'Kelly"));
        assert!(sql.text.contains("JOIN games AS g ON g.id = r.game_id"));
    }
}
