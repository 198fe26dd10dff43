//! `stats --by year` and `--by decade` on a slice of the real masters corpus against an
//! independent count: the slice's PGN records read here (their `Date` and `Result` tags, their
//! moves counted token by token), not through pawndex. Every group's positions, games, results
//! and White's score, per position and per game.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::BIN;

const SHARD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/masters-1.pgn.zst"
);

/// The records of the shard the slice takes: players from the 19th century to 2021.
const FIRST: usize = 6000;
const COUNT: usize = 4000;
/// Every this many records of the slice get the unknown date `????.??.??`.
const UNDATED_EVERY: usize = 97;

/// The shard, or `None` (said loudly) when `../shared` is absent; under `CI=true` its absence
/// fails the test.
fn shard_or_skip() -> Option<PathBuf> {
    let p = PathBuf::from(SHARD);
    if p.is_file() {
        return Some(p);
    }
    assert!(
        std::env::var("CI").map_or(true, |v| v != "true"),
        "{SHARD} is missing and CI=true: ../shared must be beside the repository"
    );
    eprintln!("SKIPPED: {SHARD} does not exist (put ../shared beside the repository)");
    None
}

/// One record of the slice as read here.
struct Record {
    date: String,
    result: String,
    plies: u64,
}

/// Writes records `FIRST..FIRST + COUNT` of the shard to `out` (bytes as they are, some dates
/// made unknown) and reads each one's date, result and number of moves.
fn slice(shard: &Path, out: &Path) -> Vec<Record> {
    let file = std::fs::File::open(shard).unwrap();
    let reader = BufReader::new(zstd::Decoder::new(file).unwrap());
    let mut pgn = std::io::BufWriter::new(std::fs::File::create(out).unwrap());
    let mut records: Vec<Record> = Vec::new();
    let mut index = 0usize; // records started so far
    for line in reader.split(b'\n') {
        let mut line = line.unwrap();
        if line.starts_with(b"[Event ") {
            index += 1;
            if index > FIRST + COUNT {
                break;
            }
            if index > FIRST {
                records.push(Record {
                    date: String::new(),
                    result: String::new(),
                    plies: 0,
                });
            }
        }
        if index <= FIRST {
            continue;
        }
        let undated = records.len().is_multiple_of(UNDATED_EVERY);
        let record = records.last_mut().unwrap();
        let text = String::from_utf8_lossy(&line).trim_end().to_string();
        if let Some(date) = tag(&text, "Date") {
            if undated {
                line = b"[Date \"????.??.??\"]\r".to_vec();
                record.date = "????.??.??".into();
            } else {
                record.date = date;
            }
        } else if let Some(result) = tag(&text, "Result") {
            record.result = result;
        } else if !text.starts_with('[') {
            record.plies += moves_in(&text);
        }
        pgn.write_all(&line).unwrap();
        pgn.write_all(b"\n").unwrap();
    }
    pgn.flush().unwrap();
    assert_eq!(records.len(), COUNT, "the shard holds the slice");
    records
}

fn tag(line: &str, name: &str) -> Option<String> {
    let rest = line
        .strip_prefix('[')?
        .strip_prefix(name)?
        .strip_prefix(" \"")?;
    Some(rest.strip_suffix("\"]")?.to_string())
}

/// The moves on a movetext line (the corpus has no comments, variations or NAGs): tokens that
/// are neither move numbers nor a result.
fn moves_in(line: &str) -> u64 {
    line.split_whitespace()
        .map(|t| t.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.'))
        .filter(|t| !t.is_empty() && !["1-0", "0-1", "1/2-1/2", "*"].contains(t))
        .filter(|t| !t.starts_with('-') && !t.starts_with('/')) // the rest of "1-0", "1/2-1/2"
        .count() as u64
}

/// The year of a date: the four digits it starts with, or none.
fn year(date: &str) -> Option<u32> {
    let head = date.get(..4)?;
    head.bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| head.parse().unwrap())
}

#[derive(Default, Debug)]
struct Want {
    positions: u64,
    games: u64,
    /// White wins, draws, Black wins: in positions, and in games.
    results_positions: [u64; 3],
    results_games: [u64; 3],
}

