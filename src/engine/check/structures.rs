//! Named structures: `structure_names` holds one row per structure of the catalogue the runs
//! were named with (the keys its fingerprint in `structure_catalogue` names) and every run's
//! code has its row; with the catalogue in force, every run's `structure` equals the
//! independent classification of [`naive`] and `structure_changes` holds exactly the changes
//! between consecutive runs of each game.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Result;

use super::{Kind, Report, int, naive, show};
use crate::model::structure::Catalogue;
use crate::store::read::Snapshot;
use crate::store::read::check::{self as read, Cell, Row, Rows};

/// Bytes the structure check may spend per side remembering which forms' rules a pawn set
/// meets ([`SideCache`]): 16 MiB, so 80,000 sets of a side per generation with the built-in
/// catalogue, 4,000 with 10,000 definitions.
const STRUCTURE_CACHE_BYTES: usize = 16 << 20;

/// The expected row of `structure_changes` for a run: the ply where a game's structure
/// changes, from and to.
type Change = (i64, i64, i64, i64);

/// `structure_changes` read in key order, compared with the changes the runs imply.
struct ChangeRows<'a> {
    rows: Rows<'a>,
    /// The next row not yet compared: (game, ply, from, to, whether `move` is right for the
    /// ply: NULL at ply 0, text after).
    next: Option<(i64, i64, i64, i64, bool)>,
}

impl ChangeRows<'_> {
    fn advance(&mut self, f: &mut Report) -> Result<()> {
        self.next = None;
        while let Some(r) = self.rows.next()? {
            let vals = [r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?];
            let [Some(g), Some(p), Some(from), Some(to)] = vals.map(int) else {
                let shown = vals.map(show).join(", ");
                f.problem(Kind::ChangeRows, || {
                    format!("structure_changes: a row with values {shown} that are not integers")
                });
                continue;
            };
            let move_ok = match r.get(4)? {
                Cell::Null => p == 0,
                Cell::Text(t) => p > 0 && !t.is_empty(),
                _ => false,
            };
            self.next = Some((g, p, from, to, move_ok));
            return Ok(());
        }
        Ok(())
    }

    /// Compares the rows up to and including `want` (or all left, with `None`).
    fn expect(&mut self, want: Option<Change>, naive: &naive::Naive, f: &mut Report) -> Result<()> {
        while let Some((g, p, from, to, move_ok)) = self.next {
            let here = want.map(|(wg, wp, _, _)| (g, p).cmp(&(wg, wp)));
            if here == Some(std::cmp::Ordering::Greater) {
                break;
            }
            if here == Some(std::cmp::Ordering::Equal) {
                let (_, _, wfrom, wto) = want.expect("compared above");
                if (from, to) != (wfrom, wto) {
                    let (a, b, c, d) = (
                        naive.name(from),
                        naive.name(to),
                        naive.name(wfrom),
                        naive.name(wto),
                    );
                    f.problem(Kind::ChangeRows, || {
                        format!("structure_changes: game {g} ply {p}: from {a} to {b}, but the runs change from {c} to {d}")
                    });
                } else if !move_ok {
                    f.problem(Kind::ChangeRows, || {
                        format!("structure_changes: game {g} ply {p}: the move is missing, or given at ply 0")
                    });
                }
                self.advance(f)?;
                return Ok(());
            }
            let (a, b) = (naive.name(from), naive.name(to));
            f.problem(Kind::ChangeRows, || {
                format!("structure_changes: game {g} ply {p}: a change from {a} to {b} where the runs have none")
            });
            self.advance(f)?;
        }
        if let Some((g, p, from, to)) = want {
            let (a, b) = (naive.name(from), naive.name(to));
            f.problem(Kind::ChangeRows, || {
                format!("structure_changes: game {g} ply {p}: no row for the change from {a} to {b} in the runs")
            });
        }
        Ok(())
    }
}

