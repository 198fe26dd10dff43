//! The derived tables: the `derived` row (`through` and `finished`, an unfinished database as a
//! note), rows for ids that are not pawn sets, and `set_totals`, `set_games` and
//! `bishop_totals` against a recomputation from the runs of the games up to `through`, in
//! windows of pawn-set ids.

use std::path::Path;

use anyhow::Result;

use super::recompute::{Acc, gather, slot};
use super::set_games::compare_games;
use super::{Kind, Report, int, n_games, offending, show, unfinished_note};
use crate::store::read::Snapshot;
use crate::store::read::check::{self as read, SET_ID_END, TOTALS_COLUMNS};

/// Pawn-set ids per pass over the runs for the derived tables.
const SETS_PER_PASS: i64 = 1 << 20;

/// The derived row; returns `through` when the derived tables can be checked against it.
pub(super) fn derived_row(conn: &Snapshot, f: &mut Report, db: &Path) -> Result<Option<i64>> {
    let (rows, last_game) = read::derived_counts(conn)?;
    if rows != 1 {
        f.problem(Kind::Derived, || {
            format!("derived: holds {rows} rows, not 1 (the games the derived tables cover)")
        });
    }
    if rows == 0 {
        return Ok(None);
    }
    let ((through, shown), (finished, shown_finished)) =
        read::derived_row(conn)?.one(&[], |r| {
            let (t, f) = (r.get(0)?, r.get(1)?);
            Ok(((int(t), show(t)), (int(f), show(f))))
        })?;
    let Some(finished) = finished.filter(|&t| t >= 0) else {
        f.problem(Kind::Derived, || {
            format!("derived: finished is {shown_finished}, not a game id")
        });
        return Ok(None);
    };
    if finished > last_game {
        f.problem(Kind::Derived, || {
            format!(
                "derived: finished is {finished} but the last game is {last_game} (no run stored \
                 those games)"
            )
        });
    }
    let Some(through) = through.filter(|&t| t >= 0) else {
        f.problem(Kind::Derived, || {
            format!("derived: through is {shown}, not a game id")
        });
        return Ok(None);
    };
    if through > last_game {
        f.problem(Kind::Derived, || {
            format!(
                "derived: through is {through} but the last game is {last_game} (games stored \
                 later would never enter the derived tables)"
            )
        });
    } else if last_game > finished.max(through) {
        f.note(unfinished_note(last_game - finished.max(through), db));
    }
    Ok(Some(through))
}

/// Rows of the derived tables for ids that are not pawn sets.
pub(super) fn orphans(conn: &Snapshot, f: &mut Report) -> Result<()> {
    for table in ["set_totals", "set_games"] {
        offending(read::orphans(conn, table)?, f, Kind::Orphans, |r| {
            let id = r.id(0)?;
            Ok(format!(
                "{table}: row for set {id}, which is not in pawn_sets"
            ))
        })?;
    }
    Ok(())
}

/// `set_totals`, `set_games` and `bishop_totals` against the runs of the games up to
/// `through`, in windows of pawn-set ids.
pub(super) fn derived_tables(conn: &Snapshot, f: &mut Report, through: i64) -> Result<()> {
    let mut lo = 1i64;
    let mut first = true;
    loop {
        let (start, max) = read::set_window(conn, lo, SETS_PER_PASS)?;
        let window = match (start, max) {
            (Some(s), Some(m)) if m >= s => {
                let len = usize::try_from(m - s + 1)?;
                Some((s, s.saturating_add(SETS_PER_PASS).min(SET_ID_END), len))
            }
            _ => None,
        };
        if window.is_none() && !first {
            break;
        }
        let (start, end, len) = window.unwrap_or((1, 1, 0));
        let mut acc = vec![Acc::default(); len];
        let mut bishops = [0i64; 4];
        gather(
            conn,
            through,
            start,
            &mut acc,
            first.then_some(&mut bishops),
        )?;
        if first {
            compare_bishops(conn, f, &bishops)?;
        }
        if window.is_some() {
            compare_totals(conn, f, start, end, &acc)?;
            compare_games(conn, f, through, start, end, &acc)?;
        }
        first = false;
        if window.is_none() || end <= lo {
            break;
        }
        lo = end;
    }
    Ok(())
}

