//! `pawndex similar`: its ranking equals a brute force over every position of `ply_features`
//! (each distinct (White pawns, Black pawns) pair with its positions, games and White's score,
//! ranked by the library's distance), with every option; targets by FEN or by game and ply;
//! bad command lines are usage errors (exit 2), a missing database an error (exit 1).
//!
//! The distance itself is checked against a square-by-square version by the property tests in
//! `src/similar.rs`; here the point is the search: ranking per side, pruning, reading only some
//! games' runs, and counting.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::query::{Db, pawndex};
use pawndex::similar::{Options, Pawns, distance, explain, square_list};

/// One expected row: (distance, pawns, positions, games, White's points ×2, scored games).
#[derive(Debug, Clone, PartialEq)]
struct Row {
    distance: u32,
    pawns: Pawns,
    positions: u64,
    games: u64,
    score: Option<f64>,
    differs: String,
}

/// Positions, games, White's points (a win 2, a draw 1) and games with a result.
type Counts = (u64, BTreeSet<i64>, u64, u64);

/// Every distinct structure of the database with its counts, ranked by distance to `target`.
fn brute_force(db: &Db, target: Pawns, o: Options, min_games: u64) -> Vec<Row> {
    let conn = db.conn();
    let mut st = conn
        .prepare(
            "SELECT f.game_id, f.white_pawns, f.black_pawns, g.result
             FROM ply_features AS f JOIN games AS g ON g.id = f.game_id",
        )
        .unwrap();
    // (white, black) -> (positions, games, points, scored)
    let mut pairs: BTreeMap<(u64, u64), Counts> = BTreeMap::new();
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)? as u64,
                r.get::<_, i64>(2)? as u64,
                r.get::<_, Option<String>>(3)?,
            ))
        })
        .unwrap();
    for row in rows {
        let (game, w, b, result) = row.unwrap();
        let e = pairs.entry((w, b)).or_default();
        e.0 += 1;
        if e.1.insert(game) {
            match result.as_deref() {
                Some("1-0") => (e.2 += 2, e.3 += 1),
                Some("1/2-1/2") => (e.2 += 1, e.3 += 1),
                Some("0-1") => (e.2 += 0, e.3 += 1),
                _ => (e.2 += 0, e.3 += 0),
            };
        }
    }
    let mut out: Vec<Row> = pairs
        .into_iter()
        .filter(|(_, e)| e.1.len() as u64 >= min_games)
        .map(|((white, black), (positions, games, points, scored))| {
            let pawns = Pawns { white, black };
            Row {
                distance: distance(pawns, target, o),
                pawns,
                positions,
                games: games.len() as u64,
                score: (scored > 0).then(|| 50.0 * points as f64 / scored as f64),
                differs: explain(pawns, target, o),
            }
        })
        .collect();
    out.sort_by_key(|r| {
        (
            r.distance,
            std::cmp::Reverse(r.games),
            r.pawns.white,
            r.pawns.black,
        )
    });
    out
}

/// The rows `pawndex similar ARGS --format json` prints.
fn similar(db: &Db, args: &[&str]) -> Vec<Row> {
    similar_env(db, args, &[])
}

/// [`similar`] with environment variables (`PAWNDEX_PLAN=scan|lists` forces one way of reading
/// the runs: one pass over all of them, or game by game).
fn similar_env(db: &Db, args: &[&str], env: &[(&str, &str)]) -> Vec<Row> {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let out = db.run_env("similar", &all, env);
    let text = out.ok(&format!("similar {args:?}"));
    text.lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let bits = |key: &str| -> u64 {
                v[key]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|sq| {
                        let sq = sq.as_str().unwrap();
                        let b = sq.as_bytes();
                        1u64 << ((b[1] - b'1') as u32 * 8 + (b[0] - b'a') as u32)
                    })
                    .fold(0, |a, b| a | b)
            };
            Row {
                distance: v["distance"].as_u64().unwrap() as u32,
                pawns: Pawns {
                    white: bits("white_pawns"),
                    black: bits("black_pawns"),
                },
                positions: v["positions"].as_u64().unwrap(),
                games: v["games"].as_u64().unwrap(),
                score: v["white_score"].as_f64(),
                differs: v["differs"].as_str().unwrap().to_string(),
            }
        })
        .collect()
}

