//! `pawndex info` on real databases: fresh, appended (the unmerged tail), interrupted (a run
//! that stored games and did not build the derived tables, made as `tests/check.rs` makes it),
//! an older schema, a file that is not a database and a missing one (no file created). The
//! numbers are compared with SQL on the same file; the database is left byte-identical.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use rusqlite::Connection;

const FILES: [&str; 2] = ["examples/sample.pgn", "tests/fixtures/structures.pgn"];

fn pawndex(args: &[&str]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    Run::of(cmd, &format!("{args:?}"))
}

fn index_files(db: &Path, files: &[&str]) {
    let paths: Vec<PathBuf> = files.iter().map(|f| root_path(f)).collect();
    let paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    index(db, &["-q"], &paths).expect_code(0, "index");
}

/// `pawndex info --format json`, parsed; checks the file is left unchanged.
fn info_json(db: &Path) -> serde_json::Value {
    let before = std::fs::read(db).unwrap();
    let run = pawndex(&["info", "--db", db.to_str().unwrap(), "--format", "json"]);
    run.expect_code(0, "info --format json");
    assert_eq!(run.stderr, "");
    assert_eq!(std::fs::read(db).unwrap(), before, "info changed the file");
    serde_json::from_str(&run.stdout).expect("JSON")
}

fn info_table(db: &Path) -> String {
    let run = pawndex(&["info", "--db", db.to_str().unwrap()]);
    run.expect_code(0, "info");
    run.stdout
}

/// The JSON's numbers against SQL on the same database.
fn agrees_with_sql(db: &Path, j: &serde_json::Value) {
    let conn = open_db(db);
    assert_eq!(j["games"], count(&conn, "SELECT count(*) FROM games"));
    assert_eq!(j["plies"], count(&conn, "SELECT sum(plies) FROM games"));
    assert_eq!(
        j["positions"],
        count(&conn, "SELECT count(*) FROM ply_features")
    );
    assert_eq!(
        j["pawn_sets"],
        count(&conn, "SELECT count(*) FROM pawn_sets")
    );
    assert_eq!(j["rejected"], count(&conn, "SELECT count(*) FROM rejects"));
    assert_eq!(j["schema_version"], 6);
    assert_eq!(j["games_without_time_control"], 0);
    assert_eq!(
        j["structures"],
        count(&conn, "SELECT count(*) FROM structure_names")
    );
    assert!(j["structures"].as_i64().unwrap() > 0);
    assert_eq!(j["structures_current"], true);
    assert_eq!(j["bytes"], std::fs::metadata(db).unwrap().len());
    let sources = j["sources"].as_array().unwrap();
    let want = query_all(
        &conn,
        "SELECT source, count(*), sum(plies) FROM games GROUP BY source ORDER BY source",
    );
    assert_eq!(sources.len(), want.len());
    for (s, w) in sources.iter().zip(&want) {
        let rusqlite::types::Value::Text(name) = &w[0] else {
            panic!()
        };
        assert_eq!(s["source"], name.as_str());
        assert_eq!(s["games"], integer(&w[1]));
        assert_eq!(s["plies"], integer(&w[2]));
        let rejected = conn
            .query_row(
                "SELECT count(*) FROM rejects WHERE source = ?1",
                [name],
                |r| r.get::<_, i64>(0),
            )
            .unwrap();
        assert_eq!(s["rejected"], rejected);
    }
}

fn integer(v: &rusqlite::types::Value) -> i64 {
    match v {
        rusqlite::types::Value::Integer(i) => *i,
        v => panic!("{v:?}"),
    }
}

#[test]
fn a_fresh_database_is_complete_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("fresh.db");
    index_files(&db, &FILES);
    let before = listing(dir.path());
    let j = info_json(&db);
    agrees_with_sql(&db, &j);
    assert_eq!(j["games"], 21);
    assert_eq!(j["state"], "complete");
    assert_eq!(j["complete"], true);
    assert_eq!(j["to_run"], serde_json::Value::Null);
    let table = info_table(&db);
    assert!(table.contains("\nstate       complete\n"), "{table}");
    assert!(table.contains("\ngames       21\n"), "{table}");
    assert!(table.contains("sample.pgn"), "{table}");
    assert_eq!(listing(dir.path()), before, "info created a file");
}

