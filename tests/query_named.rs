//! Named queries: each returns exactly the positions that a naive check of its definition over
//! `ply_features` finds (nothing missing, nothing extra), in (game_id, ply) order; `--count`
//! agrees; the catalogue matches `queries/`; the files run unchanged in SQLite.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::query::{Db, Features, Side, on, on_file, pawndex_in, positions_of_csv, root_path};

type Check = fn(&Features) -> bool;

fn iqp(s: &Side) -> bool {
    on_file(s.pawns, 'd') && !on_file(s.pawns, 'c') && !on_file(s.pawns, 'e')
}

fn hanging(s: &Side, c: &str, d: &str) -> bool {
    on(s.pawns, c) && on(s.pawns, d) && !on_file(s.pawns, 'b') && !on_file(s.pawns, 'e')
}

fn all(s: &Side, squares: &[&str]) -> bool {
    squares.iter().all(|sq| on(s.pawns, sq))
}

/// The definition of every named query, from the issue, checked square by square.
fn definitions() -> BTreeMap<&'static str, Check> {
    let defs: [(&str, Check); 20] = [
        ("white-duo", |f| f.white.duo != 0),
        ("black-duo", |f| f.black.duo != 0),
        ("white-trio", |f| f.white.trio != 0),
        ("black-trio", |f| f.black.trio != 0),
        ("white-quart", |f| f.white.quart != 0),
        ("black-quart", |f| f.black.quart != 0),
        ("white-bishop-pair", |f| {
            f.white.bishop_pair && !f.black.bishop_pair
        }),
        ("black-bishop-pair", |f| {
            f.black.bishop_pair && !f.white.bishop_pair
        }),
        ("white-three-islands", |f| f.white.islands >= 3),
        ("black-three-islands", |f| f.black.islands >= 3),
        ("white-isolated-queen-pawn", |f| iqp(&f.white)),
        ("black-isolated-queen-pawn", |f| iqp(&f.black)),
        ("white-hanging-pawns", |f| hanging(&f.white, "c4", "d4")),
        ("black-hanging-pawns", |f| hanging(&f.black, "c5", "d5")),
        ("carlsbad", |f| {
            all(&f.white, &["d4", "e3"])
                && !on_file(f.white.pawns, 'c')
                && all(&f.black, &["c6", "d5"])
                && !on_file(f.black.pawns, 'e')
        }),
        ("reversed-carlsbad", |f| {
            all(&f.black, &["d5", "e6"])
                && !on_file(f.black.pawns, 'c')
                && all(&f.white, &["c3", "d4"])
                && !on_file(f.white.pawns, 'e')
        }),
        ("white-stonewall", |f| {
            all(&f.white, &["c3", "d4", "e3", "f4"])
        }),
        ("black-stonewall", |f| {
            all(&f.black, &["c6", "d5", "e6", "f5"])
        }),
        ("white-maroczy-bind", |f| {
            all(&f.white, &["c4", "e4"])
                && !on_file(f.white.pawns, 'd')
                && !on_file(f.black.pawns, 'c')
        }),
        ("black-maroczy-bind", |f| {
            all(&f.black, &["c5", "e5"])
                && !on_file(f.black.pawns, 'd')
                && !on_file(f.white.pawns, 'c')
        }),
    ];
    defs.into_iter().collect()
}

/// Names and descriptions of the feature patterns `pawndex query --list` prints (its first
/// section, under a line saying what they are).
fn listed(db: &Db) -> Vec<(String, String)> {
    db.run("query", &["--list"])
        .ok("--list")
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| {
            let l = l.trim_start();
            let (name, desc) = l.split_once(' ').unwrap();
            (name.to_string(), desc.trim().to_string())
        })
        .collect()
}

#[test]
fn every_named_query_returns_exactly_the_positions_of_its_definition() {
    let db = Db::fixtures_and_random_games();
    let features = db.ply_features();
    let defs = definitions();
    let names: Vec<String> = listed(&db).into_iter().map(|(n, _)| n).collect();
    for name in &names {
        if name == "exact-structure" {
            continue;
        }
        let check = defs
            .get(name.as_str())
            .unwrap_or_else(|| panic!("no reference definition for {name}"));
        let got = positions_of_csv(db.run("query", &[name, "--format", "csv"]).ok(name));
        let mut sorted = got.clone();
        sorted.sort_unstable();
        assert_eq!(got, sorted, "{name}: rows not ordered by (game_id, ply)");
        let got: BTreeSet<(i64, i64)> = got.into_iter().collect();
        let want: BTreeSet<(i64, i64)> = features
            .iter()
            .filter(|(_, f)| check(f))
            .map(|(&k, _)| k)
            .collect();
        assert!(
            !want.is_empty(),
            "{name}: the fixtures reach no such position"
        );
        let missing: Vec<_> = want.difference(&got).collect();
        let extra: Vec<_> = got.difference(&want).collect();
        assert!(missing.is_empty(), "{name}: missing {missing:?}");
        assert!(extra.is_empty(), "{name}: extra {extra:?}");
        // No duplicates either.
        assert_eq!(sorted.len(), want.len(), "{name}: duplicate rows");

        // With --limit the query may run with another plan (a lookup per run): same rows.
        let first = positions_of_csv(
            db.run("query", &[name, "--format", "csv", "--limit", "25"])
                .ok(name),
        );
        assert_eq!(first, sorted[..sorted.len().min(25)], "{name} --limit 25");

        let count = db.run("query", &[name, "--count"]);
        assert_eq!(
            count.ok(name).trim(),
            want.len().to_string(),
            "{name} --count"
        );
    }
    assert_eq!(
        names.len(),
        defs.len() + 1,
        "every definition has its query"
    );
}

