//! `pawndex find`: position search by pawn-structure, game and ply filters, without writing SQL.
//! The filters compile to one parameterised query of the same shape as the named queries
//! (`matching_structures`, `matching_runs`, expansion into plies); `--print-sql` shows it.

use std::fmt::Write as _;
use std::io::{self, Write};

use anyhow::Result;
use clap::{Args, ValueEnum};
use rusqlite::types::Value;
use shakmaty::fen::Fen;
use shakmaty::{Board, Color, File, Square};

use crate::output::OutputArgs;
use crate::query::{self, Count, usage};

#[derive(Args, Debug)]
#[command(
    after_help = "Filters combine with AND. The search compiles to parameterised SQL \
(see --print-sql), run read-only.\n\n\
FEATURE (for --white and --black):
  duo, trio, quart             the side has such a group of pawns side by side
  bishop-pair, no-bishop-pair  the side has (not) a bishop on each colour
  islands>=N, islands=N, …     also <=, <, >, != ; and dispersion, distortion

Exit status: 0 success, 1 error, 2 bad command line (the message names the argument).

Examples:
  pawndex find --white quart --black islands>=3 --limit 20
  pawndex find --pawns \"wd4 we3 bd5 bc6\" --no-pawns \"wc be\" --per game
  pawndex find --structure \"rnbqkbnr/pp3ppp/2p5/3p4/3P4/4P3/PP3PPP/RNBQKBNR w KQkq - 0 5\"
  pawndex find --white bishop-pair --black no-bishop-pair --ply 40.. --result 1-0 --count
  pawndex find --player Carlsen --white islands>=3 --per game --format pgn > games.pgn"
)]
pub struct FindArgs {
    /// A White feature (repeatable): duo, trio, quart, bishop-pair, no-bishop-pair, islands=N,
    /// islands>=N, dispersion>=N, distortion>=N, …
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
    /// Plies A..B, both included (A.., ..B, or one ply N)
    #[arg(long, value_name = "A..B")]
    pub ply: Option<String>,
    /// Game result
    #[arg(long, value_parser = ["1-0", "0-1", "1/2-1/2", "*"])]
    pub result: Option<String>,
    /// Both players rated at least N (games without both ratings are left out)
    #[arg(long, value_name = "N")]
    pub min_elo: Option<i64>,
    /// White or Black name contains NAME (ASCII letters in any case)
    #[arg(long, value_name = "NAME")]
    pub player: Option<String>,
    /// One row per matching position, or per game (its first matching ply)
    #[arg(long, value_enum, default_value_t = Per::Position)]
    pub per: Per,
    /// Print the SQL and its parameters instead of running it
    #[arg(long, conflicts_with = "count")]
    pub print_sql: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Per {
    /// One row per matching position
    Position,
    /// One row per game, at its first matching ply
    Game,
}

/// A compiled search: the query, its count query and their parameters.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub sql: String,
    pub count_sql: String,
    pub params: Vec<(String, Value)>,
}

/// Condition lists per table, with the parameters they use.
#[derive(Default)]
struct Filters {
    structure: Vec<String>,
    run: Vec<String>,
    game: Vec<String>,
    params: Vec<(String, Value)>,
    /// Plies (from, to), when restricted.
    plies: Option<(u32, u32)>,
    /// An exact structure: fetch its runs through the index rather than walking all runs.
    exact: bool,
}

impl Filters {
    /// Adds a parameter named `name` (`name_2`, `name_3`, … when taken) and returns it as
    /// `:name` for the SQL.
    fn param(&mut self, name: &str, value: impl Into<Value>) -> String {
        let mut unique = name.to_string();
        let mut n = 1;
        while self.params.iter().any(|(p, _)| *p == unique) {
            n += 1;
            unique = format!("{name}_{n}");
        }
        self.params.push((unique.clone(), value.into()));
        format!(":{unique}")
    }
}

fn side_name(color: Color) -> &'static str {
    match color {
        Color::White => "white",
        Color::Black => "black",
    }
}