#[test]
fn rejects_are_counted_by_reason_and_source() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.pgn");
    std::fs::write(
        &bad,
        "[Event \"a\"]\n\n1. e4 e5 2. Ke3 *\n\n[Event \"b\"]\n\n1. e4 e5 2. Qh5 Ke7 3. Qxe5#  1-0\n\n\
         [Event \"c\"]\n[Variant \"crazyhouse\"]\n\n1. e4 *\n\n[Event \"d\"]\n\n1. d4 Nf6 2. Kd3 *\n\n",
    )
    .unwrap();
    let db = dir.path().join("rejects.db");
    index(&db, &["-q"], &[&bad]).expect_code(0, "index");
    let j = info_json(&db);
    agrees_with_sql(&db, &j);
    assert_eq!(j["rejected"], 3);
    assert_eq!(
        j["rejects_by_reason"],
        serde_json::json!([
            {"reason": "illegal move", "games": 2},
            {"reason": "unsupported variant", "games": 1},
        ])
    );
    let table = info_table(&db);
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("illegal move ") && l.ends_with(" 2")),
        "{table}"
    );
}

/// Issue 23: `pawndex info` filed "unknown token" rejects under "other": it grouped by a second
/// list of reason prefixes instead of by the reject category. Every category a PGN can produce
/// (all but "not a game", text the reader skips before it is a game) is indexed once here, and
/// each must come back under its own label, the one the end summary of `pawndex index` uses.
#[test]
fn every_reject_category_is_grouped_under_its_own_label() {
    use pawndex::RejectCategory as C;
    let dir = tempfile::tempdir().unwrap();
    let game = |event: &str, tags: &str, movetext: &str| {
        format!("[Event \"{event}\"]\n{tags}\n{movetext}\n\n")
    };
    let long_tag = format!("[Annotator \"{}\"]\n", "x".repeat(300 * 1024));
    let shuffle = "Nf3 Nf6 Ng1 Ng8 ".repeat(4100);
    let pgn = [
        game("syntax", &long_tag, "1. e4 e5 *"),
        game("too long", "", &format!("{shuffle}*")),
        game("variant", "[Variant \"atomic\"]\n", "1. e4 *"),
        game("fen", "[FEN \"garbage\"]\n[SetUp \"1\"]\n", "1. e4 *"),
        game("illegal", "", "1. e4 e5 2. Ke3 *"),
        game("ambiguous", "", "1. d3 d6 2. Nf3 Nf6 3. Nd2 *"),
        game("null", "", "1. e4 -- 2. d4 *"),
        game("drop", "", "1. e4 d5 2. Q@f7 *"),
        game("token", "", "1. e4 $$$ e5 *"),
        game("good", "", "1. c4 c5 *"),
    ]
    .concat();
    let plain = dir.path().join("rejects.pgn");
    std::fs::write(&plain, pgn).unwrap();
    // A gzip stream cut in the middle of a game's long comment: that game is cut off.
    let mut rng = Rng::new(0xC0_70FF);
    let comment: String = rng
        .bytes(200_000)
        .iter()
        .map(|b| (b'a' + b % 26) as char)
        .collect();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(
        &mut gz,
        format!("[Event \"before\"]\n\n1. d4 *\n\n[Event \"cut\"]\n\n1. e4 {{{comment}}} e5 *\n")
            .as_bytes(),
    )
    .unwrap();
    let gz = gz.finish().unwrap();
    let cut = dir.path().join("cut.pgn.gz");
    std::fs::write(&cut, &gz[..gz.len() / 2]).unwrap();
    let db = dir.path().join("categories.db");
    // The cut-off stream is a file error (exit 1); the games are stored all the same.
    index(&db, &["-q"], &[&plain, &cut]).expect_code(1, "index");
    let j = info_json(&db);
    agrees_with_sql(&db, &j);
    let categories = [
        C::Syntax,
        C::CutOff,
        C::TooLong,
        C::UnsupportedVariant,
        C::InvalidFen,
        C::IllegalMove,
        C::AmbiguousMove,
        C::NullMove,
        C::PieceDrop,
        C::UnknownToken,
    ];
    let mut want: Vec<serde_json::Value> = categories
        .iter()
        .map(|c| serde_json::json!({"reason": c.as_str(), "games": 1}))
        .collect();
    let mut got = j["rejects_by_reason"].as_array().unwrap().clone();
    let key = |v: &serde_json::Value| v["reason"].as_str().unwrap_or_default().to_owned();
    want.sort_by_key(key);
    got.sort_by_key(key);
    assert_eq!(got, want, "{}", info_table(&db));
    let table = info_table(&db);
    for c in categories {
        assert!(
            table
                .lines()
                .any(|l| l.starts_with(&format!("{c} ")) && l.ends_with(" 1")),
            "{c}:\n{table}"
        );
    }
}

