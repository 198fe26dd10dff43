//! Stage 1 of the pipeline: PGN text -> [`RawGame`]s (tags, the game's text, no legality).
//!
//! pgn-reader finds where each game starts and ends and reads its tags; this module keeps the
//! tags pawndex stores, the game's bytes and the byte offset where it starts in the
//! decompressed stream. The movetext is read once, by [`RawGame::read_moves`] on a replay
//! thread: pgn-reader only skips it (a fast byte search), so no game's moves are parsed twice.
//!
//! A game's moves end at its result (`1-0`, `0-1`, `1/2-1/2`, `½-½`, `*`): what follows it up
//! to the next game (stray bytes such as NUL padding, a second result, even moves) is not part
//! of the game. It is skipped, and counted for one warning per file ([`StrayText`]); comments
//! after the result are not counted.

use crate::model::annotate::Layout;
use std::convert::Infallible;
use std::io::Read;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use pgn_reader::{RawTag, Reader, SanPlus, Visitor};
use shakmaty::CastlingSide;
use shakmaty::san::San;

pub use crate::model::game::{MAX_PLIES, Tags};

/// Longest tag line kept whole (longer ones are reported as a syntax problem).
const TAG_LINE_BYTES: usize = 256 * 1024;

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
    /// A mainline token that is no move, move number, result, NAG, annotation, comment or
    /// variation, after `ply` moves (pgn-reader would drop it without a word).
    UnknownToken { ply: usize, token: String },
}

/// One game as read from the PGN, not yet replayed.
#[derive(Clone, Debug, Default)]
pub struct RawGame {
    /// Byte offset of the game's first byte in the decompressed stream.
    pub offset: u64,
    pub tags: Tags,
    /// The mainline moves, once [`RawGame::read_moves`] has read them from `text`.
    pub moves: Vec<San>,
    pub problem: Option<ReadProblem>,
    /// The game's text as read: its tags, its movetext, and what follows up to the next game.
    pub text: Vec<u8>,
    /// Whether `moves` and `problem` are read from `text` (a game made from moves is).
    pub moves_read: bool,
    /// Where text after the result starts in the decompressed stream, when there is some
    /// that is not blank or a comment (see [`StrayText`]); set by [`RawGame::read_moves`].
    pub stray: Option<u64>,
}

impl RawGame {
    /// Neither a tag nor a move nor any other problem: text between games, not a game.
    pub fn is_not_a_game(&self) -> bool {
        self.tags.count == 0 && self.moves.is_empty() && self.problem.is_none()
    }

    /// Reads the mainline moves from the game's text (once; later calls do nothing), the
    /// way pgn-reader 0.29 reads movetext: variations, comments, NAGs and move numbers are
    /// skipped, the result ends the moves. The first of these ends the moves too and becomes
    /// the game's problem: a token pgn-reader would drop without a word (`foo`, `N#c6`,
    /// `e4x`), a null move, a drop, more than [`MAX_PLIES`] moves, an unterminated comment.
    /// A game with text after its result (not blank, not a comment) has its `stray` set.
    pub fn read_moves(&mut self) {
        if std::mem::replace(&mut self.moves_read, true) {
            return;
        }
        let cut_off = match &self.problem {
            Some(ReadProblem::CutOff(_)) => true,
            Some(_) => return,
            None => false,
        };
        let movetext = read_movetext(&self.text);
        self.moves = movetext.moves;
        // The stream broke after this game's text: the game is whole only if its result was
        // read.
        if cut_off && movetext.result_end.is_none() {
            return;
        }
        self.problem = movetext.problem;
        if self.problem.is_none() {
            self.stray = movetext.result_end.and_then(|end| {
                let at = first_stray_byte(&self.text[end..])?;
                Some(self.offset + (end + at) as u64)
            });
        }
    }
}

/// Bytes that end a movetext token for pgn-reader (stray control characters reach it as
/// spaces, see [`Tee`]).
fn is_token_end(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b'\r' | b'{' | b'}' | b'(' | b')' | b'!' | b'?' | b'$' | b';' | b'.'
    ) || is_stray_control(b)
}

/// Longest unknown token quoted whole in a reject reason.
const TOKEN_SHOWN: usize = 40;

