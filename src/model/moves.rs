//! Compact move encoding stored in `games.moves`: two bytes per ply, little-endian
//! `from | to << 6 | promotion << 12`.
//!
//! `from`/`to` are square indices (a1 = 0 … h8 = 63); castling is stored as king square to rook
//! square (as in Chess960 UCI), so both standard and Chess960 castling round-trip; `promotion`
//! is 0 for none, else the role number (knight 2, bishop 3, rook 4, queen 5). A stored game is
//! replayed by matching each code against the legal moves of the position.

use shakmaty::san::{San, SanPlus, Suffix};
use shakmaty::{CastlingSide, Chess, Move, MoveList, Position, Role, Square};

/// Encodes one move. Drops (`Q@f7`) are never stored; they encode as `to << 6`.
#[must_use]
pub fn encode(m: &Move) -> u16 {
    let (from, to, promotion) = match *m {
        Move::Normal {
            from,
            to,
            promotion,
            ..
        } => (from, to, promotion),
        Move::EnPassant { from, to } => (from, to, None),
        Move::Castle { king, rook } => (king, rook, None),
        Move::Put { to, .. } => (shakmaty::Square::A1, to, None),
    };
    u16::from(from) | (u16::from(to) << 6) | (promotion.map_or(0, |r| r as u16) << 12)
}

/// Appends a move's code to a byte buffer.
pub fn push(buf: &mut Vec<u8>, m: &Move) {
    buf.extend_from_slice(&encode(m).to_le_bytes());
}

/// Finds the legal move with this code by searching every legal move.
pub fn decode_exhaustive(pos: &Chess, code: u16) -> Option<Move> {
    pos.legal_moves().into_iter().find(|m| encode(m) == code)
}

/// The move a code stands for in `pos`, built from the board: the piece on the `from` square
/// tells castling (king to own rook), en passant (pawn to an empty square on another file) and
/// the role apart. Not checked for legality.
pub fn candidate(pos: &Chess, code: u16) -> Option<Move> {
    let from = Square::new(u32::from(code & 63));
    let to = Square::new(u32::from((code >> 6) & 63));
    let board = pos.board();
    let piece = board.piece_at(from)?;
    let ours = board.by_color(piece.color);
    Some(
        if piece.role == Role::King && (ours & board.rooks()).contains(to) {
            Move::Castle {
                king: from,
                rook: to,
            }
        } else if piece.role == Role::Pawn
            && from.file() != to.file()
            && !board.occupied().contains(to)
        {
            Move::EnPassant { from, to }
        } else {
            Move::Normal {
                role: piece.role,
                from,
                capture: board.role_at(to),
                to,
                promotion: promotion(code),
            }
        },
    )
}

/// The legal moves that share a SAN "family" with `m` (same role and target, or same castling
/// side): enough both to check `m` is legal and to disambiguate its SAN.
pub fn siblings(pos: &Chess, m: Move) -> MoveList {
    match m {
        Move::Normal { role, to, .. } | Move::Put { role, to } => pos.san_candidates(role, to),
        Move::EnPassant { to, .. } => pos.san_candidates(Role::Pawn, to),
        Move::Castle { king, rook } => pos.castling_moves(if king.file() < rook.file() {
            CastlingSide::KingSide
        } else {
            CastlingSide::QueenSide
        }),
    }
}

/// Finds the legal move with this code in `pos`. Building the move from the board and checking
/// it against the moves to its target square is several times faster than searching every
/// legal move ([`decode_exhaustive`], kept as the fallback).
#[must_use]
pub fn decode(pos: &Chess, code: u16) -> Option<Move> {
    match candidate(pos, code) {
        Some(m) if encode(&m) == code && siblings(pos, m).contains(&m) => Some(m),
        _ => decode_exhaustive(pos, code),
    }
}

/// The SAN of `m`, played in `before` to reach `after`, with its check or mate mark (`exd5`,
/// `Qxf7#`).
#[must_use]
pub fn san_plus(before: &Chess, m: Move, after: &Chess) -> String {
    with_suffix(san(before, m), after)
}

/// The SAN of `m` in `before`, without its check mark: a pawn move's needs no look at the
/// position ([`pawn_san`]); a piece move is disambiguated against its siblings.
#[must_use]
pub fn san(before: &Chess, m: Move) -> San {
    pawn_san(m).unwrap_or_else(|| San::disambiguate(m, &siblings(before, m)))
}

