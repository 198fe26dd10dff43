//! `pawndex stats` counts and scores against naive SQL over `ply_features` joined to `games`,
//! on the indexed fixtures: every column alone, pairs, filters of every kind, the reports.

mod common;

use std::collections::BTreeMap;

use common::stats::*;

/// Every `--by` column on its own, per position and per game.
#[test]
fn every_column_alone_matches_naive_counts() {
    let db = fixture_db();
    let plies = plies(&db.path);
    assert!(
        plies.len() > 1000,
        "fixtures indexed: {} positions",
        plies.len()
    );
    for &col in ALL_COLUMNS {
        for per_game in [false, true] {
            let per = if per_game { "game" } else { "position" };
            let csv = stats_csv(&db.path, &["--by", col, "--per", per]);
            let want = expected(&plies, &[col], per_game, |_| true);
            assert_csv_matches(&csv, &[col], &want, &format!("--by {col} --per {per}"));
        }
    }
}

/// The positions column adds up to every position, whatever the grouping.
#[test]
fn positions_add_up_to_the_view() {
    let db = fixture_db();
    let conn = rusqlite::Connection::open(&db.path).unwrap();
    let total: u64 = conn
        .query_row("SELECT count(*) FROM ply_features", [], |r| r.get(0))
        .unwrap();
    for by in ["white_islands", "phase", "ply_bucket,elo_band", "pawn_fen"] {
        let csv = stats_csv(&db.path, &["--by", by]);
        let n = by.split(',').count();
        let sum: u64 = csv.rows.iter().map(|r| r[n].parse::<u64>().unwrap()).sum();
        assert_eq!(sum, total, "--by {by}");
    }
}

/// Plain SQL GROUP BY over the view, without any Rust in between, for two raw columns.
#[test]
fn raw_columns_match_sql_group_by() {
    let db = fixture_db();
    let conn = rusqlite::Connection::open(&db.path).unwrap();
    for col in ["white_islands", "black_distortion"] {
        let per_position = format!(
            "SELECT f.{col}, count(*), count(DISTINCT f.game_id),
                    sum(g.result = '1-0'), sum(g.result = '1/2-1/2'), sum(g.result = '0-1')
             FROM ply_features AS f JOIN games AS g ON g.id = f.game_id
             GROUP BY f.{col} ORDER BY f.{col}"
        );
        let per_game = format!(
            "SELECT k, count(*), count(*),
                    sum(g.result = '1-0'), sum(g.result = '1/2-1/2'), sum(g.result = '0-1')
             FROM (SELECT DISTINCT game_id, {col} AS k FROM ply_features) AS d
             JOIN games AS g ON g.id = d.game_id
             GROUP BY k ORDER BY k"
        );
        for (sql, per) in [(per_position, "position"), (per_game, "game")] {
            let want: Vec<Vec<String>> = conn
                .prepare(&sql)
                .unwrap()
                .query_map([], |r| {
                    (0..6)
                        .map(|i| r.get::<_, i64>(i).map(|v| v.to_string()))
                        .collect::<Result<Vec<_>, _>>()
                })
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let csv = stats_csv(&db.path, &["--by", col, "--per", per]);
            let got: Vec<Vec<String>> = csv.rows.iter().map(|r| r[..6].to_vec()).collect();
            if per == "game" {
                // positions differ per game; compare the key, games and results.
                let pick = |rows: &Vec<Vec<String>>| -> Vec<Vec<String>> {
                    rows.iter()
                        .map(|r| {
                            vec![
                                r[0].clone(),
                                r[2].clone(),
                                r[3].clone(),
                                r[4].clone(),
                                r[5].clone(),
                            ]
                        })
                        .collect()
                };
                assert_eq!(pick(&got), pick(&want), "--by {col} --per game");
            } else {
                assert_eq!(got, want, "--by {col} --per position");
            }
        }
    }
}

