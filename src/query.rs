//! `pawndex query`: named queries (the `.sql` files of `queries/`, embedded in the binary), SQL
//! files and ad-hoc SQL, run read-only against a pawndex database and written in any
//! [`Format`](crate::output::Format).

use std::fmt;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};
use clap::Args;
use rusqlite::types::Value;
use rusqlite::{Connection, Statement};

use crate::output::{self, OutputArgs};
use crate::storage;

#[derive(Args, Debug)]
#[command(
    after_help = "Named queries return one row per matching position (game_id, ply), \
ordered by game and ply; --list names them. The database is opened read-only.\n\n\
Exit status: 0 success, 1 error (SQL error, missing database), 2 bad command line.\n\n\
Examples:
  pawndex query --list
  pawndex query white-quart --limit 20
  pawndex query carlsbad --count
  pawndex query carlsbad --format pgn > carlsbad.pgn
  pawndex query exact-structure --param white_pawns=0x1000EF00 \\
      --param black_pawns=0xEF001000000000
  pawndex query --sql \"SELECT id AS game_id FROM games WHERE result = '0-1'\" -f csv"
)]
pub struct QueryArgs {
    /// A named query (see --list) or a .sql file
    #[arg(
        value_name = "NAME|FILE.sql",
        required_unless_present_any = ["sql", "list"],
        conflicts_with_all = ["sql", "list"]
    )]
    pub query: Option<String>,
    /// Ad-hoc SQL to run instead of a named query or file
    #[arg(
        long,
        value_name = "SQL",
        conflicts_with = "list",
        allow_hyphen_values = true
    )]
    pub sql: Option<String>,
    /// Value for a named parameter of the query (:NAME); integers may be written in hex (0x…)
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// List the named queries with their descriptions
    #[arg(long)]
    pub list: bool,
    /// Print the query's SQL instead of running it
    #[arg(long, conflicts_with = "count")]
    pub print_sql: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// A mistake on the command line (a bad name, value or argument): exit status 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Returns a [`UsageError`] from the current function.
macro_rules! usage {
    ($($arg:tt)*) => {
        return Err(anyhow::Error::new($crate::query::UsageError(format!($($arg)*))))
    };
}
pub(crate) use usage;

/// Maps the outcome of a command to its exit status: usage errors print and give 2, a closed
/// output pipe ends quietly with 0, other errors go up to the caller (status 1).
pub(crate) fn exit_status(result: Result<i32>) -> Result<i32> {
    match result {
        Err(e) if e.downcast_ref::<UsageError>().is_some() => {
            eprintln!("pawndex: error: {e}");
            Ok(2)
        }
        Err(e) if output::is_broken_pipe(&e) => Ok(0),
        other => other,
    }
}

macro_rules! named_queries {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../queries/", $name, ".sql")))),*]
    };
}

/// The named queries: (name, SQL text of `queries/NAME.sql`).
pub const NAMED_SQL: &[(&str, &str)] = named_queries![
    "white-duo",
    "black-duo",
    "white-trio",
    "black-trio",
    "white-quart",
    "black-quart",
    "white-bishop-pair",
    "black-bishop-pair",
    "white-three-islands",
    "black-three-islands",
    "white-isolated-queen-pawn",
    "black-isolated-queen-pawn",
    "white-hanging-pawns",
    "black-hanging-pawns",
    "carlsbad",
    "reversed-carlsbad",
    "white-stonewall",
    "black-stonewall",
    "white-maroczy-bind",
    "black-maroczy-bind",
    "exact-structure",
];

/// A named query: its name, the one-line description from its opening comment, its SQL.
#[derive(Copy, Clone, Debug)]
pub struct NamedQuery {
    pub name: &'static str,
    pub description: &'static str,
    pub sql: &'static str,
}