/// The named structures: the stored catalogue is the one in force (else a note), every run's
/// code is the naive classification of its pawns, and `structure_changes` holds exactly the
/// changes between consecutive runs of each game.
pub(super) fn structures(conn: &Snapshot, f: &mut Report, db: &Path) -> Result<()> {
    let catalogue = Catalogue::active();
    let naive = naive::Naive::read(catalogue.texts())?;
    let named = structure_names(conn, f)?;
    let current = catalogue_notes(conn, f, db, catalogue)?;
    let mut st = read::structure_changes(conn)?;
    let mut changes = ChangeRows {
        rows: st.rows(&[])?,
        next: None,
    };
    changes.advance(f)?;
    let mut runs = read::runs_with_pawns(conn)?;
    let mut rows = runs.rows(&[])?;
    let mut classifier = current.then(|| Classifier::new(&naive));
    // (game, code) of the run before.
    let mut before: Option<(i64, i64)> = None;
    while let Some(r) = rows.next()? {
        let (Some(g), Some(ply), Some(code)) = (int(r.get(0)?), int(r.get(1)?), int(r.get(2)?))
        else {
            // Reported by the runs check.
            continue;
        };
        code_row(f, &named, g, ply, code);
        if let Some(c) = classifier.as_mut() {
            c.compare(&r, f, g, ply, code)?;
        }
        let from = match before {
            Some((bg, bcode)) if bg == g => bcode,
            _ => 0,
        };
        if code != from {
            changes.expect(Some((g, ply, from, code)), &naive, f)?;
        }
        before = Some((g, code));
    }
    changes.expect(None, &naive, f)?;
    Ok(())
}

/// Whether the runs were named with the catalogue in force (they are compared with it only
/// then); a note when they were not, or when the names and descriptions stored differ.
fn catalogue_notes(
    conn: &Snapshot,
    f: &mut Report,
    db: &Path,
    catalogue: &Catalogue,
) -> Result<bool> {
    // The runs are compared with the catalogue in force when they were named with its rules.
    let current = read::rules_current(conn, catalogue)?;
    if !current {
        f.note(format!(
            "note: the runs were named with another structure catalogue than the one in force \
             (runs.structure is not compared with it); `pawndex migrate --db {}` re-classifies \
             them",
            db.display()
        ));
    } else if f.count(Kind::Names) == 0 && !read::names_current(conn, catalogue)? {
        f.note(format!(
            "note: the structures' names or descriptions in the database are not those of the \
             catalogue in force; `pawndex migrate --db {}` rewrites them",
            db.display()
        ));
    }
    Ok(current)
}

/// A run's structure code (not 0) has its row in `structure_names`, with a reversed form when
/// the code is one.
fn code_row(f: &mut Report, named: &[Option<bool>], g: i64, ply: i64, code: i64) {
    if code == 0 {
        return;
    }
    let id = usize::try_from(code >> 1).ok();
    match id.and_then(|id| named.get(id).copied().flatten()) {
        Some(reversed) if code & 1 == 0 || reversed => {}
        Some(_) => f.problem(Kind::RunCodes, || {
            format!(
                "runs: game {g} ply {ply}: structure code {code}, the reversed form of \
                 row {} of structure_names, which has none",
                code >> 1
            )
        }),
        None => f.problem(Kind::RunCodes, || {
            format!(
                "runs: game {g} ply {ply}: structure code {code} has no row in \
                 structure_names (no row {})",
                code >> 1
            )
        }),
    }
}

/// The naive classification of the runs' pawns, with the forms each pawn set meets
/// remembered by set id within a byte budget.
struct Classifier<'a> {
    naive: &'a naive::Naive,
    white_sets: SideCache,
    black_sets: SideCache,
}