#[test]
fn column_pairs_and_triples_match_naive_counts() {
    let db = fixture_db();
    let plies = plies(&db.path);
    let cases: &[&[&str]] = &[
        &["phase", "white_islands"],
        &["ply_bucket", "white_bishop_pair"],
        &["elo_band", "phase"],
        &["white_pawns", "black_pawns", "pawn_fen"],
        &["game_id", "phase"],
        &["ply", "white_duo_count"],
        &["black_bishop_pair", "pieceset", "ply_bucket"],
        &["white_quart_count", "game_id", "black_islands"],
    ];
    for by in cases {
        for per_game in [false, true] {
            let per = if per_game { "game" } else { "position" };
            let joined = by.join(",");
            let csv = stats_csv(&db.path, &["--by", &joined, "--per", per]);
            let want = expected(&plies, by, per_game, |_| true);
            assert_csv_matches(&csv, by, &want, &format!("--by {joined} --per {per}"));
        }
    }
}

/// `--where` of every kind (structure, game, run, ply level, derived columns, mixes), `--ply`
/// and `--min-elo`, each against the same filter written in Rust.
#[test]
fn filters_match_naive_counts() {
    let db = fixture_db();
    let plies = plies(&db.path);
    type Keep = fn(&Ply) -> bool;
    let cases: Vec<(Vec<&str>, Keep)> = vec![
        (vec!["--where", "white_islands >= 2"], |p| {
            p.f["white_islands"] >= 2
        }),
        (
            vec!["--where", "white_duo_count >= 2 AND black_quart = 0"],
            |p| (p.f["white_duo"] as u64).count_ones() >= 2 && p.f["black_quart"] == 0,
        ),
        (vec!["--where", "result = '1-0'"], |p| {
            p.result.as_deref() == Some("1-0")
        }),
        (vec!["--where", "eco LIKE 'C%' OR eco IS NULL"], |p| {
            p.eco.as_deref().is_none_or(|e| e.starts_with('C'))
        }),
        (
            vec!["--where", "elo_band >= 2600"],
            |p| matches!(value(p, "elo_band"), Val::Int(b) if b >= 2600),
        ),
        (vec!["--where", "game_id % 3 = 1"], |p| p.game_id % 3 == 1),
        (vec!["--where", "white_bishop_pair = 1"], |p| {
            p.f["white_bishop_pair"] == 1
        }),
        (vec!["--where", "pieceset < 4294967295"], |p| {
            p.f["pieceset"] < 4294967295
        }),
        (vec!["--where", "ply BETWEEN 10 AND 30"], |p| {
            (10..=30).contains(&p.ply)
        }),
        (vec!["--where", "phase = 'endgame'"], |p| {
            naive_phase(p) == 2
        }),
        (
            vec!["--where", "phase <> 'opening' AND ply_bucket = 20"],
            |p| naive_phase(p) != 0 && p.ply / 10 == 2,
        ),
        (
            vec![
                "--where",
                "white_islands > black_islands AND white_bishop_pair = 1",
            ],
            |p| p.f["white_islands"] > p.f["black_islands"] && p.f["white_bishop_pair"] == 1,
        ),
        (
            vec!["--where", "white_islands = 2 AND result = '0-1'"],
            |p| p.f["white_islands"] == 2 && p.result.as_deref() == Some("0-1"),
        ),
        (
            vec![
                "--where",
                "white_islands = 2",
                "--where",
                "black_bishop_pair = 0",
            ],
            |p| p.f["white_islands"] == 2 && p.f["black_bishop_pair"] == 0,
        ),
        (vec!["--ply", "5..25"], |p| (5..=25).contains(&p.ply)),
        (vec!["--ply", "40.."], |p| p.ply >= 40),
        (vec!["--ply", "..3"], |p| p.ply <= 3),
        (vec!["--ply", "7"], |p| p.ply == 7),
        (vec!["--min-elo", "2600"], |p| {
            p.white_elo.is_some_and(|e| e >= 2600) && p.black_elo.is_some_and(|e| e >= 2600)
        }),
        (
            vec![
                "--ply",
                "10..60",
                "--where",
                "phase = 'middlegame'",
                "--min-elo",
                "2000",
            ],
            |p| {
                (10..=60).contains(&p.ply)
                    && naive_phase(p) == 1
                    && p.white_elo.is_some_and(|e| e >= 2000)
                    && p.black_elo.is_some_and(|e| e >= 2000)
            },
        ),
    ];
    for by in [
        &["white_islands"][..],
        &["phase", "ply_bucket"][..],
        &["pawn_fen"][..],
    ] {
        for (args, keep) in &cases {
            for per_game in [false, true] {
                let per = if per_game { "game" } else { "position" };
                let joined = by.join(",");
                let mut all = vec!["--by", &joined, "--per", per];
                all.extend(args.iter().copied());
                let csv = stats_csv(&db.path, &all);
                let want = expected(&plies, by, per_game, keep);
                assert_csv_matches(&csv, by, &want, &format!("{all:?}"));
            }
        }
    }
}

