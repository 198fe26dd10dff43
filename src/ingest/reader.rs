//! Stage 1 of the pipeline: PGN text -> [`RawGame`]s (tags and mainline SAN, no legality).
//!
//! pgn-reader does the tokenising; this module keeps the tags pawndex stores, the mainline
//! moves, and the byte offset where each game starts in the decompressed stream.

use std::io::Read;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use pgn_reader::{RawTag, Reader, SanPlus, Skip, Visitor};
use shakmaty::san::San;

/// Games longer than this are rejected rather than held in memory.
pub const MAX_PLIES: usize = 16_384;

/// Longest tag line kept whole (longer ones are reported as a syntax problem).
const TAG_LINE_BYTES: usize = 256 * 1024;

/// Tags pawndex stores. Values are decoded as UTF-8, or as Latin-1 when they are not UTF-8.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tags {
    pub event: Option<String>,
    pub site: Option<String>,
    pub date: Option<String>,
    pub round: Option<String>,
    pub white: Option<String>,
    pub black: Option<String>,
    pub result: Option<String>,
    pub white_elo: Option<String>,
    pub black_elo: Option<String>,
    pub eco: Option<String>,
    pub fen: Option<String>,
    pub setup: Option<String>,
    pub variant: Option<String>,
    /// Number of tags seen, stored or not.
    pub count: usize,
}

/// Why a game could not even be read as a list of moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadProblem {
    /// `--` or another null move, at this ply.
    NullMove { ply: usize },
    /// A crazyhouse-style drop (`Q@f7`), at this ply.
    Drop { ply: usize },
    /// More than [`MAX_PLIES`] mainline moves.
    TooLong,
    /// pgn-reader gave up on the text (unterminated tag or comment).
    Syntax(String),
    /// The stream broke (I/O or decompression error) before the end of this game.
    CutOff(String),
}

/// One game as read from the PGN, not yet replayed.
#[derive(Clone, Debug, Default)]
pub struct RawGame {
    /// Byte offset of the game's first byte in the decompressed stream.
    pub offset: u64,
    pub tags: Tags,
    pub moves: Vec<San>,
    pub problem: Option<ReadProblem>,
}

/// Decodes a tag value: UTF-8 when valid, else Latin-1 (each byte one code point).
pub fn decode_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => bytes.iter().map(|&b| b as char).collect(),
    }
}

struct Collect;

impl Visitor for Collect {
    type Tags = Tags;
    type Movetext = RawGame;
    type Output = RawGame;

    fn begin_tags(&mut self) -> ControlFlow<RawGame, Tags> {
        ControlFlow::Continue(Tags::default())
    }

    fn tag(&mut self, tags: &mut Tags, name: &[u8], value: RawTag<'_>) -> ControlFlow<RawGame> {
        tags.count += 1;
        let slot = match name {
            b"Event" => &mut tags.event,
            b"Site" => &mut tags.site,
            b"Date" => &mut tags.date,
            b"Round" => &mut tags.round,
            b"White" => &mut tags.white,
            b"Black" => &mut tags.black,
            b"Result" => &mut tags.result,
            b"WhiteElo" => &mut tags.white_elo,
            b"BlackElo" => &mut tags.black_elo,
            b"ECO" => &mut tags.eco,
            b"FEN" => &mut tags.fen,
            b"SetUp" => &mut tags.setup,
            b"Variant" => &mut tags.variant,
            _ => return ControlFlow::Continue(()),
        };
        *slot = Some(decode_text(&value.decode()));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Tags) -> ControlFlow<RawGame, RawGame> {
        ControlFlow::Continue(RawGame {
            offset: 0,
            tags,
            moves: Vec::with_capacity(128),
            problem: None,
        })
    }

    fn san(&mut self, game: &mut RawGame, san_plus: SanPlus) -> ControlFlow<RawGame> {
        let ply = game.moves.len();
        let problem = match san_plus.san {
            San::Null => Some(ReadProblem::NullMove { ply }),
            San::Put { .. } => Some(ReadProblem::Drop { ply }),
            _ if ply >= MAX_PLIES => Some(ReadProblem::TooLong),
            san => {
                game.moves.push(san);
                None
            }
        };
        match problem {
            None => ControlFlow::Continue(()),
            Some(p) => {
                game.problem = Some(p);
                ControlFlow::Break(std::mem::take(game))
            }
        }
    }

    fn begin_variation(&mut self, _game: &mut RawGame) -> ControlFlow<RawGame, Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, game: RawGame) -> RawGame {
        game
    }
}

/// A fatal problem with an input stream: the rest of the file cannot be read.
#[derive(Debug)]
pub struct StreamError {
    pub offset: u64,
    pub message: String,
}

