//! Grouping and counting: a structure scan and a game scan fill lookup tables, then one scan of
//! `positions` streams the runs in game order and adds each run (or each piece of a run cut at
//! ply-bucket and opening boundaries) to its group (or, when only the named structure of the
//! runs is needed, the stretches between a game's changes of structure). Memory holds the
//! lookup tables (a few bytes per structure and per game) and one record per group, never the
//! positions.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use anyhow::{Context, Result};

use rusqlite::Connection;

use crate::outcome::Outcome;

use super::columns::{self, Cell, Column, Level, OPENING_LAST_PLY, Phase, PieceMasks};
use super::sql::{self, Joins};
pub use crate::command::Per;
use crate::command::UsageError;

/// An inclusive ply range.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PlyRange {
    pub first: u32,
    pub last: u32,
}

impl PlyRange {
    pub const ALL: PlyRange = PlyRange {
        first: 0,
        last: u32::MAX,
    };

    pub fn intersect(self, other: PlyRange) -> PlyRange {
        PlyRange {
            first: self.first.max(other.first),
            last: self.last.min(other.last),
        }
    }
}

/// One statistics request.
#[derive(Clone, Debug)]
pub struct Query {
    pub by: Vec<Column>,
    pub per: Per,
    /// SQL expressions, all of which must hold.
    pub filters: Vec<String>,
    pub plies: PlyRange,
    pub min_elo: Option<i64>,
    /// Keep only this many groups, the ones with the most units.
    pub top: Option<usize>,
}

/// Counts of one group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub positions: u64,
    pub games: u64,
    /// Units (positions, or games with `--per game`) by result.
    pub white_wins: u64,
    pub draws: u64,
    pub black_wins: u64,
    white_elo_sum: i128,
    white_elo_units: u64,
    black_elo_sum: i128,
    black_elo_units: u64,
}

impl Totals {
    /// White's score in percent over the units with a result: 100 × (wins + draws / 2) /
    /// (wins + draws + losses).
    pub fn white_score(&self) -> Option<f64> {
        let n = self.white_wins + self.draws + self.black_wins;
        crate::query::output::white_score(2 * self.white_wins + self.draws, n)
    }

    pub fn avg_white_elo(&self) -> Option<f64> {
        (self.white_elo_units > 0).then(|| self.white_elo_sum as f64 / self.white_elo_units as f64)
    }

    pub fn avg_black_elo(&self) -> Option<f64> {
        (self.black_elo_units > 0).then(|| self.black_elo_sum as f64 / self.black_elo_units as f64)
    }

    /// The counted units: positions, or games.
    pub fn units(&self, per: Per) -> u64 {
        match per {
            Per::Position => self.positions,
            Per::Game => self.games,
        }
    }
}

/// One output row: the `--by` values and the counts.
#[derive(Clone, Debug)]
pub struct Group {
    pub keys: Vec<Cell>,
    pub totals: Totals,
}

// ---------------------------------------------------------------------------------------------
// Hashing: group keys are small integers; SipHash would dominate the inner loop.

#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_i64(&mut self, v: i64) {
        self.write_u64(v as u64);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// Gives each distinct tuple a small number.
struct Interner<T> {
    ids: FxMap<Vec<T>, u32>,
    tuples: Vec<Vec<T>>,
    last: Option<u32>,
}

impl<T: Clone + Eq + std::hash::Hash> Interner<T> {
    fn new() -> Self {
        Interner {
            ids: FxMap::default(),
            tuples: Vec::new(),
            last: None,
        }
    }

