//! The piece-set: which of the 32 starting pieces are still on the board.
//!
//! Every piece of the start position owns a slot (White a1..h2 -> 0..15, Black a7..h8 ->
//! 16..31); a piece keeps its slot as it moves and its bit is cleared when it is captured. A
//! promoted pawn keeps the pawn's slot. The piece-set of a position is the bitmask of the slots
//! still owned.

use shakmaty::{Board, CastlingSide, Color, Move, Role, Square};

pub const NO_SLOT: u8 = u8::MAX;

/// The standard start's piece on each home square, for slot assignment.
fn standard_home_role(sq: Square) -> Option<(Color, Role)> {
    let back = [
        Role::Rook,
        Role::Knight,
        Role::Bishop,
        Role::Queen,
        Role::King,
        Role::Bishop,
        Role::Knight,
        Role::Rook,
    ];
    let i = u32::from(sq) as usize;
    match i {
        0..=7 => Some((Color::White, back[i])),
        8..=15 => Some((Color::White, Role::Pawn)),
        48..=55 => Some((Color::Black, Role::Pawn)),
        56..=63 => Some((Color::Black, back[i - 56])),
        _ => None,
    }
}

/// The slot a home square gives (white a1..h2 -> 0..15, black a7..h8 -> 16..31).
fn home_slot(sq: Square) -> u8 {
    let i = u32::from(sq) as u8;
    if i < 16 { i } else { i - 32 }
}

/// Piece-set slots for a start position: square -> slot (or `NO_SLOT`), and the piece-set.
pub fn initial_slots(board: &Board, chess960: bool) -> Result<([u8; 64], u32), String> {
    let mut slots = [NO_SLOT; 64];
    let mut used: u32 = 0;
    for sq in board.occupied() {
        let piece = board.piece_at(sq).expect("occupied square");
        let on_home = match standard_home_role(sq) {
            Some((color, role)) if color == piece.color => {
                role == piece.role
                    || (chess960 && role != Role::Pawn && sq.rank() == color.backrank())
            }
            _ => false,
        };
        if on_home {
            let slot = home_slot(sq);
            slots[u32::from(sq) as usize] = slot;
            used |= 1 << slot;
        }
    }
    for sq in board.occupied() {
        if slots[u32::from(sq) as usize] != NO_SLOT {
            continue;
        }
        let color = board.color_at(sq).expect("occupied square");
        let range = match color {
            Color::White => 0..16,
            Color::Black => 16..32,
        };
        let Some(slot) = range.clone().find(|s| used & (1 << s) == 0) else {
            return Err(format!("more than 16 {color} pieces"));
        };
        slots[u32::from(sq) as usize] = slot as u8;
        used |= 1 << slot;
    }
    Ok((slots, used))
}

/// Moves slot ownership for one move and returns the slots it captured (as a bitmask).
pub fn move_slots(slots: &mut [u8; 64], m: &Move, turn: Color) -> u32 {
    let mut captured = 0u32;
    let mut take = |slots: &mut [u8; 64], sq: Square| {
        let s = std::mem::replace(&mut slots[u32::from(sq) as usize], NO_SLOT);
        if s != NO_SLOT {
            captured |= 1 << s;
        }
    };
    match *m {
        Move::Normal { from, to, .. } => {
            take(slots, to);
            slots[u32::from(to) as usize] =
                std::mem::replace(&mut slots[u32::from(from) as usize], NO_SLOT);
        }
        Move::EnPassant { from, to } => {
            take(slots, Square::from_coords(to.file(), from.rank()));
            slots[u32::from(to) as usize] =
                std::mem::replace(&mut slots[u32::from(from) as usize], NO_SLOT);
        }
        Move::Castle { king, rook } => {
            let side = CastlingSide::from_queen_side(rook < king);
            let k = std::mem::replace(&mut slots[u32::from(king) as usize], NO_SLOT);
            let r = std::mem::replace(&mut slots[u32::from(rook) as usize], NO_SLOT);
            slots[u32::from(side.king_to(turn)) as usize] = k;
            slots[u32::from(side.rook_to(turn)) as usize] = r;
        }
        Move::Put { .. } => {}
    }
    captured
}
