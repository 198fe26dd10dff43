//! Shared helpers for the integration tests: running the real `pawndex` binary, reading the
//! SQLite database it writes, naive square-by-square reference versions of every per-ply value
//! in `docs/features.md`, an independent replay of the stored moves, a seeded random
//! legal-game generator, and a tiny reader for `tests/fixtures/expected.json`.
//!
//! Nothing here calls into the `pawndex` library: every expected value is recomputed from the
//! specification with shakmaty as the only chess authority.

#![allow(dead_code)] // each test crate uses a different subset

/// `query` and `find` helpers: a fixture database, running commands, reading CSV and PGN.
pub mod query;
/// `stats` helpers: a fixture database, CSV parsing, naive per-ply values.
pub mod stats;
/// Small structure catalogues and databases classified with them.
pub mod structures;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags};
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::{
    Board, CastlingMode, Chess, Color, EnPassantMode, File, Move, Piece, Position, Role, Square,
};

// ---------------------------------------------------------------------------------------------
// Paths and running the binary
// ---------------------------------------------------------------------------------------------

pub const BIN: &str = env!("CARGO_BIN_EXE_pawndex");
pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A path relative to the repository root.
pub fn root_path(rel: &str) -> PathBuf {
    Path::new(ROOT).join(rel)
}

/// The docs whose code blocks are examples: README.md, then docs/*.md by name.
pub fn doc_files() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root_path("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    let mut files = vec![root_path("README.md")];
    files.extend(docs);
    files
}

/// The three fixture files `expected.json` describes, relative to the repository root.
pub const FEATURE_FIXTURES: [&str; 3] = [
    "examples/sample.pgn",
    "tests/fixtures/edge.pgn",
    "tests/fixtures/chess960.pgn",
];

/// What one run of the binary did.
#[derive(Debug)]
pub struct Run {
    /// Exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Runs `cmd` (stdin closed, output captured) and fails the test if the binary panicked.
    pub fn of(mut cmd: Command, what: &str) -> Run {
        let out = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .expect("run pawndex");
        let run = Run::from_output(out);
        run.assert_no_panic(what);
        run
    }

    fn from_output(out: Output) -> Run {
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Panics (with the whole stderr) unless the run exited with `code`.
    pub fn expect_code(&self, code: i32, what: &str) -> &Self {
        assert_eq!(
            self.code,
            Some(code),
            "{what}: expected exit code {code}\n--- stderr ---\n{}\n--- stdout ---\n{}",
            self.stderr,
            self.stdout
        );
        self.assert_no_panic(what);
        self
    }

    pub fn assert_no_panic(&self, what: &str) {
        assert!(
            !self.stderr.contains("panicked") && !self.stderr.contains("RUST_BACKTRACE"),
            "{what}: the binary panicked:\n{}",
            self.stderr
        );
    }

    /// The end summary's counts.
    pub fn summary(&self) -> Summary {
        parse_summary(&self.stderr).unwrap_or_else(|| {
            panic!(
                "no summary line (`N games read: A indexed, B duplicates, C rejected`) in stderr:\n{}",
                self.stderr
            )
        })
    }
}

/// `pawndex index --db DB [extra...] FILES...`, stdin closed.
pub fn index(db: &Path, extra: &[&str], files: &[&Path]) -> Run {
    let mut cmd = index_command(db, extra, files);
    cmd.stdin(Stdio::null());
    Run::from_output(cmd.output().expect("start pawndex"))
}

/// The `Command` for `pawndex index --db DB [extra...] FILES...` (output captured).
pub fn index_command(db: &Path, extra: &[&str], files: &[&Path]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg("index").arg("--db").arg(db).args(extra).args(files);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd
}

/// `pawndex index --db DB [extra...] -` with `input` on stdin.
pub fn index_stdin(db: &Path, extra: &[&str], input: &[u8]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.arg("index").arg("--db").arg(db).args(extra).arg("-");
    run_with_stdin(cmd, input)
}

/// Runs `cmd` with `input` written to its standard input from a thread (the binary may
/// legitimately stop reading early on an error: a broken pipe is ignored).
pub fn run_with_stdin(mut cmd: Command, input: &[u8]) -> Run {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start pawndex");
    let mut stdin = child.stdin.take().expect("stdin piped");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait for pawndex");
    writer.join().expect("stdin writer");
    Run::from_output(out)
}

/// Counts from the summary line `N games read: A indexed, B duplicates, C rejected`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    pub read: u64,
    pub indexed: u64,
    pub duplicates: u64,
    pub rejected: u64,
}

/// Finds and parses the summary line in `stderr`.
pub fn parse_summary(stderr: &str) -> Option<Summary> {
    let line = stderr.lines().find(|l| l.contains(" games read: "))?;
    let number_before = |s: &str, word: &str| -> Option<u64> {
        let end = s.find(word)?;
        let digits: String = s[..end]
            .trim_end()
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit() || *c == ',')
            .filter(char::is_ascii_digit)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        digits.parse().ok()
    };
    Some(Summary {
        read: number_before(line, " games read:")?,
        indexed: number_before(line, " indexed")?,
        duplicates: number_before(line, " duplicates")?,
        rejected: number_before(line, " rejected")?,
    })
}

// ---------------------------------------------------------------------------------------------
// Reading the database
// ---------------------------------------------------------------------------------------------

pub fn open_db(path: &Path) -> Connection {
    assert!(path.exists(), "database {} was not created", path.display());
    Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()))
}