#[test]
fn an_appended_database_shows_its_unmerged_tail() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tail.db");
    index_files(&db, &FILES);
    let extra = dir.path().join("extra.pgn");
    std::fs::write(
        &extra,
        "[Event \"tail\"]\n[Result \"1-0\"]\n\n1. a4 h5 2. a5 h4 3. b4 g5 1-0\n",
    )
    .unwrap();
    index(&db, &["-q"], &[&extra]).expect_code(0, "append");
    let j = info_json(&db);
    agrees_with_sql(&db, &j);
    assert_eq!(j["games"], 22);
    assert_eq!(j["state"], "tail");
    assert_eq!(j["complete"], true);
    assert_eq!(j["unmerged_games"], 1);
    assert_eq!(j["unfinished_games"], 0);
    assert_eq!(j["derived_through"], 21);
    let table = info_table(&db);
    assert!(
        table.contains("state       complete; 1 game in the unmerged tail"),
        "{table}"
    );
}

#[test]
fn an_interrupted_database_is_flagged_with_what_to_run() {
    let dir = tempfile::tempdir().unwrap();
    // Both files stored, the derived tables only of the first: what a run killed before it
    // built them leaves (an index of the first file alone has the same ids).
    let db = dir.path().join("killed.db");
    index_files(&db, &FILES);
    let first = dir.path().join("first.db");
    index_files(&first, &FILES[..1]);
    let conn = Connection::open(&db).unwrap();
    conn.execute("ATTACH ?1 AS a", [first.to_str().unwrap()])
        .unwrap();
    conn.execute_batch(
        "DELETE FROM set_games; INSERT INTO set_games SELECT * FROM a.set_games;
         DELETE FROM set_totals; INSERT INTO set_totals SELECT * FROM a.set_totals;
         DELETE FROM bishop_totals; INSERT INTO bishop_totals SELECT * FROM a.bishop_totals;
         UPDATE derived SET through = (SELECT through FROM a.derived),
                            finished = (SELECT finished FROM a.derived);
         DETACH a;",
    )
    .unwrap();
    drop(conn);
    let j = info_json(&db);
    agrees_with_sql(&db, &j);
    let run = format!("pawndex migrate --db {}", db.display());
    assert_eq!(j["state"], "interrupted");
    assert_eq!(j["complete"], false);
    assert_eq!(j["unfinished_games"], 9);
    assert_eq!(j["unmerged_games"], 0);
    assert_eq!(j["to_run"], run.as_str());
    let table = info_table(&db);
    let state = table.lines().find(|l| l.starts_with("state")).unwrap();
    assert!(
        state.starts_with("state       INTERRUPTED: 9 games"),
        "{state}"
    );
    assert!(state.ends_with(&format!("run `{run}`")), "{state}");

    // What it says to run makes it complete.
    pawndex(&["migrate", "--db", db.to_str().unwrap()]).expect_code(0, "migrate");
    assert_eq!(info_json(&db)["state"], "complete");
}

#[test]
fn an_older_schema_gets_the_one_line_of_the_other_read_commands() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v2.db");
    index_files(&db, &FILES[..1]);
    // Version 2: `derived` without `finished`.
    Connection::open(&db)
        .unwrap()
        .execute_batch("ALTER TABLE derived DROP COLUMN finished; PRAGMA user_version = 2;")
        .unwrap();
    let before = std::fs::read(&db).unwrap();
    let info = pawndex(&["info", "--db", db.to_str().unwrap()]);
    let query = pawndex(&[
        "query",
        "--db",
        db.to_str().unwrap(),
        "white-isolated-queen-pawn",
    ]);
    info.expect_code(1, "info on version 2");
    assert_eq!(info.stderr, query.stderr);
    assert!(
        info.stderr.contains("has schema version 2") && info.stderr.contains("pawndex migrate"),
        "{}",
        info.stderr
    );
    assert_eq!(info.stderr.lines().count(), 1);
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