/// The description in a query file's opening comment, `-- NAME: description`.
#[must_use]
pub fn description(name: &str, sql: &'static str) -> Option<&'static str> {
    let first = sql.lines().next()?;
    let rest = first.strip_prefix("-- ")?.strip_prefix(name)?;
    Some(rest.strip_prefix(": ")?.trim())
}

/// Every named query, in catalogue order.
#[must_use]
pub fn named_queries() -> Vec<NamedQuery> {
    NAMED_SQL
        .iter()
        .map(|&(name, sql)| NamedQuery {
            name,
            description: description(name, sql).unwrap_or(""),
            sql,
        })
        .collect()
}

/// The named query called `name`.
#[must_use]
pub fn named(name: &str) -> Option<NamedQuery> {
    named_queries().into_iter().find(|q| q.name == name)
}

/// Names close to a mistyped one, closest first.
#[must_use]
pub fn closest_names(name: &str) -> Vec<&'static str> {
    // Words in any order count as close: "carlsbad-reversed" finds "reversed-carlsbad".
    let words = |s: &str| {
        let mut w: Vec<&str> = s.split(['-', '_', ' ']).filter(|w| !w.is_empty()).collect();
        w.sort_unstable();
        w.join("-")
    };
    let wanted = name.to_ascii_lowercase();
    let mut scored: Vec<(f64, &'static str)> = NAMED_SQL
        .iter()
        .map(|&(n, _)| {
            let mut score = strsim::jaro_winkler(&wanted, n)
                .max(strsim::jaro_winkler(&words(&wanted), &words(n)));
            if n.contains(wanted.as_str()) {
                score += 0.2;
            }
            (score, n)
        })
        .filter(|&(s, _)| s >= 0.8)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().take(3).map(|(_, n)| n).collect()
}

// ---------------------------------------------------------------------------------------------
// Reading SQL text: where the first statement ends, where the final SELECT starts
// ---------------------------------------------------------------------------------------------

/// A token of interest while scanning SQL.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Mark {
    /// A `;` (its byte offset).
    Semicolon(usize),
    /// A `SELECT` keyword at parenthesis depth 0.
    Select(usize),
    /// `(` and `)`.
    Open(usize),
    Close(usize),
    /// A comment, from its first byte to the byte after it.
    Comment(usize, usize),
}

/// Scans SQL text for semicolons, top-level SELECT keywords, parentheses and comments, skipping
/// strings ('…') and quoted identifiers ("…", `…`, […]).
fn scan(sql: &str) -> Vec<Mark> {
    let b = sql.as_bytes();
    let mut marks = Vec::new();
    let mut depth = 0i32;
    let mut i = 0;
    let skip_to = |from: usize, end: &[u8]| -> usize {
        b[from.min(b.len())..]
            .windows(end.len())
            .position(|w| w == end)
            .map_or(b.len(), |p| from + p + end.len())
    };
    while i < b.len() {
        match b[i] {
            b'\'' => i = skip_to(i + 1, b"'"),
            b'"' => i = skip_to(i + 1, b"\""),
            b'`' => i = skip_to(i + 1, b"`"),
            b'[' => i = skip_to(i + 1, b"]"),
            b'-' if b.get(i + 1) == Some(&b'-') => {
                let end = skip_to(i + 2, b"\n");
                marks.push(Mark::Comment(i, end));
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = skip_to(i + 2, b"*/");
                marks.push(Mark::Comment(i, end));
                i = end;
            }
            b'(' => {
                marks.push(Mark::Open(i));
                depth += 1;
                i += 1;
            }
            b')' => {
                marks.push(Mark::Close(i));
                depth -= 1;
                i += 1;
            }
            b';' => {
                marks.push(Mark::Semicolon(i));
                i += 1;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$')
                {
                    i += 1;
                }
                if depth == 0 && sql[start..i].eq_ignore_ascii_case("select") {
                    marks.push(Mark::Select(start));
                }
            }
            _ => i += 1,
        }
    }
    marks
}

/// The first statement of `sql`, without its `;` and anything after it.
#[must_use]
pub fn first_statement(sql: &str) -> &str {
    let end = scan(sql)
        .into_iter()
        .find_map(|m| match m {
            Mark::Semicolon(i) => Some(i),
            _ => None,
        })
        .unwrap_or(sql.len());
    sql[..end].trim_end()
}

