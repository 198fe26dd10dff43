//! `pawndex find --structure-name`: the rows and counts agree with plain SQL over
//! `ply_features` (`structure`, `structure_reversed`) alone and with the other conditions, in
//! every way of reading the runs; unknown keys are usage errors that list the known ones.
//!
//! The tests bring their own small catalogue (PAWNDEX_STRUCTURES), so they do not depend on the
//! definitions in `structures/`.

mod common;

use common::structures::{CARLSBAD, ISOLANI, index_classified, write_catalogue};

use std::path::PathBuf;

use common::ROOT;
use common::query::{Db, csv_records, pawndex_env, positions_of_csv, positions_of_sql, write_file};

/// The test catalogue: (key, file text). `stonewall` has no reversed form.
const CATALOGUE: &[(&str, &str)] = &[
    ("carlsbad", CARLSBAD),
    ("isolani", ISOLANI),
    (
        "stonewall",
        r#"name = "Stonewall"
family = "d4-d5"
description = "White c3, d4, e3 and f4."
source = "test catalogue"
reversed = false
[white]
pawns = ["c3", "d4", "e3", "f4"]
"#,
    ),
];

/// A database of the fixtures and 400 random games, classified with the test catalogue, and
/// the catalogue folder.
fn database() -> (Db, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let catalogue = write_catalogue(dir.path(), CATALOGUE);
    let path = index_classified(
        dir.path(),
        &catalogue,
        0x005e_ed0f_5717,
        400,
        "structures.db",
    );
    (Db { dir, path }, catalogue)
}

/// Runs `pawndex find --db DB ARGS` with the test catalogue (and `PAWNDEX_PLAN`, if given).
fn find(
    db: &Db,
    catalogue: &std::path::Path,
    args: &[&str],
    plan: Option<&str>,
) -> (i32, String, String) {
    let db_arg = db.arg();
    let mut all = vec!["find", "--db", db_arg.as_str()];
    all.extend_from_slice(args);
    let mut env = vec![("PAWNDEX_STRUCTURES", catalogue.to_str().unwrap())];
    if let Some(plan) = plan {
        env.push(("PAWNDEX_PLAN", plan));
    }
    let out = pawndex_env(std::path::Path::new(ROOT), &all, &env);
    assert!(!out.stderr.contains("panicked"), "{all:?}: {}", out.stderr);
    (out.code.unwrap_or(-1), out.stdout, out.stderr)
}

fn find_ok(db: &Db, catalogue: &std::path::Path, args: &[&str], plan: Option<&str>) -> String {
    let (code, stdout, stderr) = find(db, catalogue, args, plan);
    assert_eq!(code, 0, "find {args:?} (plan {plan:?}): {stderr}");
    stdout
}

/// (find arguments, the same filter as SQL over `ply_features AS f JOIN games AS g`).
fn cases() -> Vec<(Vec<&'static str>, &'static str)> {
    let normal = |key: &str| format!("(f.structure = '{key}' AND f.structure_reversed = 0)");
    let reversed = |key: &str| format!("(f.structure = '{key}' AND f.structure_reversed = 1)");
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    vec![
        (
            vec!["--structure-name", "carlsbad"],
            leak(normal("carlsbad")),
        ),
        (
            vec!["--structure-name", "carlsbad~"],
            leak(reversed("carlsbad")),
        ),
        (
            vec![
                "--structure-name",
                "carlsbad",
                "--structure-name",
                "carlsbad~",
            ],
            "f.structure = 'carlsbad'",
        ),
        (
            vec!["--structure-name", "isolani,isolani~"],
            "f.structure = 'isolani'",
        ),
        (
            vec!["--structure-name", "isolani~"],
            leak(reversed("isolani")),
        ),
        (
            vec!["--structure-name", "stonewall"],
            leak(normal("stonewall")),
        ),
        (
            vec![
                "--structure-name",
                "isolani",
                "--structure-name",
                "carlsbad~",
            ],
            leak(format!(
                "({} OR {})",
                normal("isolani"),
                reversed("carlsbad")
            )),
        ),
        (
            vec!["--structure-name", "carlsbad", "--white", "islands:2.."],
            leak(format!("{} AND f.white_islands >= 2", normal("carlsbad"))),
        ),
        (
            vec!["--structure-name", "isolani", "--ply", "12..30"],
            leak(format!("{} AND f.ply BETWEEN 12 AND 30", normal("isolani"))),
        ),
        (
            vec!["--structure-name", "carlsbad", "--eco", "D3"],
            leak(format!("{} AND g.eco LIKE 'D3%'", normal("carlsbad"))),
        ),
        (
            vec!["--structure-name", "isolani~", "--result", "0-1"],
            leak(format!("{} AND g.result = '0-1'", reversed("isolani"))),
        ),
        (
            vec![
                "--structure-name",
                "isolani",
                "--black",
                "bishop-pair",
                "--pawns",
                "wa2",
            ],
            leak(format!(
                "{} AND f.black_bishop_pair = 1 AND (f.white_pawns & (1 << 8)) != 0",
                normal("isolani")
            )),
        ),
        (
            vec![
                "--structure-name",
                "carlsbad~",
                "--black",
                "trio",
                "--min-elo",
                "2300",
            ],
            leak(format!(
                "{} AND f.black_trio != 0 AND g.white_elo >= 2300 AND g.black_elo >= 2300",
                reversed("carlsbad")
            )),
        ),
        (
            // Contradictory with the definition: nothing.
            vec!["--structure-name", "carlsbad", "--no-pawns", "wd"],
            "0",
        ),
    ]
}

