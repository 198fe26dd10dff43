//! The players' tables of schema 6 (issue 40): `player_names` (every stored spelling, folded,
//! with its games, years and ratings) and `structure_results` (each named form's games and
//! results by side, rating and time class) equal a recomputation from `games` and
//! `ply_features` after a first load, after an append, and in a database loaded in one run;
//! `pawndex players` merges spellings by the documented rule.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::*;

/// Games whose names test the folding and merging rule (a Carlsbad in the first: 1.d4 d5 2.c4
/// e6 3.Nc3 Nf6 4.cxd5 exd5).
const NAMED: &str = r#"[Event "Names"]
[Site "?"]
[Date "2019.03.04"]
[Round "1"]
[White "Carlsen, Magnus"]
[Black "Ðukić, Željko"]
[Result "1-0"]
[WhiteElo "2845"]
[BlackElo "2400"]

1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. cxd5 exd5 5. Bg5 c6 6. e3 Be7 7. Qc2 O-O 8. Bd3 Nbd7 1-0

[Event "Names"]
[Site "?"]
[Date "2021.??.??"]
[Round "2"]
[White "Dukic,Z"]
[Black "CARLSEN,  M."]
[Result "0-1"]
[BlackElo "2855"]

1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 0-1

[Event "Names"]
[Site "?"]
[Date "????.??.??"]
[Round "3"]
[White "Polgar,S"]
[Black "Polgar,Susan"]
[Result "1/2-1/2"]

1. e4 e5 1/2-1/2

[Event "Names"]
[Site "?"]
[Date "1990.01.01"]
[Round "4"]
[White "Polgar,Sofia"]
[Black "Polgar,S"]
[Result "*"]

1. d4 d5 *
"#;

/// A row of `player_names` as the test recomputes it: (folded, surname, games, white, black,
/// first year, last year, min rating, max rating); the folded forms only for the names whose
/// folded form the test knows, else what the table holds.
type NameRow = (
    i64,
    i64,
    i64,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
);

fn year_of(date: Option<&str>) -> Option<i64> {
    let d = date?;
    let head = d.get(..4)?;
    if head.chars().all(|c| c.is_ascii_digit()) {
        head.parse().ok()
    } else {
        None
    }
}

fn min_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    [a, b].into_iter().flatten().min()
}

fn max_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    [a, b].into_iter().flatten().max()
}

/// `player_names` recomputed from `games`, row by row in Rust.
fn names_expected(conn: &rusqlite::Connection) -> BTreeMap<String, NameRow> {
    let mut st = conn
        .prepare("SELECT white, black, date, white_elo, black_elo FROM games")
        .unwrap();
    let mut out: BTreeMap<String, NameRow> = BTreeMap::new();
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, Option<String>>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<i64>>(3)?,
                r.get::<_, Option<i64>>(4)?,
            ))
        })
        .unwrap();
    for row in rows {
        let (white, black, date, we, be) = row.unwrap();
        let year = year_of(date.as_deref());
        for (name, elo, is_white) in [(white, we, true), (black, be, false)] {
            let Some(name) = name else { continue };
            let e = out.entry(name).or_insert((0, 0, 0, None, None, None, None));
            e.0 += 1;
            if is_white {
                e.1 += 1;
            } else {
                e.2 += 1;
            }
            e.3 = min_opt(e.3, year);
            e.4 = max_opt(e.4, year);
            e.5 = min_opt(e.5, elo);
            e.6 = max_opt(e.6, elo);
        }
    }
    out
}