/// SQL without comments, with every run of whitespace made one space.
fn normalized(sql: &str) -> String {
    let mut text = String::with_capacity(sql.len());
    let mut at = 0;
    for m in scan(sql) {
        if let Mark::Comment(start, end) = m {
            text.push_str(&sql[at..start]);
            text.push(' ');
            at = end;
        }
    }
    text.push_str(&sql[at..]);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The body of the common table expression `name AS (…)` of a statement.
fn cte_body<'a>(statement: &'a str, name: &str) -> Option<&'a str> {
    let marks = scan(statement);
    let in_comment = |i: usize| {
        marks
            .iter()
            .any(|m| matches!(*m, Mark::Comment(s, e) if s <= i && i < e))
    };
    let needle = format!("{name} AS (");
    let start = statement
        .match_indices(&needle)
        .map(|(i, _)| i)
        .find(|&i| !in_comment(i))?;
    let open = start + needle.len() - 1;
    let mut depth = 0;
    for m in &marks {
        match *m {
            Mark::Open(i) if i >= open => depth += 1,
            Mark::Close(i) if i > open => {
                depth -= 1;
                if depth == 0 {
                    return Some(&statement[open + 1..i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// The statement up to its final top-level SELECT (the `WITH …` part), when it has a
/// `matching_runs` common table expression.
fn with_head(sql: &str) -> Option<&str> {
    let statement = first_statement(sql);
    cte_body(statement, "matching_runs")?;
    let last_select = scan(statement)
        .into_iter()
        .filter_map(|m| match m {
            Mark::Select(i) => Some(i),
            _ => None,
        })
        .next_back()?;
    Some(&statement[..last_select])
}

/// For a query written as `WITH … matching_runs AS (…) SELECT …` (the shape of the named
/// queries: runs of plies, then their expansion into plies), the SQL that counts the plies of
/// the runs without expanding them. `None` for any other shape.
#[must_use]
pub fn runs_count_sql(sql: &str) -> Option<String> {
    let head = with_head(sql)?;
    Some(format!(
        "{head}SELECT coalesce(sum(last_ply - first_ply + 1), 0) AS positions FROM matching_runs"
    ))
}

/// The ways the named queries (and `find`) write "the runs whose pawn structure is one of
/// matching_structures": a join (SQLite checks each run against a Bloom filter of the
/// structures, fastest for all matches), a lookup per run (first rows at once), or, for one
/// exact structure (unique in `structures`), its runs through the index on
/// `positions(structure_id)`, which holds them in (game_id, first_ply) order.
const JOIN_RUNS: &str = "SELECT p.game_id, p.first_ply, p.last_ply FROM positions AS p \
                         JOIN matching_structures AS m ON m.id = p.structure_id";
const LOOKUP_RUNS: &str = "SELECT p.game_id, p.first_ply, p.last_ply FROM positions AS p WHERE \
                           EXISTS (SELECT 1 FROM matching_structures AS m WHERE m.id = p.structure_id)";
const INDEX_RUNS: &str = "SELECT p.game_id, p.first_ply, p.last_ply FROM positions AS p WHERE \
                          p.structure_id = (SELECT id FROM matching_structures)";

/// The normalised body of the statement's matching_runs, when matching_structures exists too.
fn runs_of_structures(sql: &str) -> Option<(&str, &str, String)> {
    let head = with_head(sql)?;
    cte_body(head, "matching_structures")?;
    let body = cte_body(head, "matching_runs")?;
    Some((head, body, normalized(body)))
}

/// For a query whose matching_runs are exactly the runs whose structure is in
/// matching_structures, the SQL returning those structure ids; such a query's positions are
/// counted by [`crate::count`] without SQL visiting every run.
#[must_use]
pub fn structure_ids_sql(sql: &str) -> Option<String> {
    let (head, _, runs) = runs_of_structures(sql)?;
    [JOIN_RUNS, LOOKUP_RUNS, INDEX_RUNS]
        .contains(&runs.as_str())
        .then(|| format!("{head}SELECT id FROM matching_structures"))
}

/// The same query written to return its first rows at once: a matching_runs that joins
/// matching_structures becomes a lookup per run (EXISTS), so SQLite walks the runs in key order
/// without first reading every structure into a Bloom filter. `None` when there is nothing to
/// change.
#[must_use]
pub fn first_rows_sql(sql: &str) -> Option<String> {
    let (_, body, runs) = runs_of_structures(sql)?;
    if runs != JOIN_RUNS {
        return None;
    }
    let start = body.as_ptr() as usize - sql.as_ptr() as usize;
    let end = start + body.len();
    Some(format!(
        "{}\n    SELECT p.game_id, p.first_ply, p.last_ply\n    FROM positions AS p\n    \
         WHERE EXISTS (SELECT 1 FROM matching_structures AS m WHERE m.id = p.structure_id)\n{}",
        &sql[..start],
        &sql[end..]
    ))
}

// ---------------------------------------------------------------------------------------------
// Running SQL
// ---------------------------------------------------------------------------------------------

/// Opens the database read-only, tuned for reading (memory-mapped I/O, a larger page cache).
pub fn open(db: &Path) -> Result<Connection> {
    let conn = storage::open_read_only(db)?;
    conn.execute_batch(
        "PRAGMA query_only = ON;
         PRAGMA mmap_size = 17179869184;
         PRAGMA cache_size = -131072;",
    )?;
    Ok(conn)
}

/// Formats an SQL error with SQLite's message and the SQL, the failing token marked.
fn sql_error(e: &rusqlite::Error, sql: &str) -> anyhow::Error {
    let (message, offset) = match e {
        rusqlite::Error::SqlInputError { msg, offset, .. } => {
            (msg.clone(), usize::try_from(*offset).ok())
        }
        rusqlite::Error::SqliteFailure(_, Some(msg)) => (msg.clone(), None),
        e => (e.to_string(), None),
    };
    let mut msg = format!("SQL error: {message}\nin this SQL:\n");
    let mut at = 0usize;
    for line in sql.trim_end().lines() {
        msg.push_str("  ");
        msg.push_str(line);
        msg.push('\n');
        if let Some(o) = offset
            && o >= at
            && o <= at + line.len()
        {
            let col = line[..o - at].chars().count();
            msg.push_str(&format!("  {}^\n", " ".repeat(col)));
        }
        at += line.len() + 1;
    }
    anyhow::anyhow!(msg.trim_end().to_string())
}

/// Prepares one read-only statement, with a clear error for SQL mistakes and for writes.
pub fn prepare<'c>(conn: &'c Connection, sql: &str) -> Result<Statement<'c>> {
    let stmt = conn.prepare(sql).map_err(|e| match e {
        rusqlite::Error::MultipleStatement => anyhow::anyhow!(
            "SQL error: more than one statement; pawndex query runs one statement at a time"
        ),
        e => sql_error(&e, sql),
    })?;
    if !stmt.readonly() {
        bail!(
            "refusing to run a statement that changes the database: pawndex query only reads \
             (the database is opened read-only)\nin this SQL:\n  {}",
            sql.trim()
        );
    }
    Ok(stmt)
}

/// Parses a parameter value: an integer (decimal, or hex 0x… up to 64 bits, read as the signed
/// integer with the same bits, like the stored bitboards), a real number, or text.
#[must_use]
pub fn parse_value(v: &str) -> Value {
    let t = v.trim();
    let (negative, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let parsed = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        u64::from_str_radix(hex, 16).ok()
    } else if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
        digits.parse::<u64>().ok()
    } else {
        None
    };
    match parsed {
        Some(u) if negative => match i64::try_from(u) {
            Ok(i) => Value::Integer(-i),
            Err(_) => Value::Text(v.to_string()),
        },
        Some(u) => Value::Integer(u as i64),
        None => match t.parse::<f64>() {
            Ok(f) if f.is_finite() && t.contains(['.', 'e', 'E']) => Value::Real(f),
            _ => Value::Text(v.to_string()),
        },
    }
}

/// Binds `NAME=VALUE` pairs to the statement's named parameters; every parameter must get a
/// value and every value must name a parameter.
pub fn bind_params(stmt: &mut Statement<'_>, params: &[(String, Value)]) -> Result<()> {
    let mut wanted = Vec::new();
    for i in 1..=stmt.parameter_count() {
        match stmt.parameter_name(i) {
            Some(n) => wanted.push((i, n[1..].to_string())),
            None => usage!(
                "the SQL uses a positional parameter (?); name it (:name) and pass \
                 --param name=VALUE"
            ),
        }
    }
    for (name, _) in params {
        if !wanted.iter().any(|(_, n)| n == name) {
            let known: Vec<String> = wanted.iter().map(|(_, n)| n.clone()).collect();
            usage!(
                "--param {name}: the query has no parameter :{name} (its parameters: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            );
        }
    }
    for (i, name) in &wanted {
        let Some((_, value)) = params.iter().rev().find(|(n, _)| n == name) else {
            usage!("the query needs a value for :{name}: add --param {name}=VALUE");
        };
        stmt.raw_bind_parameter(*i, value)?;
    }
    Ok(())
}

/// Parses the `--param NAME=VALUE` arguments.
fn parse_params(args: &[String]) -> Result<Vec<(String, Value)>> {
    let mut out = Vec::new();
    for a in args {
        let Some((name, value)) = a.split_once('=') else {
            usage!("--param {a}: expected NAME=VALUE");
        };
        let name = name.trim().trim_start_matches([':', '@', '$']);
        if name.is_empty() {
            usage!("--param {a}: the parameter name is empty");
        }
        out.push((name.to_string(), parse_value(value)));
    }
    Ok(out)
}

/// How `--count` counts a query's positions.
#[derive(Clone, Debug)]
pub enum Count {
    /// `SELECT count(*)` over the query's rows.
    Rows,
    /// A query that returns the count (such as [`runs_count_sql`]).
    Sql(String),
    /// The plies of the runs whose structure id is returned by this query
    /// ([`structure_ids_sql`], counted by [`crate::count`]).
    Structures(String),
}

impl Count {
    /// The fastest correct way to count the positions of `sql`.
    #[must_use]
    pub fn plan(sql: &str) -> Count {
        if let Some(ids) = structure_ids_sql(sql) {
            Count::Structures(ids)
        } else if let Some(count) = runs_count_sql(sql) {
            Count::Sql(count)
        } else {
            Count::Rows
        }
    }
}

/// Runs a query (or counts its rows) and writes the results to stdout.
pub(crate) fn execute(
    sql: &str,
    count: &Count,
    params: &[(String, Value)],
    output: &OutputArgs,
) -> Result<i32> {
    let conn = open(&output.db)?;
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    if output.count {
        let n = match count {
            Count::Structures(ids_sql) => {
                crate::count::positions_with_structures(&output.db, ids_sql, params)?
            }
            Count::Sql(count_sql) => count_with_sql(&conn, count_sql, params)?,
            Count::Rows => {
                let count_sql = format!(
                    "SELECT count(*) AS positions FROM (\n{}\n)",
                    first_statement(sql)
                );
                count_with_sql(&conn, &count_sql, params)?
            }
        };
        writeln!(out, "{n}")?;
        out.flush()?;
        return Ok(0);
    }
    // Only the first rows are wanted: a plan that returns them at once beats the fastest plan
    // for all rows.
    let first_rows = output.limit.and_then(|_| first_rows_sql(sql));
    let sql = first_rows.as_deref().unwrap_or(sql);
    let mut stmt = prepare(&conn, sql)?;
    bind_params(&mut stmt, params)?;
    output::write_results(&conn, &mut stmt, output.format, output.limit, &mut out).map_err(
        |e| match e.downcast::<rusqlite::Error>() {
            Ok(e) => sql_error(&e, sql),
            Err(e) => e,
        },
    )?;
    out.flush()?;
    Ok(0)
}

/// Runs a query whose first column of its first row is a count.
fn count_with_sql(conn: &Connection, sql: &str, params: &[(String, Value)]) -> Result<u64> {
    let mut stmt = prepare(conn, sql)?;
    bind_params(&mut stmt, params)?;
    let mut rows = stmt.raw_query();
    let row = rows
        .next()
        .map_err(|e| sql_error(&e, sql))?
        .context("the count query returned no row")?;
    let n: i64 = row.get(0)?;
    Ok(n as u64)
}

fn list() -> Result<i32> {
    let queries = named_queries();
    let width = queries.iter().map(|q| q.name.len()).max().unwrap_or(0);
    let mut out = io::stdout().lock();
    for q in queries {
        writeln!(out, "{:width$}  {}", q.name, q.description)?;
    }
    Ok(0)
}

/// Where the SQL of `pawndex query` comes from.
///
/// `--count` takes the shortcuts of [`Count::plan`] for the named queries only, whose shape the
/// tests check; SQL from a file or `--sql` is counted row by row.
fn resolve(args: &QueryArgs) -> Result<(String, Count)> {
    if let Some(sql) = &args.sql {
        return Ok((sql.clone(), Count::Rows));
    }
    let name = args.query.as_deref().unwrap_or_default();
    if let Some(q) = named(name) {
        return Ok((q.sql.to_string(), Count::plan(q.sql)));
    }
    let path = Path::new(name);
    if name.ends_with(".sql") || path.is_file() {
        let sql = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read SQL file {}", path.display()))?;
        return Ok((sql, Count::Rows));
    }
    let close = closest_names(name);
    if close.is_empty() {
        usage!("unknown query \"{name}\"; `pawndex query --list` shows the named queries");
    }
    usage!(
        "unknown query \"{name}\"; did you mean {}? (`pawndex query --list` shows them all)",
        close.join(", ")
    )
}

pub fn run(args: QueryArgs) -> Result<i32> {
    exit_status(run_inner(args))
}

fn run_inner(args: QueryArgs) -> Result<i32> {
    if args.list {
        return list();
    }
    let (sql, count) = resolve(&args)?;
    let params = parse_params(&args.params)?;
    if args.print_sql {
        let mut out = io::stdout().lock();
        writeln!(out, "{}", sql.trim_end())?;
        return Ok(0);
    }
    execute(&sql, &count, &params, &args.output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_query_has_a_description_and_a_fast_count() {
        for q in named_queries() {
            assert!(!q.description.is_empty(), "{}: no description", q.name);
            assert!(
                runs_count_sql(q.sql).is_some(),
                "{}: no matching_runs",
                q.name
            );
            let by_structure = structure_ids_sql(q.sql).is_some();
            assert_eq!(by_structure, !q.name.contains("bishop-pair"), "{}", q.name);
        }
    }

    #[test]
    fn structure_ids_only_for_runs_of_matching_structures() {
        let q = named("white-quart").unwrap();
        let ids = structure_ids_sql(q.sql).unwrap();
        assert!(ids.ends_with("SELECT id FROM matching_structures"), "{ids}");
        assert!(ids.contains("s.white_quart != 0"));
        // Any other condition on the runs: no shortcut.
        let other = q.sql.replace(
            "m.id = p.structure_id\n",
            "m.id = p.structure_id AND p.first_ply > 10\n",
        );
        assert_ne!(other, q.sql);
        assert!(structure_ids_sql(&other).is_none());
        assert!(runs_count_sql(&other).is_some());
        assert!(first_rows_sql(&other).is_none());
    }

    #[test]
    fn first_rows_form_looks_up_each_run() {
        let q = named("carlsbad").unwrap();
        let first = first_rows_sql(q.sql).unwrap();
        assert!(first.contains("WHERE EXISTS (SELECT 1 FROM matching_structures AS m"));
        assert!(!first.contains("JOIN matching_structures"));
        // Only matching_runs changed; it is still a query of the same shape.
        assert_eq!(first.replace(
            "\n    WHERE EXISTS (SELECT 1 FROM matching_structures AS m WHERE m.id = p.structure_id)\n",
            "\n    JOIN matching_structures AS m ON m.id = p.structure_id\n",
        ), q.sql);
        assert!(
            structure_ids_sql(&first).is_some(),
            "still counted by structure"
        );
        assert!(first_rows_sql(&first).is_none());
        assert!(first_rows_sql(named("exact-structure").unwrap().sql).is_none());
    }

    #[test]
    fn first_statement_ignores_semicolons_in_strings_and_comments() {
        let sql = "SELECT ';' -- ; here\n, \"a;b\" /* ; */ FROM t;\n-- trailing ;\n";
        assert_eq!(
            first_statement(sql),
            "SELECT ';' -- ; here\n, \"a;b\" /* ; */ FROM t"
        );
        assert_eq!(first_statement("SELECT 1"), "SELECT 1");
    }

    #[test]
    fn runs_count_replaces_the_final_select() {
        let sql = "-- x: y\nWITH matching_runs AS (\n    SELECT game_id, first_ply, last_ply FROM \
                   positions WHERE (SELECT 1)\n)\nSELECT r.game_id FROM matching_runs AS r;\n";
        let count = runs_count_sql(sql).unwrap();
        assert!(count.ends_with(
            ")\nSELECT coalesce(sum(last_ply - first_ply + 1), 0) AS positions FROM matching_runs"
        ), "{count}");
        assert!(count.contains("WHERE (SELECT 1)"));
        assert_eq!(runs_count_sql("SELECT 1"), None);
    }

    #[test]
    fn parameter_values() {
        assert_eq!(parse_value("42"), Value::Integer(42));
        assert_eq!(parse_value("-7"), Value::Integer(-7));
        assert_eq!(parse_value("0xff"), Value::Integer(255));
        assert_eq!(parse_value("0xFFFFFFFFFFFFFFFF"), Value::Integer(-1));
        assert_eq!(parse_value("18446744073709551615"), Value::Integer(-1));
        assert_eq!(parse_value("1.5"), Value::Real(1.5));
        assert_eq!(parse_value("1-0"), Value::Text("1-0".into()));
        assert_eq!(parse_value("Carlsen"), Value::Text("Carlsen".into()));
    }

    #[test]
    fn close_names_are_suggested() {
        assert_eq!(closest_names("white-qaurt").first(), Some(&"white-quart"));
        assert!(closest_names("carlsbad-reversed").contains(&"reversed-carlsbad"));
        assert!(closest_names("zzzzzz").is_empty());
    }
}
