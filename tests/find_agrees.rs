//! `pawndex find` agrees with the equivalent SQL over `ply_features` (per position and per
//! game, rows and counts), and its `--print-sql` output is the query it runs.

mod common;

use common::query::{Db, positions_of_csv, positions_of_sql, write_file};

/// (find arguments, the same filter as SQL over `ply_features AS f JOIN games AS g`).
fn cases() -> Vec<(Vec<&'static str>, &'static str)> {
    vec![
        (vec![], "1"),
        (vec!["--white", "quart"], "f.white_quart != 0"),
        (vec!["--black", "trio"], "f.black_trio != 0"),
        (
            vec!["--white", "duo", "--black", "islands>=2"],
            "f.white_duo != 0 AND f.black_islands >= 2",
        ),
        (vec!["--white", "islands=2"], "f.white_islands = 2"),
        (vec!["--black", "islands<2"], "f.black_islands < 2"),
        (vec!["--white", "dispersion>=5"], "f.white_dispersion >= 5"),
        (
            vec!["--black", "distortion>=12"],
            "f.black_distortion >= 12",
        ),
        (
            vec!["--white", "distortion!=0", "--white", "islands<=1"],
            "f.white_distortion != 0 AND f.white_islands <= 1",
        ),
        (
            vec!["--white", "bishop-pair", "--black", "no-bishop-pair"],
            "f.white_bishop_pair = 1 AND f.black_bishop_pair = 0",
        ),
        (
            vec!["--pawns", "wd4 be5"],
            "(f.white_pawns & (1 << 27)) != 0 AND (f.black_pawns & (1 << 36)) != 0",
        ),
        (
            vec!["--pawns", "wd4,we3", "--pawns", "bd5"],
            "(f.white_pawns & (1 << 27)) != 0 AND (f.white_pawns & (1 << 20)) != 0 \
             AND (f.black_pawns & (1 << 35)) != 0",
        ),
        (
            vec!["--no-pawns", "wc be"],
            "(f.white_pawns & 0x0404040404040404) = 0 AND (f.black_pawns & 0x1010101010101010) = 0",
        ),
        (
            vec!["--no-pawns", "we4 bh"],
            "(f.white_pawns & (1 << 28)) = 0 AND (f.black_pawns & 0x8080808080808080) = 0",
        ),
        (
            // The pawns after 1. e4 e5 (any pieces).
            vec![
                "--structure",
                "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
            ],
            "f.white_pawns = 0x1000EF00 AND f.black_pawns = 0xEF001000000000",
        ),
        (
            vec!["--structure", "8/pp3ppp/8/8/8/8/PP3PPP/8"],
            "f.white_pawns = 0xE300 AND f.black_pawns = 0xE3000000000000",
        ),
        (vec!["--ply", "10..20"], "f.ply BETWEEN 10 AND 20"),
        (
            vec!["--ply", "30..", "--white", "trio"],
            "f.ply >= 30 AND f.white_trio != 0",
        ),
        (vec!["--ply", "..4"], "f.ply <= 4"),
        (vec!["--ply", "7"], "f.ply = 7"),
        (vec!["--result", "1-0"], "g.result = '1-0'"),
        (
            vec!["--result", "1/2-1/2", "--black", "duo"],
            "g.result = '1/2-1/2' AND f.black_duo != 0",
        ),
        (vec!["--result", "*"], "g.result = '*'"),
        (
            vec!["--min-elo", "2600"],
            "g.white_elo >= 2600 AND g.black_elo >= 2600",
        ),
        (
            vec!["--player", "kasparov"],
            "(lower(g.white) LIKE '%kasparov%' OR lower(g.black) LIKE '%kasparov%')",
        ),
        (
            vec!["--player", "\"White\" \\"],
            "(instr(g.white, '\"White\" \\') > 0 OR instr(g.black, '\"White\" \\') > 0)",
        ),
        (vec!["--player", "50%"], "0"),
        (
            vec![
                "--player",
                "Fischer",
                "--white",
                "islands>=2",
                "--ply",
                "20..60",
                "--result",
                "0-1",
            ],
            "(g.white LIKE '%Fischer%' OR g.black LIKE '%Fischer%') AND f.white_islands >= 2 \
             AND f.ply BETWEEN 20 AND 60 AND g.result = '0-1'",
        ),
        // Game filters (written here without the GLOB and substr of pawndex's SQL).
        (
            vec!["--white-player", "kasparov"],
            "lower(g.white) LIKE '%kasparov%'",
        ),
        (
            vec!["--black-player", "Kasparov"],
            "lower(g.black) LIKE '%kasparov%'",
        ),
        (
            vec!["--event", "world championship"],
            "lower(g.event) LIKE '%world championship%'",
        ),
        (vec!["--site", "NED"], "instr(g.site, 'NED') > 0"),
        (vec!["--eco", "B"], "g.eco LIKE 'B%'"),
        (vec!["--eco", "b0"], "g.eco IN ('B04', 'B07')"),
        (vec!["--eco", "D92"], "g.eco = 'D92'"),
        (vec!["--eco", "A00-C3"], "g.eco >= 'A' AND g.eco <= 'C39'"),
        (vec!["--eco", "C41-D"], "g.eco >= 'C41' AND g.eco < 'E'"),
        (
            vec!["--date", "1950.."],
            "g.date IS NOT NULL AND CAST(substr(g.date, 1, 4) AS INTEGER) >= 1950",
        ),
        (
            // 1851.06.21 and 1852.??.?? are surely in, 1858.??.?? surely not.
            vec!["--date", "1851.06..1852"],
            "g.date IN ('1851.06.21', '1852.??.??')",
        ),
        (
            // 1851.06.21 is in; 1852.??.?? might be after March: left out.
            vec!["--date", "1851.06.21..1852.03"],
            "g.date IN ('1851.06.21')",
        ),
        (
            // 1852.??.?? might be before July: left out.
            vec!["--date", "1852.07.."],
            "g.date IS NOT NULL AND g.date >= '1853'",
        ),
        (vec!["--date", "1858"], "g.date LIKE '1858%'"),
        (
            // 1910.??.?? is surely on or before 1910-12-31; 1912.10.29 is not.
            vec!["--date", "..1910-12-31"],
            "g.date GLOB '1[0-9]*' AND g.date < '1911'",
        ),
        (
            vec!["--eco", "B", "--date", "1990..", "--white", "islands:2.."],
            "g.eco LIKE 'B%' AND g.date >= '1990' AND g.date NOT LIKE '?%' \
             AND f.white_islands >= 2",
        ),
    ]
}