/// The unknown token starting at `text[0]`, as shown in a reject reason: up to the next
/// whitespace or bracket, at least one byte.
fn token_at(text: &[u8]) -> String {
    let end = text
        .iter()
        .skip(1)
        .position(|&b| b.is_ascii_whitespace() || b"{}();".contains(&b))
        .map_or(text.len(), |e| e + 1);
    // Control characters are shown as `\x00`, so that the reason can be read and printed.
    let token: String = String::from_utf8_lossy(&text[..end])
        .chars()
        .map(|c| {
            if c.is_ascii_control() {
                format!("\\x{:02x}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect();
    if token.chars().count() > TOKEN_SHOWN {
        format!("{}…", token.chars().take(TOKEN_SHOWN).collect::<String>())
    } else {
        token
    }
}

/// A control character that is neither whitespace for pgn-reader (tab, line feed, carriage
/// return) nor part of any PGN token: NUL, `\x1a` (the DOS end-of-file mark), form feed, DEL…
fn is_stray_control(b: u8) -> bool {
    (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')) || b == 0x7f
}

/// Index just after the tag pairs at the start of `text` (as pgn-reader reads them).
fn skip_tags(text: &[u8]) -> usize {
    let mut i = skip_blank(text, 0);
    while text.get(i) == Some(&b'[') {
        i += 1;
        let Some(stop) = text[i..].iter().position(|b| b"\"\n]".contains(b)) else {
            return text.len();
        };
        i += stop;
        if text[i] == b'"' {
            i += 1;
            while i < text.len() && text[i] != b'"' && text[i] != b'\n' {
                i += if text[i] == b'\\' { 2 } else { 1 };
            }
            if text.get(i) == Some(&b'"') {
                i += 1;
            }
        } else {
            i += 1;
        }
        while matches!(text.get(i), Some(b' ' | b'\t' | b'\r')) {
            i += 1;
        }
        if matches!(text.get(i), Some(b']' | b'\n')) {
            i += 1;
        }
        i = skip_blank(text, i.min(text.len()));
    }
    i.min(text.len())
}

/// Skips whitespace (and `%` escape lines) from `i`.
fn skip_blank(text: &[u8], mut i: usize) -> usize {
    while let Some(&b) = text.get(i) {
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            b'%' if i == 0 || text[i - 1] == b'\n' => i = line_end(text, i),
            _ => break,
        }
    }
    i
}

/// Index of the next `\n` from `i` (or the end).
fn line_end(text: &[u8], i: usize) -> usize {
    text[i..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(text.len(), |e| i + e)
}

/// Index just after the variation opened before `i` (pgn-reader skips variations whole).
fn skip_variation(text: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while let Some(&b) = text.get(i) {
        match b {
            b'(' => depth += 1,
            b')' => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return i + 1,
            },
            b'{' => {
                i = text[i..]
                    .iter()
                    .position(|&b| b == b'}')
                    .map_or(text.len(), |e| i + e);
            }
            b';' => i = line_end(text, i),
            _ => {}
        }
        i += 1;
    }
    text.len()
}

/// Index after the rest of a move number from `i`: digits, then dots and spaces.
fn skip_move_number(text: &[u8], mut i: usize) -> usize {
    while matches!(text.get(i), Some(b'0'..=b'9')) {
        i += 1;
    }
    while matches!(text.get(i), Some(b'.' | b' ')) {
        i += 1;
    }
    i
}

/// The mainline of a game's text, as [`read_movetext`] reads it.
#[derive(Debug, Default)]
struct Movetext {
    moves: Vec<San>,
    /// What ended the moves before the end of the game, if anything did.
    problem: Option<ReadProblem>,
    /// Where the result ends in the text, when the moves ended at one.
    result_end: Option<usize>,
}

/// Reads the mainline moves of a game's text (tags, then movetext). Mirrors pgn-reader 0.29's
/// movetext reader (the tests compare the two), but stops at the first token pgn-reader would
/// drop without a word, at a null move, a drop, the move after [`MAX_PLIES`], or an
/// unterminated comment, and makes it the problem. The moves end at the game's result (what
/// follows is not the game's, see [`PgnGames`]) or at a blank or tag line.
///
/// A stray control character (NUL, `\x1a`, form feed…) is read as a space (pgn-reader reads
/// it through [`Tee`]), so it separates tokens like one: `e4\x00e5` is two moves, and only one
/// inside a token (`e\x005`, two tokens that are no moves) makes an unknown token, shown with
/// it.
fn read_movetext(text: &[u8]) -> Movetext {
    let mut scan = Scan {
        text,
        i: skip_tags(text),
        moves: Vec::with_capacity(128),
        layout: None,
    };
    let mut out = Movetext::default();
    while let Some(&b) = text.get(scan.i) {
        let start = scan.i;
        match scan.step(b) {
            Step::Go => continue,
            Step::End => {}
            Step::Result => out.result_end = Some(scan.i),
            Step::Unknown => {
                out.problem = Some(ReadProblem::UnknownToken {
                    ply: scan.moves.len(),
                    token: token_at(&text[start..]),
                });
            }
            Step::Problem(p) => out.problem = Some(p),
        }
        break;
    }
    out.moves = scan.moves;
    out
}

/// Where a game's mainline moves and comments are in its text, read as [`read_movetext`]
/// reads it (up to the result or the first problem): where comments go and which are there.
#[must_use]
pub fn layout(text: &[u8]) -> Layout {
    let start = skip_tags(text);
    let mut scan = Scan {
        text,
        i: start,
        moves: Vec::new(),
        layout: Some(Layout {
            start,
            ..Layout::default()
        }),
    };
    while let Some(&b) = text.get(scan.i) {
        let at = scan.i;
        if !matches!(scan.step(b), Step::Go) {
            break;
        }
        if let Some(layout) = &mut scan.layout
            && layout.first_move.is_none()
            && !scan.moves.is_empty()
        {
            layout.first_move = Some(at);
        }
    }
    scan.layout.unwrap_or_default()
}

/// The byte after the NAGs and glyphs (`$1`, `!?`) that follow a move ending at `i` (spaces
/// and tabs between them), or `i`.
fn after_glyphs(text: &[u8], mut i: usize) -> usize {
    let mut end = i;
    loop {
        while matches!(text.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        match text.get(i) {
            Some(b'!' | b'?') => {
                while matches!(text.get(i), Some(b'!' | b'?')) {
                    i += 1;
                }
            }
            Some(b'$') if text.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                i += 1;
                while text.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            _ => return end,
        }
        end = i;
    }
}

/// The tag pairs at the start of a game's text, in order, as (name, value): the value
/// unescaped (`\"` and `\\`) and decoded ([`decode_text`]). Lines that are no tag pair are
/// skipped.
#[must_use]
pub fn tag_pairs(text: &[u8]) -> Vec<(String, String)> {
    let end = skip_tags(text);
    let mut out = Vec::new();
    for line in text[..end].split(|&b| b == b'\n') {
        let line = line.trim_ascii();
        let Some(inner) = line.strip_prefix(b"[").and_then(|l| l.strip_suffix(b"]")) else {
            continue;
        };
        let Some(q) = inner.iter().position(|&b| b == b'"') else {
            continue;
        };
        let name = inner[..q].trim_ascii();
        let rest = &inner[q + 1..];
        let Some(close) = rest.iter().rposition(|&b| b == b'"') else {
            continue;
        };
        let mut value = Vec::with_capacity(close);
        let mut k = 0;
        while k < close {
            if rest[k] == b'\\' && k + 1 < close {
                k += 1;
            }
            value.push(rest[k]);
            k += 1;
        }
        if !name.is_empty() {
            out.push((decode_text(name), decode_text(&value)));
        }
    }
    out
}

/// The first token of a game's text that pgn-reader would drop without a word, with the
/// number of mainline moves before it (`None` when an other problem or the end comes first).
#[cfg(test)]
fn first_unknown_token(text: &[u8]) -> Option<(usize, String)> {
    match read_movetext(text).problem {
        Some(ReadProblem::UnknownToken { ply, token }) => Some((ply, token)),
        _ => None,
    }
}

/// Whether text holds a move (or a null move, a drop) for pgn-reader, which skips the tokens
/// it cannot read: `e4`, `foo e4`, `1. --`, but not `Games of the 1990 season`.
fn any_move(text: &[u8]) -> bool {
    let mut scan = Scan {
        text,
        i: skip_tags(text),
        moves: Vec::new(),
        layout: None,
    };
    while let Some(&b) = text.get(scan.i) {
        let start = scan.i;
        match scan.step(b) {
            Step::Go if scan.moves.is_empty() => {}
            Step::Go | Step::Problem(_) => return true,
            Step::Result | Step::End => return false,
            // pgn-reader steps over what it cannot read, up to where a token ends.
            Step::Unknown => {
                scan.i = text[start + 1..]
                    .iter()
                    .position(|&b| is_token_end(b))
                    .map_or(text.len(), |e| start + 1 + e);
            }
        }
    }
    false
}

/// What one token of [`read_movetext`]'s scan was.
enum Step {
    /// A known token (a move, a comment, a variation, a NAG…): go on after it.
    Go,
    /// The game's result.
    Result,
    /// A blank or tag line: the game ends without a result.
    End,
    /// A token pgn-reader would drop.
    Unknown,
    /// A token that ends the moves with a problem (a null move, a drop…).
    Problem(ReadProblem),
}

/// The scan of a game's movetext: where it is and the moves it passed.
struct Scan<'a> {
    text: &'a [u8],
    i: usize,
    moves: Vec<San>,
    /// Where each move ends and the comments are, when asked for ([`layout`]).
    layout: Option<Layout>,
}

impl Scan<'_> {
    /// Steps over `bytes` when the text goes on with them.
    fn eat(&mut self, bytes: &[u8]) -> bool {
        let hit = self.text[self.i..].starts_with(bytes);
        if hit {
            self.i += bytes.len();
        }
        hit
    }

    /// Steps over a hyphen or a dash (en, em).
    fn eat_dash(&mut self) -> bool {
        ["-", "–", "—"].iter().any(|d| self.eat(d.as_bytes()))
    }

    /// Reads the token starting with `b` at `self.i`.
    fn step(&mut self, b: u8) -> Step {
        let text = self.text;
        match b {
            b'{' => match text[self.i..].iter().position(|&b| b == b'}') {
                Some(e) => {
                    if let Some(layout) = &mut self.layout {
                        layout.comments.push((self.i, self.i + e + 1));
                    }
                    self.i += e + 1;
                }
                None => return Step::Problem(ReadProblem::Syntax("unterminated comment".into())),
            },
            b'\n' => {
                self.i += 1;
                match text.get(self.i) {
                    Some(b'%') => self.i = line_end(text, self.i),
                    Some(b'[' | b'\n') => return Step::End,
                    Some(b'\r') if text.get(self.i + 1) == Some(&b'\n') => return Step::End,
                    _ => {}
                }
            }
            b';' => self.i = line_end(text, self.i),
            b'0' => return self.zero(),
            b'1' => return self.one(),
            b'\xc2' => {
                self.i += 1;
                return if self.eat(b"\xbd") && self.eat_dash() && self.eat("½".as_bytes()) {
                    Step::Result
                } else {
                    Step::Unknown
                };
            }
            b'2'..=b'9' => self.i = skip_move_number(text, self.i + 1),
            b'(' => self.i = skip_variation(text, self.i + 1),
            b'*' => {
                self.i += 1;
                return Step::Result;
            }
            b')' | b' ' | b'\t' | b'\r' | b'.' => self.i += 1,
            b'$' => return self.nag(),
            b'!' | b'?' => {
                self.i += 1;
                if matches!(text.get(self.i), Some(b'!' | b'?')) {
                    self.i += 1;
                }
            }
            _ if is_stray_control(b) => self.i += 1,
            _ => return self.san(),
        }
        Step::Go
    }

    /// Adds a move, unless it is a null move, a drop or one too many.
    fn push(&mut self, san: San) -> Step {
        let ply = self.moves.len();
        match san {
            San::Null => Step::Problem(ReadProblem::NullMove { ply }),
            San::Put { .. } => Step::Problem(ReadProblem::Drop { ply }),
            _ if ply >= MAX_PLIES => Step::Problem(ReadProblem::TooLong),
            san => {
                self.moves.push(san);
                if let Some(layout) = &mut self.layout {
                    layout.after.push(after_glyphs(self.text, self.i));
                }
                Step::Go
            }
        }
    }

    /// A token starting with `0`: `0-1`, or castling written with zeros (`0-0`, `0-0-0+`).
    fn zero(&mut self) -> Step {
        self.i += 1;
        if !self.eat_dash() {
            return Step::Unknown;
        }
        if self.eat(b"1") {
            return Step::Result;
        }
        if !self.eat(b"0") {
            return Step::Unknown;
        }
        let side = if self.eat_dash() && self.eat(b"0") {
            CastlingSide::QueenSide
        } else {
            CastlingSide::KingSide
        };
        if matches!(self.text.get(self.i), Some(b'+' | b'#')) {
            self.i += 1;
        }
        self.push(San::Castle(side))
    }

    /// A token starting with `1`: `1-0`, `1/2-1/2`, or a move number.
    fn one(&mut self) -> Step {
        self.i += 1;
        if self.eat_dash() {
            return if self.eat(b"0") {
                Step::Result
            } else {
                Step::Unknown
            };
        }
        if self.eat(b"/2") {
            return if self.eat_dash() && self.eat(b"1/2") {
                Step::Result
            } else {
                Step::Unknown
            };
        }
        self.i = skip_move_number(self.text, self.i);
        Step::Go
    }

    /// A NAG: `$` and digits.
    fn nag(&mut self) -> Step {
        let text = self.text;
        self.i += 1;
        let end = text[self.i..]
            .iter()
            .position(|&b| is_token_end(b))
            .map_or(text.len(), |e| self.i + e);
        let digits = &text[self.i..end];
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return Step::Unknown;
        }
        self.i = end;
        Step::Go
    }

    /// A move in SAN, ending where a token ends.
    fn san(&mut self) -> Step {
        match SanPlus::from_ascii_prefix(&self.text[self.i..]) {
            Ok((san_plus, n)) if self.text.get(self.i + n).is_none_or(|&b| is_token_end(b)) => {
                self.i += n;
                self.push(san_plus.san)
            }
            _ => Step::Unknown,
        }
    }
}

/// Decodes a tag value: UTF-8 when valid, else Latin-1 (each byte one code point).
pub fn decode_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => bytes.iter().map(|&b| b as char).collect(),
    }
}