fn names_stored(conn: &rusqlite::Connection) -> BTreeMap<String, NameRow> {
    let mut st = conn
        .prepare(
            "SELECT name, games, white_games, black_games, first_year, last_year, min_elo,
                    max_elo FROM player_names",
        )
        .unwrap();
    st.query_map([], |r| {
        Ok((
            r.get(0)?,
            (
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
            ),
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// (code, side, rating or 0, time class) -> [games, wins, draws, losses] of that side.
type ResultRows = BTreeMap<(i64, i64, i64, String), [i64; 4]>;

/// `structure_results` recomputed from `ply_features` (the forms each game reaches) and
/// `games` (results, ratings, time class), not from `structure_changes`.
fn results_expected(conn: &rusqlite::Connection) -> ResultRows {
    let ids: BTreeMap<String, i64> = conn
        .prepare("SELECT key, id FROM structure_names")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut st = conn
        .prepare(
            "SELECT DISTINCT p.game_id, p.structure, p.structure_reversed, g.result,
                    g.white_elo, g.black_elo, g.time_class
             FROM ply_features AS p JOIN games AS g ON g.id = p.game_id
             WHERE p.structure IS NOT NULL",
        )
        .unwrap();
    let mut out = ResultRows::new();
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, Option<i64>>(4)?,
                r.get::<_, Option<i64>>(5)?,
                r.get::<_, String>(6)?,
            ))
        })
        .unwrap();
    for row in rows {
        let (key, reversed, result, we, be, class) = row.unwrap();
        let code = 2 * ids[&key] + reversed;
        for (side, elo) in [(0, we), (1, be)] {
            let e = out
                .entry((code, side, elo.unwrap_or(0), class.clone()))
                .or_default();
            e[0] += 1;
            let won = if side == 0 { "1-0" } else { "0-1" };
            let lost = if side == 0 { "0-1" } else { "1-0" };
            match result.as_deref() {
                Some(r) if r == won => e[1] += 1,
                Some("1/2-1/2") => e[2] += 1,
                Some(r) if r == lost => e[3] += 1,
                _ => {}
            }
        }
    }
    out
}

fn results_stored(conn: &rusqlite::Connection) -> ResultRows {
    conn.prepare(
        "SELECT structure, side, elo, time_class, games, wins, draws, losses
         FROM structure_results",
    )
    .unwrap()
    .query_map([], |r| {
        Ok((
            (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?),
            [r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?],
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// Both tables equal their recomputation; returns the number of names and of result rows.
fn assert_tables(db: &Path, what: &str) -> (usize, usize) {
    let conn = open_db(db);
    let names = names_stored(&conn);
    let expected = names_expected(&conn);
    assert_eq!(names.len(), expected.len(), "{what}: names");
    for (name, row) in &expected {
        assert_eq!(names.get(name), Some(row), "{what}: the row of {name:?}");
    }
    let results = results_stored(&conn);
    let expected = results_expected(&conn);
    assert!(!expected.is_empty(), "{what}: no game reaches a named form");
    assert_eq!(results, expected, "{what}: structure_results");
    (names.len(), results.len())
}

fn players_json(db: &Path, search: &str) -> serde_json::Value {
    let out = Command::new(BIN)
        .args([
            "players", "--format", "json", "--limit", "100", "--search", search, "--db",
        ])
        .arg(db)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn appends_keep_the_players_tables_current() {
    let Some(shard) = corpus_shard("masters-1.pgn.zst") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.pgn");
    let b = dir.path().join("b.pgn");
    let c = dir.path().join("c.pgn");
    std::fs::write(&a, shard_games(&shard, 0, 1500)).unwrap();
    std::fs::write(&b, shard_games(&shard, 1500, 3000)).unwrap();
    std::fs::write(&c, NAMED).unwrap();

    let db = dir.path().join("appended.db");
    index(&db, &[], &[&a]).expect_code(0, "first load");
    let (names1, _) = assert_tables(&db, "after the first load");
    index(&db, &[], &[&b, &c]).expect_code(0, "append");
    let (names2, rows2) = assert_tables(&db, "after the append");
    assert!(
        names2 > names1,
        "the append added no name ({names1} then {names2})"
    );

    // The same games in one run: the same rows.
    let once = dir.path().join("once.db");
    index(&once, &[], &[&a, &b, &c]).expect_code(0, "one run");
    let (names3, rows3) = assert_tables(&once, "one run");
    assert_eq!((names2, rows2), (names3, rows3));

    // The folded forms of the names the test wrote.
    let conn = open_db(&db);
    for (name, folded, surname) in [
        ("Carlsen, Magnus", "carlsen,magnus", "carlsen"),
        ("CARLSEN,  M.", "carlsen,m", "carlsen"),
        ("Ðukić, Željko", "dukic,zeljko", "dukic"),
        ("Dukic,Z", "dukic,z", "dukic"),
    ] {
        let got: (String, String) = conn
            .query_row(
                "SELECT folded, surname FROM player_names WHERE name = ?1",
                [name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(got, (folded.to_owned(), surname.to_owned()), "{name}");
    }

    // Initials merge into the one full name they match; Polgar,S matches two and stays alone.
    let doc = players_json(&db, "dukic");
    let players = doc["players"].as_array().unwrap();
    assert_eq!(players.len(), 1, "{doc}");
    assert_eq!(players[0]["player"], "Ðukić, Željko");
    assert_eq!(
        players[0]["names"],
        serde_json::json!(["Dukic,Z", "Ðukić, Željko"])
    );
    assert_eq!(players[0]["games"], 2);
    assert_eq!(players[0]["white_games"], 1);
    assert_eq!(players[0]["first_year"], 2019);
    assert_eq!(players[0]["last_year"], 2021);
    assert_eq!(players[0]["min_elo"], 2400);

    let doc = players_json(&db, "polgar");
    let shown: Vec<(&str, usize)> = doc["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["player"].as_str().unwrap(),
                p["names"].as_array().unwrap().len(),
            )
        })
        .collect();
    for want in ["Polgar,S", "Polgar,Susan", "Polgar,Sofia"] {
        assert!(shown.contains(&(want, 1)), "{want} alone in {shown:?}");
    }

    // The masters' Carlsen rows gain the two games written here.
    let doc = players_json(&db, "Carlsen, M.");
    let carlsen = doc["players"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| {
            p["names"]
                .as_array()
                .unwrap()
                .iter()
                .any(|n| n == "CARLSEN,  M.")
        })
        .unwrap_or_else(|| panic!("no player covers CARLSEN,  M.: {doc}"))
        .clone();
    assert!(
        carlsen["names"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "Carlsen, Magnus"),
        "{carlsen}"
    );
}

#[test]
fn an_empty_search_lists_players_by_games_and_a_bad_option_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("c.pgn");
    std::fs::write(&c, NAMED).unwrap();
    let db = dir.path().join("n.db");
    index(&db, &[], &[&c]).expect_code(0, "index");
    let doc = players_json(&db, "");
    let games: Vec<i64> = doc["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["games"].as_i64().unwrap())
        .collect();
    assert!(games.windows(2).all(|w| w[0] >= w[1]), "{games:?}");
    assert_eq!(games.iter().sum::<i64>(), 8, "4 games, 2 names each");
    let out = Command::new(BIN)
        .args(["players", "--limit", "0", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(BIN)
        .args(["players", "--search", "nobody", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no player's name holds"));
}
