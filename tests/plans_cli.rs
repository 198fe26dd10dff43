//! `pawndex plans` on two games whose every figure is counted by hand (below), the three
//! formats, `--side`, the chart, "no games" and the usage errors. The figures on a real corpus
//! are checked against an independent python-chess replay by tests/plans/check_plans.py.
//!
//! Both games reach the Carlsbad (White d4+e3 without a c-pawn, Black c6+d5 without an
//! e-pawn) with 6.e3, at ply 11, after the same first ten moves:
//!
//! A (1-0): … 6.e3 Be7 7.Bd3 Nbd7 8.Qc2 O-O 9.Nge2 Re8 10.O-O Nf8 11.Rab1 Ng6 12.b4 a6 13.a4 Bd6
//!   14.b5 axb5 15.axb5 Bd7 16.bxc6 bxc6. In it at plies 11..=30; 16.bxc6 (a White pawn on the
//!   c-file, Black's c6 gone) leaves it; 16…bxc6 brings it back at ply 32, the last. 15.axb5
//!   recaptures on b5: a reply.
//! B (0-1): … 6.e3 Be7 7.Bd3 Nbd7 8.Nf3 O-O 9.Qc2 Re8 10.O-O Nf8 11.Rab1 Ne4 12.Bxe7 Qxe7 13.b4
//!   f5 14.b5 c5. In it at plies 11..=27; 14…c5 leaves it. 12…Qxe7 recaptures: a reply.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{BIN, Run};
use serde_json::Value;

const OPENING: &str = "1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. cxd5 exd5 5. Bg5 c6 6. e3 Be7 7. Bd3 Nbd7";

fn games() -> String {
    format!(
        "[Event \"A\"]\n[Site \"?\"]\n[Date \"1994.05.01\"]\n[Round \"1\"]\n[White \"Alpha\"]\n\
         [Black \"Beta\"]\n[Result \"1-0\"]\n[WhiteElo \"2600\"]\n[BlackElo \"2500\"]\n\n\
         {OPENING} 8. Qc2 O-O 9. Nge2 Re8 10. O-O Nf8 11. Rab1 Ng6 12. b4 a6 13. a4 Bd6 14. b5 \
         axb5 15. axb5 Bd7 16. bxc6 bxc6 1-0\n\n\
         [Event \"B\"]\n[Site \"?\"]\n[Date \"2003.??.??\"]\n[Round \"1\"]\n[White \"Gamma\"]\n\
         [Black \"Delta\"]\n[Result \"0-1\"]\n\n\
         {OPENING} 8. Nf3 O-O 9. Qc2 Re8 10. O-O Nf8 11. Rab1 Ne4 12. Bxe7 Qxe7 13. b4 f5 14. b5 \
         c5 0-1\n"
    )
}

struct Db {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

fn db() -> Db {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("two.pgn");
    std::fs::write(&pgn, games()).unwrap();
    let path = dir.path().join("two.db");
    common::index(&path, &[], &[&pgn]).expect_code(0, "index");
    Db { _dir: dir, path }
}

fn plans(db: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.arg("plans").arg("--db").arg(db).args(args);
    Run::of(cmd, &format!("plans {args:?}"))
}

fn json(db: &Path, args: &[&str]) -> Value {
    let mut all = vec!["--format", "json", "--top", "100"];
    all.extend_from_slice(args);
    let run = plans(db, &all);
    run.expect_code(0, "plans json");
    serde_json::from_str(&run.stdout).unwrap()
}

/// (san, games, median_move, score, delta).
type Row = (String, u64, u64, Option<f64>, Option<f64>);

/// The rows of a list.
fn rows(list: &Value) -> Vec<Row> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["san"].as_str().unwrap().to_string(),
                m["games"].as_u64().unwrap(),
                m["median_move"].as_u64().unwrap(),
                m["score"].as_f64().or(m["score_after"].as_f64()),
                m["delta"].as_f64(),
            )
        })
        .collect()
}

fn row(
    san: &str,
    games: u64,
    median: u64,
    score: f64,
    delta: f64,
) -> (String, u64, u64, Option<f64>, Option<f64>) {
    (san.to_string(), games, median, Some(score), Some(delta))
}