fn assert_same(got: &[Row], want: &[Row], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: rows\n{got:#?}\n{want:#?}");
    for (g, w) in got.iter().zip(want) {
        assert_eq!(
            (g.distance, g.pawns, g.positions, g.games, &g.differs),
            (w.distance, w.pawns, w.positions, w.games, &w.differs),
            "{what}"
        );
        match (g.score, w.score) {
            (Some(a), Some(b)) => assert!((a - b).abs() < 0.051, "{what}: score {a} vs {b}"),
            (a, b) => assert_eq!(a.is_some(), b.is_some(), "{what}: score"),
        }
    }
}

const CARLSBAD: &str = "8/pp3ppp/2p5/3p4/3P4/4P3/PP3PPP/8";
const CARLSBAD_PAWNS: Pawns = Pawns {
    white: 0x0000_0000_0810_E300,
    black: 0x00E3_0408_0000_0000,
};

#[test]
fn the_ranking_equals_a_brute_force_over_every_position() {
    let db = Db::fixtures_and_random_games();
    let targets = [
        (CARLSBAD, CARLSBAD_PAWNS),
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            Pawns {
                white: 0xFF00,
                black: 0x00FF_0000_0000_0000,
            },
        ),
        // An isolani, White d4 against no Black c- or d-pawn.
        (
            "8/pp3ppp/4p3/8/3P4/8/PP3PPP/8",
            Pawns {
                white: 0x0000_0000_0800_E300,
                black: 0x00E3_1000_0000_0000,
            },
        ),
    ];
    for (fen, pawns) in targets {
        for (flags, o) in [
            (vec![], Options::default()),
            (
                vec!["--ignore-wings"],
                Options {
                    ignore_wings: true,
                    ..Options::default()
                },
            ),
            (
                vec!["--mirror", "--colour-reversed"],
                Options {
                    mirror: true,
                    colour_reversed: true,
                    ..Options::default()
                },
            ),
        ] {
            for (limit, min_games) in [(1usize, 1u64), (25, 1), (40, 3)] {
                let mut want = brute_force(&db, pawns, o, min_games);
                want.truncate(limit);
                let (l, m) = (limit.to_string(), min_games.to_string());
                let mut args = vec!["--structure", fen, "--limit", &l, "--min-games", &m];
                args.extend(flags.iter().copied());
                assert_same(&similar(&db, &args), &want, &format!("{args:?}"));
                for plan in ["scan", "lists"] {
                    let got = similar_env(&db, &args, &[("PAWNDEX_PLAN", plan)]);
                    assert_same(&got, &want, &format!("PAWNDEX_PLAN={plan} {args:?}"));
                }
            }
        }
    }
}

#[test]
fn games_not_yet_in_the_game_lists_count() {
    // A small append (at most 1/16 of the games) stays in the unmerged tail, above
    // derived.through, out of set_games.
    let db = Db::fixtures_and_random_games();
    db.append_unmerged();
    let start = Pawns {
        white: 0xFF00,
        black: 0x00FF_0000_0000_0000,
    };
    let mut want = brute_force(&db, start, Options::default(), 1);
    want.truncate(30);
    for plan in ["scan", "lists"] {
        let got = similar_env(
            &db,
            &[
                "--structure",
                "8/pppppppp/8/8/8/8/PPPPPPPP/8",
                "--limit",
                "30",
            ],
            &[("PAWNDEX_PLAN", plan)],
        );
        assert_same(&got, &want, &format!("tail, PAWNDEX_PLAN={plan}"));
    }
}

#[test]
fn max_distance_cuts_the_list() {
    let db = Db::fixtures_and_random_games();
    let o = Options::default();
    let want: Vec<Row> = brute_force(&db, CARLSBAD_PAWNS, o, 1)
        .into_iter()
        .filter(|r| r.distance <= 12)
        .take(1000)
        .collect();
    let got = similar(
        &db,
        &[
            "--structure",
            CARLSBAD,
            "--max-distance",
            "12",
            "--limit",
            "1000",
        ],
    );
    assert!(!want.is_empty());
    assert_same(&got, &want, "--max-distance 12");
}

