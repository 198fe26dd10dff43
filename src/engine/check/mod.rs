//! `pawndex check`: verifies a database without changing it, and returns what it found as a
//! [`Report`] (the command prints it).
//!
//! The file is opened read-only ([`crate::store::schema::open_read_only`], which refuses
//! anything that is not a pawndex database) and every check runs in one read transaction (a
//! [`Snapshot`]), so they all see one snapshot, even while `pawndex index` writes. The reads,
//! every SQL text, are the store's ([`crate::store::read::check`], rows as they are stored);
//! the comparisons, the classifier and the report are here. First
//! SQLite's own `PRAGMA integrity_check` (pages, records, indexes; up to 100 messages), then
//! pawndex's invariants:
//!
//! - `derived`: one row; `through` and `finished` non-negative integers, not past the last
//!   game. Games above both (stored by a run that did not finish) are a *note* (an unfinished
//!   database), not a problem; games above `through` only are the unmerged tail (by design).
//! - `games`: ids in 1..=2^32-1 (the derived tables store them as 32-bit), `plies` an integer in
//!   0..=16,384, `moves` two bytes per ply, `hash` equal to
//!   [`game_hash`](crate::model::game::game_hash) of the stored roster, FEN and moves (the
//!   games described are replayed to name an illegal move), one `game_summary` row each and at
//!   least one run;
//!   `ply_numbers` holds 0..=the longest game (the view expands runs through it).
//! - `pawn_sets`, streamed: ids in 1..2^31, side 0 or 1, no pawn on rank 1 or 8, at most 8
//!   pawns, and the stored features equal
//!   [`SideFeatures`](crate::model::features::SideFeatures) of the pawns.
//! - ids: pawndex numbers games and pawn sets from 1 without gaps; ids running far past the
//!   rows (more than twice as many ids as rows, plus 65,536:
//!   [`crate::store::read::ids::dense`]) are a problem, which `similar` and `stats` refuse to
//!   read.
//! - `runs`, streamed in key order with their game and both pawn sets: the game exists;
//!   `0 <= first_ply <= last_ply <= plies`; per game the runs tile `0..=plies` exactly; both
//!   sets exist on the right side; a pawn set holds one stretch of a game (pawn moves cannot be
//!   undone); `bishop_pairs` in 0..=3 and `missing` in 0..=2^32-1.
//! - named structures: `structure_names` holds one row per structure of the catalogue the runs
//!   were named with (the keys its fingerprint in `structure_catalogue` names, by id, with the
//!   reversed flag) and no other, and every run's code has its row. The catalogue the runs were
//!   named with is the one in force, else a *note* (`pawndex migrate` re-classifies);
//!   with it, every run's `structure` equals an independent classification of its pawns (the
//!   catalogue's TOML texts read again and matched square by square on an 8x8 board, not with
//!   the index's bitboard rules; the forms each pawn set meets are remembered, one bit per
//!   form, in at most 16 MiB per side); `structure_changes` has exactly one row per ply where the
//!   code changes between consecutive runs of a game (and at ply 0 when the first run is
//!   named), with the same from and to, a move after ply 0 and none at ply 0.
//! - `set_totals`, `set_games`, `bishop_totals`, for the games with id <= `derived.through`:
//!   equal to a recomputation from `runs` and `games`. Pawn-set ids are taken in windows of
//!   2^20; each window is one pass over the runs into a dense array (88 bytes per id, 92 MB at
//!   most), then the window's rows of both tables are streamed and compared. A game list is
//!   compared by its count, last id and an order-sensitive fingerprint; the first mismatches
//!   are then described game by game (one more pass over the runs each). Rows for ids that are
//!   not pawn sets are problems too.
//!
//! Each kind of problem keeps its first 5 examples (SQLite's messages: 100) and counts the
//! rest. A table that cannot be read (a damaged file) is one problem and the other checks go
//! on. Nothing read from the file sizes an allocation unchecked or can panic.
//!
//! The checks by what they check: `sqlite` (SQLite's integrity check), `games` (games,
//! game_summary, ply_numbers, id spans), `features` (pawn sets and their features), `runs`
//! (runs tiling plies, ids pointing to rows of the right kind), `structures` (structure
//! names, catalogue and changes, with the independent classifier in `naive`), `derived`
//! (the derived row, rows without a pawn set, set_totals and bishop_totals against the
//! recomputation of `recompute`) and `set_games` (the game lists).

