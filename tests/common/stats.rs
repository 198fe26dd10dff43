//! Helpers for the `pawndex stats` tests: index the fixtures with the real binary, run `stats`,
//! read its CSV with the csv crate, and compute what every row must say from naive SQL over
//! `ply_features` joined to `games` (one row per position, counted in plain Rust).

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rusqlite::Connection;
use shakmaty::fen::Fen;
use shakmaty::{Color, Role};

pub use super::BIN;

pub fn root() -> PathBuf {
    PathBuf::from(super::ROOT)
}

pub const FIXTURES: &[&str] = &[
    "examples/sample.pgn",
    "tests/fixtures/edge.pgn",
    "tests/fixtures/chess960.pgn",
    "tests/fixtures/bad.pgn",
];

/// Games written for these tests: Elo bands at the rounding edge, a game without Elos (nor a
/// known date), a FEN
/// start where the queens come off at ply 2, and a Chess960 start with the queens in the
/// corners (only the start position's piece types tell that slot 0 is a queen there).
pub const EXTRA_PGN: &str = r#"[Event "stats: Elo 2450 v 2551"]
[Site "?"]
[Date "2024.02.01"]
[Round "1"]
[White "Low, A"]
[Black "High, B"]
[Result "1/2-1/2"]
[WhiteElo "2450"]
[BlackElo "2551"]
[ECO "D55"]

1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. Bg5 Be7 5. e3 O-O 6. Nf3 h6 7. Bh4 b6 1/2-1/2

[Event "stats: Elo 2449 v 2550"]
[Site "?"]
[Date "2024.02.01"]
[Round "2"]
[White "Low, C"]
[Black "High, D"]
[Result "0-1"]
[WhiteElo "2449"]
[BlackElo "2550"]
[ECO "B90"]

1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 6. Be3 e5 7. Nb3 Be6 0-1

[Event "stats: no Elo"]
[Site "?"]
[Date "????.??.??"]
[Round "3"]
[White "Unrated, E"]
[Black "Unrated, F"]
[Result "1-0"]

1. c4 e5 2. Nc3 Nf6 3. g3 d5 4. cxd5 Nxd5 5. Bg2 Nb6 1-0

[Event "stats: queens off from a FEN"]
[Site "?"]
[Date "2024.02.01"]
[Round "4"]
[White "Fen, G"]
[Black "Fen, H"]
[Result "1-0"]
[WhiteElo "2600"]
[BlackElo "2400"]
[SetUp "1"]
[FEN "3qk3/pp6/8/8/8/8/PPP5/R2QK2R w KQ - 0 1"]

1. Qxd8+ Kxd8 2. a3 Ke7 3. b4 Kd6 1-0

[Event "stats: 960 queens in the corners"]
[Site "?"]
[Date "2024.02.01"]
[Round "5"]
[White "Corner, I"]
[Black "Corner, J"]
[Result "0-1"]
[Variant "Chess960"]
[SetUp "1"]
[FEN "qrb3k1/1p6/8/8/8/8/1P6/QRB3K1 w - - 0 1"]

1. Qxa8 Rxa8 2. Bf4 Bf5 3. b3 b6 0-1
"#;

/// A temporary database holding the indexed fixtures.
pub struct Db {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
}