/// Adds the condition of one `--white`/`--black` FEATURE.
fn feature(f: &mut Filters, color: Color, text: &str) -> Result<()> {
    let side = side_name(color);
    let flag = format!("--{side}");
    let t = text.trim().to_ascii_lowercase();
    match t.as_str() {
        "duo" | "trio" | "quart" => {
            f.structure.push(format!("s.{side}_{t} != 0"));
            return Ok(());
        }
        "bishop-pair" | "no-bishop-pair" => {
            let bit = if color == Color::White { 1 } else { 2 };
            let want = if t == "bishop-pair" { bit } else { 0 };
            f.run.push(format!("(p.bishop_pairs & {bit}) = {want}"));
            return Ok(());
        }
        _ => {}
    }
    let Some(at) = t.find(|c: char| "=<>!".contains(c)) else {
        usage!(
            "{flag} {text}: unknown feature; expected duo, trio, quart, bishop-pair, \
             no-bishop-pair, islands=N, islands>=N, dispersion>=N or distortion>=N"
        );
    };
    let (name, rest) = t.split_at(at);
    let name = name.trim();
    if !["islands", "dispersion", "distortion"].contains(&name) {
        usage!(
            "{flag} {text}: unknown feature \"{name}\"; numeric features are islands, \
             dispersion and distortion"
        );
    }
    let op_len = rest
        .find(|c: char| !"=<>!".contains(c))
        .unwrap_or(rest.len());
    let (op, number) = rest.split_at(op_len);
    let op = match op {
        "=" | "==" => "=",
        ">=" | "<=" | ">" | "<" | "!=" => op,
        _ => usage!("{flag} {text}: unknown comparison \"{op}\"; use =, !=, <, <=, > or >="),
    };
    let Ok(n) = number.trim().parse::<i64>() else {
        usage!("{flag} {text}: \"{}\" is not a whole number", number.trim());
    };
    let p = f.param(&format!("{side}_{name}"), n);
    f.structure.push(format!("s.{side}_{name} {op} {p}"));
    Ok(())
}

/// Parses one side-prefixed token of --pawns/--no-pawns: (colour, squares as a bitboard).
fn side_squares(flag: &str, token: &str, files_allowed: bool) -> Result<(Color, u64)> {
    let lower = token.to_ascii_lowercase();
    let (color, rest) = match lower.split_at_checked(1) {
        Some(("w", rest)) => (Color::White, rest),
        Some(("b", rest)) => (Color::Black, rest),
        _ => usage!(
            "{flag}: \"{token}\" must start with w (White) or b (Black), as in \"wd4\"{}",
            if files_allowed { " or \"wc\"" } else { "" }
        ),
    };
    if files_allowed
        && rest.len() == 1
        && let Some(file) = rest.chars().next().and_then(File::from_char)
    {
        return Ok((color, 0x0101_0101_0101_0101u64 << u32::from(file)));
    }
    match rest.parse::<Square>() {
        Ok(sq) => Ok((color, 1u64 << u32::from(sq))),
        Err(_) if files_allowed => {
            usage!("{flag}: \"{token}\" is not a file (a..h) or square (a1..h8) after w/b")
        }
        Err(_) => usage!("{flag}: \"{token}\" is not a square (a1..h8) after w/b"),
    }
}

/// Splits repeatable, space- or comma-separated token lists.
fn tokens(values: &[String]) -> impl Iterator<Item = &str> {
    values
        .iter()
        .flat_map(|v| v.split(|c: char| c.is_whitespace() || c == ','))
        .filter(|t| !t.is_empty())
}

/// Pawn bitboards (white, black) of a FEN or a FEN board part.
fn structure_of(text: &str) -> Result<(u64, u64)> {
    let t = text.trim();
    let board = match Fen::from_ascii(t.as_bytes()) {
        Ok(fen) => fen.as_setup().board.clone(),
        Err(full) => match Board::from_ascii_board_fen(t.as_bytes()) {
            Ok(board) => board,
            Err(_) => usage!("--structure: \"{text}\" is not a valid FEN: {full}"),
        },
    };
    let pawns = board.pawns();
    Ok(((pawns & board.white()).0, (pawns & board.black()).0))
}

/// Parses `A..B`, `A..`, `..B` or `N`.
fn ply_range(text: &str) -> Result<(u32, u32)> {
    let t = text.trim();
    let bad = || -> Result<(u32, u32)> {
        usage!("--ply {text}: expected A..B, A.., ..B or N with whole numbers of plies (0 or more)")
    };
    let number = |s: &str, default: u32| -> Option<u32> {
        let s = s.trim();
        if s.is_empty() {
            Some(default)
        } else {
            s.parse().ok()
        }
    };
    let (from, to) = match t.split_once("..") {
        Some((a, b)) => match (number(a, 0), number(b, u32::MAX)) {
            (Some(a), Some(b)) if !t.is_empty() && t != ".." => (a, b),
            _ => return bad(),
        },
        None => match t.parse::<u32>() {
            Ok(n) => (n, n),
            Err(_) => return bad(),
        },
    };
    if from > to {
        usage!("--ply {text}: the range is empty ({from} > {to})");
    }
    Ok((from, to))
}

