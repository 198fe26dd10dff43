//! Helpers for the `query` and `find` end-to-end tests: run the real binary, build a fixture
//! database in a temp dir, read `ply_features` with rusqlite, and replay PGN independently with
//! pgn-reader + shakmaty. Nothing here calls the pawndex library.
//!
//! Fixtures: `examples/sample.pgn`, `tests/fixtures/edge.pgn`, `tests/fixtures/chess960.pgn`
//! and `tests/fixtures/structures.pgn` (nine short games, one reaching each named structure:
//! Carlsbad, reversed Carlsbad, hanging pawns and isolated queen pawns of each colour,
//! Stonewalls, Maroczy binds of each colour; one White name holds a quote and a backslash).

#![allow(dead_code)] // each test crate uses a different subset

use std::collections::BTreeMap;
use std::io::Write as _;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pgn_reader::{RawTag, Reader, SanPlus, Skip, Visitor};
use rusqlite::{Connection, OpenFlags};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position};

pub use super::{BIN, ROOT, root_path};

pub const FIXTURES: [&str; 4] = [
    "examples/sample.pgn",
    "tests/fixtures/edge.pgn",
    "tests/fixtures/chess960.pgn",
    "tests/fixtures/structures.pgn",
];

/// What one run of the binary did.
#[derive(Debug)]
pub struct Out {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    /// Panics unless the exit code is `code` (and nothing panicked); returns stdout.
    pub fn expect(&self, code: i32, what: &str) -> &str {
        assert_eq!(
            self.code,
            Some(code),
            "{what}: exit code\n--- stderr ---\n{}\n--- stdout ---\n{}",
            self.stderr,
            self.stdout
        );
        assert!(
            !self.stderr.contains("panicked"),
            "{what}: panic\n{}",
            self.stderr
        );
        &self.stdout
    }

    pub fn ok(&self, what: &str) -> &str {
        self.expect(0, what)
    }
}

/// Runs `pawndex ARGS` in `dir`.
pub fn pawndex_in(dir: &Path, args: &[&str]) -> Out {
    pawndex_env(dir, args, &[])
}

