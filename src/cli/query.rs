//! `pawndex query`: named queries (the `.sql` files of `queries/`, embedded in the binary), SQL
//! files and ad-hoc SQL, run read-only against a pawndex database and written in any
//! [`Format`](output::Format).

use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;

use crate::engine::queries::{closest_names, named, named_queries, named_search};
use crate::output::table::{self as output, OutputArgs};
use crate::store::read::params::{Value, parse_params};
use crate::store::read::query::{self as adhoc, prepare};
use crate::store::read::{Limit, Snapshot};
use crate::store::sql::dialect::{self, Dialect};

use crate::cli::common::{self as command, EXIT_ERROR, EXIT_INTERRUPTED};
pub(crate) use crate::model::usage;
use crate::store;
use crate::store::read::search::{Form, Rows, Search, StructureName};
use crate::store::sql::lex;

#[derive(Args, Debug)]
#[command(group(
    clap::ArgGroup::new("what").required(true).multiple(true).args(["query", "sql", "list", "dataset"])
))]
#[command(
    after_help = "Named queries return one row per matching position (game_id, ply), \
ordered by game and ply; --list names them. The database is opened read-only.\n\n\
Two kinds of names (--list shows both): feature patterns (white-isolated-queen-pawn: \
conditions on each side's pawns, tested in every position) and catalogue structures \
(isolani: the one name the structure catalogue gives a position; its key or its name, case \
ignored, KEY~ for the colour-reversed form; the positions of `pawndex find --structure-name \
KEY`). A name that is both (carlsbad) runs the feature pattern.\n\n\
Exit status: 0 success, 1 error (SQL error, missing database), 2 bad command line.\n\n\
Examples:
  pawndex query --list
  pawndex query white-quart --limit 20
  pawndex query carlsbad --count
  pawndex query carlsbad --format pgn > carlsbad.pgn
  pawndex query exact-structure --param white_pawns=0x1000EF00 \\
      --param black_pawns=0xEF001000000000
  pawndex query --sql \"SELECT id AS game_id FROM games WHERE result = '0-1'\" -f csv
  pawndex query carlsbad --dialect duckdb --print-sql --dataset out/ | duckdb"
)]
pub struct QueryArgs {
    /// A named query (see --list) or a .sql file
    #[arg(value_name = "NAME|FILE.sql", conflicts_with_all = ["sql", "list"])]
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
    #[arg(long)]
    pub print_sql: bool,
    /// With --print-sql: print the named query in this engine's SQL, over the tables of the
    /// Parquet dataset (`pawndex index --parquet`); with --count, its count
    #[arg(long, value_enum, value_name = "ENGINE", conflicts_with = "list")]
    pub dialect: Option<Dialect>,
    /// With --dialect --print-sql: first print the views games, runs, rejects, structure_changes
    /// and ply_features over the dataset in DIR (NAME is then optional). Every statement ends
    /// with ; at the end of a line: split the text on ";\n" (and skip the blank rest) to run it
    /// one statement at a time, as spark.sql needs
    #[arg(long, value_name = "DIR", requires = "dialect")]
    pub dataset: Option<String>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Maps the outcome of a command to its exit status: usage errors print and give 2, a closed
/// output pipe ends quietly with 0, other errors go up to the caller (status 1).
pub(crate) fn exit_status(result: Result<i32>) -> Result<i32> {
    if let (Err(_), Some(limits)) = (&result, LIMITS.get()) {
        if limits.limit.cancelled() {
            eprintln!("pawndex: interrupted");
            return Ok(EXIT_INTERRUPTED);
        }
        if let Some(t) = limits.timeout
            && limits.limit.timed_out()
        {
            eprintln!("pawndex: error: the query was stopped after --timeout {t} s");
            return Ok(EXIT_ERROR);
        }
    }
    command::exit_status(result)
}

// ---------------------------------------------------------------------------------------------
// Reading SQL text: where the first statement ends
// ---------------------------------------------------------------------------------------------

/// The one statement of `sql`, without its `;`: a usage error when another statement follows
/// (only comments, spaces and empty statements may).
pub fn only_statement(sql: &str) -> Result<&str> {
    let tokens = lex::tokens(sql);
    let Some(end) = tokens
        .iter()
        .find(|t| t.kind == lex::Kind::Semicolon)
        .map(|t| t.start)
    else {
        return Ok(sql.trim_end());
    };
    let comments: Vec<(usize, usize)> = tokens
        .iter()
        .filter(|t| t.is_comment() && t.start > end)
        .map(|t| (t.start, t.end))
        .collect();
    let in_comment = |i: usize| comments.iter().any(|&(a, b)| (a..b).contains(&i));
    let rest = sql
        .char_indices()
        .skip_while(|&(i, _)| i <= end)
        .find(|&(i, c)| !c.is_whitespace() && c != ';' && !in_comment(i));
    if let Some((i, _)) = rest {
        let second: String = sql[i..].chars().take(40).collect();
        usage!(
            "the SQL holds more than one statement (the second starts \"{}\"); pawndex \
             query runs one statement: remove everything after the first ;",
            second.lines().next().unwrap_or("").trim()
        );
    }
    Ok(sql[..end].trim_end())
}

// ---------------------------------------------------------------------------------------------
// Running SQL
// ---------------------------------------------------------------------------------------------

/// When a query must stop: at a deadline (`--timeout`) or on Ctrl-C. The store's [`Limit`]
/// stops the statements of every connection of the command's snapshot within milliseconds
/// wherever they are (counting threads included).
struct Limits {
    timeout: Option<f64>,
    limit: Limit,
}

static LIMITS: OnceLock<Limits> = OnceLock::new();

/// Arms `--timeout` and Ctrl-C for this process's query (a second Ctrl-C exits at once).
pub(crate) fn arm_limits(timeout: Option<f64>) {
    let limits = LIMITS.get_or_init(|| Limits {
        timeout,
        limit: Limit::within(timeout.map(Duration::from_secs_f64)),
    });
    let _ = ctrlc::set_handler(move || {
        if limits.limit.cancelled() {
            std::process::exit(EXIT_INTERRUPTED);
        }
        limits.limit.cancel();
    });
}

/// Opens the database read-only, tuned for reading (memory-mapped I/O, a larger page cache),
/// in one snapshot under the limits armed ([`arm_limits`]).
pub fn open(db: &Path) -> Result<Snapshot> {
    let none = Limit::none();
    let limit = LIMITS.get().map_or(&none, |l| &l.limit);
    Snapshot::open(db, limit)
}

/// What `pawndex query` runs: a typed search (named queries and `find`), or SQL text.
#[derive(Clone, Debug)]
pub enum Plan {
    /// A search: the storage layer writes its SQL, picks the fastest form, and counts it.
    Search(Search, Rows),
    /// SQL from a file or `--sql`; `--count` counts its rows.
    Sql(String),
}

/// Runs a query (or counts its rows) and writes the results to stdout.
pub(crate) fn execute(plan: &Plan, params: &[(String, Value)], output: &OutputArgs) -> Result<i32> {
    arm_limits(output.timeout);
    // One snapshot for every statement of this command (a concurrent index only appends).
    let conn = open(&output.db)?;
    warn_if_unfinished(&store::lag(&conn)?, &output.db);
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let (sql, params): (String, Vec<(String, Value)>) = match plan {
        Plan::Search(search, rows) => {
            if output.count {
                // A least stay is a condition on each game's runs together: counted in SQL,
                // as the games are.
                let n = if *rows == Rows::Games || search.min_stay.is_some() {
                    let (form, games) = search.rows_form(&conn)?;
                    let mut c = search.count_sql(form, *rows == Rows::Games);
                    c.params.extend(games);
                    adhoc::count(&conn, &c.text, &c.params)?
                } else {
                    crate::engine::count::positions(
                        &conn,
                        search,
                        crate::engine::parallel::threads(None),
                    )?
                };
                writeln!(out, "{n}")?;
                out.flush()?;
                return Ok(0);
            }
            let sql = search.fastest_rows_sql(&conn, *rows)?;
            (sql.text, sql.params)
        }
        Plan::Sql(sql) => {
            if output.count {
                let count_sql = format!(
                    "SELECT count(*) AS positions FROM (\n{}\n)",
                    only_statement(sql)?
                );
                let n = adhoc::count(&conn, &count_sql, params)?;
                writeln!(out, "{n}")?;
                out.flush()?;
                return Ok(0);
            }
            (only_statement(sql)?.to_string(), params.to_vec())
        }
    };
    let mut stmt = prepare(&conn, &sql)?;
    stmt.bind(&params)?;
    output::write_results(
        &conn,
        &mut stmt,
        output.format,
        output.limit,
        crate::engine::parallel::threads(None),
        &mut out,
    )
    .map_err(|e| adhoc::explain(e, &sql))?;
    out.flush()?;
    Ok(0)
}

/// Says in one line when the last `pawndex index` did not finish (answers stay right).
pub(crate) fn warn_if_unfinished(lag: &store::Lag, db: &Path) {
    if lag.unfinished() > 0 && store::indexing_now(db) {
        // The index adds them when it finishes; `pawndex migrate` would wait for its lock.
        eprintln!(
            "pawndex: note: a `pawndex index` is writing to {} now ({} games not yet in the \
             derived tables; answers are complete but slower); it adds them when it finishes",
            db.display(),
            lag.unfinished()
        );
    } else if lag.unfinished() > 0 {
        eprintln!(
            "pawndex: note: {} was not finished by its last `pawndex index` ({} games not yet in \
             the derived tables; answers are complete but slower); run `pawndex migrate --db {}`",
            db.display(),
            lag.unfinished(),
            db.display()
        );
    }
}

/// `--list`: the feature patterns (named queries), then the catalogue structures, each kind
/// under a line saying what it is.
fn list(db: &Path) -> Result<i32> {
    let queries = named_queries();
    let structures = known_structures(db);
    let width = queries
        .iter()
        .map(|q| q.name.len())
        .chain(structures.iter().map(|n| n.key.len()))
        .max()
        .unwrap_or(0);
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "Feature patterns: conditions on each side's pawns, tested in every position (a \
         position may match several); queries/NAME.sql holds each one's SQL."
    )?;
    for q in queries {
        writeln!(out, "  {:width$}  {}", q.name, q.description)?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "Catalogue structures: the name the structure catalogue (structures/*.toml) gives a \
         position, at most one per position (the most specific definition wins); KEY~ is the \
         colour-reversed form. `pawndex query KEY` finds the positions of `pawndex find \
         --structure-name KEY`; a name that is also a feature pattern runs the pattern."
    )?;
    if structures.is_empty() {
        writeln!(out, "  (none: the database names no structures)")?;
    }
    for n in &structures {
        let mut about = format!("{} ({})", n.name, n.family);
        if n.reversed {
            about.push_str(&format!("; {}~ the colour-reversed form", n.key));
        }
        if named(&n.key).is_some() {
            about.push_str(&format!(
                "; `query {0}` runs the feature pattern {0}: use `find --structure-name {0}`",
                n.key
            ));
        }
        writeln!(out, "  {:width$}  {about}", n.key)?;
    }
    Ok(0)
}

