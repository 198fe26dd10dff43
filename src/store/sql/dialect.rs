//! Portable SQL for the engines that read the Parquet dataset (docs/dataset.md): a named query
//! in DuckDB's or Spark SQL's dialect, written from its typed [`Search`] over the dataset's
//! `runs` table (every feature inline, no join), and the views that name the dataset's tables.
//! The conditions come from the walk `store::sql::walk` shares with the SQLite compiler; a
//! [`Dialect`] is its back end for the dataset.
//!
//! The text runs unchanged in its engine and returns the rows of the SQLite named query: one
//! row per position (game_id, ply), ordered by game and ply. Every number is a decimal literal
//! that is a valid BIGINT in both engines (Spark has no `0x` integer literals), and every
//! statement ends with `;` at the end of a line, so a driver can split the text on `;\n`.

use std::fmt::Write as _;

use anyhow::{Result, bail};
use clap::ValueEnum;

use super::walk::{self, Target};
use crate::model::columns::{self, Column};
use crate::model::search::{GameCond, Search, Side, StructureForm};

/// An engine that reads the Parquet dataset.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Dialect {
    /// DuckDB (read_parquet, unnest(generate_series(…)))
    Duckdb,
    /// Spark SQL, as spark.sql runs it (one statement at a time; explode(sequence(…)))
    Spark,
}

/// The dataset's tables, in the order their views are defined.
pub const TABLES: [&str; 4] = ["games", "runs", "rejects", "structure_changes"];

/// The columns of the SQLite view `ply_features` after `game_id` and `ply`, all stored inline
/// in the dataset's `runs`.
#[must_use]
pub fn feature_columns() -> Vec<String> {
    columns::ply_features()
        .into_iter()
        .skip(2)
        .map(Column::name)
        .collect()
}

impl Dialect {
    /// The engine's name, for the opening comment.
    #[must_use]
    pub fn engine(self) -> &'static str {
        match self {
            Dialect::Duckdb => "DuckDB",
            Dialect::Spark => "Spark SQL",
        }
    }

    /// The `--dialect` value.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Duckdb => "duckdb",
            Dialect::Spark => "spark",
        }
    }

    /// The expression listing the plies `first..=last`, one row each (in a SELECT list).
    fn expand(self, first: &str, last: &str) -> String {
        match self {
            Dialect::Duckdb => format!("unnest(generate_series({first}, {last}))"),
            Dialect::Spark => format!("explode(sequence({first}, {last}))"),
        }
    }

    /// A string literal: DuckDB doubles single quotes (backslashes are plain characters);
    /// Spark reads backslash escapes (and `'a''b'` as two literals `'a' 'b'`), so both quotes
    /// and backslashes get a backslash.
    #[must_use]
    pub fn string(self, s: &str) -> String {
        let body = match self {
            Dialect::Duckdb => s.replace('\'', "''"),
            Dialect::Spark => s.replace('\\', "\\\\").replace('\'', "\\'"),
        };
        format!("'{body}'")
    }
}

/// A 64-bit value (a bitboard or mask) as a decimal BIGINT literal with the same bits: values
/// above `i64::MAX` are written as the negative number of the same bits, in parentheses, and
/// `i64::MIN` (whose magnitude is no BIGINT) as a subtraction.
#[must_use]
pub fn bigint(v: u64) -> String {
    let i = v as i64;
    if i == i64::MIN {
        format!("({} - 1)", i64::MIN + 1)
    } else if i < 0 {
        format!("({i})")
    } else {
        i.to_string()
    }
}

/// The dialects' back end of the shared walk (`store::sql::walk`): every condition over the
/// dataset's `runs` row, where both sides' features stand inline (`white_islands`), masks and
/// exact structures as decimal BIGINTs, a boolean bishop pair per side, named structures by
/// key; game conditions need the games' tags, which no named query uses, and are refused.
impl Target for Dialect {
    type Refusal = anyhow::Error;

    fn feature(&self, side: Side, column: &str) -> String {
        format!("{}_{column}", side.name())
    }

    fn mask(&self, v: u64) -> String {
        bigint(v)
    }

    fn names_side(&self) -> bool {
        true
    }

    fn exact(&self, _side: Side, pawns: u64) -> String {
        format!("{}  -- 0x{pawns:016X}", bigint(pawns))
    }

    fn bishop_pair(&self, side: Side, has: bool) -> String {
        format!("{}_bishop_pair = {}", side.name(), u8::from(has))
    }

    fn bishop_pairs(&self, state: u8) -> String {
        format!(
            "white_bishop_pair = {} AND black_bishop_pair = {}",
            state & 1,
            (state >> 1) & 1
        )
    }

