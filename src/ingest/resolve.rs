//! SAN to a move without a move list, for the moves most games are made of.
//!
//! shakmaty's `San::to_move` lists the legal moves of the SAN's piece to its square (an
//! array of up to 256 moves, made and copied for each move) and keeps those the SAN matches.
//! That was a fifth of the replay's time. Out of check, a normal move needs far less: the
//! pieces of that kind that reach the square, and for each, whether moving it uncovers a
//! slider on its king.
//!
//! ```text
//!   Nbd7:  knight_attacks(d7) & our knights & file b  ──> b8      (one candidate)
//!          b8 -> d7 uncovers no bishop, rook or queen on our king ──> legal: the move
//! ```
//!
//! [`resolve`] answers only when the answer is certain: exactly one legal move that matches
//! the SAN as shakmaty matches it (file, rank, capture flag, promotion). Anything else (a
//! king in check, castling, en passant, a pawn capture without its file, no match or more
//! than one) is `None`: the caller asks shakmaty, and keeps its answer and its error.

use shakmaty::attacks::{bishop_attacks, king_attacks, knight_attacks, pawn_attacks, rook_attacks};
use shakmaty::san::San;
use shakmaty::{Bitboard, Chess, Move, Position, Rank, Role, Square};

/// The one legal move `san` names in `pos`, when that is certain without a move list.
#[inline]
pub(super) fn resolve(pos: &Chess, san: &San) -> Option<Move> {
    let San::Normal {
        role,
        file,
        rank,
        capture,
        to,
        promotion,
    } = *san
    else {
        return None;
    };
    let board = pos.board();
    let us = pos.turn();
    let king = board.king_of(us)?;
    let occupied = board.occupied();
    let ours = board.by_color(us);
    if ours.contains(to) {
        return None;
    }
    // A capture flag that does not fit the square: shakmaty finds no move (or, for a pawn,
    // perhaps en passant).
    let captured = board.role_at(to);
    if captured.is_some() != capture || captured == Some(Role::King) {
        return None;
    }
    if pos.is_check() {
        return None;
    }
    let matches = |from: Square| {
        file.is_none_or(|f| f == from.file()) && rank.is_none_or(|r| r == from.rank())
    };
    // Moving a piece (not the king) from `from` leaves no slider of theirs on our king: out
    // of check, only a discovered attack can make the move illegal.
    let safe = |from: Square| {
        let after = (occupied ^ Bitboard::from_square(from)) | Bitboard::from_square(to);
        let sliders = board.by_color(!us) & !Bitboard::from_square(to);
        ((bishop_attacks(king, after) & board.bishops_and_queens())
            | (rook_attacks(king, after) & board.rooks_and_queens()))
            & sliders
            == Bitboard::EMPTY
    };
    let from = match role {
        Role::Pawn => {
            let last_rank = if us.is_white() {
                Rank::Eighth
            } else {
                Rank::First
            };
            if (to.rank() == last_rank) != promotion.is_some()
                || matches!(promotion, Some(Role::Pawn | Role::King))
            {
                return None;
            }
            let behind = |sq: Square| sq.offset(if us.is_white() { -8 } else { 8 });
            let pawns = board.pawns() & ours;
            let from = if capture {
                // `exd5`: the file names the one pawn that can take.
                let from = Square::from_coords(file?, behind(to)?.rank());
                (pawn_attacks(us, from).contains(to) && pawns.contains(from)).then_some(from)?
            } else {
                let one = behind(to)?;
                let double_rank = if us.is_white() {
                    Rank::Fourth
                } else {
                    Rank::Fifth
                };
                if pawns.contains(one) {
                    one
                } else if !occupied.contains(one) && to.rank() == double_rank {
                    let two = behind(one)?;
                    pawns.contains(two).then_some(two)?
                } else {
                    return None;
                }
            };
            (matches(from) && safe(from)).then_some(from)?
        }
        Role::King => {
            let from = king;
            let free = !board
                .attacks_to(to, !us, occupied ^ Bitboard::from_square(from))
                .any();
            (promotion.is_none() && king_attacks(from).contains(to) && matches(from) && free)
                .then_some(from)?
        }
        Role::Knight | Role::Bishop | Role::Rook | Role::Queen => {
            if promotion.is_some() {
                return None;
            }
            let reach = match role {
                Role::Knight => knight_attacks(to),
                Role::Bishop => bishop_attacks(to, occupied),
                Role::Rook => rook_attacks(to, occupied),
                _ => bishop_attacks(to, occupied) | rook_attacks(to, occupied),
            };
            let mut found = None;
            for from in reach & board.by_role(role) & ours {
                if matches(from) && safe(from) {
                    if found.is_some() {
                        return None;
                    }
                    found = Some(from);
                }
            }
            found?
        }
    };
    Some(Move::Normal {
        role,
        from,
        capture: captured,
        to,
        promotion,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, File};

    /// Every check of one position: the SAN of each legal move (plain, fully disambiguated,
    /// with the wrong capture flag) resolves to that move or to nothing, and any SAN at all
    /// that resolves names the move shakmaty reads.
    fn check(pos: &Chess) {
        let agree = |san: San| {
            if let Some(m) = resolve(pos, &san) {
                assert_eq!(
                    san.to_move(pos),
                    Ok(m),
                    "{san} in {}",
                    Fen::from_position(pos, shakmaty::EnPassantMode::Legal)
                );
            }
        };
        for m in pos.legal_moves() {
            let san = San::from_move(pos, m);
            agree(san);
            if let San::Normal {
                role,
                capture,
                to,
                promotion,
                ..
            } = san
            {
                let from = m.from().expect("not a drop");
                let full = |capture| San::Normal {
                    role,
                    file: Some(from.file()),
                    rank: Some(from.rank()),
                    capture,
                    to,
                    promotion,
                };
                agree(full(capture));
                agree(full(!capture));
            }
        }
        let roles = [
            Role::Pawn,
            Role::Knight,
            Role::Bishop,
            Role::Rook,
            Role::Queen,
            Role::King,
        ];
        for role in roles {
            let promotions: &[Option<Role>] = match role {
                Role::Pawn => &[
                    None,
                    Some(Role::Queen),
                    Some(Role::Knight),
                    Some(Role::King),
                ],
                _ => &[None, Some(Role::Queen)],
            };
            for to in Square::ALL {
                for capture in [false, true] {
                    for file in std::iter::once(None).chain(File::ALL.map(Some)) {
                        for rank in [None, Some(Rank::Second)] {
                            for &promotion in promotions {
                                agree(San::Normal {
                                    role,
                                    file,
                                    rank,
                                    capture,
                                    to,
                                    promotion,
                                });
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn positions_with_pins_checks_promotions_and_en_passant() {
        for fen in [
            // A knight pinned on the e-file, two rooks that both reach d4.
            "4r1k1/8/8/8/R6R/8/4N3/4K3 w - - 0 1",
            // In check: every SAN is left to shakmaty.
            "4k3/8/8/8/8/8/3q4/R3K2R w KQ - 0 1",
            // Promotions, with captures on both sides.
            "1r1n4/P1P3k1/8/8/8/8/6K1/8 w - - 0 1",
            // En passant available on c6.
            "4k3/8/8/2pPp3/8/8/8/4K3 w - c6 0 2",
            // A pawn pinned diagonally, double pushes.
            "4k3/8/8/b7/8/8/3P4/4K3 w - - 0 1",
            // Black to move: pushes and captures go down.
            "4k3/3p4/2P5/8/8/8/8/4K3 b - - 0 1",
        ] {
            let pos: Chess = fen
                .parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap();
            check(&pos);
        }
        let start = Chess::default();
        assert_eq!(
            resolve(&start, &"Nf3".parse().unwrap()),
            "Nf3".parse::<San>().unwrap().to_move(&start).ok()
        );
        // The pinned knight: shakmaty's answer, not a guess.
        let pinned: Chess = "4r1k1/8/8/8/R6R/8/4N3/4K3 w - - 0 1"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        assert_eq!(resolve(&pinned, &"Nc3".parse().unwrap()), None);
        assert_eq!(resolve(&pinned, &"Rd4".parse().unwrap()), None, "ambiguous");
        assert!(resolve(&pinned, &"Rad4".parse().unwrap()).is_some());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(12))]
        /// Random games: at every position, [`check`]; most moves of a game resolve.
        #[test]
        fn resolves_as_shakmaty_does(choices in proptest::collection::vec(any::<u16>(), 1..80)) {
            let mut pos = Chess::default();
            let (mut played, mut fast) = (0, 0);
            for c in choices {
                check(&pos);
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let m = moves[usize::from(c) % moves.len()];
                if resolve(&pos, &San::from_move(&pos, m)).is_some() {
                    fast += 1;
                }
                played += 1;
                pos.play_unchecked(m);
            }
            prop_assert!(fast * 2 >= played, "{fast} of {played} moves resolved");
        }
    }
}
