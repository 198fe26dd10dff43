//! The named structure of every position, as `pawndex index` stores it (`ply_features.structure`
//! and `structure_reversed`), equals an independent classification written here: the
//! catalogue's TOML files read as plain tables, and each position's pawns (from this test's own
//! replay of the stored moves) looked at square by square on an 8x8 board, with the documented
//! match rule (higher `priority`, then more conditions — a square 1, a whole file 6, a `one_of`
//! list or a `count` 1 — then the key; the normal form before the reversed one).
//!
//! Run on random legal games and on the first 3000 games of a masters shard, with a catalogue of
//! this test's own whose definitions use every kind of rule and overlap (so the ordering rule
//! decides real positions), and once with the built-in catalogue.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::Command;

use common::{BIN, Run, open_db, random_pgn, replay_stored, root_path, stored_games, test_seed};
use rusqlite::types::Value;

const SHARD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/masters-1.pgn.zst"
);

/// Games of the shard used.
const REAL_GAMES: usize = 3000;

/// This test's catalogue: every kind of rule, and definitions that overlap so that priority,
/// the number of conditions (a whole file counting 6), the key and normal-before-reversed
/// each decide some positions.
const CATALOGUE: &[(&str, &str)] = &[
    // Whole files in `none` on both sides: 12 conditions.
    (
        "e-open",
        "[white]\nnone = [\"e\"]\n[black]\nnone = [\"e\"]\n",
    ),
    // A whole file (6) against seven squares: the seven squares win where both match.
    ("no-white-c", "[white]\nnone = [\"c\"]\n"),
    (
        "wing-seven",
        "[white]\npawns = [\"a2\", \"b2\", \"f2\", \"g2\", \"h2\"]\n[black]\npawns = [\"a7\", \"b7\"]\n",
    ),
    // Squares required and a square forbidden, with the reversed form.
    (
        "d4-e3",
        "reversed = true\n[white]\npawns = [\"d4\", \"e3\"]\n[black]\nnone = [\"e5\"]\n",
    ),
    // Fewer conditions than d4-e3, but a higher priority.
    (
        "d4-lone",
        "priority = 1\n[white]\npawns = [\"d4\"]\n[black]\none_of = [[\"c7\", \"c6\", \"c5\"]]\n",
    ),
    // one_of next to a required square.
    (
        "d-wedge",
        "[white]\npawns = [\"d4\"]\none_of = [[\"c3\", \"c4\", \"e3\", \"e4\"]]\n[black]\npawns = [\"d5\"]\n",
    ),
    // Counts with min, max and both.
    (
        "queenside-majority",
        "reversed = true\n[white]\ncount = [{ files = \"abc\", min = 3 }]\n[black]\ncount = [{ files = \"abc\", max = 2 }, { files = \"defgh\", min = 1, max = 5 }]\n",
    ),
    // Two definitions with as many conditions: the key decides.
    (
        "tie-a",
        "[white]\npawns = [\"e4\"]\n[black]\npawns = [\"e5\"]\n",
    ),
    (
        "tie-b",
        "[white]\npawns = [\"e4\"]\n[black]\npawns = [\"d6\"]\n",
    ),
    // Its own reversed form: the normal form wins.
    (
        "symmetric-d",
        "reversed = true\n[white]\npawns = [\"d4\"]\n[black]\npawns = [\"d5\"]\n",
    ),
    // Many conditions, but a low priority.
    (
        "low-priority",
        "priority = -1\n[white]\npawns = [\"a2\", \"b2\", \"c2\", \"f2\", \"g2\", \"h2\"]\n",
    ),
];

/// Writes [`CATALOGUE`] as `KEY.toml` files into `dir`.
fn write_catalogue(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    for (key, rules) in CATALOGUE {
        let text = format!(
            "name = \"{key}\"\nfamily = \"Test\"\ndescription = \"A test rule.\"\n\
             source = \"tests/structure_classify.rs\"\n{rules}"
        );
        fs::write(dir.join(format!("{key}.toml")), text).unwrap();
    }
}

/// The catalogue files of a folder, (key, text).
fn read_catalogue(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let key = p.file_stem().unwrap().to_str().unwrap().to_string();
            out.push((key, fs::read_to_string(&p).unwrap()));
        }
    }
    out.sort();
    out
}

/// A square by name: (file, rank), both 0-based.
fn sq(name: &str) -> (usize, usize) {
    let b = name.as_bytes();
    assert!(
        b.len() == 2 && (b'a'..=b'h').contains(&b[0]) && (b'1'..=b'8').contains(&b[1]),
        "{name}"
    );
    ((b[0] - b'a') as usize, (b[1] - b'1') as usize)
}

