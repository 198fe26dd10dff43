//! The named structures in the database: the catalogue rows (`structure_names`), its fingerprint
//! (`structure_catalogue`), the code of every run (`runs.structure`) and the changes of a game's
//! structure (`structure_changes`).
//!
//! `pawndex index` classifies the runs it stores as it stores them (see `ingest::replay`). When
//! the catalogue in force differs from the one a database was classified with, [`sync`]
//! re-classifies it from the stored pawn sets: it rewrites the codes that change and rebuilds the
//! changes, keeping the SAN of a change at a ply that already had one (the move of a ply does not
//! depend on the catalogue) and replaying a game's stored moves only for the rest.

use std::collections::HashMap;

use anyhow::{Context, Result};
use rusqlite::{Connection, params};

use crate::model::stored::Cursor;
use crate::model::structure::{Catalogue, Code};
use crate::store::schema::games::load_game;

/// Games re-classified per step (bounds the memory of a re-classification).
const GAMES_PER_STEP: i64 = 20_000;

/// What [`sync`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Synced {
    /// The catalogue's names were (re)written.
    pub names: bool,
    /// The runs were re-classified (the rules differ from the database's).
    pub reclassified: bool,
    /// Runs whose code changed.
    pub runs_changed: u64,
}

/// The catalogue rows as the database should hold them.
fn name_rows(catalogue: &Catalogue) -> Vec<(i64, String, String, String, String, bool)> {
    catalogue
        .definitions()
        .iter()
        .enumerate()
        .map(|(i, d)| {
            (
                i as i64 + 1,
                d.key.clone(),
                d.name.clone(),
                d.family.clone(),
                d.description.clone(),
                d.reversed,
            )
        })
        .collect()
}

/// Whether the runs were classified with this catalogue's rules. Read-only.
pub fn rules_current(conn: &Connection, catalogue: &Catalogue) -> Result<bool> {
    let fingerprint: String =
        conn.query_row("SELECT fingerprint FROM structure_catalogue", [], |r| {
            r.get(0)
        })?;
    Ok(fingerprint == catalogue.fingerprint())
}

/// Whether the database holds this catalogue (names and rules) already. Read-only.
pub fn is_current(conn: &Connection, catalogue: &Catalogue) -> Result<bool> {
    if !rules_current(conn, catalogue)? {
        return Ok(false);
    }
    let mut st = conn.prepare(
        "SELECT id, key, name, family, description, reversed FROM structure_names ORDER BY id",
    )?;
    let stored = st
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(stored == name_rows(catalogue))
}

/// Brings the database to the catalogue: its names, and when the rules differ, every run's
/// code and the changes. Runs inside the caller's write transaction.
pub fn sync(
    conn: &Connection,
    catalogue: &Catalogue,
    progress: &dyn Fn(u64, u64),
) -> Result<Synced> {
    let mut done = Synced::default();
    if is_current(conn, catalogue)? {
        return Ok(done);
    }
    conn.execute("DELETE FROM structure_names", [])?;
    let mut st = conn.prepare(
        "INSERT INTO structure_names (id, key, name, family, description, reversed)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for row in name_rows(catalogue) {
        st.execute(params![row.0, row.1, row.2, row.3, row.4, row.5])?;
    }
    done.names = true;
    if !rules_current(conn, catalogue)? {
        done.runs_changed = reclassify(conn, catalogue, progress)?;
        done.reclassified = true;
        conn.execute(
            "UPDATE structure_catalogue SET fingerprint = ?1",
            [catalogue.fingerprint()],
        )?;
    }
    Ok(done)
}

/// One change of a game's structure, before its SAN is known.
struct Change {
    game: i64,
    ply: u32,
    from: Code,
    to: Code,
}

/// Re-classifies every run and rebuilds `structure_changes`, a step of games at a time.
/// Returns how many runs changed code.
fn reclassify(
    conn: &Connection,
    catalogue: &Catalogue,
    progress: &dyn Fn(u64, u64),
) -> Result<u64> {
    let last: i64 = conn.query_row("SELECT coalesce(max(id), 0) FROM games", [], |r| r.get(0))?;
    let mut changed = 0;
    let mut from = 0;
    while from < last {
        let to = (from + GAMES_PER_STEP).min(last);
        changed += reclassify_step(conn, catalogue, from, to)
            .with_context(|| format!("re-classifying games {}..{to}", from + 1))?;
        progress(to as u64, last as u64);
        from = to;
    }
    Ok(changed)
}

