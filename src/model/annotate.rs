//! A game annotated with what a reference database's games did in its structures (`pawndex
//! annotate`, "Your game" in the explorer; docs/annotate.md is the contract): the data, and the
//! layout of a game's text that lets comments be put in and taken out again byte for byte.

use shakmaty::Color;

use crate::model::plans::{ModelGame, MoveRow, side_score};

/// The mark every comment pawndex writes starts with (`{pawndex: …}`): `--strip` and a second
/// annotation find them by it.
pub const MARK: &str = "pawndex:";

/// The least plies (positions) a game keeps an unnamed pawn structure for that structure to be
/// commented on.
pub const SETTLED: u32 = 8;

/// Why a game was not annotated: the ply (1-based half-move) that could not be played, if
/// replay got that far, and the reason.
#[derive(Clone, Debug)]
pub struct Failure {
    pub ply: Option<u32>,
    pub reason: String,
}

/// A named structure form: catalogue key, colour-reversed or not, display name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Form {
    pub key: String,
    pub reversed: bool,
    pub name: String,
}

impl Form {
    /// The key as `plans --structure-name` takes it (`panov~` for the reversed form).
    #[must_use]
    pub fn arg(&self) -> String {
        if self.reversed {
            format!("{}~", self.key)
        } else {
            self.key.clone()
        }
    }

    /// The name as shown (`Panov (reversed)`).
    #[must_use]
    pub fn shown(&self) -> String {
        if self.reversed {
            format!("{} (reversed)", self.name)
        } else {
            self.name.clone()
        }
    }
}

/// What the reference's games did in one named form: `plans --structure-name KEY[~]` over the
/// whole reference.
#[derive(Clone, Debug)]
pub struct FormFigures {
    /// Games in the form by outcome (White wins, draws, Black wins, unknown).
    pub games: [u64; 4],
    pub positions: u64,
    /// Stays (stretches of plies) in the form: the average stay is positions / stays.
    pub stays: u64,
    /// Per side (White, Black): its most played plan moves there.
    pub moves: [Vec<MoveRow>; 2],
    /// Every move that leaves the form (pawn breaks, then piece captures of a pawn), most
    /// played first.
    pub exits: Vec<MoveRow>,
    pub model_games: Vec<ModelGame>,
}

impl FormFigures {
    #[must_use]
    pub fn game_count(&self) -> u64 {
        self.games.iter().sum()
    }

    /// The side's score in percent over the games with a result.
    #[must_use]
    pub fn score(&self, side: Color) -> Option<f64> {
        side_score(&self.games, side)
    }

    /// The average stay in plies.
    #[must_use]
    pub fn average_stay(&self) -> Option<f64> {
        (self.stays > 0).then(|| self.positions as f64 / self.stays as f64)
    }

    /// The side's pawn breaks (exits by a pawn move), most played first.
    pub fn breaks(&self, side: Color) -> impl Iterator<Item = &MoveRow> {
        self.exits
            .iter()
            .filter(move |r| r.mv.side() == side && r.mv.is_pawn())
    }
}

/// How the game left a named form, against the reference's games.
#[derive(Clone, Debug)]
pub struct LeftBy {
    pub from: Form,
    /// The game's move as the reference counts it, with its games (0 when no reference game
    /// left the form by it to the same structure).
    pub row: MoveRow,
    /// The reference's most played other exits of the mover.
    pub alternatives: Vec<MoveRow>,
    /// The reference's games in the form left (for the threshold of quoting).
    pub form_games: u64,
}

/// A ply where the game's named structure changes (ply 0 when it starts in one).
#[derive(Clone, Debug)]
pub struct Change {
    pub ply: u32,
    /// The move that made the change, as written in the game (`None` at ply 0).
    pub san: Option<String>,
    pub to_move: Color,
    pub structure: Option<Form>,
    pub reference: Option<std::sync::Arc<FormFigures>>,
    pub left_by: Option<LeftBy>,
}

/// The reference's games with exactly some pawns, or a structure near them (a row of
/// `similar`).
#[derive(Clone, Debug)]
pub struct PawnsFigures {
    pub white: u64,
    pub black: u64,
    pub distance: u32,
    pub differs: String,
    pub games: u64,
    pub positions: u64,
    pub white_score: Option<f64>,
    /// Its named form, if it has one.
    pub form: Option<Form>,
}

/// An unnamed stretch's pawn structure that the game keeps [`SETTLED`] plies or more.
#[derive(Clone, Debug)]
pub struct Settled {
    pub ply: u32,
    pub last_ply: u32,
    pub white: u64,
    pub black: u64,
    /// The reference's games with exactly these pawns (`games` 0 when none).
    pub exact: PawnsFigures,
    /// The nearest structure with at least the quoting threshold's games, when the exact one
    /// has fewer.
    pub nearest: Option<PawnsFigures>,
}

