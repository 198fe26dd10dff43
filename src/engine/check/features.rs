//! `pawn_sets`, streamed: ids in range, side 0 or 1, no pawn on rank 1 or 8, at most 8 pawns,
//! and the stored features equal to a recomputation from the pawns.

use anyhow::Result;

use super::{Kind, Report, int, show};
use crate::model::features::{SIDE_FEATURE_COUNT, SIDE_FEATURES, SideFeatures};
use crate::store::read::Snapshot;
use crate::store::read::check::{self as read, Row, SET_ID_END};

/// The columns read after the id: `side`, `pawns` and the side features in list order.
const COLUMNS: usize = 2 + SIDE_FEATURE_COUNT;

/// The name of the `i`th column read after the id.
fn column_name(i: usize) -> &'static str {
    match i {
        0 => "side",
        1 => "pawns",
        _ => SIDE_FEATURES[i - 2].name,
    }
}

/// Streams `pawn_sets`; returns how many there are.
pub(super) fn pawn_sets(conn: &Snapshot, f: &mut Report) -> Result<u64> {
    let mut st = read::pawn_sets(conn)?;
    let mut rows = st.rows(&[])?;
    let mut n = 0u64;
    while let Some(r) = rows.next()? {
        n += 1;
        let id = r.id(0)?; // INTEGER PRIMARY KEY
        if !(1..SET_ID_END).contains(&id) {
            f.problem(Kind::SetIds, || {
                format!(
                    "pawn_sets: set {id}: id out of range (1 to {})",
                    SET_ID_END - 1
                )
            });
        }
        let Some(v) = integers(&r, id, f)? else {
            continue;
        };
        let [side, pawns, stored @ ..] = v;
        let pawns = pawns as u64; // bitboards are stored as i64 with the same bits
        impossible(f, id, side, pawns);
        if side == 0 || side == 1 {
            features(f, id, side, pawns, stored);
        }
    }
    Ok(n)
}

/// The row's values after the id, or `None` (a problem) when one is not an integer.
fn integers(r: &Row<'_, '_>, id: i64, f: &mut Report) -> Result<Option<[i64; COLUMNS]>> {
    let mut v = [0i64; COLUMNS];
    let mut bad = Vec::new();
    for (i, slot) in v.iter_mut().enumerate() {
        let value = r.get(i + 1)?;
        match int(value) {
            Some(x) => *slot = x,
            None => bad.push(format!("{} is {}", column_name(i), show(value))),
        }
    }
    if !bad.is_empty() {
        f.problem(Kind::SetPawns, || {
            format!("pawn_sets: set {id}: {}, not an integer", bad.join(", "))
        });
        return Ok(None);
    }
    Ok(Some(v))
}

/// A side that is neither White nor Black, a pawn on rank 1 or 8, more than 8 pawns.
fn impossible(f: &mut Report, id: i64, side: i64, pawns: u64) {
    const RANKS_1_AND_8: u64 = 0xFF00_0000_0000_00FF;
    let mut wrong = Vec::new();
    if side != 0 && side != 1 {
        wrong.push(format!("side is {side}, not 0 (White) or 1 (Black)"));
    }
    if pawns & RANKS_1_AND_8 != 0 {
        wrong.push(format!("pawns {pawns:#018x} has a pawn on rank 1 or 8"));
    }
    if pawns.count_ones() > 8 {
        wrong.push(format!(
            "pawns {pawns:#018x} has {} pawns, more than 8",
            pawns.count_ones()
        ));
    }
    if !wrong.is_empty() {
        f.problem(Kind::SetPawns, || {
            format!("pawn_sets: set {id}: {}", wrong.join("; "))
        });
    }
}

/// The stored side features (in list order) against [`SideFeatures`] of the pawns of `side`
/// (0 or 1).
fn features(f: &mut Report, id: i64, side: i64, pawns: u64, stored: [i64; SIDE_FEATURE_COUNT]) {
    let want = if side == 0 {
        SideFeatures::white(pawns)
    } else {
        SideFeatures::black(pawns)
    };
    let differ: Vec<String> = SIDE_FEATURES
        .iter()
        .zip(stored)
        .map(|(spec, have)| (spec.name, have, (spec.get)(&want) as i64))
        .filter(|(_, have, want)| have != want)
        .map(|(name, have, want)| format!("{name} is {have} but the pawns give {want}"))
        .collect();
    if !differ.is_empty() {
        f.problem(Kind::SetFeatures, || {
            format!(
                "pawn_sets: set {id} (pawns {pawns:#018x}): {}",
                differ.join("; ")
            )
        });
    }
}
