//! `pawndex player` on five games whose figures are counted by hand (below): games and score
//! per colour, a structure row's games, plies, score, interval, baseline (all and the rating
//! band), delta, moves and breaks, `--as`, `--vs`, `--baseline` with a second database (and
//! one classified with another catalogue, refused), the three formats, an unknown name and a
//! bad option; and `find --player-name`.
//!
//! Every game reaches the Carlsbad (White d4+e3 without a c-pawn, Black c6+d5 without an
//! e-pawn) with 6.e3, at ply 11, after the same first ten moves, then plays one of two
//! continuations (those of tests/plans_cli.rs):
//!
//! A: … 6.e3 Be7 7.Bd3 Nbd7 8.Qc2 O-O 9.Nge2 Re8 10.O-O Nf8 11.Rab1 Ng6 12.b4 a6 13.a4 Bd6
//!   14.b5 axb5 15.axb5 Bd7 16.bxc6 bxc6: in the Carlsbad at plies 11..=30 and 32 (21 plies);
//!   16.bxc6 leaves it (White's pawn break); 15.axb5 is a recapture (a reply). Its exact
//!   Carlsbad pawns stand at plies 11..=22 (12 plies, until 12.b4).
//! B: … 6.e3 Be7 7.Bd3 Nbd7 8.Nf3 O-O 9.Qc2 Re8 10.O-O Nf8 11.Rab1 Ne4 12.Bxe7 Qxe7 13.b4 f5
//!   14.b5 c5: in the Carlsbad at plies 11..=27 (17 plies); 14…c5 leaves it. Exact pawns at
//!   plies 11..=24 (14 plies, until 13.b4).
//!
//! The games (White–Black, result, ratings, moves):
//! 1. Alpha–Beta 1-0, 2600/2500, A, 1994
//! 2. Gamma–Delta 0-1, unrated, B, 2003
//! 3. Alpha–Gamma 1/2-1/2, 2620/2550, B, 1995
//! 4. Beta–Alpha 0-1, 2500/2580, A, 1996
//! 5. Gamma–Beta 1-0, 2550/2500, A, 2001
//!
//! Alpha: as White games 1 and 3 (+1 =1: 75.0), as Black game 4 (+1: 100.0), all 83.3; ratings
//! 2580, 2600, 2620: median 2600, band 2500..2700. Carlsbad as White: games 1, 3, plies
//! 21 + 17 = 38, score 75.0, Wilson interval of 1.5/2 (30.1..95.4 … computed below); baseline
//! for White: games 2, 4, 5 (White not Alpha): 0-1, 0-1, 1-0: 33.3 over 3 games; in the band
//! (White rated 2500..2700): games 4 (2500) and 5 (2550): 50.0 over 2; delta 75.0 − 33.3 =
//! 41.7; 2 games: too few. Alpha's plan moves there as White: Bd3, O-O, Qc2, Rb1, b4, b5 in
//! both games (top 5 by games then SAN: Bd3, O-O, Qc2, Rb1, b4); breaks: bxc6 in game 1
//! (100.0). Exact Carlsbad pawns as White: games 1, 3, plies 12 + 14 = 26, the same baseline.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{BIN, Run};
use serde_json::Value;

const OPENING: &str = "1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. cxd5 exd5 5. Bg5 c6 6. e3 Be7 7. Bd3 Nbd7";
const A: &str = "8. Qc2 O-O 9. Nge2 Re8 10. O-O Nf8 11. Rab1 Ng6 12. b4 a6 13. a4 Bd6 14. b5 \
                 axb5 15. axb5 Bd7 16. bxc6 bxc6";
const B: &str = "8. Nf3 O-O 9. Qc2 Re8 10. O-O Nf8 11. Rab1 Ne4 12. Bxe7 Qxe7 13. b4 f5 14. b5 c5";
const CARLSBAD: &str = "8/pp3ppp/2p5/3p4/3P4/4P3/PP3PPP/8";

/// (White, Black, result, White's rating, Black's rating, continuation, date).
type Game<'a> = (
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
);

const GAMES: [Game<'static>; 5] = [
    ("Alpha", "Beta", "1-0", "2600", "2500", A, "1994.05.01"),
    ("Gamma", "Delta", "0-1", "", "", B, "2003.??.??"),
    ("Alpha", "Gamma", "1/2-1/2", "2620", "2550", B, "1995.01.02"),
    ("Beta", "Alpha", "0-1", "2500", "2580", A, "1996.03.04"),
    ("Gamma", "Beta", "1-0", "2550", "2500", A, "2001.07.08"),
];