    fn id(&mut self, tuple: &[T]) -> u32 {
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

// ---------------------------------------------------------------------------------------------
// The plan: which scan computes which column and runs which filter.

/// Which of the three key parts a `--by` column belongs to, and its index there.
#[derive(Copy, Clone, Debug)]
enum Part {
    Structure(usize),
    Game(usize),
    Run(usize),
}

/// Where runs are cut so that every ply-level value is constant on a piece.
#[derive(Copy, Clone, Debug, Default)]
struct Cuts {
    every_ply: bool,
    buckets: bool,
    opening: bool,
}

struct Plan {
    per: Per,
    plies: PlyRange,
    min_elo: Option<i64>,
    parts: Vec<Part>,
    structure_columns: Vec<Column>,
    /// Per-side columns (`white_islands`, …) the pawn-set scans read, and for each structure
    /// column the indexes of its sources among them.
    structure_raw: Vec<String>,
    structure_raw_index: Vec<Vec<usize>>,
    /// The structure columns identify the structure: the structure id is the key.
    structure_unique: bool,
    game_columns: Vec<Column>,
    run_columns: Vec<Column>,
    /// Filters on one side's pawn set only (White, Black).
    side_filters: [Vec<String>; 2],
    game_filters: Vec<String>,
    position_filters: Vec<String>,
    joins: Joins,
    cuts: Cuts,
    /// Per-game piece masks are needed (for `phase`).
    masks: bool,
    scan_columns: sql::ScanColumns,
    /// The `structure` value of each named structure code (`runs.structure`), for
    /// `--by structure`.
    structure_labels: HashMap<i64, String>,
}

/// The `--by structure` value of each code of a named structure in the database: its key, and
/// `~` after it for the colour-reversed form (code 0 is `none`, see [`Plan::run_cell`]).
fn structure_labels(conn: &Connection) -> Result<HashMap<i64, String>> {
    let mut labels = HashMap::new();
    for n in crate::store::search::structure_names(conn)? {
        labels.insert(2 * n.id, n.key.clone());
        labels.insert(2 * n.id + 1, format!("{}~", n.key));
    }
    Ok(labels)
}

impl Plan {
    /// The cell of run column `i` from its value in the run key.
    fn run_cell(&self, i: usize, value: i64) -> Cell {
        match self.run_columns[i] {
            Column::Structure => Cell::Text(match self.structure_labels.get(&value) {
                Some(label) => label.clone(),
                None if value == 0 => "none".to_string(),
                // A code the names do not explain (a damaged database): shown as it is.
                None => format!("#{value}"),
            }),
            _ => Cell::Int(value),
        }
    }
}

/// Every name a `--where` expression may use.
pub fn where_names() -> Vec<String> {
    let mut names: Vec<String> = columns::ALL
        .iter()
        .filter(|c| **c != Column::PawnFen)
        .map(|c| c.name())
        .collect();
    names.extend(sql::GAME_COLUMNS.iter().map(|s| s.to_string()));
    names
}

fn where_error(filter: &str, why: impl std::fmt::Display) -> anyhow::Error {
    UsageError(format!(
        "--where {filter:?}: {why}\n  names it may use: {}",
        where_names().join(", ")
    ))
    .into()
}

impl Plan {
    fn new(conn: &Connection, q: &Query) -> Result<Plan> {
        let mut plan = Plan {
            per: q.per,
            plies: q.plies,
            min_elo: q.min_elo,
            parts: Vec::new(),
            structure_columns: Vec::new(),
            structure_raw: Vec::new(),
            structure_raw_index: Vec::new(),
            structure_unique: false,
            game_columns: Vec::new(),
            run_columns: Vec::new(),
            side_filters: [Vec::new(), Vec::new()],
            game_filters: Vec::new(),
            position_filters: Vec::new(),
            joins: Joins::default(),
            cuts: Cuts::default(),
            masks: false,
            scan_columns: sql::ScanColumns::default(),
            structure_labels: HashMap::new(),
        };
        for &c in &q.by {
            let part = match c.level() {
                Level::Structure => {
                    let mut index = Vec::new();
                    for raw in c.structure_sources() {
                        let i = match plan.structure_raw.iter().position(|r| *r == raw) {
                            Some(i) => i,
                            None => {
                                plan.structure_raw.push(raw);
                                plan.structure_raw.len() - 1
                            }
                        };
                        index.push(i);
                    }
                    plan.structure_raw_index.push(index);
                    plan.structure_columns.push(c);
                    Part::Structure(plan.structure_columns.len() - 1)
                }
                Level::Game => {
                    plan.game_columns.push(c);
                    Part::Game(plan.game_columns.len() - 1)
                }
                Level::Run | Level::Ply => {
                    match c {
                        Column::Ply => plan.cuts.every_ply = true,
                        Column::PlyBucket => plan.cuts.buckets = true,
                        Column::Phase => {
                            plan.cuts.opening = true;
                            plan.masks = true;
                        }
                        _ => {}
                    }
                    plan.run_columns.push(c);
                    Part::Run(plan.run_columns.len() - 1)
                }
            };
            plan.parts.push(part);
        }
        let has = |c: Column| plan.structure_columns.contains(&c);
        plan.structure_unique = has(Column::PawnFen)
            || (has(Column::Pawns(columns::Side::White))
                && has(Column::Pawns(columns::Side::Black)));

        let any_fen: bool = conn.query_row(sql::ANY_FEN_START, [], |r| r.get(0))?;
        for filter in &q.filters {
            plan.place_filter(conn, filter, any_fen)?;
        }
        let uses = |f: fn(&Column) -> bool| plan.run_columns.iter().any(f);
        plan.scan_columns = sql::ScanColumns {
            weight_only: plan.run_columns.is_empty()
                && plan.plies == PlyRange::ALL
                && plan.position_filters.is_empty(),
            missing: uses(|c| matches!(c, Column::Pieceset | Column::Phase)),
            bishop_pairs: uses(|c| matches!(c, Column::BishopPair(_))),
            structure: uses(|c| matches!(c, Column::Structure | Column::StructureReversed)),
        };
        if plan.run_columns.contains(&Column::Structure) {
            plan.structure_labels = structure_labels(conn)?;
        }
        Ok(plan)
    }

    /// Decides which scan runs a `--where` expression, from the names it uses, and checks it.
    fn place_filter(&mut self, conn: &Connection, filter: &str, any_fen: bool) -> Result<()> {
        let inspected = sql::inspect(filter).map_err(|e| where_error(filter, e))?;
        let mut levels = Vec::new();
        let mut sides = Vec::new();
        let mut phase = false;
        let mut cut = sql::Cut::Runs;
        for name in &inspected.identifiers {
            let level = match Column::parse(name) {
                Some(Column::PawnFen) => {
                    return Err(where_error(
                        filter,
                        "pawn_fen can only be used in --by (use white_pawns and black_pawns)",
                    ));
                }
                Some(c) => {
                    phase |= c == Column::Phase;
                    if c.level() == Level::Structure
                        && let Some(side) = c.side()
                        && !sides.contains(&side)
                    {
                        sides.push(side);
                    }
                    cut = cut.merge(match c {
                        Column::Ply => sql::Cut::Plies,
                        Column::PlyBucket => sql::Cut::Pieces {
                            buckets: true,
                            opening: false,
                        },
                        Column::Phase => sql::Cut::Pieces {
                            buckets: false,
                            opening: true,
                        },
                        _ => sql::Cut::Runs,
                    });
                    c.level()
                }
                None if sql::GAME_COLUMNS.contains(&name.as_str()) => Level::Game,
                None => continue,
            };
            if !levels.contains(&level) {
                levels.push(level);
            }
        }
        let (source, list) = match (levels.as_slice(), sides.as_slice()) {
            ([Level::Structure], [side]) => (
                sql::side_source(*side),
                &mut self.side_filters[side_index(*side)],
            ),
            ([Level::Game], _) => (sql::game_source(), &mut self.game_filters),
            _ => {
                self.joins.cut = self.joins.cut.merge(cut);
                self.joins.structures |= levels.contains(&Level::Structure);
                self.joins.games |= levels.contains(&Level::Game);
                if phase && any_fen {
                    self.joins.masks = true;
                    fill_piece_masks(conn)?;
                }
                (
                    sql::positions_source(self.joins),
                    &mut self.position_filters,
                )
            }
        };
        let probe = sql::probe(&source, filter);
        let stmt = match conn.prepare(&probe) {
            Ok(stmt) => stmt,
            Err(rusqlite::Error::MultipleStatement) => {
                return Err(where_error(filter, "give one expression"));
            }
            Err(e) => return Err(where_error(filter, sqlite_message(&e))),
        };
        if !stmt.readonly() {
            return Err(where_error(filter, "the expression is not read-only"));
        }
        list.push(filter.to_string());
        Ok(())
    }
}

fn sqlite_message(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(_, Some(msg)) => msg.clone(),
        // SQLite's own words, without the internal SQL the expression was placed in.
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        e => e.to_string(),
    }
}

/// Fills the temporary piece-mask table for FEN starts (needed by `phase` inside `--where`).
/// The connection is `query_only`; pawndex lifts that for its own temporary table only (the
/// database file itself is opened read-only), and sets it again before any user expression.
fn fill_piece_masks(conn: &Connection) -> Result<()> {
    conn.execute_batch(sql::WRITES_ALLOWED)?;
    let filled = fill_piece_masks_table(conn);
    conn.execute_batch(sql::READ_ONLY_AGAIN)?;
    filled
}

fn fill_piece_masks_table(conn: &Connection) -> Result<()> {
    conn.execute_batch(sql::PIECE_MASKS_TABLE)?;
    let mut insert = conn.prepare(sql::INSERT_PIECE_MASKS)?;
    let mut st = conn.prepare(sql::FEN_STARTS)?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        let fen: String = r.get(1)?;
        let chess960: bool = r.get(2)?;
        let m = PieceMasks::from_fen(&fen, chess960).with_context(|| format!("game {id}"))?;
        insert.execute((
            id,
            m.queens[0],
            m.minors_and_rooks[0],
            m.queens[1],
            m.minors_and_rooks[1],
        ))?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Lookup tables.

const NONE: u32 = u32::MAX;

/// Index of a side in per-side arrays.
fn side_index(side: columns::Side) -> usize {
    match side {
        columns::Side::White => 0,
        columns::Side::Black => 1,
    }
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
struct SideKeys {
    key_of: KeyTable,
    tuples: Vec<Vec<i64>>,
    items: Vec<Item>,
}

/// The structure part of each run's key: a White key and a Black key (0 for a side that no
/// column or filter uses), or nothing at all.
enum StructureKeys {
    /// No structure column and no structure filter.
    All,
    Sides {
        sides: Box<[Option<SideKeys>; 2]>,
        /// Only these keys count (the candidates of `--top` over whole structures).
        keep: Option<std::collections::HashSet<u64>>,
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
    fn key(&self, white_set: i64, black_set: i64) -> Option<u64> {
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
    fn values(&self, plan: &Plan, key: u64) -> Vec<Cell> {
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
    fn load(
        connect: &(dyn Fn() -> Result<Connection> + Sync),
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
        let size = max_id as usize + 1;
        let mut sides: [Option<SideKeys>; 2] = [None, None];
        for side in [columns::Side::White, columns::Side::Black] {
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
                continue;
            }
            let names: Vec<String> = raw.iter().map(|&i| plan.structure_raw[i].clone()).collect();
            // Each tuple element, and the positions of its sources among `names`.
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
            let sql = sql::side_scan(side, &names, filters);
            let parts = id_slices(0, max_id, threads);
            // Each slice: its ids' keys, numbered by its own interner.
            let slices = scan_slices(connect, &parts, |c, (first, last)| {
                let mut st = c.prepare(&sql)?;
                st.raw_bind_parameter(":first_id", first)?;
                st.raw_bind_parameter(":last_id", last)?;
                let mut rows = st.raw_query();
                let mut keys = vec![NONE; (last - first + 1) as usize];
                let mut interner = Interner::new();
                let mut raw_values = vec![0i64; names.len()];
                let mut tuple = Vec::with_capacity(items.len());
                let mut sources = Vec::with_capacity(2);
                while let Some(r) = rows.next()? {
                    let id: i64 = r.get(0)?;
                    if only.is_some_and(|bits| !in_bits(&bits[side_index(side)], id)) {
                        continue;
                    }
                    for (i, v) in raw_values.iter_mut().enumerate() {
                        *v = r.get(i + 1)?;
                    }
                    tuple.clear();
                    for (item, at) in &items {
                        sources.clear();
                        sources.extend(at.iter().map(|&j| raw_values[j]));
                        tuple.push(match *item {
                            Item::Column(i) => plan.structure_columns[i].structure_int(&sources),
                            Item::Pawns => sources[0],
                        });
                    }
                    if let Some(k) = keys.get_mut(usize::try_from(id - first).unwrap_or(usize::MAX))
                    {
                        *k = interner.id(&tuple);
                    }
                }
                Ok((first, keys, interner.tuples))
            })?;
            let mut key_of = vec![NONE; size];
            let mut interner = Interner::new();
            for (first, keys, tuples) in slices {
                let global: Vec<u32> = tuples.iter().map(|t| interner.id(t)).collect();
                for (i, k) in keys.into_iter().enumerate() {
                    if k != NONE {
                        key_of[first as usize + i] = global[k as usize];
                    }
                }
            }
            sides[side_index(side)] = Some(SideKeys {
                key_of: KeyTable::new(key_of, interner.tuples.len()),
                tuples: interner.tuples,
                items: items.into_iter().map(|(item, _)| item).collect(),
            });
        }
        Ok(StructureKeys::Sides {
            sides: Box::new(sides),
            keep: None,
            keep_sets: None,
        })
    }
}

/// What the positions scan needs to know of a game.
#[derive(Copy, Clone)]
struct GameInfo {
    /// The game part of the key; `NONE` when the game is filtered out.
    key: u32,
    outcome: Outcome,
    white_elo: Option<i64>,
    black_elo: Option<i64>,
    /// Index into `Games::masks` (0: the standard start).
    masks: u32,
    /// The game's last ply (`games.plies`).
    last_ply: u32,
}

const NO_GAME: GameInfo = GameInfo {
    key: NONE,
    outcome: Outcome::Unknown,
    white_elo: None,
    black_elo: None,
    masks: 0,
    last_ply: 0,
};

struct Games {
    first_id: i64,
    last_id: i64,
    info: Vec<GameInfo>,
    tuples: Vec<Vec<Cell>>,
    masks: Vec<PieceMasks>,
}

impl Games {
    #[inline]
    fn get(&self, id: i64) -> Option<&GameInfo> {
        let g = self.info.get(usize::try_from(id - self.first_id).ok()?)?;
        (g.key != NONE).then_some(g)
    }

    /// Reads the games `first_id..=last_id` (the range of the command's snapshot).
    fn load(conn: &Connection, plan: &Plan, (first_id, last_id): (i64, i64)) -> Result<Games> {
        // Ids come from the file: a damaged range must not size the table.
        let size = usize::try_from(last_id - first_id + 1)
            .ok()
            .filter(|&n| n <= 1 << 32)
            .ok_or_else(|| anyhow::anyhow!("game ids {first_id}..{last_id} are out of range: the database is damaged (run `pawndex check`)"))?;
        let mut games = Games {
            first_id,
            last_id,
            info: vec![NO_GAME; size],
            tuples: Vec::new(),
            masks: vec![PieceMasks::STANDARD],
        };
        let mut interner = Interner::new();
        let mut st = conn.prepare(&sql::game_scan(&plan.game_filters, plan.min_elo.is_some()))?;
        st.raw_bind_parameter(":first_id", first_id)?;
        st.raw_bind_parameter(":last_id", last_id)?;
        if let Some(min) = plan.min_elo {
            st.raw_bind_parameter(":min_elo", min)?;
        }
        let mut rows = st.raw_query();
        let mut tuple = Vec::with_capacity(plan.game_columns.len());
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            let outcome = Outcome::parse(r.get_ref(1)?.as_str_or_null()?);
            let white_elo: Option<i64> = r.get(2)?;
            let black_elo: Option<i64> = r.get(3)?;
            let mut masks = 0;
            if plan.masks {
                let fen: Option<String> = r.get(4)?;
                if let Some(fen) = fen {
                    let chess960: bool = r.get(5)?;
                    let m = PieceMasks::from_fen(&fen, chess960)
                        .with_context(|| format!("game {id}"))?;
                    masks = games.masks.len() as u32;
                    games.masks.push(m);
                }
            }
            tuple.clear();
            for c in &plan.game_columns {
                tuple.push(match c {
                    Column::GameId => Cell::Int(id),
                    Column::EloBand => columns::elo_band(white_elo, black_elo),
                    _ => unreachable!("not a game column: {c:?}"),
                });
            }
            let Some(slot) = games
                .info
                .get_mut(usize::try_from(id - first_id).unwrap_or(usize::MAX))
            else {
                continue;
            };
            *slot = GameInfo {
                key: interner.id(&tuple),
                outcome,
                white_elo,
                black_elo,
                masks,
                last_ply: small(r.get::<_, Option<i64>>(6)?.unwrap_or(0)),
            };
        }
        games.tuples = interner.tuples;
        Ok(games)
    }
}

// ---------------------------------------------------------------------------------------------
// The positions scan.

/// A run of `runs` (or a single ply when the scan expands plies).
struct RunRow {
    game_id: i64,
    white_set: i64,
    black_set: i64,
    first_ply: u32,
    last_ply: u32,
    missing: i64,
    bishop_pairs: i64,
    /// `runs.structure` (read only when a column needs it).
    structure: i64,
}

/// An integer column of a scan row, with no more checks than its type (the scans read
/// millions of rows: rusqlite's `get` costs a quarter of the time).
#[inline]
fn int(r: &rusqlite::Row<'_>, i: usize) -> Result<i64> {
    match r.get_ref(i)? {
        rusqlite::types::ValueRef::Integer(v) => Ok(v),
        other => anyhow::bail!(
            "column {i} of a run holds {:?}, not an integer: the database is damaged (run \
             `pawndex check`)",
            other.data_type()
        ),
    }
}

/// A ply number of a run, saturated into `u32` (a damaged value stays in range).
#[inline]
fn small(v: i64) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(u32::MAX)
}

/// Streams the runs of games `first..=last` that pass the position filters, in game order.
fn scan_positions(
    conn: &Connection,
    plan: &Plan,
    (first, last): (i64, i64),
    mut visit: impl FnMut(&RunRow),
) -> Result<()> {
    let cols = plan.scan_columns;
    let ply_range = plan.plies != PlyRange::ALL;
    let sql = sql::positions_scan(cols, ply_range, plan.joins, &plan.position_filters);
    let mut st = conn.prepare(&sql)?;
    if st.parameter_index(":first_game")?.is_some() {
        st.raw_bind_parameter(":first_game", first)?;
        st.raw_bind_parameter(":last_game", last)?;
    }
    if st.parameter_index(":lo")?.is_some() {
        st.raw_bind_parameter(":lo", i64::from(plan.plies.first))?;
        st.raw_bind_parameter(":hi", i64::from(plan.plies.last))?;
    }
    let mut rows = st.raw_query();
    let mut run = RunRow {
        game_id: 0,
        white_set: 0,
        black_set: 0,
        first_ply: 0,
        last_ply: 0,
        missing: 0,
        bishop_pairs: 0,
        structure: 0,
    };
    while let Some(r) = rows.next()? {
        run.game_id = int(r, 0)?;
        run.white_set = int(r, 1)?;
        run.black_set = int(r, 2)?;
        let mut i = 3;
        if cols.weight_only {
            // A damaged row (last_ply < first_ply) weighs nothing rather than wrapping around.
            let weight = int(r, 3)?;
            if weight < 1 {
                continue;
            }
            run.first_ply = 0;
            run.last_ply = u32::try_from(weight - 1).unwrap_or(u32::MAX);
            i += 1;
        } else {
            run.first_ply = small(int(r, 3)?);
            run.last_ply = small(int(r, 4)?);
            if run.last_ply < run.first_ply {
                continue;
            }
            i += 2;
        }
        if cols.missing {
            run.missing = int(r, i)?;
            i += 1;
        }
        if cols.bishop_pairs {
            run.bishop_pairs = int(r, i)?;
            i += 1;
        }
        if cols.structure {
            run.structure = int(r, i)?;
        }
        visit(&run);
    }
    Ok(())
}

/// Whether the runs' only needed values are their named structures: then the changes of
/// structure (`structure_changes`, about one row per hundred runs) and each game's length
/// give every run's plies and structure code without reading `runs` (see [`scan_changes`]).
/// `PAWNDEX_PLAN=scan` reads the runs anyway (for tests and measurements).
fn from_changes(plan: &Plan) -> bool {
    plan.structure_columns.is_empty()
        && plan.side_filters.iter().all(Vec::is_empty)
        && plan.position_filters.is_empty()
        && !plan.run_columns.is_empty()
        && plan
            .run_columns
            .iter()
            .all(|c| matches!(c, Column::Structure | Column::StructureReversed))
        && crate::store::forced_plan() != Some(crate::store::ForcedPlan::Scan)
}

/// Streams, for games `first..=last` in game order, one row per stretch of plies with the
/// same named structure (a game without changes is one stretch of code 0): the runs of
/// [`scan_positions`] merged where only the pawn sets differ, which nothing counted here sees.
fn scan_changes(
    conn: &Connection,
    games: &Games,
    (first, last): (i64, i64),
    mut visit: impl FnMut(&RunRow),
) -> Result<()> {
    let mut st = conn.prepare(sql::STRUCTURE_CHANGES_SCAN)?;
    let mut rows = st.query([first, last])?;
    let mut next = || -> Result<Option<(i64, u32, i64)>> {
        Ok(match rows.next()? {
            Some(r) => Some((int(r, 0)?, small(int(r, 1)?), int(r, 2)?)),
            None => None,
        })
    };
    let mut change = next()?;
    let mut run = RunRow {
        game_id: 0,
        white_set: 0,
        black_set: 0,
        first_ply: 0,
        last_ply: 0,
        missing: 0,
        bishop_pairs: 0,
        structure: 0,
    };
    for id in first..=last {
        // Changes of games outside the range or unknown (a damaged row) are passed over.
        while change.is_some_and(|(g, _, _)| g < id) {
            change = next()?;
        }
        let game = games.get(id).copied();
        run.game_id = id;
        run.structure = 0;
        run.first_ply = 0;
        while let Some((g, ply, code)) = change
            && g == id
        {
            if let Some(info) = game
                && ply > run.first_ply
            {
                run.last_ply = (ply - 1).min(info.last_ply);
                if run.first_ply <= run.last_ply {
                    visit(&run);
                }
            }
            run.structure = code;
            run.first_ply = ply;
            change = next()?;
        }
        if let Some(info) = game
            && run.first_ply <= info.last_ply
        {
            run.last_ply = info.last_ply;
            visit(&run);
        }
    }
    Ok(())
}

/// Structure key, game key, run key (numbered per slice).
type Key = (u64, u32, u32);
/// Structure key, game key, run values: the same in every slice.
type FullKey = (u64, u32, Vec<i64>);

#[derive(Clone, Default)]
struct Acc {
    totals: Totals,
    last_game: Option<i64>,
}

/// Groups the runs of one slice of the games.
struct Aggregator<'a> {
    plan: &'a Plan,
    structures: &'a StructureKeys,
    games: &'a Games,
    index: FxMap<Key, u32>,
    groups: Vec<(Key, Acc)>,
    run_keys: Interner<i64>,
    values: Vec<i64>,
    last: Option<(Key, u32)>,
}

impl<'a> Aggregator<'a> {
    fn new(plan: &'a Plan, structures: &'a StructureKeys, games: &'a Games) -> Self {
        Aggregator {
            plan,
            structures,
            games,
            index: FxMap::default(),
            groups: Vec::new(),
            run_keys: Interner::new(),
            values: Vec::with_capacity(plan.run_columns.len()),
            last: None,
        }
    }

    fn add_run(&mut self, run: &RunRow) {
        let Some(game) = self.games.get(run.game_id) else {
            return;
        };
        let game = *game;
        let Some(s) = self.structures.key(run.white_set, run.black_set) else {
            return;
        };
        let lo = run.first_ply.max(self.plan.plies.first);
        let hi = run.last_ply.min(self.plan.plies.last);
        if lo > hi {
            return;
        }
        if self.plan.run_columns.is_empty() {
            self.add((s, game.key, 0), u64::from(hi - lo + 1), run.game_id, &game);
            return;
        }
        let pieceset = (4_294_967_295 - run.missing) as u32;
        let masks = &self.games.masks[game.masks as usize];
        let cuts = self.plan.cuts;
        let endgame = cuts.opening && masks.is_endgame(pieceset);
        let mut a = lo;
        while a <= hi {
            let mut b = hi;
            if cuts.every_ply {
                b = a;
            }
            if cuts.buckets {
                b = b.min(a / 10 * 10 + 9);
            }
            if cuts.opening && !endgame && a <= OPENING_LAST_PLY {
                b = b.min(OPENING_LAST_PLY);
            }
            self.values.clear();
            for c in &self.plan.run_columns {
                self.values.push(match c {
                    Column::BishopPair(columns::Side::White) => run.bishop_pairs & 1,
                    Column::BishopPair(columns::Side::Black) => run.bishop_pairs >> 1,
                    Column::Pieceset => i64::from(pieceset),
                    Column::Ply => i64::from(a),
                    Column::PlyBucket => columns::ply_bucket(a),
                    Column::Phase => Phase::of(a, pieceset, masks) as i64,
                    Column::Structure => run.structure,
                    Column::StructureReversed => run.structure & 1,
                    _ => unreachable!("not a run column: {c:?}"),
                });
            }
            let r = self.run_keys.id(&self.values);
            self.add((s, game.key, r), u64::from(b - a + 1), run.game_id, &game);
            a = b + 1;
        }
    }

    #[inline]
    fn add(&mut self, key: Key, weight: u64, game_id: i64, game: &GameInfo) {
        let index = match self.last {
            Some((k, i)) if k == key => i,
            _ => {
                let next = self.groups.len() as u32;
                let i = *self.index.entry(key).or_insert(next);
                if i == next {
                    self.groups.push((key, Acc::default()));
                }
                self.last = Some((key, i));
                i
            }
        };
        let acc = &mut self.groups[index as usize].1;
        let t = &mut acc.totals;
        t.positions += weight;
        let first_time = acc.last_game != Some(game_id);
        if first_time {
            acc.last_game = Some(game_id);
            t.games += 1;
        }
        let units = match self.plan.per {
            Per::Position => weight,
            Per::Game if first_time => 1,
            Per::Game => return,
        };
        match game.outcome {
            Outcome::WhiteWins => t.white_wins += units,
            Outcome::Draw => t.draws += units,
            Outcome::BlackWins => t.black_wins += units,
            Outcome::Unknown => {}
        }
        if let Some(e) = game.white_elo {
            t.white_elo_sum += i128::from(e) * i128::from(units);
            t.white_elo_units += units;
        }
        if let Some(e) = game.black_elo {
            t.black_elo_sum += i128::from(e) * i128::from(units);
            t.black_elo_units += units;
        }
    }

    /// The groups with their run values spelled out (run keys are numbered per slice).
    fn finish(self) -> Vec<(FullKey, Totals)> {
        let tuples = self.run_keys.tuples;
        self.groups
            .into_iter()
            .map(|((s, g, r), acc)| {
                let run = tuples.get(r as usize).cloned().unwrap_or_default();
                ((s, g, run), acc.totals)
            })
            .collect()
    }
}

impl Totals {
    fn merge(&mut self, o: &Totals) {
        self.positions += o.positions;
        self.games += o.games;
        self.white_wins += o.white_wins;
        self.draws += o.draws;
        self.black_wins += o.black_wins;
        self.white_elo_sum += o.white_elo_sum;
        self.white_elo_units += o.white_elo_units;
        self.black_elo_sum += o.black_elo_sum;
        self.black_elo_units += o.black_elo_units;
    }
}

/// Counts units per structure key (first pass of `--top` over whole structures).
struct StructureCounter {
    per: Per,
    units: HashMap<u64, (u64, i64)>,
}

impl StructureCounter {
    fn new(per: Per) -> Self {
        StructureCounter {
            per,
            units: HashMap::new(),
        }
    }

    fn add_run(&mut self, plan: &Plan, keys: &StructureKeys, games: &Games, run: &RunRow) {
        if games.get(run.game_id).is_none() {
            return;
        }
        let Some(key) = keys.key(run.white_set, run.black_set) else {
            return;
        };
        let lo = run.first_ply.max(plan.plies.first);
        let hi = run.last_ply.min(plan.plies.last);
        if lo > hi {
            return;
        }
        let (units, last_game) = self.units.entry(key).or_insert((0, i64::MIN));
        match self.per {
            Per::Position => *units += u64::from(hi - lo + 1),
            Per::Game => {
                if *last_game != run.game_id {
                    *last_game = run.game_id;
                    *units += 1;
                }
            }
        }
    }

    /// Adds another slice's counts (slices hold different games).
    fn merge(mut self, o: StructureCounter) -> StructureCounter {
        for (k, (u, _)) in o.units {
            self.units.entry(k).or_insert((0, i64::MIN)).0 += u;
        }
        self
    }

    /// Keys that can be among the `n` with the most units (ties included).
    fn candidates(&self, n: usize) -> std::collections::HashSet<u64> {
        let mut counts: Vec<u64> = self
            .units
            .values()
            .map(|&(u, _)| u)
            .filter(|&u| u > 0)
            .collect();
        if n == 0 || counts.is_empty() {
            return std::collections::HashSet::new();
        }
        let threshold = if counts.len() <= n {
            1
        } else {
            let k = counts.len() - n;
            *counts.select_nth_unstable(k).1
        };
        self.units
            .iter()
            .filter(|&(_, &(u, _))| u >= threshold && u > 0)
            .map(|(&k, _)| k)
            .collect()
    }
}

/// Splits the ids `first..=last` into `n` slices for parallel scans.
fn id_slices(first: i64, last: i64, n: usize) -> Vec<(i64, i64)> {
    if last < first {
        return vec![(first, last)];
    }
    let n = n.max(1) as i64;
    let len = last - first + 1;
    (0..n)
        .map(|i| (first + len * i / n, first + len * (i + 1) / n - 1))
        .filter(|(a, b)| a <= b)
        .collect()
}

/// Scans the slices in parallel, each on its own connection, and collects what `work` made of
/// each slice.
fn scan_slices<T: Send>(
    connect: &(dyn Fn() -> Result<Connection> + Sync),
    slices: &[(i64, i64)],
    work: impl Fn(&Connection, (i64, i64)) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = slices
            .iter()
            .map(|&slice| {
                let work = &work;
                scope.spawn(move || -> Result<T> { work(&connect()?, slice) })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a statistics thread panicked"))
            .collect()
    })
}

/// The command's snapshot of ids: the first and last game, and the largest pawn set id. The
/// tables indexed by these ids are sized by them: an error naming `pawndex check` when the ids
/// run far past the rows (see [`crate::store::ids`]).
fn snapshot_ids(conn: &Connection) -> Result<((i64, i64), i64)> {
    let tx = conn.unchecked_transaction()?;
    let range: (i64, i64) = tx.query_row(sql::GAME_ID_RANGE, [], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let max_set: i64 = tx.query_row(sql::MAX_SET_ID, [], |r| r.get(0))?;
    let (games, sets): (i64, i64) =
        tx.query_row(sql::ROW_COUNTS, [], |r| Ok((r.get(0)?, r.get(1)?)))?;
    tx.finish()?;
    crate::store::ids::table_size("game", range.0, range.1, games)?;
    crate::store::ids::table_size("pawn set", 1, max_set, sets)?;
    Ok((range, max_set))
}

/// Groups the runs of every slice of games in parallel, merges the slices' groups and turns
/// each key into the cells of the requested columns.
fn group_runs(
    plan: &Plan,
    structures: &StructureKeys,
    games: &Games,
    parts: &[(i64, i64)],
    connect: &(dyn Fn() -> Result<Connection> + Sync),
) -> Result<Vec<Group>> {
    let changes = from_changes(plan);
    let per_slice = scan_slices(connect, parts, |c, slice| {
        let mut agg = Aggregator::new(plan, structures, games);
        if changes {
            scan_changes(c, games, slice, |run| agg.add_run(run))?;
        } else {
            scan_positions(c, plan, slice, |run| agg.add_run(run))?;
        }
        Ok(agg.finish())
    })?;
    let mut merged: HashMap<FullKey, Totals> = HashMap::new();
    for groups in per_slice {
        for (key, totals) in groups {
            merged.entry(key).or_default().merge(&totals);
        }
    }
    Ok(merged
        .into_iter()
        .map(|((s, g, r), totals)| {
            let values = structures.values(plan, s);
            let keys = plan
                .parts
                .iter()
                .map(|part| match *part {
                    Part::Structure(i) => values[i].clone(),
                    Part::Game(i) => games.tuples[g as usize][i].clone(),
                    Part::Run(i) => plan.run_cell(i, r[i]),
                })
                .collect();
            Group { keys, totals }
        })
        .collect())
}

/// Runs a statistics request. `connect` opens another read-only connection to the same
/// database (the scans run in `threads` parallel slices of the games).
pub fn run(
    conn: &Connection,
    connect: &(dyn Fn() -> Result<Connection> + Sync),
    threads: usize,
    q: &Query,
) -> Result<Vec<Group>> {
    if let Some(groups) = from_set_totals(conn, q)? {
        return Ok(finish_groups(groups, q));
    }
    let plan = Plan::new(conn, q)?;
    // Every connection that runs a filter using `phase` needs its own temporary mask table.
    let connect_for = || -> Result<Connection> {
        let c = connect()?;
        if plan.joins.masks {
            fill_piece_masks(&c)?;
        }
        Ok(c)
    };
    // The command's snapshot: the games and pawn sets stored now. Other connections read only
    // ids up to these (a concurrent `pawndex index` only appends, and a game's runs only name
    // sets stored with or before it).
    let (game_range, max_set) = snapshot_ids(conn)?;
    let t0 = std::time::Instant::now();
    let whole_structures = plan.structure_unique
        && plan.game_columns.is_empty()
        && plan.run_columns.is_empty()
        && q.top.is_some();
    // `--top` over whole structures: the pawn sets to group first (see below), known before
    // the pawn sets are read, so that only those get a key.
    let top_first = match (whole_structures, q.top) {
        (true, Some(n)) => top_sets(conn, &plan, n, max_set)?,
        _ => None,
    };
    timing("top sets", t0);
    let (structures, games) = std::thread::scope(|scope| {
        let games = scope.spawn(|| Games::load(&connect()?, &plan, game_range));
        let only = top_first.as_ref().map(|(_, sets)| sets);
        let structures = StructureKeys::load(connect, &plan, threads, max_set, only);
        (structures, games.join().expect("the game scan panicked"))
    });
    let (mut structures, games) = (structures?, games?);
    timing("pawn sets and games loaded", t0);
    let parts = id_slices(games.first_id, games.last_id, threads);

    let aggregate = |structures: &StructureKeys| -> Result<Vec<Group>> {
        group_runs(&plan, structures, &games, &parts, &connect_for)
    };

    if let (true, Some(n)) = (whole_structures, q.top) {
        // Ranking millions of structures. A structure's units are at most those of each of
        // its two pawn sets (`set_totals`): first only the structures whose sets both have at
        // least `floor` units are grouped; when the n-th of them has at least `floor` units,
        // no other structure can reach it and the ranking is exact.
        if let Some((floor, sets)) = top_first {
            if let StructureKeys::Sides { keep_sets, .. } = &mut structures {
                *keep_sets = Some(Box::new(sets));
            }
            let out = aggregate(&structures)?;
            timing("runs of the top sets grouped", t0);
            let mut units: Vec<u64> = out.iter().map(|g| g.totals.units(q.per)).collect();
            units.sort_unstable_by(|a, b| b.cmp(a));
            if n > 0 && units.get(n - 1).is_some_and(|&u| u >= floor) {
                return Ok(finish_groups(out, q));
            }
            // Not exact: every pawn set's key is needed.
            timing("top sets not exact, counting every structure", t0);
            structures = StructureKeys::load(connect, &plan, threads, max_set, None)?;
        }
        // Else count units per structure first, then group only the structures that can
        // make the top.
        let counters = scan_slices(&connect_for, &parts, |c, slice| {
            let mut counter = StructureCounter::new(plan.per);
            scan_positions(c, &plan, slice, |run| {
                counter.add_run(&plan, &structures, &games, run)
            })?;
            Ok(counter)
        })?;
        let counter = counters
            .into_iter()
            .reduce(StructureCounter::merge)
            .unwrap_or_else(|| StructureCounter::new(plan.per));
        if let StructureKeys::Sides { keep, .. } = &mut structures {
            *keep = Some(counter.candidates(n));
        }
    }
    let out = aggregate(&structures)?;
    Ok(finish_groups(out, q))
}

/// With `PAWNDEX_TIMINGS` set: the time since `start` at a step, on stderr.
fn timing(step: &str, start: std::time::Instant) {
    if std::env::var_os("PAWNDEX_TIMINGS").is_some() {
        eprintln!("timings: {step}: {:.2} s", start.elapsed().as_secs_f64());
    }
}

/// Whether bit `id` is set.
#[inline]
fn in_bits(bits: &[u64], id: i64) -> bool {
    usize::try_from(id).is_ok_and(|i| bits.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0))
}

/// Pawn sets per side that `--top n` over whole structures needs to group first: those with
/// at least `floor` units in `set_totals`, `floor` chosen so that about 512 sets of each side
/// qualify (the unmerged tail added). `None` when more than 50,000 games are outside the
/// aggregates (an unfinished database), or with `PAWNDEX_PLAN=scan`.
fn top_sets(
    conn: &Connection,
    plan: &Plan,
    n: usize,
    max_set: i64,
) -> Result<Option<(u64, [Vec<u64>; 2])>> {
    const SETS_PER_SIDE: usize = 512;
    // PAWNDEX_PLAN=scan: the counting pass instead (for tests and measurements).
    let lag = crate::store::lag(conn)?;
    if crate::store::forced_plan() == Some(crate::store::ForcedPlan::Scan)
        || lag.pending() > crate::store::TAIL_MAX_GAMES
        || n == 0
        || n > SETS_PER_SIDE / 4
    {
        return Ok(None);
    }
    // Ids come from the file: a wild one sizes nothing here (the key load refuses it).
    let Some(size) = usize::try_from(max_set)
        .ok()
        .filter(|&m| m <= (u32::MAX >> 2) as usize)
    else {
        return Ok(None);
    };
    // Units per set id: the stored ones (`set_totals`) plus the unmerged tail's; then each
    // set's side. Two plain scans (a join would look up 850k rows one by one).
    let per_game = plan.per == Per::Game;
    let mut units_of = vec![0u64; size + 1];
    let mut add = |id: i64, u: i64| {
        if let (Ok(id), Ok(u)) = (usize::try_from(id), u64::try_from(u))
            && let Some(slot) = units_of.get_mut(id)
        {
            *slot = slot.saturating_add(u);
        }
    };
    if lag.pending() > 0 {
        for a in crate::store::tail_sets(conn, lag.through)? {
            add(i64::from(a.set), a.totals[usize::from(per_game)]);
        }
    }
    let mut st = conn.prepare(sql::SET_TOTAL_UNITS)?;
    let mut rows = st.raw_query();
    while let Some(r) = rows.next()? {
        add(r.get(0)?, r.get(if per_game { 2 } else { 1 })?);
    }
    drop(rows);
    let mut units: [Vec<(u64, usize)>; 2] = [Vec::new(), Vec::new()];
    let mut st = conn.prepare(sql::SET_SIDES)?;
    let mut rows = st.raw_query();
    while let Some(r) = rows.next()? {
        let (id, side): (i64, i64) = (r.get(0)?, r.get(1)?);
        if let (Ok(id), Ok(side)) = (usize::try_from(id), usize::try_from(side))
            && let Some(&u) = units_of.get(id)
            && side < 2
            && u > 0
        {
            units[side].push((u, id));
        }
    }
    let mut floor = 1u64;
    for side in &mut units {
        if side.len() > SETS_PER_SIDE {
            side.select_nth_unstable_by(SETS_PER_SIDE - 1, |a, b| b.0.cmp(&a.0));
            floor = floor.max(side[SETS_PER_SIDE - 1].0);
        }
    }
    let mut bits = [vec![0u64; size / 64 + 1], vec![0u64; size / 64 + 1]];
    for (side, list) in units.iter().enumerate() {
        for &(u, id) in list {
            if u >= floor {
                bits[side][id / 64] |= 1 << (id % 64);
            }
        }
    }
    Ok(Some((floor, bits)))
}

/// Orders the groups by key, or keeps the `--top` ones.
fn finish_groups(mut out: Vec<Group>, q: &Query) -> Vec<Group> {
    match q.top {
        Some(n) => {
            out.sort_by(|a, b| {
                b.totals
                    .units(q.per)
                    .cmp(&a.totals.units(q.per))
                    .then_with(|| a.keys.cmp(&b.keys))
            });
            out.truncate(n);
        }
        None => out.sort_by(|a, b| a.keys.cmp(&b.keys)),
    }
    out
}

/// The groups of a per-position count by columns of one side's pawns only, with no filter, ply
/// range or rating floor, from the per-set aggregates (`set_totals`) and the per-set game lists
/// (`set_games`) instead of every run. `None` when that does not apply (or the database is
/// unfinished, when the aggregates do not cover every game).
fn from_set_totals(conn: &Connection, q: &Query) -> Result<Option<Vec<Group>>> {
    if q.per != Per::Position
        || !q.filters.is_empty()
        || q.plies != PlyRange::ALL
        || q.min_elo.is_some()
        || q.by.is_empty()
    {
        return Ok(None);
    }
    let Some(side) = q.by[0].side() else {
        return Ok(None);
    };
    if q.by
        .iter()
        .any(|c| c.level() != Level::Structure || c.side() != Some(side) || *c == Column::PawnFen)
    {
        return Ok(None);
    }
    let tx = conn.unchecked_transaction()?;
    let lag = crate::store::lag(&tx)?;
    // The games above `derived.through` (the unmerged tail) are added set by set; a long
    // unfinished stretch is left to the scan.
    if lag.pending() > crate::store::TAIL_MAX_GAMES {
        return Ok(None);
    }
    let mut tail: HashMap<i64, crate::store::SetAggregate> = HashMap::new();
    if lag.pending() > 0 {
        for a in crate::store::tail_sets(&tx, lag.through)? {
            tail.insert(i64::from(a.set), a);
        }
    }
    // Each set's group key, from its raw columns.
    let mut raw_names: Vec<String> = Vec::new();
    let mut index: Vec<Vec<usize>> = Vec::new();
    for c in &q.by {
        let mut ix = Vec::new();
        for name in c.structure_sources() {
            let i = match raw_names.iter().position(|n| *n == name) {
                Some(i) => i,
                None => {
                    raw_names.push(name);
                    raw_names.len() - 1
                }
            };
            ix.push(i);
        }
        index.push(ix);
    }
    let mut st = tx.prepare(&sql::set_totals_scan(side, &raw_names))?;
    let mut rows = st.raw_query();
    let mut groups: HashMap<Vec<i64>, (Totals, Vec<i64>)> = HashMap::new();
    let mut raw = vec![0i64; raw_names.len()];
    let mut sources = Vec::with_capacity(2);
    while let Some(r) = rows.next()? {
        let set: i64 = r.get(0)?;
        for (i, v) in raw.iter_mut().enumerate() {
            *v = r.get(1 + i)?;
        }
        let key: Vec<i64> =
            q.by.iter()
                .zip(&index)
                .map(|(c, ix)| {
                    sources.clear();
                    sources.extend(ix.iter().map(|&i| raw[i]));
                    c.structure_int(&sources)
                })
                .collect();
        let n = 1 + raw.len();
        let extra = tail.get(&set).map(|a| &a.totals);
        // The stored totals (none for a set only the tail reaches) plus the tail's.
        let v = |i: usize| -> rusqlite::Result<i64> {
            let stored: Option<i64> = r.get(n + i)?;
            Ok(stored.unwrap_or(0) + extra.map_or(0, |t| t[i]))
        };
        if v(0)? == 0 {
            continue;
        }
        let (t, sets) = groups.entry(key).or_default();
        let add = |x: i64| u64::try_from(x).unwrap_or(0);
        t.positions += add(v(0)?);
        t.games += add(v(1)?);
        t.white_wins += add(v(2)?);
        t.draws += add(v(3)?);
        t.black_wins += add(v(4)?);
        t.white_elo_sum += i128::from(v(5)?);
        t.white_elo_units += add(v(6)?);
        t.black_elo_sum += i128::from(v(7)?);
        t.black_elo_units += add(v(8)?);
        sets.push(set);
    }
    drop(rows);
    // A group of several sets: its games are the union of their lists (a game reaching two of
    // them counts once). Only for few such groups: each needs a bit set of all games (sized by
    // the largest game id once it is checked against the games).
    let shared = groups.values().filter(|(_, sets)| sets.len() > 1).count();
    if shared > 16 {
        return Ok(None);
    }
    if shared > 0 {
        let rows: i64 = tx.query_row("SELECT count(*) FROM games", [], |r| r.get(0))?;
        let ids = crate::store::ids::table_size("game", 1, lag.last_game, rows)?;
        let words = ids / 64 + 1;
        let mut list = tx.prepare(sql::SET_GAMES_OF)?;
        for (t, sets) in groups.values_mut().filter(|(_, sets)| sets.len() > 1) {
            let mut seen = vec![0u64; words];
            let mut games = 0u64;
            for &set in sets.iter() {
                let blob: Option<Vec<u8>> =
                    list.query_row([set], |r| r.get(0))
                        .map(Some)
                        .or_else(|e| match e {
                            rusqlite::Error::QueryReturnedNoRows => Ok(None),
                            e => Err(e),
                        })?;
                let tail_games = tail.get(&set).map_or(&[][..], |a| &a.games[..]);
                let stored = crate::store::decode_games(blob.as_deref().unwrap_or_default());
                for g in stored
                    .into_iter()
                    .chain(tail_games.iter().map(|&g| i64::from(g)))
                {
                    let Some(w) = usize::try_from(g / 64).ok().and_then(|i| seen.get_mut(i)) else {
                        continue;
                    };
                    let bit = 1u64 << (g % 64);
                    if *w & bit == 0 {
                        *w |= bit;
                        games += 1;
                    }
                }
            }
            t.games = games;
        }
    }
    Ok(Some(
        groups
            .into_iter()
            .filter(|(_, (t, _))| t.positions > 0)
            .map(|(key, (totals, _))| Group {
                keys: key.into_iter().map(Cell::Int).collect(),
                totals,
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_slices_tile_the_range_without_overlap() {
        for (first, last) in [(1, 1), (1, 10), (5, 1_000_003), (0, 2), (7, 7)] {
            for n in [1, 2, 3, 8, 64] {
                let slices = id_slices(first, last, n);
                assert!(
                    !slices.is_empty() && slices.len() <= n,
                    "{first}..{last} / {n}"
                );
                assert_eq!(slices[0].0, first);
                assert_eq!(slices.last().unwrap().1, last);
                for w in slices.windows(2) {
                    assert_eq!(w[0].1 + 1, w[1].0, "{first}..{last} / {n}: {slices:?}");
                }
                assert!(slices.iter().all(|(a, b)| a <= b));
            }
        }
        // An empty range stays one empty slice (the scan then reads nothing).
        assert_eq!(id_slices(5, 4, 3), vec![(5, 4)]);
    }

    #[test]
    fn bit_lookups_never_panic_on_damaged_ids() {
        let bits = [0b1010u64, 1];
        assert!(in_bits(&bits, 1) && in_bits(&bits, 3) && in_bits(&bits, 64));
        assert!(!in_bits(&bits, 0) && !in_bits(&bits, 2) && !in_bits(&bits, 65));
        for id in [-1, 128, i64::MAX, i64::MIN] {
            assert!(!in_bits(&bits, id), "{id}");
        }
        assert_eq!(small(-5), 0);
        assert_eq!(small(7), 7);
        assert_eq!(small(i64::MAX), u32::MAX);
    }

    #[test]
    fn where_errors_give_sqlites_words_without_the_sql() {
        let conn = Connection::open_in_memory().unwrap();
        let e = conn
            .prepare("SELECT 1 FROM (SELECT 2 AS a) WHERE (nosuch = 1)")
            .unwrap_err();
        let msg = sqlite_message(&e);
        assert_eq!(msg, "no such column: nosuch");
        let err = where_error("nosuch = 1", msg).to_string();
        assert!(err.starts_with("--where \"nosuch = 1\": no such column: nosuch\n"));
        assert!(err.contains("names it may use: ") && err.contains("white_islands"));
    }
}
