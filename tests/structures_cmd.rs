//! `pawndex structures`: every number of a small collection counted by hand, the three formats,
//! the chart files, the filters and the usage errors.
//!
//! The test writes its own catalogue (a Carlsbad, a "minority" structure that is a Carlsbad with
//! a White pawn on b4, and a Hedgehog no game reaches) and indexes its own PGN with
//! `PAWNDEX_STRUCTURES` pointing at it, so it does not depend on the built-in catalogue.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::structures::MINORITY;
use common::{BIN, Run};
use serde_json::Value;

const CARLSBAD: &str = r#"
name = "Carlsbad"
family = "d4-d5"
description = "White d4+e3 without a c-pawn against Black c6+d5 without an e-pawn."
source = "test"
reversed = true
[white]
pawns = ["d4", "e3"]
none = ["c"]
[black]
pawns = ["c6", "d5"]
none = ["e"]
"#;

const HEDGEHOG: &str = r#"
name = "Hedgehog"
family = "Open Sicilian"
description = "c4+e4 against a6 b6 d6 e6."
source = "test"
reversed = true
[white]
pawns = ["c4", "e4"]
none = ["d"]
[black]
pawns = ["a6", "b6", "d6", "e6"]
none = ["c"]
"#;

/// Counted by hand (plies: White's move n is ply 2n - 1, Black's 2n):
///
/// A (1-0, D36): Carlsbad from 6. e3 (ply 11); 12. b4 (23) makes it the minority attack;
///   14. b5 (27) a Carlsbad again; 15... cxb5 (30) no name; 30 plies.
/// B (0-1, B13): reversed Carlsbad from 4... e6 (8) to the end (12).
/// C (1/2-1/2, D36): Carlsbad at 11 and 12; 7. e4 (13) leaves it; 14 plies.
/// D (no result, D35): Carlsbad at 11 and 12; 7. e4 (13) leaves it; 13 plies.
/// E (1-0, C44): no name; 4 plies.
const PGN: &str = r#"[Event "A"]
[Result "1-0"]
[ECO "D36"]

1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. cxd5 exd5 5. Bg5 c6 6. e3 Be7 7. Bd3 Nbd7
8. Qc2 O-O 9. Nge2 Re8 10. O-O Nf8 11. Rab1 a6 12. b4 Ne6 13. a4 g6 14. b5 axb5
15. axb5 cxb5 1-0

[Event "B"]
[Result "0-1"]
[ECO "B13"]

1. e4 c6 2. d4 d5 3. exd5 cxd5 4. c3 e6 5. Bd3 Nc6 6. Nf3 Bd6 0-1

[Event "C"]
[Result "1/2-1/2"]
[ECO "D36"]

1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. cxd5 exd5 5. Bg5 c6 6. e3 Be7 7. e4 dxe4 1/2-1/2

[Event "D"]
[Result "*"]
[ECO "D35"]

1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. cxd5 exd5 5. Bg5 c6 6. e3 Be7 7. e4 *

[Event "E"]
[Result "1-0"]
[ECO "C44"]

1. e4 e5 2. Nf3 Nc6 1-0
"#;

/// A database of [`PGN`] classified with the test catalogue.
struct Fixture {
    dir: tempfile::TempDir,
    db: PathBuf,
}

fn fixture() -> Fixture {
    fixture_of(PGN)
}

/// A database of `pgn` classified with the test catalogue.
fn fixture_of(pgn_text: &str) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let catalogue = dir.path().join("catalogue");
    std::fs::create_dir(&catalogue).unwrap();
    for (key, text) in [
        ("carlsbad", CARLSBAD),
        ("minority", MINORITY),
        ("hedgehog", HEDGEHOG),
    ] {
        std::fs::write(catalogue.join(format!("{key}.toml")), text).unwrap();
    }
    let pgn = dir.path().join("games.pgn");
    std::fs::write(&pgn, pgn_text).unwrap();
    let db = dir.path().join("t.db");
    let mut cmd = Command::new(BIN);
    cmd.env("PAWNDEX_STRUCTURES", &catalogue)
        .arg("index")
        .arg("--db")
        .arg(&db)
        .arg(&pgn);
    Run::of(cmd, "index").expect_code(0, "index");
    Fixture { dir, db }
}

