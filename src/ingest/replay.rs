//! Stage 2 of the pipeline: [`RawGame`] -> [`GameRecord`] (or [`Reject`]).
//!
//! Replays the mainline with shakmaty from the standard start, a FEN start or a Chess960 start,
//! tracks the piece-set slots through captures, en passant, castling and promotion, and
//! compresses the per-ply values into runs: a new run starts whenever the pawn structure, the
//! piece-set or the bishop-pair flags change, which only a pawn move or a capture can do.
//! Each run gets the named structure its pawns form ([`crate::model::structure`]), and every ply where
//! the name changes is kept with the move that changed it.

use shakmaty::fen::Fen;
use shakmaty::san::{San, SanError};
use shakmaty::{
    Board, CastlingMode, CastlingSide, Chess, Color, EnPassantMode, Move, Position,
    PositionErrorKinds, Role, Square,
};

use crate::ingest::reader::{RawGame, ReadProblem, Tags};
use crate::ingest::resolve::resolve;
use crate::model::features::{self, SideFeatures};
use crate::model::moves;
use crate::model::pieceset::{NO_SLOT, initial_slots, move_slots};
use crate::model::structure::{Catalogue, Code};

pub use crate::model::game::{
    GameRecord, GameSummary, Header, Reject, RejectCategory, Replayed, Run, StructureChange,
};

/// Per-ply values of a position (pieceset tracked by the caller).
#[inline]
fn snapshot(board: &Board) -> (u64, u64, u8) {
    let pawns = board.pawns();
    let bishops = board.bishops();
    let white = board.white();
    let black = board.black();
    let pairs = u8::from(features::bishop_pair((bishops & white).0))
        | (u8::from(features::bishop_pair((bishops & black).0)) << 1);
    ((pawns & white).0, (pawns & black).0, pairs)
}

fn is_chess960_name(v: &str) -> bool {
    let v: String = v
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .collect::<String>()
        .to_ascii_lowercase();
    matches!(
        v.as_str(),
        "chess960" | "fischerandom" | "fischerrandom" | "960"
    )
}

fn is_standard_name(v: &str) -> bool {
    let v: String = v
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    matches!(
        v.as_str(),
        "" | "standard" | "chess" | "normal" | "fromposition" | "orthodox" | "classical"
    )
}

/// Start position of a game and whether it is Chess960.
#[allow(clippy::result_large_err)] // shakmaty hands the position back in its error type
fn start_position(tags: &Tags) -> Result<(Chess, bool), (RejectCategory, String)> {
    let mut chess960 = false;
    if let Some(v) = tags.variant.as_deref() {
        if is_chess960_name(v) {
            chess960 = true;
        } else if !is_standard_name(v) {
            return Err((
                RejectCategory::UnsupportedVariant,
                format!(": {}", v.trim().to_lowercase()),
            ));
        }
    }
    let Some(fen_text) = tags.fen.as_deref() else {
        return Ok((Chess::default(), chess960));
    };
    let fen = Fen::from_ascii(fen_text.trim().as_bytes())
        .map_err(|e| (RejectCategory::InvalidFen, format!(" \"{fen_text}\": {e}")))?;
    let mode = if chess960 {
        CastlingMode::Chess960
    } else {
        CastlingMode::Standard
    };
    let strict = fen.clone().into_position::<Chess>(mode);
    let result = match strict {
        Ok(pos) => Ok(pos),
        Err(e) if !chess960 && e.kinds() == PositionErrorKinds::INVALID_CASTLING_RIGHTS => {
            // Castling rights only Chess960 allows (rook files, or a king off the e-file).
            match fen.clone().into_position::<Chess>(CastlingMode::Chess960) {
                Ok(pos) => {
                    chess960 = true;
                    Ok(pos)
                }
                Err(_) => e.ignore_invalid_castling_rights().map_err(Box::new),
            }
        }
        // Like python-chess, drop castling rights or an en passant square the position
        // does not allow, rather than losing the game.
        Err(e) => e
            .ignore_invalid_castling_rights()
            .or_else(|e| e.ignore_invalid_ep_square())
            .map_err(Box::new),
    };
    let pos = result.map_err(|e| {
        (
            RejectCategory::InvalidFen,
            format!(
                " \"{fen_text}\": {}",
                e.to_string().replace("illegal position: ", "")
            ),
        )
    })?;
    Ok((pos, chess960))
}

