//! Every row of a database's games, runs (with both sides' pawn-set features and the named
//! structure), structure changes and rejects, in id order, for `pawndex export parquet`, read
//! from one [`Snapshot`] (opened by the caller) so the tables agree with each other.

use anyhow::Result;
use rusqlite::Connection;

use super::Snapshot;
use crate::model::features::{SIDE_FEATURE_COUNT, SideFeatures};
use crate::model::game::Header;
use crate::store::side_columns;

/// One row of `games`, as stored.
pub struct GameRow {
    pub id: i64,
    pub header: Header,
    pub plies: i64,
    pub source: String,
    pub offset: i64,
    pub fen: Option<String>,
    pub chess960: bool,
    pub moves: Vec<u8>,
    pub hash: i64,
}

/// Calls `each` for every game, in id order.
/// Calls `each` for every game, in id order.
pub fn games(snapshot: &Snapshot, each: impl FnMut(&GameRow) -> Result<()>) -> Result<()> {
    games_of(snapshot, each)
}

fn games_of(conn: &Connection, mut each: impl FnMut(&GameRow) -> Result<()>) -> Result<()> {
    let mut st = conn.prepare(
        "SELECT id, event, site, date, round, white, black, result, white_elo, black_elo, eco,
                plies, source, offset, fen, chess960, moves, hash
         FROM games ORDER BY id",
    )?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let row = GameRow {
            id: r.get(0)?,
            header: crate::store::schema::games::header(r, 1)?,
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
/// Calls `each` for every run, in key order.
pub fn runs(snapshot: &Snapshot, each: impl FnMut(&RunRow) -> Result<()>) -> Result<()> {
    runs_of(snapshot, each)
}

fn runs_of(conn: &Connection, mut each: impl FnMut(&RunRow) -> Result<()>) -> Result<()> {
    let mut st = conn.prepare(&format!(
        "SELECT r.game_id, r.first_ply, r.last_ply, r.bishop_pairs, 4294967295 - r.missing,
                s.key, r.structure & 1, w.pawns, {}, b.pawns, {}
         FROM runs AS r
         JOIN pawn_sets AS w ON w.id = r.white_set
         JOIN pawn_sets AS b ON b.id = r.black_set
         LEFT JOIN structure_names AS s ON s.id = r.structure >> 1
         ORDER BY r.game_id, r.first_ply",
        side_columns::features("w"),
        side_columns::features("b"),
    ))?;
    let mut rows = st.query([])?;
    // The side's features from the columns after its pawns at `at`.
    let side = |r: &rusqlite::Row, at: usize| -> Result<SideFeatures> {
        let mut values = [0i64; SIDE_FEATURE_COUNT];
        for (i, v) in values.iter_mut().enumerate() {
            *v = r.get(at + 1 + i)?;
        }
        SideFeatures::from_stored(values).map_err(|name| {
            anyhow::anyhow!(
                "pawn set {:#018x}: {name} out of range",
                r.get::<_, i64>(at).unwrap_or(0)
            )
        })
    };
    let black = 8 + SIDE_FEATURE_COUNT;
    while let Some(r) = rows.next()? {
        let row = RunRow {
            game_id: r.get(0)?,
            first_ply: r.get(1)?,
            last_ply: r.get(2)?,
            bishop_pairs: r.get(3)?,
            pieceset: r.get(4)?,
            structure: r.get(5)?,
            structure_reversed: r.get(6)?,
            white_pawns: r.get(7)?,
            white: side(r, 7)?,
            black_pawns: r.get(black)?,
            black: side(r, black)?,
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
/// Calls `each` for every structure change, in key order.
pub fn changes(snapshot: &Snapshot, each: impl FnMut(&ChangeRow) -> Result<()>) -> Result<()> {
    changes_of(snapshot, each)
}

fn changes_of(conn: &Connection, mut each: impl FnMut(&ChangeRow) -> Result<()>) -> Result<()> {
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
/// Calls `each` for every rejected game, in id order.
pub fn rejects(snapshot: &Snapshot, each: impl FnMut(&RejectRow) -> Result<()>) -> Result<()> {
    rejects_of(snapshot, each)
}

fn rejects_of(conn: &Connection, mut each: impl FnMut(&RejectRow) -> Result<()>) -> Result<()> {
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
