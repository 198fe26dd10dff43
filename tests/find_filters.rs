//! One rule for `find`'s filters: a filter given several values (repeated, or with values
//! separated by commas) matches any of them, and filters combine with AND; a condition no
//! position can meet is a usage error that names it (exit status 2), never a quiet empty
//! answer.

mod common;

use common::query::{Db, positions_of_csv, positions_of_sql};

/// (find arguments, the same filter as SQL over `ply_features AS f JOIN games AS g`).
fn several_values() -> Vec<(Vec<&'static str>, &'static str)> {
    vec![
        (
            vec!["--result", "1-0", "--result", "0-1"],
            "g.result IN ('1-0', '0-1')",
        ),
        (vec!["--result", "1-0,0-1"], "g.result IN ('1-0', '0-1')"),
        (
            // A value given twice counts once.
            vec!["--result", "1-0,1-0", "--result", "1/2-1/2"],
            "g.result IN ('1-0', '1/2-1/2')",
        ),
        (vec!["--eco", "D92,B0"], "g.eco IN ('D92', 'B04', 'B07')"),
        (
            vec!["--eco", "D92", "--eco", "A00-B0"],
            "(g.eco = 'D92' OR g.eco < 'B1')",
        ),
        (
            vec!["--player", "Kasparov", "--player", "Morphy"],
            "(lower(g.white) LIKE '%kasparov%' OR lower(g.black) LIKE '%kasparov%' \
             OR lower(g.white) LIKE '%morphy%' OR lower(g.black) LIKE '%morphy%')",
        ),
        (
            // A comma is part of a name (PGN writes "Surname, Forename").
            vec!["--white-player", "Kasparov, Garry"],
            "g.white = 'Kasparov, Garry'",
        ),
        (
            vec![
                "--white-player",
                "Kasparov",
                "--black-player",
                "Karpov",
                "--black-player",
                "Topalov",
            ],
            "lower(g.white) LIKE '%kasparov%' \
             AND (lower(g.black) LIKE '%karpov%' OR lower(g.black) LIKE '%topalov%')",
        ),
        (
            vec!["--date", "1858,1997.."],
            "(g.date LIKE '1858%' OR g.date >= '1997')",
        ),
        (
            vec!["--result", "1-0,0-1", "--white", "duo", "--ply", "10..40"],
            "g.result IN ('1-0', '0-1') AND f.white_duo != 0 AND f.ply BETWEEN 10 AND 40",
        ),
    ]
}

#[test]
fn a_filter_with_several_values_matches_any_of_them() {
    let db = Db::fixtures();
    let conn = db.conn();
    for (args, filter) in several_values() {
        let want = positions_of_sql(
            &conn,
            &format!(
                "SELECT f.game_id, f.ply FROM ply_features AS f JOIN games AS g ON g.id = f.game_id
                 WHERE {filter} ORDER BY f.game_id, f.ply"
            ),
        );
        assert!(
            !want.is_empty(),
            "{args:?}: the fixtures have no such position"
        );
        for plan in ["scan", "lists"] {
            let env = [("PAWNDEX_PLAN", plan)];
            let mut rows = args.clone();
            rows.extend(["--format", "csv"]);
            let got = db.run_env("find", &rows, &env);
            let got = positions_of_csv(got.ok(&format!("find {rows:?}")));
            assert_eq!(got, want, "PAWNDEX_PLAN={plan} find {args:?}");
            let mut count = args.clone();
            count.push("--count");
            let n = db.run_env("find", &count, &env);
            assert_eq!(
                n.ok(&format!("find {count:?}")).trim(),
                want.len().to_string(),
                "PAWNDEX_PLAN={plan} find {count:?}"
            );
        }
        // The values stay parameters of the SQL.
        let mut print = args.clone();
        print.push("--print-sql");
        let sql = db.run("find", &print);
        let sql = sql.ok(&format!("find {print:?}"));
        for quoted in ["'1-0'", "'Kasparov", "'D92'"] {
            assert!(
                !sql.lines()
                    .any(|l| !l.starts_with("--") && l.contains(quoted)),
                "find {print:?}: a value is in the SQL text\n{sql}"
            );
        }
    }
}