/// `games.hash` of a replayed game ([`crate::model::game::game_hash`]).
fn game_hash(header: &Header, fen: Option<&str>, moves: &[u8]) -> i64 {
    crate::model::game::game_hash(
        header.roster().map(|t| t.unwrap_or("").as_bytes()),
        fen.unwrap_or("").as_bytes(),
        moves,
    )
}

/// The reject of `game`: its reason is the category's [`RejectCategory::reason_prefix`]
/// followed by `detail`.
fn reject(game: &RawGame, ply: Option<u32>, category: RejectCategory, detail: &str) -> Replayed {
    let reason = format!("{}{detail}", category.reason_prefix());
    Replayed::Rejected(Reject {
        offset: game.offset,
        event: game.tags.event.clone(),
        white: game.tags.white.clone(),
        black: game.tags.black.clone(),
        ply,
        category,
        reason,
    })
}

fn move_label(ply: u32) -> String {
    let number = ply.div_ceil(2);
    if ply % 2 == 1 {
        format!("{number}.")
    } else {
        format!("{number}...")
    }
}

/// Moves python-chess accepts and strict SAN does not: a capture written without `x` (`Raf8`
/// for `Raxf8`) or a non-capture written with one, and fully specified moves (see
/// [`long_algebraic`]).
fn lenient(pos: &Chess, san: &San) -> Option<Move> {
    if let San::Normal {
        role,
        file,
        rank,
        capture,
        to,
        promotion,
    } = *san
    {
        let flipped = San::Normal {
            role,
            file,
            rank,
            capture: !capture,
            to,
            promotion,
        };
        if let Ok(m) = flipped.to_move(pos) {
            return Some(m);
        }
    }
    long_algebraic(pos, san)
}

/// A fully specified move such as `g1f3` or `e1g1` (UCI-style movetext) read as SAN by
/// pgn-reader, which takes it for a pawn move: like python-chess, accept the legal move from
/// that square to that square, whatever the piece (castling as king to its target square; a
/// promotion without a piece becomes a queen).
fn long_algebraic(pos: &Chess, san: &San) -> Option<Move> {
    let San::Normal {
        role: Role::Pawn,
        file: Some(file),
        rank: Some(rank),
        to,
        promotion,
        ..
    } = *san
    else {
        return None;
    };
    let from = Square::from_coords(file, rank);
    let promotion = promotion.or_else(|| {
        let pawn = pos.board().role_at(from) == Some(Role::Pawn);
        (pawn
            && to.rank()
                == pos
                    .turn()
                    .fold_wb(shakmaty::Rank::Eighth, shakmaty::Rank::First))
        .then_some(Role::Queen)
    });
    pos.legal_moves().into_iter().find(|m| {
        // Castling may be written king to target square (e1g1) or king to rook (e1h1).
        let king_target = match *m {
            Move::Castle { king, rook } => {
                CastlingSide::from_queen_side(rook < king).king_to(pos.turn())
            }
            _ => m.to(),
        };
        m.from() == Some(from) && (king_target == to || m.to() == to) && m.promotion() == promotion
    })
}

/// `White` or `Black`, as reject reasons name the side to move.
fn side_name(turn: Color) -> &'static str {
    if turn == Color::White {
        "White"
    } else {
        "Black"
    }
}