    /// The dataset's runs hold a structure's key and a boolean for the reversed form.
    fn structure_forms(&self, forms: &[StructureForm]) -> String {
        let forms: Vec<String> = forms
            .iter()
            .map(|f| {
                format!(
                    "(structure = {} AND structure_reversed = {})",
                    self.string(&f.key),
                    f.reversed
                )
            })
            .collect();
        match &forms[..] {
            [one] => one.clone(),
            many => format!("({})", many.join(" OR ")),
        }
    }

    fn run_column(&self, column: &str) -> String {
        column.to_string()
    }

    fn greatest_least(&self) -> (&'static str, &'static str) {
        ("greatest", "least")
    }

    fn game(&self, _cond: &GameCond) -> Result<String> {
        bail!("conditions on games are not available in --dialect SQL")
    }
}

/// The WHERE conditions of a search over `runs`.
fn conditions(dialect: Dialect, search: &Search) -> Result<Vec<String>> {
    if search.min_stay.is_some() {
        bail!("a least stay (--min-stay) is not available in --dialect SQL");
    }
    let conds = walk::conditions(&dialect, search)?;
    let mut wheres = conds.white;
    wheres.extend(conds.black);
    wheres.extend(conds.runs);
    wheres.extend(conds.structures);
    wheres.extend(conds.plies);
    wheres.extend(conds.games);
    Ok(wheres)
}

/// `FROM runs` and the WHERE clause, indented by `indent` spaces, each line ended.
fn from_runs(dialect: Dialect, search: &Search, indent: &str) -> Result<String> {
    let mut sql = format!("{indent}FROM runs\n");
    let wheres = conditions(dialect, search)?;
    if !wheres.is_empty() {
        let _ = writeln!(
            sql,
            "{indent}WHERE {}",
            wheres.join(&format!("\n{indent}  AND "))
        );
    }
    Ok(sql)
}

/// The opening comment: the query's name and description, the engine, what the rows are.
fn header(dialect: Dialect, name: &str, description: &str, count: bool) -> String {
    let (flag, what) = if count {
        (
            " --count",
            "the number of matching\n-- positions, as `--count` prints it",
        )
    } else {
        (
            "",
            "one row per matching position\n-- (game_id, ply), ordered by game and ply",
        )
    };
    format!(
        "-- {name}: {description}\n\
         -- {} over the pawndex Parquet dataset's table runs (docs/dataset.md), from\n\
         -- `pawndex query {name} --dialect {} --print-sql{flag}`: {what}.\n",
        dialect.engine(),
        dialect.name()
    )
}

/// The named query's rows in the dialect: one row per matching position (game_id, ply),
/// ordered by game and ply.
pub fn rows_sql(
    dialect: Dialect,
    name: &str,
    description: &str,
    search: &Search,
) -> Result<String> {
    let (first, last) = walk::bounds(&dialect, search);
    let mut sql = header(dialect, name, description, false);
    let _ = write!(
        sql,
        "SELECT game_id, ply\nFROM (\n    SELECT game_id, {} AS ply\n{}) AS positions\n\
         ORDER BY game_id, ply;\n",
        dialect.expand(&first, &last),
        from_runs(dialect, search, "    ")?
    );
    Ok(sql)
}

/// The named query's count in the dialect: the number of matching positions (0 for none), as
/// `pawndex query NAME --count` prints it.
pub fn count_sql(
    dialect: Dialect,
    name: &str,
    description: &str,
    search: &Search,
) -> Result<String> {
    let (first, last) = walk::bounds(&dialect, search);
    let mut sql = header(dialect, name, description, true);
    // The `;` gets a line of its own: the last condition's line may end in a comment.
    let _ = write!(
        sql,
        "SELECT CAST(coalesce(sum({last} - {first} + 1), 0) AS BIGINT) AS positions\n{};\n",
        from_runs(dialect, search, "")?
    );
    Ok(sql)
}

/// The directory of one table of the dataset in `dir` (no doubled `/`).
fn table_dir(dir: &str, table: &str) -> String {
    let base = dir.trim_end_matches('/');
    if base.is_empty() && dir.starts_with('/') {
        format!("/{table}")
    } else {
        format!("{base}/{table}")
    }
}

/// The view over one table's Parquet files (with or without partition directories).
fn table_view(dialect: Dialect, dir: &str, table: &str) -> String {
    let path = table_dir(dir, table);
    match dialect {
        Dialect::Duckdb => format!(
            "CREATE OR REPLACE VIEW {table} AS\n\
             SELECT * FROM read_parquet({}, hive_partitioning = true);\n",
            dialect.string(&format!("{path}/**/*.parquet"))
        ),
        Dialect::Spark => format!(
            "CREATE OR REPLACE TEMPORARY VIEW {table}\nUSING parquet\nOPTIONS (path {});\n",
            dialect.string(&path)
        ),
    }
}