fn run_find(db: &Db, args: &[&str], extra: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend_from_slice(extra);
    db.run("find", &all)
        .ok(&format!("find {all:?}"))
        .to_string()
}

#[test]
fn find_agrees_with_the_equivalent_sql_per_position() {
    let db = Db::fixtures();
    let conn = db.conn();
    let mut nonempty = 0;
    for (args, filter) in cases() {
        let want = positions_of_sql(
            &conn,
            &format!(
                "SELECT f.game_id, f.ply FROM ply_features AS f JOIN games AS g ON g.id = f.game_id
                 WHERE {filter} ORDER BY f.game_id, f.ply"
            ),
        );
        let got = positions_of_csv(&run_find(&db, &args, &["--format", "csv"]));
        assert_eq!(got, want, "find {args:?}");
        let count = run_find(&db, &args, &["--count"]);
        assert_eq!(
            count.trim(),
            want.len().to_string(),
            "find {args:?} --count"
        );
        // Both ways of reading the runs (the choice depends on sizes the fixtures do not have).
        for plan in ["scan", "lists"] {
            let mut all = args.clone();
            all.push("--format");
            all.push("csv");
            let rows = db
                .run_env("find", &all, &[("PAWNDEX_PLAN", plan)])
                .ok(&format!("PAWNDEX_PLAN={plan} find {all:?}"))
                .to_string();
            assert_eq!(
                positions_of_csv(&rows),
                want,
                "PAWNDEX_PLAN={plan} find {args:?}"
            );
            let mut all = args.clone();
            all.push("--count");
            let count = db
                .run_env("find", &all, &[("PAWNDEX_PLAN", plan)])
                .ok(&format!("PAWNDEX_PLAN={plan} find {all:?}"))
                .to_string();
            assert_eq!(
                count.trim(),
                want.len().to_string(),
                "PAWNDEX_PLAN={plan} find {all:?}"
            );
        }
        nonempty += usize::from(!want.is_empty());
    }
    assert!(nonempty >= cases().len() - 2, "most cases match something");
}

