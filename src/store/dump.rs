//! Every row of a database's games, runs (with both sides' pawn-set features and the named
//! structure), structure changes and rejects, in id order, for `pawndex export parquet`. The
//! caller reads inside one transaction, so the tables come from one snapshot.

use anyhow::Result;
use rusqlite::Connection;

use crate::model::features::SideFeatures;

/// One row of `games`, as stored.
pub struct GameRow {
    pub id: i64,
    /// event, site, date, round, white, black, result
    pub tags: [Option<String>; 7],
    pub white_elo: Option<i64>,
    pub black_elo: Option<i64>,
    pub eco: Option<String>,
    pub plies: i64,
    pub source: String,
    pub offset: i64,
    pub fen: Option<String>,
    pub chess960: bool,
    pub moves: Vec<u8>,
    pub hash: i64,
}

/// Calls `each` for every game, in id order.
pub fn games(conn: &Connection, mut each: impl FnMut(&GameRow) -> Result<()>) -> Result<()> {
    let mut st = conn.prepare(
        "SELECT id, event, site, date, round, white, black, result, white_elo, black_elo, eco,
                plies, source, offset, fen, chess960, moves, hash
         FROM games ORDER BY id",
    )?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let row = GameRow {
            id: r.get(0)?,
            tags: [
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
            ],
            white_elo: r.get(8)?,
            black_elo: r.get(9)?,
            eco: r.get(10)?,
            plies: r.get(11)?,
            source: r.get(12)?,
            offset: r.get(13)?,
            fen: r.get(14)?,
            chess960: r.get(15)?,
            moves: r.get(16)?,
            hash: r.get(17)?,
        };
        each(&row)?;
    }
    Ok(())
}

/// One run with the features of both sides' pawn sets, as stored in `pawn_sets`.
pub struct RunRow {
    pub game_id: i64,
    pub first_ply: i64,
    pub last_ply: i64,
    pub white_pawns: i64,
    pub black_pawns: i64,
    pub white: SideFeatures,
    pub black: SideFeatures,
    pub bishop_pairs: i64,
    pub pieceset: i64,
    /// The key of the run's named structure (`None`: no name), as `ply_features.structure`.
    pub structure: Option<String>,
    pub structure_reversed: bool,
}

/// Calls `each` for every run, in (game, first ply) order.
pub fn runs(conn: &Connection, mut each: impl FnMut(&RunRow) -> Result<()>) -> Result<()> {
    let mut st = conn.prepare(
        "SELECT r.game_id, r.first_ply, r.last_ply, r.bishop_pairs, 4294967295 - r.missing,
                w.pawns, w.islands, w.dispersion, w.distortion, w.duo, w.trio, w.quart,
                b.pawns, b.islands, b.dispersion, b.distortion, b.duo, b.trio, b.quart,
                s.key, r.structure & 1
         FROM runs AS r
         JOIN pawn_sets AS w ON w.id = r.white_set
         JOIN pawn_sets AS b ON b.id = r.black_set
         LEFT JOIN structure_names AS s ON s.id = r.structure >> 1
         ORDER BY r.game_id, r.first_ply",
    )?;
    let mut rows = st.query([])?;
    let side = |r: &rusqlite::Row, at: usize| -> rusqlite::Result<SideFeatures> {
        Ok(SideFeatures {
            islands: r.get(at + 1)?,
            dispersion: r.get(at + 2)?,
            distortion: r.get(at + 3)?,
            duo: r.get::<_, i64>(at + 4)? as u64,
            trio: r.get::<_, i64>(at + 5)? as u64,
            quart: r.get::<_, i64>(at + 6)? as u64,
        })
    };
    while let Some(r) = rows.next()? {
        let row = RunRow {
            game_id: r.get(0)?,
            first_ply: r.get(1)?,
            last_ply: r.get(2)?,
            bishop_pairs: r.get(3)?,
            pieceset: r.get(4)?,
            white_pawns: r.get(5)?,
            white: side(r, 5)?,
            black_pawns: r.get(12)?,
            black: side(r, 12)?,
            structure: r.get(19)?,
            structure_reversed: r.get(20)?,
        };
        each(&row)?;
    }
    Ok(())
}

/// One row of the view `structure_transitions`: a ply where a game's named structure changes.
pub struct ChangeRow {
    pub game_id: i64,
    pub ply: i64,
    pub from: Option<String>,
    pub from_reversed: bool,
    pub to: Option<String>,
    pub to_reversed: bool,
    pub san: Option<String>,
}

/// Calls `each` for every change of named structure, in (game, ply) order.
pub fn changes(conn: &Connection, mut each: impl FnMut(&ChangeRow) -> Result<()>) -> Result<()> {
    let mut st = conn.prepare(
        "SELECT game_id, ply, from_structure, from_reversed, to_structure, to_reversed, move
         FROM structure_transitions ORDER BY game_id, ply",
    )?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let row = ChangeRow {
            game_id: r.get(0)?,
            ply: r.get(1)?,
            from: r.get(2)?,
            from_reversed: r.get(3)?,
            to: r.get(4)?,
            to_reversed: r.get(5)?,
            san: r.get(6)?,
        };
        each(&row)?;
    }
    Ok(())
}

/// One row of `rejects`, as stored.
pub struct RejectRow {
    pub id: i64,
    pub source: String,
    pub offset: i64,
    pub event: Option<String>,
    pub white: Option<String>,
    pub black: Option<String>,
    pub ply: Option<i64>,
    pub reason: String,
}

/// Calls `each` for every reject, in id order.
pub fn rejects(conn: &Connection, mut each: impl FnMut(&RejectRow) -> Result<()>) -> Result<()> {
    let mut st = conn.prepare(
        "SELECT id, source, offset, event, white, black, ply, reason FROM rejects ORDER BY id",
    )?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let row = RejectRow {
            id: r.get(0)?,
            source: r.get(1)?,
            offset: r.get(2)?,
            event: r.get(3)?,
            white: r.get(4)?,
            black: r.get(5)?,
            ply: r.get(6)?,
            reason: r.get(7)?,
        };
        each(&row)?;
    }
    Ok(())
}
