//! Output formats: CSV (RFC 4180), JSON lines, the aligned table, PGN export (re-indexes to the
//! same games, first matched ply marked) and FEN export (matches an independent replay).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::process::{Command, Stdio};

use common::query::{BIN, Db, csv_records, fixture_games, positions_of_csv, read_pgn, root_path};
use rusqlite::types::Value;

const GAMES_SQL: &str = "SELECT g.id AS game_id, g.white, g.black, g.white_elo, g.event, g.fen, \
                         g.moves FROM games AS g ORDER BY g.id";

#[test]
fn csv_has_a_header_and_quotes_what_it_must() {
    let db = Db::fixtures();
    let out = db.run("query", &["--sql", GAMES_SQL, "--format", "csv"]);
    let text = out.ok("csv");
    assert!(
        !text.contains('\r'),
        "lines end with LF, as stats writes them"
    );
    assert!(text.ends_with('\n'));
    let records = csv_records(text);
    assert_eq!(
        records[0],
        [
            "game_id",
            "white",
            "black",
            "white_elo",
            "event",
            "fen",
            "moves"
        ]
    );
    let conn = db.conn();
    let mut st = conn.prepare(GAMES_SQL).unwrap();
    let rows: Vec<Vec<Value>> = st
        .query_map([], |r| (0..7).map(|i| r.get::<_, Value>(i)).collect())
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(records.len(), rows.len() + 1);
    for (record, row) in records[1..].iter().zip(&rows) {
        for (cell, value) in record.iter().zip(row) {
            let want = match value {
                Value::Null => String::new(),
                Value::Integer(i) => i.to_string(),
                Value::Text(t) => t.clone(),
                Value::Blob(b) => format!(
                    "X'{}'",
                    b.iter().map(|x| format!("{x:02X}")).collect::<String>()
                ),
                Value::Real(r) => r.to_string(),
            };
            assert_eq!(cell, &want);
        }
    }
    // A name with a quote and a backslash, and names with commas, survive.
    assert!(
        records
            .iter()
            .any(|r| r[1] == "Hanging, \"White\" \\ Pawns")
    );
}

#[test]
fn json_lines_are_typed_objects_in_column_order() {
    let db = Db::fixtures();
    let out = db.run("query", &["--sql", GAMES_SQL, "--format", "json"]);
    let lines: Vec<&str> = out.ok("json").lines().collect();
    let conn = db.conn();
    let count: i64 = conn
        .query_row("SELECT count(*) FROM games", [], |r| r.get(0))
        .unwrap();
    assert_eq!(lines.len() as i64, count);
    for line in &lines {
        assert!(line.starts_with("{\"game_id\":"), "column order: {line}");
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let id = v["game_id"].as_i64().unwrap();
        let (white, elo): (Option<String>, Option<i64>) = conn
            .query_row(
                "SELECT white, white_elo FROM games WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(v["white"].as_str().map(str::to_string), white);
        assert_eq!(v["white_elo"].as_i64(), elo);
        if elo.is_none() {
            assert!(v["white_elo"].is_null());
        }
    }
    // Duplicate column names are kept apart.
    let out = db.run(
        "query",
        &["--sql", "SELECT 1 AS x, 2 AS x", "--format", "json"],
    );
    assert_eq!(out.ok("dup").trim(), "{\"x\":1,\"x_2\":2}");
}

#[test]
fn table_columns_are_aligned() {
    let db = Db::fixtures();
    let out = db.run(
        "query",
        &[
            "--sql",
            "SELECT id AS game_id, white FROM games WHERE id IN (1, 12) ORDER BY id",
        ],
    );
    let lines: Vec<&str> = out.ok("table").lines().collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0], "game_id  white");
    assert_eq!(lines[1], "-------  --------------");
    assert_eq!(lines[2], "      1  Morphy, Paul");
    assert_eq!(lines[3], "     12  Short, Nigel D");
}

