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

/// A database as version 4 wrote it: the same games without the columns of version 5 (nor the
/// tables and indexes of version 6).
fn as_version_4(db: &Path) {
    let conn = open_db(db);
    conn.execute_batch(
        "DROP TABLE player_names;
         DROP TABLE structure_results;
         DROP INDEX games_white;
         DROP INDEX games_black;
         ALTER TABLE games DROP COLUMN time_control;
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

/// `find ARGS --per game --format csv` on `db`: the game ids in the order printed.
fn game_ids(db: &Path, args: &[&str]) -> Vec<i64> {
    let mut all = vec!["find", "--db", db.to_str().unwrap(), "--format", "csv"];
    all.extend_from_slice(args);
    let run = pawndex(&all);
    run.expect_code(0, &args.join(" "));
    run.stdout
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect()
}

/// The ids (1-based, in the order written) of the games whose tags pass `keep`.
fn ids_where(tags: &[Tags], keep: impl Fn(&Tags) -> bool) -> Vec<i64> {
    (1..)
        .zip(tags)
        .filter(|(_, t)| keep(t))
        .map(|(id, _)| id)
        .collect()
}

fn year(t: &Tags) -> Option<i64> {
    t.date[..4].parse().ok()
}

#[test]
fn the_new_game_filters_match_the_tags() {
    let dir = tempfile::tempdir().unwrap();
    let (db, tags) = indexed(dir.path());
    let per_game = |extra: &[&str]| {
        let mut args = vec!["--per", "game"];
        args.extend_from_slice(extra);
        game_ids(&db, &args)
    };
    let both = |t: &Tags| t.white_elo.zip(t.black_elo);
    assert_eq!(
        per_game(&["--max-elo", "2500"]),
        ids_where(&tags, |t| both(t)
            .is_some_and(|(w, b)| w <= 2500 && b <= 2500))
    );
    assert_eq!(
        per_game(&["--min-elo", "2300", "--max-elo", "2600"]),
        ids_where(&tags, |t| both(t).is_some_and(|(w, b)| (2300..=2600)
            .contains(&w)
            && (2300..=2600).contains(&b)))
    );
    for (range, lo, hi) in [
        ("2001", 2001, 2001),
        ("1980..2005", 1980, 2005),
        ("..1980", 0, 1980),
        ("2005..", 2005, 9999),
    ] {
        assert_eq!(
            per_game(&["--year", range]),
            ids_where(&tags, |t| year(t).is_some_and(|y| (lo..=hi).contains(&y))),
            "--year {range}"
        );
    }
    assert_eq!(
        per_game(&["--year", "1975,2010"]),
        ids_where(&tags, |t| matches!(year(t), Some(1975 | 2010)))
    );
    assert_eq!(
        per_game(&["--time-class", "blitz,bullet"]),
        ids_where(&tags, |t| matches!(class_of(t), "blitz" | "bullet"))
    );
    assert_eq!(
        per_game(&["--time-class", "Classical", "--time-class", "simul"]),
        ids_where(&tags, |t| matches!(class_of(t), "classical" | "simul"))
    );
    assert_eq!(
        per_game(&["--exclude-time-class", "unknown,blitz"]),
        ids_where(&tags, |t| !matches!(class_of(t), "unknown" | "blitz"))
    );
}

/// The matching positions of each game, from `find --per position` (one row per position):
/// (game id, positions), in game order.
fn stays(db: &Path, args: &[&str]) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = Vec::new();
    for id in game_ids(db, args) {
        match out.last_mut() {
            Some((g, n)) if *g == id => *n += 1,
            _ => out.push((id, 1)),
        }
    }
    out
}

#[test]
fn min_stay_keeps_the_games_with_enough_matching_positions() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = indexed(dir.path());
    for cond in [
        vec!["--white", "islands:2.."],
        vec!["--black", "duo", "--ply", "10..60"],
        vec!["--no-pawns", "wd"],
        vec![],
    ] {
        let all = stays(&db, &cond);
        assert!(all.len() > 4, "{cond:?}: too few games to test");
        let mut counts: Vec<i64> = all.iter().map(|s| s.1).collect();
        counts.sort_unstable();
        let n = counts[counts.len() / 2];
        let long: Vec<(i64, i64)> = all.iter().copied().filter(|s| s.1 >= n).collect();
        assert!(
            long.len() < all.len(),
            "{cond:?} {n}: the filter must leave games out"
        );
        let n_text = n.to_string();
        let mut with = cond.clone();
        with.extend(["--min-stay", &n_text]);
        // Per position: the positions of the games that stay long enough.
        assert_eq!(stays(&db, &with), long, "{with:?}");
        // Per game: those games, and their count.
        let mut games = with.clone();
        games.extend(["--per", "game"]);
        let ids: Vec<i64> = long.iter().map(|s| s.0).collect();
        assert_eq!(game_ids(&db, &games), ids, "{games:?}");
        let mut longest = long.clone();
        longest.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        games.extend(["--sort", "stay"]);
        let ids: Vec<i64> = longest.iter().map(|s| s.0).collect();
        assert_eq!(game_ids(&db, &games), ids, "{games:?}");
        for (per, want) in [
            ("game", ids.len() as i64),
            ("position", long.iter().map(|s| s.1).sum()),
        ] {
            let mut args = vec![
                "find",
                "--db",
                db.to_str().unwrap(),
                "--count",
                "--per",
                per,
            ];
            args.extend_from_slice(&with);
            let run = pawndex(&args);
            run.expect_code(0, "count");
            assert_eq!(run.stdout.trim(), want.to_string(), "{args:?}");
        }
    }
}

