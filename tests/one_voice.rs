//! One voice in every answer (issue 24, "One voice", points 1, 2 and 9): every command writes
//! White's score as a percent (0 to 100) with one decimal in tables and CSV and as a JSON number
//! of that precision; JSON lists squares as arrays, file by file (a2 a3 b2); every chart colours
//! White's score with one palette around 50%; tables keep what matters (the "(rev.)" of a
//! long name, names where names are meant) and an empty result says so.
//!
//! The test writes its own catalogue and PGN: three Carlsbad games, two won by White and one
//! by Black (White's score 66.7 %, a number with more decimals than one), and one game of the
//! reversed form lost by White.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::stats::{parse_csv, stats_csv};
use common::structures::{CARLSBAD, MINORITY};
use common::{BIN, Run};
use serde_json::Value;

/// A Carlsbad at plies 11 and 12, left by 7. e4 (ply 13).
const CARLSBAD_MOVES: &str =
    "1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. cxd5 exd5 5. Bg5 c6 6. e3 Be7 7. e4 dxe4";

/// The reversed Carlsbad from 4... e6 (ply 8) to the end.
const REVERSED_MOVES: &str = "1. e4 c6 2. d4 d5 3. exd5 cxd5 4. c3 e6 5. Bd3 Nc6 6. Nf3 Bd6";

/// The Carlsbad's pawns: White a2 b2 d4 e3 f2 g2 h2, Black a7 b7 c6 d5 f7 g7 h7.
const CARLSBAD_BOARD: &str = "8/pp3ppp/2p5/3p4/3P4/4P3/PP3PPP/8";

/// The Carlsbad games with `carlsbad` results, then the reversed form's with `reversed`.
fn pgn(carlsbad: &[&str], reversed: &[&str]) -> String {
    let mut text = String::new();
    for (i, result) in carlsbad.iter().enumerate() {
        text.push_str(&format!(
            "[Event \"carlsbad {i}\"]\n[Result \"{result}\"]\n[ECO \"D36\"]\n\n\
             {CARLSBAD_MOVES} {result}\n\n"
        ));
    }
    for (i, result) in reversed.iter().enumerate() {
        text.push_str(&format!(
            "[Event \"reversed {i}\"]\n[Result \"{result}\"]\n[ECO \"B13\"]\n\n\
             {REVERSED_MOVES} {result}\n\n"
        ));
    }
    text
}

struct Fixture {
    dir: tempfile::TempDir,
    db: PathBuf,
}

/// Three Carlsbad games (1-0, 1-0, 0-1) and one of the reversed form (0-1).
fn fixture() -> Fixture {
    fixture_with(&pgn(&["1-0", "1-0", "0-1"], &["0-1"]))
}

fn fixture_with(games_pgn: &str) -> Fixture {
    fixture_of(&[("carlsbad", CARLSBAD)], games_pgn)
}

/// A database of `games_pgn` classified with the catalogue `definitions` (key, TOML).
fn fixture_of(definitions: &[(&str, &str)], games_pgn: &str) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let catalogue = dir.path().join("catalogue");
    std::fs::create_dir(&catalogue).unwrap();
    for (key, text) in definitions {
        std::fs::write(catalogue.join(format!("{key}.toml")), text).unwrap();
    }
    let games = dir.path().join("games.pgn");
    std::fs::write(&games, games_pgn).unwrap();
    let db = dir.path().join("t.db");
    let mut cmd = Command::new(BIN);
    cmd.env("PAWNDEX_STRUCTURES", &catalogue)
        .arg("index")
        .arg("--db")
        .arg(&db)
        .arg(&games);
    Run::of(cmd, "index").expect_code(0, "index");
    Fixture { dir, db }
}

fn pawndex(db: &Path, command: &str, args: &[&str]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.arg(command).arg("--db").arg(db).args(args);
    let run = Run::of(cmd, &format!("{command} {args:?}"));
    run.expect_code(0, &format!("{command} {args:?}"));
    run
}

/// A score cell: a percent with one decimal.
fn assert_score_text(s: &str, what: &str) {
    let (whole, decimals) = s
        .split_once('.')
        .unwrap_or_else(|| panic!("{what}: {s:?} has no decimal point"));
    assert!(
        decimals.len() == 1 && decimals.bytes().all(|b| b.is_ascii_digit()),
        "{what}: {s:?} should have one decimal"
    );
    let v: f64 = s.parse().unwrap();
    assert!(
        !whole.is_empty() && (0.0..=100.0).contains(&v),
        "{what}: {s:?} is not a percent"
    );
}

