//! `pawndex stats --by structure` (one value per form of a named structure, and `none`), alone,
//! with a second column and with filters, against plain SQL `GROUP BY` over `ply_features`.
//!
//! The tests bring their own small catalogue (PAWNDEX_STRUCTURES), so they do not depend on the
//! definitions in `structures/`.

mod common;

use common::structures::{CARLSBAD, ISOLANI, index_classified, write_catalogue};

use std::path::{Path, PathBuf};

use common::stats::parse_csv;
use rusqlite::Connection;

/// The test catalogue: (key, file text).
const CATALOGUE: &[(&str, &str)] = &[
    ("carlsbad", CARLSBAD),
    ("isolani", ISOLANI),
    (
        "open-centre",
        r#"name = "Open centre"
family = "Miscellaneous"
description = "No d- or e-pawns at all."
source = "test catalogue"
reversed = false
[white]
none = ["d", "e"]
[black]
none = ["d", "e"]
"#,
    ),
];

/// A database of the fixtures and 300 random games classified with the test catalogue (in a
/// temp dir that lives as long as the first value).
fn database() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let catalogue = write_catalogue(dir.path(), CATALOGUE);
    let path = index_classified(dir.path(), &catalogue, 0x0ddb_a11f, 300, "stats.db");
    (dir, path)
}

/// `pawndex stats --db DB ARGS`: (exit code, stdout, stderr).
fn stats(db: &Path, args: &[&str]) -> (i32, Vec<u8>, String) {
    stats_plan(db, args, None)
}

