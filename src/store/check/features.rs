//! `pawn_sets`, streamed: ids in range, side 0 or 1, no pawn on rank 1 or 8, at most 8 pawns,
//! and the stored features equal to a recomputation from the pawns.

use anyhow::Result;
use rusqlite::{Connection, Row};

use super::{Kind, Report, int, show};
use crate::model::features::SideFeatures;

/// Pawn-set ids are below this.
pub(super) const SET_ID_END: i64 = 1 << 31;

/// The columns read after the id, in the order of the query in [`pawn_sets`].
const COLUMNS: [&str; 8] = [
    "side",
    "pawns",
    "islands",
    "dispersion",
    "distortion",
    "duo",
    "trio",
    "quart",
];

/// Streams `pawn_sets`; returns how many there are.
pub(super) fn pawn_sets(conn: &Connection, f: &mut Report) -> Result<u64> {
    let mut st = conn.prepare(
        "SELECT id, side, pawns, islands, dispersion, distortion, duo, trio, quart
         FROM pawn_sets ORDER BY id",
    )?;
    let mut rows = st.query([])?;
    let mut n = 0u64;
    while let Some(r) = rows.next()? {
        n += 1;
        let id: i64 = r.get(0)?; // INTEGER PRIMARY KEY
        if !(1..SET_ID_END).contains(&id) {
            f.problem(Kind::SetIds, || {
                format!(
                    "pawn_sets: set {id}: id out of range (1 to {})",
                    SET_ID_END - 1
                )
            });
        }
        let Some(v) = integers(r, id, f)? else {
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
fn integers(r: &Row, id: i64, f: &mut Report) -> Result<Option<[i64; 8]>> {
    let mut v = [0i64; 8];
    let mut bad = Vec::new();
    for (i, name) in COLUMNS.iter().enumerate() {
        let value = r.get_ref(i + 1)?;
        match int(value) {
            Some(x) => v[i] = x,
            None => bad.push(format!("{name} is {}", show(value))),
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

/// The stored features (islands, dispersion, distortion, duo, trio, quart) against
/// [`SideFeatures`] of the pawns of `side` (0 or 1).
fn features(f: &mut Report, id: i64, side: i64, pawns: u64, stored: [i64; 6]) {
    let [islands, dispersion, distortion, duo, trio, quart] = stored;
    let want = if side == 0 {
        SideFeatures::white(pawns)
    } else {
        SideFeatures::black(pawns)
    };
    let pairs = [
        ("islands", islands, i64::from(want.islands)),
        ("dispersion", dispersion, i64::from(want.dispersion)),
        ("distortion", distortion, i64::from(want.distortion)),
        ("duo", duo, want.duo as i64),
        ("trio", trio, want.trio as i64),
        ("quart", quart, want.quart as i64),
    ];
    let differ: Vec<String> = pairs
        .iter()
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
