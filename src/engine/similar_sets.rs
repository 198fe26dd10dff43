//! Each side's pawn sets as `pawndex similar` knows them: per set its pawns and its part of the
//! distance for each form of the target, for the sets within a radius (looked up bitboard by
//! bitboard) or for every set of the database (read in parallel slices of ids).

use std::collections::HashMap;

use anyhow::Result;

use crate::engine::parallel;
use crate::model::similar::{self, PartTable};
use crate::store::read::Snapshot;
use crate::store::read::similar as db;

/// Per pawn set of one side: its pawns and its part of the distance for each form of the
/// target, for every set of the database or for those within a radius.
pub struct SideSets {
    /// 0 White, 1 Black.
    pub side: u8,
    /// Indexed by set id: the set's pawns (when known).
    pub pawns: Vec<u64>,
    /// Indexed by set id: 1 + the part for each form of the target; all 0 for a set not known
    /// here (a set of the other side, or one beyond `radius`).
    pub parts: Vec<[u16; 4]>,
    /// (least part, id) of the known sets, ascending.
    pub ranked: Vec<(u32, i64)>,
    /// Every set of this side whose least part is at most this is known; `u32::MAX` when every
    /// set of the database is, `None` before the first look-up.
    pub known: Option<u32>,
    /// The bitboards already looked up, with their set ids (`None`: not in the database).
    pub looked_up: HashMap<u64, Option<i64>>,
}

impl SideSets {
    pub fn new(side: u8, size: usize) -> SideSets {
        SideSets {
            side,
            pawns: vec![0; size],
            parts: vec![[0; 4]; size],
            ranked: Vec::new(),
            known: None,
            looked_up: HashMap::new(),
        }
    }

    /// The pawns and the parts of a known set.
    pub fn get(&self, id: i64) -> Option<(u64, [u16; 4])> {
        let at = usize::try_from(id).ok()?;
        let p = *self.parts.get(at)?;
        (p[0] != 0).then(|| (self.pawns[at], p.map(|x| x.saturating_sub(1))))
    }

    /// Records a set with its parts against each form (`tables`); its least part.
    pub fn record(&mut self, id: i64, bb: u64, tables: &[PartTable]) -> Option<u32> {
        let at = usize::try_from(id).ok()?;
        let slot = self.parts.get_mut(at)?;
        let mut least = u32::MAX;
        for (k, table) in tables.iter().enumerate() {
            let d = table.part(bb);
            // A part is at most 8 files · weight 2 · 8 pawns · 4 = 512, far below u16::MAX.
            slot[k] = u16::try_from(d + 1).unwrap_or(u16::MAX);
            least = least.min(d);
        }
        self.pawns[at] = bb;
        Some(least)
    }

    /// The largest part of the known sets for each of the first `forms` forms (0 without
    /// sets).
    pub fn largest_parts(&self, forms: usize) -> [u32; 4] {
        let mut out = [0u32; 4];
        for &(_, id) in &self.ranked {
            if let Some((_, parts)) = self.get(id) {
                for k in 0..forms.min(4) {
                    out[k] = out[k].max(u32::from(parts[k]));
                }
            }
        }
        out
    }

    /// The known sets whose least part is at most `radius` (which must not exceed
    /// `self.known`).
    pub fn within(&self, radius: u32) -> Vec<(u32, i64)> {
        self.ranked
            .iter()
            .take_while(|(d, _)| *d <= radius)
            .copied()
            .collect()
    }

    /// Makes every set within `radius` known by looking up the few bitboards that can be
    /// (see [`similar::neighbours`]); false, with nothing changed, when they are too many.
    pub fn look_up(
        &mut self,
        conn: &Snapshot,
        radius: u32,
        targets: &[u64],
        tables: &[PartTable],
        ignore_wings: bool,
    ) -> Result<bool> {
        if self.known.is_some_and(|k| radius <= k) {
            return Ok(true);
        }
        let mut near = Vec::new();
        for &t in targets {
            match similar::neighbours(t, radius, ignore_wings, NEIGHBOURS_CAP) {
                Some(n) => near.extend(n),
                None => return Ok(false),
            }
        }
        for bb in near {
            if self.looked_up.contains_key(&bb) {
                continue;
            }
            let id = db::set_id(conn, self.side, bb)?;
            self.looked_up.insert(bb, id);
            if let Some(id) = id
                && let Some(least) = self.record(id, bb, tables)
            {
                self.ranked.push((least, id));
            }
        }
        self.ranked.sort_unstable();
        self.known = Some(radius);
        Ok(true)
    }
}

/// At most this many bitboards around one form of the target are looked up; past it, every
/// pawn set of the database is read and ranked.
pub const NEIGHBOURS_CAP: usize = 4096;

