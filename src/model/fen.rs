//! The pawns of a position given as a FEN (or only its board part), with errors that point at
//! the fault: the rank and the character of a bad board, pawns on rank 1 or 8, more than 8
//! pawns of a side.

use anyhow::Result;
use shakmaty::Board;
use shakmaty::fen::Fen;

use crate::model::bad_value;

/// Pawn bitboards (white, black) of a FEN or a FEN board part (`--structure` of `find` and
/// `similar`). A fault is named where it is (the rank and character of a bad board), and a
/// pawn on rank 1 or 8, which no position has, is refused.
pub fn structure_of(text: &str) -> Result<(u64, u64)> {
    let t = text.trim();
    let bad = |why: String| Err(bad_value("--structure", "", format!("\"{text}\" {why}")));
    // The board part is checked first: a FEN parser may let through what is no board of 8
    // ranks (`8/8/8/8/8/8/8/8/`, a ninth empty rank).
    if let Some(why) = board_fault(t.split_whitespace().next().unwrap_or("")) {
        return bad(format!("is not a valid FEN: {why}"));
    }
    let board = match Fen::from_ascii(t.as_bytes()) {
        Ok(fen) => fen.as_setup().board.clone(),
        Err(full) => match Board::from_ascii_board_fen(t.as_bytes()) {
            Ok(board) => board,
            Err(_) => {
                let why = board_fault(t.split_whitespace().next().unwrap_or(""))
                    .unwrap_or_else(|| full.to_string());
                return bad(format!("is not a valid FEN: {why}"));
            }
        },
    };
    let pawns = board.pawns();
    const RANKS_1_AND_8: u64 = 0xFF00_0000_0000_00FF;
    if pawns.0 & RANKS_1_AND_8 != 0 {
        let on: Vec<String> = (pawns.0 & RANKS_1_AND_8)
            .to_le_bytes()
            .iter()
            .zip(0u32..)
            .flat_map(|(&byte, rank)| {
                (0u32..8)
                    .filter(move |f| byte & (1 << f) != 0)
                    .map(move |f| format!("{}{}", char::from(b'a' + f as u8), rank + 1))
            })
            .collect();
        return bad(format!(
            "has {} {} (pawns never stand on rank 1 or 8)",
            if on.len() == 1 {
                "a pawn on"
            } else {
                "pawns on"
            },
            on.join(" ")
        ));
    }
    let (white, black) = ((pawns & board.white()).0, (pawns & board.black()).0);
    for (side, set) in [("White", white), ("Black", black)] {
        if set.count_ones() > 8 {
            return bad(format!(
                "has {} {side} pawns (a side has at most 8)",
                set.count_ones()
            ));
        }
    }
    Ok((white, black))
}

/// Where a FEN's board part goes wrong, in words: the count of ranks, or the first rank with a
/// character that is no piece or digit, or with other than 8 squares. `None` when none is
/// found (the fault is elsewhere).
fn board_fault(board: &str) -> Option<String> {
    if board.len() > 1 && board.ends_with('/') {
        return Some(format!(
            "the board part \"{board}\" ends with a / (its 8 ranks are separated by 7)"
        ));
    }
    let ranks: Vec<&str> = board.split('/').collect();
    if ranks.len() != 8 {
        return Some(format!(
            "the board part \"{board}\" has {} ranks (separated by /), not 8",
            ranks.len()
        ));
    }
    for (rank, number) in ranks.iter().zip((1..=8).rev()) {
        let mut squares = 0;
        for (i, c) in rank.chars().enumerate() {
            match c {
                '1'..='8' => squares += c.to_digit(10).unwrap_or(0),
                'p' | 'n' | 'b' | 'r' | 'q' | 'k' | 'P' | 'N' | 'B' | 'R' | 'Q' | 'K' => {
                    squares += 1;
                }
                // shakmaty's mark of a promoted piece
                '~' => {}
                _ => {
                    return Some(format!(
                        "rank {number} (\"{rank}\") has '{c}' at character {}, which is no \
                         piece (PNBRQK for White, pnbrqk for Black) and no digit 1-8",
                        i + 1
                    ));
                }
            }
        }
        if squares != 8 {
            return Some(format!(
                "rank {number} (\"{rank}\") covers {squares} squares, not 8"
            ));
        }
    }
    None
}
