//! What the explorer (`pawndex serve`) shows of a structure and of a game, as data: made by
//! `engine::explore`, written by `output::explore`.

use crate::model::features::SideFeatures;
use crate::model::similar::{Pawns, Similar};
use crate::model::stored::StoredGame;
use crate::model::structure::Code;
use crate::model::structure_near::Near;

/// What the explorer shows for one structure.
#[derive(Clone, Debug)]
pub struct Card {
    pub pawns: Pawns,
    /// The code of the pawns' named form in the catalogue in force (0: none).
    pub code: Code,
    /// The code of the colour-reversed pawns' form (colours swapped, board turned).
    pub reversed_code: Code,
    /// When no form matches, the nearest ones and what fails; else empty.
    pub nearest: Vec<Near>,
    /// White's features, then Black's.
    pub features: [SideFeatures; 2],
    /// The structure exactly, as `similar --max-distance 0` lists it (None: no game has it).
    pub exact: Option<Similar>,
    /// The most common openings (ECO) of the games with exactly these pawns, most first; the
    /// share is of those games.
    pub exact_eco: Vec<crate::model::structure_report::EcoShare>,
}

/// One ply of a replayed game.
#[derive(Clone, Debug)]
pub struct Ply {
    pub ply: u32,
    /// The move that led here (None at ply 0), in SAN.
    pub san: Option<String>,
    pub fen: String,
    pub pawns: Pawns,
    /// The named form of the pawns (0: none).
    pub code: Code,
    pub features: [SideFeatures; 2],
}

/// A stored game with every ply replayed.
#[derive(Clone, Debug)]
pub struct GameView {
    pub game: StoredGame,
    pub plies: Vec<Ply>,
}

/// A way games leave an exact structure: the move (SAN) and the pawns it leads to.
#[derive(Clone, Debug)]
pub struct Break {
    /// The side that played it.
    pub side: crate::model::search::Side,
    pub san: String,
    pub next: Pawns,
    /// The named form of `next` (0: none).
    pub next_code: Code,
    /// The games that leave the structure by this move.
    pub count: u64,
    pub results: crate::model::structure_report::Results,
}