/// pgn-reader's visitor: keeps the tags, then skips the movetext (read later, on a replay
/// thread, by [`RawGame::read_moves`]).
struct Collect;

impl Visitor for Collect {
    type Tags = Tags;
    type Movetext = Infallible;
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
            b"TimeControl" => &mut tags.time_control,
            b"FEN" => &mut tags.fen,
            b"SetUp" => &mut tags.setup,
            b"Variant" => &mut tags.variant,
            _ => return ControlFlow::Continue(()),
        };
        *slot = Some(decode_text(&value.decode()));
        ControlFlow::Continue(())
    }

    /// Ends the game here: pgn-reader skips the movetext (up to a blank line or a tag line,
    /// where the next game starts) before it reads the next game.
    fn begin_movetext(&mut self, tags: Tags) -> ControlFlow<RawGame, Infallible> {
        ControlFlow::Break(RawGame {
            tags,
            ..RawGame::default()
        })
    }

    fn san(&mut self, movetext: &mut Infallible, _san_plus: SanPlus) -> ControlFlow<RawGame> {
        match *movetext {}
    }

    fn end_game(&mut self, movetext: Infallible) -> RawGame {
        match movetext {}
    }
}

/// A fatal problem with an input stream: the rest of the file cannot be read.
#[derive(Debug)]
pub struct StreamError {
    pub offset: u64,
    pub message: String,
}