/// A stretch of the game in one named structure (or none).
#[derive(Clone, Debug)]
pub struct Stretch {
    pub structure: Option<Form>,
    pub first_ply: u32,
    pub last_ply: u32,
}

/// Everything said about one game.
#[derive(Clone, Debug, Default)]
pub struct Notes {
    pub plies: u32,
    pub stretches: Vec<Stretch>,
    pub changes: Vec<Change>,
    pub settled: Vec<Settled>,
    /// Below this many games a figure is not quoted.
    pub min_games: u64,
}

/// Where comments go in one game's text, as the PGN reader reads its mainline.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// Where the movetext starts (after the tags and the blank lines after them).
    pub start: usize,
    /// Per mainline move (ply 1 first): the byte just after the move and the NAGs and glyphs
    /// (`!?`, `$1`) that follow it: where a comment on the position after it goes.
    pub after: Vec<usize>,
    /// The mainline's comments, braces included: (first byte, byte after the `}`).
    pub comments: Vec<(usize, usize)>,
    /// Where the first move starts (`None`: no move).
    pub first_move: Option<usize>,
}

impl Layout {
    /// Where a comment on the position at `ply` goes (ply 0: before the first move).
    #[must_use]
    pub fn at(&self, ply: u32) -> Option<usize> {
        if ply == 0 {
            return Some(self.start);
        }
        self.after.get(usize::try_from(ply).ok()? - 1).copied()
    }
}

/// Whether a comment's text (braces included) is one pawndex wrote.
#[must_use]
pub fn is_marked(comment: &[u8]) -> bool {
    let inner = comment.strip_prefix(b"{").unwrap_or(comment);
    let start = inner
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(inner.len());
    inner[start..].starts_with(MARK.as_bytes())
}

/// The text without the marked comments of `layout`, each with the one space or line break (LF
/// or CR LF) [`insert`] put before it (before the first move: after it): what `--strip` writes, and what
/// a game is annotated from.
///
/// ```
/// # use pawndex::model::annotate::{Layout, strip};
/// let text = b"{pawndex: a}\n{pawndex: b}\n1. e4\n{pawndex: c} {mine} e5 *";
/// let layout = Layout {
///     start: 0,
///     after: vec![31, 54],
///     comments: vec![(0, 12), (13, 25), (32, 44), (45, 51)],
///     first_move: Some(29),
/// };
/// assert_eq!(strip(text, &layout), b"1. e4 {mine} e5 *".to_vec());
/// ```
#[must_use]
pub fn strip(text: &[u8], layout: &Layout) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut copied = 0usize;
    let first_move = layout.first_move.unwrap_or(usize::MAX);
    for &(s, e) in &layout.comments {
        if s < copied || e > text.len() || !is_marked(&text[s..e]) {
            continue;
        }
        // The separator put with it: a space, a line feed, or CR LF.
        let after = |at: usize| match text.get(at..) {
            Some([b'\r', b'\n', ..]) => at + 2,
            Some([b' ' | b'\n', ..]) => at + 1,
            _ => at,
        };
        let before = |at: usize| {
            if at >= copied + 2 && &text[at - 2..at] == b"\r\n" {
                at - 2
            } else if at > copied && matches!(text[at - 1], b' ' | b'\n') {
                at - 1
            } else {
                at
            }
        };
        let (from, to) = if e <= first_move {
            (s, after(e))
        } else {
            (before(s), e)
        };
        out.extend_from_slice(&text[copied..from]);
        copied = to;
    }
    out.extend_from_slice(&text[copied..]);
    out
}

/// Longest line of a comment's text (PGN's export format keeps lines under 80 characters;
/// the comment's first line goes on after the move's).
const LINE: usize = 78;

/// A comment's text broken at spaces into lines of at most [`LINE`] characters (a longer word
/// stays whole).
///
/// ```
/// # use pawndex::model::annotate::wrap;
/// let w = wrap(&"word ".repeat(40));
/// assert!(w.lines().all(|l| l.chars().count() <= 78));
/// assert_eq!(w.split_whitespace().count(), 40);
/// ```
#[must_use]
pub fn wrap(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / LINE + 1);
    let mut line = 0usize;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let n = word.chars().count();
        if line > 0 && line + 1 + n > LINE {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += n;
    }
    out
}