#[test]
fn impossible_conditions_are_refused_by_name() {
    let db = Db::fixtures();
    // (arguments, what the message must hold)
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["--white", "islands:5..3"],
            &["--white islands:5..3", "empty"],
        ),
        (
            &["--black", "dispersion:9..2"],
            &["--black dispersion:9..2", "empty"],
        ),
        (
            &["--white", "islands:5.."],
            &["--white islands:5..", "between 0 and 4"],
        ),
        (&["--black", "islands<0"], &["--black islands<0"]),
        (&["--white", "distortion>99"], &["--white distortion>99"]),
        (
            &["--white", "islands>=3", "--white", "islands:..2"],
            &["--white islands>=3 --white islands:..2"],
        ),
        (
            &["--white", "islands=2", "--white", "islands!=2"],
            &["islands=2", "islands!=2"],
        ),
        (
            &["--pawns", "wd4 bd4"],
            &["--pawns", "d4", "White and for Black"],
        ),
        (&["--pawns", "wd4", "--pawns", "bd4"], &["--pawns", "d4"]),
        (&["--pawns", "we8"], &["--pawns", "we8", "e8"]),
        (&["--pawns", "ba1"], &["--pawns", "ba1", "a1"]),
        (
            &["--pawns", "wa2 wb2 wc2 wd2 we2 wf2 wg2 wh2 wa3"],
            &["--pawns", "at most 8"],
        ),
        (
            &["--structure", "8/8/8/8/3P4/8/8/8", "--pawns", "we4"],
            &["--structure", "--pawns", "e4"],
        ),
        (
            &["--structure", "8/8/8/8/3P4/8/8/8", "--no-pawns", "wd"],
            &["--structure", "--no-pawns", "d4"],
        ),
        (
            &["--pawns", "wd4", "--no-pawns", "wd"],
            &["--pawns", "--no-pawns"],
        ),
        (&["--ply", "20..10"], &["--ply 20..10"]),
        (
            &["--date", "2020..2019.06"],
            &["--date 2020..2019.06", "empty"],
        ),
        (
            &["--date", "2019.07..2019.06.15"],
            &["--date 2019.07..2019.06.15"],
        ),
        (&["--eco", "D-B"], &["--eco D-B", "empty"]),
        // Impossible dates and ratings (were a silent 0).
        (&["--date", "2020-13"], &["--date 2020-13", "no month 13"]),
        (&["--date", "2020.00"], &["--date 2020.00", "no month 00"]),
        (
            &["--date", "2020.02.30.."],
            &["--date 2020.02.30..", "days 01 to 29, not 30"],
        ),
        (&["--date", "2019.02.29"], &["days 01 to 28"]),
        (&["--date", "2020.13.45"], &["no month 13"]),
        (&["--min-elo", "99999"], &["--min-elo 99999", "0 to 4000"]),
        (&["--min-elo=-1"], &["--min-elo -1", "0 to 4000"]),
    ];
    for (args, holds) in cases {
        for extra in [&["--count"][..], &["--format", "csv"][..]] {
            let mut all = args.to_vec();
            all.extend_from_slice(extra);
            let out = db.run("find", &all);
            out.expect(2, &format!("find {all:?}"));
            assert!(out.stdout.is_empty(), "find {all:?}: {}", out.stdout);
            for h in *holds {
                assert!(
                    out.stderr.contains(h),
                    "find {all:?}: {h:?} missing from\n{}",
                    out.stderr
                );
            }
        }
    }
    // Conditions that can hold stay accepted.
    for args in [
        &["--white", "islands:4"][..],
        &["--white", "islands:0..4", "--white", "islands!=2"],
        &["--pawns", "wd4 bd5"],
        &["--date", "2019.07..2019"],
        &["--no-pawns", "wd8"],
        &["--date", "2020.02.29"],
        &["--date", "2000.02.29..2000.12.31"],
        &["--min-elo", "4000"],
    ] {
        let mut all = args.to_vec();
        all.push("--count");
        db.run("find", &all).ok(&format!("find {all:?}"));
    }
}

