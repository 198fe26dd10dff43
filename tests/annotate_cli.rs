//! `pawndex annotate` end to end: a game not in the reference annotated against two reference
//! games whose figures are counted by hand; every quoted figure against what `plans`,
//! `structures` and `similar` answer on the same database (two games, and 3,000 master games
//! with 30 held-out games annotated); the game's own text kept byte for byte, `--strip` and a
//! second annotation; a bad game among good ones; an archive refused before any output. The
//! plies and figures against an independent python-chess replay: tests/annotate/check_annotate.py.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{BIN, Run};
use serde_json::Value;

const OPENING: &str = "1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. cxd5 exd5 5. Bg5 c6 6. e3 Be7 7. Bd3 Nbd7";

/// Two reference games reaching the Carlsbad at ply 11 (after 6.e3): A (1-0) stays 11..=30 and
/// comes back at 32 (its last ply), B (0-1) stays 11..=27 and leaves by 14...c5.
fn reference() -> String {
    format!(
        "[Event \"A\"]\n[Site \"?\"]\n[Date \"1994.05.01\"]\n[Round \"1\"]\n[White \"Alpha\"]\n\
         [Black \"Beta\"]\n[Result \"1-0\"]\n\n\
         {OPENING} 8. Qc2 O-O 9. Nge2 Re8 10. O-O Nf8 11. Rab1 Ng6 12. b4 a6 13. a4 Bd6 14. b5 \
         axb5 15. axb5 Bd7 16. bxc6 bxc6 1-0\n\n\
         [Event \"B\"]\n[Site \"?\"]\n[Date \"2003.??.??\"]\n[Round \"1\"]\n[White \"Gamma\"]\n\
         [Black \"Delta\"]\n[Result \"0-1\"]\n\n\
         {OPENING} 8. Nf3 O-O 9. Qc2 Re8 10. O-O Nf8 11. Rab1 Ne4 12. Bxe7 Qxe7 13. b4 f5 14. b5 \
         c5 0-1\n"
    )
}

/// A game not in the reference: B's moves with comments, NAGs, a variation and a drawn
/// result; it enters the Carlsbad with 6.e3 (ply 11) and leaves it with 14...c5 (ply 28).
const MINE: &str = "[Event \"Club\"]\n[Site \"Home\"]\n[Date \"2026.11.28\"]\n[Round \"3\"]\n\
[White \"Me\"]\n[Black \"You\"]\n[Result \"1/2-1/2\"]\n\n\
{Played last night} 1. d4 d5 2. c4 $1 e6 (2... c6 3. Nf3) 3. Nc3 Nf6 4. cxd5 exd5 5. Bg5 c6 \
6. e3 {my comment} Be7 7. Bd3 Nbd7 8. Nf3 O-O 9. Qc2 Re8 10. O-O Nf8 11. Rab1 Ne4 12. Bxe7 \
Qxe7 13. b4 f5 14. b5 c5!? 15. dxc5 Nd7 1/2-1/2\n";

struct Setup {
    dir: tempfile::TempDir,
    db: PathBuf,
}