/// [`stats`] with `PAWNDEX_PLAN` set to `plan` (`scan`: read the runs, never the changes).
fn stats_plan(db: &Path, args: &[&str], plan: Option<&str>) -> (i32, Vec<u8>, String) {
    let db = db.display().to_string();
    let mut all = vec!["stats", "--db", db.as_str()];
    all.extend_from_slice(args);
    let mut cmd = std::process::Command::new(common::BIN);
    cmd.args(&all);
    if let Some(plan) = plan {
        cmd.env("PAWNDEX_PLAN", plan);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{all:?}: {stderr}");
    (out.status.code().unwrap_or(-1), out.stdout, stderr)
}

/// The `--by structure` value of a row of `ply_features AS f`, in SQL.
const LABEL: &str = "CASE WHEN f.structure IS NULL THEN 'none' \
                     WHEN f.structure_reversed = 1 THEN f.structure || '~' ELSE f.structure END";

/// Rows of (keys..., positions or -, games, white wins, draws, black wins) from SQL over
/// `ply_features AS f JOIN games AS g`, grouped by the SQL expressions `keys`.
fn want(conn: &Connection, keys: &[&str], filter: &str, per_game: bool) -> Vec<Vec<String>> {
    let n = keys.len();
    let key_list: Vec<String> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| format!("{k} AS k{i}"))
        .collect();
    let names: Vec<String> = (0..n).map(|i| format!("k{i}")).collect();
    let names = names.join(", ");
    let sql = if per_game {
        format!(
            "SELECT {names}, '-', count(*), sum(g.result = '1-0'), sum(g.result = '1/2-1/2'),
                    sum(g.result = '0-1')
             FROM (SELECT DISTINCT f.game_id, {} FROM ply_features AS f
                   JOIN games AS g ON g.id = f.game_id WHERE {filter}) AS d
             JOIN games AS g ON g.id = d.game_id
             GROUP BY {names} ORDER BY {names}",
            key_list.join(", ")
        )
    } else {
        format!(
            "SELECT {}, count(*), count(DISTINCT f.game_id), sum(g.result = '1-0'),
                    sum(g.result = '1/2-1/2'), sum(g.result = '0-1')
             FROM ply_features AS f JOIN games AS g ON g.id = f.game_id
             WHERE {filter}
             GROUP BY {names} ORDER BY {names}",
            key_list.join(", ")
        )
    };
    let mut st = conn.prepare(&sql).unwrap();
    st.query_map([], |r| {
        (0..n + 5)
            .map(|i| {
                Ok(match r.get_ref(i)? {
                    rusqlite::types::ValueRef::Integer(v) => v.to_string(),
                    rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                    rusqlite::types::ValueRef::Null => String::new(),
                    other => format!("{other:?}"),
                })
            })
            .collect::<Result<Vec<_>, _>>()
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

/// Runs `stats ARGS --per UNIT` (from the structure changes when it can, and from the runs)
/// and compares its first `keys + 5` columns with [`want`] (positions are not compared per
/// game: the SQL above counts games there).
fn check(db: &Path, args: &[&str], keys: &[&str], filter: &str) -> Vec<Vec<String>> {
    let conn = Connection::open(db).unwrap();
    let n = keys.len();
    let mut last = Vec::new();
    for (per_game, plan) in [
        (false, None),
        (true, None),
        (false, Some("scan")),
        (true, Some("scan")),
    ] {
        let mut all = args.to_vec();
        all.extend(["--per", if per_game { "game" } else { "position" }]);
        let (code, stdout, stderr) = stats_plan(db, &all, plan);
        assert_eq!(code, 0, "stats {all:?} (plan {plan:?}): {stderr}");
        let csv = parse_csv(&stdout);
        let mut got: Vec<Vec<String>> = csv.rows.iter().map(|r| r[..n + 5].to_vec()).collect();
        if per_game {
            for r in &mut got {
                r[n] = "-".into();
            }
        }
        let want = want(&conn, keys, filter, per_game);
        assert!(!want.is_empty(), "stats {all:?}: the SQL matches nothing");
        assert_eq!(got, want, "stats {all:?} (plan {plan:?})");
        last = csv.rows;
    }
    last
}

#[test]
fn by_structure_matches_sql_group_by() {
    let (_dir, db) = database();
    let rows = check(&db, &["--by", "structure"], &[LABEL], "1");
    let labels: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    // Every form the fixtures reach is a category of its own, and `none` is one.
    for form in [
        "carlsbad",
        "carlsbad~",
        "isolani",
        "isolani~",
        "open-centre",
        "none",
    ] {
        assert!(labels.contains(&form), "{form} missing from {labels:?}");
    }
    // The positions add up to every position.
    let conn = Connection::open(&db).unwrap();
    let total: u64 = conn
        .query_row("SELECT count(*) FROM ply_features", [], |r| r.get(0))
        .unwrap();
    let (_, stdout, _) = stats(&db, &["--by", "structure"]);
    let sum: u64 = parse_csv(&stdout)
        .rows
        .iter()
        .map(|r| r[1].parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, total);
    check(
        &db,
        &["--by", "structure_reversed"],
        &["f.structure_reversed"],
        "1",
    );
}

#[test]
fn two_way_tables_with_structure() {
    let (_dir, db) = database();
    check(
        &db,
        &["--by", "structure,white_islands"],
        &[LABEL, "f.white_islands"],
        "1",
    );
    check(
        &db,
        &["--by", "black_bishop_pair,structure"],
        &["f.black_bishop_pair", LABEL],
        "1",
    );
    // With a game column: still from the changes.
    check(
        &db,
        &["--by", "elo_band,structure"],
        &[
            "CASE WHEN g.white_elo IS NULL OR g.black_elo IS NULL THEN NULL \
             ELSE (g.white_elo + g.black_elo) / 200 * 100 END",
            LABEL,
        ],
        "1",
    );
    check(
        &db,
        &["--by", "structure,ply_bucket"],
        &[LABEL, "f.ply / 10 * 10"],
        "1",
    );
}

#[test]
fn structure_with_filters() {
    let (_dir, db) = database();
    check(
        &db,
        &["--by", "structure", "--where", "white_islands >= 2"],
        &[LABEL],
        "f.white_islands >= 2",
    );
    check(
        &db,
        &["--by", "structure", "--ply", "10..40"],
        &[LABEL],
        "f.ply BETWEEN 10 AND 40",
    );
    check(
        &db,
        &["--by", "structure", "--min-elo", "2300"],
        &[LABEL],
        "g.white_elo >= 2300 AND g.black_elo >= 2300",
    );
    check(
        &db,
        &["--by", "structure", "--where", "result = '1-0'"],
        &[LABEL],
        "g.result = '1-0'",
    );
    // `structure` inside --where is the ply_features column (key or NULL).
    check(
        &db,
        &["--by", "white_islands", "--where", "structure = 'isolani'"],
        &["f.white_islands"],
        "f.structure = 'isolani'",
    );
    check(
        &db,
        &[
            "--by",
            "structure",
            "--where",
            "structure IS NOT NULL AND structure_reversed = 1 AND black_islands <= 2",
        ],
        &[LABEL],
        "f.structure IS NOT NULL AND f.structure_reversed = 1 AND f.black_islands <= 2",
    );
}

#[test]
fn structure_charts_and_top() {
    let (dir, db) = database();
    let svg = dir.path().join("structures.svg");
    let (code, _, stderr) = stats(
        &db,
        &["--by", "structure", "--chart", svg.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("carlsbad~"), "the chart names the forms");
    let (code, stdout, stderr) = stats(&db, &["--by", "structure", "--top", "2"]);
    assert_eq!(code, 0, "{stderr}");
    let rows = parse_csv(&stdout).rows;
    assert_eq!(rows.len(), 2);
    // `none` holds most positions of random games.
    assert_eq!(rows[0][0], "none");
}