/// The catalogue structures `query` knows: the database's (`structure_names`) when it opens,
/// else the catalogue in force (`structures/`, or the PAWNDEX_STRUCTURES folder), as a
/// dataset written by `pawndex index --parquet` was.
fn known_structures(db: &Path) -> Vec<StructureName> {
    if let Ok(conn) = Snapshot::open(db, &Limit::none())
        && let Ok(names) = store::read::search::structure_names(&conn)
    {
        return names;
    }
    catalogue_structures()
}

/// The structures of the catalogue in force (none when it cannot be read).
fn catalogue_structures() -> Vec<StructureName> {
    crate::structure::Catalogue::load_active()
        .map(|c| {
            c.definitions()
                .iter()
                .zip(1..)
                .map(|(d, id)| StructureName {
                    id,
                    key: d.key.clone(),
                    name: d.name.clone(),
                    family: d.family.clone(),
                    reversed: d.reversed,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The search of a catalogue structure's query: the positions whose named structure is that
/// form (`find --structure-name KEY`). It takes no `--param`.
fn structure_search(
    typed: &str,
    known: &[StructureName],
    params: &[(String, Value)],
) -> Result<Option<(Search, String)>> {
    let Some((form, name)) = crate::engine::find::match_structure(typed, known) else {
        return Ok(None);
    };
    if let Some((p, _)) = params.first() {
        usage!("--param {p}: the query has no parameter :{p} (its parameters: none)");
    }
    if form.reversed && !name.reversed {
        usage!(
            "{typed}: the catalogue looks for {} in its normal form only (no {}~)",
            name.key,
            name.key
        );
    }
    let description = format!(
        "positions whose named structure is {}{} (the catalogue's {}, as `pawndex find \
         --structure-name {}` finds them)",
        name.name,
        if form.reversed {
            ", colour-reversed"
        } else {
            ""
        },
        name.key,
        form.label()
    );
    let search = Search {
        structures: vec![form],
        ..Search::default()
    };
    Ok(Some((search, description)))
}

/// The usage error for a name that is no named query, file or catalogue structure, with the
/// close names of both kinds.
fn unknown_query(name: &str, known: &[StructureName]) -> anyhow::Error {
    let mut close = closest_names(name);
    for key in crate::engine::find::closest_structures(name, known) {
        if !close.contains(&key) {
            close.push(key);
        }
    }
    let message = if close.is_empty() {
        format!(
            "unknown query \"{name}\"; `pawndex query --list` shows the feature patterns and \
             the catalogue structures"
        )
    } else {
        format!(
            "unknown query \"{name}\"; did you mean {}? (`pawndex query --list` shows them all)",
            close.join(", ")
        )
    };
    anyhow::Error::new(crate::model::UsageError(message))
}

/// Where the SQL of `pawndex query` comes from.
///
/// `--count` takes the shortcuts of [`Count::plan`] for the named queries only, whose shape the
/// tests check; SQL from a file or `--sql` is counted row by row.
fn resolve(args: &QueryArgs, params: &[(String, Value)]) -> Result<Plan> {
    if let Some(sql) = &args.sql {
        return Ok(Plan::Sql(sql.clone()));
    }
    let name = args.query.as_deref().unwrap_or_default();
    if let Some(q) = named(name) {
        let search = named_search(q.name, params)?;
        return Ok(Plan::Search(search, Rows::Positions));
    }
    let path = Path::new(name);
    if name.ends_with(".sql") || path.is_file() {
        let sql = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read SQL file {}", path.display()))?;
        return Ok(Plan::Sql(sql));
    }
    let known = known_structures(&args.output.db);
    match structure_search(name, &known, params)? {
        Some((search, _)) => Ok(Plan::Search(search, Rows::Positions)),
        None => Err(unknown_query(name, &known)),
    }
}

/// The named query `--dialect` translates: a usage error for SQL text (pawndex writes the
/// other engines' SQL from a named query's typed search; it cannot translate SQLite SQL).
/// A catalogue structure's name comes from the catalogue in force (a dataset has no
/// `structure_names`; `pawndex index --parquet` wrote it with that catalogue). Returns the
/// name, description and search.
fn dialect_query(
    args: &QueryArgs,
    params: &[(String, Value)],
) -> Result<Option<(String, String, Search)>> {
    let cannot = "pawndex writes --dialect SQL from the typed search of a named query and \
                  cannot translate SQLite SQL";
    if args.sql.is_some() {
        usage!("--dialect cannot be used with --sql: {cannot}");
    }
    let Some(name) = args.query.as_deref() else {
        return Ok(None);
    };
    if let Some(q) = named(name) {
        let search = named_search(q.name, params)?;
        return Ok(Some((
            q.name.to_string(),
            q.description.to_string(),
            search,
        )));
    }
    if name.ends_with(".sql") || Path::new(name).is_file() {
        usage!("--dialect cannot be used with a .sql file ({name}): {cannot}");
    }
    let known = catalogue_structures();
    match structure_search(name, &known, params)? {
        Some((search, description)) => {
            let label = search.structures[0].label();
            Ok(Some((label, description, search)))
        }
        None => Err(unknown_query(name, &known)),
    }
}

/// `--dialect ENGINE --print-sql [--dataset DIR] [--count]`: the views over the dataset, then
/// the named query (or its count) in that engine's SQL.
fn print_dialect_sql(
    args: &QueryArgs,
    dialect: Dialect,
    params: &[(String, Value)],
) -> Result<i32> {
    if !args.print_sql {
        usage!(
            "--dialect {0} prints SQL for {1} and needs --print-sql (pawndex runs queries on \
             SQLite only): pawndex query NAME --dialect {0} --print-sql",
            dialect.name(),
            dialect.engine()
        );
    }
    let query = dialect_query(args, params)?;
    let mut text = String::new();
    if let Some(dir) = &args.dataset {
        if dir.contains(['\n', '\r']) {
            usage!(
                "--dataset: the directory name holds a line break, which would split a \
                 statement of the printed SQL; rename the directory"
            );
        }
        text.push_str(&dialect::dataset_views(dialect, dir));
    }
    match query {
        Some((name, description, search)) => {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&if args.output.count {
                dialect::count_sql(dialect, &name, &description, &search)?
            } else {
                dialect::rows_sql(dialect, &name, &description, &search)?
            });
        }
        None if args.output.count => {
            usage!("--count needs a named query to count (pawndex query NAME --dialect ...)")
        }
        None => {}
    }
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(0)
}

pub fn run(args: QueryArgs) -> Result<i32> {
    exit_status(run_inner(args))
}

fn run_inner(args: QueryArgs) -> Result<i32> {
    if args.list {
        return list(&args.output.db);
    }
    let params = parse_params(&args.params)?;
    if let Some(dialect) = args.dialect {
        return print_dialect_sql(&args, dialect, &params);
    }
    if args.print_sql && args.output.count {
        usage!(
            "--print-sql cannot be used with --count (only with --dialect, which prints the \
             count form for DuckDB or Spark)"
        );
    }
    if args.print_sql {
        let text = match args.query.as_deref().and_then(named) {
            Some(q) => q.sql.to_string(),
            None => match resolve(&args, &params)? {
                Plan::Sql(sql) => sql,
                // A catalogue structure: its SQL with the parameter values, as `find` prints it.
                Plan::Search(search, rows) => {
                    return crate::cli::find::print_sql(&search.rows_sql(Form::Scan, rows))
                        .map(|()| 0);
                }
            },
        };
        let mut out = io::stdout().lock();
        writeln!(out, "{}", text.trim_end())?;
        return Ok(0);
    }
    let plan = resolve(&args, &params)?;
    execute(&plan, &params, &args.output)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::queries::named_file_text;
    use crate::store::read::params::parse_value;

    #[test]
    fn every_named_query_has_a_description_and_a_search() {
        for q in named_queries() {
            assert!(!q.description.is_empty(), "{}: no description", q.name);
            let params = if q.name == "exact-structure" {
                vec![
                    ("white_pawns".to_string(), Value::Integer(0xFF00)),
                    ("black_pawns".to_string(), Value::Integer(0xFF << 48)),
                ]
            } else {
                vec![]
            };
            named_search(q.name, &params).unwrap();
        }
    }

    /// Each `queries/NAME.sql` is its opening comment plus the SQL of the named search, so the
    /// file a person reads is what pawndex runs. `PAWNDEX_BLESS=1 cargo test` rewrites them.
    #[test]
    fn named_query_files_are_written_from_their_searches() {
        let bless = std::env::var_os("PAWNDEX_BLESS").is_some();
        let mut stale = Vec::new();
        for q in named_queries() {
            let want = named_file_text(&q);
            if want != q.sql {
                if bless {
                    let path = format!("{}/queries/{}.sql", env!("CARGO_MANIFEST_DIR"), q.name);
                    std::fs::write(&path, &want).unwrap();
                }
                stale.push(q.name);
            }
        }
        assert!(
            bless || stale.is_empty(),
            "stale query files (run PAWNDEX_BLESS=1 cargo test --lib): {stale:?}"
        );
    }

    #[test]
    fn named_parameters_are_checked() {
        let err = named_search("white-quart", &[("x".into(), Value::Integer(1))]).unwrap_err();
        assert!(err.to_string().contains("no parameter :x"), "{err}");
        let err = named_search(
            "exact-structure",
            &[("white_pawns".into(), Value::Integer(1))],
        )
        .unwrap_err();
        assert!(err.to_string().contains(":black_pawns"), "{err}");
    }

    #[test]
    fn one_statement_ignores_semicolons_in_strings_and_comments() {
        let sql = "SELECT ';' -- ; here\n, \"a;b\" /* ; */ FROM t;\n-- trailing ;\n;  /* x */";
        assert_eq!(
            only_statement(sql).unwrap(),
            "SELECT ';' -- ; here\n, \"a;b\" /* ; */ FROM t"
        );
        assert_eq!(only_statement("SELECT 1").unwrap(), "SELECT 1");
        assert_eq!(only_statement("SELECT 1;\n").unwrap(), "SELECT 1");
    }

    #[test]
    fn a_second_statement_is_refused() {
        for sql in [
            "SELECT 1; SELECT 2",
            "SELECT 1; -- c\nDELETE FROM t",
            "SELECT 1;/**/x",
        ] {
            let e = only_statement(sql).unwrap_err();
            assert!(
                e.downcast_ref::<crate::model::UsageError>().is_some(),
                "{sql}"
            );
            assert!(e.to_string().contains("more than one statement"), "{e}");
        }
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
