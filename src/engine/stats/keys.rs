//! The structure part of each run's key: per side, pawn set id -> the number of its tuple of
//! structure values, read once from the pawn-set scans.

use std::collections::HashSet;

use anyhow::Result;

use super::StatsDb;
use super::plan::Plan;
use crate::engine::parallel;
use crate::model::columns::{self, Cell, Column};
use crate::model::hash::IntMap;

/// No key: filtered out, or an id the table does not know.
pub(super) const NONE: u32 = u32::MAX;

/// Gives each distinct tuple a small number.
pub(super) struct Interner<T> {
    ids: IntMap<Vec<T>, u32>,
    pub(super) tuples: Vec<Vec<T>>,
    last: Option<u32>,
}

impl<T: Clone + Eq + std::hash::Hash> Interner<T> {
    pub(super) fn new() -> Self {
        Interner {
            ids: IntMap::default(),
            tuples: Vec::new(),
            last: None,
        }
    }

    pub(super) fn id(&mut self, tuple: &[T]) -> u32 {
        // Neighbouring rows often repeat the last tuple.
        if let Some(last) = self.last
            && self.tuples[last as usize] == tuple
        {
            return last;
        }
        let id = match self.ids.get(tuple) {
            Some(&id) => id,
            None => {
                let id = self.tuples.len() as u32;
                self.tuples.push(tuple.to_vec());
                self.ids.insert(tuple.to_vec(), id);
                id
            }
        };
        self.last = Some(id);
        id
    }
}

/// Index of a side in per-side arrays.
pub(super) fn side_index(side: columns::Side) -> usize {
    match side {
        columns::Side::White => 0,
        columns::Side::Black => 1,
    }
}

/// Whether bit `id` is set.
#[inline]
pub(super) fn in_bits(bits: &[u64], id: i64) -> bool {
    usize::try_from(id).is_ok_and(|i| bits.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0))
}

/// What one element of a side's key tuple is.
#[derive(Copy, Clone)]
enum Item {
    /// The value of structure column `i` (a column of this side).
    Column(usize),
    /// The side's pawns (for `pawn_fen`, which needs both sides).
    Pawns,
}

/// One side's part of the structure key: pawn set id -> the number of its tuple of values
/// (`NONE`: filtered out, or a set of the other side).
pub(super) struct SideKeys {
    key_of: KeyTable,
    tuples: Vec<Vec<i64>>,
    items: Vec<Item>,
}

/// The structure part of each run's key: a White key and a Black key (0 for a side that no
/// column or filter uses), or nothing at all.
pub(super) enum StructureKeys {
    /// No structure column and no structure filter.
    All,
    Sides {
        sides: Box<[Option<SideKeys>; 2]>,
        /// Only these keys count (the candidates of `--top` over whole structures).
        keep: Option<HashSet<u64>>,
        /// Only runs whose White and Black sets are both in these bit sets count.
        keep_sets: Option<Box<[Vec<u64>; 2]>>,
    },
}

/// Structure id -> key, in the narrowest integers that hold the keys: the positions scan looks
/// it up for every run in random order, so a table that stays in the CPU cache pays.
enum KeyTable {
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
}

impl KeyTable {
    fn new(keys: Vec<u32>, distinct: usize) -> KeyTable {
        // The largest value of each width stands for NONE.
        if distinct < usize::from(u8::MAX) {
            KeyTable::U8(
                keys.iter()
                    .map(|&k| k.min(u32::from(u8::MAX)) as u8)
                    .collect(),
            )
        } else if distinct < usize::from(u16::MAX) {
            KeyTable::U16(
                keys.iter()
                    .map(|&k| k.min(u32::from(u16::MAX)) as u16)
                    .collect(),
            )
        } else {
            KeyTable::U32(keys)
        }
    }