/// The SQL twin of each derived column (used inside `--where`) agrees with the Rust rule (used
/// by `--by`): filtering on each value keeps exactly that value's row.
#[test]
fn derived_columns_agree_between_where_and_by() {
    let db = fixture_db();
    for col in [
        "phase",
        "ply_bucket",
        "elo_band",
        "year",
        "decade",
        "white_duo_count",
        "black_trio_count",
        "white_quart_count",
        "pieceset",
        "white_bishop_pair",
    ] {
        let all = stats_csv(&db.path, &["--by", col]);
        assert!(!all.rows.is_empty());
        if col == "year" {
            assert_eq!(
                all.rows.last().map(|r| r[0].as_str()),
                Some("unknown"),
                "the fixtures hold a game of unknown year, sorted last"
            );
        }
        for row in &all.rows {
            // `--by` shows the unknown year as `unknown` and a decade as `1990s`; in `--where`
            // they are NULL and the number 1990.
            let v = match row[0].as_str() {
                "unknown" if col == "year" || col == "decade" => "",
                v => v.strip_suffix('s').filter(|_| col == "decade").unwrap_or(v),
            };
            let cond = if v.is_empty() {
                format!("{col} IS NULL")
            } else if col == "phase" {
                format!("{col} = '{v}'")
            } else {
                format!("{col} = {v}")
            };
            let one = stats_csv(&db.path, &["--by", col, "--where", &cond]);
            assert_eq!(one.rows, vec![row.clone()], "--where {cond}");
        }
    }
}

/// The phase rule on two hand-made games: a FEN start whose queens come off at ply 2, and a
/// Chess960 start with the queens in the corners, where slot 0 is a queen.
#[test]
fn phase_follows_the_start_position_pieces() {
    let db = fixture_db();
    let conn = rusqlite::Connection::open(&db.path).unwrap();
    let id = |event: &str| -> i64 {
        conn.query_row("SELECT id FROM games WHERE event = ?1", [event], |r| {
            r.get(0)
        })
        .unwrap()
    };
    for (event, want) in [
        (
            "stats: queens off from a FEN",
            [
                "opening", "opening", "endgame", "endgame", "endgame", "endgame", "endgame",
            ],
        ),
        (
            "stats: 960 queens in the corners",
            [
                "opening", "opening", "endgame", "endgame", "endgame", "endgame", "endgame",
            ],
        ),
    ] {
        let game = id(event);
        for filter_mode in [false, true] {
            let cond = format!("game_id = {game}");
            let csv = if filter_mode {
                // phase evaluated in SQL, per ply.
                stats_csv(
                    &db.path,
                    &[
                        "--by",
                        "ply",
                        "--where",
                        &format!("{cond} AND phase = 'endgame'"),
                    ],
                )
            } else {
                stats_csv(&db.path, &["--by", "ply,phase", "--where", &cond])
            };
            if filter_mode {
                let plies: Vec<&str> = csv.rows.iter().map(|r| r[0].as_str()).collect();
                assert_eq!(
                    plies,
                    ["2", "3", "4", "5", "6"],
                    "{event}: endgame plies (SQL)"
                );
            } else {
                let phases: Vec<&str> = csv.rows.iter().map(|r| r[1].as_str()).collect();
                assert_eq!(phases, want, "{event}");
            }
        }
    }
    // Every phase occurs in the fixtures, so the comparisons above cover them all.
    let csv = stats_csv(&db.path, &["--by", "phase"]);
    let names: Vec<&str> = csv.rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, ["opening", "middlegame", "endgame"]);
}