/// Runs `pawndex structures --db DB ARGS`.
fn structures(db: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.arg("structures").arg("--db").arg(db).args(args);
    Run::of(cmd, &format!("structures {args:?}"))
}

fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes());
    r.records()
        .map(|rec| rec.unwrap().iter().map(str::to_string).collect())
        .collect()
}

#[test]
fn the_changes_are_the_ones_counted_by_hand() {
    let f = fixture();
    let conn = common::open_db(&f.db);
    let rows = common::query_all(
        &conn,
        "SELECT g.event, t.ply, coalesce(t.from_structure, '-'), t.from_reversed,
                coalesce(t.to_structure, '-'), t.to_reversed, coalesce(t.move, '')
         FROM structure_transitions AS t JOIN games AS g ON g.id = t.game_id
         ORDER BY t.game_id, t.ply",
    );
    let text: Vec<String> = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| match v {
                    rusqlite::types::Value::Integer(i) => i.to_string(),
                    rusqlite::types::Value::Text(s) => s.clone(),
                    other => format!("{other:?}"),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(
        text,
        [
            "A 11 - 0 carlsbad 0 e3",
            "A 23 carlsbad 0 minority 0 b4",
            "A 27 minority 0 carlsbad 0 b5",
            "A 30 carlsbad 0 - 0 cxb5",
            "B 8 - 0 carlsbad 1 e6",
            "C 11 - 0 carlsbad 0 e3",
            "C 13 carlsbad 0 - 0 e4",
            "D 11 - 0 carlsbad 0 e3",
            "D 13 carlsbad 0 - 0 e4",
        ]
    );
}

#[test]
fn csv_has_every_number_counted_by_hand() {
    let f = fixture();
    let run = structures(&f.db, &["--format", "csv"]);
    run.expect_code(0, "csv");
    let rows = csv_rows(&run.stdout);
    assert_eq!(
        rows[0],
        [
            "key",
            "name",
            "family",
            "reversed",
            "positions",
            "games",
            "white_score",
            "stays",
            "avg_stay",
            "eco",
            "turns_into",
            "leaving_moves",
            "games_with_result",
        ]
    );
    // Catalogue order (by key), the normal form before the reversed one; forms with no game too.
    let want: [[&str; 13]; 5] = [
        [
            "carlsbad",
            "Carlsbad",
            "d4-d5",
            "0",
            // A: 11..22 and 27..29; C: 11..12; D: 11..12.
            "19",
            "3",
            // A 1-0 and C a draw (D has no result): 1.5 of 2.
            "75.0",
            "4",
            "4.75",
            "D36 66.7%; D35 33.3%",
            "none 3; minority 1",
            // e4 in C (a draw) and D (no result): White's score over C only. cxb5 is Black's
            // (ply 30), written as a player writes Black's move alone.
            "e4 2 (50.0%); b4 1 (100.0%); …cxb5 1 (100.0%)",
            "2",
        ],
        [
            "carlsbad",
            "Carlsbad",
            "d4-d5",
            "1",
            "5",
            "1",
            "0.0",
            "1",
            "5.00",
            "B13 100.0%",
            "",
            "",
            "1",
        ],
        [
            "hedgehog",
            "Hedgehog",
            "Open Sicilian",
            "0",
            "0",
            "0",
            "",
            "0",
            "",
            "",
            "",
            "",
            "0",
        ],
        [
            "hedgehog",
            "Hedgehog",
            "Open Sicilian",
            "1",
            "0",
            "0",
            "",
            "0",
            "",
            "",
            "",
            "",
            "0",
        ],
        [
            "minority",
            "Minority attack",
            "Soltis",
            "0",
            "4",
            "1",
            "100.0",
            "1",
            "4.00",
            "D36 100.0%",
            "carlsbad 1",
            "b5 1 (100.0%)",
            "1",
        ],
    ];
    assert_eq!(rows.len(), 1 + want.len(), "{}", run.stdout);
    for (got, want) in rows[1..].iter().zip(want) {
        assert_eq!(got, &want);
    }
    // Positions: 31 + 13 + 15 + 14 + 5 = 78, 28 named; plies 20..60 only in A (20..30: 11),
    // 10 of them named (20..29).
    let last = run.stderr.lines().last().unwrap_or_default();
    assert_eq!(
        last,
        "pawndex: 35.9% of positions have a named structure (28 of 78); 90.9% of plies 20..60 \
         (10 of 11)",
        "{}",
        run.stderr
    );
}

/// A game from a position with Black to move: its first move (ply 1) is Black's, and the
/// leaving moves say so (issue 37: the side was left to be guessed from the SAN).
const BLACK_FIRST: &str = r#"[Event "F"]
[Result "0-1"]
[SetUp "1"]
[FEN "4k3/pp3ppp/2p5/3p4/3P4/4P3/PP3PPP/4K3 b - - 0 1"]

1... c5 2. dxc5 Kd7 0-1

[Event "G"]
[Result "1-0"]

1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. cxd5 exd5 5. Bg5 c6 6. e3 Be7 7. e4 dxe4 1-0
"#;

#[test]
fn leaving_moves_carry_the_side_that_played_them() {
    let f = fixture_of(BLACK_FIRST);
    let run = structures(&f.db, &["--format", "json"]);
    run.expect_code(0, "json");
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    let c = &v[0];
    assert_eq!(
        (&c["key"], &c["reversed"]),
        (&Value::from("carlsbad"), &Value::from(false))
    );
    let moves: Vec<(String, String)> = c["leaving_moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["move"].as_str().unwrap_or_default().to_owned(),
                m["side"].as_str().unwrap_or("(no side)").to_owned(),
            )
        })
        .collect();
    // F: 1... c5 at ply 1, Black's (the start has Black to move); G: 7. e4 at ply 13, White's.
    assert_eq!(
        moves,
        [("c5".into(), "black".into()), ("e4".into(), "white".into())],
        "{}",
        run.stdout
    );
    let run = structures(&f.db, &["--format", "csv"]);
    let rows = csv_rows(&run.stdout);
    assert_eq!(rows[1][11], "…c5 1 (0.0%); e4 1 (100.0%)", "{}", run.stdout);
    let run = structures(&f.db, &[]);
    let carlsbad = run.stdout.lines().nth(1).unwrap_or_default();
    assert!(carlsbad.ends_with("…c5 1, e4 1"), "{carlsbad:?}");
}