#[test]
fn find_agrees_with_the_equivalent_sql_per_game() {
    let db = Db::fixtures();
    let conn = db.conn();
    for (args, filter) in cases() {
        let want = positions_of_sql(
            &conn,
            &format!(
                "SELECT f.game_id, min(f.ply) FROM ply_features AS f JOIN games AS g ON g.id = f.game_id
                 WHERE {filter} GROUP BY f.game_id ORDER BY f.game_id"
            ),
        );
        let got = positions_of_csv(&run_find(&db, &args, &["--per", "game", "--format", "csv"]));
        assert_eq!(got, want, "find {args:?} --per game");
        let count = run_find(&db, &args, &["--per", "game", "--count"]);
        assert_eq!(count.trim(), want.len().to_string(), "--per game --count");
    }
}

#[test]
fn find_rows_carry_the_game() {
    let db = Db::fixtures();
    let text = run_find(
        &db,
        &["--white", "quart", "--limit", "3"],
        &["--format", "csv"],
    );
    let records = common::query::csv_records(&text);
    assert_eq!(
        records[0],
        ["game_id", "ply", "white", "black", "result", "date"]
    );
    assert_eq!(records.len(), 4);
    assert_eq!(
        records[1],
        [
            "1",
            "0",
            "Morphy, Paul",
            "Duke Karl / Count Isouard",
            "1-0",
            "1858.??.??"
        ]
    );
}

#[test]
fn print_sql_is_what_find_runs() {
    let db = Db::fixtures();
    for (args, _) in cases() {
        let printed = run_find(&db, &args, &["--print-sql"]);
        let file = write_file(db.dir.path(), "find.sql", &printed);
        // Parameters are listed as `--   :name = value` comment lines.
        let mut query_args = vec![
            "query".to_string(),
            file.display().to_string(),
            "--db".to_string(),
            db.arg(),
            "--format".to_string(),
            "csv".to_string(),
        ];
        for line in printed.lines() {
            if let Some(rest) = line.strip_prefix("--   :") {
                let (name, value) = rest.split_once(" = ").unwrap();
                let value = value
                    .strip_prefix('\'')
                    .and_then(|v| v.strip_suffix('\''))
                    .map_or(value.to_string(), |v| v.replace("''", "'"));
                query_args.push("--param".to_string());
                query_args.push(format!("{name}={value}"));
            }
        }
        let query_args: Vec<&str> = query_args.iter().map(String::as_str).collect();
        let via_query = common::query::pawndex(&query_args);
        let direct = run_find(&db, &args, &["--format", "csv"]);
        assert_eq!(via_query.ok("query FILE"), direct, "find {args:?}");
        // Values are parameters, never spliced into the SQL.
        let sql_lines = printed.lines().filter(|l| !l.starts_with("--"));
        for line in sql_lines {
            assert!(
                !line.contains("asparov") && !line.contains("Fischer"),
                "{line}"
            );
        }
    }
}

#[test]
fn find_exports_pgn_and_fen() {
    let db = Db::fixtures();
    let positions = positions_of_csv(&run_find(
        &db,
        &["--black", "quart", "--ply", "5"],
        &["--format", "csv"],
    ));
    let fens = run_find(
        &db,
        &["--black", "quart", "--ply", "5"],
        &["--format", "fen"],
    );
    let games = common::query::fixture_games();
    let lines: Vec<String> = positions
        .iter()
        .map(|&(g, p)| format!("{g}\t{p}\t{}", games[g as usize - 1].fens()[p as usize]))
        .collect();
    assert!(!lines.is_empty());
    assert_eq!(fens.lines().collect::<Vec<_>>(), lines);
    let pgn = run_find(
        &db,
        &["--black", "quart", "--ply", "5"],
        &["--format", "pgn"],
    );
    assert_eq!(common::query::read_pgn(&pgn).len(), positions.len());
}