impl<'a> Classifier<'a> {
    fn new(naive: &'a naive::Naive) -> Classifier<'a> {
        let forms = naive.forms.len();
        Classifier {
            naive,
            white_sets: SideCache::new(forms, STRUCTURE_CACHE_BYTES),
            black_sets: SideCache::new(forms, STRUCTURE_CACHE_BYTES),
        }
    }

    /// A run's structure `code` against the classification of its pawns (a row of the runs
    /// query in [`structures`]; runs whose sets or pawns are unreadable are skipped).
    fn compare(
        &mut self,
        r: &Row<'_, '_>,
        f: &mut Report,
        g: i64,
        ply: i64,
        code: i64,
    ) -> Result<()> {
        let (Some(ws), Some(bs), Some(wp), Some(bp)) = (
            int(r.get(3)?),
            int(r.get(4)?),
            int(r.get(5)?),
            int(r.get(6)?),
        ) else {
            return Ok(());
        };
        let naive = self.naive;
        let white = self
            .white_sets
            .get(ws, || naive.side_matches(&naive::board(wp as u64), true));
        let black = self
            .black_sets
            .get(bs, || naive.side_matches(&naive::board(bp as u64), false));
        let want = i64::from(naive.pick(white, black));
        if want != code {
            let (a, b) = (naive.name(code), naive.name(want));
            f.problem(Kind::RunStructure, || {
                format!(
                    "runs: game {g} ply {ply}: structure {a}, but the pawns (White {wp:#x}, \
                     Black {bp:#x}) form {b}"
                )
            });
        }
        Ok(())
    }
}

/// Which of the catalogue's forms the rule of one side meets, by pawn set id (one bit per form,
/// in match order), remembered within a byte budget so that the memory does not grow with
/// pawn sets times forms: two generations of half the budget each; a set found in the older
/// one moves to the newer, and when the newer is full the older is dropped and the newer takes
/// its place.
struct SideCache {
    young: HashMap<i64, Box<[u64]>>,
    old: HashMap<i64, Box<[u64]>>,
    /// Sets per generation.
    per_generation: usize,
}

impl SideCache {
    /// Bytes of one entry beyond its bits: the key, the boxed slice, the map's slot and
    /// control byte at its lowest load, the allocator's header.
    const ENTRY_OVERHEAD: usize = 96;

    /// Bytes one set costs with `forms` forms, the map's own included (on the high side).
    fn entry_bytes(forms: usize) -> usize {
        forms.div_ceil(64) * 8 + Self::ENTRY_OVERHEAD
    }

    fn new(forms: usize, budget: usize) -> SideCache {
        SideCache {
            young: HashMap::new(),
            old: HashMap::new(),
            per_generation: (budget / 2 / Self::entry_bytes(forms)).max(1),
        }
    }

    /// The bits of `set`, made by `make` when they are not remembered.
    fn get(&mut self, set: i64, make: impl FnOnce() -> Box<[u64]>) -> &[u64] {
        if !self.young.contains_key(&set) {
            let bits = self.old.remove(&set).unwrap_or_else(make);
            if self.young.len() >= self.per_generation {
                self.old = std::mem::take(&mut self.young);
            }
            self.young.insert(set, bits);
        }
        &self.young[&set]
    }

