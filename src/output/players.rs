//! The players `pawndex players` lists, as a table, CSV or JSON (one document, which
//! `GET /api/players` answers too).

use std::io::Write;

use anyhow::Result;
use serde_json::{Value, json};

use crate::store::read::names::PlayerRow;

/// A player's row as JSON.
#[must_use]
pub fn row_json(r: &PlayerRow) -> Value {
    json!({
        "player": r.player.shown,
        "names": r.player.names,
        "games": r.player.games,
        "white_games": r.white_games,
        "black_games": r.black_games,
        "first_year": r.first_year,
        "last_year": r.last_year,
        "min_elo": r.min_elo,
        "max_elo": r.max_elo,
        "openings": r.openings.iter().map(|(eco, games)| json!({"eco": eco, "games": games}))
            .collect::<Vec<_>>(),
    })
}

/// The list as one JSON document: the folded text searched and the players.
#[must_use]
pub fn list_json(search: &str, rows: &[PlayerRow]) -> Value {
    json!({
        "search": search,
        "players": rows.iter().map(row_json).collect::<Vec<_>>(),
    })
}

pub fn write_json(out: &mut dyn Write, search: &str, rows: &[PlayerRow]) -> Result<()> {
    serde_json::to_writer(&mut *out, &list_json(search, rows))?;
    writeln!(out)?;
    Ok(())
}

fn years(r: &PlayerRow) -> String {
    match (r.first_year, r.last_year) {
        (Some(a), Some(b)) if a == b => a.to_string(),
        (Some(a), Some(b)) => format!("{a}-{b}"),
        _ => String::new(),
    }
}

fn ratings(r: &PlayerRow) -> String {
    match (r.min_elo, r.max_elo) {
        (Some(a), Some(b)) if a == b => a.to_string(),
        (Some(a), Some(b)) => format!("{a}-{b}"),
        _ => String::new(),
    }
}

fn openings(r: &PlayerRow) -> String {
    r.openings
        .iter()
        .map(|(eco, n)| format!("{eco} ({n})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One CSV row per player; the spellings joined with " | ".
pub fn write_csv(out: &mut dyn Write, rows: &[PlayerRow]) -> Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "player",
        "names",
        "games",
        "white_games",
        "black_games",
        "first_year",
        "last_year",
        "min_elo",
        "max_elo",
        "openings",
    ])?;
    let opt = |v: Option<i64>| v.map_or_else(String::new, |v| v.to_string());
    for r in rows {
        w.write_record([
            r.player.shown.clone(),
            r.player.names.join(" | "),
            r.player.games.to_string(),
            r.white_games.to_string(),
            r.black_games.to_string(),
            opt(r.first_year),
            opt(r.last_year),
            opt(r.min_elo),
            opt(r.max_elo),
            openings(r),
        ])?;
    }
    w.flush()?;
    Ok(())
}

/// An aligned table: name, games (White/Black), years, ratings, openings, and the other
/// spellings the row covers.
pub fn write_table(out: &mut dyn Write, rows: &[PlayerRow]) -> Result<()> {
    let cells: Vec<[String; 5]> = rows
        .iter()
        .map(|r| {
            [
                r.player.shown.clone(),
                format!("{} ({}/{})", r.player.games, r.white_games, r.black_games),
                years(r),
                ratings(r),
                openings(r),
            ]
        })
        .collect();
    let head = ["player", "games (W/B)", "years", "ratings", "openings"];
    let mut width = head.map(|h| h.chars().count());
    for c in &cells {
        for (w, s) in width.iter_mut().zip(c) {
            *w = (*w).max(s.chars().count());
        }
    }
    let line = |out: &mut dyn Write, c: [&str; 5]| -> std::io::Result<()> {
        let mut s = String::new();
        for (i, (cell, w)) in c.iter().zip(width).enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            s.push_str(cell);
            if i + 1 < c.len() {
                s.extend(std::iter::repeat_n(' ', w - cell.chars().count()));
            }
        }
        writeln!(out, "{}", s.trim_end())
    };
    line(out, head)?;
    for (c, r) in cells.iter().zip(rows) {
        line(out, [&c[0], &c[1], &c[2], &c[3], &c[4]])?;
        let others: Vec<&str> = r
            .player
            .names
            .iter()
            .map(String::as_str)
            .filter(|n| *n != r.player.shown)
            .collect();
        if !others.is_empty() {
            writeln!(out, "  also written: {}", others.join(", "))?;
        }
    }
    Ok(())
}
