//! Games and positions rebuilt from the database: PGN export of stored games and FENs of stored
//! positions, both replayed from the compact moves in `games.moves` (see [`crate::model::moves`]).

use std::fmt::Write as _;

use anyhow::Result;
use shakmaty::{Color, Position};

pub use crate::model::stored::{Cursor, StoredGame};
pub use crate::store::schema::games::load_game;

/// Escapes a PGN tag value (backslash and quote); line breaks, which a tag cannot hold, become
/// spaces.
fn escape_tag(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The game termination marker: the stored result when it is one, else `*`.
fn termination(result: Option<&str>) -> &'static str {
    match result.map(str::trim) {
        Some("1-0") => "1-0",
        Some("0-1") => "0-1",
        Some("1/2-1/2") => "1/2-1/2",
        _ => "*",
    }
}

/// Longest movetext line written (the PGN standard asks for at most 255; 80 reads well).
const LINE_WIDTH: usize = 80;

/// Appends movetext tokens, wrapping lines at [`LINE_WIDTH`].
struct Movetext<'a> {
    out: &'a mut String,
    line: usize,
}

impl Movetext<'_> {
    fn token(&mut self, token: &str) {
        if self.line > 0 && self.line + 1 + token.len() > LINE_WIDTH {
            self.out.push('\n');
            self.line = 0;
        } else if self.line > 0 {
            self.out.push(' ');
            self.line += 1;
        }
        self.out.push_str(token);
        self.line += token.len();
    }
}

/// Appends one game as PGN (tags, blank line, movetext, blank line).
///
/// Only the tags the database holds are written (absent ones stay absent rather than becoming
/// `"?"`), so indexing the export again yields the same games, which duplicate detection
/// recognises. `marks` puts a `{comment}` after the position of a ply (0: before the first
/// move).
pub fn write_pgn(out: &mut String, game: &StoredGame, marks: &[(u32, String)]) -> Result<()> {
    let h = &game.header;
    let tags: [(&str, Option<String>); 10] = [
        ("Event", h.event.clone()),
        ("Site", h.site.clone()),
        ("Date", h.date.clone()),
        ("Round", h.round.clone()),
        ("White", h.white.clone()),
        ("Black", h.black.clone()),
        ("Result", h.result.clone()),
        ("WhiteElo", h.white_elo.map(|e| e.to_string())),
        ("BlackElo", h.black_elo.map(|e| e.to_string())),
        ("ECO", h.eco.clone()),
    ];
    for (name, value) in &tags {
        if let Some(v) = value {
            let _ = writeln!(out, "[{name} \"{}\"]", escape_tag(v));
        }
    }
    if game.chess960 {
        out.push_str("[Variant \"Chess960\"]\n");
    }
    if let Some(fen) = &game.fen {
        let _ = writeln!(out, "[SetUp \"1\"]\n[FEN \"{}\"]", escape_tag(fen));
    }
    out.push('\n');

    let mut pos = game.start()?;
    let mut text = Movetext { out, line: 0 };
    let mut marks = marks.iter().peekable();
    let mut need_number = true;
    let mut token = String::new();
    let mut comment = |text: &mut Movetext<'_>, ply: u32, need_number: &mut bool| {
        while let Some((_, c)) = marks.next_if(|(p, _)| *p == ply) {
            text.token(&format!("{{{}}}", c.replace('}', ")")));
            *need_number = true;
        }
    };
    comment(&mut text, 0, &mut need_number);
    for ply in 1..=game.plies() {
        let (m, san) = game.san_at(&pos, ply)?;
        let number = pos.fullmoves().get();
        let white = pos.turn() == Color::White;
        pos.play_unchecked(m);
        // The check suffix without `Position::outcome`, which would generate every legal move.
        let suffix = if !pos.checkers().any() {
            ""
        } else if pos.legal_moves().is_empty() {
            "#"
        } else {
            "+"
        };
        token.clear();
        if white {
            let _ = write!(token, "{number}. {san}{suffix}");
        } else if need_number {
            let _ = write!(token, "{number}... {san}{suffix}");
        } else {
            let _ = write!(token, "{san}{suffix}");
        }
        // One token, so a move number stays on the same line as its move.
        text.token(&token);
        need_number = false;
        comment(&mut text, ply, &mut need_number);
    }
    text.token(termination(game.header.result.as_deref()));
    out.push_str("\n\n");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::moves;
    use shakmaty::san::San;

    fn stored(fen: Option<&str>, chess960: bool, sans: &str) -> StoredGame {
        let mut g = StoredGame {
            id: 7,
            fen: fen.map(str::to_string),
            chess960,
            ..StoredGame::default()
        };
        let mut pos = g.start().unwrap();
        for san in sans.split_whitespace() {
            let m = San::from_ascii(san.as_bytes())
                .unwrap()
                .to_move(&pos)
                .unwrap();
            moves::push(&mut g.moves, &m);
            pos.play_unchecked(m);
        }
        g
    }

    #[test]
    fn pgn_has_tags_numbers_marks_and_result() {
        let mut g = stored(None, false, "e4 e5 Nf3 Nc6 Bb5 a6");
        g.header.white = Some("A \"B\" C\\D".into());
        g.header.result = Some("1-0".into());
        g.header.white_elo = Some(2700);
        let mut out = String::new();
        write_pgn(&mut out, &g, &[(3, "match".into())]).unwrap();
        assert_eq!(
            out,
            "[White \"A \\\"B\\\" C\\\\D\"]\n[Result \"1-0\"]\n[WhiteElo \"2700\"]\n\n\
             1. e4 e5 2. Nf3 {match} 2... Nc6 3. Bb5 a6 1-0\n\n"
        );
    }

    #[test]
    fn pgn_from_a_fen_with_black_to_move_and_a_mark_at_ply_zero() {
        let fen = "4k3/8/8/8/8/8/4P3/4K3 b - - 0 30";
        let g = stored(Some(fen), false, "Kd7 e4 Kc6");
        let mut out = String::new();
        write_pgn(&mut out, &g, &[(0, "start".into())]).unwrap();
        assert!(out.contains("[SetUp \"1\"]\n[FEN \"4k3/8/8/8/8/8/4P3/4K3 b - - 0 30\"]"));
        assert!(out.ends_with("{start} 30... Kd7 31. e4 Kc6 *\n\n"), "{out}");
    }

    #[test]
    fn long_movetext_wraps_and_keeps_numbers_with_moves() {
        let g = stored(
            None,
            false,
            "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8",
        );
        let mut out = String::new();
        write_pgn(&mut out, &g, &[]).unwrap();
        for line in out.lines() {
            assert!(line.len() <= LINE_WIDTH, "{line}");
            assert!(!line.ends_with('.'), "number split from its move: {line}");
        }
    }

    #[test]
    fn cursor_seeks_forwards_and_backwards() {
        let g = stored(None, false, "e4 d5 exd5");
        let mut c = Cursor::new(g).unwrap();
        assert_eq!(
            c.fen(3).unwrap(),
            "rnbqkbnr/ppp1pppp/8/3P4/8/8/PPPP1PPP/RNBQKBNR b KQkq - 0 2"
        );
        assert_eq!(
            c.fen(1).unwrap(),
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
        );
        assert!(c.fen(4).unwrap_err().to_string().contains("no ply 4"));
    }
}