/// Replays one game.
pub fn replay(mut game: RawGame) -> Replayed {
    game.read_moves();
    if let Some(rejected) = reject_before_replay(&game) {
        return rejected;
    }
    let (pos, chess960) = match start_position(&game.tags) {
        Ok(x) => x,
        Err((category, detail)) => return reject(&game, None, category, &detail),
    };
    let fen = if pos == Chess::default() {
        None
    } else {
        Some(Fen::from_position(&pos, EnPassantMode::Legal).to_string())
    };
    let (slots, pieceset) = match initial_slots(pos.board(), chess960) {
        Ok(x) => x,
        Err(e) => {
            return reject(&game, None, RejectCategory::InvalidFen, &format!(": {e}"));
        }
    };
    let (moves, runs, changes, pos) = match play(&game, pos, slots, pieceset) {
        Ok(played) => played,
        Err(rejected) => return rejected,
    };
    if let Some(problem) = &game.problem {
        let (category, detail, ply) = problem_after_the_moves(problem, &pos);
        return reject(&game, Some(ply), category, &detail);
    }
    let plies = game.moves.len() as u32;
    let mut summary = GameSummary::default();
    let run_features: Vec<[SideFeatures; 2]> = runs
        .iter()
        .map(|run| {
            let w = SideFeatures::white(run.white_pawns);
            let b = SideFeatures::black(run.black_pawns);
            summary.add(run, &w, &b);
            [w, b]
        })
        .collect();
    let time_control = game.tags.time_control.clone();
    let header = game.tags.into_header();
    let hash = game_hash(&header, fen.as_deref(), &moves);
    Replayed::Game(Box::new(GameRecord {
        offset: game.offset,
        header,
        time_control,
        fen,
        chess960,
        plies,
        moves,
        runs,
        run_features,
        summary,
        changes,
        hash,
    }))
}

/// The reject of a game the reader already found broken (syntax, a cut-off stream, too long)
/// or that is no game at all; `None` when it can be replayed.
fn reject_before_replay(game: &RawGame) -> Option<Replayed> {
    let (category, detail) = match &game.problem {
        Some(ReadProblem::Syntax(e)) => (RejectCategory::Syntax, format!(": {e}")),
        Some(ReadProblem::CutOff(e)) => (
            RejectCategory::CutOff,
            format!(" by a read error in the stream: {e}"),
        ),
        Some(ReadProblem::TooLong) => (
            RejectCategory::TooLong,
            format!(" {} plies", crate::ingest::reader::MAX_PLIES),
        ),
        _ if game.tags.count == 0 && game.moves.is_empty() && game.problem.is_none() => {
            (RejectCategory::NotAGame, ": not a game".to_string())
        }
        _ => return None,
    };
    Some(reject(game, None, category, &detail))
}

/// What [`play`] returns: the encoded moves, the runs, the structure changes, the final
/// position.
type Played = (Vec<u8>, Vec<Run>, Vec<StructureChange>, Chess);