#[test]
fn exact_structure_finds_every_position_with_those_pawns() {
    let db = Db::fixtures();
    let features = db.ply_features();
    // Structures from the standard start, a middlegame and an endgame, and one never reached.
    let picks = [(1, 0), (1, 20), (5, 80), (23, 12)];
    let mut cases: Vec<(u64, u64)> = picks
        .iter()
        .map(|k| {
            let f = features[k];
            (f.white.pawns, f.black.pawns)
        })
        .collect();
    cases.push((1 << 8, 1 << 48));
    for (white, black) in cases {
        let w = format!("white_pawns={}", white as i64);
        let b = format!("black_pawns={:#x}", black);
        let args = ["exact-structure", "--param", &w, "--param", &b];
        let mut csv = args.to_vec();
        csv.extend(["--format", "csv"]);
        let got = positions_of_csv(db.run("query", &csv).ok("exact-structure"));
        let want: Vec<(i64, i64)> = features
            .iter()
            .filter(|(_, f)| f.white.pawns == white && f.black.pawns == black)
            .map(|(&k, _)| k)
            .collect();
        assert_eq!(got, want, "{w} {b}");
        let mut count = args.to_vec();
        count.push("--count");
        assert_eq!(
            db.run("query", &count).ok("count").trim(),
            want.len().to_string()
        );
    }
}

#[test]
fn the_catalogue_is_the_queries_directory() {
    let db = Db::fixtures();
    let mut files: Vec<(String, String)> = std::fs::read_dir(root_path("queries"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_str().unwrap().to_string();
            let text = std::fs::read_to_string(&p).unwrap();
            let first = text.lines().next().unwrap().to_string();
            let desc = first
                .strip_prefix(&format!("-- {name}: "))
                .unwrap_or_else(|| panic!("{name}.sql must open with \"-- {name}: …\""))
                .to_string();
            (name, desc)
        })
        .collect();
    files.sort();
    let mut list = listed(&db);
    list.sort();
    assert_eq!(list, files);
    // The issue's minimum catalogue.
    for side in ["white", "black"] {
        for q in [
            "duo",
            "trio",
            "quart",
            "bishop-pair",
            "three-islands",
            "isolated-queen-pawn",
            "hanging-pawns",
        ] {
            let name = format!("{side}-{q}");
            assert!(list.iter().any(|(n, _)| *n == name), "{name} missing");
        }
    }
    for name in ["carlsbad", "reversed-carlsbad", "exact-structure"] {
        assert!(list.iter().any(|(n, _)| n == name), "{name} missing");
    }
}

#[test]
fn print_sql_is_the_file_and_the_file_runs_unchanged_in_sqlite() {
    let db = Db::fixtures();
    let conn = db.conn();
    for (name, _) in listed(&db) {
        let file = std::fs::read_to_string(root_path(&format!("queries/{name}.sql"))).unwrap();
        let printed = db.run("query", &[&name, "--print-sql"]);
        assert_eq!(printed.ok("--print-sql").trim_end(), file.trim_end());
        // The whole file, comments and final `;` included, is one statement SQLite accepts.
        let mut st = conn
            .prepare(&file)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut rows = if name == "exact-structure" {
            st.query(rusqlite::named_params! {":white_pawns": 0xFF00i64, ":black_pawns": 0x00FF_0000_0000_0000i64})
        } else {
            st.query([])
        }
        .unwrap();
        assert!(
            rows.next().unwrap().is_some(),
            "{name}: no rows from the file"
        );
    }
    // And in the sqlite3 shell, when it is installed.
    let shell = std::process::Command::new("sqlite3")
        .arg("--version")
        .output();
    if shell.is_err() {
        eprintln!("sqlite3 shell not found: skipping the shell check");
        return;
    }
    let file = root_path("queries/white-quart.sql");
    let out = std::process::Command::new("sqlite3")
        .args(["-readonly", "-csv", &db.arg()])
        .stdin(std::fs::File::open(&file).unwrap())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shell_rows = String::from_utf8(out.stdout).unwrap();
    let ours = db.run("query", &["white-quart", "--format", "csv"]);
    let ours: Vec<&str> = ours.ok("csv").lines().skip(1).collect();
    let shell_rows: Vec<&str> = shell_rows.lines().collect();
    assert_eq!(ours, shell_rows);
}