#[test]
fn top_cuts_the_lists() {
    let f = fixture();
    let run = structures(&f.db, &["--format", "csv", "--top", "1"]);
    run.expect_code(0, "csv --top 1");
    let rows = csv_rows(&run.stdout);
    assert_eq!(rows[1][9..12], ["D36 66.7%", "none 3", "e4 2 (50.0%)"]);
}

#[test]
fn json_nests_the_lists() {
    let f = fixture();
    let run = structures(&f.db, &["--format", "json"]);
    run.expect_code(0, "json");
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 5);
    let c = &rows[0];
    assert_eq!(c["key"], "carlsbad");
    assert_eq!(c["reversed"], false);
    assert_eq!(c["positions"], 19);
    assert_eq!(c["games"], 3);
    assert_eq!(c["games_with_result"], 2);
    assert_eq!(
        (&c["white_wins"], &c["draws"], &c["black_wins"]),
        (&Value::from(1), &Value::from(1), &Value::from(0))
    );
    assert_eq!(c["white_score"], 75.0);
    assert_eq!(c["stays"], 4);
    assert_eq!(c["avg_stay"], 4.75);
    assert_eq!(c["eco"][0]["eco"], "D36");
    assert_eq!(c["eco"][0]["games"], 2);
    // The share has the precision of its table cell (66.7 %), as every JSON number.
    assert_eq!(c["eco"][0]["share"], 66.7);
    assert_eq!(
        c["turns_into"],
        serde_json::json!([
            {"key": null, "name": null, "reversed": false, "count": 3},
            {"key": "minority", "name": "Minority attack", "reversed": false, "count": 1},
        ])
    );
    assert_eq!(
        c["leaving_moves"][0],
        serde_json::json!({"move": "e4", "side": "white", "count": 2, "games_with_result": 1, "white_score": 50.0})
    );
    // 15... cxb5 (ply 30) is Black's.
    assert_eq!(
        c["leaving_moves"][2],
        serde_json::json!({"move": "cxb5", "side": "black", "count": 1, "games_with_result": 1, "white_score": 100.0})
    );
    let r = &rows[1];
    assert_eq!(
        (&r["key"], &r["reversed"]),
        (&Value::from("carlsbad"), &Value::from(true))
    );
    assert_eq!(r["white_score"], 0.0);
    assert_eq!(r["turns_into"], serde_json::json!([]));
    let h = &rows[2];
    assert_eq!(h["games"], 0);
    assert!(h["white_score"].is_null() && h["avg_stay"].is_null());
}

