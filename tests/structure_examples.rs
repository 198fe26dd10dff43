//! The structure catalogue against real master games: `tests/fixtures/structure_examples.pgn`
//! holds real games (tags as in the masters corpus) each with a `PawndexStructures` tag listing
//! positions by ply:
//!
//! - `key@ply`: at that ply the position is the named structure `key` in its normal form
//!   (`structure = 'key'`, `structure_reversed = 0`);
//! - `key~@ply`: … in its colour-reversed form (`structure_reversed = 1`);
//! - `!key@ply`: a near miss, a real position that fails `key` by exactly one condition (the
//!   `PawndexNearMiss` tag says which): its structure must not be `key` in either form.
//!
//! The fixture is indexed with the real binary; every tagged ply is checked in `ply_features`.
//! Every key of `structures/*.toml` must have at least two matches (either form) and one near
//! miss in the fixture, so a new structure without examples fails here.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use rusqlite::types::Value;

const FIXTURE: &str = "tests/fixtures/structure_examples.pgn";

/// One expectation from a `PawndexStructures` tag.
#[derive(Debug)]
struct Expect {
    key: String,
    reversed: bool,
    near_miss: bool,
    ply: i64,
}

/// One fixture game: its White and Black tags (to line it up with `games`) and expectations.
#[derive(Debug)]
struct FixtureGame {
    white: String,
    black: String,
    expects: Vec<Expect>,
}

fn tag_value<'a>(line: &'a str, tag: &str) -> Option<&'a str> {
    let rest = line
        .strip_prefix('[')?
        .strip_prefix(tag)?
        .strip_prefix(" \"")?;
    rest.strip_suffix("\"]")
}

fn parse_expect(item: &str) -> Expect {
    let (near_miss, item) = match item.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, item),
    };
    let (key, ply) = item
        .split_once('@')
        .unwrap_or_else(|| panic!("{item:?}: expected key@ply"));
    let (key, reversed) = match key.strip_suffix('~') {
        Some(k) => (k, true),
        None => (key, false),
    };
    assert!(
        !(near_miss && reversed),
        "{item:?}: a near miss names the structure, not a form"
    );
    Expect {
        key: key.to_string(),
        reversed,
        near_miss,
        ply: ply.parse().unwrap_or_else(|_| panic!("{item:?}: bad ply")),
    }
}

fn fixture_games() -> Vec<FixtureGame> {
    let text = std::fs::read_to_string(root_path(FIXTURE)).expect("read fixture");
    let mut games: Vec<FixtureGame> = Vec::new();
    for line in text.lines() {
        if line.starts_with("[Event ") {
            games.push(FixtureGame {
                white: String::new(),
                black: String::new(),
                expects: Vec::new(),
            });
        }
        let Some(game) = games.last_mut() else {
            continue;
        };
        if let Some(v) = tag_value(line, "White") {
            game.white = v.to_string();
        } else if let Some(v) = tag_value(line, "Black") {
            game.black = v.to_string();
        } else if let Some(v) = tag_value(line, "PawndexStructures") {
            game.expects.extend(v.split_whitespace().map(parse_expect));
        }
    }
    games
}

/// The catalogue keys: the file stems of `structures/*.toml`.
fn catalogue_keys() -> Vec<String> {
    let mut keys: Vec<String> = std::fs::read_dir(root_path("structures"))
        .expect("structures/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    keys.sort();
    keys
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::Text(s) => Some(s.clone()),
        other => panic!("expected TEXT or NULL, got {other:?}"),
    }
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Integer(i) => *i,
        other => panic!("expected INTEGER, got {other:?}"),
    }
}

#[test]
fn every_tagged_position_has_its_structure() {
    let games = fixture_games();
    assert!(!games.is_empty(), "no games in {FIXTURE}");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("examples.db");
    let run = index(&db, &["-q"], &[Path::new(&root_path(FIXTURE))]);
    run.expect_code(0, "index the structure examples");
    let conn = open_db(&db);

    let stored = query_all(&conn, "SELECT id, white, black FROM games ORDER BY id");
    assert_eq!(
        stored.len(),
        games.len(),
        "every fixture game is indexed once"
    );

    let mut failures = Vec::new();
    for (game, row) in games.iter().zip(&stored) {
        let id = int(&row[0]);
        assert_eq!(
            (
                text(&row[1]).unwrap_or_default(),
                text(&row[2]).unwrap_or_default()
            ),
            (game.white.clone(), game.black.clone()),
            "game {id} lines up with the fixture"
        );
        for e in &game.expects {
            let got = query_all(
                &conn,
                &format!(
                    "SELECT structure, structure_reversed FROM ply_features \
                     WHERE game_id = {id} AND ply = {}",
                    e.ply
                ),
            );
            assert_eq!(got.len(), 1, "game {id} has a ply {}", e.ply);
            let (structure, reversed) = (text(&got[0][0]), int(&got[0][1]));
            let ok = if e.near_miss {
                structure.as_deref() != Some(e.key.as_str())
            } else {
                structure.as_deref() == Some(e.key.as_str()) && reversed == i64::from(e.reversed)
            };
            if !ok {
                failures.push(format!(
                    "{} - {} (game {id}) ply {}: expected {}{}{}, stored {:?} reversed={reversed}",
                    game.white,
                    game.black,
                    e.ply,
                    if e.near_miss { "not " } else { "" },
                    e.key,
                    if e.reversed { " (reversed)" } else { "" },
                    structure,
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_catalogue_key_has_two_matches_and_a_near_miss() {
    let keys = catalogue_keys();
    assert!(
        keys.len() >= 33,
        "the catalogue has {} structures",
        keys.len()
    );
    // key -> (matches, near misses)
    let mut seen: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for game in fixture_games() {
        for e in game.expects {
            assert!(
                keys.contains(&e.key),
                "{FIXTURE} names {:?}, which is not in structures/",
                e.key
            );
            let entry = seen.entry(e.key).or_default();
            if e.near_miss {
                entry.1 += 1;
            } else {
                entry.0 += 1;
            }
        }
    }
    let missing: Vec<String> = keys
        .iter()
        .filter_map(|k| {
            let (m, n) = seen.get(k).copied().unwrap_or_default();
            (m < 2 || n < 1).then(|| format!("{k}: {m} matches, {n} near misses"))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "every structure needs >= 2 matches and >= 1 near miss in {FIXTURE}:\n{}",
        missing.join("\n")
    );
}
