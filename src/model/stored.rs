//! A game read back from the database: what a PGN export and a FEN rebuild need of it, and a
//! cursor that replays its stored moves (see [`crate::model::moves`]) to any ply.

use anyhow::{Context, Result, bail};
use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};

use crate::model::game::Header;
use crate::model::moves;

/// What a PGN export and a FEN rebuild need of one row of `games`.
#[derive(Clone, Debug, Default)]
pub struct StoredGame {
    pub id: i64,
    pub header: Header,
    pub fen: Option<String>,
    pub chess960: bool,
    pub moves: Vec<u8>,
}

impl StoredGame {
    /// The castling mode the game is replayed in.
    fn castling_mode(&self) -> CastlingMode {
        if self.chess960 {
            CastlingMode::Chess960
        } else {
            CastlingMode::Standard
        }
    }

    /// The start position: the standard one, or the stored (normalised) FEN.
    pub fn start(&self) -> Result<Chess> {
        match &self.fen {
            None => Ok(Chess::default()),
            Some(fen) => Fen::from_ascii(fen.as_bytes())
                .ok()
                .and_then(|f| f.into_position(self.castling_mode()).ok())
                .with_context(|| format!("game {}: stored FEN \"{fen}\" is invalid", self.id)),
        }
    }

    /// Number of stored plies.
    #[must_use]
    pub fn plies(&self) -> u32 {
        (self.moves.len() / 2) as u32
    }

    /// The code of the move of `ply` (1-based).
    fn code(&self, ply: u32) -> u16 {
        let i = (ply as usize - 1) * 2;
        u16::from_le_bytes([self.moves[i], self.moves[i + 1]])
    }

    fn illegal(&self, pos: &Chess, ply: u32) -> anyhow::Error {
        anyhow::anyhow!(
            "game {}: stored move {ply} (code {:#06x}) is not legal in {}",
            self.id,
            self.code(ply),
            Fen::from_position(pos, EnPassantMode::Legal)
        )
    }

    /// The move of `ply` (1-based) in `pos`, the position after `ply - 1` plies.
    pub fn move_at(&self, pos: &Chess, ply: u32) -> Result<Move> {
        moves::decode(pos, self.code(ply)).ok_or_else(|| self.illegal(pos, ply))
    }

    /// The move of `ply` (1-based) in `pos` with its SAN (without suffix).
    pub fn san_at(&self, pos: &Chess, ply: u32) -> Result<(Move, San)> {
        decode_san(pos, self.code(ply)).ok_or_else(|| self.illegal(pos, ply))
    }
}

/// [`moves::decode`], with the move's SAN (without suffix) from the same move generation.
fn decode_san(pos: &Chess, code: u16) -> Option<(Move, San)> {
    if let Some(m) = moves::candidate(pos, code)
        && moves::encode(&m) == code
    {
        let family = moves::siblings(pos, m);
        if family.contains(&m) {
            return Some((m, San::disambiguate(m, &family)));
        }
    }
    let m = moves::decode_exhaustive(pos, code)?;
    Some((m, San::from_move(pos, m)))
}

/// Replays a stored game forwards to any ply, restarting only when asked for an earlier ply.
pub struct Cursor {
    pub game: StoredGame,
    pos: Chess,
    ply: u32,
}

impl Cursor {
    pub fn new(game: StoredGame) -> Result<Cursor> {
        let pos = game.start()?;
        Ok(Cursor { game, pos, ply: 0 })
    }

    /// The position after `ply` half-moves.
    pub fn seek(&mut self, ply: u32) -> Result<&Chess> {
        if ply > self.game.plies() {
            bail!(
                "game {} has {} plies; there is no ply {ply}",
                self.game.id,
                self.game.plies()
            );
        }
        if ply < self.ply {
            self.pos = self.game.start()?;
            self.ply = 0;
        }
        while self.ply < ply {
            let m = self.game.move_at(&self.pos, self.ply + 1)?;
            self.pos.play_unchecked(m);
            self.ply += 1;
        }
        Ok(&self.pos)
    }

    /// FEN of the position after `ply` half-moves.
    pub fn fen(&mut self, ply: u32) -> Result<String> {
        let pos = self.seek(ply)?;
        Ok(Fen::from_position(pos, EnPassantMode::Legal).to_string())
    }
}