/// A JSON score: a number that prints with at most one decimal and equals `text`.
fn assert_score_json(v: &Value, text: &str, what: &str) {
    assert!(v.is_number(), "{what}: {v} is not a number");
    let printed = v.to_string();
    let decimals = printed.split_once('.').map_or(0, |(_, d)| d.len());
    assert!(decimals <= 1, "{what}: {printed} has more than one decimal");
    assert_eq!(v.as_f64().unwrap(), text.parse::<f64>().unwrap(), "{what}");
}

/// `stats`: White's score is the percent of the points with one decimal, in every row.
#[test]
fn stats_writes_white_score_as_a_percent_with_one_decimal() {
    let db = common::stats::fixture_db();
    for args in [
        vec!["--by", "white_islands"],
        vec!["--by", "phase,white_islands", "--per", "game"],
    ] {
        let csv = stats_csv(&db.path, &args);
        let col = |name: &str| csv.header.iter().position(|h| h == name).unwrap();
        let (w, d, b, s) = (
            col("white_wins"),
            col("draws"),
            col("black_wins"),
            col("white_score"),
        );
        let mut seen = 0;
        for row in &csv.rows {
            let n = |i: usize| row[i].parse::<u64>().unwrap();
            let scored = n(w) + n(d) + n(b);
            if scored == 0 {
                assert_eq!(row[s], "", "{args:?}: {row:?}");
                continue;
            }
            assert_score_text(&row[s], &format!("{args:?}: {row:?}"));
            let want = 100.0 * (n(w) as f64 + n(d) as f64 / 2.0) / scored as f64;
            assert_eq!(row[s], format!("{want:.1}"), "{args:?}: {row:?}");
            seen += 1;
        }
        assert!(seen > 2, "{args:?}: too few rows with a score");
    }
}

/// `structures`: the table, the CSV and the JSON show the same score, to one decimal.
#[test]
fn structures_scores_agree_in_every_format() {
    let f = fixture();
    let csv = parse_csv(
        pawndex(&f.db, "structures", &["--format", "csv"])
            .stdout
            .as_bytes(),
    );
    let json: Value =
        serde_json::from_str(&pawndex(&f.db, "structures", &["--format", "json"]).stdout).unwrap();
    let table = pawndex(&f.db, "structures", &[]).stdout;
    let score = csv.header.iter().position(|h| h == "white_score").unwrap();
    let moves = csv
        .header
        .iter()
        .position(|h| h == "leaving_moves")
        .unwrap();

    // The Carlsbad: 2 of 3 (66.7); the reversed form: 0 of 1.
    assert_eq!(csv.rows[0][score], "66.7", "{:?}", csv.rows[0]);
    assert_eq!(csv.rows[1][score], "0.0", "{:?}", csv.rows[1]);
    assert_eq!(csv.rows[0][moves], "e4 3 (66.7%)", "{:?}", csv.rows[0]);
    for (i, row) in csv.rows.iter().enumerate() {
        assert_score_text(&row[score], &format!("csv row {i}"));
        assert_score_json(
            &json[i]["white_score"],
            &row[score],
            &format!("json row {i}"),
        );
    }
    assert_score_json(
        &json[0]["leaving_moves"][0]["white_score"],
        "66.7",
        "json leaving move",
    );
    let carlsbad: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(carlsbad[..4], ["Carlsbad", "6", "3", "66.7"], "{table}");
}

/// `structures`: JSON's other numbers have the precision of their table cell too: the ECO
/// share (2 of 3 games, 66.7, not 66.666…) and the average stay (8 plies in 3 stays, 2.67).
#[test]
fn structures_json_numbers_have_the_table_precision() {
    let mut games = pgn(&["1-0", "0-1"], &[]);
    // A third Carlsbad game, of another ECO code, that stays a ply longer (left at ply 14).
    games.push_str(&format!(
        "[Event \"carlsbad 2\"]\n[Result \"1-0\"]\n[ECO \"D35\"]\n\n\
         {} 7. Nf3 O-O 8. e4 dxe4 1-0\n\n",
        CARLSBAD_MOVES.trim_end_matches(" 7. e4 dxe4")
    ));
    let f = fixture_with(&games);
    let json: Value =
        serde_json::from_str(&pawndex(&f.db, "structures", &["--format", "json"]).stdout).unwrap();
    let carlsbad = &json[0];
    assert_eq!(carlsbad["stays"], 3, "{carlsbad}");
    assert_eq!(carlsbad["positions"], 8, "{carlsbad}");
    assert_eq!(carlsbad["avg_stay"].to_string(), "2.67", "{carlsbad}");
    assert_eq!(carlsbad["eco"][0]["eco"], "D36", "{carlsbad}");
    assert_eq!(
        carlsbad["eco"][0]["share"].to_string(),
        "66.7",
        "{carlsbad}"
    );
    assert_eq!(
        carlsbad["eco"][1]["share"].to_string(),
        "33.3",
        "{carlsbad}"
    );
}