#[test]
fn not_a_database_and_a_missing_one_are_errors_that_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("games.pgn");
    std::fs::copy(root_path("examples/sample.pgn"), &pgn).unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "shopping list\n").unwrap();
    let before = listing(dir.path());
    let run = pawndex(&["info", "--db", pgn.to_str().unwrap()]);
    run.expect_code(1, "info on a PGN file");
    assert!(
        run.stderr.contains("is PGN, not a pawndex database")
            && run.stderr.contains("pawndex index --db games.db"),
        "{}",
        run.stderr
    );
    // A file that is neither SQLite nor PGN keeps the plain message.
    let run = pawndex(&["info", "--db", text.to_str().unwrap()]);
    run.expect_code(1, "info on a text file");
    assert!(
        run.stderr.contains("is not a SQLite database"),
        "{}",
        run.stderr
    );
    let missing = dir.path().join("missing.db");
    let run = pawndex(&["info", "--db", missing.to_str().unwrap()]);
    run.expect_code(1, "info on a missing file");
    assert!(run.stderr.contains("does not exist"), "{}", run.stderr);
    assert_eq!(listing(dir.path()), before, "info created a file");
}

/// `--db games.pgn` (plain or compressed) is named as PGN by every command that reads a
/// database, as `pawndex index research.db` names a database given as PGN.
#[test]
fn a_pgn_file_given_as_the_database_is_named_as_pgn() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("games.pgn");
    std::fs::copy(root_path("examples/sample.pgn"), &pgn).unwrap();
    let gz = dir.path().join("more.pgn.gz");
    let mut encoder = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::default(),
    );
    std::io::Write::write_all(&mut encoder, &std::fs::read(&pgn).unwrap()).unwrap();
    encoder.finish().unwrap();
    for file in [&pgn, &gz] {
        let db = file.to_str().unwrap();
        for args in [
            vec!["info", "--db", db],
            vec!["check", "--db", db],
            vec!["find", "--db", db, "--count"],
            vec!["query", "--db", db, "white-duo", "--count"],
            vec!["stats", "--db", db, "--by", "phase"],
            vec!["structures", "--db", db],
            // `index` too: it would otherwise write into the PGN file's place.
            vec!["index", "--db", db, "examples/sample.pgn"],
        ] {
            let before = std::fs::read(file).unwrap();
            let run = pawndex(&args);
            run.expect_code(1, &format!("{args:?}"));
            assert_eq!(
                std::fs::read(file).unwrap(),
                before,
                "{args:?} changed {db}"
            );
            assert!(
                run.stderr.contains("is PGN, not a pawndex database"),
                "{args:?}: {}",
                run.stderr
            );
        }
    }
}

#[test]
fn help_has_an_example() {
    let run = pawndex(&["info", "--help"]);
    run.expect_code(0, "info --help");
    assert!(
        run.stdout
            .contains("pawndex info --db masters.db --format json")
    );
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A first run killed before it created the schema leaves an empty file: a 0-byte one (the
/// indexing lock creates the file first), or a SQLite header in WAL mode and no table. `info`
/// and `check` say that a first `pawndex index` was interrupted and that running it again
/// finishes it; and that run does.
#[test]
fn an_empty_file_left_by_an_interrupted_first_run_says_what_finishes_it() {
    let dir = tempfile::tempdir().unwrap();
    let zero = dir.path().join("zero.db");
    std::fs::write(&zero, b"").unwrap();
    let schemaless = dir.path().join("schemaless.db");
    let conn = Connection::open(&schemaless).unwrap();
    conn.pragma_update(None, "page_size", 8192).unwrap();
    conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
        .unwrap();
    drop(conn);
    for db in [&zero, &schemaless] {
        let d = db.to_str().unwrap();
        for cmd in ["info", "check"] {
            let run = pawndex(&[cmd, "--db", d]);
            run.expect_code(1, cmd);
            assert!(
                run.stderr
                    .contains(&format!("{d} is empty: it holds no pawndex tables yet"))
                    && run
                        .stderr
                        .contains("A first `pawndex index` interrupted before it created them")
                    && run
                        .stderr
                        .contains(&format!("run `pawndex index --db {d} GAMES.pgn`")),
                "{cmd}: {}",
                run.stderr
            );
        }
        index_files(db, &FILES[..1]);
        assert_eq!(info_json(db)["games"], 12);
    }
}