/// The sets of one id range (from `lo`), both sides: disjoint parts of the two `SideSets`.
pub struct Chunk<'a> {
    pub lo: i64,
    pub pawns: [&'a mut [u64]; 2],
    pub parts: [&'a mut [[u16; 4]]; 2],
}

/// Reads the pawn sets of `chunk`'s range (up to `hi`), computes their parts against each
/// form and returns each side's (least part, id).
pub fn rank_chunk(
    conn: &Snapshot,
    hi: i64,
    chunk: Chunk<'_>,
    tables: &[Vec<PartTable>; 2],
) -> Result<[Vec<(u32, i64)>; 2]> {
    let mut ranked = [Vec::new(), Vec::new()];
    let Chunk {
        lo,
        mut pawns,
        mut parts,
    } = chunk;
    db::sets_between(conn, lo, hi, |id, side, bb| {
        let s = usize::from(side.min(1));
        let Some(at) = usize::try_from(id - lo).ok() else {
            return;
        };
        let Some(slot) = parts[s].get_mut(at) else {
            return;
        };
        let mut least = u32::MAX;
        for (k, table) in tables[s].iter().enumerate() {
            let d = table.part(bb);
            slot[k] = u16::try_from(d + 1).unwrap_or(u16::MAX);
            least = least.min(d);
        }
        pawns[s][at] = bb;
        ranked[s].push((least, id));
    })?;
    Ok(ranked)
}

/// A counting sort of (part, id) pairs by part: the parts are small whole numbers.
pub fn sort_by_part(ranked: Vec<(u32, i64)>) -> Vec<(u32, i64)> {
    let top = ranked.iter().map(|r| r.0 as usize).max().unwrap_or(0);
    let mut starts = vec![0usize; top + 2];
    for r in &ranked {
        starts[r.0 as usize + 1] += 1;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let mut sorted = vec![(0u32, 0i64); ranked.len()];
    for r in ranked {
        let at = &mut starts[r.0 as usize];
        sorted[*at] = r;
        *at += 1;
    }
    sorted
}

/// Reads every pawn set of the database into `white` and `black` with its parts, all
/// connections at once (each a range of ids): both sides then know every set.
pub fn rank_all(
    conn: &Snapshot,
    extra: &mut [Snapshot],
    white: &mut SideSets,
    black: &mut SideSets,
    tables: &[Vec<PartTable>; 2],
) -> Result<()> {
    let size = white.parts.len().min(black.parts.len());
    let max_id = i64::try_from(size).unwrap_or(1) - 1;
    for s in [&mut *white, &mut *black] {
        s.parts.iter_mut().for_each(|p| *p = [0; 4]);
    }
    let ranges = parallel::split(1, max_id, extra.len() + 1);
    // Disjoint slices of the tables, one set per range (range k covers ids lo..=hi).
    let mut chunks = Vec::with_capacity(ranges.len());
    {
        let from = 1.min(size);
        let mut wp = &mut white.pawns[from..size];
        let mut bp = &mut black.pawns[from..size];
        let mut wq = &mut white.parts[from..size];
        let mut bq = &mut black.parts[from..size];
        for &(lo, hi) in &ranges {
            let len = usize::try_from(hi - lo + 1).unwrap_or(0).min(wp.len());
            let (a, ar) = std::mem::take(&mut wp).split_at_mut(len);
            let (b, br) = std::mem::take(&mut bp).split_at_mut(len);
            let (c, cr) = std::mem::take(&mut wq).split_at_mut(len);
            let (d, dr) = std::mem::take(&mut bq).split_at_mut(len);
            (wp, bp, wq, bq) = (ar, br, cr, dr);
            chunks.push((
                hi,
                Chunk {
                    lo,
                    pawns: [a, b],
                    parts: [c, d],
                },
            ));
        }
    }
    let mut chunks = chunks.into_iter();
    let first = chunks.next();
    let (rest, head) = parallel::join(
        || {
            parallel::fan_out(extra.iter_mut().zip(chunks), |(c, (hi, chunk))| {
                rank_chunk(c, hi, chunk, tables)
            })
        },
        || {
            first
                .map(|(hi, chunk)| rank_chunk(conn, hi, chunk, tables))
                .transpose()
        },
    );
    let mut found: Vec<[Vec<(u32, i64)>; 2]> = head?.into_iter().collect();
    found.extend(rest?);
    let mut ranked = [Vec::new(), Vec::new()];
    for [w, b] in found {
        ranked[0].extend(w);
        ranked[1].extend(b);
    }
    let [w, b] = ranked;
    white.ranked = sort_by_part(w);
    black.ranked = sort_by_part(b);
    white.known = Some(u32::MAX);
    black.known = Some(u32::MAX);
    Ok(())
}