/// The SAN of a pawn move (a capture names its file, a push nothing); `None` for other moves.
#[must_use]
pub fn pawn_san(m: Move) -> Option<San> {
    match m {
        Move::Normal {
            role: Role::Pawn,
            from,
            capture,
            to,
            promotion,
        } => Some(San::Normal {
            role: Role::Pawn,
            file: capture.is_some().then(|| from.file()),
            rank: None,
            capture: capture.is_some(),
            to,
            promotion,
        }),
        Move::EnPassant { from, to } => Some(San::Normal {
            role: Role::Pawn,
            file: Some(from.file()),
            rank: None,
            capture: true,
            to,
            promotion: None,
        }),
        _ => None,
    }
}

/// A SAN with the check or mate mark of the position it leads to.
#[must_use]
pub fn with_suffix(san: San, after: &Chess) -> String {
    SanPlus {
        san,
        suffix: Suffix::from_position(after),
    }
    .to_string()
}

/// Iterates over the codes of a `games.moves` blob.
#[cfg(test)]
fn codes(blob: &[u8]) -> impl Iterator<Item = u16> + '_ {
    blob.chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
}

/// The promotion role stored in a code, if any.
#[must_use]
pub fn promotion(code: u16) -> Option<Role> {
    Role::try_from((code >> 12) as u8).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{CastlingMode, fen::Fen};

    fn play(pos: &mut Chess, san: &str) -> Move {
        let m = San::from_ascii(san.as_bytes())
            .unwrap()
            .to_move(pos)
            .unwrap();
        pos.play_unchecked(m);
        m
    }

    #[test]
    fn every_legal_move_round_trips_and_no_other_code_decodes() {
        let fens = [
            "r3k2r/pPpp1ppp/8/3Pp3/8/8/PPP2PPP/R3K2R w KQkq e6 0 1",
            "4k3/1P6/8/8/8/8/6p1/4K2R b K - 0 1",
            "rn2k1r1/ppp1pp1p/3p2p1/5bn1/P7/2N2B2/1PPPPP2/2BNK1RR w Gkq - 4 11",
        ];
        for fen in fens {
            let mode = if fen.contains("Gkq") {
                CastlingMode::Chess960
            } else {
                CastlingMode::Standard
            };
            let pos: Chess = Fen::from_ascii(fen.as_bytes())
                .unwrap()
                .into_position(mode)
                .unwrap();
            for m in &pos.legal_moves() {
                assert_eq!(decode(&pos, encode(m)), Some(*m), "{fen}: {m:?}");
            }
            // A code of no legal move decodes to nothing.
            assert_eq!(decode(&pos, 0), None);
        }
    }

    #[test]
    fn san_plus_matches_shakmaty_for_every_legal_move() {
        let fens = [
            "r3k2r/pPpp1ppp/8/3Pp3/8/2N2N2/PPP2PPP/R3K2R w KQkq e6 0 1",
            "4k3/1P6/8/8/8/8/6p1/4K2R b K - 0 1",
            "6k1/5ppp/8/8/8/8/5PPP/R3R1K1 w - - 0 1",
            "rnbqkbnr/ppp2ppp/8/3pp3/4P3/5Q2/PPPP1PPP/RNB1KBNR w KQkq - 0 3",
        ];
        for fen in fens {
            let pos: Chess = Fen::from_ascii(fen.as_bytes())
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap();
            for m in &pos.legal_moves() {
                let mut after = pos.clone();
                after.play_unchecked(*m);
                let want = SanPlus::from_move(pos.clone(), *m).to_string();
                assert_eq!(san_plus(&pos, *m, &after), want, "{fen}");
            }
        }
    }

    #[test]
    fn game_blob_replays() {
        let mut pos = Chess::default();
        let mut blob = Vec::new();
        for san in ["e4", "d5", "exd5", "Qxd5", "Nc3", "Qa5"] {
            let m = play(&mut pos, san);
            push(&mut blob, &m);
        }
        let mut replay = Chess::default();
        for code in codes(&blob) {
            let m = decode(&replay, code).unwrap();
            replay.play_unchecked(m);
        }
        assert_eq!(replay.board(), pos.board());
        assert_eq!(blob.len(), 12);
    }
}