/// The decoded bytes pgn-reader has pulled and that a game may still need: from `start`
/// (a position in the stream), at most [`KEPT_MAX`] of them. `total` counts every byte read.
#[derive(Default)]
struct Kept {
    start: u64,
    bytes: Vec<u8>,
    total: u64,
}

/// Most bytes kept: a game longer than this (a huge comment, text with no blank line) is not
/// scanned for unknown tokens, and memory stays bounded.
const KEPT_MAX: usize = 64 << 20;

/// Dead bytes kept before they are dropped (dropping moves the rest, so not every game).
const KEPT_SLACK: usize = 1 << 20;

impl Kept {
    fn end(&self) -> u64 {
        self.total
    }

    /// Whether the kept bytes run up to `total` (no byte was let go since `start`).
    fn whole(&self) -> bool {
        self.start + self.bytes.len() as u64 == self.total
    }

    /// The bytes from `from` to `to`, `None` when some were not kept.
    fn slice(&self, from: u64, to: u64) -> Option<&[u8]> {
        let from = usize::try_from(from.checked_sub(self.start)?).ok()?;
        let to = usize::try_from(to.checked_sub(self.start)?).ok()?;
        self.bytes.get(from..to)
    }

    fn add(&mut self, read: &[u8]) {
        if self.whole() && self.bytes.len() + read.len() <= KEPT_MAX {
            self.bytes.extend_from_slice(read);
        }
        self.total += read.len() as u64;
    }