/// One condition on one side's pawns.
#[derive(Clone, Debug)]
enum Cond {
    Pawn(usize, usize),
    NoPawn(usize, usize),
    OneOf(Vec<(usize, usize)>),
    /// Files, min, max.
    Count(Vec<usize>, u32, u32),
}

/// A form of a definition: its key, whether reversed, its order, and the conditions per side.
#[derive(Clone, Debug)]
struct Form {
    key: String,
    reversed: bool,
    priority: i64,
    conditions: usize,
    sides: [Vec<Cond>; 2],
}

/// One side's conditions from its TOML table; `turn` mirrors the ranks.
fn side_conds(v: Option<&toml::Value>, turn: bool) -> Vec<Cond> {
    let at = |name: &str| {
        let (f, r) = sq(name);
        (f, if turn { 7 - r } else { r })
    };
    let mut out = Vec::new();
    let Some(t) = v.and_then(|v| v.as_table()) else {
        return out;
    };
    let list = |k: &str| -> Vec<toml::Value> {
        t.get(k)
            .and_then(|v| v.as_array())
            .cloned()
            .unwrap_or_default()
    };
    for p in list("pawns") {
        let (f, r) = at(p.as_str().unwrap());
        out.push(Cond::Pawn(f, r));
    }
    for p in list("none") {
        let p = p.as_str().unwrap();
        if p.len() == 1 {
            let f = (p.as_bytes()[0] - b'a') as usize;
            // Pawns stand on ranks 2 to 7 only.
            for r in 1..=6 {
                out.push(Cond::NoPawn(f, r));
            }
        } else {
            let (f, r) = at(p);
            out.push(Cond::NoPawn(f, r));
        }
    }
    for l in list("one_of") {
        out.push(Cond::OneOf(
            l.as_array()
                .unwrap()
                .iter()
                .map(|s| at(s.as_str().unwrap()))
                .collect(),
        ));
    }
    for c in list("count") {
        let files = c["files"]
            .as_str()
            .unwrap()
            .bytes()
            .map(|b| (b - b'a') as usize)
            .collect();
        let min = c.get("min").map_or(0, |v| v.as_integer().unwrap() as u32);
        let max = c.get("max").map_or(99, |v| v.as_integer().unwrap() as u32);
        out.push(Cond::Count(files, min, max));
    }
    out
}

/// The documented number of conditions: distinct squares in `pawns` and `none`, plus the
/// `one_of` lists and counts.
fn count_conditions(sides: &[Vec<Cond>; 2]) -> usize {
    let mut n = 0;
    for conds in sides {
        let mut squares = std::collections::BTreeSet::new();
        for c in conds {
            match c {
                Cond::Pawn(f, r) | Cond::NoPawn(f, r) => {
                    squares.insert((*f, *r));
                }
                Cond::OneOf(_) | Cond::Count(..) => n += 1,
            }
        }
        n += squares.len();
    }
    n
}

/// Every form of a catalogue, in match order.
fn forms(texts: &[(String, String)]) -> Vec<Form> {
    let mut out = Vec::new();
    for (key, text) in texts {
        let t: toml::Value = toml::from_str(text).unwrap();
        let priority = t.get("priority").map_or(0, |v| v.as_integer().unwrap());
        let reversed = t.get("reversed").is_some_and(|v| v.as_bool().unwrap());
        let normal = [
            side_conds(t.get("white"), false),
            side_conds(t.get("black"), false),
        ];
        let conditions = count_conditions(&normal);
        out.push(Form {
            key: key.clone(),
            reversed: false,
            priority,
            conditions,
            sides: normal,
        });
        if reversed {
            out.push(Form {
                key: key.clone(),
                reversed: true,
                priority,
                conditions,
                // White's conditions on the turned board are Black's, and the other way round.
                sides: [
                    side_conds(t.get("black"), true),
                    side_conds(t.get("white"), true),
                ],
            });
        }
    }
    out.sort_by(|a, b| {
        (b.priority, b.conditions)
            .cmp(&(a.priority, a.conditions))
            .then_with(|| (&a.key, a.reversed).cmp(&(&b.key, b.reversed)))
    });
    out
}

/// `board[rank][file]`: a pawn of the side there.
type Board = [[bool; 8]; 8];

fn board(pawns: u64) -> Board {
    let mut b = [[false; 8]; 8];
    for (i, cell) in b.iter_mut().flatten().enumerate() {
        *cell = pawns & (1u64 << i) != 0;
    }
    b
}