#[test]
fn find_structure_name_agrees_with_sql_over_ply_features() {
    let (db, catalogue) = database();
    let conn = db.conn();
    // The test catalogue is the database's.
    let keys = positions_of_sql(&conn, "SELECT count(*), sum(reversed) FROM structure_names");
    assert_eq!(keys, vec![(3, 2)]);
    let mut matched = 0;
    for (args, filter) in cases() {
        let want = positions_of_sql(
            &conn,
            &format!(
                "SELECT f.game_id, f.ply FROM ply_features AS f JOIN games AS g ON g.id = f.game_id
                 WHERE {filter} ORDER BY f.game_id, f.ply"
            ),
        );
        let want_games = positions_of_sql(
            &conn,
            &format!(
                "SELECT f.game_id, min(f.ply) FROM ply_features AS f
                 JOIN games AS g ON g.id = f.game_id
                 WHERE {filter} GROUP BY f.game_id ORDER BY f.game_id"
            ),
        );
        matched += usize::from(!want.is_empty());
        for plan in [None, Some("scan"), Some("lists")] {
            let with = |extra: &[&'static str]| {
                let mut all = args.clone();
                all.extend_from_slice(extra);
                find_ok(&db, &catalogue, &all, plan)
            };
            let context = format!("find {args:?} PAWNDEX_PLAN={plan:?}");
            assert_eq!(
                positions_of_csv(&with(&["--format", "csv"])),
                want,
                "{context}"
            );
            assert_eq!(
                with(&["--count"]).trim(),
                want.len().to_string(),
                "{context} --count"
            );
            assert_eq!(
                positions_of_csv(&with(&["--per", "game", "--format", "csv"])),
                want_games,
                "{context} --per game"
            );
            assert_eq!(
                with(&["--per", "game", "--count"]).trim(),
                want_games.len().to_string(),
                "{context} --per game --count"
            );
        }
    }
    // Every form of the catalogue is reached by the fixtures (structures.pgn).
    assert!(matched >= cases().len() - 3, "only {matched} cases matched");
    for form in ["carlsbad", "carlsbad~", "isolani", "isolani~", "stonewall"] {
        let n = find_ok(
            &db,
            &catalogue,
            &["--structure-name", form, "--count"],
            None,
        );
        assert!(
            n.trim().parse::<u64>().unwrap() > 0,
            "{form} matches nothing"
        );
    }
}