    /// Forgets the bytes before `pos`, where pgn-reader is, once there are enough of them.
    /// `buffered` is what pgn-reader holds from `pos` on: when bytes were let go (a game of
    /// more than [`KEPT_MAX`] bytes), keeping starts again from `pos` with those bytes, so
    /// that the next game is whole (its stray control characters read as spaces).
    fn forget_before(&mut self, pos: u64, buffered: &[u8]) {
        if !self.whole() {
            self.bytes.clear();
            self.bytes.extend_from_slice(buffered);
            self.start = self.total - buffered.len() as u64;
            return;
        }
        let dead = (pos.saturating_sub(self.start) as usize).min(self.bytes.len());
        if dead >= KEPT_SLACK {
            self.bytes.drain(..dead);
            self.start += dead as u64;
        }
    }
}

/// Copies what the inner reader produces into [`Kept`] as it is in the file (for the
/// unknown-token scan, the stray-text check and their messages), then hands it to pgn-reader
/// with every stray control character (NUL, `\x1a`, form feed, DEL…) read as a space: such a
/// byte is no part of any PGN token, so a move it touches (`Nf3\x00`, `e4\x0ce5`) is still
/// that move, and the byte offsets stay the file's.
struct Tee<R> {
    inner: R,
    kept: Arc<Mutex<Kept>>,
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let read = &mut buf[..n];
        self.kept
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .add(read);
        for b in read.iter_mut() {
            if is_stray_control(*b) {
                *b = b' ';
            }
        }
        Ok(n)
    }
}

/// Games with text after their result (skipped, not part of the game), for one warning per
/// file: each game's [`RawGame::read_moves`] says where its stray text starts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StrayText {
    pub games: u64,
    /// Where the first stray text starts in the decompressed stream.
    pub first_offset: Option<u64>,
}

impl StrayText {
    /// Counts a game whose stray text starts at `offset` (the games come in file order).
    pub fn add(&mut self, offset: u64) {
        self.games += 1;
        self.first_offset.get_or_insert(offset);
    }
}

/// Where the first byte of stray text is in `gap`, the bytes from a game's last token to the
/// next game: whitespace, a byte-order mark, comments (`{…}`, `;…`) and `%` escape lines are
/// not stray; anything else is, an unterminated `{` too (it hides everything after it).
fn first_stray_byte(gap: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(&b) = gap.get(i) {
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            b'{' => match gap[i..].iter().position(|&b| b == b'}') {
                Some(e) => i += e + 1,
                None => return Some(i),
            },
            b';' => i = line_end(gap, i),
            b'%' if i == 0 || gap[i - 1] == b'\n' => i = line_end(gap, i),
            _ if gap[i..].starts_with(b"\xef\xbb\xbf") => i += 3,
            _ => return Some(i),
        }
    }
    None
}