/// Runs `pawndex ARGS` in `dir` with extra environment variables.
pub fn pawndex_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let out = Command::new(BIN)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run pawndex");
    Out {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub fn pawndex(args: &[&str]) -> Out {
    pawndex_in(Path::new(ROOT), args)
}

/// A database indexed from PGN files, in its own temp dir.
pub struct Db {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl Db {
    pub fn index(files: &[PathBuf]) -> Db {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fixtures.db");
        let mut args = vec![
            "index".to_string(),
            "--quiet".to_string(),
            "--db".to_string(),
            path.display().to_string(),
        ];
        args.extend(files.iter().map(|f| f.display().to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        pawndex(&args).ok("index");
        Db { dir, path }
    }

    /// The four fixture files.
    pub fn fixtures() -> Db {
        Db::index(&FIXTURES.map(root_path))
    }

    /// The fixtures, where each named structure is reached, then 400 random games (ids 32 to
    /// 431), where pawn structures wander and nearly every named structure is nearly reached
    /// (one condition off).
    pub fn fixtures_and_random_games() -> Db {
        let dir = tempfile::tempdir().unwrap();
        let random = write_file(
            dir.path(),
            "random.pgn",
            &random_games_pgn(0x9e37_79b9_7f4a_7c15, 400),
        );
        let mut files: Vec<PathBuf> = FIXTURES.iter().map(|f| root_path(f)).collect();
        files.push(random);
        Db::index(&files)
    }

    pub fn arg(&self) -> String {
        self.path.display().to_string()
    }

    /// Appends 12 random games, few enough to stay in the unmerged tail (above
    /// `derived.through`, out of `set_games`); returns the first game id of the tail, after
    /// checking that the tail is not empty.
    pub fn append_unmerged(&self) -> i64 {
        let more = write_file(
            self.dir.path(),
            "more.pgn",
            &random_games_pgn(0x5151_2024, 12),
        );
        let more = more.display().to_string();
        pawndex(&["index", "--quiet", "--db", &self.arg(), &more]).ok("append");
        let (tail_from, max_id): (i64, i64) = self
            .conn()
            .query_row(
                "SELECT (SELECT through FROM derived) + 1, (SELECT max(id) FROM games)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert!(
            tail_from <= max_id,
            "the append was merged: nothing tests the tail"
        );
        tail_from
    }

    /// Runs `pawndex COMMAND --db THIS ARGS`.
    pub fn run(&self, command: &str, args: &[&str]) -> Out {
        let db = self.arg();
        let mut all = vec![command, "--db", db.as_str()];
        all.extend_from_slice(args);
        pawndex(&all)
    }

    /// [`Db::run`] with extra environment variables.
    pub fn run_env(&self, command: &str, args: &[&str], env: &[(&str, &str)]) -> Out {
        let db = self.arg();
        let mut all = vec![command, "--db", db.as_str()];
        all.extend_from_slice(args);
        pawndex_env(Path::new(ROOT), &all, env)
    }

    pub fn conn(&self) -> Connection {
        Connection::open_with_flags(&self.path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap()
    }

    /// Every row of `ply_features`, keyed by (game_id, ply).
    pub fn ply_features(&self) -> BTreeMap<(i64, i64), Features> {
        let conn = self.conn();
        let mut st = conn
            .prepare(
                "SELECT game_id, ply, white_pawns, black_pawns, white_islands, black_islands,
                        white_dispersion, black_dispersion, white_distortion, black_distortion,
                        white_duo, black_duo, white_trio, black_trio, white_quart, black_quart,
                        white_bishop_pair, black_bishop_pair
                 FROM ply_features",
            )
            .unwrap();
        let rows = st
            .query_map([], |r| {
                let side = |o: usize| -> rusqlite::Result<Side> {
                    Ok(Side {
                        pawns: r.get::<_, i64>(2 + o)? as u64,
                        islands: r.get(4 + o)?,
                        dispersion: r.get(6 + o)?,
                        distortion: r.get(8 + o)?,
                        duo: r.get(10 + o)?,
                        trio: r.get(12 + o)?,
                        quart: r.get(14 + o)?,
                        bishop_pair: r.get::<_, i64>(16 + o)? == 1,
                    })
                };
                Ok((
                    (r.get(0)?, r.get(1)?),
                    Features {
                        white: side(0)?,
                        black: side(1)?,
                    },
                ))
            })
            .unwrap();
        rows.map(Result::unwrap).collect()
    }
}

#[derive(Copy, Clone, Debug)]
pub struct Side {
    pub pawns: u64,
    pub islands: i64,
    pub dispersion: i64,
    pub distortion: i64,
    pub duo: i64,
    pub trio: i64,
    pub quart: i64,
    pub bishop_pair: bool,
}

#[derive(Copy, Clone, Debug)]
pub struct Features {
    pub white: Side,
    pub black: Side,
}

/// Is there a pawn in `pawns` on this square ("d4")?
pub fn on(pawns: u64, square: &str) -> bool {
    let b = square.as_bytes();
    let file = u32::from(b[0] - b'a');
    let rank = u32::from(b[1] - b'1');
    pawns & (1u64 << (rank * 8 + file)) != 0
}

/// Is there a pawn in `pawns` anywhere on this file ('d')?
pub fn on_file(pawns: u64, file: char) -> bool {
    (1..=8).any(|rank| on(pawns, &format!("{file}{rank}")))
}

/// Parses CSV output into records (header included).
pub fn csv_records(text: &str) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}

/// (game_id, ply) pairs of CSV output with those two first columns, in output order.
pub fn positions_of_csv(text: &str) -> Vec<(i64, i64)> {
    let records = csv_records(text);
    assert_eq!(&records[0][..2], ["game_id", "ply"], "CSV header");
    records[1..]
        .iter()
        .map(|r| (r[0].parse().unwrap(), r[1].parse().unwrap()))
        .collect()
}

/// Rows of a SQL query as (game_id, ply), in order.
pub fn positions_of_sql(conn: &Connection, sql: &str) -> Vec<(i64, i64)> {
    let mut st = conn.prepare(sql).unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Independent replay of PGN text
// ---------------------------------------------------------------------------------------------

/// A game read from PGN by pgn-reader: its tags (name -> value) and mainline SAN.
#[derive(Clone, Debug, Default)]
pub struct PgnGame {
    pub tags: Vec<(String, String)>,
    pub sans: Vec<String>,
    /// Text of the comments in the mainline, each with the number of half-moves before it.
    pub comments: Vec<(usize, String)>,
}

impl PgnGame {
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// FEN after every ply (index 0 = the start), replayed with shakmaty.
    pub fn fens(&self) -> Vec<String> {
        let chess960 = self.tag("Variant").is_some_and(|v| {
            v.to_ascii_lowercase()
                .replace([' ', '-'], "")
                .contains("960")
                || v.eq_ignore_ascii_case("fischerandom")
        });
        let mode = if chess960 {
            CastlingMode::Chess960
        } else {
            CastlingMode::Standard
        };
        let mut pos: Chess = match self.tag("FEN") {
            Some(fen) => {
                let fen = Fen::from_ascii(fen.as_bytes()).unwrap();
                // A castling field only Chess960 allows makes a Chess960 game (as in pawndex).
                match fen.clone().into_position(mode) {
                    Ok(pos) => pos,
                    Err(_) => fen.into_position(CastlingMode::Chess960).unwrap(),
                }
            }
            None => Chess::default(),
        };
        let mut fens = vec![Fen::from_position(&pos, EnPassantMode::Legal).to_string()];
        for san in &self.sans {
            let m = san
                .parse::<shakmaty::san::San>()
                .unwrap()
                .to_move(&pos)
                .unwrap_or_else(|e| panic!("{san}: {e}"));
            pos.play_unchecked(m);
            fens.push(Fen::from_position(&pos, EnPassantMode::Legal).to_string());
        }
        fens
    }
}

struct Collect;

impl Visitor for Collect {
    type Tags = Vec<(String, String)>;
    type Movetext = PgnGame;
    type Output = PgnGame;

    fn begin_tags(&mut self) -> ControlFlow<PgnGame, Self::Tags> {
        ControlFlow::Continue(Vec::new())
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<PgnGame> {
        tags.push((
            String::from_utf8_lossy(name).into_owned(),
            value.decode_utf8_lossy().into_owned(),
        ));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<PgnGame, PgnGame> {
        ControlFlow::Continue(PgnGame {
            tags,
            ..PgnGame::default()
        })
    }

    fn san(&mut self, game: &mut PgnGame, san: SanPlus) -> ControlFlow<PgnGame> {
        game.sans.push(san.san.to_string());
        ControlFlow::Continue(())
    }

    fn comment(
        &mut self,
        game: &mut PgnGame,
        comment: pgn_reader::RawComment<'_>,
    ) -> ControlFlow<PgnGame> {
        let text = String::from_utf8_lossy(comment.as_bytes())
            .trim()
            .to_string();
        game.comments.push((game.sans.len(), text));
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _game: &mut PgnGame) -> ControlFlow<PgnGame, Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, game: PgnGame) -> PgnGame {
        game
    }
}

/// Every game of a PGN text.
pub fn read_pgn(text: &str) -> Vec<PgnGame> {
    let mut reader = Reader::new(text.as_bytes());
    let mut games = Vec::new();
    while let Some(g) = reader.read_game(&mut Collect).unwrap() {
        games.push(g);
    }
    games
}

/// Every game of the fixture files, in the order `pawndex index` stores them (ids 1, 2, …).
pub fn fixture_games() -> Vec<PgnGame> {
    FIXTURES
        .iter()
        .flat_map(|f| read_pgn(&std::fs::read_to_string(root_path(f)).unwrap()))
        .collect()
}

/// Writes `text` to a file in `dir` and returns its path.
pub fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
    path
}

// ---------------------------------------------------------------------------------------------
// Random games: many pawn structures, near misses of every named structure included
// ---------------------------------------------------------------------------------------------

/// `count` random legal games as PGN, from a seed. Pawn moves are preferred, so pawn structures
/// change often and drift far from the usual ones.
pub fn random_games_pgn(seed: u64, count: usize) -> String {
    let mut state = seed | 1;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let mut pgn = String::new();
    for g in 0..count {
        let mut pos = Chess::default();
        let mut movetext = String::new();
        let plies = 20 + next(140);
        for ply in 0..plies {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            let pawn_moves: Vec<_> = legal
                .iter()
                .filter(|m| m.role() == shakmaty::Role::Pawn)
                .collect();
            let m = if !pawn_moves.is_empty() && next(3) > 0 {
                *pawn_moves[next(pawn_moves.len())]
            } else {
                legal[next(legal.len())]
            };
            if ply % 2 == 0 {
                movetext.push_str(&format!("{}. ", ply / 2 + 1));
            }
            let san = shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, m);
            movetext.push_str(&format!("{san} "));
        }
        pgn.push_str(&format!(
            "[Event \"random {g}\"]\n[White \"Random {}\"]\n[Black \"Random {}\"]\n[Result \"*\"]\n\n{movetext}*\n\n",
            next(50),
            next(50)
        ));
    }
    pgn
}