impl Setup {
    fn new(reference: &[u8]) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let pgn = dir.path().join("reference.pgn");
        std::fs::write(&pgn, reference).unwrap();
        let db = dir.path().join("reference.db");
        common::index(&db, &[], &[&pgn]).expect_code(0, "index");
        Setup { dir, db }
    }

    fn file(&self, name: &str, text: &[u8]) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn run(&self, command: &str, args: &[&str]) -> Run {
        let mut cmd = Command::new(BIN);
        cmd.arg(command).args(args).arg("--db").arg(&self.db);
        Run::of(cmd, &format!("{command} {args:?}"))
    }

    fn annotate(&self, file: &Path, args: &[&str]) -> Run {
        let mut cmd = Command::new(BIN);
        cmd.arg("annotate")
            .arg(file)
            .arg("--db")
            .arg(&self.db)
            .args(args);
        Run::of(cmd, &format!("annotate {args:?}"))
    }

    fn json(&self, file: &Path, args: &[&str]) -> Vec<Value> {
        let mut all = vec!["--format", "json"];
        all.extend_from_slice(args);
        let run = self.annotate(file, &all);
        run.expect_code(0, "annotate json");
        run.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

#[test]
fn a_game_outside_the_reference_against_figures_counted_by_hand() {
    let s = Setup::new(reference().as_bytes());
    let mine = s.file("mine.pgn", MINE.as_bytes());
    let games = s.json(&mine, &["--min-games", "1"]);
    assert_eq!(games.len(), 1);
    let g = &games[0];
    assert_eq!(g["tags"]["White"], "Me");
    assert_eq!(g["error"], Value::Null);
    let carlsbad: Vec<&Value> = g["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["structure"]["key"] == "carlsbad")
        .collect();
    let enter = carlsbad[0];
    assert_eq!(enter["ply"], 11);
    assert_eq!(enter["san"], "e3");
    assert_eq!(enter["to_move"], "black");
    let r = &enter["reference"];
    assert_eq!(r["games"], 2);
    assert_eq!(r["positions"], 20 + 1 + 17);
    assert_eq!(r["white_score"], 50.0);
    assert_eq!(r["to_move_score"], 50.0);
    // Three stays: A's 11..=30 and 32, B's 11..=27.
    assert_eq!(r["avg_stay"], 12.67);
    let sans = |list: &Value| -> Vec<(String, u64, f64)> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["san"].as_str().unwrap().to_string(),
                    m["games"].as_u64().unwrap(),
                    m["score"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(
        sans(&r["moves"]["white"]),
        vec![
            ("Bd3".into(), 2, 50.0),
            ("O-O".into(), 2, 50.0),
            ("Qc2".into(), 2, 50.0)
        ]
    );
    // Black's break 14...c5 (B, a Black win); White's 16.bxc6 (A, a White win).
    assert_eq!(sans(&r["breaks"]["black"]), vec![("c5".into(), 1, 100.0)]);
    assert_eq!(sans(&r["breaks"]["white"]), vec![("bxc6".into(), 1, 100.0)]);
    // Where it leaves: by 14...c5, as B did.
    let leave = g["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["left_by"]["from"]["key"] == "carlsbad")
        .expect("the game leaves the Carlsbad");
    assert_eq!(leave["ply"], 28);
    let l = &leave["left_by"];
    assert_eq!(
        (&l["san"], &l["side"], &l["games"]),
        (&"c5".into(), &"black".into(), &1.into())
    );
    assert_eq!(l["score"], 100.0);
    assert_eq!(l["form_games"], 2);
    assert_eq!(
        l["alternatives"],
        serde_json::json!([]),
        "no other Black exit"
    );
    // Each change is one of the game's structure, in order.
    let plies: Vec<u64> = g["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["ply"].as_u64().unwrap())
        .collect();
    assert!(plies.windows(2).all(|w| w[0] < w[1]), "{plies:?}");

    // The same figures as `plans` and `structures` answer.
    agree_with_reports(&s, &games, 1);

    // The PGN: the comment on the position after 6.e3 goes right after it, before the
    // player's own comment; the player's text is all there.
    let run = s.annotate(&mine, &["--min-games", "1"]);
    run.expect_code(0, "annotate pgn");
    let out = &run.stdout;
    assert!(
        out.contains("6. e3\n{pawndex: Carlsbad from here. Reference: 2 games, 38 positions;"),
        "{out}"
    );
    assert!(out.contains("} {my comment} Be7"), "{out}");
    assert!(
        out.contains("14. b5 c5!?\n{pawndex: ...c5 leaves the Carlsbad"),
        "{out}"
    );
    assert!(out.starts_with("[Event \"Club\"]"));
    assert!(out.contains("\n{pawndex: structures (plies): "), "{out}");
    assert!(
        out.contains("}\n{Played last night} 1. d4 d5 2. c4 $1 e6 (2... c6 3. Nf3)"),
        "{out}"
    );
    for line in out.lines() {
        assert!(line.len() <= 255, "a line over 255 bytes: {line}");
    }

    // Below --min-games (default 10) no figure is quoted.
    let games = s.json(&mine, &[]);
    let enter = games[0]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["structure"]["key"] == "carlsbad")
        .unwrap()
        .clone();
    assert_eq!(enter["reference"]["games"], 2);
    assert_eq!(enter["reference"]["white_score"], Value::Null);
    assert_eq!(enter["reference"]["moves"]["white"], serde_json::json!([]));
    let run = s.annotate(&mine, &[]);
    let flat = run.stdout.replace('\n', " ");
    assert!(
        flat.contains("only 2 games of the reference reach it (fewer than 10"),
        "{}",
        run.stdout
    );
}

/// Every figure quoted in `games` (JSON of annotate) against `plans`, `structures` and
/// `similar` on the same database.
fn agree_with_reports(s: &Setup, games: &[Value], min_games: u64) {
    let mut plans: HashMap<String, Value> = HashMap::new();
    let structures: Vec<Value> = {
        let run = s.run("structures", &["--format", "json"]);
        run.expect_code(0, "structures");
        serde_json::from_str(&run.stdout).unwrap()
    };
    let mut compared = 0;
    for g in games {
        for c in g["changes"].as_array().unwrap() {
            let form = |f: &Value| {
                let key = f["key"].as_str().unwrap().to_string();
                if f["reversed"] == true {
                    format!("{key}~")
                } else {
                    key
                }
            };
            let mut plans_of = |arg: &str| -> Value {
                plans
                    .entry(arg.to_string())
                    .or_insert_with(|| {
                        let run = s.run(
                            "plans",
                            &["--structure-name", arg, "--format", "json", "--top", "1000"],
                        );
                        run.expect_code(0, "plans");
                        serde_json::from_str(&run.stdout).unwrap()
                    })
                    .clone()
            };
            if !c["structure"].is_null() {
                let arg = form(&c["structure"]);
                let p = plans_of(&arg);
                let r = &c["reference"];
                assert_eq!(r["games"], p["games"], "{arg} games");
                assert_eq!(r["positions"], p["plies"], "{arg} positions");
                let enough = p["games"].as_u64().unwrap() >= min_games;
                if enough {
                    assert_eq!(r["white_score"], p["baseline"]["white"]["score"], "{arg}");
                    assert_eq!(r["black_score"], p["baseline"]["black"]["score"], "{arg}");
                    let to_move = c["to_move"].as_str().unwrap();
                    assert_eq!(r["to_move_score"], p["baseline"][to_move]["score"], "{arg}");
                    for side in ["white", "black"] {
                        let want: Vec<(Value, Value)> = p["moves"][side]
                            .as_array()
                            .unwrap()
                            .iter()
                            .take(3)
                            .map(|m| (m["san"].clone(), m["games"].clone()))
                            .collect();
                        let got: Vec<(Value, Value)> = r["moves"][side]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|m| (m["san"].clone(), m["games"].clone()))
                            .collect();
                        assert_eq!(got, want, "{arg} {side} moves");
                        let want: Vec<(Value, Value, Value)> = p["breaks"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .filter(|m| m["side"] == side)
                            .take(2)
                            .map(|m| (m["san"].clone(), m["games"].clone(), m["leads_to"].clone()))
                            .collect();
                        let got: Vec<(Value, Value, Value)> = r["breaks"][side]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|m| (m["san"].clone(), m["games"].clone(), m["leads_to"].clone()))
                            .collect();
                        assert_eq!(got, want, "{arg} {side} breaks");
                    }
                    let ids = |v: &Value| -> Vec<Value> {
                        v.as_array()
                            .unwrap()
                            .iter()
                            .take(2)
                            .map(|m| m["id"].clone())
                            .collect()
                    };
                    assert_eq!(
                        ids(&r["model_games"]),
                        ids(&p["model_games"]),
                        "{arg} model games"
                    );
                    // The average stay as `structures` gives it.
                    let row = structures
                        .iter()
                        .find(|row| {
                            row["key"] == c["structure"]["key"]
                                && row["reversed"] == c["structure"]["reversed"]
                        })
                        .unwrap_or_else(|| panic!("{arg} in structures"));
                    assert_eq!(r["avg_stay"], row["avg_stay"], "{arg} average stay");
                    assert_eq!(r["games"], row["games"], "{arg} games in structures");
                }
                compared += 1;
            }
            if !c["left_by"].is_null() {
                let l = &c["left_by"];
                let arg = form(&l["from"]);
                let p = plans_of(&arg);
                let exits: Vec<&Value> = p["breaks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .chain(p["other_exits"].as_array().unwrap())
                    .collect();
                let row = exits.iter().find(|e| {
                    e["san"] == l["san"] && e["side"] == l["side"] && e["leads_to"] == l["leads_to"]
                });
                match row {
                    Some(row) => {
                        assert_eq!(l["games"], row["games"], "{arg} left by {}", l["san"]);
                        if row["games"].as_u64().unwrap() >= min_games {
                            assert_eq!(l["score"], row["score_after"], "{arg} left by");
                        }
                    }
                    None => assert_eq!(l["games"], 0, "{arg} left by {}: not in plans", l["san"]),
                }
                compared += 1;
            }
        }
        for e in g["exact"].as_array().unwrap() {
            let pawns = e["pawns"].as_str().unwrap();
            let run = s.run(
                "similar",
                &[
                    "--structure",
                    pawns,
                    "--max-distance",
                    "0",
                    "--limit",
                    "1",
                    "--format",
                    "json",
                ],
            );
            run.expect_code(0, "similar");
            let row: Option<Value> = run
                .stdout
                .lines()
                .next()
                .map(|l| serde_json::from_str(l).unwrap());
            let games = row.as_ref().map_or(0, |r| r["games"].as_u64().unwrap());
            assert_eq!(e["reference"]["games"], games, "{pawns}");
            if let Some(row) = &row {
                assert_eq!(e["reference"]["positions"], row["positions"], "{pawns}");
                if games >= min_games {
                    assert_eq!(e["reference"]["white_score"], row["white_score"], "{pawns}");
                }
            }
            assert!(
                e["last_ply"].as_u64().unwrap() + 1 - e["ply"].as_u64().unwrap() >= 8,
                "kept 8 plies"
            );
            compared += 1;
        }
    }
    assert!(compared > 0, "nothing compared");
}

#[test]
fn the_text_is_kept_and_pawndex_comments_come_out_again() {
    let s = Setup::new(reference().as_bytes());
    for fixture in ["examples/sample.pgn", "tests/fixtures/edge.pgn"] {
        let original = std::fs::read(common::root_path(fixture)).unwrap();
        let input = s.file("in.pgn", &original);
        let out = s.dir.path().join("out.pgn");
        let run = s.annotate(&input, &["--min-games", "1", "-o", out.to_str().unwrap()]);
        assert!(matches!(run.code, Some(0 | 1)), "{fixture}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "-o: nothing on standard output");
        let annotated = std::fs::read(&out).unwrap();
        assert_ne!(annotated, original, "{fixture}: something was said");
        // --strip gives the input back byte for byte.
        let mut cmd = Command::new(BIN);
        cmd.arg("annotate").arg(&out).arg("--strip");
        let stripped = Run::of(cmd, "strip");
        stripped.expect_code(0, "strip");
        assert!(
            stripped.stdout.as_bytes() == original.as_slice(),
            "{fixture}: --strip does not give the input back"
        );
        // A second annotation replaces the first.
        let again = s.annotate(&out, &["--min-games", "1"]);
        assert_eq!(again.code, run.code);
        assert!(
            again.stdout.as_bytes() == annotated.as_slice(),
            "{fixture}: annotated twice"
        );
    }
}

#[test]
fn a_bad_game_is_reported_and_written_back_the_others_are_annotated() {
    let s = Setup::new(reference().as_bytes());
    let bad = "[Event \"Bad\"]\n[White \"X\"]\n[Black \"Y\"]\n[Result \"*\"]\n\n1. e4 e5 2. Ke3 Nc6 *\n\n";
    let text = format!("{MINE}\n{bad}{MINE}");
    let input = s.file("three.pgn", text.as_bytes());
    let run = s.annotate(&input, &["--min-games", "1"]);
    run.expect_code(1, "a game cannot be replayed");
    assert!(run.stderr.contains("game 2 ("), "{}", run.stderr);
    assert!(run.stderr.contains("X - Y"), "{}", run.stderr);
    assert!(run.stderr.contains("ply 3"), "{}", run.stderr);
    assert!(
        run.stdout.contains(bad),
        "the bad game is written back unchanged"
    );
    assert_eq!(
        run.stdout.matches("{pawndex: Carlsbad from here").count(),
        2
    );
    let mut cmd = Command::new(BIN);
    cmd.args(["annotate", "--format", "json", "--min-games", "1", "--db"])
        .arg(&s.db)
        .arg(&input);
    let json = Run::of(cmd, "json");
    json.expect_code(1, "json");
    let lines: Vec<Value> = json
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[1]["error"]["ply"], 3);
    assert!(
        lines[1]["error"]["reason"]
            .as_str()
            .unwrap()
            .contains("Ke3"),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2]["game"], 3);
}

#[test]
fn an_archive_is_refused_before_any_output_and_options_are_checked() {
    let s = Setup::new(reference().as_bytes());
    let zip = s.file("games.zip", b"PK\x03\x04\x14\x00\x00\x00\x08\x00games.pgn");
    let out = s.dir.path().join("out.pgn");
    let run = s.annotate(&zip, &["-o", out.to_str().unwrap()]);
    run.expect_code(1, "a zip file");
    assert!(run.stderr.contains("unzip"), "{}", run.stderr);
    assert!(!out.exists(), "no output file");
    assert!(run.stdout.is_empty());
    let mine = s.file("mine.pgn", MINE.as_bytes());
    s.annotate(&mine, &["--strip", "--format", "json"])
        .expect_code(2, "--strip with json");
    let run = s.annotate(&mine, &["--min-games", "0"]);
    run.expect_code(2, "--min-games 0");
    // A missing reference: exit 1, nothing written.
    let mut cmd = Command::new(BIN);
    cmd.arg("annotate")
        .arg(&mine)
        .arg("--db")
        .arg(s.dir.path().join("none.db"));
    let run = Run::of(cmd, "missing db");
    run.expect_code(1, "missing reference");
    assert!(run.stdout.is_empty());
    assert!(
        !s.dir.path().join("none.db").exists(),
        "no database created"
    );
}

/// 3,000 master games as the reference, 30 held-out games annotated: every quoted figure
/// equals `plans`, `structures` and `similar` on the same database, and every change's ply is
/// one where the game's structure changes as `index` records it.
#[test]
fn master_games_agree_with_plans_structures_and_similar() {
    let Some(shard) = common::corpus_shard("masters-1.pgn.zst") else {
        return;
    };
    let s = Setup::new(&common::shard_games(&shard, 0, 3000));
    let held_out = common::shard_games(&shard, 3000, 3030);
    let input = s.file("held-out.pgn", &held_out);
    let games = s.json(&input, &["--min-games", "5"]);
    assert_eq!(games.len(), 30);
    agree_with_reports(&s, &games, 5);
    // The changes' plies and forms as the index records them for the same games.
    let db = s.dir.path().join("held-out.db");
    common::index(&db, &[], &[&input]).expect_code(0, "index held out");
    let conn = common::open_db(&db);
    let mut compared = 0;
    for (i, g) in games.iter().enumerate() {
        let want: Vec<(i64, Option<String>)> = common::query_all(
            &conn,
            &format!(
                "SELECT ply, to_structure || CASE WHEN to_reversed THEN '~' ELSE '' END \
                 FROM structure_transitions WHERE game_id = {} ORDER BY ply",
                i + 1
            ),
        )
        .into_iter()
        .map(|r| {
            let ply = match &r[0] {
                rusqlite::types::Value::Integer(n) => *n,
                other => panic!("{other:?}"),
            };
            let form = match &r[1] {
                rusqlite::types::Value::Text(t) => Some(t.clone()),
                _ => None,
            };
            (ply, form)
        })
        .collect();
        let got: Vec<(i64, Option<String>)> = g["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let form = (!c["structure"].is_null()).then(|| {
                    format!(
                        "{}{}",
                        c["structure"]["key"].as_str().unwrap(),
                        if c["structure"]["reversed"] == true {
                            "~"
                        } else {
                            ""
                        }
                    )
                });
                (c["ply"].as_i64().unwrap(), form)
            })
            .collect();
        assert_eq!(got, want, "game {} changes", i + 1);
        compared += got.len();
    }
    assert!(compared > 30, "only {compared} changes compared");
}