fn holds(c: &Cond, b: &Board) -> bool {
    match c {
        Cond::Pawn(f, r) => b[*r][*f],
        Cond::NoPawn(f, r) => !b[*r][*f],
        Cond::OneOf(list) => list.iter().any(|(f, r)| b[*r][*f]),
        Cond::Count(files, min, max) => {
            let n: u32 = files
                .iter()
                .map(|&f| (0..8).filter(|&r| b[r][f]).count() as u32)
                .sum();
            *min <= n && n <= *max
        }
    }
}

/// The indices of the forms both sides meet, in match order (the first is the name).
fn matching(forms: &[Form], white: u64, black: u64) -> Vec<usize> {
    let (w, b) = (board(white), board(black));
    (0..forms.len())
        .filter(|&i| {
            forms[i].sides[0].iter().all(|c| holds(c, &w))
                && forms[i].sides[1].iter().all(|c| holds(c, &b))
        })
        .collect()
}

/// What a comparison saw.
#[derive(Default, Debug)]
struct Seen {
    positions: u64,
    /// Positions per (key, reversed) named.
    named: BTreeMap<(String, bool), u64>,
    /// Positions where more than one form matched (the order decided).
    contested: u64,
    /// Contested positions won by higher priority over more conditions.
    by_priority: u64,
    /// Contested positions won by the key (same priority and conditions, other keys).
    by_key: u64,
    /// Contested positions won by the normal form over its own reversed one.
    by_normal: u64,
    /// Positions where both `wing-seven` (7 squares) and `no-white-c` (a whole file: 6)
    /// matched: the file's count decided.
    file_vs_squares: u64,
}

/// Indexes `pgn` with the catalogue in `catalogue` (`None`: built-in), then compares every
/// position of `ply_features` with the classification of this test's replay.
fn index_and_compare(
    dir: &Path,
    pgn: &Path,
    catalogue: Option<&Path>,
    texts: &[(String, String)],
) -> Seen {
    let db = dir.join("s.db");
    let _ = fs::remove_file(&db);
    let mut cmd = Command::new(BIN);
    cmd.args(["index", "--db", db.to_str().unwrap(), pgn.to_str().unwrap()]);
    match catalogue {
        Some(c) => cmd.env("PAWNDEX_STRUCTURES", c),
        None => cmd.env_remove("PAWNDEX_STRUCTURES"),
    };
    Run::of(cmd, "index").expect_code(0, "index");

    let forms = forms(texts);
    let conn = open_db(&db);
    let mut st = conn
        .prepare(
            "SELECT game_id, ply, structure, structure_reversed FROM ply_features
             ORDER BY game_id, ply",
        )
        .unwrap();
    let mut stored: BTreeMap<i64, Vec<(Option<String>, i64)>> = BTreeMap::new();
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Value>(2)?,
                r.get::<_, i64>(3)?,
            ))
        })
        .unwrap();
    for row in rows {
        let (game, ply, key, reversed) = row.unwrap();
        let plies = stored.entry(game).or_default();
        assert_eq!(plies.len() as i64, ply, "game {game}: plies in order");
        let key = match key {
            Value::Null => None,
            Value::Text(t) => Some(t),
            v => panic!("game {game} ply {ply}: structure {v:?}"),
        };
        plies.push((key, reversed));
    }

    let mut seen = Seen::default();
    let games = stored_games(&conn);
    assert!(!games.is_empty(), "no games indexed");
    for g in &games {
        let replay = replay_stored(g).unwrap_or_else(|e| panic!("game {}: {e}", g.id));
        let got = &stored[&g.id];
        assert_eq!(got.len(), replay.plies.len(), "game {}: plies", g.id);
        for (ply, (values, (key, reversed))) in replay.plies.iter().zip(got).enumerate() {
            seen.positions += 1;
            let m = matching(&forms, values.white_pawns, values.black_pawns);
            let want = m
                .first()
                .map(|&i| (forms[i].key.clone(), i64::from(forms[i].reversed)));
            let have = key.clone().map(|k| (k, *reversed));
            assert_eq!(
                have,
                want,
                "game {} ({:?}) ply {ply}: White pawns {:#x}, Black pawns {:#x}; forms that \
                 match, in order: {:?}",
                g.id,
                g.event,
                values.white_pawns,
                values.black_pawns,
                m.iter()
                    .map(|&i| (&forms[i].key, forms[i].reversed))
                    .collect::<Vec<_>>()
            );
            if key.is_none() {
                assert_eq!(
                    *reversed, 0,
                    "game {} ply {ply}: reversed without a name",
                    g.id
                );
            }
            if let Some((k, r)) = want {
                *seen.named.entry((k, r == 1)).or_default() += 1;
            }
            if m.len() > 1 {
                seen.contested += 1;
                let keys: Vec<&str> = m.iter().map(|&i| forms[i].key.as_str()).collect();
                if keys.contains(&"wing-seven") && keys.contains(&"no-white-c") {
                    seen.file_vs_squares += 1;
                }
                let (a, b) = (&forms[m[0]], &forms[m[1]]);
                if a.priority > b.priority && a.conditions < b.conditions {
                    seen.by_priority += 1;
                }
                if (a.priority, a.conditions) == (b.priority, b.conditions) {
                    if a.key != b.key {
                        seen.by_key += 1;
                    } else {
                        seen.by_normal += 1;
                    }
                }
            }
        }
    }
    // `pawndex check` agrees (its own independent classification, and the changes table).
    let mut cmd = Command::new(BIN);
    cmd.args(["check", "--db", db.to_str().unwrap()]);
    if let Some(c) = catalogue {
        cmd.env("PAWNDEX_STRUCTURES", c);
    }
    let run = Run::of(cmd, "check");
    run.expect_code(0, "check");
    eprintln!("{seen:?}");
    seen
}

