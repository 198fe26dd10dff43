//! `pawndex stats` command line: bad input is refused with exit status 2 and a useful message,
//! the database is never written, an empty result is a header-only CSV, `-o` writes a file.

mod common;

use common::stats::*;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn unknown_column_lists_the_valid_ones() {
    let db = fixture_db();
    let out = stats(&db.path, &["--by", "white_island"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("unknown column \"white_island\""), "{err}");
    assert!(err.contains("did you mean white_islands?"), "{err}");
    for c in ALL_COLUMNS {
        assert!(err.contains(c), "{c} missing from: {err}");
    }
    assert!(out.stdout.is_empty());

    let out = stats(&db.path, &["--by", "phase,phase"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("given twice"), "{}", stderr(&out));
}

#[test]
fn unknown_names_in_where_list_the_usable_ones() {
    let db = fixture_db();
    let out = stats(&db.path, &["--by", "phase", "--where", "white_islandz = 2"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("no such column: white_islandz"), "{err}");
    assert!(
        !err.contains("SELECT") && err.lines().count() == 2,
        "one line for the error, one for the names, no internal SQL: {err}"
    );
    assert!(
        err.contains("names it may use") && err.contains("elo_band") && err.contains("eco"),
        "{err}"
    );

    let out = stats(
        &db.path,
        &["--by", "phase", "--where", "pawn_fen = '8/8/8/8/8/8/8/8'"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("pawn_fen can only be used in --by"),
        "{}",
        stderr(&out)
    );

    let out = stats(&db.path, &["--by", "phase", "--where", "white_islands ="]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("syntax error"), "{}", stderr(&out));
}

/// Whatever the expression tries, nothing is written: the file stays byte for byte the same.
#[test]
fn expressions_that_are_not_read_only_are_refused() {
    let db = fixture_db();
    let before = file_bytes(&db.path);
    for (expr, why) in [
        ("1; DELETE FROM games", "';'"),
        ("1); DELETE FROM games; SELECT (1", "unbalanced"),
        ("1) OR 1 = (1", "unbalanced"),
        ("1 -- ) OR (1", "comments"),
        ("1 /* x */", "comments"),
        ("(DELETE FROM games RETURNING id) IS NULL", "syntax error"),
        ("'unterminated", "unterminated"),
    ] {
        let out = stats(&db.path, &["--by", "phase", "--where", expr]);
        assert_eq!(out.status.code(), Some(2), "--where {expr}");
        assert!(
            stderr(&out).contains(why),
            "--where {expr}: {}",
            stderr(&out)
        );
        assert!(out.stdout.is_empty());
    }
    assert_eq!(file_bytes(&db.path), before, "the database was written");
    let conn = rusqlite::Connection::open(&db.path).unwrap();
    let games: i64 = conn
        .query_row("SELECT count(*) FROM games", [], |r| r.get(0))
        .unwrap();
    assert!(games > 20);
}

#[test]
fn an_empty_result_is_a_header_only_csv_and_says_so() {
    let db = fixture_db();
    let dir = tempfile::tempdir().unwrap();
    let out = stats(
        &db.path,
        &[
            "--by",
            "white_islands,phase",
            "--where",
            "white_islands > 8",
        ],
    );
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "white_islands,phase,positions,games,white_wins,draws,black_wins,white_score,\
         avg_white_elo,avg_black_elo\n"
    );
    assert!(
        stderr(&out).contains("no positions matched"),
        "{}",
        stderr(&out)
    );

    let file = dir.path().join("empty.csv");
    let out = stats(
        &db.path,
        &[
            "--by",
            "ply",
            "--min-elo",
            "4000",
            "-o",
            file.to_str().unwrap(),
        ],
    );
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    let csv = parse_csv(&std::fs::read(&file).unwrap());
    assert_eq!(csv.header[0], "ply");
    assert!(csv.rows.is_empty());
    assert!(stderr(&out).contains("no positions matched"));
}

#[test]
fn output_file_holds_the_same_csv_as_stdout() {
    let db = fixture_db();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.csv");
    let to_stdout = stats(&db.path, &["--by", "elo_band,phase", "--per", "game"]);
    let to_file = stats(
        &db.path,
        &[
            "--by",
            "elo_band,phase",
            "--per",
            "game",
            "-o",
            file.to_str().unwrap(),
        ],
    );
    assert!(to_stdout.status.success() && to_file.status.success());
    assert!(to_file.stdout.is_empty());
    assert_eq!(std::fs::read(&file).unwrap(), to_stdout.stdout);
    // One CSV dialect with `query -f csv`: LF line ends.
    assert!(!to_stdout.stdout.contains(&b'\r'));
    assert!(to_stdout.stdout.ends_with(b"\n"));
    // NULL Elo bands come first, as empty fields.
    let csv = parse_csv(&to_stdout.stdout);
    assert_eq!(csv.rows[0][0], "");
}

#[test]
fn bad_options_are_usage_errors() {
    let db = fixture_db();
    let dir = tempfile::tempdir().unwrap();
    let chart = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--by".into(), "ply".into(), "--ply".into(), "9..3".into()],
            "the range is empty",
        ),
        (
            // The same --ply rules as find: `..` alone is no range.
            vec!["--by".into(), "ply".into(), "--ply".into(), "..".into()],
            "expected A..B, A.., ..B or N",
        ),
        (
            vec!["--by".into(), "ply".into(), "--ply".into(), "a..3".into()],
            "with whole numbers of plies",
        ),
        (
            vec![
                "--by".into(),
                "ply".into(),
                "--chart".into(),
                chart("x.jpg"),
            ],
            ".svg or .png",
        ),
        (
            vec![
                "--by".into(),
                "ply,phase,elo_band".into(),
                "--chart".into(),
                chart("x.svg"),
            ],
            "one or two --by columns",
        ),
        (vec!["--report".into(), "nope".into()], "islands-vs-score"),
        (
            vec![
                "--report".into(),
                "top-structures".into(),
                "--by".into(),
                "ply".into(),
            ],
            "cannot be used with",
        ),
        (vec!["--per".into(), "game".into()], "--by"),
        (
            vec![
                "--report".into(),
                "phalanx-by-ply".into(),
                "--ply".into(),
                "300..400".into(),
            ],
            "does not overlap",
        ),
    ];
    for (args, want) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = stats(&db.path, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
    }
    // Nothing was drawn for the refused charts.
    assert!(!dir.path().join("x.svg").exists());
}

#[test]
fn a_missing_database_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.db");
    let out = stats(&missing, &["--by", "ply"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
    assert!(!missing.exists(), "stats created the database");
}

#[test]
fn help_lists_columns_reports_and_rules() {
    let out = std::process::Command::new(BIN)
        .args(["stats", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for want in [
        "--by",
        "--per",
        "--where",
        "--ply",
        "--min-elo",
        "--top",
        "--report",
        "--chart",
        "-o",
        "elo_band",
        "phase",
        "ply_bucket",
        "pawn_fen",
        "islands-vs-score",
        "top-structures",
        "white_score",
    ] {
        assert!(help.contains(want), "{want} missing from stats --help");
    }
}

/// A missing option names every way to give it: `stats` needs --by or --report, `query` a
/// NAME, --sql or --list.
#[test]
fn missing_options_name_the_real_alternatives() {
    let db = fixture_db();
    let out = stats(&db.path, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("--by") && err.contains("--report"), "{err}");
    let out = std::process::Command::new(common::BIN)
        .args(["query", "--db"])
        .arg(&db.path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    for alternative in ["NAME", "--sql", "--list"] {
        assert!(err.contains(alternative), "{alternative}: {err}");
    }
}

/// An empty --where is refused as empty, not as a syntax error of SQL the user never wrote.
#[test]
fn an_empty_where_is_refused_by_name() {
    let db = fixture_db();
    for expr in ["", "  "] {
        let out = stats(&db.path, &["--by", "phase", "--where", expr]);
        assert_eq!(out.status.code(), Some(2), "--where {expr:?}");
        let err = stderr(&out);
        assert!(err.contains("the expression is empty"), "{err}");
        assert!(out.stdout.is_empty());
    }
}