/// Games without a result count in positions and games, never in the results or the score.
#[test]
fn unfinished_games_count_only_as_positions_and_games() {
    let db = fixture_db();
    let conn = rusqlite::Connection::open(&db.path).unwrap();
    let (games, positions): (u64, u64) = conn
        .query_row(
            "SELECT count(DISTINCT f.game_id), count(*) FROM ply_features AS f
             JOIN games AS g ON g.id = f.game_id WHERE g.result = '*'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(games >= 2, "the fixtures have unfinished games");
    for per in ["position", "game"] {
        let csv = stats_csv(
            &db.path,
            &[
                "--by",
                "white_bishop_pair",
                "--where",
                "result = '*'",
                "--per",
                per,
            ],
        );
        let sum = |i: usize| {
            csv.rows
                .iter()
                .map(|r| r[i].parse::<u64>().unwrap())
                .sum::<u64>()
        };
        assert_eq!(sum(1), positions);
        assert!(sum(2) >= games);
        assert_eq!((sum(3), sum(4), sum(5)), (0, 0, 0));
        assert!(
            csv.rows.iter().all(|r| r[6].is_empty()),
            "no score: {:?}",
            csv.rows
        );
    }
}

/// Each report is its documented `--by` with filters, and matches the naive counts.
#[test]
fn reports_are_their_documented_queries() {
    let db = fixture_db();
    let plies = plies(&db.path);
    struct Case {
        report: &'static str,
        equivalent: Vec<&'static str>,
        by: Vec<&'static str>,
        keep: fn(&Ply) -> bool,
        top: Option<usize>,
    }
    let case = |report, equivalent, by, keep, top| Case {
        report,
        equivalent,
        by,
        keep,
        top,
    };
    let cases: Vec<Case> = vec![
        case(
            "islands-vs-score",
            vec!["--by", "white_islands,black_islands"],
            vec!["white_islands", "black_islands"],
            |_| true,
            None,
        ),
        case(
            "bishop-pair-by-elo",
            vec![
                "--by",
                "white_bishop_pair,elo_band",
                "--where",
                "white_bishop_pair <> black_bishop_pair",
            ],
            vec!["white_bishop_pair", "elo_band"],
            |p| p.f["white_bishop_pair"] != p.f["black_bishop_pair"],
            None,
        ),
        case(
            "dispersion-by-phase",
            vec!["--by", "phase,white_dispersion"],
            vec!["phase", "white_dispersion"],
            |_| true,
            None,
        ),
        case(
            "distortion-by-phase",
            vec!["--by", "phase,white_distortion"],
            vec!["phase", "white_distortion"],
            |_| true,
            None,
        ),
        case(
            "phalanx-by-ply",
            vec![
                "--by",
                "ply_bucket,white_duo_count,white_trio_count,white_quart_count",
                "--ply",
                "0..199",
            ],
            vec![
                "ply_bucket",
                "white_duo_count",
                "white_trio_count",
                "white_quart_count",
            ],
            |p| p.ply <= 199,
            None,
        ),
        case(
            "top-structures",
            vec!["--by", "white_pawns,black_pawns,pawn_fen", "--top", "20"],
            vec!["white_pawns", "black_pawns", "pawn_fen"],
            |_| true,
            Some(20),
        ),
    ];
    for Case {
        report,
        equivalent,
        by,
        keep,
        top,
    } in cases
    {
        for per in ["position", "game"] {
            let from_report = stats(&db.path, &["--report", report, "--per", per]);
            assert!(from_report.status.success(), "{report}");
            let mut args = equivalent.clone();
            args.extend(["--per", per]);
            let from_by = stats(&db.path, &args);
            assert_eq!(
                String::from_utf8_lossy(&from_report.stdout),
                String::from_utf8_lossy(&from_by.stdout),
                "--report {report} is {args:?}"
            );
            let csv = parse_csv(&from_report.stdout);
            let mut want = expected(&plies, &by, per == "game", keep);
            if let Some(n) = top {
                want = top_n(want, n, per == "game");
                check_top(&csv, &by, &want, report);
            } else {
                assert_csv_matches(&csv, &by, &want, report);
            }
        }
    }
}

/// The `n` groups with the most units, ties broken by the values.
fn top_n(
    all: BTreeMap<Vec<Val>, Expected>,
    n: usize,
    per_game: bool,
) -> BTreeMap<Vec<Val>, Expected> {
    let mut v: Vec<_> = all.into_iter().collect();
    v.sort_by(|a, b| {
        b.1.units(per_game)
            .cmp(&a.1.units(per_game))
            .then(a.0.cmp(&b.0))
    });
    v.truncate(n);
    v.into_iter().collect()
}

/// `--top` rows come most frequent first; compare them in that order.
fn check_top(csv: &Csv, by: &[&str], want: &BTreeMap<Vec<Val>, Expected>, context: &str) {
    assert_eq!(csv.rows.len(), want.len(), "{context}: rows");
    for row in &csv.rows {
        let key = want
            .keys()
            .find(|k| k.iter().map(Val::csv).collect::<Vec<_>>() == row[..by.len()])
            .unwrap_or_else(|| panic!("{context}: unexpected row {row:?}"));
        assert_row(row, key, &want[key], context);
    }
}

/// `--top` over whole structures (two passes) and over coarser groups (one pass) keep the
/// groups with the most units, most first, ties by value.
#[test]
fn top_keeps_the_most_frequent_groups_in_order() {
    let db = fixture_db();
    let plies = plies(&db.path);
    for (by, n) in [
        (vec!["pawn_fen"], 7),
        (vec!["white_pawns", "black_pawns"], 3),
        (vec!["white_pawns"], 5),
        (vec!["white_dispersion", "phase"], 4),
        (vec!["white_pawns", "black_pawns", "pawn_fen"], 1000),
    ] {
        for per_game in [false, true] {
            let per = if per_game { "game" } else { "position" };
            let joined = by.join(",");
            let top = n.to_string();
            for extra in [vec![], vec!["--where", "white_islands >= 2"]] {
                let mut args = vec!["--by", &joined, "--top", &top, "--per", per];
                args.extend(extra.iter().copied());
                let csv = stats_csv(&db.path, &args);
                let keep = |p: &Ply| extra.is_empty() || p.f["white_islands"] >= 2;
                let want = top_n(expected(&plies, &by, per_game, keep), n, per_game);
                check_top(&csv, &by, &want, &format!("{args:?}"));
                // Most units first, then by value.
                let units: Vec<u64> = csv
                    .rows
                    .iter()
                    .map(|r| r[by.len() + usize::from(per_game)].parse().unwrap())
                    .collect();
                assert!(
                    units.windows(2).all(|w| w[0] >= w[1]),
                    "{args:?}: {units:?}"
                );
            }
        }
    }
}

/// The scans run in slices of the games on several threads: any number of slices gives the
/// same bytes.
#[test]
fn any_number_of_threads_gives_the_same_csv() {
    let db = fixture_db();
    for args in [
        &["--by", "white_islands,phase", "--per", "game"][..],
        &["--by", "pawn_fen", "--top", "6"][..],
        &[
            "--by",
            "elo_band",
            "--where",
            "white_bishop_pair = 1 AND ply > 12",
        ][..],
        &["--report", "phalanx-by-ply"][..],
    ] {
        let one = stats(&db.path, &[args, &["--threads", "1"]].concat());
        assert!(one.status.success());
        for n in ["2", "3", "7", "64"] {
            let many = stats(&db.path, &[args, &["--threads", n]].concat());
            assert_eq!(one.stdout, many.stdout, "{args:?} --threads {n}");
        }
    }
}

/// `--top` over whole structures reads the candidates' runs through the index when they are
/// few, and scans every run again otherwise: both give the same rows.
#[test]
fn top_structures_by_index_or_by_full_scan_agree() {
    let db = fixture_db();
    for args in [
        &["--report", "top-structures"][..],
        &[
            "--by", "pawn_fen", "--top", "9", "--per", "game", "--ply", "4..",
        ][..],
        &[
            "--by",
            "white_pawns,black_pawns",
            "--top",
            "5",
            "--where",
            "phase = 'middlegame'",
        ][..],
    ] {
        let indexed = stats(&db.path, args);
        let scanned = stats_env(&db.path, args, &[("PAWNDEX_STATS_MAX_INDEXED", "0")]);
        assert!(
            indexed.status.success() && scanned.status.success(),
            "{args:?}"
        );
        assert!(!parse_csv(&indexed.stdout).rows.is_empty(), "{args:?}");
        assert_eq!(indexed.stdout, scanned.stdout, "{args:?}");
    }
}