/// FEN errors point at the fault, in `find --structure` and `similar --structure` alike: the
/// rank and character of a bad board, a pawn on rank 1 or 8 by its square, and a FEN the shell
/// split at its spaces gets a tip to quote it.
#[test]
fn fen_errors_point_at_the_fault() {
    let db = Db::fixtures();
    let cases: &[(&str, &[&str])] = &[
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNx w KQkq - 0 1",
            &["rank 1", "'x'", "character 8"],
        ),
        ("8/8/8/8/8/8/8/8x", &["rank 1", "'x'"]),
        ("8/8/8/8/8/8/8/8/", &["ends with a /"]),
        ("8/8/8/8/3P4/8/8/8/ w - - 0 1", &["ends with a /"]),
        ("8/8/8/8/8/8/8", &["7 ranks"]),
        ("8/8/8/8/8/9/8/8", &["rank 3", "'9'"]),
        ("8/8/8/8/8/8/8/7", &["rank 1", "7 squares"]),
        ("8/8/8/8/8/8/8/8 x", &["turn"]),
        ("4P3/8/8/8/8/8/8/8", &["e8", "rank 1 or 8"]),
        ("8/8/8/8/3P4/8/8/2p5 w - - 0 1", &["c1", "rank 1 or 8"]),
        ("8/8/8/8/8/PPPPPPPP/P7/8", &["9 White pawns", "at most 8"]),
    ];
    for (fen, holds) in cases {
        for command in ["find", "similar"] {
            let out = db.run(command, &["--structure", fen]);
            out.expect(2, &format!("{command} --structure {fen:?}"));
            for h in *holds {
                assert!(
                    out.stderr.contains(h),
                    "{command} {fen:?}: {h:?} missing from\n{}",
                    out.stderr
                );
            }
        }
    }
    // Unquoted: the shell makes the FEN's fields arguments of their own.
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    for command in ["find", "similar"] {
        let mut args = vec!["--structure"];
        args.extend(start.split(' '));
        let out = db.run(command, &args);
        out.expect(2, &format!("{command} unquoted FEN"));
        assert!(
            out.stderr.contains("quote it") && out.stderr.contains(&format!("\"{start}\"")),
            "{command}: {}",
            out.stderr
        );
    }
    // Other unexpected arguments get no such tip.
    let out = db.run("find", &["--count", "extra"]);
    out.expect(2, "find extra");
    assert!(!out.stderr.contains("FEN"), "{}", out.stderr);
}

/// One filter given many values (here 1,000, a 12 KB URL in the server) is refused by name with
/// exit status 2, instead of an SQL expression deeper than SQLite takes ("SQL error", exit 1);
/// the most it takes still runs.
#[test]
fn a_filter_takes_at_most_100_values() {
    let db = Db::fixtures();
    for flag in [
        "--player", "--white", "--result", "--eco", "--date", "--event",
    ] {
        let value = match flag {
            "--white" => "quart",
            "--result" => "1-0",
            "--eco" => "B2",
            "--date" => "1990..",
            _ => "kasparov",
        };
        let mut args = vec!["--count"];
        for _ in 0..1000 {
            args.extend([flag, value]);
        }
        let out = db.run("find", &args);
        out.expect(2, &format!("find {flag} ×1000"));
        assert!(
            out.stderr.contains(&format!(
                "{flag}: 1000 values given; one filter takes at most 100"
            )),
            "{flag}: {}",
            out.stderr
        );
        let ok: Vec<&str> = args[..1 + 2 * 100].to_vec();
        db.run("find", &ok).ok(&format!("find {flag} ×100"));
    }
    // `stats` takes the same rule for a rating.
    let out = db.run("stats", &["--by", "phase", "--min-elo", "99999"]);
    out.expect(2, "stats --min-elo 99999");
    assert!(
        out.stderr.contains("--min-elo 99999: not a rating"),
        "{}",
        out.stderr
    );
    // Names with commas count as one value each.
    let mut args = vec!["--count"];
    for _ in 0..100 {
        args.extend(["--player", "Kasparov, Garry"]);
    }
    db.run("find", &args)
        .ok("find --player \"Kasparov, Garry\" ×100");
}