pub fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Every row of a query as generic SQLite values.
pub fn query_all(conn: &Connection, sql: &str) -> Vec<Vec<Value>> {
    let mut st = conn.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let n = st.column_count();
    st.query_map([], |r| (0..n).map(|i| r.get::<_, Value>(i)).collect())
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect::<rusqlite::Result<Vec<Vec<Value>>>>()
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// `games`, all columns but `source`, by id.
pub const GAMES_NO_SOURCE: &str = "SELECT id, event, site, date, round, white, black, result, \
     white_elo, black_elo, eco, plies, offset, fen, chess960, moves, hash FROM games ORDER BY id";

/// `games`, every column, by id.
pub const GAMES_ALL: &str = "SELECT * FROM games ORDER BY id";

/// `rejects`, all columns but `source`, by id.
pub const REJECTS_NO_SOURCE: &str =
    "SELECT id, offset, event, white, black, ply, reason FROM rejects ORDER BY id";

/// The columns of `ply_features`, in the order [`PlyRow`] holds them.
pub const PLY_COLUMNS: &str = "game_id, ply, white_pawns, black_pawns, white_islands, \
     black_islands, white_dispersion, black_dispersion, white_distortion, black_distortion, \
     white_duo, black_duo, white_trio, black_trio, white_quart, black_quart, white_bishop_pair, \
     black_bishop_pair, pieceset";

/// One row of `ply_features` (columns as in [`PLY_COLUMNS`]).
pub type PlyRow = [i64; 19];

pub const C_GAME: usize = 0;
pub const C_PLY: usize = 1;
pub const C_WP: usize = 2;
pub const C_BP: usize = 3;
pub const C_WBPAIR: usize = 16;
pub const C_BBPAIR: usize = 17;
pub const C_PIECESET: usize = 18;

fn ply_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<PlyRow> {
    let mut out = [0i64; 19];
    for (i, v) in out.iter_mut().enumerate() {
        *v = r.get(i)?;
    }
    Ok(out)
}

/// All `ply_features` rows of one game, by ply.
pub fn ply_rows_of(conn: &Connection, game_id: i64) -> Vec<PlyRow> {
    let sql = format!("SELECT {PLY_COLUMNS} FROM ply_features WHERE game_id = ?1 ORDER BY ply");
    let mut st = conn.prepare_cached(&sql).expect("prepare ply_features");
    st.query_map([game_id], ply_row)
        .expect("query ply_features")
        .collect::<rusqlite::Result<_>>()
        .expect("read ply_features")
}

/// Calls `f` for every `ply_features` row, ordered by game and ply (streamed, for big DBs).
pub fn for_each_ply_row(conn: &Connection, mut f: impl FnMut(&PlyRow)) {
    let sql = format!("SELECT {PLY_COLUMNS} FROM ply_features ORDER BY game_id, ply");
    let mut st = conn.prepare(&sql).expect("prepare ply_features");
    let mut rows = st.query([]).expect("query ply_features");
    while let Some(r) = rows.next().expect("read ply_features") {
        f(&ply_row(r).expect("ply_features row"));
    }
}

/// An order-independent digest of every `ply_features` row (the wrapping sum of a 64-bit hash
/// of each row; rows are unique by game and ply) and the row count. Streams the view without
/// sorting, so it stays cheap on big databases.
pub fn ply_features_digest(conn: &Connection) -> (u64, u64) {
    let sql = format!("SELECT {PLY_COLUMNS} FROM ply_features");
    let mut st = conn.prepare(&sql).expect("prepare ply_features");
    let mut rows = st.query([]).expect("query ply_features");
    let (mut sum, mut n) = (0u64, 0u64);
    while let Some(r) = rows.next().expect("read ply_features") {
        let row = ply_row(r).expect("ply_features row");
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for v in row {
            h ^= v as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
            h ^= h >> 29;
        }
        // Finalise (splitmix64) so that sums of similar rows do not cancel.
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        sum = sum.wrapping_add(h ^ (h >> 31));
        n += 1;
    }
    (sum, n)
}

pub fn integrity_check(conn: &Connection) -> String {
    let rows = query_all(conn, "PRAGMA integrity_check");
    rows.iter()
        .map(|r| match &r[0] {
            Value::Text(s) => s.clone(),
            other => format!("{other:?}"),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Checks that `ply_features` holds whole games only: every game in `games` has exactly the
/// rows for plies 0..=plies, each once, and no row belongs to a game that is not in `games`.
/// Streams, so it works on big databases. Returns the number of games.
pub fn check_whole_games(conn: &Connection) -> usize {
    let games: Vec<(i64, i64)> = {
        let mut st = conn
            .prepare("SELECT id, plies FROM games ORDER BY id")
            .expect("prepare games");
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query games")
            .collect::<rusqlite::Result<_>>()
            .expect("read games")
    };
    let mut per_game: BTreeMap<i64, (i64, i64, i64)> = BTreeMap::new(); // count, min, max
    let mut last: Option<(i64, i64)> = None;
    let mut st = conn
        .prepare("SELECT game_id, ply FROM ply_features ORDER BY game_id, ply")
        .expect("prepare ply_features");
    let mut rows = st.query([]).expect("query ply_features");
    while let Some(r) = rows.next().expect("read ply_features") {
        let (g, p): (i64, i64) = (r.get(0).unwrap(), r.get(1).unwrap());
        assert_ne!(last, Some((g, p)), "game {g}: ply {p} appears twice");
        last = Some((g, p));
        let e = per_game.entry(g).or_insert((0, p, p));
        e.0 += 1;
        e.1 = e.1.min(p);
        e.2 = e.2.max(p);
    }
    for &(id, plies) in &games {
        let Some(&(n, lo, hi)) = per_game.get(&id) else {
            panic!("game {id} ({plies} plies) has no ply_features rows");
        };
        assert_eq!(
            (n, lo, hi),
            (plies + 1, 0, plies),
            "game {id}: ply_features rows (count, min ply, max ply) vs games.plies = {plies}"
        );
    }
    let ids: std::collections::BTreeSet<i64> = games.iter().map(|g| g.0).collect();
    for g in per_game.keys() {
        assert!(
            ids.contains(g),
            "ply_features has rows for game {g}, which is not in games"
        );
    }
    games.len()
}

// ---------------------------------------------------------------------------------------------
// Naive reference features (spec: docs/features.md)
// ---------------------------------------------------------------------------------------------

fn has(bb: u64, file: usize, rank: usize) -> bool {
    bb & (1u64 << (rank * 8 + file)) != 0
}

fn set(bb: &mut u64, file: usize, rank: usize) {
    *bb |= 1u64 << (rank * 8 + file);
}

/// The per-side pawn features, recomputed square by square.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct NaiveSide {
    pub islands: i64,
    pub dispersion: i64,
    pub distortion: i64,
    pub duo: u64,
    pub trio: u64,
    pub quart: u64,
}

pub fn naive_islands(pawns: u64) -> i64 {
    let mut islands = 0;
    let mut previous_occupied = false;
    for file in 0..8 {
        let occupied = (0..8).any(|rank| has(pawns, file, rank));
        if occupied && !previous_occupied {
            islands += 1;
        }
        previous_occupied = occupied;
    }
    islands
}

pub fn naive_count(pawns: u64) -> i64 {
    let mut n = 0;
    for rank in 0..8 {
        for file in 0..8 {
            if has(pawns, file, rank) {
                n += 1;
            }
        }
    }
    n
}

pub fn naive_dispersion(pawns: u64) -> i64 {
    let islands = naive_islands(pawns);
    (3 * islands * islands - naive_count(pawns)).abs()
}

/// Each pawn with every square behind it on its file (towards its own first rank).
pub fn naive_rear_fill(pawns: u64, white: bool) -> u64 {
    let mut fill = 0;
    for rank in 0..8 {
        for file in 0..8 {
            if has(pawns, file, rank) {
                let behind: Vec<usize> = if white {
                    (0..=rank).collect()
                } else {
                    (rank..8).collect()
                };
                for r in behind {
                    set(&mut fill, file, r);
                }
            }
        }
    }
    fill
}

pub fn naive_distortion(pawns: u64, white: bool) -> i64 {
    let fill = naive_rear_fill(pawns, white);
    let mut n = 0;
    for rank in 0..8 {
        for file in 1..8 {
            if has(fill, file, rank) != has(fill, file - 1, rank) {
                n += 1;
            }
        }
    }
    n
}

/// Squares of pawns in horizontal runs whose length satisfies `keep`.
pub fn naive_runs(pawns: u64, keep: impl Fn(usize) -> bool) -> u64 {
    let mut out = 0;
    for rank in 0..8 {
        let mut file = 0;
        while file < 8 {
            if !has(pawns, file, rank) {
                file += 1;
                continue;
            }
            let start = file;
            while file < 8 && has(pawns, file, rank) {
                file += 1;
            }
            if keep(file - start) {
                for f in start..file {
                    set(&mut out, f, rank);
                }
            }
        }
    }
    out
}

pub fn naive_side(pawns: u64, white: bool) -> NaiveSide {
    NaiveSide {
        islands: naive_islands(pawns),
        dispersion: naive_dispersion(pawns),
        distortion: naive_distortion(pawns, white),
        duo: naive_runs(pawns, |n| n == 2),
        trio: naive_runs(pawns, |n| n == 3),
        quart: naive_runs(pawns, |n| n >= 4),
    }
}

/// Checks one `ply_features` row's structure columns against the naive recomputation from its
/// own `white_pawns` / `black_pawns`. Returns a description of the first mismatch.
pub fn check_row_features(row: &PlyRow) -> Result<(), String> {
    let w = naive_side(row[C_WP] as u64, true);
    let b = naive_side(row[C_BP] as u64, false);
    let want: [(&str, i64); 12] = [
        ("white_islands", w.islands),
        ("black_islands", b.islands),
        ("white_dispersion", w.dispersion),
        ("black_dispersion", b.dispersion),
        ("white_distortion", w.distortion),
        ("black_distortion", b.distortion),
        ("white_duo", w.duo as i64),
        ("black_duo", b.duo as i64),
        ("white_trio", w.trio as i64),
        ("black_trio", b.trio as i64),
        ("white_quart", w.quart as i64),
        ("black_quart", b.quart as i64),
    ];
    for (i, (name, value)) in want.iter().enumerate() {
        let got = row[4 + i];
        if got != *value {
            return Err(format!(
                "game {} ply {}: {name} = {got} ({got:#x}), naive recomputation from \
                 white_pawns {:#x} / black_pawns {:#x} gives {value} ({value:#x})",
                row[C_GAME], row[C_PLY], row[C_WP] as u64, row[C_BP] as u64
            ));
        }
    }
    Ok(())
}

/// Pawns of one colour, square by square.
pub fn naive_pawns(board: &Board, color: Color) -> u64 {
    let mut bb = 0;
    for sq in 0..64u32 {
        if board.piece_at(Square::new(sq))
            == Some(Piece {
                color,
                role: Role::Pawn,
            })
        {
            bb |= 1u64 << sq;
        }
    }
    bb
}

/// At least one bishop of `color` on a light square (file + rank odd) and one on a dark one.
pub fn naive_bishop_pair(board: &Board, color: Color) -> bool {
    let (mut light, mut dark) = (false, false);
    for sq in 0..64u32 {
        if board.piece_at(Square::new(sq))
            == Some(Piece {
                color,
                role: Role::Bishop,
            })
        {
            if (sq % 8 + sq / 8) % 2 == 1 {
                light = true;
            } else {
                dark = true;
            }
        }
    }
    light && dark
}

// ---------------------------------------------------------------------------------------------
// Piece-set slots, tracked naively
// ---------------------------------------------------------------------------------------------

/// The piece the standard start puts on a square.
fn standard_start_piece(sq: u32) -> Option<Piece> {
    const BACK: [Role; 8] = [
        Role::Rook,
        Role::Knight,
        Role::Bishop,
        Role::Queen,
        Role::King,
        Role::Bishop,
        Role::Knight,
        Role::Rook,
    ];
    let (file, rank) = ((sq % 8) as usize, sq / 8);
    match rank {
        0 => Some(Piece {
            color: Color::White,
            role: BACK[file],
        }),
        1 => Some(Piece {
            color: Color::White,
            role: Role::Pawn,
        }),
        6 => Some(Piece {
            color: Color::Black,
            role: Role::Pawn,
        }),
        7 => Some(Piece {
            color: Color::Black,
            role: BACK[file],
        }),
        _ => None,
    }
}

/// Square -> slot of the piece standing there.
#[derive(Clone, Debug)]
pub struct Slots {
    by_square: [Option<u32>; 64],
}

impl Slots {
    /// Slot assignment for a start position, per the spec.
    pub fn new(board: &Board, chess960: bool) -> Slots {
        let mut by_square = [None; 64];
        let mut used = [false; 32];
        // Pieces on their own side's home squares with the standard piece type (Chess960: any
        // piece of that side on its own back rank) take that square's slot.
        for sq in 0..64u32 {
            let Some(piece) = board.piece_at(Square::new(sq)) else {
                continue;
            };
            let Some(home) = standard_start_piece(sq) else {
                continue;
            };
            if home.color != piece.color {
                continue;
            }
            let back_rank = match piece.color {
                Color::White => sq / 8 == 0,
                Color::Black => sq / 8 == 7,
            };
            if home.role == piece.role || (chess960 && back_rank) {
                let slot = if sq < 16 { sq } else { sq - 32 };
                by_square[sq as usize] = Some(slot);
                used[slot as usize] = true;
            }
        }
        // Everything else: its side's lowest free slot, in increasing square order.
        for sq in 0..64u32 {
            if by_square[sq as usize].is_some() {
                continue;
            }
            let Some(piece) = board.piece_at(Square::new(sq)) else {
                continue;
            };
            let range = match piece.color {
                Color::White => 0..16,
                Color::Black => 16..32,
            };
            let slot = range
                .clone()
                .find(|&s| !used[s as usize])
                .expect("at most 16 pieces per side");
            by_square[sq as usize] = Some(slot);
            used[slot as usize] = true;
        }
        Slots { by_square }
    }

    /// Updates the slots for `m`, played in a position where `turn` is to move.
    pub fn apply(&mut self, m: &Move) {
        let idx = |sq: Square| u32::from(sq) as usize;
        match *m {
            Move::Normal { from, to, .. } => {
                let moving = self.by_square[idx(from)].take();
                self.by_square[idx(to)] = moving; // a captured piece's slot is dropped
            }
            Move::EnPassant { from, to } => {
                let captured = Square::from_coords(to.file(), from.rank());
                self.by_square[idx(captured)] = None;
                let moving = self.by_square[idx(from)].take();
                self.by_square[idx(to)] = moving;
            }
            Move::Castle { king, rook } => {
                let k = self.by_square[idx(king)].take();
                let r = self.by_square[idx(rook)].take();
                let short = rook.file() > king.file();
                let rank = king.rank();
                let (king_to, rook_to) = if short {
                    (File::G, File::F)
                } else {
                    (File::C, File::D)
                };
                self.by_square[idx(Square::from_coords(king_to, rank))] = k;
                self.by_square[idx(Square::from_coords(rook_to, rank))] = r;
            }
            Move::Put { .. } => panic!("drops are not chess"),
        }
    }

    pub fn pieceset(&self) -> u32 {
        self.by_square
            .iter()
            .flatten()
            .fold(0u32, |acc, &slot| acc | (1 << slot))
    }

    /// The tracker's own invariant: a slot exactly on every occupied square, no slot twice.
    pub fn check_matches(&self, board: &Board) -> Result<(), String> {
        let mut seen = [false; 32];
        for sq in 0..64u32 {
            let occupied = board.piece_at(Square::new(sq)).is_some();
            match self.by_square[sq as usize] {
                Some(slot) => {
                    if !occupied {
                        return Err(format!("slot {slot} on empty square {sq}"));
                    }
                    if std::mem::replace(&mut seen[slot as usize], true) {
                        return Err(format!("slot {slot} twice"));
                    }
                }
                None if occupied => return Err(format!("occupied square {sq} has no slot")),
                None => {}
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Expected per-ply values from a replay
// ---------------------------------------------------------------------------------------------

/// The per-ply values `ply_features` must hold that do not follow from the pawns alone.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PlyValues {
    pub white_pawns: u64,
    pub black_pawns: u64,
    pub white_bishop_pair: bool,
    pub black_bishop_pair: bool,
    pub pieceset: u32,
}

impl PlyValues {
    pub fn of(board: &Board, slots: &Slots) -> PlyValues {
        PlyValues {
            white_pawns: naive_pawns(board, Color::White),
            black_pawns: naive_pawns(board, Color::Black),
            white_bishop_pair: naive_bishop_pair(board, Color::White),
            black_bishop_pair: naive_bishop_pair(board, Color::Black),
            pieceset: slots.pieceset(),
        }
    }

    /// Compares with a `ply_features` row; returns the first mismatch.
    pub fn check_row(&self, row: &PlyRow) -> Result<(), String> {
        let want: [(&str, usize, i64); 5] = [
            ("white_pawns", C_WP, self.white_pawns as i64),
            ("black_pawns", C_BP, self.black_pawns as i64),
            (
                "white_bishop_pair",
                C_WBPAIR,
                i64::from(self.white_bishop_pair),
            ),
            (
                "black_bishop_pair",
                C_BBPAIR,
                i64::from(self.black_bishop_pair),
            ),
            ("pieceset", C_PIECESET, i64::from(self.pieceset)),
        ];
        for (name, col, value) in want {
            if row[col] != value {
                return Err(format!(
                    "game {} ply {}: {name} = {} ({:#x}), independent replay gives {value} ({:#x})",
                    row[C_GAME], row[C_PLY], row[col], row[col] as u64, value as u64
                ));
            }
        }
        Ok(())
    }
}

/// A game replayed move by move, with the values for plies 0..=n.
#[derive(Clone, Debug)]
pub struct Replay {
    pub plies: Vec<PlyValues>,
    pub final_pos: Chess,
}

/// Follows `moves` from `start`, computing every ply's values with naive slot tracking.
pub fn replay_moves(start: &Chess, chess960: bool, moves: &[Move]) -> Result<Replay, String> {
    let mut pos = start.clone();
    let mut slots = Slots::new(pos.board(), chess960);
    let mut plies = vec![PlyValues::of(pos.board(), &slots)];
    for (i, m) in moves.iter().enumerate() {
        if !pos.is_legal(*m) {
            return Err(format!("ply {}: {m:?} is not legal", i + 1));
        }
        slots.apply(m);
        pos.play_unchecked(*m);
        slots
            .check_matches(pos.board())
            .map_err(|e| format!("ply {}: slot tracker broke: {e}", i + 1))?;
        plies.push(PlyValues::of(pos.board(), &slots));
    }
    Ok(Replay {
        plies,
        final_pos: pos,
    })
}

/// The 16-bit code of a move as `games.moves` stores it: `from | to << 6 | promotion << 12`,
/// castling as king square to rook square, promotion N=2 B=3 R=4 Q=5.
pub fn move_code(m: &Move) -> u16 {
    let (from, to, promotion) = match *m {
        Move::Normal {
            from,
            to,
            promotion,
            ..
        } => (from, to, promotion),
        Move::EnPassant { from, to } => (from, to, None),
        Move::Castle { king, rook } => (king, rook, None),
        Move::Put { .. } => panic!("drops are not chess"),
    };
    let promo: u16 = match promotion {
        None => 0,
        Some(Role::Knight) => 2,
        Some(Role::Bishop) => 3,
        Some(Role::Rook) => 4,
        Some(Role::Queen) => 5,
        Some(r) => panic!("promotion to {r:?}"),
    };
    (u32::from(from) as u16) | ((u32::from(to) as u16) << 6) | (promo << 12)
}

/// The `games.moves` blob for a list of moves.
pub fn moves_blob(moves: &[Move]) -> Vec<u8> {
    moves
        .iter()
        .flat_map(|m| move_code(m).to_le_bytes())
        .collect()
}

/// The start position as stored in a `games` row.
pub fn start_position(fen: Option<&str>, chess960: bool) -> Result<Chess, String> {
    match fen {
        None => Ok(Chess::default()),
        Some(text) => {
            let mode = if chess960 {
                CastlingMode::Chess960
            } else {
                CastlingMode::Standard
            };
            Fen::from_ascii(text.as_bytes())
                .map_err(|e| format!("stored FEN {text:?}: {e}"))?
                .into_position(mode)
                .map_err(|e| format!("stored FEN {text:?}: {e}"))
        }
    }
}

/// Decodes a `games.moves` blob against the legal moves of each position.
pub fn decode_moves(start: &Chess, blob: &[u8]) -> Result<Vec<Move>, String> {
    if !blob.len().is_multiple_of(2) {
        return Err(format!("moves blob has odd length {}", blob.len()));
    }
    let mut pos = start.clone();
    let mut out = Vec::with_capacity(blob.len() / 2);
    for (i, pair) in blob.chunks_exact(2).enumerate() {
        let code = u16::from_le_bytes([pair[0], pair[1]]);
        let matching: Vec<Move> = pos
            .legal_moves()
            .into_iter()
            .filter(|m| move_code(m) == code)
            .collect();
        let [m] = matching[..] else {
            return Err(format!(
                "ply {}: code {code:#06x} matches {} legal moves in {}",
                i + 1,
                matching.len(),
                Fen::from_position(&pos, EnPassantMode::Legal)
            ));
        };
        pos.play_unchecked(m);
        out.push(m);
    }
    Ok(out)
}

/// A stored game, as far as the verification needs it.
#[derive(Clone, Debug)]
pub struct StoredGame {
    pub id: i64,
    pub source: String,
    pub offset: i64,
    pub event: Option<String>,
    pub white: Option<String>,
    pub plies: i64,
    pub fen: Option<String>,
    pub chess960: bool,
    pub moves: Vec<u8>,
}

pub fn stored_games(conn: &Connection) -> Vec<StoredGame> {
    let mut st = conn
        .prepare(
            "SELECT id, source, offset, event, white, plies, fen, chess960, moves
             FROM games ORDER BY id",
        )
        .expect("prepare games");
    st.query_map([], |r| {
        Ok(StoredGame {
            id: r.get(0)?,
            source: r.get(1)?,
            offset: r.get(2)?,
            event: r.get(3)?,
            white: r.get(4)?,
            plies: r.get(5)?,
            fen: r.get(6)?,
            chess960: r.get::<_, i64>(7)? != 0,
            moves: r.get(8)?,
        })
    })
    .expect("query games")
    .collect::<rusqlite::Result<_>>()
    .expect("read games")
}

/// Replays a stored game independently from `games.fen` / `games.chess960` / `games.moves`.
pub fn replay_stored(g: &StoredGame) -> Result<Replay, String> {
    let start = start_position(g.fen.as_deref(), g.chess960)?;
    let moves = decode_moves(&start, &g.moves)?;
    if moves.len() as i64 != g.plies {
        return Err(format!(
            "games.plies = {} but the moves blob holds {} moves",
            g.plies,
            moves.len()
        ));
    }
    replay_moves(&start, g.chess960, &moves)
}

/// Checks a game's `ply_features` rows: one per ply 0..=plies, pawns / bishop pairs /
/// pieceset as `want` says, structure features as the naive recomputation says.
pub fn check_game_rows(rows: &[PlyRow], game_id: i64, want: &[PlyValues]) -> Result<(), String> {
    let plies: Vec<i64> = rows.iter().map(|r| r[C_PLY]).collect();
    let expected: Vec<i64> = (0..want.len() as i64).collect();
    if plies != expected {
        return Err(format!(
            "game {game_id}: ply_features has plies {plies:?}, expected 0..={}",
            want.len() - 1
        ));
    }
    for (row, values) in rows.iter().zip(want) {
        values.check_row(row)?;
        check_row_features(row)?;
    }
    Ok(())
}

/// The full independent verification of a database: every game replayed from its stored moves
/// and compared with its `ply_features` rows; no rows for games that do not exist; every row's
/// structure features recomputed naively. Returns the replays by game id.
pub fn verify_db(conn: &Connection) -> BTreeMap<i64, (StoredGame, Replay)> {
    let orphans = count(
        conn,
        "SELECT count(*) FROM ply_features WHERE game_id NOT IN (SELECT id FROM games)",
    );
    assert_eq!(
        orphans, 0,
        "ply_features rows for games that are not in games"
    );
    let mut out = BTreeMap::new();
    let mut problems = Vec::new();
    for g in stored_games(conn) {
        let what = format!("game {} ({} @ {}, {:?})", g.id, g.source, g.offset, g.event);
        match replay_stored(&g) {
            Ok(replay) => {
                let rows = ply_rows_of(conn, g.id);
                if let Err(e) = check_game_rows(&rows, g.id, &replay.plies) {
                    problems.push(format!("{what}: {e}"));
                }
                out.insert(g.id, (g, replay));
            }
            Err(e) => problems.push(format!("{what}: cannot replay the stored game: {e}")),
        }
    }
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    out
}

// ---------------------------------------------------------------------------------------------
// tests/fixtures/expected.json
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
pub struct ExpectedGame {
    pub file: String,
    pub index: usize,
    pub plies: usize,
    pub white: String,
    pub black: String,
    pub chess960: bool,
    pub final_fen: String,
    pub white_pawns: Vec<u64>,
    pub black_pawns: Vec<u64>,
}

/// The text after `"key": ` in a one-line JSON object.
fn json_after<'a>(line: &'a str, key: &str) -> &'a str {
    let pat = format!("\"{key}\":");
    let at = line
        .find(&pat)
        .unwrap_or_else(|| panic!("expected.json: no {key:?} in {line:.80}"));
    line[at + pat.len()..].trim_start()
}

fn json_str(line: &str, key: &str) -> String {
    let rest = json_after(line, key);
    let mut chars = rest.strip_prefix('"').expect("string value").chars();
    let mut out = String::new();
    loop {
        match chars.next().expect("unterminated string") {
            '"' => return out,
            '\\' => match chars.next().expect("escape") {
                'u' => {
                    let hex: String = chars.by_ref().take(4).collect();
                    let c = u32::from_str_radix(&hex, 16).expect("\\u escape");
                    out.push(char::from_u32(c).expect("BMP char"));
                }
                'n' => out.push('\n'),
                't' => out.push('\t'),
                c => out.push(c),
            },
            c => out.push(c),
        }
    }
}

fn json_number(line: &str, key: &str) -> u64 {
    let rest = json_after(line, key);
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().expect("number")
}

fn json_bool(line: &str, key: &str) -> bool {
    let rest = json_after(line, key);
    if rest.starts_with("true") {
        true
    } else if rest.starts_with("false") {
        false
    } else {
        panic!("{key}: not a bool")
    }
}

fn json_numbers(line: &str, key: &str) -> Vec<u64> {
    let rest = json_after(line, key).strip_prefix('[').expect("array");
    let end = rest.find(']').expect("array end");
    rest[..end]
        .split(',')
        .map(|s| s.trim().parse::<u64>().expect("u64 in array"))
        .collect()
}

/// Reads `tests/fixtures/expected.json` (one object per line, as make_expected.py writes it).
pub fn expected_games() -> Vec<ExpectedGame> {
    let text = std::fs::read_to_string(root_path("tests/fixtures/expected.json"))
        .expect("read expected.json");
    let games: Vec<ExpectedGame> = text
        .lines()
        .filter(|l| l.trim_start().starts_with('{'))
        .map(|l| ExpectedGame {
            file: json_str(l, "file"),
            index: json_number(l, "index") as usize,
            plies: json_number(l, "plies") as usize,
            white: json_str(l, "white"),
            black: json_str(l, "black"),
            chess960: json_bool(l, "chess960"),
            final_fen: json_str(l, "final_fen"),
            white_pawns: json_numbers(l, "white_pawns_per_ply"),
            black_pawns: json_numbers(l, "black_pawns_per_ply"),
        })
        .collect();
    // The file is a list; make sure no object was missed by the line-based reading.
    assert_eq!(
        games.len(),
        text.matches("\"file\":").count(),
        "expected.json: every record read"
    );
    for g in &games {
        assert_eq!(g.white_pawns.len(), g.plies + 1, "{} #{}", g.file, g.index);
        assert_eq!(g.black_pawns.len(), g.plies + 1, "{} #{}", g.file, g.index);
    }
    games
}

// ---------------------------------------------------------------------------------------------
// Seeded random games
// ---------------------------------------------------------------------------------------------

/// SplitMix64: small, seeded, good enough to pick moves.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// The seed for random tests: `PAWNDEX_TEST_SEED` when set, else `default`.
pub fn test_seed(default: u64) -> u64 {
    match std::env::var("PAWNDEX_TEST_SEED") {
        Ok(s) => s.trim().parse().expect("PAWNDEX_TEST_SEED must be a u64"),
        Err(_) => default,
    }
}

/// A generated game: its start, moves, SAN and the values for every ply.
#[derive(Clone, Debug)]
pub struct RandomGame {
    pub event: String,
    /// `Some` for FEN starts.
    pub fen: Option<String>,
    pub chess960: bool,
    pub start: Chess,
    pub moves: Vec<Move>,
    pub sans: Vec<String>,
    /// Legal alternatives at some plies, written as variations (never indexed).
    pub variations: BTreeMap<usize, String>,
    pub plies: Vec<PlyValues>,
}

/// A random Chess960 back rank (bishops on opposite colours, king between the rooks).
pub fn random_chess960_backrank(rng: &mut Rng) -> [char; 8] {
    let mut rank = [' '; 8];
    let dark = [0usize, 2, 4, 6];
    let light = [1usize, 3, 5, 7];
    rank[*rng.pick(&dark)] = 'B';
    rank[*rng.pick(&light)] = 'B';
    for piece in ['Q', 'N', 'N'] {
        let free: Vec<usize> = (0..8).filter(|&i| rank[i] == ' ').collect();
        rank[*rng.pick(&free)] = piece;
    }
    let free: Vec<usize> = (0..8).filter(|&i| rank[i] == ' ').collect();
    rank[free[0]] = 'R';
    rank[free[1]] = 'K';
    rank[free[2]] = 'R';
    rank
}

/// Which kind of start a generated game has.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StartKind {
    Standard,
    /// A FEN tag holding a position reached by random play (standard chess).
    MidgameFen,
    /// A random Chess960 start position.
    Chess960,
}

/// Picks a move, biased towards captures, promotions, castling and pawn moves so that random
/// games reach promotions, en passant and bare boards.
fn pick_move(rng: &mut Rng, legal: &[Move]) -> Move {
    let special: Vec<Move> = legal
        .iter()
        .copied()
        .filter(|m| {
            m.is_capture()
                || m.is_promotion()
                || matches!(m, Move::Castle { .. } | Move::EnPassant { .. })
        })
        .collect();
    let pawn: Vec<Move> = legal
        .iter()
        .copied()
        .filter(|m| m.role() == Role::Pawn)
        .collect();
    match rng.below(10) {
        0..=4 if !special.is_empty() => *rng.pick(&special),
        5..=6 if !pawn.is_empty() => *rng.pick(&pawn),
        _ => *rng.pick(legal),
    }
}

/// Generates one game of up to `max_plies` random legal moves.
pub fn random_game(rng: &mut Rng, event: String, kind: StartKind, max_plies: usize) -> RandomGame {
    random_game_with(rng, event, kind, max_plies, true)
}

/// [`random_game`]; without `values` the per-ply values are not computed (`plies` is empty).
pub fn random_game_with(
    rng: &mut Rng,
    event: String,
    kind: StartKind,
    max_plies: usize,
    values: bool,
) -> RandomGame {
    let (start, fen, chess960) = match kind {
        StartKind::Standard => (Chess::default(), None, false),
        StartKind::Chess960 => {
            let back: String = random_chess960_backrank(rng).iter().collect();
            let text = format!(
                "{}/pppppppp/8/8/8/8/PPPPPPPP/{} w KQkq - 0 1",
                back.to_lowercase(),
                back
            );
            let pos: Chess = Fen::from_ascii(text.as_bytes())
                .unwrap()
                .into_position(CastlingMode::Chess960)
                .unwrap();
            (pos, Some(text), true)
        }
        StartKind::MidgameFen => {
            let mut pos = Chess::default();
            let warmup = 4 + rng.below(60);
            for _ in 0..warmup {
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let m = pick_move(rng, &legal);
                pos.play_unchecked(m);
            }
            if pos.legal_moves().is_empty() {
                pos = Chess::default();
            }
            let text = Fen::from_position(&pos, EnPassantMode::Legal).to_string();
            (pos, Some(text), false)
        }
    };
    let mut pos = start.clone();
    let mut slots = Slots::new(pos.board(), chess960);
    let mut plies = Vec::new();
    if values {
        plies.push(PlyValues::of(pos.board(), &slots));
    }
    let mut moves = Vec::new();
    let mut sans = Vec::new();
    let mut variations = BTreeMap::new();
    let n = rng.below(max_plies + 1);
    for ply in 0..n {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let m = pick_move(rng, &legal);
        if legal.len() > 1 && rng.below(25) == 0 {
            // A sideline from the same position: another legal move (and maybe its reply).
            let other = *legal.iter().find(|&&x| x != m).unwrap();
            let mut side = pos.clone();
            let mut text = SanPlus::from_move_and_play_unchecked(&mut side, other).to_string();
            if let Some(&reply) = side.legal_moves().first() {
                text += " ";
                text += &SanPlus::from_move_and_play_unchecked(&mut side, reply).to_string();
            }
            variations.insert(ply, text);
        }
        sans.push(SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string());
        moves.push(m);
        if values {
            slots.apply(&m);
            slots
                .check_matches(pos.board())
                .expect("generator slot tracking");
            plies.push(PlyValues::of(pos.board(), &slots));
        }
    }
    RandomGame {
        event,
        fen,
        chess960,
        start,
        moves,
        sans,
        variations,
        plies,
    }
}

impl RandomGame {
    /// The game as PGN text (tags, movetext with numbers, sometimes comments, NAGs and
    /// variations), ending with a blank line.
    pub fn to_pgn(&self, rng: &mut Rng) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "[Event \"{}\"]", self.event);
        s += "[Site \"Random\"]\n[Date \"2024.02.03\"]\n[Round \"-\"]\n";
        s += "[White \"Random, White\"]\n[Black \"Random, Black\"]\n[Result \"*\"]\n";
        if self.chess960 {
            s += "[Variant \"Chess960\"]\n";
        }
        if let Some(fen) = &self.fen {
            let _ = write!(s, "[SetUp \"1\"]\n[FEN \"{fen}\"]\n");
        }
        s += "\n";
        let black_first = self.start.turn() == Color::Black;
        let mut number = u32::from(self.start.fullmoves());
        let mut line = String::new();
        let push = |token: &str, s: &mut String, line: &mut String| {
            if !line.is_empty() && line.len() + 1 + token.len() > 79 {
                s.push_str(line);
                s.push('\n');
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(token);
        };
        for (i, san) in self.sans.iter().enumerate() {
            let white_moves = (i % 2 == 0) != black_first;
            if white_moves {
                push(&format!("{number}."), &mut s, &mut line);
            } else if i == 0 {
                push(&format!("{number}..."), &mut s, &mut line);
            }
            push(san, &mut s, &mut line);
            if let Some(var) = self.variations.get(&i) {
                // The sideline replaces this move; it is written after it, as in PGN.
                let label = if white_moves {
                    format!("({number}.")
                } else {
                    format!("({number}...")
                };
                push(&label, &mut s, &mut line);
                push(&format!("{var})"), &mut s, &mut line);
            }
            match rng.below(40) {
                0 => push(
                    "{a comment (with parens) [and brackets]}",
                    &mut s,
                    &mut line,
                ),
                1 => push("$1", &mut s, &mut line),
                _ => {}
            }
            if !white_moves {
                number += 1;
            }
        }
        push("*", &mut s, &mut line);
        s.push_str(&line);
        s.push_str("\n\n");
        s
    }
}

/// `n` random games (mostly standard starts, some Chess960 and mid-game FEN starts), and the
/// whole collection as PGN. Events are `"{prefix} {i}"`, unique.
pub fn random_collection(
    seed: u64,
    n: usize,
    max_plies: usize,
    prefix: &str,
) -> (Vec<RandomGame>, String) {
    let mut rng = Rng::new(seed);
    let mut games = Vec::with_capacity(n);
    let mut pgn = String::new();
    for i in 0..n {
        let kind = match rng.below(10) {
            0 => StartKind::Chess960,
            1 => StartKind::MidgameFen,
            _ => StartKind::Standard,
        };
        let g = random_game(&mut rng, format!("{prefix} {i}"), kind, max_plies);
        pgn += &g.to_pgn(&mut rng);
        games.push(g);
    }
    (games, pgn)
}

/// Concatenates PGN files so each starts on a fresh line after a blank line.
pub fn concat_pgn(parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in parts {
        out.extend_from_slice(p);
        while !out.ends_with(b"\n\n") {
            out.push(b'\n');
        }
    }
    out
}

/// Board and side to move of a FEN (the first two fields).
pub fn fen_board_and_turn(fen: &str) -> String {
    fen.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
}

pub fn fen_of(pos: &Chess) -> String {
    Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

/// Like [`random_collection`], but only the PGN text (for big files: nothing else is kept).
/// Every `bad_every`-th record (when non-zero) is a game with an illegal move instead.
pub fn random_pgn(seed: u64, n: usize, max_plies: usize, prefix: &str, bad_every: usize) -> String {
    let mut rng = Rng::new(seed);
    let mut pgn = String::with_capacity(n * 700);
    for i in 0..n {
        if bad_every != 0 && i % bad_every == bad_every - 1 {
            let _ = write!(
                pgn,
                "[Event \"{prefix} {i}\"]\n[Result \"*\"]\n\n1. e4 e5 2. Ke3 Nc6 *\n\n"
            );
            continue;
        }
        let kind = match rng.below(10) {
            0 => StartKind::Chess960,
            1 => StartKind::MidgameFen,
            _ => StartKind::Standard,
        };
        let g = random_game_with(&mut rng, format!("{prefix} {i}"), kind, max_plies, false);
        pgn += &g.to_pgn(&mut rng);
    }
    pgn
}

/// The Isolani of issue 37 (a Panov, after 7... Nxd5), as pawns.
pub const ISOLANI_FEN: &str = "8/pp3ppp/4p3/8/3P4/8/PP3PPP/8";
/// Isolani games that Black leaves by piece captures on d4 (Nxd4, Bxd4, Qxd4, Rxd4) or by a
/// pawn move (...b6), and White by d5 (tests/serve_api.rs, tests/browser.rs).
pub const ISOLANI_PGN: &str = "\
[Event \"I1\"]\n[Result \"0-1\"]\n\n1. e4 c6 2. d4 d5 3. exd5 cxd5 4. c4 Nf6 5. Nc3 e6 6. Nf3 Be7 7. cxd5 Nxd5 8. Bd3 Nc6 9. O-O O-O 10. Re1 Nxd4 11. Nxd4 Nxc3 12. bxc3 Qxd4 0-1\n\n\
[Event \"I2\"]\n[Result \"1-0\"]\n\n1. e4 c6 2. d4 d5 3. exd5 cxd5 4. c4 Nf6 5. Nc3 e6 6. Nf3 Be7 7. cxd5 Nxd5 8. Bd3 Nc6 9. O-O O-O 10. Re1 Bf6 11. Be4 Bxd4 12. Nxd4 Nxd4 1-0\n\n\
[Event \"I3\"]\n[Result \"1-0\"]\n\n1. e4 c6 2. d4 d5 3. exd5 cxd5 4. c4 Nf6 5. Nc3 e6 6. Nf3 Be7 7. cxd5 Nxd5 8. Bd3 Nc6 9. O-O O-O 10. Re1 Nf6 11. Bg5 Qxd4 12. Nxd4 Nxd4 1-0\n\n\
[Event \"I4\"]\n[Result \"1/2-1/2\"]\n\n1. e4 c6 2. d4 d5 3. exd5 cxd5 4. c4 Nf6 5. Nc3 e6 6. Nf3 Be7 7. cxd5 Nxd5 8. Bd3 Nc6 9. O-O O-O 10. Re1 Nf6 11. Bg5 b6 12. Rc1 Bb7 1/2-1/2\n\n\
[Event \"I5\"]\n[Result \"1-0\"]\n\n1. e4 c6 2. d4 d5 3. exd5 cxd5 4. c4 Nf6 5. Nc3 e6 6. Nf3 Be7 7. cxd5 Nxd5 8. Bd3 Nc6 9. O-O O-O 10. Re1 Nf6 11. d5 exd5 12. Nxd5 Nxd5 1-0\n\n\
[Event \"I6\"]\n[Result \"0-1\"]\n\n1. e4 c6 2. d4 d5 3. exd5 cxd5 4. c4 Nf6 5. Nc3 e6 6. Nf3 Be7 7. cxd5 Nxd5 8. Bd3 Nc6 9. O-O O-O 10. Re1 Nf6 11. Bg5 Qb6 12. Bxf6 Bxf6 13. Be4 Rd8 14. Qd2 Rxd4 0-1\n";

/// A shard of the master corpus in ../shared (`masters-1.pgn.zst`…), or `None` after saying
/// loudly that the test is skipped; with `CI=true` a missing shard fails the test.
pub fn corpus_shard(name: &str) -> Option<PathBuf> {
    let p = root_path(&format!("../shared/corpus/{name}"));
    if p.is_file() {
        return Some(p);
    }
    assert!(
        std::env::var("CI").map_or(true, |v| v != "true"),
        "{} is missing and CI=true: ../shared must be beside the repository",
        p.display()
    );
    eprintln!(
        "SKIPPED: {} does not exist (put ../shared beside the repository)",
        p.display()
    );
    None
}

/// Games `from..to` of a zstd-compressed PGN shard (games start at `[Event "` lines), as text.
pub fn shard_games(shard: &Path, from: usize, to: usize) -> Vec<u8> {
    use std::io::Read;
    let mut text = Vec::new();
    zstd::Decoder::new(std::fs::File::open(shard).unwrap())
        .unwrap()
        .read_to_end(&mut text)
        .unwrap();
    let starts: Vec<usize> = text
        .windows(8)
        .enumerate()
        .filter(|(i, w)| *w == b"[Event \"" && (*i == 0 || text[i - 1] == b'\n'))
        .map(|(i, _)| i)
        .take(to + 1)
        .collect();
    text[starts[from]..starts[to]].to_vec()
}