/// Indexes `files` (paths relative to the repository, or absolute) into a fresh database.
pub fn index(files: &[PathBuf]) -> Db {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stats.db");
    let out = Command::new(BIN)
        .arg("index")
        .arg("--quiet")
        .arg("--db")
        .arg(&path)
        .args(files)
        .output()
        .unwrap();
    // bad.pgn has rejected games, which is not an error; the database must exist.
    assert!(
        path.exists(),
        "index failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Db { dir, path }
}

/// All four fixtures and [`EXTRA_PGN`].
pub fn fixture_db() -> Db {
    let extra_dir = tempfile::tempdir().unwrap();
    let extra = extra_dir.path().join("extra.pgn");
    std::fs::write(&extra, EXTRA_PGN).unwrap();
    let mut files: Vec<PathBuf> = FIXTURES.iter().map(|f| root().join(f)).collect();
    files.push(extra);
    index(&files)
}

pub fn stats(db: &Path, args: &[&str]) -> Output {
    stats_env(db, args, &[])
}

pub fn stats_env(db: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.arg("stats").arg("--db").arg(db).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// A CSV as the csv crate reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Csv {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

pub fn parse_csv(bytes: &[u8]) -> Csv {
    let mut r = csv::Reader::from_reader(bytes);
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|rec| rec.unwrap().iter().map(String::from).collect())
        .collect();
    Csv { header, rows }
}

/// Runs `stats` and expects success and a CSV.
pub fn stats_csv(db: &Path, args: &[&str]) -> Csv {
    let out = stats(db, args);
    assert!(
        out.status.success(),
        "pawndex stats {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    parse_csv(&out.stdout)
}

pub const COUNT_COLUMNS: [&str; 8] = [
    "positions",
    "games",
    "white_wins",
    "draws",
    "black_wins",
    "white_score",
    "avg_white_elo",
    "avg_black_elo",
];

/// One position of `ply_features`, with its game's columns.
#[derive(Debug, Clone)]
pub struct Ply {
    pub game_id: i64,
    pub ply: i64,
    pub f: BTreeMap<String, i64>,
    pub result: Option<String>,
    pub white_elo: Option<i64>,
    pub black_elo: Option<i64>,
    pub fen: Option<String>,
    pub chess960: bool,
    pub eco: Option<String>,
    pub date: Option<String>,
}

pub const FEATURE_COLUMNS: &[&str] = &[
    "white_pawns",
    "black_pawns",
    "white_islands",
    "black_islands",
    "white_dispersion",
    "black_dispersion",
    "white_distortion",
    "black_distortion",
    "white_duo",
    "black_duo",
    "white_trio",
    "black_trio",
    "white_quart",
    "black_quart",
    "white_bishop_pair",
    "black_bishop_pair",
    "pieceset",
];

/// The naive SQL: every position, joined to its game.
pub fn plies(db: &Path) -> Vec<Ply> {
    let conn = Connection::open(db).unwrap();
    let sql = format!(
        "SELECT f.game_id, f.ply, {}, g.result, g.white_elo, g.black_elo, g.fen, g.chess960, g.eco, g.date
         FROM ply_features AS f JOIN games AS g ON g.id = f.game_id
         ORDER BY f.game_id, f.ply",
        FEATURE_COLUMNS
            .iter()
            .map(|c| format!("f.{c}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut st = conn.prepare(&sql).unwrap();
    let n = FEATURE_COLUMNS.len();
    st.query_map([], |r| {
        let mut f = BTreeMap::new();
        for (i, c) in FEATURE_COLUMNS.iter().enumerate() {
            f.insert(c.to_string(), r.get(2 + i)?);
        }
        Ok(Ply {
            game_id: r.get(0)?,
            ply: r.get(1)?,
            f,
            result: r.get(2 + n)?,
            white_elo: r.get(3 + n)?,
            black_elo: r.get(4 + n)?,
            fen: r.get(5 + n)?,
            chess960: r.get(6 + n)?,
            eco: r.get(7 + n)?,
            date: r.get(8 + n)?,
        })
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

/// A group-by value, ordered as pawndex orders its rows (empty first, numbers, then text;
/// phases in game order).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Val {
    Null,
    Int(i64),
    Phase(u8),
    Text(String),
}

impl Val {
    pub fn csv(&self) -> String {
        match self {
            Val::Null => String::new(),
            Val::Int(v) => v.to_string(),
            Val::Phase(0) => "opening".into(),
            Val::Phase(1) => "middlegame".into(),
            Val::Phase(_) => "endgame".into(),
            Val::Text(t) => t.clone(),
        }
    }
}

/// Which start-list slots hold queens and rooks/bishops/knights, per side, worked out from
/// the start position square by square as the spec describes the slot assignment.
pub fn slot_roles(fen: Option<&str>, chess960: bool) -> [Option<(Color, Role)>; 32] {
    let mut roles = [None; 32];
    let back = [
        Role::Rook,
        Role::Knight,
        Role::Bishop,
        Role::Queen,
        Role::King,
        Role::Bishop,
        Role::Knight,
        Role::Rook,
    ];
    let Some(fen) = fen else {
        for f in 0..8 {
            roles[f] = Some((Color::White, back[f]));
            roles[8 + f] = Some((Color::White, Role::Pawn));
            roles[16 + f] = Some((Color::Black, Role::Pawn));
            roles[24 + f] = Some((Color::Black, back[f]));
        }
        return roles;
    };
    let board = Fen::from_ascii(fen.as_bytes()).unwrap().into_setup().board;
    let mut pieces = Vec::new();
    for sq in 0..64u32 {
        let square = shakmaty::Square::new(sq);
        if let Some(p) = board.piece_at(square) {
            pieces.push((sq, p.color, p.role));
        }
    }
    let mut placed = vec![false; pieces.len()];
    for (i, &(sq, color, role)) in pieces.iter().enumerate() {
        let (home, slot) = match (color, sq) {
            (Color::White, 0..=7) => (Some(back[sq as usize]), sq),
            (Color::White, 8..=15) => (Some(Role::Pawn), sq),
            (Color::Black, 48..=55) => (Some(Role::Pawn), sq - 32),
            (Color::Black, 56..=63) => (Some(back[sq as usize - 56]), sq - 32),
            _ => (None, 0),
        };
        let back_rank = matches!((color, sq), (Color::White, 0..=7) | (Color::Black, 56..=63));
        if home == Some(role) || (chess960 && back_rank) {
            roles[slot as usize] = Some((color, role));
            placed[i] = true;
        }
    }
    for (i, &(_, color, role)) in pieces.iter().enumerate() {
        if placed[i] {
            continue;
        }
        let range = if color == Color::White { 0..16 } else { 16..32 };
        let slot = range.into_iter().find(|&s| roles[s].is_none()).unwrap();
        roles[slot] = Some((color, role));
    }
    roles
}

/// `phase` by the documented rule, from the piece-set and the start's slot roles.
pub fn naive_phase(p: &Ply) -> u8 {
    let roles = slot_roles(p.fen.as_deref(), p.chess960);
    let pieceset = p.f["pieceset"] as u64;
    let side_ok = |color: Color| {
        let mut queens = 0;
        let mut pieces = 0;
        for (slot, r) in roles.iter().enumerate() {
            if pieceset & (1 << slot) == 0 {
                continue;
            }
            match r {
                Some((c, Role::Queen)) if *c == color => queens += 1,
                Some((c, Role::Rook | Role::Bishop | Role::Knight)) if *c == color => pieces += 1,
                _ => {}
            }
        }
        queens == 0 || pieces <= 1
    };
    if side_ok(Color::White) && side_ok(Color::Black) {
        2
    } else if p.ply <= 20 {
        0
    } else {
        1
    }
}

/// The pawns as a FEN board, built on an 8x8 grid.
pub fn naive_pawn_fen(white: i64, black: i64) -> String {
    let mut grid = [['.'; 8]; 8];
    for sq in 0..64 {
        if (white as u64) >> sq & 1 == 1 {
            grid[sq / 8][sq % 8] = 'P';
        }
        if (black as u64) >> sq & 1 == 1 {
            grid[sq / 8][sq % 8] = 'p';
        }
    }
    let mut ranks = Vec::new();
    for rank in (0..8).rev() {
        let mut s = String::new();
        let mut gap = 0;
        for c in grid[rank] {
            if c == '.' {
                gap += 1;
            } else {
                if gap > 0 {
                    s.push_str(&gap.to_string());
                }
                gap = 0;
                s.push(c);
            }
        }
        if gap > 0 {
            s.push_str(&gap.to_string());
        }
        ranks.push(s);
    }
    ranks.join("/")
}

/// The year of a PGN date as docs/stats.md says: its first four characters when all four are
/// digits.
pub fn naive_year(date: Option<&str>) -> Option<i64> {
    let head: String = date?.chars().take(4).collect();
    (head.len() == 4 && head.chars().all(|c| c.is_ascii_digit())).then(|| head.parse().unwrap())
}

/// A column's value at one position, computed naively.
pub fn value(p: &Ply, column: &str) -> Val {
    let count = |mask: &str| Val::Int(i64::from((p.f[mask] as u64).count_ones()));
    match column {
        "game_id" => Val::Int(p.game_id),
        "ply" => Val::Int(p.ply),
        "ply_bucket" => Val::Int(p.ply - p.ply % 10),
        "elo_band" => match (p.white_elo, p.black_elo) {
            (Some(w), Some(b)) => Val::Int(((w + b) as f64 / 2.0 / 100.0).floor() as i64 * 100),
            _ => Val::Null,
        },
        "phase" => Val::Phase(naive_phase(p)),
        "year" => match naive_year(p.date.as_deref()) {
            Some(y) => Val::Int(y),
            None => Val::Text("unknown".into()),
        },
        "decade" => match naive_year(p.date.as_deref()) {
            Some(y) => Val::Text(format!("{}s", y - y % 10)),
            None => Val::Text("unknown".into()),
        },
        "white_duo_count" => count("white_duo"),
        "black_duo_count" => count("black_duo"),
        "white_trio_count" => count("white_trio"),
        "black_trio_count" => count("black_trio"),
        "white_quart_count" => count("white_quart"),
        "black_quart_count" => count("black_quart"),
        "pawn_fen" => Val::Text(naive_pawn_fen(p.f["white_pawns"], p.f["black_pawns"])),
        c => Val::Int(*p.f.get(c).unwrap_or_else(|| panic!("no column {c}"))),
    }
}

pub const ALL_COLUMNS: &[&str] = &[
    "game_id",
    "ply",
    "white_pawns",
    "black_pawns",
    "white_islands",
    "black_islands",
    "white_dispersion",
    "black_dispersion",
    "white_distortion",
    "black_distortion",
    "white_duo",
    "black_duo",
    "white_trio",
    "black_trio",
    "white_quart",
    "black_quart",
    "white_bishop_pair",
    "black_bishop_pair",
    "pieceset",
    "ply_bucket",
    "elo_band",
    "year",
    "decade",
    "phase",
    "white_duo_count",
    "black_duo_count",
    "white_trio_count",
    "black_trio_count",
    "white_quart_count",
    "black_quart_count",
    "pawn_fen",
];

/// What one output row must say.
#[derive(Debug, Clone, Default)]
pub struct Expected {
    pub positions: u64,
    pub games: BTreeSet<i64>,
    pub white_wins: u64,
    pub draws: u64,
    pub black_wins: u64,
    pub white_elo: Vec<i64>,
    pub black_elo: Vec<i64>,
}

impl Expected {
    pub fn score(&self) -> Option<f64> {
        let n = self.white_wins + self.draws + self.black_wins;
        (n > 0).then(|| 100.0 * (self.white_wins as f64 + 0.5 * self.draws as f64) / n as f64)
    }
    fn avg(v: &[i64]) -> Option<f64> {
        (!v.is_empty()).then(|| v.iter().sum::<i64>() as f64 / v.len() as f64)
    }
    pub fn units(&self, per_game: bool) -> u64 {
        if per_game {
            self.games.len() as u64
        } else {
            self.positions
        }
    }
}

/// Groups the positions that pass `keep` by `by`, counting positions or (per game) each game
/// once per distinct value tuple it reaches.
pub fn expected(
    plies: &[Ply],
    by: &[&str],
    per_game: bool,
    keep: impl Fn(&Ply) -> bool,
) -> BTreeMap<Vec<Val>, Expected> {
    let mut out: BTreeMap<Vec<Val>, Expected> = BTreeMap::new();
    let mut seen: BTreeSet<(Vec<Val>, i64)> = BTreeSet::new();
    for p in plies.iter().filter(|p| keep(p)) {
        let key: Vec<Val> = by.iter().map(|c| value(p, c)).collect();
        let e = out.entry(key.clone()).or_default();
        e.positions += 1;
        e.games.insert(p.game_id);
        let unit = !per_game || seen.insert((key, p.game_id));
        if !unit {
            continue;
        }
        match p.result.as_deref() {
            Some("1-0") => e.white_wins += 1,
            Some("1/2-1/2") => e.draws += 1,
            Some("0-1") => e.black_wins += 1,
            _ => {}
        }
        if let Some(w) = p.white_elo {
            e.white_elo.push(w);
        }
        if let Some(b) = p.black_elo {
            e.black_elo.push(b);
        }
    }
    out
}

/// Checks a CSV against the naive groups: header, row order, every count and score.
pub fn assert_csv_matches(
    csv: &Csv,
    by: &[&str],
    expected: &BTreeMap<Vec<Val>, Expected>,
    context: &str,
) {
    let mut header: Vec<String> = by.iter().map(|s| s.to_string()).collect();
    header.extend(COUNT_COLUMNS.iter().map(|s| s.to_string()));
    assert_eq!(csv.header, header, "{context}: header");
    assert_eq!(
        csv.rows.len(),
        expected.len(),
        "{context}: number of rows\ncsv: {:?}\nexpected keys: {:?}",
        csv.rows,
        expected.keys().collect::<Vec<_>>()
    );
    for (row, (key, e)) in csv.rows.iter().zip(expected) {
        assert_row(row, key, e, context);
    }
}

pub fn assert_row(row: &[String], key: &[Val], e: &Expected, context: &str) {
    let n = key.len();
    let keys: Vec<String> = key.iter().map(Val::csv).collect();
    assert_eq!(&row[..n], &keys[..], "{context}: keys (rows out of order?)");
    let ctx = format!("{context}: row {keys:?}");
    let int = |i: usize| -> u64 {
        row[n + i]
            .parse()
            .unwrap_or_else(|_| panic!("{ctx}: {row:?}"))
    };
    assert_eq!(int(0), e.positions, "{ctx}: positions");
    assert_eq!(int(1), e.games.len() as u64, "{ctx}: games");
    assert_eq!(int(2), e.white_wins, "{ctx}: white_wins");
    assert_eq!(int(3), e.draws, "{ctx}: draws");
    assert_eq!(int(4), e.black_wins, "{ctx}: black_wins");
    let close = |field: &str, want: Option<f64>, tolerance: f64, what: &str| match want {
        None => assert_eq!(field, "", "{ctx}: {what} should be empty"),
        Some(w) => {
            let got: f64 = field
                .parse()
                .unwrap_or_else(|_| panic!("{ctx}: {what} {field:?}"));
            assert!((got - w).abs() <= tolerance, "{ctx}: {what} {got} != {w}");
        }
    };
    close(&row[n + 5], e.score(), 0.05 + 1e-9, "white_score");
    close(
        &row[n + 6],
        Expected::avg(&e.white_elo),
        0.05 + 1e-9,
        "avg_white_elo",
    );
    close(
        &row[n + 7],
        Expected::avg(&e.black_elo),
        0.05 + 1e-9,
        "avg_black_elo",
    );
}

/// Bytes of a file, to show that a command left it untouched.
pub fn file_bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}
