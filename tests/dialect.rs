//! `pawndex query NAME --dialect duckdb|spark --print-sql`: the named queries in the SQL of the
//! engines that read the Parquet dataset, the views over a dataset directory (`--dataset`),
//! and the usage errors around them. The text is checked by SQLite where SQLite can run it:
//! the conditions over `ply_features` give the rows of the named query, and the count form,
//! run over a table shaped like the dataset's `runs`, gives `pawndex query NAME --count`.

mod common;

use common::query::{Db, pawndex, positions_of_csv, positions_of_sql, root_path};

const DIALECTS: [&str; 2] = ["duckdb", "spark"];

/// The parameters a named query needs: the structure after 1. e4 e5 for exact-structure.
fn params(name: &str) -> Vec<&'static str> {
    if name == "exact-structure" {
        vec![
            "--param",
            "white_pawns=0x1000EF00",
            "--param",
            "black_pawns=0xEF001000000000",
        ]
    } else {
        Vec::new()
    }
}

/// The named queries (the feature patterns), from the first section of `--list`.
fn named() -> Vec<String> {
    pawndex(&["query", "--list"])
        .ok("--list")
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

/// `pawndex query NAME --dialect D --print-sql [extra] [params]`, which must succeed.
fn print(name: &str, dialect: &str, extra: &[&str]) -> String {
    let mut args = vec!["query", name, "--dialect", dialect, "--print-sql"];
    args.extend_from_slice(extra);
    args.extend(params(name));
    pawndex(&args).ok(name).to_string()
}

/// The SQL without its `--` comments.
fn code(sql: &str) -> String {
    sql.lines()
        .map(|l| l.split("--").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The conditions of the printed rows query (between its WHERE and the end of the subquery).
fn conditions(sql: &str) -> String {
    let body = code(sql);
    let start = body.find("WHERE ").expect("a WHERE clause") + "WHERE ".len();
    let end = body.find(") AS positions").expect("the positions subquery");
    body[start..end].to_string()
}

#[test]
fn every_named_query_prints_one_statement_per_dialect() {
    let descriptions = pawndex(&["query", "--list"]).ok("--list").to_string();
    for name in named() {
        let description = descriptions
            .lines()
            .map(str::trim_start)
            .find(|l| l.split_whitespace().next() == Some(name.as_str()))
            .unwrap()[name.len()..]
            .trim()
            .to_string();
        for dialect in DIALECTS {
            for extra in [&[][..], &["--count"][..]] {
                let sql = print(&name, dialect, extra);
                assert!(
                    sql.starts_with(&format!("-- {name}: {description}\n")),
                    "{sql}"
                );
                let engine = if dialect == "duckdb" {
                    "-- DuckDB "
                } else {
                    "-- Spark SQL "
                };
                assert!(sql.contains(engine), "{sql}");
                assert!(sql.ends_with(";\n"), "{sql}");
                assert_eq!(sql.matches(";\n").count(), 1, "{sql}");
                let body = code(&sql);
                assert!(!body.contains("0x"), "{name} {dialect}: hex literal\n{sql}");
                assert!(!body.contains(":white"), "{name}: parameter left\n{sql}");
                if extra.is_empty() {
                    let expand = if dialect == "duckdb" {
                        "unnest(generate_series(first_ply, last_ply)) AS ply"
                    } else {
                        "explode(sequence(first_ply, last_ply)) AS ply"
                    };
                    assert!(body.contains(expand), "{sql}");
                    assert!(body.contains("ORDER BY game_id, ply;"), "{sql}");
                } else {
                    assert!(body.contains("sum(last_ply - first_ply + 1)"), "{sql}");
                }
            }
        }
    }
}

/// The printed conditions, over the SQLite view `ply_features` (same column names as the
/// dataset's per-ply view), select exactly the rows of the named query.
#[test]
fn the_conditions_select_the_named_querys_rows() {
    let db = Db::fixtures();
    let conn = db.conn();
    for name in named() {
        let mut args = vec![name.as_str(), "-f", "csv"];
        args.extend(params(&name));
        let want = positions_of_csv(db.run("query", &args).ok(&name));
        assert!(!want.is_empty(), "{name}: the fixtures should reach it");
        for dialect in DIALECTS {
            let sql = format!(
                "SELECT game_id, ply FROM ply_features WHERE {} ORDER BY game_id, ply",
                conditions(&print(&name, dialect, &[]))
            );
            assert_eq!(
                positions_of_sql(&conn, &sql),
                want,
                "{name} {dialect}\n{sql}"
            );
        }
    }
}

/// The count form, run unchanged by SQLite over a table shaped like the dataset's `runs`,
/// prints what `pawndex query NAME --count` prints.
#[test]
fn the_count_form_counts_like_pawndex() {
    let db = Db::fixtures();
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    conn.execute_batch(&format!(
        "ATTACH DATABASE '{}' AS db;
         CREATE TABLE runs AS
         SELECT r.game_id, r.first_ply, r.last_ply, w.pawns AS white_pawns,
                b.pawns AS black_pawns, w.islands AS white_islands, b.islands AS black_islands,
                w.duo AS white_duo, b.duo AS black_duo, w.trio AS white_trio,
                b.trio AS black_trio, w.quart AS white_quart, b.quart AS black_quart,
                r.bishop_pairs & 1 AS white_bishop_pair, r.bishop_pairs >> 1 AS black_bishop_pair
         FROM db.runs AS r
         JOIN db.pawn_sets AS w ON w.id = r.white_set
         JOIN db.pawn_sets AS b ON b.id = r.black_set;",
        db.arg().replace('\'', "''")
    ))
    .unwrap();
    for name in named() {
        let mut args = vec![name.as_str(), "--count"];
        args.extend(params(&name));
        let want: i64 = db.run("query", &args).ok(&name).trim().parse().unwrap();
        assert!(want > 0, "{name}");
        for dialect in DIALECTS {
            let sql = print(&name, dialect, &["--count"]);
            let got: i64 = conn
                .query_row(sql.trim_end().trim_end_matches(';'), [], |r| r.get(0))
                .unwrap_or_else(|e| panic!("{name} {dialect}: {e}\n{sql}"));
            assert_eq!(got, want, "{name} {dialect}\n{sql}");
        }
    }
}

#[test]
fn exact_structure_values_become_decimal_literals() {
    for dialect in DIALECTS {
        let sql = print("exact-structure", dialect, &[]);
        // 0x1000EF00 and 0xEF001000000000.
        assert!(code(&sql).contains("white_pawns = 268496640"), "{sql}");
        assert!(
            code(&sql).contains("black_pawns = 67272588153323520"),
            "{sql}"
        );
    }
    let out = pawndex(&[
        "query",
        "exact-structure",
        "--dialect",
        "spark",
        "--print-sql",
    ]);
    out.expect(2, "no parameters");
    assert!(out.stderr.contains("white_pawns"), "{}", out.stderr);
}

#[test]
fn dataset_views_come_first_and_quote_the_directory() {
    for dialect in DIALECTS {
        let views = pawndex(&[
            "query",
            "--dialect",
            dialect,
            "--print-sql",
            "--dataset",
            "/data/it's",
        ])
        .ok("views")
        .to_string();
        let statements: Vec<&str> = views
            .split(";\n")
            .filter(|s| !code(s).trim().is_empty())
            .collect();
        assert_eq!(statements.len(), 5, "{views}");
        for (statement, view) in statements.iter().zip([
            "games",
            "runs",
            "rejects",
            "structure_changes",
            "ply_features",
        ]) {
            assert!(
                code(statement).contains(&format!("VIEW {view}")),
                "{statement}"
            );
        }
        if dialect == "duckdb" {
            assert!(
                views.contains(
                    "read_parquet('/data/it''s/runs/**/*.parquet', hive_partitioning = true);\n"
                ),
                "{views}"
            );
        } else {
            assert!(
                views.contains(
                    "TEMPORARY VIEW runs\nUSING parquet\nOPTIONS (path '/data/it\\'s/runs');\n"
                ),
                "{views}"
            );
        }
        let with_query = print("carlsbad", dialect, &["--dataset", "/data/it's"]);
        assert!(with_query.starts_with(&views), "{with_query}");
        assert!(
            with_query[views.len()..].contains("-- carlsbad: "),
            "{with_query}"
        );
        assert_eq!(with_query.matches(";\n").count(), 6, "{with_query}");
    }
}

/// Usage errors (exit 2, nothing on stdout, a message naming the problem).
fn refused(args: &[&str], message: &str) {
    let out = pawndex(args);
    out.expect(2, &args.join(" "));
    assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
    assert!(
        out.stderr.contains(message),
        "{args:?}: expected {message:?} in\n{}",
        out.stderr
    );
}

#[test]
fn what_cannot_be_translated_is_a_usage_error() {
    refused(
        &["query", "carlsbad", "--dialect", "duckdb"],
        "needs --print-sql",
    );
    refused(
        &[
            "query",
            "--sql",
            "SELECT 1",
            "--dialect",
            "spark",
            "--print-sql",
        ],
        "cannot translate SQLite SQL",
    );
    let file = root_path("queries/carlsbad.sql").display().to_string();
    refused(
        &["query", &file, "--dialect", "duckdb", "--print-sql"],
        "cannot translate SQLite SQL",
    );
    refused(
        &["query", "carlsbd", "--dialect", "duckdb", "--print-sql"],
        "did you mean carlsbad",
    );
    refused(
        &["query", "carlsbad", "--dialect", "sqlite", "--print-sql"],
        "sqlite",
    );
    refused(&["query", "--dataset", "d", "--print-sql"], "--dialect");
    refused(
        &[
            "query",
            "--dialect",
            "spark",
            "--print-sql",
            "--dataset",
            "d",
            "--count",
        ],
        "--count needs a named query",
    );
    refused(
        &[
            "query",
            "--dialect",
            "spark",
            "--print-sql",
            "--dataset",
            "a;\nb",
        ],
        "line break",
    );
    // Without --dialect, --print-sql still refuses --count.
    refused(&["query", "carlsbad", "--print-sql", "--count"], "--count");
}