#[test]
fn every_figure_of_two_games_counted_by_hand() {
    let db = db();
    let v = json(
        &db.path,
        &["--structure-name", "carlsbad", "--model-games", "5"],
    );
    assert_eq!(v["structure"], "Carlsbad");
    assert_eq!(v["games"], 2);
    assert_eq!(v["plies"], 21 + 17);
    assert_eq!(v["results"]["white_wins"], 1);
    assert_eq!(v["results"]["black_wins"], 1);
    assert_eq!(v["baseline"]["white"]["score"], 50.0);
    assert_eq!(v["baseline"]["black"]["score"], 50.0);
    // White: games desc, then SAN in character order (capitals first); Nbd7/Nge2/Rab1 lose
    // their disambiguation.
    assert_eq!(
        rows(&v["moves"]["white"]),
        vec![
            row("Bd3", 2, 7, 50.0, 0.0),
            row("O-O", 2, 10, 50.0, 0.0),
            row("Qc2", 2, 8, 50.0, 0.0),
            row("Rb1", 2, 11, 50.0, 0.0),
            row("b4", 2, 12, 50.0, 0.0),
            row("b5", 2, 14, 50.0, 0.0),
            row("Bxe7", 1, 12, 0.0, -50.0),
            row("Ne2", 1, 9, 100.0, 50.0),
            row("Nf3", 1, 8, 0.0, -50.0),
            row("a4", 1, 13, 100.0, 50.0),
            row("bxc6", 1, 16, 100.0, 50.0),
        ]
    );
    assert_eq!(
        rows(&v["moves"]["black"]),
        vec![
            row("Be7", 2, 6, 50.0, 0.0),
            row("Nd7", 2, 7, 50.0, 0.0),
            row("Nf8", 2, 10, 50.0, 0.0),
            row("O-O", 2, 8, 50.0, 0.0),
            row("Re8", 2, 9, 50.0, 0.0),
            row("Bd6", 1, 13, 0.0, -50.0),
            row("Bd7", 1, 15, 0.0, -50.0),
            row("Ne4", 1, 11, 100.0, 50.0),
            row("Ng6", 1, 11, 0.0, -50.0),
            row("a6", 1, 12, 0.0, -50.0),
            row("axb5", 1, 14, 0.0, -50.0),
            row("c5", 1, 14, 100.0, 50.0),
            row("f5", 1, 13, 100.0, 50.0),
        ]
    );
    assert_eq!(
        rows(&v["replies"]["white"]),
        vec![row("axb5", 1, 15, 100.0, 50.0)]
    );
    assert_eq!(
        rows(&v["replies"]["black"]),
        vec![row("Qxe7", 1, 12, 100.0, 50.0)]
    );
    let knight = &v["moves"]["white"][7];
    assert_eq!(
        (knight["piece"].as_str(), knight["to"].as_str()),
        (Some("knight"), Some("e2"))
    );
    assert_eq!(
        v["moves"]["white"][1]["to"], "g1",
        "castling goes to the king's square"
    );
    // The breaks: the side from the data, Black's written …c5.
    let breaks = v["breaks"].as_array().unwrap();
    assert_eq!(breaks.len(), 2, "{breaks:?}");
    assert_eq!(breaks[0]["san"], "bxc6");
    assert_eq!(breaks[0]["side"], "white");
    assert_eq!(breaks[0]["written"], "bxc6");
    assert_eq!(breaks[0]["median_move"], 16);
    assert_eq!(breaks[0]["score_after"], 100.0);
    assert_eq!(breaks[1]["san"], "c5");
    assert_eq!(breaks[1]["side"], "black");
    assert_eq!(breaks[1]["written"], "…c5");
    assert_eq!(breaks[1]["median_move"], 14);
    assert_eq!(v["other_exits"], serde_json::json!([]));
    // White's king: on e1 at plies 11..=18 of both games (16 positions), on g1 after 10.O-O
    // (A: 19..=30 and 32, 13; B: 19..=27, 9).
    let king = &v["squares"]["white"]["king"];
    let (e1, g1) = (4, 6);
    assert_eq!(king["all"][e1], 42.1); // 16 / 38
    assert_eq!(king["all"][g1], 57.9); // 22 / 38
    assert_eq!(king["won"][e1], 38.1); // 8 / 21
    assert_eq!(king["won"][g1], 61.9); // 13 / 21
    assert_eq!(king["lost"][e1], 47.1); // 8 / 17
    assert_eq!(king["lost"][g1], 52.9); // 9 / 17
    assert_eq!(v["squares"]["white"]["positions"]["won"], 21);
    assert_eq!(v["squares"]["black"]["positions"]["won"], 17);
    let d5 = 8 * 4 + 3;
    assert_eq!(v["squares"]["black"]["pawn"]["all"][d5], 100.0);
    // Decades: one game each in the 1990s and the 2000s, both in the structure.
    assert_eq!(
        v["decades"],
        serde_json::json!([
            {"decade": "1990s", "games": 1, "structure_games": 1, "share": 100.0},
            {"decade": "2000s", "games": 1, "structure_games": 1, "share": 100.0},
        ])
    );
    // Typicality: White's 10 most played moves are the six of both games, then Bxe7 Ne2 Nf3
    // a4: A (won by White) played 8 of them; Black's are its five of both games, then Bd6 Bd7
    // Ne4 Ng6 a6: B (won by Black) played 6.
    let model: Vec<(i64, i64, i64, i64)> = v["model_games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["id"].as_i64().unwrap(),
                g["typicality"].as_i64().unwrap(),
                g["stay"].as_i64().unwrap(),
                g["entered_ply"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(model, vec![(1, 8, 21, 11), (2, 6, 17, 11)]);
}

#[test]
fn one_side_csv_and_table() {
    let db = db();
    let v = json(
        &db.path,
        &["--structure-name", "Carlsbad", "--side", "black"],
    );
    assert!(v["moves"].get("white").is_none());
    assert!(v["squares"].get("white").is_none());
    assert_eq!(v["breaks"].as_array().unwrap().len(), 1);

    let csv = plans(
        &db.path,
        &["--structure-name", "carlsbad", "--format", "csv"],
    );
    csv.expect_code(0, "csv");
    let mut lines = csv.stdout.lines();
    assert_eq!(
        lines.next(),
        Some("list,side,san,piece,to,games,median_move,score,delta,leads_to")
    );
    assert!(
        csv.stdout
            .contains("\nmoves,white,Rb1,rook,b1,2,11,50.0,0.0,\n"),
        "{}",
        csv.stdout
    );
    assert!(
        csv.stdout
            .contains("\nreplies,black,Qxe7,queen,e7,1,12,100.0,50.0,\n")
    );
    assert!(
        csv.stdout
            .contains("\nbreaks,black,c5,pawn,c5,1,14,100.0,50.0,")
    );

    let table = plans(&db.path, &["--structure-name", "carlsbad"]);
    table.expect_code(0, "table");
    assert!(
        table.stdout.starts_with("Carlsbad: 2 games, 38 positions"),
        "{}",
        table.stdout
    );
    assert!(table.stdout.contains("…Nf8"));
    assert!(table.stdout.contains("…c5"));
    assert!(table.stdout.contains("Alpha 2600 - Beta 2500"));
}

#[test]
fn filters_and_exact_structures() {
    let db = db();
    // Only game A has both ratings.
    let v = json(
        &db.path,
        &["--structure-name", "carlsbad", "--min-elo", "2400"],
    );
    assert_eq!(v["games"], 1);
    assert_eq!(v["plies"], 21);
    assert_eq!(v["baseline"]["white"]["score"], 100.0);
    // The exact pawns after 6.e3: both games, until the first pawn move (12.b4 in A, 13.b4
    // in B; 12…a6 comes after 12.b4): plies 11..=22 in A, 11..=24 in B.
    let after_e3 = "r1bqkb1r/pp3ppp/2p2n2/3p2B1/3P4/2N1P3/PP3PPP/R2QKBNR b KQkq - 0 6";
    let v = json(&db.path, &["--structure", after_e3]);
    assert_eq!(v["games"], 2);
    assert_eq!(v["plies"], 12 + 14);
    let breaks = rows(&v["breaks"]);
    assert_eq!(breaks, vec![row("b4", 2, 12, 50.0, 0.0)]);
    // Within distance 0: the same positions; within 3: more of them (b4 and a6 are one pawn
    // step each from those pawns), never fewer.
    let same = json(&db.path, &["--structure", after_e3, "--within", "0"]);
    assert_eq!((&same["games"], &same["plies"]), (&v["games"], &v["plies"]));
    assert_eq!(same["moves"], v["moves"]);
    let near = json(&db.path, &["--structure", after_e3, "--within", "3"]);
    assert_eq!(near["games"], 2);
    assert!(near["plies"].as_u64().unwrap() > 26, "{}", near["plies"]);
    assert!(
        near["structure"]
            .as_str()
            .unwrap()
            .contains("within distance 3")
    );
}

#[test]
fn no_games_is_an_answer_and_bad_options_exit_2() {
    let db = db();
    let run = plans(
        &db.path,
        &["--structure-name", "hedgehog", "--format", "json"],
    );
    run.expect_code(0, "no games");
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["games"], 0);
    assert!(run.stderr.contains("no game reaches"), "{}", run.stderr);
    for (args, words) in [
        (vec![], "give the structure"),
        (vec!["--structure-name", "nosuch"], "nosuch"),
        (
            vec![
                "--structure-name",
                "carlsbad",
                "--structure",
                "8/8/8/8/8/8/8/8",
            ],
            "one of them",
        ),
        (vec!["--within", "2"], "--structure"),
        (
            vec!["--structure-name", "carlsbad", "--side", "both"],
            "side",
        ),
        (
            vec!["--structure-name", "carlsbad", "--chart", "x.txt"],
            ".svg or .png",
        ),
        (
            vec!["--structure-name", "carlsbad", "--min-elo", "x"],
            "min-elo",
        ),
    ] {
        let run = plans(&db.path, &args);
        run.expect_code(2, &format!("{args:?}"));
        assert!(run.stderr.contains(words), "{args:?}: {}", run.stderr);
    }
}

#[test]
fn the_chart_draws_each_piece_on_four_boards() {
    let db = db();
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("carlsbad.svg");
    let run = plans(
        &db.path,
        &[
            "--structure-name",
            "carlsbad",
            "--side",
            "white",
            "--chart",
            svg.to_str().unwrap(),
        ],
    );
    run.expect_code(0, "chart");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"), "{}", &text[..80.min(text.len())]);
    for words in [
        "White&apos;s pieces",
        "knights",
        "kings",
        "won − lost",
        "games it lost",
    ] {
        assert!(text.contains(words), "{words} missing");
    }
    assert!(!text.contains("Black&apos;s pieces"));
    // 5 pieces × 4 boards × 64 squares, each a rectangle.
    assert!(text.matches("<rect").count() >= 5 * 4 * 64);
    // White's king stands on g1 in 57.9% of the positions: written on the square as 58.
    let written = |label: &str| {
        text.split("</text>")
            .any(|t| t.rsplit('>').next().map(str::trim) == Some(label))
    };
    assert!(written("58"), "the king's share on g1 is not written");
    assert!(!written("42.1"), "shares are written as whole percents");
}

/// `find --sort typicality` lists the structure's games in the order of the plans' model games
/// (A, 8 of White's ten, before B, 6 of Black's), `--reverse` the other way; it needs the
/// structure and takes no position condition.
#[test]
fn find_sorts_by_typicality_as_plans_ranks() {
    let db = db();
    let find = |extra: &[&str]| {
        let mut cmd = Command::new(BIN);
        cmd.args(["find", "--db"])
            .arg(&db.path)
            .args(["--per", "game", "--format", "csv"])
            .args(extra);
        Run::of(cmd, &format!("find {extra:?}"))
    };
    let ids = |run: &Run| -> Vec<(String, String)> {
        run.stdout
            .lines()
            .skip(1)
            .map(|l| {
                let mut c = l.split(',');
                (c.next().unwrap().to_string(), c.next().unwrap().to_string())
            })
            .collect()
    };
    let sorted = find(&["--structure-name", "carlsbad", "--sort", "typicality"]);
    sorted.expect_code(0, "typicality");
    // Each game at the ply it entered the structure (6.e3: ply 11).
    assert_eq!(
        ids(&sorted),
        vec![("1".into(), "11".into()), ("2".into(), "11".into())]
    );
    let reversed = find(&[
        "--structure-name",
        "carlsbad",
        "--sort",
        "typicality",
        "--reverse",
    ]);
    assert_eq!(
        ids(&reversed),
        vec![("2".into(), "11".into()), ("1".into(), "11".into())]
    );
    let filtered = find(&[
        "--structure-name",
        "carlsbad",
        "--sort",
        "typicality",
        "--min-elo",
        "2400",
    ]);
    assert_eq!(ids(&filtered), vec![("1".into(), "11".into())]);
    for (args, words) in [
        (vec!["--sort", "typicality"], "give the structure"),
        (
            vec![
                "--structure-name",
                "carlsbad",
                "--sort",
                "typicality",
                "--white",
                "quart",
            ],
            "no --white",
        ),
    ] {
        let run = find(&args);
        run.expect_code(2, &format!("{args:?}"));
        assert!(run.stderr.contains(words), "{args:?}: {}", run.stderr);
    }
}
