//! Model games (issue 39, part 2): the time class stored with each game (from its TimeControl
//! tag, else from the words of its Event tag) and its migration from version 4; `find`'s
//! filters `--max-elo`, `--year`, `--time-class`, `--exclude-time-class`, `--min-stay` and the
//! sorts of `--per game`, each checked against the tags the test itself wrote.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

/// The tags of one generated game (None: the tag is left out).
#[derive(Clone, Debug)]
struct Tags {
    white: String,
    event: &'static str,
    date: &'static str,
    white_elo: Option<i64>,
    black_elo: Option<i64>,
    time_control: Option<&'static str>,
}

/// (Event, TimeControl, the class the documented rule gives).
const CLASSES: [(&str, Option<&str>, &str); 10] = [
    ("Hoogovens", None, "unknown"),
    ("World Blitz 2015", None, "blitz"),
    ("Amber Rapidplay", None, "rapid"),
    ("Amber-blind 6th", Some("1500+10"), "blindfold"),
    ("Galicia simul", None, "simul"),
    ("Blitzstein mem", None, "unknown"),
    ("Open", Some("180+2"), "blitz"),
    ("Open", Some("40/7200:3600"), "classical"),
    ("World Blitz", Some("5400+30"), "classical"),
    ("Titled Arena", Some("60"), "bullet"),
];

const DATES: [&str; 6] = [
    "1990.05.17",
    "2001.??.??",
    "????.??.??",
    "2001.12.31",
    "1975.01.02",
    "2010.06.??",
];

/// The games of examples/sample.pgn, each written four times with other tags.
fn corpus(dir: &Path) -> (PathBuf, Vec<Tags>) {
    let text = std::fs::read_to_string(root_path("examples/sample.pgn")).unwrap();
    let mut games: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with("[Event ") {
            games.push(String::new());
        }
        if let Some(g) = games.last_mut()
            && !line.starts_with('[')
        {
            g.push_str(line);
            g.push('\n');
        }
    }
    let mut out = String::new();
    let mut tags = Vec::new();
    let mut n = 0usize;
    for (i, moves) in games.iter().enumerate() {
        for k in 0..4 {
            let (event, tc, _) = CLASSES[n % CLASSES.len()];
            let t = Tags {
                white: format!("White {i} {k}"),
                event,
                date: DATES[n % DATES.len()],
                white_elo: (n % 7 != 3).then_some(2000 + ((n * 137) % 800) as i64),
                black_elo: (n % 5 != 2).then_some(2100 + ((n * 71) % 700) as i64),
                time_control: tc,
            };
            out += &format!(
                "[Event \"{}\"]\n[Site \"?\"]\n[Date \"{}\"]\n[Round \"?\"]\n[White \"{}\"]\n\
                 [Black \"Black\"]\n[Result \"*\"]\n",
                t.event, t.date, t.white
            );
            if let Some(e) = t.white_elo {
                out += &format!("[WhiteElo \"{e}\"]\n");
            }
            if let Some(e) = t.black_elo {
                out += &format!("[BlackElo \"{e}\"]\n");
            }
            if let Some(tc) = t.time_control {
                out += &format!("[TimeControl \"{tc}\"]\n");
            }
            out += "\n";
            out += moves;
            out += "\n";
            tags.push(t);
            n += 1;
        }
    }
    let pgn = dir.join("games.pgn");
    std::fs::write(&pgn, out).unwrap();
    (pgn, tags)
}

fn class_of(t: &Tags) -> &'static str {
    CLASSES
        .iter()
        .find(|(e, tc, _)| *e == t.event && *tc == t.time_control)
        .map(|c| c.2)
        .unwrap()
}

fn indexed(dir: &Path) -> (PathBuf, Vec<Tags>) {
    let (pgn, tags) = corpus(dir);
    let db = dir.join("games.db");
    index(&db, &[], &[&pgn]).expect_code(0, "index");
    (db, tags)
}