/// The view `ply_features`: one row per position with the columns of the SQLite view.
fn ply_features_view(dialect: Dialect) -> String {
    let temporary = match dialect {
        Dialect::Duckdb => "",
        Dialect::Spark => "TEMPORARY ",
    };
    let mut columns = vec![
        "game_id".to_string(),
        format!("{} AS ply", dialect.expand("first_ply", "last_ply")),
    ];
    // The dataset's booleans as SQLite's 0 and 1.
    columns.extend(feature_columns().into_iter().map(|c| {
        if c == "structure_reversed" {
            format!("CAST({c} AS INT) AS {c}")
        } else {
            c
        }
    }));
    format!(
        "CREATE OR REPLACE {temporary}VIEW ply_features AS\nSELECT\n    {}\nFROM runs;\n",
        columns.join(",\n    ")
    )
}

/// The views naming the dataset in `dir`: `games`, `runs`, `rejects`, `structure_changes` over
/// its Parquet files and `ply_features` expanding the runs per ply, one statement per `;\n`.
#[must_use]
pub fn dataset_views(dialect: Dialect, dir: &str) -> String {
    let mut sql = format!(
        "-- The pawndex Parquet dataset in {} as {} views (docs/dataset.md): games, runs,\n\
         -- rejects, structure_changes, and ply_features (one row per position, the columns of pawndex's SQLite\n\
         -- view). Each statement ends with a semicolon at the end of a line.\n",
        dir.replace(['\n', '\r'], " "),
        dialect.engine()
    );
    for table in TABLES {
        sql.push_str(&table_view(dialect, dir, table));
    }
    sql.push_str(&ply_features_view(dialect));
    sql
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::queries::{named_queries, named_search};
    use crate::model::search::{Feature, SetCond};
    use rusqlite::types::Value;

    const DIALECTS: [Dialect; 2] = [Dialect::Duckdb, Dialect::Spark];

    fn search_of(name: &str) -> Search {
        let params = if name == "exact-structure" {
            vec![
                ("white_pawns".to_string(), Value::Integer(0x1000_EF00)),
                (
                    "black_pawns".to_string(),
                    Value::Integer(0x00EF_0010_0000_0000),
                ),
            ]
        } else {
            Vec::new()
        };
        named_search(name, &params).unwrap()
    }

    /// The SQL without its comments.
    fn code(sql: &str) -> String {
        sql.lines()
            .map(|l| l.split("--").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn literals_are_decimal_bigints() {
        assert_eq!(bigint(0), "0");
        assert_eq!(bigint(0x0404_0404_0404_0404), "289360691352306692");
        assert_eq!(bigint(u64::MAX), "(-1)");
        assert_eq!(bigint(0x8080_8080_8080_8080), "(-9187201950435737472)");
        assert_eq!(bigint(1 << 63), "(-9223372036854775807 - 1)");
        assert_eq!(bigint(i64::MAX as u64), "9223372036854775807");
    }

    #[test]
    fn every_named_query_generates_in_both_dialects() {
        for q in named_queries() {
            let search = search_of(q.name);
            for d in DIALECTS {
                for sql in [
                    rows_sql(d, q.name, q.description, &search).unwrap(),
                    count_sql(d, q.name, q.description, &search).unwrap(),
                ] {
                    assert!(
                        sql.starts_with(&format!("-- {}: {}\n", q.name, q.description)),
                        "{sql}"
                    );
                    assert!(sql.contains(d.engine()), "{sql}");
                    assert!(sql.contains("FROM runs\n"), "{sql}");
                    assert!(sql.contains("WHERE "), "{}: no condition\n{sql}", q.name);
                    let body = code(&sql);
                    assert!(!body.contains("0x"), "hex literal in {}:\n{sql}", q.name);
                    assert!(!body.contains(':'), "parameter left in {}:\n{sql}", q.name);
                    // One statement, ended by `;` at the end of its last line.
                    assert_eq!(sql.matches(";\n").count(), 1, "{sql}");
                    assert!(sql.ends_with(";\n"), "{sql}");
                }
            }
        }
    }

    #[test]
    fn each_dialect_expands_runs_its_own_way() {
        let s = search_of("carlsbad");
        let duck = rows_sql(Dialect::Duckdb, "carlsbad", "d", &s).unwrap();
        assert!(
            duck.contains("unnest(generate_series(first_ply, last_ply)) AS ply"),
            "{duck}"
        );
        let spark = rows_sql(Dialect::Spark, "carlsbad", "d", &s).unwrap();
        assert!(
            spark.contains("explode(sequence(first_ply, last_ply)) AS ply"),
            "{spark}"
        );
        assert!(spark.contains("ORDER BY game_id, ply;\n"), "{spark}");
        // d4 and e3 are bits 27 and 20; the c-file is 0x0404040404040404.
        assert!(
            duck.contains("(white_pawns & 135266304) = 135266304"),
            "{duck}"
        );
        assert!(
            duck.contains("(white_pawns & 289360691352306692) = 0"),
            "{duck}"
        );
        let count = count_sql(Dialect::Spark, "carlsbad", "d", &s).unwrap();
        assert!(
            count.contains(
                "SELECT CAST(coalesce(sum(last_ply - first_ply + 1), 0) AS BIGINT) AS positions"
            ),
            "{count}"
        );
    }

    #[test]
    fn parameters_and_bishop_pairs_are_substituted() {
        let sql = rows_sql(
            Dialect::Spark,
            "exact-structure",
            "d",
            &search_of("exact-structure"),
        )
        .unwrap();
        assert!(sql.contains("white_pawns = 268496640"), "{sql}");
        assert!(sql.contains("black_pawns = 67272588153323520"), "{sql}");
        let sql = rows_sql(
            Dialect::Duckdb,
            "black-bishop-pair",
            "d",
            &search_of("black-bishop-pair"),
        )
        .unwrap();
        assert!(
            sql.contains("white_bishop_pair = 0 AND black_bishop_pair = 1"),
            "{sql}"
        );
    }

    #[test]
    fn ply_ranges_clip_the_runs() {
        let s = Search {
            white: vec![SetCond::Has(Feature::DUO)],
            plies: (10, 20),
            ..Search::default()
        };
        let sql = rows_sql(Dialect::Duckdb, "x", "d", &s).unwrap();
        assert!(
            sql.contains("generate_series(greatest(first_ply, 10), least(last_ply, 20))"),
            "{sql}"
        );
        assert!(
            sql.contains("AND last_ply >= 10\n      AND first_ply <= 20"),
            "{sql}"
        );
    }

    #[test]
    fn game_conditions_are_refused() {
        let s = Search {
            games: vec![crate::model::search::GameCond::Result("1-0".into())],
            ..Search::default()
        };
        assert!(rows_sql(Dialect::Duckdb, "x", "d", &s).is_err());
        assert!(count_sql(Dialect::Spark, "x", "d", &s).is_err());
    }

    #[test]
    fn dataset_directories_are_quoted() {
        assert_eq!(Dialect::Duckdb.string("it's"), "'it''s'");
        assert_eq!(Dialect::Spark.string("it's"), "'it\\'s'");
        assert_eq!(Dialect::Spark.string("C:\\d"), "'C:\\\\d'");
        assert_eq!(Dialect::Duckdb.string("C:\\d"), "'C:\\d'");
        let duck = dataset_views(Dialect::Duckdb, "/data/o'k/");
        assert!(
            duck.contains(
                "CREATE OR REPLACE VIEW runs AS\nSELECT * FROM \
                 read_parquet('/data/o''k/runs/**/*.parquet', hive_partitioning = true);\n"
            ),
            "{duck}"
        );
        let spark = dataset_views(Dialect::Spark, "/data/o'k");
        assert!(
            spark.contains(
                "CREATE OR REPLACE TEMPORARY VIEW games\nUSING parquet\n\
                 OPTIONS (path '/data/o\\'k/games');\n"
            ),
            "{spark}"
        );
        assert_eq!(table_dir("/", "runs"), "/runs");
        assert_eq!(table_dir("d", "runs"), "d/runs");
    }

    #[test]
    fn views_are_statements_ending_lines() {
        for d in DIALECTS {
            let sql = dataset_views(d, "ds");
            // games, runs, rejects, structure_changes, ply_features.
            assert_eq!(sql.matches(";\n").count(), 5, "{sql}");
            assert!(sql.ends_with(";\n"));
            let features = sql.split(";\n").nth(4).unwrap();
            assert!(features.contains("VIEW ply_features AS"), "{features}");
            let columns = features.split("SELECT").nth(1).unwrap();
            let names: Vec<&str> = columns
                .split("FROM runs")
                .next()
                .unwrap()
                .split(",\n")
                .map(|c| c.trim().rsplit(' ').next().unwrap())
                .collect();
            assert_eq!(names[..2], ["game_id", "ply"]);
            assert_eq!(names[2..], feature_columns());
        }
    }
}
