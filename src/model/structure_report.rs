//! The rows of the `pawndex structures` report: per named structure form, its positions and
//! games, how they end, its openings, what it turns into and the moves that leave it (made by
//! `engine::structures`, written by `output::structures`).

/// The ply window of the last stderr line (the middlegame, where names matter most).
pub const WINDOW: (u32, u32) = (20, 60);

/// Games by result: White wins, draws, Black wins.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Results {
    pub white_wins: u64,
    pub draws: u64,
    pub black_wins: u64,
}

impl Results {
    pub fn add(&mut self, result: Option<&str>) {
        match result {
            Some("1-0") => self.white_wins += 1,
            Some("1/2-1/2") => self.draws += 1,
            Some("0-1") => self.black_wins += 1,
            _ => {}
        }
    }

    /// Games with a result.
    pub fn games(&self) -> u64 {
        self.white_wins + self.draws + self.black_wins
    }

    /// White's score in percent, None without a result.
    pub fn white_score(&self) -> Option<f64> {
        crate::model::outcome::white_score(2 * self.white_wins + self.draws, self.games())
    }
}

pub use crate::model::search::Side;

impl Move {
    /// The move as a player writes it alone: Black's with "…" before it (`…exd5`).
    #[must_use]
    pub fn text(&self) -> String {
        match self.side {
            Side::White => self.san.clone(),
            Side::Black => format!("…{}", self.san),
        }
    }
}

/// The side that plays the move of `ply` (1: the first move) in a game that starts with
/// `black_first` (a start position with Black to move) or not.
#[must_use]
pub fn side_of_ply(ply: u32, black_first: bool) -> Side {
    if (ply % 2 == 1) != black_first {
        Side::White
    } else {
        Side::Black
    }
}

/// Whether a start position (its FEN, None for the standard start) has Black to move.
#[must_use]
pub fn black_to_move(fen: Option<&str>) -> bool {
    fen.and_then(|f| f.split_whitespace().nth(1)) == Some("b")
}

/// What `games` holds in all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Positions: every game's plies 0 to its last.
    pub positions: u64,
    /// Positions at plies 20..60.
    pub window_positions: u64,
}

/// One ECO code of a form's games.
#[derive(Clone, Debug, PartialEq)]
pub struct EcoShare {
    pub eco: String,
    pub games: u64,
    /// Percent of the form's games.
    pub share: f64,
}

/// A form the game turns into.
#[derive(Clone, Debug, PartialEq)]
pub struct Next {
    /// None: no named structure.
    pub key: Option<String>,
    /// The structure's name (its key when the catalogue does not know it).
    pub name: String,
    pub reversed: bool,
    pub count: u64,
}

impl Next {
    pub fn label(&self) -> String {
        match (&self.key, self.reversed) {
            (None, _) => "none".into(),
            (Some(k), false) => k.clone(),
            (Some(k), true) => format!("{k} (reversed)"),
        }
    }
}

/// A move that leaves the form.
#[derive(Clone, Debug, PartialEq)]
pub struct Move {
    /// The side that played it.
    pub side: Side,
    pub san: String,
    pub count: u64,
    pub results: Results,
}

/// One output row.
#[derive(Clone, Debug)]
pub struct Row {
    pub form: Form,
    pub positions: u64,
    pub games: u64,
    pub results: Results,
    pub stays: u64,
    pub eco: Vec<EcoShare>,
    pub turns_into: Vec<Next>,
    pub leaving: Vec<Move>,
}

impl Row {
    pub fn avg_stay(&self) -> Option<f64> {
        (self.stays > 0).then(|| self.positions as f64 / self.stays as f64)
    }
}

/// One form of a catalogue structure.
#[derive(Clone, Debug)]
pub struct Form {
    pub code: u16,
    pub key: String,
    pub name: String,
    pub family: String,
    pub reversed: bool,
}

impl Form {
    pub fn display(&self) -> String {
        if self.reversed {
            format!("{} (reversed)", self.name)
        } else {
            self.name.clone()
        }
    }
}