/// Plays the mainline from `pos`: the encoded moves, the runs of unchanged per-ply values, the
/// changes of the named structure and the final position; or the reject of the first move that
/// is illegal or ambiguous.
fn play(
    game: &RawGame,
    mut pos: Chess,
    mut slots: [u8; 64],
    mut pieceset: u32,
) -> Result<Played, Replayed> {
    let catalogue = Catalogue::active();
    let mut moves = Vec::with_capacity(game.moves.len() * 2);
    let (wp, bp, pairs) = snapshot(pos.board());
    let mut runs = Vec::with_capacity(game.moves.len() / 2 + 1);
    let mut changes = Vec::new();
    let mut run = run_from(0, (wp, bp, pairs), pieceset, catalogue.classify(wp, bp));
    if run.structure != 0 {
        changes.push(StructureChange {
            ply: 0,
            from: 0,
            to: run.structure,
            san: None,
        });
    }
    for (i, san) in game.moves.iter().enumerate() {
        let ply = i as u32 + 1;
        let resolved = match resolve(&pos, san) {
            Some(m) => Ok(m),
            None => san.to_move(&pos).or_else(|e| lenient(&pos, san).ok_or(e)),
        };
        let m = match resolved {
            Ok(m) => m,
            Err(e) => return Err(bad_move(game, &pos, san, ply, e)),
        };
        moves::push(&mut moves, &m);
        let may_change = m.is_capture() || m.role() == Role::Pawn;
        let turn = pos.turn();
        if may_change || matches!(m, Move::Castle { .. }) {
            pieceset &= !move_slots(&mut slots, &m, turn);
        } else {
            let (from, to) = (m.from().expect("not a drop"), m.to());
            slots[u32::from(to) as usize] =
                std::mem::replace(&mut slots[u32::from(from) as usize], NO_SLOT);
        }
        // The SAN of a piece taking a pawn needs the position before the move (a pawn move's
        // does not): made now, used if the move changes the named structure.
        let piece_san = (m.role() != Role::Pawn && m.capture() == Some(Role::Pawn))
            .then(|| moves::san(&pos, m));
        pos.play_unchecked(m);
        if may_change {
            let (wp, bp, pairs) = snapshot(pos.board());
            if wp != run.white_pawns
                || bp != run.black_pawns
                || pieceset != run.pieceset
                || pairs != run.bishop_pairs
            {
                let structure = if wp != run.white_pawns || bp != run.black_pawns {
                    catalogue.classify(wp, bp)
                } else {
                    run.structure
                };
                if structure != run.structure {
                    changes.push(StructureChange {
                        ply,
                        from: run.structure,
                        to: structure,
                        san: moves::pawn_san(m)
                            .or(piece_san)
                            .map(|san| moves::with_suffix(san, &pos)),
                    });
                }
                runs.push(run);
                run = run_from(ply, (wp, bp, pairs), pieceset, structure);
                continue;
            }
        }
        run.last_ply = ply;
    }
    runs.push(run);
    Ok((moves, runs, changes, pos))
}

/// A run starting (and, so far, ending) at `ply`, of the pawns and bishop pairs of
/// [`snapshot`], the piece-set and the named structure.
#[inline]
fn run_from(
    ply: u32,
    (white_pawns, black_pawns, bishop_pairs): (u64, u64, u8),
    pieceset: u32,
    structure: Code,
) -> Run {
    Run {
        first_ply: ply,
        last_ply: ply,
        white_pawns,
        black_pawns,
        pieceset,
        bishop_pairs,
        structure,
    }
}

/// The reject of a move that is illegal or ambiguous in `pos`.
#[cold]
fn bad_move(game: &RawGame, pos: &Chess, san: &San, ply: u32, e: SanError) -> Replayed {
    let category = match e {
        SanError::IllegalSan => RejectCategory::IllegalMove,
        SanError::AmbiguousSan => RejectCategory::AmbiguousMove,
    };
    let side = side_name(pos.turn());
    let detail = format!(" {san} at ply {ply} ({} {side} to move)", move_label(ply));
    reject(game, Some(ply), category, &detail)
}