#[test]
fn the_table_fits_in_100_columns() {
    let f = fixture();
    let run = structures(&f.db, &[]);
    run.expect_code(0, "table");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 6, "{}", run.stdout);
    for l in &lines {
        assert!(l.chars().count() <= 100, "{l:?}");
    }
    assert!(lines[0].starts_with("structure"), "{}", lines[0]);
    let carlsbad: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(carlsbad[..6], ["Carlsbad", "19", "3", "75.0", "4.8", "D36"]);
    assert!(lines[2].starts_with("Carlsbad (rev.)"), "{}", lines[2]);
    let hedgehog: Vec<&str> = lines[3].split_whitespace().collect();
    assert_eq!(hedgehog, ["Hedgehog", "0", "0", "-", "-"]);
    assert!(
        lines[5].contains("Carlsbad 1") && lines[5].contains("b5 1"),
        "{}",
        lines[5]
    );
}

#[test]
fn family_and_min_games_choose_the_rows() {
    let f = fixture();
    let run = structures(&f.db, &["--format", "csv", "--family", "open sicilian"]);
    run.expect_code(0, "--family");
    let rows = csv_rows(&run.stdout);
    let keys: Vec<(&str, &str)> = rows[1..]
        .iter()
        .map(|r| (r[0].as_str(), r[3].as_str()))
        .collect();
    assert_eq!(keys, [("hedgehog", "0"), ("hedgehog", "1")]);
    // The forms a chosen form turns into keep their keys when their family is not chosen
    // (the minority attack is of the Soltis family).
    let run = structures(&f.db, &["--format", "csv", "--family", "D4-D5"]);
    run.expect_code(0, "--family d4-d5");
    let rows = csv_rows(&run.stdout);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[1][10], "none 3; minority 1");

    let run = structures(&f.db, &["--format", "csv", "--min-games", "2"]);
    run.expect_code(0, "--min-games");
    let rows = csv_rows(&run.stdout);
    assert_eq!(rows.len(), 2);
    assert_eq!(
        (rows[1][0].as_str(), rows[1][3].as_str()),
        ("carlsbad", "0")
    );

    // No row left: the header only, and a note.
    let run = structures(&f.db, &["--format", "csv", "--min-games", "4"]);
    run.expect_code(0, "--min-games 4");
    assert_eq!(csv_rows(&run.stdout).len(), 1);
    assert!(
        run.stderr.contains("no structure form has 4 games"),
        "{}",
        run.stderr
    );
}

/// Checks a PNG's signature, that IHDR comes first and IEND last; returns (width, height).
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    let mut at = 8;
    let mut kinds = Vec::new();
    let mut size = (0, 0);
    while at + 12 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let kind = &bytes[at + 4..at + 8];
        if kind == b"IHDR" {
            let d = &bytes[at + 8..at + 16];
            size = (
                u32::from_be_bytes(d[..4].try_into().unwrap()),
                u32::from_be_bytes(d[4..8].try_into().unwrap()),
            );
        }
        kinds.push(kind.to_vec());
        at += 12 + len;
    }
    assert_eq!(at, bytes.len(), "the chunks fill the file");
    assert_eq!(kinds.first().map(Vec::as_slice), Some(&b"IHDR"[..]));
    assert_eq!(kinds.last().map(Vec::as_slice), Some(&b"IEND"[..]));
    size
}