/// Reads [`RawGame`]s one after the other from a decompressed PGN stream.
pub struct PgnGames<R: Read> {
    reader: Reader<Tee<R>>,
    kept: Arc<Mutex<Kept>>,
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
        let kept = Arc::new(Mutex::new(Kept::default()));
        let tee = Tee {
            inner,
            kept: kept.clone(),
        };
        let reader = Reader::build(tee)
            .set_supported_tag_line_length(TAG_LINE_BYTES)
            .finish();
        PgnGames {
            reader,
            kept,
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

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Where pgn-reader is, in [`Kept`] positions (the bytes through the tee).
    fn kept_position(&self) -> u64 {
        self.kept().end() - self.reader.buffer().len() as u64
    }

    /// After a syntax error in a game's tags (a tag line longer than [`TAG_LINE_BYTES`]),
    /// reads the rest of that game (more tags, its movetext) so that it is not taken for
    /// another game. A blank line followed by `[` starts the next game instead.
    fn skip_rest_of_game(&mut self) {
        loop {
            let before = self.kept_position();
            if !matches!(self.reader.has_more(), Ok(true)) {
                return;
            }
            let after = self.kept_position();
            let blank_line = self
                .kept()
                .slice(before, after)
                .is_some_and(|gap| gap.contains(&b'\n'));
            if blank_line && self.reader.buffer().first() == Some(&b'[') {
                return;
            }
            match self.reader.read_game(&mut Collect) {
                Err(_) if self.kept_position() > after => continue,
                _ => return,
            }
        }
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
        let start = self.kept_position();
        self.kept().forget_before(start, self.reader.buffer());
        match self.reader.read_game(&mut Collect) {
            Ok(Some(mut game)) => {
                game.offset = offset;
                // pgn-reader skips the movetext (and the blank lines after it) here: the game's
                // text runs up to the next game. A read error shows at the next call.
                let _ = self.reader.has_more();
                let end = self.kept_position();
                match self.kept().slice(start, end) {
                    Some(text) => game.text = text.to_vec(),
                    None => {
                        game.problem = Some(ReadProblem::Syntax(format!(
                            "the game's text is longer than {} MiB (an unterminated comment?)",
                            KEPT_MAX >> 20
                        )));
                    }
                }
                // A game that ends where the decoded bytes end may be cut short by the fault
                // (unless its result was read, see `RawGame::read_moves`).
                if let Some(e) = self.stream_error()
                    && self.reader.buffer().is_empty()
                {
                    game.problem = Some(ReadProblem::CutOff(e.message));
                }
                // Text with no tags may be no game at all (prose between games): its moves
                // decide, so they are read here (tagged games' moves are read on a replay
                // thread).
                if game.tags.count == 0 {
                    game.read_moves();
                    if game.moves.is_empty()
                        && matches!(game.problem, Some(ReadProblem::UnknownToken { .. }))
                        && !any_move(&game.text)
                    {
                        // Words and no moves: prose, as pgn-reader reads it.
                        game.problem = None;
                    }
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
                self.skip_rest_of_game();
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
    use pgn_reader::Skip;
    use shakmaty::Outcome;

    fn read_all(pgn: &str) -> Vec<RawGame> {
        let decoded = Arc::new(AtomicU64::new(0));
        let counting = crate::ingest::input::Counting::new(pgn.as_bytes(), decoded.clone());
        let mut games = PgnGames::new(counting, decoded, Arc::new(Mutex::new(None)));
        let mut out = Vec::new();
        while let Some(mut g) = games.next_game().unwrap() {
            g.read_moves();
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
    fn unknown_tokens_are_found_with_the_moves_before_them() {
        let cases: [(&str, Option<(usize, &str)>); 16] = [
            (
                "[Event \"x\"]\n\n1. e4 e5 2. Nf3 foo Nc6 *\n",
                Some((3, "foo")),
            ),
            ("1. e4 e5 2. Nf3 N#c6 3. d4 *", Some((3, "N#c6"))),
            ("1. e4 e5 2. Nf3 Nc6 1-0", None),
            ("1.e4 e5 2.O-O 0-0-0+ 3... 1/2-1/2", None),
            (
                "1. e4 (1. d4 foo) e5 {foo} ; foo\n% foo\n2. Nf3 $12 !? 0-1",
                None,
            ),
            ("[A \"b ] c\"] [D \"e\"]\n1. e4 0-", Some((1, "0-"))),
            ("1. e4 1/2 e5", Some((1, "1/2"))),
            ("1. e4 e5 2. Nf3 ½ *", Some((3, "½"))),
            ("1. d4 Nf6 2. c4 e6 3. Nc3 Bb4 4. 10. *", None),
            // The result ends the game: what follows is not looked at.
            ("1. e4 e5 1-0 foo", None),
            ("1. e4 * \0\0", None),
            // Control characters separate tokens like spaces; inside a move they break it.
            ("1. e4 \0 e5 2. Nf3 \x1a\x7f Nc6 *", None),
            ("1. e4 \0e5 2. Nf3\0\0 Nc6 3.\x0cBb5 *", None),
            ("1.e4\x0ce5 *", None),
            ("1. e4 e\x005 *", Some((1, "e\\x005"))),
            ("1. e4 e5 1-\x000", Some((2, "1-\\x000"))),
        ];
        for (text, want) in cases {
            let got = first_unknown_token(text.as_bytes());
            let got = got.as_ref().map(|(p, t)| (*p, t.as_str()));
            assert_eq!(got, want, "{text}");
        }
    }

    /// pgn-reader's own reading of a game's mainline (every move it reports, null moves and
    /// drops too), for the scan to be compared with.
    struct Mainline;

    impl Visitor for Mainline {
        type Tags = ();
        type Movetext = Vec<San>;
        type Output = Vec<San>;

        fn begin_tags(&mut self) -> ControlFlow<Vec<San>> {
            ControlFlow::Continue(())
        }

        fn begin_movetext(&mut self, _tags: ()) -> ControlFlow<Vec<San>, Vec<San>> {
            ControlFlow::Continue(Vec::new())
        }

        fn san(&mut self, moves: &mut Vec<San>, san_plus: SanPlus) -> ControlFlow<Vec<San>> {
            moves.push(san_plus.san);
            ControlFlow::Continue(())
        }

        fn begin_variation(&mut self, _moves: &mut Vec<San>) -> ControlFlow<Vec<San>, Skip> {
            ControlFlow::Continue(Skip(true))
        }

        fn outcome(&mut self, moves: &mut Vec<San>, _outcome: Outcome) -> ControlFlow<Vec<San>> {
            ControlFlow::Break(std::mem::take(moves))
        }

        fn end_game(&mut self, moves: Vec<San>) -> Vec<San> {
            moves
        }
    }

    /// Checks the scan of one game's text against pgn-reader's reading of it: the same moves
    /// up to the scan's problem, and a problem that is really there.
    fn agrees_with_pgn_reader(text: &[u8]) -> Result<(), String> {
        let ours = read_movetext(text);
        let spaced: Vec<u8> = text
            .iter()
            .map(|&b| if is_stray_control(b) { b' ' } else { b })
            .collect();
        let theirs = Reader::new(&spaced[..]).read_game(&mut Mainline);
        let shown = || String::from_utf8_lossy(text).into_owned();
        let theirs = match (theirs, &ours.problem) {
            (Ok(Some(moves)), _) => moves,
            (Ok(None), _) => Vec::new(),
            (Err(e), Some(ReadProblem::Syntax(_))) if e.to_string().contains("comment") => {
                return Ok(());
            }
            (Err(e), _) => {
                return Err(format!(
                    "pgn-reader: {e}; the scan did not see it: {}",
                    shown()
                ));
            }
        };
        let n = ours.moves.len();
        if theirs.get(..n) != Some(&ours.moves[..]) {
            return Err(format!(
                "moves differ: {:?} against {theirs:?} in {}",
                ours.moves,
                shown()
            ));
        }
        let fine = match &ours.problem {
            None => theirs.len() == n,
            Some(ReadProblem::NullMove { ply }) => *ply == n && theirs.get(n) == Some(&San::Null),
            Some(ReadProblem::Drop { ply }) => {
                *ply == n && matches!(theirs.get(n), Some(San::Put { .. }))
            }
            Some(ReadProblem::TooLong) => n == MAX_PLIES && theirs.len() > MAX_PLIES,
            // pgn-reader skips the token without a word, and may read moves after it.
            Some(ReadProblem::UnknownToken { ply, .. }) => *ply == n,
            Some(p) => return Err(format!("unexpected {p:?} in {}", shown())),
        };
        if fine {
            Ok(())
        } else {
            Err(format!(
                "{:?} after {n} moves, pgn-reader read {} in {}",
                ours.problem,
                theirs.len(),
                shown()
            ))
        }
    }

    #[test]
    fn the_scan_reads_the_moves_pgn_reader_reads() {
        let long = "e4 e5 Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8 ".repeat(MAX_PLIES / 10 + 1);
        let texts = [
            "[Event \"a\"]\n\n1. e4 e5 2.Nf3 Nc6 3. Bb5 zz a6 *\n".to_string(),
            "1. d4 (1. e4 e5 (1... c5)) d5 {a comment} 2. c4 $1 dxc4!? 3. e3 ; rest\n1-0".into(),
            "1.e4 e5 2.O-O 0-0-0+ 3... 0-0# 1/2-1/2".into(),
            "1. e4 -- 2. d4 *".into(),
            "1. e4 d5 2. Q@f7 *".into(),
            "1. e4 {never closed".into(),
            "1. e4 e5\n\n2. Nf3".into(),
            "1. e4 e5\r\n\r\n2. Nf3".into(),
            "1. e4 e5\n% an escape line\n2. Nf3 ½-½".into(),
            "1. e4 e5 2. Nf3 N#c6 3. d4 *".into(),
            "1. e4\0 e5 2. Nf3\x0cNc6 3. Bb5 e\x005 *".into(),
            "1. e4 e5 1-0 2. Nf3 Nc6".into(),
            format!("{long}*"),
        ];
        for text in &texts {
            agrees_with_pgn_reader(text.as_bytes()).unwrap();
        }
        let problems: Vec<_> = texts
            .iter()
            .map(|t| read_movetext(t.as_bytes()).problem)
            .collect();
        assert_eq!(problems[3], Some(ReadProblem::NullMove { ply: 1 }));
        assert_eq!(problems[4], Some(ReadProblem::Drop { ply: 2 }));
        assert!(matches!(problems[5], Some(ReadProblem::Syntax(_))));
        assert_eq!(problems[12], Some(ReadProblem::TooLong));
        assert_eq!(read_movetext(texts[2].as_bytes()).moves.len(), 5);
        assert_eq!(
            read_movetext(texts[6].as_bytes()).moves.len(),
            2,
            "a blank line ends the game"
        );
    }

    /// Every game of the odd corpus and the first games of a master shard, as `PgnGames`
    /// cuts them: the scan reads the moves pgn-reader reads.
    #[test]
    fn the_scan_reads_the_corpus_as_pgn_reader_does() {
        let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus");
        if !std::path::Path::new(corpus).is_dir() {
            assert!(
                std::env::var("CI").map_or(true, |v| v != "true"),
                "{corpus} is missing and CI=true: ../shared must be beside the repository"
            );
            eprintln!("SKIPPED: {corpus} does not exist (put ../shared beside the repository)");
            return;
        }
        let mut files = vec![format!("{corpus}/masters-1.pgn.zst")];
        let mut dirs = vec![std::path::PathBuf::from(format!("{corpus}/odd"))];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else {
                    files.push(path.to_string_lossy().into_owned());
                }
            }
        }
        let (mut games_seen, mut failures) = (0, Vec::new());
        for file in &files {
            let input = crate::ingest::input::open(file).unwrap();
            let mut games = PgnGames::new(input.reader, input.decoded, input.trapped);
            for _ in 0..3000 {
                let Ok(Some(game)) = games.next_game() else {
                    break;
                };
                games_seen += 1;
                if let Err(e) = agrees_with_pgn_reader(&game.text) {
                    failures.push(format!("{file} at byte {}: {e}", game.offset));
                }
            }
        }
        assert!(games_seen > 3000, "only {games_seen} games read");
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn stray_text_is_what_is_not_blank_or_a_comment() {
        assert_eq!(
            first_stray_byte(b" \r\n{x}\n; y\n% z\n\xef\xbb\xbf\n"),
            None
        );
        assert_eq!(first_stray_byte(b"  \0\0\r\n"), Some(2));
        assert_eq!(first_stray_byte(b" {x} 1-0"), Some(5));
        assert_eq!(first_stray_byte(b"\n {never closed\n\n[Event"), Some(2));
    }

    #[test]
    fn text_after_a_result_is_skipped_and_counted() {
        let pgn = "[Event \"a\"]\n\n1. e4 e5 1-0 {fine} \0\0 2. Nf3\n\n[Event \"b\"]\n\n1. d4 *\n\
                   \n[Event \"c\"]\n\n1. c4 * {only a comment}\n\n[Event \"d\"]\n\n1. g3\n";
        let decoded = Arc::new(AtomicU64::new(0));
        let counting = crate::ingest::input::Counting::new(pgn.as_bytes(), decoded.clone());
        let mut games = PgnGames::new(counting, decoded, Arc::new(Mutex::new(None)));
        let mut plies = Vec::new();
        let mut stray = StrayText::default();
        while let Some(mut g) = games.next_game().unwrap() {
            g.read_moves();
            plies.push((g.tags.event.clone().unwrap(), g.moves.len()));
            if let Some(at) = g.stray {
                stray.add(at);
            }
        }
        let want = [("a", 2), ("b", 1), ("c", 1), ("d", 1)];
        let want: Vec<(String, usize)> = want.iter().map(|&(e, n)| (e.into(), n)).collect();
        assert_eq!(plies, want);
        let first = pgn.find('\0').unwrap() as u64;
        assert_eq!(
            stray,
            StrayText {
                games: 1,
                first_offset: Some(first)
            }
        );
    }

    #[test]
    fn the_rest_of_a_game_after_an_overlong_tag_is_not_another_game() {
        let long = "x".repeat(4 * TAG_LINE_BYTES);
        let pgn = format!(
            "[Event \"a\"]\n[Annotator \"{long}\"]\n[White \"W\"]\n\n1. e4 *\n\n[Event \"b\"]\n\n1. d4 *\n"
        );
        let games = read_all(&pgn);
        assert_eq!(
            games.len(),
            2,
            "{:?}",
            games.iter().map(|g| &g.problem).collect::<Vec<_>>()
        );
        assert!(matches!(games[0].problem, Some(ReadProblem::Syntax(_))));
        assert_eq!(games[1].tags.event.as_deref(), Some("b"));
        assert_eq!(games[1].moves.len(), 1);
    }

    #[test]
    fn a_game_longer_than_what_is_kept_is_rejected_and_the_next_is_read() {
        let comment = "x".repeat(KEPT_MAX + (1 << 20));
        let pgn = format!(
            "[Event \"a\"]\n\n1. e4 e5 *\n\n[Event \"huge\"]\n\n1. e4 {{{comment}}} e5 *\n\n\
             [Event \"b\"]\n\n1. d4 \0d5 2. c4 *\n\n[Event \"c\"]\n\n1. c4 *\n"
        );
        let games = read_all(&pgn);
        let got: Vec<_> = games
            .iter()
            .map(|g| {
                (
                    g.tags.event.as_deref().unwrap(),
                    g.moves.len(),
                    g.problem.clone(),
                )
            })
            .collect();
        assert_eq!(got.len(), 4);
        assert_eq!(got[0], ("a", 2, None));
        assert_eq!(got[1].0, "huge");
        assert!(
            matches!(&got[1].2, Some(ReadProblem::Syntax(e)) if e.contains("longer than 64 MiB")),
            "{:?}",
            got[1].2
        );
        assert_eq!(got[2], ("b", 3, None), "the game after it is read whole");
        assert_eq!(got[3], ("c", 1, None));
    }

    #[test]
    fn latin1_tags_are_decoded() {
        assert_eq!(decode_text(b"R\xe9ti"), "Réti");
        assert_eq!(decode_text("Réti".as_bytes()), "Réti");
    }

    #[test]
    fn a_layout_finds_the_moves_and_comments_of_the_mainline() {
        let text = b"[White \"A\"]\n\n1. e4 $1 {x} (1. d4 {y}) e5!? 2. Nf3 *\n";
        let l = layout(text);
        assert_eq!(l.start, 13);
        assert_eq!(&text[..l.after[0]], b"[White \"A\"]\n\n1. e4 $1");
        assert_eq!(
            &text[..l.after[1]],
            b"[White \"A\"]\n\n1. e4 $1 {x} (1. d4 {y}) e5!?"
        );
        assert_eq!(l.after.len(), 3);
        assert_eq!(
            l.comments,
            vec![(22, 25)],
            "the variation's comment is not the mainline's"
        );
        assert_eq!(l.first_move, Some(16));
        let castles = b"1. e4 e5 2. Nf3 Nc6 3. Bc4 Nf6 4. O-O+ $2 Be7 *";
        let l = layout(castles);
        assert_eq!(
            &castles[..l.after[6]],
            b"1. e4 e5 2. Nf3 Nc6 3. Bc4 Nf6 4. O-O+ $2"
        );
    }

    #[test]
    fn tag_pairs_are_read_in_order_with_escapes() {
        let text = b"[Event \"A \\\"B\\\" C\"]\n[White \"Caf\xe9\"]\n\n1. e4 *";
        assert_eq!(
            tag_pairs(text),
            vec![
                ("Event".to_string(), "A \"B\" C".to_string()),
                ("White".to_string(), "Caf\u{e9}".to_string())
            ]
        );
    }
}