/// What a problem the reader found after the last good move (a null move, a piece drop, an
/// unknown token) makes of the game: its category, the detail of its reason and its ply. `pos`
/// is the position the moves before it reached.
fn problem_after_the_moves(problem: &ReadProblem, pos: &Chess) -> (RejectCategory, String, u32) {
    match problem {
        ReadProblem::NullMove { ply } => (
            RejectCategory::NullMove,
            format!(" (--) at ply {}", ply + 1),
            *ply as u32 + 1,
        ),
        ReadProblem::Drop { ply } => (
            RejectCategory::PieceDrop,
            format!(
                " at ply {} (a crazyhouse move, not standard chess)",
                ply + 1
            ),
            *ply as u32 + 1,
        ),
        ReadProblem::UnknownToken { ply, token } => {
            let at = *ply as u32 + 1;
            (
                RejectCategory::UnknownToken,
                format!(
                    " `{token}` at ply {at} ({} {} to move)",
                    move_label(at),
                    side_name(pos.turn())
                ),
                at,
            )
        }
        ReadProblem::Syntax(_) | ReadProblem::CutOff(_) | ReadProblem::TooLong => {
            unreachable!("rejected before the replay")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::reader::Tags;

    /// Expands runs into one value tuple per ply: (white pawns, black pawns, pieceset, pairs).
    fn expand_runs(runs: &[Run]) -> Vec<(u64, u64, u32, u8)> {
        let mut out = Vec::new();
        for r in runs {
            for _ in r.first_ply..=r.last_ply {
                out.push((r.white_pawns, r.black_pawns, r.pieceset, r.bishop_pairs));
            }
        }
        out
    }

    fn raw(sans: &str, fen: Option<&str>, variant: Option<&str>) -> RawGame {
        RawGame {
            offset: 0,
            tags: Tags {
                fen: fen.map(str::to_string),
                variant: variant.map(str::to_string),
                count: 1,
                ..Tags::default()
            },
            moves: sans
                .split_whitespace()
                .map(|s| San::from_ascii(s.as_bytes()).unwrap())
                .collect(),
            problem: None,
            moves_read: true,
            ..RawGame::default()
        }
    }

    fn game(sans: &str, fen: Option<&str>, variant: Option<&str>) -> GameRecord {
        match replay(raw(sans, fen, variant)) {
            Replayed::Game(g) => *g,
            Replayed::Rejected(r) => panic!("rejected: {}", r.reason),
            Replayed::Copy => panic!("replay never makes a copy"),
        }
    }

    #[test]
    fn spec_pieceset_example() {
        let g = game("e4 d5 exd5", None, None);
        let plies = expand_runs(&g.runs);
        assert_eq!(plies.len(), 4);
        assert_eq!(plies[0].2, 0xFFFF_FFFF);
        assert_eq!(plies[3].2, 0xFFF7_FFFF);
    }

    #[test]
    fn en_passant_clears_the_captured_pawn_slot() {
        // 1. e4 a6 2. e5 d5 3. exd6: black d7 pawn (slot 19) captured en passant.
        let g = game("e4 a6 e5 d5 exd6", None, None);
        let last = *expand_runs(&g.runs).last().unwrap();
        assert_eq!(last.2, !(1u32 << 19));
        assert_eq!(last.1 & (1 << 35), 0, "no black pawn left on d5");
    }

    #[test]
    fn castling_keeps_slots_and_capture_of_castled_rook_clears_its_slot() {
        // White castles short (rook h1 = slot 7 goes to f1); later Black's bishop takes it.
        let g = game(
            "e4 e5 Nf3 Nc6 Bc4 Bc5 O-O d6 d3 Bg4 h3 Bxf3 Qxf3 Qd7 Qxf7+ Kd8",
            None,
            None,
        );
        let plies = expand_runs(&g.runs);
        // ply 12: Bxf3 captures the knight from g1 (slot 6).
        assert_eq!(plies[12].2 & (1 << 6), 0);
        assert_ne!(plies[12].2 & (1 << 7), 0);
        // ply 13: Qxf3 captures black's c8 bishop (slot 16 + 2 = 18).
        assert_eq!(plies[13].2 & (1 << 26), 0);
    }

    #[test]
    fn promotion_keeps_the_pawn_slot() {
        let fen = "8/P6k/8/8/8/8/8/K7 w - - 0 1";
        let g = game("a8=B", Some(fen), None);
        let plies = expand_runs(&g.runs);
        assert_eq!(plies[0].2, plies[1].2);
        assert_eq!(plies[1].0, 0);
    }

    #[test]
    fn fen_start_slots_follow_the_spec() {
        // White: king e1 (home, slot 4), rook a1 (slot 0), pawn e4 (not home: lowest free = 1).
        // Black: king g8 (not home for the standard start), pawn a7 (slot 16).
        let board = Board::from_ascii_board_fen(b"6k1/p7/8/8/4P3/8/8/R3K3").unwrap();
        let (_, set) = initial_slots(&board, false).unwrap();
        assert_eq!(set, 1 | (1 << 4) | (1 << 1) | (1 << 16) | (1 << 17));
        // In Chess960 any back-rank piece takes its square's slot: king g8 = 62 - 32 = 30.
        let (_, set) = initial_slots(&board, true).unwrap();
        assert_eq!(set, 1 | (1 << 4) | (1 << 1) | (1 << 16) | (1 << 30));
    }

    #[test]
    fn chess960_castling_is_replayed() {
        // King c1 with rooks b1 and h1: O-O-O leaves the king where it is.
        let fen = "4k3/8/8/8/8/8/8/1RK4R w HB - 0 1";
        for (san, king, rook) in [
            ("O-O-O", Square::C1, Square::D1),
            ("O-O", Square::G1, Square::F1),
        ] {
            let g = game(san, Some(fen), Some("Chess960"));
            assert!(g.chess960);
            assert_eq!(g.plies, 1);
            // The rook keeps its slot (b1 = 1, h1 = 7) on its new square; the king keeps 2.
            let mut pos: Chess = Fen::from_ascii(fen.as_bytes())
                .unwrap()
                .into_position(CastlingMode::Chess960)
                .unwrap();
            let (mut slots, _) = initial_slots(pos.board(), true).unwrap();
            let m = San::from_ascii(san.as_bytes())
                .unwrap()
                .to_move(&pos)
                .unwrap();
            move_slots(&mut slots, &m, Color::White);
            pos.play_unchecked(m);
            assert_eq!(slots[u32::from(king) as usize], 2);
            let rook_slot = if san == "O-O" { 7 } else { 1 };
            assert_eq!(slots[u32::from(rook) as usize], rook_slot);
        }
    }

    #[test]
    fn variants_and_bad_input_are_rejected_with_reasons() {
        let cases = [
            (
                raw("e4", None, Some("Crazyhouse")),
                "unsupported variant: crazyhouse",
            ),
            (raw("e4", Some("garbage"), None), "invalid FEN \"garbage\""),
            (
                raw("e4 e5 Nf3 Nf6 Ke3", None, None),
                "illegal move Ke3 at ply 5",
            ),
        ];
        for (g, want) in cases {
            match replay(g) {
                Replayed::Rejected(r) => {
                    assert!(r.reason.starts_with(want), "{}", r.reason);
                    assert_eq!(RejectCategory::of_reason(&r.reason), Some(r.category));
                }
                Replayed::Game(_) | Replayed::Copy => panic!("{want}: indexed"),
            }
        }
    }

    #[test]
    fn every_category_is_read_back_from_its_reasons() {
        for c in RejectCategory::ALL {
            let reason = format!("{} and the rest", c.reason_prefix());
            assert_eq!(RejectCategory::of_reason(&reason), Some(c), "{reason}");
        }
        assert_eq!(RejectCategory::of_reason("something else"), None);
    }

    #[test]
    fn uci_style_movetext_is_replayed() {
        let g = game("e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1g1", None, None);
        assert_eq!(g.plies, 7);
        let want = game("e4 e5 Nf3 Nc6 Bc4 Nf6 O-O", None, None);
        assert_eq!(g.moves, want.moves);
        assert_eq!(g.runs, want.runs);
    }

    #[test]
    fn captures_written_without_x_are_replayed() {
        let g = game("e4 d5 ed5 Qd5 Nc3 Qa5", None, None);
        let want = game("e4 d5 exd5 Qxd5 Nc3 Qa5", None, None);
        assert_eq!(g.moves, want.moves);
    }

    #[test]
    fn runs_cover_every_ply_once() {
        let g = game("e4 e5 Nf3 Nc6 Bb5 a6 Bxc6 dxc6 O-O f6", None, None);
        assert_eq!(expand_runs(&g.runs).len(), 11);
        for w in g.runs.windows(2) {
            assert_eq!(w[0].last_ply + 1, w[1].first_ply);
        }
    }
}