    /// The bytes the remembered sets cost, with `forms` forms.
    #[cfg(test)]
    fn bytes(&self, forms: usize) -> usize {
        (self.young.len() + self.old.len()) * Self::entry_bytes(forms)
    }
}

/// `structure_names` against the catalogue the runs were named with (the structures its
/// fingerprint in `structure_catalogue` names): one row per structure, with its id, its key and
/// whether it has a reversed form, and no other row. Returns the rows by id (`Some(reversed)`),
/// for the ids a code can hold.
fn structure_names(conn: &Snapshot, f: &mut Report) -> Result<Vec<Option<bool>>> {
    let fingerprint = read::catalogue_fingerprint(conn)?;
    let expected = crate::model::structure::fingerprint_structures(&fingerprint);
    if expected.is_none() {
        f.problem(Kind::Names, || {
            "structure_catalogue: the fingerprint is not one pawndex writes, so structure_names \
             cannot be compared with the catalogue the runs were named with"
                .to_owned()
        });
    }
    let mut expected: HashMap<i64, (String, bool, bool)> = expected
        .unwrap_or_default()
        .into_iter()
        .map(|(id, key, reversed)| (i64::from(id), (key, reversed, false)))
        .collect();
    let mut named = vec![None; usize::from(crate::model::structure::Code::MAX / 2) + 1];
    let mut st = read::structure_names(conn)?;
    let mut rows = st.rows(&[])?;
    while let Some(r) = rows.next()? {
        let (id, key, reversed) = (r.get(0)?, r.get(1)?, r.get(2)?);
        let (Some(id), Cell::Text(key), Some(reversed @ (0 | 1))) = (int(id), key, int(reversed))
        else {
            let shown = [id, key, reversed].map(show).join(", ");
            f.problem(Kind::Names, || {
                format!("structure_names: a row with values {shown} that are not an id, a key and 0 or 1")
            });
            continue;
        };
        let key = String::from_utf8_lossy(key);
        let reversed = reversed == 1;
        if let Some(slot) = usize::try_from(id).ok().and_then(|i| named.get_mut(i)) {
            *slot = Some(reversed);
        }
        name_row(f, &mut expected, id, &key, reversed);
    }
    absent_rows(f, expected);
    Ok(named)
}

/// A row of `structure_names` against the structure `expected` has at its id (marked seen).
fn name_row(
    f: &mut Report,
    expected: &mut HashMap<i64, (String, bool, bool)>,
    id: i64,
    key: &str,
    reversed: bool,
) {
    let flag = |r: bool| if r { "reversed = 1" } else { "reversed = 0" };
    match expected.get_mut(&id) {
        None => f.problem(Kind::Names, || {
            format!(
                "structure_names: row {id} ({key}) is not a structure of the catalogue the \
                 runs were named with"
            )
        }),
        Some((want, want_reversed, seen)) => {
            *seen = true;
            if *want != key {
                f.problem(Kind::Names, || {
                    format!(
                        "structure_names: row {id} is {key}, but the catalogue the runs were \
                         named with has {want} there"
                    )
                });
            } else if *want_reversed != reversed {
                f.problem(Kind::Names, || {
                    format!(
                        "structure_names: row {id} ({key}) has {}, but the catalogue the runs \
                         were named with has {}",
                        flag(reversed),
                        flag(*want_reversed)
                    )
                });
            }
        }
    }
}

/// The structures of the catalogue the runs were named with that have no row.
fn absent_rows(f: &mut Report, expected: HashMap<i64, (String, bool, bool)>) {
    let mut missing: Vec<(i64, String)> = expected
        .into_iter()
        .filter(|(_, (_, _, seen))| !seen)
        .map(|(id, (key, _, _))| (id, key))
        .collect();
    missing.sort_unstable();
    for (id, key) in missing {
        f.problem(Kind::Names, || {
            format!(
                "structure_names: no row {id} for {key}, a structure of the catalogue the runs \
                 were named with"
            )
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The structure check's memory for the forms pawn sets meet stays within its budget
    /// however many sets and forms there are (it grew with sets times forms: 3.0 GB on 20,000
    /// games with 10,000 definitions), and recently used sets are kept.
    #[test]
    fn the_side_cache_stays_within_its_budget() {
        for forms in [1, 66, 15_000, 40_000] {
            let budget = 4 << 20;
            let mut cache = SideCache::new(forms, budget);
            let words = forms.div_ceil(64);
            let mut made = 0;
            for set in 0..50_000i64 {
                let bits = cache.get(set, || {
                    made += 1;
                    vec![set as u64; words].into_boxed_slice()
                });
                assert_eq!(bits.len(), words);
                let bytes = cache.bytes(forms);
                assert!(bytes <= budget, "{forms} forms, set {set}: {bytes}");
                // The start position's sets come back in every game: still remembered.
                cache.get(-1, || {
                    made += 1;
                    vec![0; words].into_boxed_slice()
                });
            }
            assert_eq!(made, 50_001, "{forms} forms");
            let (bytes, entry) = (cache.bytes(forms), SideCache::entry_bytes(forms));
            assert!(bytes >= budget / 2 - entry, "{forms} forms: {bytes}");
        }
    }
}