#[test]
fn other_formats_hold_the_same_positions() {
    let (db, catalogue) = database();
    let args = ["--structure-name", "carlsbad~", "--ply", "6..9"];
    let csv = find_ok(
        &db,
        &catalogue,
        &[&args[..], &["--format", "csv"]].concat(),
        None,
    );
    let positions = positions_of_csv(&csv);
    assert!(!positions.is_empty());
    let fens = find_ok(
        &db,
        &catalogue,
        &[&args[..], &["--format", "fen"]].concat(),
        None,
    );
    let from_fen: Vec<(i64, i64)> = fens
        .lines()
        .map(|l| {
            let mut parts = l.split('\t');
            (
                parts.next().unwrap().parse().unwrap(),
                parts.next().unwrap().parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(from_fen, positions);
    let pgn = find_ok(
        &db,
        &catalogue,
        &[&args[..], &["--format", "pgn"]].concat(),
        None,
    );
    let games: std::collections::BTreeSet<i64> = positions.iter().map(|p| p.0).collect();
    assert_eq!(common::query::read_pgn(&pgn).len(), games.len());
    let json = find_ok(
        &db,
        &catalogue,
        &[&args[..], &["--format", "json"]].concat(),
        None,
    );
    assert_eq!(
        json.matches("\"game_id\"").count(),
        positions.len(),
        "{json}"
    );
    let limited = find_ok(
        &db,
        &catalogue,
        &[&args[..], &["--format", "csv", "--limit", "1"]].concat(),
        None,
    );
    assert_eq!(csv_records(&limited).len(), 2);
}

#[test]
fn print_sql_is_what_find_runs() {
    let (db, catalogue) = database();
    for (args, _) in cases() {
        let mut with = args.clone();
        with.push("--print-sql");
        let printed = find_ok(&db, &catalogue, &with, None);
        assert!(printed.contains("structure_names"), "{printed}");
        // Keys are parameters, never spliced into the SQL.
        for line in printed.lines().filter(|l| !l.starts_with("--")) {
            assert!(
                !line.contains("'carlsbad'") && !line.contains("'isolani'"),
                "{line}"
            );
        }
        let file = write_file(db.dir.path(), "find.sql", &printed);
        let mut query_args = vec![
            "query".to_string(),
            file.display().to_string(),
            "--db".to_string(),
            db.arg(),
            "--format".to_string(),
            "csv".to_string(),
        ];
        for line in printed.lines() {
            if let Some(rest) = line.strip_prefix("--   :") {
                let (name, value) = rest.split_once(" = ").unwrap();
                let value = value
                    .strip_prefix('\'')
                    .and_then(|v| v.strip_suffix('\''))
                    .map_or(value.to_string(), |v| v.replace("''", "'"));
                query_args.push("--param".to_string());
                query_args.push(format!("{name}={value}"));
            }
        }
        let query_args: Vec<&str> = query_args.iter().map(String::as_str).collect();
        let via_query = common::query::pawndex(&query_args);
        let mut direct = args.clone();
        direct.extend(["--format", "csv"]);
        assert_eq!(
            via_query.ok("query FILE"),
            find_ok(&db, &catalogue, &direct, None),
            "find {args:?}"
        );
    }
}

#[test]
fn unknown_or_malformed_names_are_usage_errors() {
    let (db, catalogue) = database();
    let (code, stdout, stderr) = find(&db, &catalogue, &["--structure-name", "carlsbd"], None);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    assert!(stderr.contains("--structure-name carlsbd"), "{stderr}");
    assert!(stderr.contains("did you mean carlsbad?"), "{stderr}");
    assert!(stderr.contains("carlsbad, isolani, stonewall"), "{stderr}");

    let (code, _, stderr) = find(
        &db,
        &catalogue,
        &["--structure-name", "zzz", "--count"],
        None,
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(!stderr.contains("did you mean"), "{stderr}");
    assert!(stderr.contains("carlsbad, isolani, stonewall"), "{stderr}");

    // A reversed form the catalogue does not look for.
    let (code, _, stderr) = find(&db, &catalogue, &["--structure-name", "stonewall~"], None);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("stonewall~"), "{stderr}");

    for bad in ["car lsbad!", "~", "carlsbad~~", "c_b"] {
        let (code, _, stderr) = find(&db, &catalogue, &["--structure-name", bad], None);
        assert_eq!(code, 2, "{bad}: {stderr}");
        assert!(stderr.contains("--structure-name"), "{bad}: {stderr}");
    }
    // Upper case is the same key.
    let upper = find_ok(
        &db,
        &catalogue,
        &["--structure-name", "CARLSBAD", "--count"],
        None,
    );
    let lower = find_ok(
        &db,
        &catalogue,
        &["--structure-name", "carlsbad", "--count"],
        None,
    );
    assert_eq!(upper, lower);
}

/// `--structure-name ""` (or `","`, `" "`) names no structure: before, the filter was dropped
/// and every position counted; it is a usage error, as `~` is. The same holds for the other
/// list flags of `find` (`--pawns`, `--no-pawns`).
#[test]
fn an_empty_structure_name_is_a_usage_error_not_a_dropped_filter() {
    let (db, catalogue) = database();
    for flag in ["--structure-name", "--pawns", "--no-pawns"] {
        for empty in ["", ",", " ", " , ,"] {
            let (code, stdout, stderr) = find(&db, &catalogue, &[flag, empty, "--count"], None);
            assert_eq!(
                code, 2,
                "{flag} {empty:?}: exit {code}, stdout {stdout:?}: {stderr}"
            );
            assert!(stdout.is_empty(), "{flag} {empty:?}: {stdout}");
            assert!(
                stderr.contains(flag) && stderr.contains("empty"),
                "{flag} {empty:?}: {stderr}"
            );
        }
    }
    // With another value beside it, an empty one is still refused.
    let (code, _, stderr) = find(
        &db,
        &catalogue,
        &[
            "--structure-name",
            "carlsbad",
            "--structure-name",
            "",
            "--count",
        ],
        None,
    );
    assert_eq!(code, 2, "{stderr}");
}