#[test]
fn a_game_and_ply_is_a_target() {
    let db = Db::fixtures();
    let conn = db.conn();
    let (game, ply, w, b): (i64, i64, i64, i64) = conn
        .query_row(
            "SELECT game_id, ply, white_pawns, black_pawns FROM ply_features
             WHERE ply = 20 ORDER BY game_id LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    let (g, p) = (game.to_string(), ply.to_string());
    let got = similar(&db, &["--game", &g, "--ply", &p, "--limit", "5"]);
    // The structure itself comes first, at distance 0.
    assert_eq!(got[0].distance, 0);
    assert_eq!(
        got[0].pawns,
        Pawns {
            white: w as u64,
            black: b as u64
        }
    );
    assert_eq!(got[0].differs, "same pawns");
    let want = {
        let mut v = brute_force(&db, got[0].pawns, Options::default(), 1);
        v.truncate(5);
        v
    };
    assert_same(&got, &want, "--game --ply");
    // The table and CSV say the same.
    let table = db.run("similar", &["--game", &g, "--ply", &p, "--limit", "5"]);
    let table = table.ok("table");
    assert!(table.starts_with("distance"), "{table}");
    assert_eq!(table.lines().count(), 6, "{table}");
    let csv = db.run(
        "similar",
        &["--game", &g, "--ply", &p, "--limit", "5", "--format", "csv"],
    );
    let csv = csv.ok("csv");
    assert!(csv.starts_with("distance,structure,positions,games,white_score,differs\n"));
    assert_eq!(csv.lines().count(), 6, "{csv}");
    let _ = square_list(0);
}

#[test]
fn bad_command_lines_are_usage_errors() {
    let db = Db::fixtures();
    // A game or a ply the database does not hold is a missing thing: exit 1 (issue 37).
    for (args, says) in [
        (vec!["--game", "1", "--ply", "100000"], "--ply 100000"),
        (vec!["--game", "999999", "--ply", "1"], "--game 999999"),
    ] {
        let out = db.run("similar", &args);
        out.expect(1, &format!("{args:?}"));
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
    }
    for (args, says) in [
        (vec!["--structure", "8/8/9"], "--structure"),
        (vec!["--structure", CARLSBAD, "--limit", "0"], "--limit"),
        (vec!["--game", "1"], "--ply"),
        (vec![], "--structure"),
        (
            vec!["--structure", CARLSBAD, "--game", "1", "--ply", "2"],
            "--game",
        ),
    ] {
        let out = db.run("similar", &args);
        out.expect(2, &format!("{args:?}"));
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
    }
    let out = pawndex(&[
        "similar",
        "--db",
        "/nonexistent/pawndex.db",
        "--structure",
        CARLSBAD,
    ]);
    out.expect(1, "missing database");
}

/// The pawns of a FEN board part (or of a whole FEN).
fn board_pawns(fen: &str) -> Pawns {
    let board = fen.split_whitespace().next().unwrap();
    let mut p = Pawns::default();
    for (i, row) in board.split('/').enumerate() {
        let rank = 7 - i as u32;
        let mut file = 0u32;
        for c in row.chars() {
            match c {
                '1'..='8' => file += c.to_digit(10).unwrap(),
                'P' | 'p' => {
                    let bit = 1u64 << (rank * 8 + file);
                    if c == 'P' {
                        p.white |= bit;
                    } else {
                        p.black |= bit;
                    }
                    file += 1;
                }
                _ => file += 1,
            }
        }
    }
    p
}

/// The rows (distance, pawns, positions, games) of the statement `pawndex similar ARGS --sql`
/// prints, run by a plain read-only rusqlite connection.
fn sql_rows(db: &Db, args: &[&str]) -> Vec<(u32, Pawns, u64, u64)> {
    let mut all = args.to_vec();
    all.push("--sql");
    let out = db.run("similar", &all);
    let sql = out.ok(&format!("similar {args:?} --sql"));
    let conn = db.conn();
    let mut st = conn.prepare(sql).expect("a statement SQLite prepares");
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)? as u32,
                board_pawns(&r.get::<_, String>(1)?),
                r.get::<_, i64>(2)? as u64,
                r.get::<_, i64>(3)? as u64,
            ))
        })
        .unwrap();
    rows.map(Result::unwrap).collect()
}