mod derived;
mod features;
mod games;
mod naive;
mod recompute;
mod report;
mod runs;
mod set_games;
mod sqlite;
mod structures;

use std::path::Path;

use anyhow::Result;

pub use report::{Finding, Kind, Report};

use crate::model::structure::Catalogue;
use crate::store::read::Snapshot;
use crate::store::read::check::{Cell, Row, Scan};

/// The note for an unfinished database: `pending` games stored by a run that did not finish
/// (above `derived.finished` and `derived.through`). Games of the unmerged tail (above
/// `through`, not above `finished`) are by design and get no note.
#[must_use]
pub fn unfinished_note(pending: i64, db: &Path) -> String {
    let games = if pending == 1 { "game" } else { "games" };
    if crate::store::indexing_now(db) {
        // `pawndex migrate` would wait for the running index's lock: it adds them itself.
        return format!(
            "note: {pending} {games} not yet in the derived tables; a `pawndex index` is writing \
             to {} now and adds them when it finishes",
            db.display()
        );
    }
    format!(
        "note: {pending} {games} not yet in the derived tables; run `pawndex migrate --db {}`",
        db.display()
    )
}

/// Opens `path` read-only and checks it. `Ok` whatever the database holds (see
/// [`Report::problems`]); `Err` when the file cannot be opened as a pawndex database.
pub fn run(path: &Path) -> Result<Report> {
    // The catalogue in force (a bad PAWNDEX_STRUCTURES folder stops here).
    Catalogue::load_active()?;
    check(&crate::store::read::check::open(path)?, path)
}

/// Checks a database in one read transaction. `db` names it in messages.
pub fn check(conn: &Snapshot, db: &Path) -> Result<Report> {
    let mut f = Report::default();
    let r = sqlite::integrity(conn, &mut f);
    f.guard("sqlite", r)?;
    let mut through = None;
    let r = derived::derived_row(conn, &mut f, db).map(|t| through = t);
    f.guard("derived", r)?;
    let r = games::games(conn, &mut f).map(|n| f.games = n);
    f.guard("games", r)?;
    let r = features::pawn_sets(conn, &mut f).map(|n| f.pawn_sets = n);
    f.guard("pawn_sets", r)?;
    let r = games::id_spans(conn, &mut f);
    f.guard("games, pawn_sets", r)?;
    let r = runs::runs(conn, &mut f).map(|n| f.runs = n);
    f.guard("runs", r)?;
    let r = structures::structures(conn, &mut f, db);
    f.guard("runs.structure, structure_changes", r)?;
    let r = derived::orphans(conn, &mut f);
    f.guard("set_totals, set_games", r)?;
    if let Some(through) = through {
        let r = derived::derived_tables(conn, &mut f, through);
        f.guard("set_totals, set_games, bishop_totals", r)?;
    }
    Ok(f)
}

/// An integer value, or `None` for any other type.
fn int(v: Cell<'_>) -> Option<i64> {
    match v {
        Cell::Integer(i) => Some(i),
        _ => None,
    }
}

/// A value for a message.
fn show(v: Cell<'_>) -> String {
    match v {
        Cell::Null => "NULL".to_owned(),
        Cell::Integer(i) => i.to_string(),
        Cell::Real(x) => format!("the real {x}"),
        Cell::Text(t) => {
            let s: String = String::from_utf8_lossy(t).chars().take(40).collect();
            format!("the text {s:?}")
        }
        Cell::Blob(b) => format!("a blob of {} bytes", b.len()),
    }
}

/// "1 game" or "3 games".
fn n_games(n: i64) -> String {
    if n == 1 {
        "1 game".to_owned()
    } else {
        format!("{n} games")
    }
}

/// Steps through every row of `scan` (the offending rows), describing the first ones with
/// `line`.
fn offending(
    mut scan: Scan<'_>,
    f: &mut Report,
    kind: Kind,
    line: impl Fn(Row<'_, '_>) -> Result<String>,
) -> Result<()> {
    let mut rows = scan.rows(&[])?;
    while let Some(r) = rows.next()? {
        let text = if f.shows(kind) {
            line(r)?
        } else {
            String::new()
        };
        f.problem(kind, || text);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unfinished_note_says_how_many_games_and_what_to_run() {
        let note = unfinished_note(3, Path::new("masters.db"));
        assert_eq!(
            note,
            "note: 3 games not yet in the derived tables; run `pawndex migrate --db masters.db`"
        );
        assert!(unfinished_note(1, Path::new("a.db")).starts_with("note: 1 game not yet"));
    }
}