fn pgn(games: &[Game<'_>]) -> String {
    let mut out = String::new();
    for (i, (white, black, result, we, be, moves, date)) in games.iter().enumerate() {
        out.push_str(&format!(
            "[Event \"E{}\"]\n[Site \"?\"]\n[Date \"{date}\"]\n[Round \"1\"]\n[White \"{white}\"]\n\
             [Black \"{black}\"]\n[Result \"{result}\"]\n",
            i + 1
        ));
        if !we.is_empty() {
            out.push_str(&format!("[WhiteElo \"{we}\"]\n[BlackElo \"{be}\"]\n"));
        }
        out.push_str(&format!("\n{OPENING} {moves} {result}\n\n"));
    }
    out
}

struct Db {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

fn db_of(games: &[Game<'_>], env: &[(&str, &Path)]) -> Db {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("games.pgn");
    std::fs::write(&file, pgn(games)).unwrap();
    let path = dir.path().join("games.db");
    let mut cmd = common::index_command(&path, &[], &[&file]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    Run::of(cmd, "index").expect_code(0, "index");
    Db { _dir: dir, path }
}

fn player(db: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.arg("player").arg("--db").arg(db).args(args);
    Run::of(cmd, &format!("player {args:?}"))
}

fn json(db: &Path, args: &[&str]) -> Value {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let run = player(db, &all);
    run.expect_code(0, "player json");
    serde_json::from_str(&run.stdout).unwrap()
}

/// The row of `key` (and `reversed` false) with `colour`.
fn row<'a>(doc: &'a Value, key: &str, colour: &str) -> &'a Value {
    doc["structures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == key && r["colour"] == colour && r["reversed"] == false)
        .unwrap_or_else(|| panic!("no row {key} {colour} in {doc:#}"))
}

fn results(v: &Value) -> (u64, u64, u64, u64, Option<f64>) {
    (
        v["games"].as_u64().unwrap(),
        v["wins"].as_u64().unwrap(),
        v["draws"].as_u64().unwrap(),
        v["losses"].as_u64().unwrap(),
        v["score"].as_f64(),
    )
}

/// The 95% Wilson interval in percent, one decimal, as the contract defines it.
fn wilson(points: f64, n: f64) -> (f64, f64) {
    let p = points / n;
    let z: f64 = 1.96;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    let one = |v: f64| (v * 1000.0).round() / 10.0;
    (one(centre - half), one(centre + half))
}

#[test]
fn profile_counts_by_hand() {
    let db = db_of(&GAMES, &[]);
    let doc = json(&db.path, &["Alpha"]);
    assert_eq!(doc["player"], "Alpha");
    assert_eq!(doc["names"], serde_json::json!(["Alpha"]));
    assert_eq!(doc["as"], "both");
    assert_eq!(doc["baseline_source"], Value::Null);
    assert_eq!(
        doc["rating"],
        serde_json::json!({"median": 2600, "low": 2500, "high": 2700})
    );
    assert_eq!(results(&doc["games"]["white"]), (2, 1, 1, 0, Some(75.0)));
    assert_eq!(results(&doc["games"]["black"]), (1, 1, 0, 0, Some(100.0)));
    assert_eq!(results(&doc["games"]["all"]), (3, 2, 1, 0, Some(83.3)));

    let r = row(&doc, "carlsbad", "white");
    assert_eq!(r["kind"], "named");
    assert_eq!(r["name"], "Carlsbad");
    assert_eq!(results(r), (2, 1, 1, 0, Some(75.0)));
    assert_eq!(r["plies"], 38);
    let (low, high) = wilson(1.5, 2.0);
    assert_eq!(
        (r["low"].as_f64(), r["high"].as_f64()),
        (Some(low), Some(high))
    );
    assert_eq!(r["baseline"], 33.3);
    assert_eq!(r["baseline_games"], 3);
    assert_eq!(r["baseline_band"], 50.0);
    assert_eq!(r["baseline_band_games"], 2);
    assert_eq!(r["delta"], 41.7);
    assert_eq!(r["trust"], "too few games");
    let moves: Vec<(&str, u64)> = r["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["san"].as_str().unwrap(), m["games"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        moves,
        [("Bd3", 2), ("O-O", 2), ("Qc2", 2), ("Rb1", 2), ("b4", 2)]
    );
    assert_eq!(
        r["breaks"],
        serde_json::json!([{"san": "bxc6", "games": 1, "score": 100.0}])
    );

    // Black's Carlsbad: game 4 (a win), baseline over games 1, 2, 3, 5 for Black: 0-1 won,
    // a draw, two losses: 37.5.
    let b = row(&doc, "carlsbad", "black");
    assert_eq!(results(b), (1, 1, 0, 0, Some(100.0)));
    assert_eq!(b["plies"], 21);
    assert_eq!(b["baseline"], 37.5);
    assert_eq!(b["baseline_games"], 4);
    assert_eq!(b["delta"], 62.5);

    // The exact Carlsbad pawns, as White: 12 + 14 plies, the same games and baseline.
    let e = row(&doc, CARLSBAD, "white");
    assert_eq!(e["kind"], "exact");
    assert_eq!(e["name"], "Carlsbad");
    assert_eq!(results(e), (2, 1, 1, 0, Some(75.0)));
    assert_eq!(e["plies"], 26);
    assert_eq!(e["baseline"], 33.3);
    assert_eq!(e["baseline_games"], 3);

    // Years: 1994, 1995, 1996, one game each, all in the Carlsbad.
    let years: Vec<(i64, u64)> = doc["years"]
        .as_array()
        .unwrap()
        .iter()
        .map(|y| (y["year"].as_i64().unwrap(), y["games"].as_u64().unwrap()))
        .collect();
    assert_eq!(years, [(1994, 1), (1995, 1), (1996, 1)]);
    let carlsbad = doc["years"][0]["structures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == "carlsbad" && s["reversed"] == false)
        .unwrap();
    assert_eq!(carlsbad["games"], 1);
    assert_eq!(carlsbad["share"], 100.0);
    // Best and worst need 10 games with a result: none here.
    assert_eq!(doc["best"], serde_json::json!([]));
    assert_eq!(doc["worst"], serde_json::json!([]));

    // The table and the CSV say the same.
    let table = player(&db.path, &["Alpha"]);
    table.expect_code(0, "table");
    assert!(table.stdout.contains("Carlsbad"), "{}", table.stdout);
    assert!(table.stdout.contains("+41.7"), "{}", table.stdout);
    let csv = player(&db.path, &["Alpha", "--format", "csv"]);
    csv.expect_code(0, "csv");
    assert!(
        csv.stdout.lines().any(|l| l
            .starts_with("named,carlsbad,Carlsbad,false,white,2,38,1,1,0,75.0,")
            && l.contains(",33.3,3,50.0,2,41.7,too few games,")),
        "{}",
        csv.stdout
    );
}

#[test]
fn as_colour_keeps_one_colour_and_its_band() {
    let db = db_of(&GAMES, &[]);
    let doc = json(&db.path, &["Alpha", "--as", "black"]);
    assert_eq!(doc["as"], "black");
    assert_eq!(results(&doc["games"]["white"]), (0, 0, 0, 0, None));
    assert_eq!(results(&doc["games"]["black"]), (1, 1, 0, 0, Some(100.0)));
    // The rating of the profile's games: 2580 alone.
    assert_eq!(doc["rating"]["median"], 2580);
    assert!(
        doc["structures"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["colour"] == "black")
    );
    // Black rated 2480..2680 in the other games: 1 (2500, lost), 3 (2550, draw), 5 (2500,
    // lost): 16.7.
    let b = row(&doc, "carlsbad", "black");
    assert_eq!(b["baseline_band"], 16.7);
    assert_eq!(b["baseline_band_games"], 3);
}

#[test]
fn game_filters_choose_the_players_games_not_the_baseline() {
    let db = db_of(&GAMES, &[]);
    // --year 1994: game 1 only; the baseline still counts games 2, 4 and 5.
    let doc = json(&db.path, &["Alpha", "--year", "1994"]);
    assert_eq!(results(&doc["games"]["all"]), (1, 1, 0, 0, Some(100.0)));
    let r = row(&doc, "carlsbad", "white");
    assert_eq!(results(r), (1, 1, 0, 0, Some(100.0)));
    assert_eq!(r["baseline"], 33.3);
    assert_eq!(r["baseline_games"], 3);
}

#[test]
fn vs_gives_head_to_head_and_the_opponents_profile() {
    let db = db_of(&GAMES, &[]);
    let doc = json(&db.path, &["Alpha", "--vs", "Gamma"]);
    let h = &doc["head_to_head"];
    assert_eq!(h["opponent"], "Gamma");
    assert_eq!(h["names"], serde_json::json!(["Gamma"]));
    assert_eq!(results(h), (1, 0, 1, 0, Some(50.0)));
    let list = h["list"].as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["id"], 3);
    assert_eq!(list[0]["colour"], "white");
    assert_eq!(list[0]["result"], "1/2-1/2");
    assert_eq!(list[0]["event"], "E3");
    // Gamma: White in games 2 (lost) and 5 (won), Black in game 3 (drawn).
    let o = &doc["opponent"];
    assert_eq!(o["player"], "Gamma");
    assert_eq!(results(&o["games"]["white"]), (2, 1, 0, 1, Some(50.0)));
    assert_eq!(results(&o["games"]["black"]), (1, 0, 1, 0, Some(50.0)));
    assert!(o.get("head_to_head").is_none() && o.get("opponent").is_none());
}

#[test]
fn baseline_from_another_database() {
    let db = db_of(&GAMES, &[]);
    // The reference: games 2 and 5, and Alpha's game 1 (left out of the baseline).
    let other = db_of(&[GAMES[1], GAMES[4], GAMES[0]], &[]);
    let doc = json(
        &db.path,
        &["Alpha", "--baseline", other.path.to_str().unwrap()],
    );
    assert_eq!(doc["baseline_source"], other.path.to_str().unwrap());
    // White not Alpha there: 0-1 and 1-0: 50.0 over 2; in the band (2500..2700): game 5 only.
    let r = row(&doc, "carlsbad", "white");
    assert_eq!(results(r), (2, 1, 1, 0, Some(75.0)));
    assert_eq!(r["baseline"], 50.0);
    assert_eq!(r["baseline_games"], 2);
    assert_eq!(r["baseline_band"], 100.0);
    assert_eq!(r["baseline_band_games"], 1);
    assert_eq!(r["delta"], 25.0);
    let e = row(&doc, CARLSBAD, "white");
    assert_eq!(e["baseline"], 50.0);
    assert_eq!(e["baseline_games"], 2);

    // A reference classified with another catalogue is refused with the reason.
    let folder = tempfile::tempdir().unwrap();
    let source = common::root_path("structures/carlsbad.toml");
    std::fs::copy(&source, folder.path().join("carlsbad.toml")).unwrap();
    let odd = db_of(&GAMES, &[("PAWNDEX_STRUCTURES", folder.path())]);
    let run = player(
        &db.path,
        &["Alpha", "--baseline", odd.path.to_str().unwrap()],
    );
    run.expect_code(1, "another catalogue");
    assert!(run.stderr.contains("catalogue"), "{}", run.stderr);
    assert!(run.stdout.is_empty());
}

#[test]
fn unknown_name_and_bad_options() {
    let db = db_of(&GAMES, &[]);
    let run = player(&db.path, &["Nobody"]);
    run.expect_code(1, "unknown name");
    assert!(
        run.stderr.contains("no player named \"Nobody\""),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty());
    // A close name is offered.
    let run = player(&db.path, &["Alpah"]);
    run.expect_code(1, "misspelt name");
    assert!(run.stderr.contains("Alpha"), "{}", run.stderr);
    // A surname two players share lists both, never guessing.
    let mut two = GAMES.to_vec();
    two.push((
        "Polgar, Susan",
        "Polgar, Sofia",
        "1-0",
        "",
        "",
        A,
        "1990.01.01",
    ));
    let both = db_of(&two, &[]);
    let run = player(&both.path, &["polgar"]);
    run.expect_code(1, "ambiguous name");
    assert!(
        run.stderr.contains("Polgar, Susan") && run.stderr.contains("Polgar, Sofia"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty());
    json(&both.path, &["Polgar, Sofia"]);
    player(&db.path, &["Alpha", "--as", "green"]).expect_code(2, "bad --as");
    player(&db.path, &["Alpha", "--exact", "-1"]).expect_code(2, "bad --exact");
    player(&db.path, &["Alpha", "--min-stay", "3"]).expect_code(2, "--min-stay");
    player(&db.path, &[]).expect_code(2, "no name");
    let missing = db.path.with_file_name("missing.db");
    player(&missing, &["Alpha"]).expect_code(1, "missing database");
}

#[test]
fn find_player_name_selects_exactly_the_spellings() {
    let db = db_of(&GAMES, &[]);
    let mut cmd = Command::new(BIN);
    cmd.args(["find", "--db"]).arg(&db.path).args([
        "--player-name",
        "Alpha",
        "--per",
        "game",
        "--format",
        "csv",
    ]);
    let run = Run::of(cmd, "find --player-name");
    run.expect_code(0, "find --player-name");
    let ids: Vec<&str> = run
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(ids, ["1", "3", "4"]);
    // "Alph" is no player's name (a substring is --player's job).
    let mut cmd = Command::new(BIN);
    cmd.args(["find", "--db"])
        .arg(&db.path)
        .args(["--player-name", "Alph", "--per", "game"]);
    Run::of(cmd, "find --player-name Alph").expect_code(1, "unknown");
}