fn pawndex(args: &[&str]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    Run::of(cmd, &args.join(" "))
}

#[test]
fn the_time_control_and_class_are_stored() {
    let dir = tempfile::tempdir().unwrap();
    let (db, tags) = indexed(dir.path());
    let rows = query_all(
        &open_db(&db),
        "SELECT white, time_control, time_class FROM games ORDER BY id",
    );
    assert_eq!(rows.len(), tags.len());
    for (row, t) in rows.iter().zip(&tags) {
        let text = |v: &rusqlite::types::Value| match v {
            rusqlite::types::Value::Text(s) => Some(s.clone()),
            _ => None,
        };
        assert_eq!(text(&row[0]).as_deref(), Some(t.white.as_str()));
        assert_eq!(text(&row[1]).as_deref(), t.time_control, "{t:?}");
        assert_eq!(text(&row[2]).as_deref(), Some(class_of(t)), "{t:?}");
    }
    let info = pawndex(&["info", "--db", db.to_str().unwrap()]);
    info.expect_code(0, "info");
    assert!(!info.stdout.contains("TimeControl"), "{}", info.stdout);
}

/// A database as version 4 wrote it: the same games without the columns of version 5.
fn as_version_4(db: &Path) {
    let conn = open_db(db);
    conn.execute_batch(
        "ALTER TABLE games DROP COLUMN time_control;
         ALTER TABLE games DROP COLUMN time_class;
         DROP TABLE time_control_stored;
         PRAGMA user_version = 4;",
    )
    .unwrap();
}

#[test]
fn migrate_classes_a_version_4_database_from_the_event_and_info_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (db, tags) = indexed(dir.path());
    as_version_4(&db);
    let d = db.to_str().unwrap();
    // Read commands refuse the old version and name what to run.
    let old = pawndex(&["find", "--white", "quart", "--db", d]);
    old.expect_code(1, "find on version 4");
    assert!(
        old.stderr.contains("pawndex migrate --db"),
        "{}",
        old.stderr
    );
    pawndex(&["migrate", "--db", d]).expect_code(0, "migrate");
    let rows = query_all(
        &open_db(&db),
        "SELECT time_control IS NULL, time_class FROM games ORDER BY id",
    );
    for (row, t) in rows.iter().zip(&tags) {
        assert_eq!(row[0], rusqlite::types::Value::Integer(1));
        // The Event alone (the TimeControl was not kept).
        let want = match t.event {
            "World Blitz 2015" | "World Blitz" | "Titled Arena" => "blitz",
            "Amber Rapidplay" => "rapid",
            "Amber-blind 6th" => "blindfold",
            "Galicia simul" => "simul",
            _ => "unknown",
        };
        assert_eq!(row[1], rusqlite::types::Value::Text(want.into()), "{t:?}");
    }
    let info = pawndex(&["info", "--db", d]);
    info.expect_code(0, "info");
    assert!(
        info.stdout
            .contains("48 games indexed before schema version 5 have no TimeControl stored"),
        "{}",
        info.stdout
    );
    let json = pawndex(&["info", "--db", d, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["games_without_time_control"], 48);
    // Games indexed now keep their TimeControl.
    let more = dir.path().join("more.pgn");
    std::fs::write(
        &more,
        "[Event \"Casual\"]\n[White \"New\"]\n[Black \"Game\"]\n[Result \"*\"]\n\
         [TimeControl \"300+3\"]\n\n1. e4 e5 *\n",
    )
    .unwrap();
    index(&db, &[], &[&more]).expect_code(0, "index more");
    let last = query_all(
        &open_db(&db),
        "SELECT time_control, time_class FROM games ORDER BY id DESC LIMIT 1",
    );
    assert_eq!(
        last[0],
        vec![
            rusqlite::types::Value::Text("300+3".into()),
            rusqlite::types::Value::Text("blitz".into())
        ]
    );
}