/// The text with `comments` (ply, text without braces) put in at their plies, in order, each
/// on lines of its own: at ply 0 `{…}` and a line break before the first move, after a move a
/// line break and `{…}`. A ply the layout does not have (past the game's end) is skipped. The
/// line breaks are the game's (CRLF when its text has one, else LF); a text that is not UTF-8
/// (Latin-1, as PGN's standard has it) gets its comments in Latin-1 (a character outside it as
/// `?`).
///
/// ```
/// # use pawndex::model::annotate::{Layout, insert};
/// let text = b"1. e4 $1 e5 *";
/// let layout = Layout { start: 0, after: vec![8, 11], comments: vec![], first_move: Some(3) };
/// let out = insert(text, &layout, &[(0, "pawndex: s".into()), (1, "pawndex: x".into())]);
/// assert_eq!(out, b"{pawndex: s}\n1. e4 $1\n{pawndex: x} e5 *".to_vec());
/// ```
#[must_use]
pub fn insert(text: &[u8], layout: &Layout, comments: &[(u32, String)]) -> Vec<u8> {
    let mut placed: Vec<(usize, u32, &str)> = comments
        .iter()
        .filter_map(|(ply, c)| Some((layout.at(*ply)?, *ply, c.as_str())))
        .filter(|(at, _, _)| *at <= text.len())
        .collect();
    // Stable: the comments of one ply stay in the order given.
    placed.sort_by_key(|&(at, ply, _)| (at, ply));
    let extra: usize = placed.iter().map(|(_, _, c)| c.len() + 4).sum();
    let mut out = Vec::with_capacity(text.len() + extra);
    // The game's own line ends (CRLF or LF) and, for a text that is not UTF-8, its Latin-1.
    let newline: &[u8] = if text.windows(2).any(|w| w == b"\r\n") {
        b"\r\n"
    } else {
        b"\n"
    };
    let latin1 = std::str::from_utf8(text).is_err();
    let encode = |s: &str| -> Vec<u8> {
        let lines = s.replace('\n', if newline.len() == 2 { "\r\n" } else { "\n" });
        if latin1 {
            lines
                .chars()
                .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
                .collect()
        } else {
            lines.into_bytes()
        }
    };
    let mut copied = 0usize;
    for (at, ply, c) in placed {
        out.extend_from_slice(&text[copied..at]);
        copied = at;
        let clean = encode(&wrap(&c.replace('{', "(").replace('}', ")")));
        if ply == 0 {
            out.push(b'{');
            out.extend_from_slice(&clean);
            out.push(b'}');
            out.extend_from_slice(newline);
        } else {
            out.extend_from_slice(newline);
            out.push(b'{');
            out.extend_from_slice(&clean);
            out.push(b'}');
        }
    }
    out.extend_from_slice(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout_of(text: &[u8], moves: &[&str]) -> Layout {
        // A layout by hand: each move found after the previous one, comments by braces.
        let mut after = Vec::new();
        let mut from = 0;
        let mut first_move = None;
        for m in moves {
            let at = from
                + text[from..]
                    .windows(m.len())
                    .position(|w| w == m.as_bytes())
                    .unwrap();
            first_move.get_or_insert(at);
            from = at + m.len();
            after.push(from);
        }
        let mut comments = Vec::new();
        let mut i = 0;
        while let Some(s) = text[i..].iter().position(|&b| b == b'{') {
            let e = i + s + text[i + s..].iter().position(|&b| b == b'}').unwrap() + 1;
            comments.push((i + s, e));
            i = e;
        }
        Layout {
            start: 0,
            after,
            comments,
            first_move,
        }
    }

    /// Comments go in with the game's line ends and its Latin-1, and come out byte for byte.
    #[test]
    fn crlf_and_latin1_games_keep_their_line_ends_and_encoding() {
        let text = b"1. e4 e5\r\n2. Nf3 *\r\n";
        let l = layout_of(text, &["e4", "e5", "Nf3"]);
        let out = insert(
            text,
            &l,
            &[
                (0, "pawndex: s".into()),
                (1, "pawndex: Gr\u{fc}nfeld".into()),
            ],
        );
        assert_eq!(
            out,
            "{pawndex: s}\r\n1. e4\r\n{pawndex: Gr\u{fc}nfeld} e5\r\n2. Nf3 *\r\n".as_bytes()
        );
        assert!(
            !out.windows(2).any(|w| w[1] == b'\n' && w[0] != b'\r'),
            "a bare LF"
        );
        assert_eq!(
            strip(&out, &layout_of(&out, &["e4", "e5", "Nf3"])),
            text.to_vec()
        );

        let latin1 = b"[White \"Caf\xe9\"]\n\n1. e4 e5 *\n";
        let mut l = layout_of(latin1, &["e4", "e5"]);
        l.start = 17;
        let out = insert(latin1, &l, &[(1, "pawndex: Gr\u{fc}nfeld \u{141}".into())]);
        assert!(
            out.windows(14).any(|w| w == b"pawndex: Gr\xfcnf"),
            "Latin-1 u-umlaut"
        );
        assert!(out.windows(2).any(|w| w == b" ?"), "outside Latin-1: ?");
        let back = strip(&out, &layout_of(&out, &["e4", "e5"]));
        assert_eq!(back, latin1.to_vec());
    }
}
