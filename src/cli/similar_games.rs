//! `pawndex similar --games`: the games that reach the listed structures, written as `query`
//! writes its rows (the same table, CSV and JSON writers, the same PGN and FEN export).
//!
//! A game is listed once, at its closest listed structure: its `distance` is the least of the
//! listed structures it reaches, its `ply` the first ply at which it reaches one at that
//! distance. Games come closest first, then by id. `--games-limit N` keeps the first N games
//! in every format. The PGN export writes each game once with a comment at that ply naming the
//! structure, its distance and what differs; the FEN export writes every position of the kept
//! games whose structure is one of the listed ones (game_id, ply, FEN; by game, then ply).

use std::io::Write;

use anyhow::Result;

use crate::engine::similar::listed_games;
use crate::model::similar::{Similar, pawn_board};
use crate::output::table::{self as output, Format};
use crate::store::read::Snapshot;
use crate::store::read::similar as db;

/// Writes the games of the ranked structures `found` in `format`; returns the records written
/// (games, or positions with `--format fen`).
pub fn write(
    conn: &Snapshot,
    found: &[Similar],
    format: Format,
    limit: Option<u64>,
    out: &mut dyn Write,
) -> Result<u64> {
    let (games, runs) = listed_games(conn, found, limit)?;
    let (which, rows, format) = match format {
        Format::Table | Format::Csv | Format::Json => {
            let rows: Vec<serde_json::Value> = games
                .iter()
                .map(|g| {
                    serde_json::json!([
                        g.game,
                        g.ply,
                        g.distance,
                        pawn_board(found[g.structure].pawns)
                    ])
                })
                .collect();
            (db::ListedRows::Games, rows, format)
        }
        Format::Pgn => {
            let rows = games
                .iter()
                .map(|g| {
                    let s = &found[g.structure];
                    let comment = format!(
                        "pawndex similar: distance {}, {} ({})",
                        s.distance,
                        pawn_board(s.pawns),
                        s.differs
                    );
                    serde_json::json!([g.game, g.ply, comment])
                })
                .collect();
            (db::ListedRows::Export, rows, Format::Pgn)
        }
        Format::Fen => {
            // The kept games in their order, each with its positions of a listed structure.
            let mut rows = Vec::new();
            for g in &games {
                let from = runs.partition_point(|r| r.game < g.game);
                for r in runs[from..].iter().take_while(|r| r.game == g.game) {
                    for ply in r.first_ply..=r.last_ply {
                        rows.push(serde_json::json!([g.game, ply]));
                    }
                }
            }
            (db::ListedRows::Export, rows, Format::Fen)
        }
    };
    let json = serde_json::Value::Array(rows).to_string();
    let mut st = db::listed_rows(conn, which, &json)?;
    output::write_results(
        conn,
        &mut st,
        format,
        None,
        crate::engine::parallel::threads(None),
        out,
    )
}
