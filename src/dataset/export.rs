//! `pawndex export parquet`: a database's games, runs, structure changes and rejects as a dataset, read in one
//! snapshot and published whole.

use std::path::Path;

use anyhow::{Context, Result};

use super::layout::Target;
use super::tables::{ChangeRow, GameRow, RejectRow, RunRow};
use super::writer::{DatasetWriter, Written};
use crate::store::read::dump;
use crate::store::read::{Limit, Snapshot};

/// A value of the database that must fit a narrower column.
fn narrow<T: TryFrom<i64>>(v: i64, what: &str) -> Result<T> {
    T::try_from(v).map_err(|_| anyhow::anyhow!("{what} {v} is out of range"))
}

/// Writes the database at `db` into the dataset `target`.
pub fn export(db: &Path, target: &Target, max_file_bytes: u64) -> Result<Written> {
    let snap = Snapshot::open(db, &Limit::none())?;
    let inputs = [db.display().to_string()];
    let mut w = DatasetWriter::new(target.claim(&inputs)?, false, max_file_bytes)?;
    // What the export was reading, for the message when it fails.
    let mut step = "reading the games";
    let result = (|| -> Result<()> {
        copy_games(&snap, &mut w)?;
        step = "reading the runs";
        copy_runs(&snap, &mut w)?;
        step = "reading the structure changes";
        copy_changes(&snap, &mut w)?;
        step = "reading the rejects";
        copy_rejects(&snap, &mut w)
    })();
    match result {
        Ok(()) => w.finish(),
        Err(e) => {
            let left = match w.discard() {
                Ok(()) => "nothing was published".to_owned(),
                Err(why) => format!(
                    "nothing was published, but its unfinished files could not be removed \
                     ({why:#})"
                ),
            };
            Err(e.context(format!(
                "exporting {} to {} failed ({step}); {left}",
                db.display(),
                target.dir.display()
            )))
        }
    }
}

/// Copies every game row.
fn copy_games(snap: &Snapshot, w: &mut DatasetWriter) -> Result<()> {
    dump::games(snap, |g| {
        let id = w.id_for(g.id)?;
        w.push_game_row(&GameRow {
            id,
            header: &g.header,
            plies: narrow(g.plies, "plies")?,
            source: &g.source,
            offset: g.offset,
            fen: g.fen.as_deref(),
            chess960: g.chess960,
            moves: &g.moves,
            hash: g.hash,
        })
        .with_context(|| format!("game {}", g.id))
    })
}

/// Copies every run.
fn copy_runs(snap: &Snapshot, w: &mut DatasetWriter) -> Result<()> {
    dump::runs(snap, |r| {
        let row = RunRow {
            game_id: w.id_for(r.game_id)?,
            first_ply: narrow(r.first_ply, "first_ply")?,
            last_ply: narrow(r.last_ply, "last_ply")?,
            white_pawns: r.white_pawns as u64,
            black_pawns: r.black_pawns as u64,
            white: r.white,
            black: r.black,
            bishop_pairs: narrow(r.bishop_pairs, "bishop_pairs")?,
            pieceset: narrow(r.pieceset, "pieceset")?,
            structure: r.structure.as_deref(),
            structure_reversed: r.structure_reversed,
        };
        w.push_run_row(&row)
            .with_context(|| format!("a run of game {}", r.game_id))
    })
}

/// Copies every structure change.
fn copy_changes(snap: &Snapshot, w: &mut DatasetWriter) -> Result<()> {
    dump::changes(snap, |c| {
        let row = ChangeRow {
            game_id: w.id_for(c.game_id)?,
            ply: narrow(c.ply, "ply")?,
            from: c.from.as_deref(),
            from_reversed: c.from_reversed,
            to: c.to.as_deref(),
            to_reversed: c.to_reversed,
            san: c.san.as_deref(),
        };
        w.push_change_row(&row)
            .with_context(|| format!("a structure change of game {}", c.game_id))
    })
}

/// Copies every reject.
fn copy_rejects(snap: &Snapshot, w: &mut DatasetWriter) -> Result<()> {
    dump::rejects(snap, |r| {
        let id = w.id_for(r.id)?;
        w.push_reject_row(&RejectRow {
            id,
            source: &r.source,
            offset: r.offset,
            event: r.event.as_deref(),
            white: r.white.as_deref(),
            black: r.black.as_deref(),
            ply: r.ply.map(|p| narrow(p, "ply")).transpose()?,
            reason: &r.reason,
        })
    })
}