#[test]
fn named_queries_are_embedded_and_work_from_any_directory() {
    let db = Db::fixtures();
    let elsewhere = tempfile::tempdir().unwrap();
    let db_arg = db.arg();
    let out = pawndex_in(
        elsewhere.path(),
        &["query", "carlsbad", "--db", &db_arg, "--format", "csv"],
    );
    let rows = positions_of_csv(out.ok("query from another directory"));
    assert!(!rows.is_empty());
    // A .sql file is read from the given path.
    let file = common::query::write_file(
        elsewhere.path(),
        "mine.sql",
        "-- my query\nSELECT id AS game_id, 0 AS ply FROM games WHERE id <= 3 ORDER BY id;\n",
    );
    let out = pawndex_in(
        elsewhere.path(),
        &["query", "mine.sql", "--db", &db_arg, "--format", "csv"],
    );
    assert_eq!(positions_of_csv(out.ok("file")), [(1, 0), (2, 0), (3, 0)]);
    assert!(file.exists());
}

#[test]
fn limit_stops_after_n_rows() {
    let db = Db::fixtures();
    let all = positions_of_csv(db.run("query", &["white-duo", "--format", "csv"]).ok("all"));
    let some = positions_of_csv(
        db.run("query", &["white-duo", "--format", "csv", "--limit", "7"])
            .ok("limit"),
    );
    assert_eq!(some, all[..7]);
    let none = db.run("query", &["white-duo", "--format", "csv", "--limit", "0"]);
    assert_eq!(none.ok("limit 0").lines().count(), 1, "header only");
}

#[test]
fn params_bind_integers_hex_and_text() {
    let db = Db::fixtures();
    let out = db.run(
        "query",
        &[
            "--sql",
            "SELECT id AS game_id, white FROM games WHERE result = :result AND id >= :from ORDER BY id",
            "--param",
            "result=0-1",
            "--param",
            "from=0x0A",
            "--format",
            "csv",
        ],
    );
    let records = common::query::csv_records(out.ok("params"));
    let conn = db.conn();
    let want: Vec<i64> = conn
        .prepare("SELECT id FROM games WHERE result = '0-1' AND id >= 10 ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let got: Vec<i64> = records[1..].iter().map(|r| r[0].parse().unwrap()).collect();
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

/// Every named query keeps the plan that yields its first rows at once (runs in key order, no
/// sort, no automatic index) when the planner believes the database is as large as the masters
/// one: SQLite's own choice there once scanned `ply_numbers` first, built an index over 11M runs
/// and sorted every match (47 s for `white-bishop-pair --limit 100`).
#[test]
fn named_queries_keep_their_plan_on_large_statistics() {
    let db = Db::fixtures();
    let conn = rusqlite::Connection::open(&db.path).unwrap();
    conn.execute_batch(
        "DELETE FROM sqlite_stat1;
         INSERT INTO sqlite_stat1 VALUES
           ('games', NULL, '327605'), ('games', 'games_hash', '327605 1'),
           ('game_summary', NULL, '327605'), ('runs', 'runs', '11135950 33 1'),
           ('pawn_sets', NULL, '850828'), ('pawn_sets', 'pawn_sets_key', '850828 1 1'),
           ('set_totals', NULL, '850828'), ('set_games', 'set_games', '850828 1 1');
         ANALYZE sqlite_schema;",
    )
    .unwrap();
    drop(conn);
    let conn = rusqlite::Connection::open(&db.path).unwrap();
    let mut checked = 0;
    for entry in std::fs::read_dir(root_path("queries")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut st = conn
            .prepare(&format!(
                "EXPLAIN QUERY PLAN {}",
                text.trim().trim_end_matches(';')
            ))
            .unwrap();
        let zeros = vec![0i64; st.parameter_count()];
        let plan: Vec<String> = st
            .query_map(rusqlite::params_from_iter(zeros), |r| r.get::<_, String>(3))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for step in &plan {
            assert!(
                !step.contains("AUTOMATIC") && !step.contains("TEMP B-TREE FOR ORDER BY"),
                "{}: {plan:#?}",
                path.display()
            );
        }
        assert!(
            plan.iter()
                .any(|s| s.starts_with("SCAN r") || s.starts_with("SEARCH r")),
            "{}: {plan:#?}",
            path.display()
        );
        checked += 1;
    }
    assert!(checked >= 20);
}