#[test]
fn charts_are_valid_svg_and_png() {
    let f = fixture();
    let svg = f.dir.path().join("s.svg");
    let run = structures(
        &f.db,
        &["--chart", svg.to_str().unwrap(), "--format", "csv"],
    );
    run.expect_code(0, "svg chart");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    // A bar per form with a game: three, each with its numbers.
    assert!(text.contains("Carlsbad (reversed)"), "labels");
    assert!(text.contains("3 games, White 75.0% (under 30 results)"));
    assert!(text.contains("1 games, White 0.0% (under 30 results)"));
    assert!(
        !text.contains("Hedgehog"),
        "no bar for a form without games"
    );

    let png = f.dir.path().join("s.png");
    let run = structures(&f.db, &["--chart", png.to_str().unwrap()]);
    run.expect_code(0, "png chart");
    let (w, h) = png_size(&std::fs::read(&png).unwrap());
    assert_eq!(w, 1000);
    assert!(h >= 200, "{h}");
}

#[test]
fn bad_options_are_usage_errors() {
    let f = fixture();
    let bad_chart = f.dir.path().join("c.gif");
    for args in [
        vec!["--format", "xml"],
        vec!["--top", "0"],
        vec!["--top", "x"],
        vec!["--min-games", "-1"],
        vec!["--family", "no such family"],
        vec!["--chart", bad_chart.to_str().unwrap()],
        vec!["--nonsense"],
    ] {
        let run = structures(&f.db, &args);
        run.expect_code(2, &format!("{args:?}"));
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    }
    assert!(!bad_chart.exists());
    let run = structures(&f.db, &["--family", "nope"]);
    assert!(
        run.stderr.contains("d4-d5, Open Sicilian, Soltis"),
        "{}",
        run.stderr
    );
    // A missing database is an error, not a usage error, and no file is created.
    let missing = f.dir.path().join("missing.db");
    structures(&missing, &[]).expect_code(1, "missing db");
    assert!(!missing.exists());
}

#[test]
fn an_old_database_asks_for_migrate() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v1.db");
    std::fs::copy(common::root_path("tests/fixtures/v1.db"), &db).unwrap();
    let run = structures(&db, &[]);
    run.expect_code(1, "v1 database");
    assert!(run.stderr.contains("pawndex migrate"), "{}", run.stderr);
}

/// A family that is no family of the database gets the close ones, as query names do.
#[test]
fn an_unknown_family_suggests_the_closest() {
    let f = fixture();
    let run = structures(&f.db, &["--family", "d4d5"]);
    run.expect_code(2, "--family d4d5");
    assert!(run.stderr.contains("did you mean d4-d5?"), "{}", run.stderr);
    assert!(run.stdout.is_empty());
    let run = structures(&f.db, &["--family", "open-sicilian"]);
    run.expect_code(2, "--family open-sicilian");
    assert!(
        run.stderr.contains("did you mean Open Sicilian?"),
        "{}",
        run.stderr
    );
    // Several families (repeated or comma-separated): the rows of any of them.
    let one = |family: &str| {
        let run = structures(&f.db, &["--format", "csv", "--family", family]);
        csv_rows(run.expect_code(0, family).stdout.as_str())[1..].to_vec()
    };
    let both = [one("open sicilian"), one("d4-d5")].concat();
    for args in [
        &["--family", "d4-d5,Open Sicilian"][..],
        &["--family", "Open Sicilian", "--family", "d4-d5"],
    ] {
        let mut all = vec!["--format", "csv"];
        all.extend_from_slice(args);
        let run = structures(&f.db, &all);
        let mut rows = csv_rows(run.expect_code(0, "two families").stdout.as_str())[1..].to_vec();
        let mut want = both.clone();
        rows.sort();
        want.sort();
        assert_eq!(rows, want, "{args:?}");
    }
    structures(&f.db, &["--family", "d4-d5,d4d5"]).expect_code(2, "one unknown of two");
}
