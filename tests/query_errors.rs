//! Bad input to `query` and `find`: SQL errors show SQLite's message and the SQL, nothing can
//! change the database, unknown names get suggestions, bad arguments are named, a missing
//! database says how to create one.

mod common;

use common::query::{Db, pawndex};

/// The database file's bytes and a digest of its tables, to show nothing changed.
fn snapshot(db: &Db) -> (Vec<u8>, Vec<String>) {
    let conn = db.conn();
    let mut digest = Vec::new();
    for table in [
        "games",
        "runs",
        "pawn_sets",
        "set_games",
        "set_totals",
        "rejects",
        "ply_numbers",
    ] {
        let n: i64 = conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap();
        digest.push(format!("{table} {n}"));
    }
    let schema: Vec<String> = conn
        .prepare("SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    digest.extend(schema);
    drop(conn);
    (std::fs::read(&db.path).unwrap(), digest)
}

#[test]
fn sql_errors_show_sqlites_message_and_the_sql() {
    let db = Db::fixtures();
    let out = db.run("query", &["--sql", "SELECT game_id\nFROM ply_featurez"]);
    out.expect(1, "unknown table");
    assert!(
        out.stderr.contains("no such table: ply_featurez"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("FROM ply_featurez"), "{}", out.stderr);
    // The failing token is marked under its line.
    let out = db.run("query", &["--sql", "SELECT game_id FORM ply_features"]);
    out.expect(1, "syntax error");
    assert!(out.stderr.contains("syntax error"), "{}", out.stderr);
    let lines: Vec<&str> = out.stderr.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("SELECT game_id FORM ply_features"))
        .unwrap();
    let caret = lines[at + 1];
    let column = caret.find('^').unwrap();
    assert_eq!(
        &lines[at][column..column + 12],
        "ply_features",
        "{}",
        out.stderr
    );
}

#[test]
fn nothing_can_change_the_database() {
    let db = Db::fixtures();
    let before = snapshot(&db);
    let attached = db.dir.path().join("new.db");
    let attach = format!("ATTACH DATABASE '{}' AS other", attached.display());
    for sql in [
        "DELETE FROM games",
        "UPDATE games SET white = 'x'",
        "INSERT INTO rejects (source, offset, reason) VALUES ('a', 1, 'b')",
        "DROP TABLE games",
        "CREATE TABLE t (x)",
        "CREATE TEMP TABLE t (x)",
        "PRAGMA user_version = 99",
        "VACUUM",
        "SELECT 1; DELETE FROM games",
        attach.as_str(),
    ] {
        let out = db.run("query", &["--sql", sql]);
        assert_ne!(out.code, Some(0), "{sql} was allowed");
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
    assert!(!attached.exists(), "ATTACH created a file");
    let out = db.run("query", &["--sql", "DELETE FROM games"]);
    assert!(out.stderr.contains("refusing"), "{}", out.stderr);
    let out = db.run("query", &["--sql", "SELECT 1; DELETE FROM games"]);
    assert!(
        out.stderr.contains("more than one statement"),
        "{}",
        out.stderr
    );
    assert!(snapshot(&db) == before, "the database changed");
}

#[test]
fn an_unknown_name_suggests_the_closest() {
    let db = Db::fixtures();
    let out = db.run("query", &["white-qaurt"]);
    out.expect(2, "unknown name");
    assert!(
        out.stderr.contains("did you mean white-quart"),
        "{}",
        out.stderr
    );
    let out = db.run("query", &["carlsbad-reversed"]);
    out.expect(2, "unknown name");
    assert!(out.stderr.contains("reversed-carlsbad"), "{}", out.stderr);
    let out = db.run("query", &["zzzz"]);
    out.expect(2, "unknown name");
    assert!(
        out.stderr.contains("pawndex query --list"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_missing_database_says_how_to_create_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("none.db");
    let db = path.display().to_string();
    for args in [
        vec!["query", "white-quart", "--db", &db],
        vec!["find", "--white", "quart", "--db", &db],
    ] {
        let out = pawndex(&args);
        out.expect(1, "missing database");
        assert!(out.stderr.contains("pawndex index --db"), "{}", out.stderr);
    }
    assert!(!path.exists(), "a query created the database");
}

#[test]
fn parameters_must_match_the_query() {
    let db = Db::fixtures();
    let out = db.run(
        "query",
        &["exact-structure", "--param", "white_pawns=65280"],
    );
    out.expect(2, "missing parameter");
    assert!(
        out.stderr.contains("--param black_pawns=VALUE"),
        "{}",
        out.stderr
    );
    let out = db.run("query", &["white-quart", "--param", "white_pawns=1"]);
    out.expect(2, "unknown parameter");
    assert!(
        out.stderr.contains("no parameter :white_pawns"),
        "{}",
        out.stderr
    );
    let out = db.run("query", &["--sql", "SELECT ?", "--param", "x=1"]);
    out.expect(2, "positional parameter");
    assert!(out.stderr.contains("positional"), "{}", out.stderr);
    let out = db.run("query", &["white-quart", "--param", "oops"]);
    out.expect(2, "bad --param");
    assert!(out.stderr.contains("NAME=VALUE"), "{}", out.stderr);
}

#[test]
fn bad_find_arguments_say_which_argument_is_wrong() {
    let db = Db::fixtures();
    let cases: [(&[&str], &str); 9] = [
        (&["--pawns", "wd9"], "--pawns: \"wd9\""),
        (&["--pawns", "xd4"], "--pawns: \"xd4\""),
        (&["--no-pawns", "wz"], "--no-pawns: \"wz\""),
        (
            &["--structure", "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR"],
            "--structure",
        ),
        (&["--ply", "20..10"], "--ply 20..10"),
        (&["--ply", "ten"], "--ply ten"),
        (&["--white", "quad"], "--white quad"),
        (&["--black", "islands>>2"], "--black islands>>2"),
        (&["--white", "dispersion>=two"], "--white dispersion>=two"),
    ];
    for (args, wanted) in cases {
        let out = db.run("find", args);
        out.expect(2, wanted);
        assert!(out.stderr.contains(wanted), "{args:?}: {}", out.stderr);
    }
    let out = db.run("find", &["--result", "2-0"]);
    out.expect(2, "clap rejects the result");
    assert!(out.stderr.contains("--result"), "{}", out.stderr);
}

#[test]
fn a_file_that_is_not_a_pawndex_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        .unwrap();
    let out = pawndex(&["query", "--db", &path.display().to_string(), "white-duo"]);
    out.expect(1, "foreign database");
    assert!(
        out.stderr.contains("not a pawndex database"),
        "{}",
        out.stderr
    );
}

/// A query that never ends on its own: it streams 1, 2, 3, … forever.
const RUNAWAY: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) \
                       SELECT x AS n FROM c";

#[test]
fn a_second_statement_is_refused_even_when_counting() {
    let db = Db::fixtures();
    for extra in [&["--count"][..], &["--format", "csv"][..]] {
        let mut args = vec!["--sql", "SELECT id FROM games; SELECT 2"];
        args.extend_from_slice(extra);
        let out = db.run("query", &args);
        out.expect(2, "two statements");
        let err = &out.stderr;
        assert!(err.contains("more than one statement"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(out.stdout.is_empty());
    }
    // A trailing comment or empty statement is not a second statement.
    let out = db.run(
        "query",
        &["--sql", "SELECT id FROM games; -- all\n;", "--count"],
    );
    assert!(out.ok("one statement").trim().parse::<u64>().unwrap() > 0);
}

#[test]
fn timeout_stops_a_runaway_query() {
    let db = Db::fixtures();
    for extra in [&["--count"][..], &["--format", "csv"][..]] {
        let mut args = vec!["--sql", RUNAWAY, "--timeout", "0.3"];
        args.extend_from_slice(extra);
        let out = db.run("query", &args);
        out.expect(1, "timeout");
        let err = &out.stderr;
        assert!(err.contains("stopped after --timeout 0.3 s"), "{err}");
    }
    // find takes the same option, and a bad value is a usage error.
    let out = db.run("find", &["--white", "duo", "--timeout", "0"]);
    out.expect(2, "bad timeout");
    assert!(out.stderr.contains("--timeout"), "{}", out.stderr);
    let out = db.run("find", &["--white", "duo", "--timeout", "30", "--count"]);
    assert!(out.ok("find with a timeout").trim().parse::<u64>().is_ok());
}

#[test]
fn ctrl_c_stops_a_running_query_with_status_130() {
    use std::io::{BufRead, BufReader, Read};
    use std::process::{Command, Stdio};
    let db = Db::fixtures();
    let mut child = Command::new(common::query::BIN)
        .args([
            "query",
            "--db",
            &db.arg(),
            "--sql",
            RUNAWAY,
            "--format",
            "csv",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap());
    let mut header = String::new();
    lines.read_line(&mut header).unwrap();
    let mut first = String::new();
    lines.read_line(&mut first).unwrap();
    // The query is running (rows are coming): now press Ctrl-C.
    assert_eq!((header.trim(), first.trim()), ("n", "1"));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success(), "SIGINT was sent");
    let drain = std::thread::spawn(move || {
        let mut rest = Vec::new();
        lines.read_to_end(&mut rest).unwrap();
        rest.len()
    });
    let status = child.wait().unwrap();
    drain.join().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
}