    #[inline]
    fn get(&self, id: i64) -> Option<u32> {
        let id = usize::try_from(id).ok()?;
        match self {
            KeyTable::U8(t) => t.get(id).filter(|&&k| k != u8::MAX).map(|&k| u32::from(k)),
            KeyTable::U16(t) => t.get(id).filter(|&&k| k != u16::MAX).map(|&k| u32::from(k)),
            KeyTable::U32(t) => t.get(id).filter(|&&k| k != NONE).copied(),
        }
    }
}

impl StructureKeys {
    #[inline]
    pub(super) fn key(&self, white_set: i64, black_set: i64) -> Option<u64> {
        match self {
            StructureKeys::All => Some(0),
            StructureKeys::Sides {
                sides,
                keep,
                keep_sets,
            } => {
                if let Some(sets) = keep_sets
                    && !(in_bits(&sets[0], white_set) && in_bits(&sets[1], black_set))
                {
                    return None;
                }
                let part = |side: &Option<SideKeys>, id: i64| match side {
                    Some(k) => k.key_of.get(id),
                    None => Some(0),
                };
                let key = u64::from(part(&sides[0], white_set)?) << 32
                    | u64::from(part(&sides[1], black_set)?);
                match keep {
                    Some(keep) if !keep.contains(&key) => None,
                    _ => Some(key),
                }
            }
        }
    }

    /// The structure columns' values of a key.
    pub(super) fn values(&self, plan: &Plan, key: u64) -> Vec<Cell> {
        let mut values = vec![Cell::Null; plan.structure_columns.len()];
        let mut pawns = [0i64; 2];
        if let StructureKeys::Sides { sides, .. } = self {
            for (side, keys) in sides.iter().enumerate() {
                let Some(k) = keys else { continue };
                let part = if side == 0 {
                    key >> 32
                } else {
                    key & 0xFFFF_FFFF
                };
                let Some(t) = k.tuples.get(part as usize) else {
                    continue;
                };
                for (item, &v) in k.items.iter().zip(t) {
                    match *item {
                        Item::Column(i) => values[i] = Cell::Int(v),
                        Item::Pawns => pawns[side] = v,
                    }
                }
            }
        }
        for (i, c) in plan.structure_columns.iter().enumerate() {
            if *c == Column::PawnFen {
                values[i] = c.structure_value(&pawns);
            }
        }
        values
    }

    /// Reads each side's pawn sets in `threads` slices of ids, each on its own connection.
    /// With `only`, just the sets in those bit sets (White, Black) get a key.
    pub(super) fn load(
        connect: &(dyn Fn() -> Result<StatsDb> + Sync),
        plan: &Plan,
        threads: usize,
        max_id: i64,
        only: Option<&[Vec<u64>; 2]>,
    ) -> Result<StructureKeys> {
        let filtered = plan.side_filters.iter().any(|f| !f.is_empty());
        if plan.structure_columns.is_empty() && !filtered {
            return Ok(StructureKeys::All);
        }
        // Ids come from the file: refuse a wild one rather than size a table by it.
        if !(0..=i64::from(u32::MAX >> 2)).contains(&max_id) {
            anyhow::bail!(
                "pawn set id {max_id} is out of range: the database is damaged (run `pawndex check`)"
            );
        }
        let mut sides: [Option<SideKeys>; 2] = [None, None];
        for side in [columns::Side::White, columns::Side::Black] {
            let Some(reads) = SideReads::new(plan, side) else {
                continue;
            };
            let keep = |id: i64| only.is_none_or(|bits| in_bits(&bits[side_index(side)], id));
            sides[side_index(side)] = Some(reads.load(connect, plan, threads, max_id, &keep)?);
        }
        Ok(StructureKeys::Sides {
            sides: Box::new(sides),
            keep: None,
            keep_sets: None,
        })
    }
}

/// What the pawn-set scan of one side reads, and how it makes each set's tuple.
struct SideReads<'a> {
    side: columns::Side,
    /// The side's raw columns (`white_islands`, …).
    names: Vec<String>,
    /// Each tuple element, and the positions of its sources among `names`.
    items: Vec<(Item, Vec<usize>)>,
    filters: &'a [String],
}