/// `bishop_totals` against the positions the runs give each bishop-pair state.
fn compare_bishops(conn: &Snapshot, f: &mut Report, bishops: &[i64; 4]) -> Result<()> {
    let mut st = read::bishop_totals(conn)?;
    let mut rows = st.rows(&[])?;
    let mut seen = [false; 4];
    while let Some(r) = rows.next()? {
        let key = r.id(0)?; // INTEGER PRIMARY KEY
        let Some(i) = usize::try_from(key).ok().filter(|&i| i < 4) else {
            f.problem(Kind::Bishops, || {
                format!("bishop_totals: row for bishop_pairs {key} (only 0 to 3 exist)")
            });
            continue;
        };
        seen[i] = true;
        let stored = r.get(1)?;
        if int(stored) != Some(bishops[i]) {
            let shown = show(stored);
            let want = bishops[i];
            f.problem(Kind::Bishops, || {
                format!(
                    "bishop_totals: bishop_pairs {key}: positions is {shown}, the runs give {want}"
                )
            });
        }
    }
    for (i, &n) in bishops.iter().enumerate() {
        if !seen[i] && n > 0 {
            f.problem(Kind::Bishops, || {
                format!("bishop_totals: no row for bishop_pairs {i} (the runs give {n} positions)")
            });
        }
    }
    Ok(())
}

/// A window's rows of `set_totals` or `set_games` (the table of `kind`), taken in set order,
/// against what the runs give its sets: a set the runs reach without a row is a problem.
pub(super) struct Window<'a> {
    kind: Kind,
    start: i64,
    acc: &'a [Acc],
    /// The first set of `acc` not yet passed.
    next: usize,
}

impl<'a> Window<'a> {
    pub(super) fn new(kind: Kind, start: i64, acc: &'a [Acc]) -> Window<'a> {
        Window {
            kind,
            start,
            acc,
            next: 0,
        }
    }

    /// What the runs give `set` (nothing, for a set outside the window), after the sets before
    /// it that have no row.
    pub(super) fn row(&mut self, f: &mut Report, set: i64) -> Acc {
        let i = slot(set, self.start, self.acc.len());
        self.missing(f, i.unwrap_or(self.acc.len()));
        self.next = self.next.max(i.map_or(self.acc.len(), |i| i + 1));
        i.map(|i| self.acc[i]).unwrap_or_default()
    }

    /// After the last row: the sets left that have no row.
    pub(super) fn finish(self, f: &mut Report) {
        self.missing(f, self.acc.len());
    }

    /// The sets from `next` to `to` that the runs reach.
    fn missing(&self, f: &mut Report, to: usize) {
        let table = self.kind.table();
        for (i, a) in self.acc.iter().enumerate().take(to).skip(self.next) {
            if a.games > 0 {
                let set = self.start.saturating_add(i as i64);
                let (p, g) = (a.positions, a.games);
                f.problem(self.kind, || {
                    format!(
                        "{table}: set {set} has no row (the runs give {p} positions in {})",
                        n_games(g)
                    )
                });
            }
        }
    }
}

/// `set_totals` rows of the pawn sets `start..end` against `acc` (the window's recomputation).
fn compare_totals(
    conn: &Snapshot,
    f: &mut Report,
    start: i64,
    end: i64,
    acc: &[Acc],
) -> Result<()> {
    let mut st = read::set_totals(conn)?;
    let mut rows = st.rows(&[start, end])?;
    let mut window = Window::new(Kind::SetTotals, start, acc);
    while let Some(r) = rows.next()? {
        let set = r.id(0)?; // INTEGER PRIMARY KEY
        let want = window.row(f, set).totals();
        let mut differ = Vec::new();
        for (c, name) in TOTALS_COLUMNS.iter().enumerate() {
            let stored = r.get(c + 1)?;
            if int(stored) != Some(want[c]) {
                differ.push(format!(
                    "{name} is {}, the runs give {}",
                    show(stored),
                    want[c]
                ));
            }
        }
        if !differ.is_empty() {
            f.problem(Kind::SetTotals, || {
                format!("set_totals: set {set}: {}", differ.join("; "))
            });
        }
    }
    window.finish(f);
    Ok(())
}