/// `similar`: the table, the CSV and the JSON show the same score to one decimal, and JSON
/// lists each side's pawns as an array of squares, file by file (a2 before a3 before b2).
#[test]
fn similar_scores_agree_and_squares_are_arrays_by_file() {
    let f = fixture();
    let args = ["--structure", CARLSBAD_BOARD, "--max-distance", "0"];
    let with = |format: &str| {
        let mut a = args.to_vec();
        a.extend(["--format", format]);
        pawndex(&f.db, "similar", &a).stdout
    };
    let csv = parse_csv(with("csv").as_bytes());
    assert_eq!(csv.rows.len(), 1, "{csv:?}");
    assert_eq!(csv.rows[0][4], "66.7");
    let table = with("table");
    let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(row[4], "66.7", "{table}");
    let json: Value = serde_json::from_str(with("json").lines().next().unwrap()).unwrap();
    assert_score_json(&json["white_score"], "66.7", "json");
    assert_eq!(
        json["white_pawns"],
        serde_json::json!(["a2", "b2", "d4", "e3", "f2", "g2", "h2"])
    );
    assert_eq!(
        json["black_pawns"],
        serde_json::json!(["a7", "b7", "c6", "d5", "f7", "g7", "h7"])
    );

    // Two pawns on one file: the ranks in order within the file, before the next file.
    let doubled = "8/8/8/8/8/1P6/PP6/8";
    let out = pawndex(
        &f.db,
        "similar",
        &["--structure", doubled, "--limit", "1", "--format", "json"],
    );
    let v: Value = serde_json::from_str(out.stdout.lines().next().unwrap()).unwrap();
    let squares: Vec<String> = v["white_pawns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    let mut sorted = squares.clone();
    sorted.sort();
    assert_eq!(squares, sorted, "file by file, rank by rank: {squares:?}");

    // The --sql statement's first line names the target's squares in the same order.
    let sql = pawndex(&f.db, "similar", &["--structure", doubled, "--sql"]).stdout;
    assert!(
        sql.lines()
            .next()
            .unwrap()
            .contains("(White a2 b2 b3, Black"),
        "{}",
        sql.lines().next().unwrap()
    );
}

// ---------------------------------------------------------------------------------------------
// Point 2: one palette for White's score in every chart.

/// What every legend of the score colours says (SVG escapes the apostrophe).
const LEGEND: &str = "White&apos;s score: above 50% = White does better";

/// The palette of docs/conventions.md: near white (#F7F7F7) at 50%, green (#1B7837) at 65% and
/// above, purple (#762A83) at 35% and below, linear in between.
fn palette(score: f64) -> String {
    let even = [247.0, 247.0, 247.0];
    let t = ((score - 50.0) / 15.0).clamp(-1.0, 1.0);
    let (to, t) = if t >= 0.0 {
        ([27.0, 120.0, 55.0], t)
    } else {
        ([118.0, 42.0, 131.0], -t)
    };
    let c: Vec<u8> = (0..3)
        .map(|i| (even[i] + (to[i] - even[i]) * t).round() as u8)
        .collect();
    format!("#{:02X}{:02X}{:02X}", c[0], c[1], c[2])
}

/// The texts of an SVG, and the fills of its rectangles in document order.
fn svg_parts(svg: &str) -> (Vec<String>, Vec<String>) {
    let mut texts = Vec::new();
    for part in svg.split("<text").skip(1) {
        let start = part.find('>').unwrap() + 1;
        let end = part.find("</text>").unwrap();
        texts.push(part[start..end].trim().to_string());
    }
    let fills = svg
        .lines()
        .filter(|l| l.trim_start().starts_with("<rect"))
        .filter_map(|l| {
            let at = l.find(" fill=\"")? + 7;
            Some(l[at..].split('"').next()?.to_string())
        })
        .collect();
    (texts, fills)
}

/// 40 Carlsbad games that White scores 75% in, and 35 games of the reversed form that White
/// loses: enough games (30) for every chart to colour their scores.
fn chart_fixture() -> Fixture {
    let carlsbad: Vec<&str> = (0..40)
        .map(|i| if i < 30 { "1-0" } else { "0-1" })
        .collect();
    fixture_with(&pgn(&carlsbad, &["0-1"; 35]))
}

fn chart_svg(f: &Fixture, command: &str, args: &[&str], name: &str) -> String {
    let path = f.dir.path().join(name);
    let mut all = args.to_vec();
    all.extend(["--chart", path.to_str().unwrap()]);
    let csv = f.dir.path().join(format!("{name}.csv"));
    if command == "stats" {
        all.extend(["-o", csv.to_str().unwrap()]);
    }
    pawndex(&f.db, command, &all);
    std::fs::read_to_string(&path).unwrap()
}

/// `structures --chart` and `stats --report top-structures`: a bar per structure coloured by
/// White's score, green where White does better, purple where Black does, and the one legend.
#[test]
fn bars_of_structures_take_the_one_palette() {
    let f = chart_fixture();
    assert_eq!(
        (palette(75.0), palette(0.0)),
        ("#1B7837".into(), "#762A83".into())
    );
    for (command, args, name) in [
        ("structures", vec![], "named.svg"),
        ("stats", vec!["--report", "top-structures"], "top.svg"),
    ] {
        let svg = chart_svg(&f, command, &args, name);
        let (texts, fills) = svg_parts(&svg);
        assert!(texts.iter().any(|t| t == LEGEND), "{name}: {texts:?}");
        // The Carlsbad (75%): full green; its reversed form (0%): full purple; the legend's
        // swatches from 35% to 65% come first, so count the bars after them.
        let legend_end = fills.iter().position(|c| c == "#1B7837").unwrap();
        let bars = &fills[legend_end + 1..];
        assert!(bars.iter().any(|c| c == "#1B7837"), "{name}: {fills:?}");
        assert!(bars.iter().any(|c| c == "#762A83"), "{name}: {fills:?}");
        assert!(
            texts.iter().any(|t| t.contains("White 75.0%")),
            "{name}: {texts:?}"
        );
    }
}

/// `stats --report islands-vs-score`: each cell with 30 games or more is filled with the
/// palette's colour of its score; the legend is the one of every chart, from 35% to 65%.
#[test]
fn heat_map_cells_take_the_one_palette() {
    let f = chart_fixture();
    let svg = chart_svg(&f, "stats", &["--report", "islands-vs-score"], "h.svg");
    let (texts, fills) = svg_parts(&svg);
    let legend: Vec<&str> = LEGEND.splitn(2, ": ").collect();
    assert!(
        texts.iter().any(|t| *t == format!("{}:", legend[0])),
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t == "above 50% ="), "{texts:?}");
    assert!(texts.iter().any(|t| t == "White does better"), "{texts:?}");
    for label in ["65%+", "50%", "35%-"] {
        assert!(texts.iter().any(|t| t == label), "{label}: {texts:?}");
    }
    let csv = parse_csv(&std::fs::read(f.dir.path().join("h.svg.csv")).unwrap());
    let col = |name: &str| csv.header.iter().position(|h| h == name).unwrap();
    let mut drawn = 0;
    for row in &csv.rows {
        let games: u64 = row[col("games")].parse().unwrap();
        if games < 30 || row[col("white_score")].is_empty() {
            continue;
        }
        let w: f64 = row[col("white_wins")].parse().unwrap();
        let d: f64 = row[col("draws")].parse().unwrap();
        let b: f64 = row[col("black_wins")].parse().unwrap();
        let score = 100.0 * (w + d / 2.0) / (w + d + b);
        let want = palette(score);
        assert!(
            fills.contains(&want),
            "{row:?}: no cell in {want}: {fills:?}"
        );
        assert!(
            texts
                .iter()
                .any(|t| *t == format!("{}%", row[col("white_score")])),
            "{row:?}: the cell's text: {texts:?}"
        );
        drawn += 1;
    }
    assert!(drawn >= 2, "too few cells drawn: {:?}", csv.rows);
}