/// The own catalogue's findings must exercise it: names, the reversed form, and each part of
/// the order deciding some positions.
fn assert_exercised(seen: &Seen, what: &str) {
    let named: u64 = seen.named.values().sum();
    assert!(named > 0, "{what}: no position was named: {seen:?}");
    assert!(
        seen.named.keys().any(|(_, r)| *r),
        "{what}: no reversed form was named: {seen:?}"
    );
    assert!(
        seen.named.len() >= 6,
        "{what}: fewer than 6 forms named: {seen:?}"
    );
    assert!(seen.contested > 0, "{what}: no position matched two forms");
}

#[test]
fn random_games_are_named_as_the_square_by_square_rules_say() {
    let dir = tempfile::tempdir().unwrap();
    let cat = dir.path().join("catalogue");
    write_catalogue(&cat);
    let pgn = dir.path().join("random.pgn");
    fs::write(&pgn, random_pgn(test_seed(1212), 800, 160, "Structures", 0)).unwrap();
    let seen = index_and_compare(dir.path(), &pgn, Some(&cat), &read_catalogue(&cat));
    assert_exercised(&seen, "random games");
    assert!(seen.by_priority > 0, "priority never decided: {seen:?}");
    assert!(seen.by_key > 0, "the key never decided: {seen:?}");
    assert!(
        seen.by_normal > 0,
        "normal before reversed never decided: {seen:?}"
    );
}

/// The first `n` games of the masters shard as PGN text, or `None` (said loudly) when the
/// shared corpus is absent; under `CI=true` its absence fails.
fn masters_games(n: usize) -> Option<String> {
    if !Path::new(SHARD).exists() {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "{SHARD} is missing and CI=true: ../shared must be beside the repository"
        );
        eprintln!("SKIPPED: {SHARD} is missing; the real-game comparison did not run");
        return None;
    }
    let file = fs::File::open(SHARD).unwrap();
    let mut decoder = zstd::stream::read::Decoder::new(file).unwrap();
    let mut text = String::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut raw = Vec::new();
    loop {
        let k = decoder.read(&mut buf).unwrap();
        if k == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..k]);
        // Stop once n games have started and the next one too.
        let s = String::from_utf8_lossy(&raw);
        let starts: Vec<usize> = s.match_indices("[Event ").map(|(i, _)| i).collect();
        if starts.len() > n {
            text = s[..starts[n]].to_string();
            break;
        }
        if raw.len() > 64 << 20 {
            panic!("{n} games not found in the first 64 MB of {SHARD}");
        }
    }
    if text.is_empty() {
        text = String::from_utf8_lossy(&raw).into_owned();
    }
    Some(text)
}

#[test]
fn masters_games_are_named_as_the_square_by_square_rules_say() {
    let Some(pgn_text) = masters_games(REAL_GAMES) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("masters.pgn");
    fs::write(&pgn, pgn_text).unwrap();

    let cat = dir.path().join("catalogue");
    write_catalogue(&cat);
    let seen = index_and_compare(dir.path(), &pgn, Some(&cat), &read_catalogue(&cat));
    assert_exercised(&seen, "masters games");

    // The built-in catalogue (whatever definitions it holds): its files are the repository's
    // structures/ folder.
    let builtin = read_catalogue(&root_path("structures"));
    assert!(!builtin.is_empty(), "structures/ holds no definitions");
    let seen = index_and_compare(dir.path(), &pgn, None, &builtin);
    assert!(
        seen.named.values().sum::<u64>() > 0,
        "the built-in catalogue named no position of {REAL_GAMES} master games"
    );
}