impl<'a> SideReads<'a> {
    /// `None` when no column and no filter reads this side.
    fn new(plan: &'a Plan, side: columns::Side) -> Option<SideReads<'a>> {
        let prefix = format!(
            "{}_",
            if side == columns::Side::White {
                "white"
            } else {
                "black"
            }
        );
        let raw: Vec<usize> = (0..plan.structure_raw.len())
            .filter(|&i| plan.structure_raw[i].starts_with(&prefix))
            .collect();
        let filters = &plan.side_filters[side_index(side)];
        if raw.is_empty() && filters.is_empty() {
            return None;
        }
        let names: Vec<String> = raw.iter().map(|&i| plan.structure_raw[i].clone()).collect();
        let mut items: Vec<(Item, Vec<usize>)> = Vec::new();
        for (i, c) in plan.structure_columns.iter().enumerate() {
            let sources = &plan.structure_raw_index[i];
            let local = |j: usize| raw.iter().position(|&r| r == j);
            if *c == Column::PawnFen {
                let pawns = format!("{prefix}pawns");
                if let Some(at) = names.iter().position(|n| *n == pawns) {
                    items.push((Item::Pawns, vec![at]));
                }
            } else if c.side() == Some(side) {
                items.push((
                    Item::Column(i),
                    sources.iter().filter_map(|&j| local(j)).collect(),
                ));
            }
        }
        Some(SideReads {
            side,
            names,
            items,
            filters,
        })
    }

    /// Reads the side's sets in slices, each numbering its tuples with its own interner, then
    /// numbers them all in one.
    fn load(
        self,
        connect: &(dyn Fn() -> Result<StatsDb> + Sync),
        plan: &Plan,
        threads: usize,
        max_id: i64,
        keep: &(dyn Fn(i64) -> bool + Sync),
    ) -> Result<SideKeys> {
        let slices = parallel::fan_out(parallel::split(0, max_id, threads), |slice| {
            self.read_slice(&connect()?, plan, slice, keep)
        })?;
        let mut key_of = vec![NONE; max_id as usize + 1];
        let mut interner = Interner::new();
        for (first, keys, tuples) in slices {
            let global: Vec<u32> = tuples.iter().map(|t| interner.id(t)).collect();
            for (i, k) in keys.into_iter().enumerate() {
                if k != NONE {
                    key_of[first as usize + i] = global[k as usize];
                }
            }
        }
        Ok(SideKeys {
            key_of: KeyTable::new(key_of, interner.tuples.len()),
            tuples: interner.tuples,
            items: self.items.into_iter().map(|(item, _)| item).collect(),
        })
    }

    /// One slice of ids: its ids' keys, numbered by its own interner, and the tuples.
    #[allow(clippy::type_complexity)]
    fn read_slice(
        &self,
        db: &StatsDb,
        plan: &Plan,
        (first, last): (i64, i64),
        keep: &(dyn Fn(i64) -> bool + Sync),
    ) -> Result<(i64, Vec<u32>, Vec<Vec<i64>>)> {
        let mut keys = vec![NONE; (last - first + 1) as usize];
        let mut interner = Interner::new();
        let mut tuple = Vec::with_capacity(self.items.len());
        let mut sources = Vec::with_capacity(2);
        let filters = self.filters;
        db.side_scan(
            self.side,
            &self.names,
            filters,
            (first, last),
            keep,
            |id, raw| {
                tuple.clear();
                for (item, at) in &self.items {
                    sources.clear();
                    sources.extend(at.iter().map(|&j| raw[j]));
                    tuple.push(match *item {
                        Item::Column(i) => plan.structure_columns[i].structure_int(&sources),
                        Item::Pawns => sources[0],
                    });
                }
                if let Some(k) = keys.get_mut(usize::try_from(id - first).unwrap_or(usize::MAX)) {
                    *k = interner.id(&tuple);
                }
            },
        )?;
        Ok((first, keys, interner.tuples))
    }
}