/// The charts that draw White's score as a line: an axis in percent, the legend's words, and
/// the areas above and under 50% tinted with the palette's two ends.
#[test]
fn score_lines_are_in_percent_with_the_one_legend() {
    let f = chart_fixture();
    for (args, name) in [
        (vec!["--by", "white_islands"], "bars.svg"),
        (vec!["--by", "phase,black_islands"], "series.svg"),
    ] {
        let svg = chart_svg(&f, "stats", &args, name);
        let (texts, fills) = svg_parts(&svg);
        for label in ["0%", "100%", LEGEND] {
            assert!(
                texts.iter().any(|t| t == label),
                "{name}: {label}: {texts:?}"
            );
        }
        assert!(fills.iter().any(|c| c == "#1B7837"), "{name}: {fills:?}");
        assert!(fills.iter().any(|c| c == "#762A83"), "{name}: {fills:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Point 9: tables that keep what matters.

/// The structures `pawndex structures` names the forms it turns into: the Carlsbad with a name
/// longer than the table's column, and a minority attack (a Carlsbad with White's b-pawn on b4).
const LONG_CARLSBAD: &str = r#"
name = "Carlsbad of the Exchange Variation"
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

/// A Carlsbad from ply 11, the minority attack from 12. b4 (ply 23), a Carlsbad again from
/// 14. b5 (27), no name from 15... cxb5 (30).
const MINORITY_MOVES: &str = "1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. cxd5 exd5 5. Bg5 c6 6. e3 Be7 \
    7. Bd3 Nbd7 8. Qc2 O-O 9. Nge2 Re8 10. O-O Nf8 11. Rab1 a6 12. b4 Ne6 13. a4 g6 14. b5 axb5 \
    15. axb5 cxb5";

/// `structures`: a long name keeps its "(rev.)" (the middle of the name gives way), and the
/// "turns into" column names the forms as the first column does.
#[test]
fn the_structures_table_keeps_rev_and_shows_names() {
    let games = format!(
        "{}[Event \"minority\"]\n[Result \"1-0\"]\n\n{MINORITY_MOVES} 1-0\n\n",
        pgn(&[], &["0-1"])
    );
    let f = fixture_of(
        &[("carlsbad", LONG_CARLSBAD), ("minority", MINORITY)],
        &games,
    );
    let table = pawndex(&f.db, "structures", &[]).stdout;
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4, "{table}");
    // The first column ends where "positions" (right-aligned) begins.
    let width = lines[0].find("positions").unwrap();
    let first = |l: &str| {
        l.chars()
            .take(width)
            .collect::<String>()
            .trim_end()
            .to_string()
    };
    let (normal, reversed, minority) = (first(lines[1]), first(lines[2]), first(lines[3]));
    assert!(
        normal.starts_with("Carlsbad") && normal.ends_with("Variation") && normal.contains('…'),
        "{normal:?}\n{table}"
    );
    assert!(
        reversed.starts_with("Carlsbad") && reversed.ends_with(" (rev.)"),
        "{reversed:?}\n{table}"
    );
    assert_eq!(minority, "Minority attack", "{table}");
    for l in &lines {
        assert!(l.chars().count() <= 100, "{l:?}");
    }
    // Turns into: names (as in the first column), never keys.
    assert!(
        lines[1].contains("Minority attack 1"),
        "the Carlsbad turns into the minority attack once:\n{table}"
    );
    assert!(
        lines[3].contains("Carlsbad"),
        "the minority attack turns into the Carlsbad:\n{table}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("carlsbad") || l.contains("minority ")),
        "a key in the table:\n{table}"
    );
}

/// `similar` with nothing within reach keeps the output scripts expect (the table's and the
/// CSV's header, no JSON line) and says so on stderr, as `stats` does.
#[test]
fn an_empty_similar_result_says_so() {
    let f = fixture();
    let far = ["--structure", "8/8/8/8/8/8/8/8", "--max-distance", "0"];
    let run = |format: &str| {
        let mut args = far.to_vec();
        args.extend(["--format", format]);
        pawndex(&f.db, "similar", &args)
    };
    let table = run("table");
    assert_eq!(table.stdout.lines().count(), 1, "{}", table.stdout);
    assert!(table.stdout.starts_with("distance"), "{}", table.stdout);
    let csv = run("csv");
    assert_eq!(
        csv.stdout,
        "distance,structure,positions,games,white_score,differs\n"
    );
    let json = run("json");
    assert_eq!(json.stdout, "");
    for (format, r) in [("table", &table), ("csv", &csv), ("json", &json)] {
        assert_eq!(
            r.stderr.lines().count(),
            1,
            "{format}: one line on stderr: {}",
            r.stderr
        );
        assert!(
            r.stderr.starts_with("pawndex: no structure matched"),
            "{format}: {}",
            r.stderr
        );
    }
    // --games: no structure, so no game either.
    let mut args = far.to_vec();
    args.extend(["--games", "--format", "csv"]);
    let games = pawndex(&f.db, "similar", &args);
    assert_eq!(games.stdout.lines().count(), 1, "{}", games.stdout);
    assert!(
        games.stderr.starts_with("pawndex: no structure matched"),
        "{}",
        games.stderr
    );
    // A result says nothing on stderr.
    let found = pawndex(&f.db, "similar", &["--structure", CARLSBAD_BOARD]);
    assert_eq!(found.stderr, "");
}