/// Every combination of --mirror, --colour-reversed and --ignore-wings, with and without
/// --max-distance and --min-games, and limits below, at and above the number of structures
/// that qualify: the command lists exactly the brute force's first `limit` rows (so `limit`
/// rows whenever that many exist), as does its `--sql` statement, whichever way the runs are
/// read.
fn check_every_option_combination(db: &Db, fen: &str) {
    let target = board_pawns(fen);
    for mask in 0..8u32 {
        let o = Options {
            ignore_wings: mask & 1 != 0,
            mirror: mask & 2 != 0,
            colour_reversed: mask & 4 != 0,
        };
        let flags: Vec<&str> = [
            (o.ignore_wings, "--ignore-wings"),
            (o.mirror, "--mirror"),
            (o.colour_reversed, "--colour-reversed"),
        ]
        .into_iter()
        .filter_map(|(on, f)| on.then_some(f))
        .collect();
        for max_distance in [None, Some(6u32), Some(20)] {
            for min_games in [1u64, 2] {
                let all: Vec<Row> = brute_force(db, target, o, min_games)
                    .into_iter()
                    .filter(|r| max_distance.is_none_or(|d| r.distance <= d))
                    .collect();
                let total = all.len();
                let mut limits = vec![1, 7, total.saturating_sub(1), total, total + 5];
                limits.retain(|&l| l >= 1);
                limits.sort_unstable();
                limits.dedup();
                for limit in limits {
                    let want: Vec<Row> = all.iter().take(limit).cloned().collect();
                    let (l, m) = (limit.to_string(), min_games.to_string());
                    let d = max_distance.map(|d| d.to_string());
                    let mut args = vec!["--structure", fen, "--limit", &l, "--min-games", &m];
                    if let Some(d) = &d {
                        args.extend(["--max-distance", d.as_str()]);
                    }
                    args.extend(flags.iter().copied());
                    let what = format!("{args:?} (total {total})");
                    assert_same(&similar(db, &args), &want, &what);
                    if limit + 1 >= total {
                        for plan in ["scan", "lists"] {
                            let got = similar_env(db, &args, &[("PAWNDEX_PLAN", plan)]);
                            assert_same(&got, &want, &format!("PAWNDEX_PLAN={plan} {what}"));
                        }
                    }
                    let sql = sql_rows(db, &args);
                    let want_sql: Vec<(u32, Pawns, u64, u64)> = want
                        .iter()
                        .map(|r| (r.distance, r.pawns, r.positions, r.games))
                        .collect();
                    assert_eq!(sql, want_sql, "--sql {what}");
                }
            }
        }
    }
}

/// A database of `examples/sample.pgn` alone: few enough structures (about 200) that the
/// limits around their number are cheap to compare.
fn sample_db() -> Db {
    Db::index(&[common::root_path("examples/sample.pgn")])
}

#[test]
fn colour_reversed_lists_limit_rows_when_more_exist() {
    // The two sides' least parts came from different forms of the target: the search stopped
    // once every pawn set was a candidate, with only the pairs within its bound counted.
    let db = sample_db();
    let fen = "8/8/8/8/8/8/PPPPPPPP/8";
    for flags in [
        vec!["--colour-reversed"],
        vec!["--mirror", "--colour-reversed"],
    ] {
        let mut args = vec!["--structure", fen, "--limit", "30"];
        args.extend(flags);
        assert_eq!(similar(&db, &args).len(), 30, "{args:?}");
        assert_eq!(sql_rows(&db, &args).len(), 30, "{args:?} --sql");
    }
}

#[test]
fn every_option_combination_near_the_total_white_pawns_only() {
    check_every_option_combination(&sample_db(), "8/8/8/8/8/8/PPPPPPPP/8");
}

#[test]
fn every_option_combination_near_the_total_start_position() {
    check_every_option_combination(
        &sample_db(),
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    );
}

#[test]
fn every_option_combination_near_the_total_carlsbad() {
    check_every_option_combination(&sample_db(), CARLSBAD);
}

#[test]
fn every_option_combination_near_the_total_doubled_pawns_and_an_isolani() {
    // Doubled White c-pawns and a doubled Black f-pawn; then an isolani (White d4 against no
    // Black c- or d-pawn).
    let db = sample_db();
    check_every_option_combination(&db, "8/pp3pp1/2p2p2/3p4/8/2P1P3/P1P2PPP/8");
    check_every_option_combination(&db, "8/pp3ppp/4p3/8/3P4/8/PP3PPP/8");
}

/// A command line without a whole target names what is missing and the other way to give one:
/// never both `--game` and `--structure` as if both were needed.
#[test]
fn a_missing_target_names_the_real_alternatives() {
    let db = Db::fixtures();
    // (arguments, what the message must hold, what it must not)
    let cases: [(&[&str], &[&str], &[&str]); 3] = [
        (
            &[],
            &["--structure FEN", "--game ID --ply N"],
            &["required"],
        ),
        (&["--ply", "8"], &["--ply 8 needs --game"], &["required"]),
        (
            &["--game", "1"],
            &["--game 1 needs --ply"],
            &["--structure <FEN>"],
        ),
    ];
    for (args, holds, lacks) in cases {
        let out = db.run("similar", args);
        out.expect(2, &format!("similar {args:?}"));
        for h in holds {
            assert!(out.stderr.contains(h), "similar {args:?}: {}", out.stderr);
        }
        for l in lacks {
            assert!(!out.stderr.contains(l), "similar {args:?}: {}", out.stderr);
        }
    }
}