fn expected(records: &[Record], group: impl Fn(Option<u32>) -> String) -> BTreeMap<String, Want> {
    let mut out: BTreeMap<String, Want> = BTreeMap::new();
    for r in records {
        let w = out.entry(group(year(&r.date))).or_default();
        let positions = r.plies + 1;
        w.positions += positions;
        w.games += 1;
        let slot = match r.result.as_str() {
            "1-0" => Some(0),
            "1/2-1/2" => Some(1),
            "0-1" => Some(2),
            _ => None,
        };
        if let Some(i) = slot {
            w.results_positions[i] += positions;
            w.results_games[i] += 1;
        }
    }
    out
}

fn score(r: [u64; 3]) -> Option<f64> {
    let n = r.iter().sum::<u64>();
    (n > 0).then(|| 100.0 * (r[0] as f64 + r[1] as f64 / 2.0) / n as f64)
}

fn stats(db: &Path, by: &str, per: &str) -> Vec<Vec<String>> {
    let out = Command::new(BIN)
        .args(["stats", "--db"])
        .arg(db)
        .args(["--by", by, "--per", per])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "stats --by {by}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        format!(
            "{by},positions,games,white_wins,draws,black_wins,white_score,avg_white_elo,avg_black_elo"
        )
    );
    lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn years_and_decades_match_the_date_tags_of_a_corpus_slice() {
    let Some(shard) = shard_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("slice.pgn");
    let records = slice(&shard, &pgn);
    let db = dir.path().join("slice.db");
    let out = Command::new(BIN)
        .args(["index", "--keep-duplicates", "--db"])
        .arg(&db)
        .arg(&pgn)
        .output()
        .unwrap();
    let summary = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "index: {summary}");
    // Every record is a game of the database: none rejected, duplicates kept.
    assert!(
        summary.contains(&format!("{} indexed, 0 duplicates, 0 rejected", "4,000")),
        "{summary}"
    );

    let by_year = |y: Option<u32>| y.map_or("unknown".to_string(), |y| y.to_string());
    let by_decade =
        |y: Option<u32>| y.map_or("unknown".to_string(), |y| format!("{}s", y / 10 * 10));
    for (by, group) in [
        ("year", &by_year as &dyn Fn(Option<u32>) -> String),
        ("decade", &by_decade),
    ] {
        let want = expected(&records, group);
        assert!(
            want.len() > if by == "year" { 40 } else { 8 },
            "{by}: {want:?}"
        );
        assert!(want.contains_key("unknown") && want.keys().any(|k| k.as_str() < "1950"));
        // Numbers in order, `unknown` last (the map orders the labels as text: four-digit
        // years and decades sort as numbers, and "unknown" after digits).
        let want_keys: Vec<&String> = want.keys().collect();
        for per in ["position", "game"] {
            let rows = stats(&db, by, per);
            let got_keys: Vec<&String> = rows.iter().map(|r| &r[0]).collect();
            assert_eq!(
                got_keys, want_keys,
                "--by {by} --per {per}: the groups in order"
            );
            for row in &rows {
                let w = &want[&row[0]];
                let results = if per == "game" {
                    w.results_games
                } else {
                    w.results_positions
                };
                let units = if per == "game" { w.games } else { w.positions };
                let what = format!("--by {by} --per {per}, {}", row[0]);
                assert_eq!(row[1], w.positions.to_string(), "{what}: positions");
                assert_eq!(row[2], w.games.to_string(), "{what}: games");
                let got: Vec<u64> = row[3..6].iter().map(|v| v.parse().unwrap()).collect();
                assert_eq!(got, results, "{what}: white wins, draws, black wins");
                assert!(results.iter().sum::<u64>() <= units, "{what}");
                match score(results) {
                    Some(s) => {
                        let got: f64 = row[6].parse().unwrap();
                        assert!(
                            (got - s).abs() <= 0.05 + 1e-9,
                            "{what}: score {got} for {s}"
                        );
                    }
                    None => assert_eq!(row[6], "", "{what}: no score"),
                }
            }
        }
    }
}
