//! Writing the ranked structures of `pawndex similar`: an aligned table (its last column, the
//! long one, is `differs`), CSV, or JSON lines with each side's pawns as a list of squares.

use std::io::{self, Write};

use anyhow::Result;

use crate::model::similar::{self, Similar, pawn_board};
use crate::output::table::Format;

const HEADER: [&str; 6] = [
    "distance",
    "structure",
    "positions",
    "games",
    "white_score",
    "differs",
];

fn cells(s: &Similar) -> [String; 6] {
    [
        s.distance.to_string(),
        pawn_board(s.pawns),
        s.positions.to_string(),
        s.games.to_string(),
        crate::output::table::score_text(s.white_score()),
        s.differs.clone(),
    ]
}

/// One ranked structure as `--format json` writes it (one line per structure).
#[must_use]
pub fn to_json(s: &Similar) -> serde_json::Value {
    serde_json::json!({
        "distance": s.distance,
        "structure": pawn_board(s.pawns),
        "positions": s.positions,
        "games": s.games,
        "white_score": crate::output::table::score_json(s.white_score()),
        "differs": s.differs,
        "white_pawns": similar::square_names(s.pawns.white),
        "black_pawns": similar::square_names(s.pawns.black),
    })
}

/// Writes the ranked structures (the table's last column, the long one, is `differs`).
pub fn write(out: &mut dyn Write, found: &[Similar], format: Format) -> Result<()> {
    // JSON adds each side's pawns as a list of squares.
    match format {
        Format::Table => {
            let rows: Vec<[String; 6]> = found.iter().map(cells).collect();
            let mut width = [0usize; 5];
            for (i, h) in HEADER.iter().take(5).enumerate() {
                width[i] = h.len();
                for r in &rows {
                    width[i] = width[i].max(r[i].chars().count());
                }
            }
            let line = |out: &mut dyn Write, c: [&str; 6]| -> io::Result<()> {
                writeln!(
                    out,
                    "{:>w0$}  {:<w1$}  {:>w2$}  {:>w3$}  {:>w4$}  {}",
                    c[0],
                    c[1],
                    c[2],
                    c[3],
                    c[4],
                    c[5],
                    w0 = width[0],
                    w1 = width[1],
                    w2 = width[2],
                    w3 = width[3],
                    w4 = width[4]
                )
            };
            line(
                out,
                [
                    HEADER[0], HEADER[1], HEADER[2], HEADER[3], HEADER[4], HEADER[5],
                ],
            )?;
            for r in &rows {
                line(out, [&r[0], &r[1], &r[2], &r[3], &r[4], &r[5]])?;
            }
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record(HEADER)?;
            for s in found {
                w.write_record(cells(s))?;
            }
            w.flush()?;
        }
        Format::Json => {
            for s in found {
                writeln!(out, "{}", to_json(s))?;
            }
        }
        Format::Pgn | Format::Fen => {
            anyhow::bail!("--format pgn and --format fen export games: add --games")
        }
    }
    Ok(())
}