/// Escapes `%`, `_` and `\` for LIKE … ESCAPE '\'.
fn like_pattern(name: &str) -> String {
    let mut p = String::from("%");
    for c in name.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

fn collect(args: &FindArgs) -> Result<Filters> {
    let mut f = Filters::default();
    for t in &args.white {
        feature(&mut f, Color::White, t)?;
    }
    for t in &args.black {
        feature(&mut f, Color::Black, t)?;
    }
    let mut required = [0u64; 2];
    for t in tokens(&args.pawns) {
        let (color, bb) = side_squares("--pawns", t, false)?;
        required[color as usize] |= bb;
    }
    let mut absent = [0u64; 2];
    for t in tokens(&args.no_pawns) {
        let (color, bb) = side_squares("--no-pawns", t, true)?;
        absent[color as usize] |= bb;
    }
    for color in [Color::White, Color::Black] {
        let side = side_name(color);
        let (req, abs) = (required[color as usize], absent[color as usize]);
        if req & abs != 0 {
            usage!(
                "--pawns and --no-pawns contradict each other for {side} (a square is both \
                 required and excluded)"
            );
        }
        if req != 0 {
            let p = f.param(&format!("{side}_pawns_required"), req as i64);
            f.structure.push(format!("(s.{side}_pawns & {p}) = {p}"));
        }
        if abs != 0 {
            let p = f.param(&format!("{side}_pawns_excluded"), abs as i64);
            f.structure.push(format!("(s.{side}_pawns & {p}) = 0"));
        }
    }
    if let Some(fen) = &args.structure {
        let (white, black) = structure_of(fen)?;
        let w = f.param("white_pawns", white as i64);
        let b = f.param("black_pawns", black as i64);
        f.structure.push(format!("s.white_pawns = {w}"));
        f.structure.push(format!("s.black_pawns = {b}"));
        f.exact = true;
    }
    if let Some(range) = &args.ply {
        let (from, to) = ply_range(range)?;
        if from > 0 {
            let p = f.param("ply_from", i64::from(from));
            f.run.push(format!("p.last_ply >= {p}"));
        }
        if to < u32::MAX {
            let p = f.param("ply_to", i64::from(to));
            f.run.push(format!("p.first_ply <= {p}"));
        }
        f.plies = Some((from, to)).filter(|&r| r != (0, u32::MAX));
    }
    if let Some(result) = &args.result {
        let p = f.param("result", result.clone());
        f.game.push(format!("g.result = {p}"));
    }
    if let Some(elo) = args.min_elo {
        let p = f.param("min_elo", elo);
        f.game
            .push(format!("g.white_elo >= {p} AND g.black_elo >= {p}"));
    }
    if let Some(name) = &args.player {
        if name.trim().is_empty() {
            usage!("--player: the name is empty");
        }
        let p = f.param("player", like_pattern(name.trim()));
        f.game.push(format!(
            "(g.white LIKE {p} ESCAPE '\\' OR g.black LIKE {p} ESCAPE '\\')"
        ));
    }
    Ok(f)
}

/// Compiles the filters of a `find` command into SQL.
pub fn compile(args: &FindArgs) -> Result<Compiled> {
    let f = collect(args)?;
    let first_rows = args.output.limit.is_some();
    let mut sql = String::new();
    let mut runs_where: Vec<String> = Vec::new();
    sql.push_str("WITH ");
    if !f.structure.is_empty() {
        let _ = write!(
            sql,
            "matching_structures AS (\n    SELECT s.id\n    FROM structures AS s\n    WHERE {}\n),\n",
            f.structure.join("\n      AND ")
        );
        if f.exact {
            // One structure (unique in `structures`): its runs through the index on
            // positions(structure_id), already in (game_id, first_ply) order.
            runs_where.push("p.structure_id = (SELECT id FROM matching_structures)".to_string());
        } else if first_rows {
            // Only the first rows: walk runs in key order, looking up each run's structure.
            runs_where.push(
                "EXISTS (SELECT 1 FROM matching_structures AS m WHERE m.id = p.structure_id)"
                    .to_string(),
            );
        }
    }
    runs_where.extend(f.run.iter().cloned());
    runs_where.extend(f.game.iter().cloned());
    sql.push_str("matching_runs AS (\n    SELECT p.game_id, p.first_ply, p.last_ply\n    FROM positions AS p\n");
    if !f.structure.is_empty() && !f.exact && !first_rows {
        // Every match: SQLite checks each run against a Bloom filter of the structures.
        sql.push_str("    JOIN matching_structures AS m ON m.id = p.structure_id\n");
    }
    if !f.game.is_empty() {
        sql.push_str("    JOIN games AS g ON g.id = p.game_id\n");
    }
    if !runs_where.is_empty() {
        let _ = writeln!(sql, "    WHERE {}", runs_where.join("\n      AND "));
    }
    sql.push_str(")\n");
    let head = sql.clone();

    // The plies of a run inside the --ply range.
    let (first, last) = match f.plies {
        Some((from, to)) => (
            if from > 0 {
                "max(r.first_ply, :ply_from)"
            } else {
                "r.first_ply"
            },
            if to < u32::MAX {
                "min(r.last_ply, :ply_to)"
            } else {
                "r.last_ply"
            },
        ),
        None => ("r.first_ply", "r.last_ply"),
    };
    let columns = "g.white, g.black, g.result, g.date";
    match args.per {
        Per::Position => {
            let _ = write!(
                sql,
                "SELECT r.game_id, n.n AS ply, {columns}\nFROM matching_runs AS r\n\
                 JOIN ply_numbers AS n ON n.n BETWEEN {first} AND {last}\n\
                 JOIN games AS g ON g.id = r.game_id\nORDER BY r.game_id, r.first_ply, n.n"
            );
        }
        Per::Game => {
            let _ = write!(
                sql,
                "SELECT f.game_id, f.ply, {columns}\nFROM (\n    \
                 SELECT r.game_id, min({first}) AS ply\n    FROM matching_runs AS r\n    \
                 GROUP BY r.game_id\n) AS f\nJOIN games AS g ON g.id = f.game_id\n\
                 ORDER BY f.game_id"
            );
        }
    }
    let count_sql = match args.per {
        Per::Position => format!(
            "{head}SELECT coalesce(sum({last} - {first} + 1), 0) AS positions\nFROM matching_runs AS r"
        ),
        Per::Game => format!(
            "{head}SELECT count(*) AS games\nFROM (SELECT r.game_id FROM matching_runs AS r GROUP BY r.game_id)"
        ),
    };
    Ok(Compiled {
        sql,
        count_sql,
        params: f.params,
    })
}

/// `--print-sql`: the SQL, preceded by its parameter values as comments.
fn print_sql(c: &Compiled, count: bool) -> Result<()> {
    let mut out = io::stdout().lock();
    if !c.params.is_empty() {
        writeln!(
            out,
            "-- Parameters (pawndex query FILE --param NAME=VALUE, or .param set :NAME VALUE in sqlite3):"
        )?;
        for (name, value) in &c.params {
            let v = match value {
                Value::Integer(i) => i.to_string(),
                Value::Text(t) => format!("'{}'", t.replace('\'', "''")),
                other => format!("{other:?}"),
            };
            writeln!(out, "--   :{name} = {v}")?;
        }
    }
    writeln!(out, "{};", if count { &c.count_sql } else { &c.sql })?;
    Ok(())
}

pub fn run(args: FindArgs) -> Result<i32> {
    query::exit_status(run_inner(args))
}

fn run_inner(args: FindArgs) -> Result<i32> {
    let compiled = compile(&args)?;
    if args.print_sql {
        print_sql(&compiled, false)?;
        return Ok(0);
    }
    let count = match args.per {
        Per::Position => match query::structure_ids_sql(&compiled.sql) {
            Some(ids) => Count::Structures(ids),
            None => Count::Sql(compiled.count_sql.clone()),
        },
        Per::Game => Count::Sql(compiled.count_sql.clone()),
    };
    query::execute(&compiled.sql, &count, &compiled.params, &args.output)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        find: FindArgs,
    }

    fn args(list: &[&str]) -> FindArgs {
        Cli::try_parse_from(std::iter::once("find").chain(list.iter().copied()))
            .unwrap()
            .find
    }

    fn error(list: &[&str]) -> String {
        compile(&args(list)).unwrap_err().to_string()
    }

    #[test]
    fn ranges() {
        assert_eq!(ply_range("10..20").unwrap(), (10, 20));
        assert_eq!(ply_range("10..").unwrap(), (10, u32::MAX));
        assert_eq!(ply_range("..20").unwrap(), (0, 20));
        assert_eq!(ply_range("7").unwrap(), (7, 7));
        for bad in ["..", "a..b", "20..10", "-1..3", ""] {
            assert!(ply_range(bad).is_err(), "{bad}");
        }
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
    fn compiled_sql_uses_parameters() {
        let c = compile(&args(&[
            "--white",
            "islands>=3",
            "--player",
            "O'Kelly",
            "--ply",
            "10..20",
        ]))
        .unwrap();
        assert!(!c.sql.contains("O'Kelly"));
        assert!(c.sql.contains("s.white_islands >= :white_islands"));
        let two = compile(&args(&["--white", "islands>=2", "--white", "islands<=4"])).unwrap();
        assert!(two.sql.contains("s.white_islands >= :white_islands\n"));
        assert!(two.sql.contains("s.white_islands <= :white_islands_2\n"));
        assert!(c.sql.contains("JOIN games AS g ON g.id = p.game_id"));
        assert!(
            c.params
                .iter()
                .any(|(n, v)| n == "player" && *v == Value::Text("%O'Kelly%".into()))
        );
    }
}