/// Re-classifies the runs of the games with `from < id <= to`.
fn reclassify_step(conn: &Connection, catalogue: &Catalogue, from: i64, to: i64) -> Result<u64> {
    let mut updates: Vec<(i64, i64, Code)> = Vec::new();
    let mut changes: Vec<Change> = Vec::new();
    {
        let mut st = conn.prepare_cached(
            "SELECT r.game_id, r.first_ply, r.structure, w.pawns, b.pawns
             FROM runs AS r
             JOIN pawn_sets AS w ON w.id = r.white_set
             JOIN pawn_sets AS b ON b.id = r.black_set
             WHERE r.game_id > ?1 AND r.game_id <= ?2
             ORDER BY r.game_id, r.first_ply",
        )?;
        let mut rows = st.query([from, to])?;
        let mut current: Option<(i64, Code)> = None;
        while let Some(r) = rows.next()? {
            let (game, first_ply, old): (i64, i64, i64) = (r.get(0)?, r.get(1)?, r.get(2)?);
            let code = catalogue.classify(r.get::<_, i64>(3)? as u64, r.get::<_, i64>(4)? as u64);
            if old != i64::from(code) {
                updates.push((game, first_ply, code));
            }
            let before = match current {
                Some((g, c)) if g == game => c,
                _ => 0,
            };
            if code != before {
                changes.push(Change {
                    game,
                    ply: u32::try_from(first_ply).context("a run's first ply out of range")?,
                    from: before,
                    to: code,
                });
            }
            current = Some((game, code));
        }
    }
    let known = known_moves(conn, from, to)?;
    let moves = moves_of(conn, &changes, &known)?;
    {
        let mut st = conn.prepare_cached(
            "UPDATE runs SET structure = ?3 WHERE game_id = ?1 AND first_ply = ?2",
        )?;
        for (game, ply, code) in &updates {
            st.execute(params![game, ply, code])?;
        }
    }
    conn.prepare_cached("DELETE FROM structure_changes WHERE game_id > ?1 AND game_id <= ?2")?
        .execute([from, to])?;
    let mut st = conn.prepare_cached(INSERT_CHANGE)?;
    for (c, m) in changes.iter().zip(moves) {
        st.execute(params![c.game, c.ply, c.from, c.to, m])?;
    }
    Ok(updates.len() as u64)
}

/// Inserts one row of `structure_changes`.
pub const INSERT_CHANGE: &str = "INSERT INTO structure_changes
    (game_id, ply, from_structure, to_structure, move) VALUES (?1, ?2, ?3, ?4, ?5)";

/// The moves of the changes already stored for the games `from < id <= to`.
fn known_moves(conn: &Connection, from: i64, to: i64) -> Result<HashMap<(i64, u32), String>> {
    let mut st = conn.prepare_cached(
        "SELECT game_id, ply, move FROM structure_changes
         WHERE game_id > ?1 AND game_id <= ?2 AND move IS NOT NULL",
    )?;
    let rows = st.query_map([from, to], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The SAN of each change's move (none at ply 0): from `known` when the ply had one, else
/// replayed from the game's stored moves.
fn moves_of(
    conn: &Connection,
    changes: &[Change],
    known: &HashMap<(i64, u32), String>,
) -> Result<Vec<Option<String>>> {
    let mut out = Vec::with_capacity(changes.len());
    let mut cursor: Option<Cursor> = None;
    for c in changes {
        if c.ply == 0 {
            out.push(None);
            continue;
        }
        if let Some(m) = known.get(&(c.game, c.ply)) {
            out.push(Some(m.clone()));
            continue;
        }
        if cursor.as_ref().is_none_or(|k| k.game.id != c.game) {
            let game = load_game(conn, c.game)?
                .with_context(|| format!("game {} has runs but no row in games", c.game))?;
            cursor = Some(Cursor::new(game)?);
        }
        let k = cursor.as_mut().expect("set just above");
        let before = k.seek(c.ply - 1)?.clone();
        let m = k.game.move_at(&before, c.ply)?;
        let after = k.seek(c.ply)?;
        out.push(Some(crate::model::moves::san_plus(&before, m, after)));
    }
    Ok(out)
}