/// Everything `games` holds about a game except where it came from (id, source, offset).
fn games_without_origin(db: &Db) -> Vec<Vec<Value>> {
    let conn = db.conn();
    let mut st = conn
        .prepare(
            "SELECT event, site, date, round, white, black, result, white_elo, black_elo, eco,
                    plies, fen, chess960, moves, hash FROM games ORDER BY id",
        )
        .unwrap();
    st.query_map([], |r| (0..15).map(|i| r.get::<_, Value>(i)).collect())
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn ply_features_without_ids(db: &Db) -> Vec<Vec<Value>> {
    let conn = db.conn();
    let mut st = conn
        .prepare("SELECT * FROM ply_features ORDER BY game_id, ply")
        .unwrap();
    let n = st.column_count();
    st.query_map([], |r| (0..n).map(|i| r.get::<_, Value>(i)).collect())
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn pgn_export_reindexes_to_the_same_games() {
    // Enough games for several batches on several formatting threads.
    let db = Db::fixtures_and_random_games();
    let out = db.run(
        "query",
        &[
            "--sql",
            "SELECT id AS game_id FROM games ORDER BY id",
            "--format",
            "pgn",
        ],
    );
    let pgn = out.ok("pgn export").to_string();
    let file = common::query::write_file(db.dir.path(), "export.pgn", &pgn);

    // Indexed afresh: the same games (tags, start, moves, hash) and the same features.
    let again = Db::index(std::slice::from_ref(&file));
    assert_eq!(games_without_origin(&again), games_without_origin(&db));
    assert_eq!(
        ply_features_without_ids(&again),
        ply_features_without_ids(&db)
    );

    // Indexed into the original database: every game is recognised as a duplicate.
    let before = games_without_origin(&db);
    let out = common::query::pawndex(&["index", "--db", &db.arg(), &file.display().to_string()]);
    out.ok("re-index");
    let games = before.len();
    assert!(
        out.stderr.contains(&format!(
            "{games} games read: 0 indexed, {games} duplicates"
        )),
        "{}",
        out.stderr
    );
    assert_eq!(games_without_origin(&db), before);

    // Another reader (pgn-reader) finds every game with its tags, in order.
    let read = read_pgn(&pgn);
    assert_eq!(read.len(), games);
    for (i, g) in read.iter().enumerate().skip(31) {
        assert_eq!(g.tag("Event"), Some(format!("random {}", i - 31).as_str()));
    }
    let hanging = read
        .iter()
        .find(|g| g.tag("Event") == Some("pawndex query fixture: hanging pawns"))
        .unwrap();
    assert_eq!(hanging.tag("White"), Some("Hanging, \"White\" \\ Pawns"));
}

#[test]
fn pgn_export_writes_each_game_once_and_marks_its_first_match() {
    let db = Db::fixtures();
    let rows = positions_of_csv(db.run("query", &["white-duo", "--format", "csv"]).ok("csv"));
    let mut first: BTreeMap<i64, i64> = BTreeMap::new();
    for (g, p) in &rows {
        first.entry(*g).or_insert(*p);
    }
    let pgn = db.run("query", &["white-duo", "--format", "pgn"]);
    let games = read_pgn(pgn.ok("pgn"));
    assert_eq!(games.len(), first.len(), "one PGN game per matched game");
    let originals = fixture_games();
    for (game, (&id, &ply)) in games.iter().zip(&first) {
        let original = &originals[id as usize - 1];
        assert_eq!(game.sans, original.sans, "game {id}: mainline");
        assert_eq!(
            game.comments,
            [(
                ply as usize,
                format!("pawndex: first match, game {id} ply {ply}")
            )],
            "game {id}: the comment follows ply {ply}"
        );
    }
    // --limit counts games.
    let two = db.run("query", &["white-duo", "--format", "pgn", "--limit", "2"]);
    assert_eq!(read_pgn(two.ok("limit")).len(), 2);
}

#[test]
fn fen_export_matches_an_independent_replay() {
    let db = Db::fixtures();
    let out = db.run(
        "query",
        &[
            "--sql",
            "SELECT game_id, ply FROM ply_features ORDER BY game_id, ply",
            "--format",
            "fen",
        ],
    );
    let games = fixture_games();
    let mut seen = 0;
    for line in out.ok("fen").lines() {
        let cells: Vec<&str> = line.split('\t').collect();
        assert_eq!(cells.len(), 3, "{line}");
        let id: usize = cells[0].parse().unwrap();
        let ply: usize = cells[1].parse().unwrap();
        let want = &games[id - 1].fens()[ply];
        assert_eq!(cells[2], want, "game {id} ply {ply}");
        seen += 1;
    }
    let plies: usize = games.iter().map(|g| g.sans.len() + 1).sum();
    assert_eq!(seen, plies, "a FEN for every position");

    // The last positions agree with python-chess (tests/fixtures/fixtures.md).
    let notes = std::fs::read_to_string(root_path("tests/fixtures/fixtures.md")).unwrap();
    let final_fens: Vec<&str> = notes
        .lines()
        .filter(|l| l.contains("python-chess: OK") && l.contains("final FEN `"))
        .filter(|l| {
            l.contains("examples/sample.pgn")
                || l.contains("edge.pgn")
                || l.contains("chess960.pgn")
        })
        .map(|l| {
            l.split("final FEN `")
                .nth(1)
                .unwrap()
                .split('`')
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!(final_fens.len(), 22);
    let out = db.run(
        "query",
        &[
            "--sql",
            "SELECT id AS game_id, plies AS ply FROM games WHERE id <= 22 ORDER BY id",
            "--format",
            "fen",
        ],
    );
    let ours: Vec<String> = out
        .ok("final fens")
        .lines()
        .map(|l| l.split('\t').nth(2).unwrap().to_string())
        .collect();
    assert_eq!(ours, final_fens);
}

#[test]
fn fen_export_seeks_backwards_and_across_games() {
    let db = Db::fixtures();
    let out = db.run(
        "query",
        &[
            "--sql",
            "SELECT 4 AS game_id, 30 AS ply UNION ALL SELECT 4, 10 UNION ALL SELECT 21, 3 \
             UNION ALL SELECT 4, 0",
            "--format",
            "fen",
        ],
    );
    let games = fixture_games();
    let want: Vec<String> = [(4, 30), (4, 10), (21, 3), (4, 0)]
        .iter()
        .map(|&(g, p)| format!("{g}\t{p}\t{}", games[g - 1].fens()[p]))
        .collect();
    let got: Vec<&str> = out.ok("fen").lines().collect();
    assert_eq!(got, want);
}

#[test]
fn pgn_and_fen_need_their_columns() {
    let db = Db::fixtures();
    let out = db.run("query", &["--sql", "SELECT 1 AS x", "--format", "pgn"]);
    out.expect(1, "pgn without game_id");
    assert!(
        out.stderr.contains("needs a game_id column"),
        "{}",
        out.stderr
    );
    let out = db.run(
        "query",
        &["--sql", "SELECT 1 AS game_id", "--format", "fen"],
    );
    out.expect(1, "fen without ply");
    assert!(out.stderr.contains("game_id and ply"), "{}", out.stderr);
    let out = db.run(
        "query",
        &[
            "--sql",
            "SELECT 1 AS game_id, 500 AS ply",
            "--format",
            "fen",
        ],
    );
    out.expect(1, "ply past the end");
    assert!(out.stderr.contains("no ply 500"), "{}", out.stderr);
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let db = Db::fixtures();
    let mut child = Command::new(BIN)
        .args([
            "query",
            "--db",
            &db.arg(),
            "--sql",
            // Far more than the output buffer and the pipe hold.
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000) \
             SELECT i, 'some text to fill the pipe' FROM n",
            "--format",
            "csv",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn each_format_writes_the_same_positions() {
    let db = Db::fixtures();
    let csv: Vec<(i64, i64)> = positions_of_csv(
        db.run("query", &["black-three-islands", "--format", "csv"])
            .ok("csv"),
    );
    let json: Vec<(i64, i64)> = db
        .run("query", &["black-three-islands", "--format", "json"])
        .ok("json")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["game_id"].as_i64().unwrap(), v["ply"].as_i64().unwrap())
        })
        .collect();
    let table: Vec<(i64, i64)> = db
        .run("query", &["black-three-islands"])
        .ok("table")
        .lines()
        .skip(2)
        .map(|l| {
            let mut it = l.split_whitespace().map(|c| c.parse::<i64>().unwrap());
            (it.next().unwrap(), it.next().unwrap())
        })
        .collect();
    let fen: Vec<(i64, i64)> = db
        .run("query", &["black-three-islands", "--format", "fen"])
        .ok("fen")
        .lines()
        .map(|l| {
            let mut it = l.split('\t');
            (
                it.next().unwrap().parse().unwrap(),
                it.next().unwrap().parse().unwrap(),
            )
        })
        .collect();
    assert!(!csv.is_empty());
    assert_eq!(json, csv);
    assert_eq!(table, csv);
    assert_eq!(fen, csv);
    let games: BTreeSet<i64> = csv.iter().map(|&(g, _)| g).collect();
    let pgn = db.run("query", &["black-three-islands", "--format", "pgn"]);
    assert_eq!(read_pgn(pgn.ok("pgn")).len(), games.len());
}

#[test]
fn pgn_export_keeps_the_order_of_the_rows() {
    let db = Db::fixtures();
    // The games' events in the order of `ORDER BY order`, from the PGN export and from SQL.
    let events = |order: &str| -> (Vec<String>, Vec<String>) {
        let sql = format!("SELECT id AS game_id, event FROM games ORDER BY {order}");
        let pgn = db
            .run("query", &["--sql", &sql, "--format", "pgn"])
            .ok("pgn export")
            .to_string();
        let exported = read_pgn(&pgn)
            .iter()
            .map(|g| g.tag("Event").unwrap_or("?").to_string())
            .collect();
        let csv = db.run("query", &["--sql", &sql, "--format", "csv"]);
        let listed = csv_records(csv.ok("csv"))
            .into_iter()
            .skip(1)
            .map(|r| {
                if r[1].is_empty() {
                    "?".to_string()
                } else {
                    r[1].clone()
                }
            })
            .collect();
        (exported, listed)
    };
    for order in ["id", "id DESC", "white, id", "length(moves) DESC, id"] {
        let (exported, listed) = events(order);
        assert!(exported.len() > 2, "{order}: {exported:?}");
        assert_eq!(exported, listed, "ORDER BY {order}");
    }
    let (forward, _) = events("id");
    let (mut backward, _) = events("id DESC");
    assert_ne!(forward, backward, "the events must tell the games apart");
    backward.reverse();
    assert_eq!(forward, backward);
}