#[test]
fn sorts_order_the_games_by_their_tags_and_stay() {
    let dir = tempfile::tempdir().unwrap();
    let (db, tags) = indexed(dir.path());
    // With a position condition, and without (every position matches: the store reads no
    // run, the stay is the game's positions).
    for cond in [&["--white", "islands:2.."][..], &[]] {
        sorted_as_the_tags_say(&db, &tags, cond);
    }
}

fn sorted_as_the_tags_say(db: &Path, tags: &[Tags], cond: &[&str]) {
    let stay = stays(db, cond);
    let matching: Vec<i64> = stay.iter().map(|s| s.0).collect();
    let tag = |id: i64| &tags[id as usize - 1];
    // Each key: a value per game (None: the game has none, last either way), highest first.
    type Key<'a> = Box<dyn Fn(i64) -> Option<String> + 'a>;
    let number = |v: Option<i64>| v.map(|v| format!("{v:08}"));
    let keys: Vec<(&str, Key<'_>)> = vec![
        (
            "elo",
            Box::new(move |id| {
                number(tag(id).white_elo.zip(tag(id).black_elo).map(|(w, b)| w + b))
            }),
        ),
        ("white-elo", Box::new(move |id| number(tag(id).white_elo))),
        ("black-elo", Box::new(move |id| number(tag(id).black_elo))),
        (
            "date",
            Box::new(move |id| {
                let d = tag(id).date;
                (!d.starts_with('?')).then(|| d.replace('?', "0"))
            }),
        ),
        (
            "stay",
            Box::new({
                let stay = stay.clone();
                move |id| number(stay.iter().find(|s| s.0 == id).map(|s| s.1))
            }),
        ),
    ];
    for (name, key) in &keys {
        for reverse in [false, true] {
            let mut want = matching.clone();
            want.sort_by(|a, b| {
                let (ka, kb) = (key(*a), key(*b));
                let by_key = match (&ka, &kb) {
                    (Some(x), Some(y)) if reverse => x.cmp(y),
                    (Some(x), Some(y)) => y.cmp(x),
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (None, None) => std::cmp::Ordering::Equal,
                };
                by_key.then(a.cmp(b))
            });
            let mut args = vec!["--per", "game", "--sort", name];
            args.extend_from_slice(cond);
            if reverse {
                args.push("--reverse");
            }
            assert_eq!(game_ids(db, &args), want, "{args:?}");
        }
    }
    let mut args = vec!["--per", "game", "--reverse"];
    args.extend_from_slice(cond);
    let mut back = matching.clone();
    back.reverse();
    assert_eq!(game_ids(db, &args), back);
    args.extend(["--sort", "id"]);
    assert_eq!(game_ids(db, &args), back);
}

#[test]
fn bad_values_are_usage_errors_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = indexed(dir.path());
    let d = db.to_str().unwrap();
    for (args, words) in [
        (vec!["--max-elo", "5000"], "--max-elo 5000"),
        (vec!["--max-elo", "x"], "--max-elo"),
        (
            vec!["--min-elo", "2600", "--max-elo", "2400"],
            "--max-elo 2400",
        ),
        (vec!["--year", "20x"], "--year 20x"),
        (vec!["--year", "2001.05"], "--year 2001.05"),
        (vec!["--year", "2005..2001"], "--year 2005..2001"),
        (vec!["--time-class", "fast"], "--time-class fast"),
        (vec!["--exclude-time-class", ","], "--exclude-time-class"),
        (vec!["--min-stay=-1"], "--min-stay -1"),
        (vec!["--min-stay", "99999"], "--min-stay 99999"),
        (
            vec!["--per", "game", "--sort", "typicality"],
            "--sort typicality",
        ),
        (vec!["--sort", "elo"], "--sort"),
        (vec!["--reverse"], "--reverse"),
    ] {
        let mut all = vec!["find", "--db", d];
        all.extend_from_slice(&args);
        let run = pawndex(&all);
        run.expect_code(2, &args.join(" "));
        assert!(run.stderr.contains(words), "{args:?}: {}", run.stderr);
    }
}