/// Reads [`RawGame`]s one after the other from a decompressed PGN stream.
pub struct PgnGames<R: Read> {
    reader: Reader<R>,
    decoded: Arc<AtomicU64>,
    trapped: Arc<Mutex<Option<String>>>,
    last_error_offset: Option<u64>,
    /// The stream error, once reported: nothing more is read.
    failed: bool,
}

impl<R: Read> PgnGames<R> {
    /// `decoded` counts the bytes `inner` has produced; `trapped` holds the first error of the
    /// underlying stream (see [`crate::ingest::input::ErrorTrap`]).
    pub fn new(inner: R, decoded: Arc<AtomicU64>, trapped: Arc<Mutex<Option<String>>>) -> Self {
        let reader = Reader::build(inner)
            .set_supported_tag_line_length(TAG_LINE_BYTES)
            .finish();
        PgnGames {
            reader,
            decoded,
            trapped,
            last_error_offset: None,
            failed: false,
        }
    }

    fn position(&self) -> u64 {
        self.decoded
            .load(Ordering::Relaxed)
            .saturating_sub(self.reader.buffer().len() as u64)
    }

    /// The error of the underlying stream, if it broke: where the decoded bytes end, and why.
    fn stream_error(&self) -> Option<StreamError> {
        let trapped = self
            .trapped
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        trapped.map(|message| StreamError {
            offset: self.decoded.load(Ordering::Relaxed),
            message,
        })
    }

    /// The next game, `None` at the end of the stream, or an error when the stream itself is
    /// broken (I/O or decompression failure). Games decoded before the fault come first; the
    /// game the fault cut off comes back with [`ReadProblem::CutOff`].
    pub fn next_game(&mut self) -> Result<Option<RawGame>, StreamError> {
        if self.failed {
            return Ok(None);
        }
        let more = self.reader.has_more();
        if let Some(e) = self.stream_error().filter(|_| !matches!(more, Ok(true))) {
            self.failed = true;
            return Err(e);
        }
        match more {
            Ok(true) => {}
            Ok(false) => return Ok(None),
            Err(e) => {
                self.failed = true;
                return Err(StreamError {
                    offset: self.position(),
                    message: e.to_string(),
                });
            }
        }
        let offset = self.position();
        match self.reader.read_game(&mut Collect) {
            Ok(Some(mut game)) => {
                game.offset = offset;
                // A game that ends where the decoded bytes end may be cut short by the fault.
                if let Some(e) = self.stream_error()
                    && self.reader.buffer().is_empty()
                {
                    game.problem = Some(ReadProblem::CutOff(e.message));
                }
                Ok(Some(game))
            }
            Ok(None) => Ok(None),
            Err(e) => {
                if let Some(e) = self.stream_error() {
                    // pgn-reader hit the end of what was decoded in the middle of the game.
                    return Ok(Some(RawGame {
                        offset,
                        problem: Some(ReadProblem::CutOff(e.message)),
                        ..RawGame::default()
                    }));
                }
                // A PGN syntax problem: report it as this game's problem and go on, unless the
                // reader is stuck at the same place.
                let here = self.position();
                if self.last_error_offset == Some(here) {
                    self.failed = true;
                    return Err(StreamError {
                        offset: here,
                        message: format!("PGN reader cannot get past: {e}"),
                    });
                }
                self.last_error_offset = Some(here);
                Ok(Some(RawGame {
                    offset,
                    problem: Some(ReadProblem::Syntax(e.to_string())),
                    ..RawGame::default()
                }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(pgn: &str) -> Vec<RawGame> {
        let decoded = Arc::new(AtomicU64::new(0));
        let counting = crate::ingest::input::Counting::new(pgn.as_bytes(), decoded.clone());
        let mut games = PgnGames::new(counting, decoded, Arc::new(Mutex::new(None)));
        let mut out = Vec::new();
        while let Some(g) = games.next_game().unwrap() {
            out.push(g);
        }
        out
    }

    #[test]
    fn offsets_point_at_each_game() {
        let pgn = "[Event \"a\"]\n\n1. e4 e5 *\n\n[Event \"b\"]\n[White \"W\"]\n\n1. d4 (1. c4) d5 {x} 2. c4 $1 *\n";
        let games = read_all(pgn);
        assert_eq!(games.len(), 2);
        assert_eq!(games[0].offset, 0);
        assert_eq!(&pgn[games[1].offset as usize..][..12], "[Event \"b\"]\n");
        assert_eq!(games[1].moves.len(), 3, "variation skipped");
        assert_eq!(games[1].tags.white.as_deref(), Some("W"));
    }

    #[test]
    fn null_move_is_a_problem() {
        let games = read_all("1. e4 -- 2. d4 *\n");
        assert_eq!(games[0].problem, Some(ReadProblem::NullMove { ply: 1 }));
    }

    #[test]
    fn latin1_tags_are_decoded() {
        assert_eq!(decode_text(b"R\xe9ti"), "Réti");
        assert_eq!(decode_text("Réti".as_bytes()), "Réti");
    }
}
