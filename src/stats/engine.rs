//! Grouping and counting: a structure scan and a game scan fill lookup tables, then one scan of
//! `positions` streams the runs in game order and adds each run (or each piece of a run cut at
//! ply-bucket and opening boundaries) to its group. Memory holds the lookup tables (a few bytes
//! per structure and per game) and one record per group, never the positions.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use anyhow::{Context, Result};
use clap::ValueEnum;
use rusqlite::{Connection, named_params};

use super::UsageError;
use super::columns::{self, Cell, Column, Level, OPENING_LAST_PLY, Phase, PieceMasks};
use super::sql::{self, Joins};

/// What each counted unit is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Per {
    /// Every position (game and ply) counts once
    Position,
    /// Every game counts once for each distinct value combination it reaches
    Game,
}

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
    /// White's points per unit with a result: (wins + draws / 2) / (wins + draws + losses).
    pub fn white_score(&self) -> Option<f64> {
        let n = self.white_wins + self.draws + self.black_wins;
        (n > 0).then(|| (self.white_wins as f64 + self.draws as f64 / 2.0) / n as f64)
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

/// A game's result, from `games.result`: only `1-0`, `0-1` and `1/2-1/2` are results.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Outcome {
    Unknown,
    WhiteWins,
    Draw,
    BlackWins,
}

impl Outcome {
    fn parse(result: Option<&str>) -> Outcome {
        match result.map(str::trim) {
            Some("1-0") => Outcome::WhiteWins,
            Some("0-1") => Outcome::BlackWins,
            Some("1/2-1/2") => Outcome::Draw,
            _ => Outcome::Unknown,
        }
    }
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
    /// `structures` columns the structure scan reads, and for each structure column the
    /// indexes of its sources among them.
    structure_raw: Vec<String>,
    structure_raw_index: Vec<Vec<usize>>,
    /// The structure columns identify the structure: the structure id is the key.
    structure_unique: bool,
    game_columns: Vec<Column>,
    run_columns: Vec<Column>,
    structure_filters: Vec<String>,
    game_filters: Vec<String>,
    position_filters: Vec<String>,
    joins: Joins,
    cuts: Cuts,
    /// Per-game piece masks are needed (for `phase`).
    masks: bool,
    scan_columns: sql::ScanColumns,
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
            structure_filters: Vec::new(),
            game_filters: Vec::new(),
            position_filters: Vec::new(),
            joins: Joins::default(),
            cuts: Cuts::default(),
            masks: false,
            scan_columns: sql::ScanColumns::default(),
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
        };
        Ok(plan)
    }

    /// Decides which scan runs a `--where` expression, from the names it uses, and checks it.
    fn place_filter(&mut self, conn: &Connection, filter: &str, any_fen: bool) -> Result<()> {
        let inspected = sql::inspect(filter).map_err(|e| where_error(filter, e))?;
        let mut levels = Vec::new();
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
        let (source, list) = match levels.as_slice() {
            [Level::Structure] => (sql::structure_source(), &mut self.structure_filters),
            [Level::Game] => (sql::game_source(), &mut self.game_filters),
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
        e => e.to_string(),
    }
}

/// Fills the temporary piece-mask table for FEN starts (needed by `phase` inside `--where`).
fn fill_piece_masks(conn: &Connection) -> Result<()> {
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

/// The structure part of each structure's key.
enum StructureKeys {
    /// No structure column and no structure filter.
    All,
    /// The key is the structure id; `keep[id]` when a filter or a candidate set applies.
    Identity { keep: Option<Vec<bool>> },
    /// `key_of[id]` numbers the distinct value tuples (`NONE`: filtered out).
    Interned {
        key_of: KeyTable,
        tuples: Vec<Vec<i64>>,
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
    fn get(&self, id: usize) -> Option<u32> {
        match self {
            KeyTable::U8(t) => t.get(id).filter(|&&k| k != u8::MAX).map(|&k| u32::from(k)),
            KeyTable::U16(t) => t.get(id).filter(|&&k| k != u16::MAX).map(|&k| u32::from(k)),
            KeyTable::U32(t) => t.get(id).filter(|&&k| k != NONE).copied(),
        }
    }
}

impl StructureKeys {
    #[inline]
    fn key(&self, id: i64) -> Option<u32> {
        match self {
            StructureKeys::All => Some(0),
            StructureKeys::Identity { keep: None } => Some(id as u32),
            StructureKeys::Identity { keep: Some(keep) } => keep
                .get(id as usize)
                .copied()
                .unwrap_or(false)
                .then_some(id as u32),
            StructureKeys::Interned { key_of, .. } => key_of.get(id as usize),
        }
    }

    /// Reads the structures in `threads` slices of ids, each on its own connection.
    fn load(
        conn: &Connection,
        connect: &(dyn Fn() -> Result<Connection> + Sync),
        plan: &Plan,
        threads: usize,
    ) -> Result<StructureKeys> {
        let filtered = !plan.structure_filters.is_empty();
        if plan.structure_columns.is_empty() && !filtered {
            return Ok(StructureKeys::All);
        }
        if plan.structure_unique && !filtered {
            return Ok(StructureKeys::Identity { keep: None });
        }
        let max_id: i64 = conn.query_row(sql::MAX_STRUCTURE_ID, [], |r| r.get(0))?;
        let size = usize::try_from(max_id).unwrap_or(0) + 1;
        let parts = id_slices(0, max_id, threads);
        let columns: &[String] = if plan.structure_unique {
            &[]
        } else {
            &plan.structure_raw
        };
        let sql = sql::structure_scan(columns, &plan.structure_filters);
        // Each slice: its ids' keys, numbered by its own interner.
        let slices = scan_slices(connect, &parts, |c, (first, last)| {
            let mut st = c.prepare(&sql)?;
            st.raw_bind_parameter(":first_id", first)?;
            st.raw_bind_parameter(":last_id", last)?;
            let mut rows = st.raw_query();
            let mut keys = vec![NONE; (last - first + 1) as usize];
            let mut interner = Interner::new();
            let mut raw = vec![0i64; columns.len()];
            let mut tuple = Vec::with_capacity(plan.structure_columns.len());
            let mut sources = Vec::with_capacity(2);
            while let Some(r) = rows.next()? {
                let id: i64 = r.get(0)?;
                for (i, v) in raw.iter_mut().enumerate() {
                    *v = r.get(i + 1)?;
                }
                tuple.clear();
                if !plan.structure_unique {
                    for (c, index) in plan.structure_columns.iter().zip(&plan.structure_raw_index) {
                        sources.clear();
                        sources.extend(index.iter().map(|&i| raw[i]));
                        tuple.push(c.structure_int(&sources));
                    }
                }
                keys[(id - first) as usize] = interner.id(&tuple);
            }
            Ok((first, keys, interner.tuples))
        })?;
        if plan.structure_unique {
            let mut keep = vec![false; size];
            for (first, keys, _) in slices {
                for (i, k) in keys.into_iter().enumerate() {
                    keep[first as usize + i] = k != NONE;
                }
            }
            return Ok(StructureKeys::Identity { keep: Some(keep) });
        }
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
        Ok(StructureKeys::Interned {
            key_of: KeyTable::new(key_of, interner.tuples.len()),
            tuples: interner.tuples,
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
}

const NO_GAME: GameInfo = GameInfo {
    key: NONE,
    outcome: Outcome::Unknown,
    white_elo: None,
    black_elo: None,
    masks: 0,
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

    fn load(conn: &Connection, plan: &Plan) -> Result<Games> {
        let (first_id, last_id): (i64, i64) =
            conn.query_row(sql::GAME_ID_RANGE, [], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let size = usize::try_from(last_id - first_id + 1).unwrap_or(0);
        let mut games = Games {
            first_id,
            last_id,
            info: vec![NO_GAME; size],
            tuples: Vec::new(),
            masks: vec![PieceMasks::STANDARD],
        };
        let mut interner = Interner::new();
        let mut st = conn.prepare(&sql::game_scan(&plan.game_filters, plan.min_elo.is_some()))?;
        let mut rows = match plan.min_elo {
            Some(min) => st.query(named_params! {":min_elo": min})?,
            None => st.query([])?,
        };
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
            games.info[(id - first_id) as usize] = GameInfo {
                key: interner.id(&tuple),
                outcome,
                white_elo,
                black_elo,
                masks,
            };
        }
        games.tuples = interner.tuples;
        Ok(games)
    }
}

// ---------------------------------------------------------------------------------------------
// The positions scan.

/// A run of `positions` (or a single ply when the scan expands plies).
struct RunRow {
    game_id: i64,
    structure_id: i64,
    first_ply: u32,
    last_ply: u32,
    missing: i64,
    bishop_pairs: i64,
}

/// Which runs a positions scan reads.
#[derive(Clone, Copy)]
enum Runs<'a> {
    /// The runs of games `first..=last`, in game order.
    Games(i64, i64),
    /// The runs of these structures (a JSON array of ids), structure by structure, each in
    /// game order.
    Structures(&'a str),
}

/// Streams the runs that pass the position filters; a group's runs of one game always come
/// together.
fn scan_positions(
    conn: &Connection,
    plan: &Plan,
    runs: Runs,
    mut visit: impl FnMut(&RunRow),
) -> Result<()> {
    let cols = plan.scan_columns;
    let ply_range = plan.plies != PlyRange::ALL;
    let sql = match runs {
        Runs::Games(..) => sql::positions_scan(cols, ply_range, plan.joins, &plan.position_filters),
        Runs::Structures(_) => {
            sql::positions_of_structures(cols, ply_range, plan.joins, &plan.position_filters)
        }
    };
    let mut st = conn.prepare(&sql)?;
    let bind_games = |st: &mut rusqlite::Statement, first: i64, last: i64| -> Result<()> {
        if st.parameter_index(":first_game")?.is_some() {
            st.raw_bind_parameter(":first_game", first)?;
            st.raw_bind_parameter(":last_game", last)?;
        }
        Ok(())
    };
    match runs {
        Runs::Games(first, last) => bind_games(&mut st, first, last)?,
        Runs::Structures(ids) => {
            bind_games(&mut st, i64::MIN, i64::MAX)?;
            st.raw_bind_parameter(":ids", ids)?;
        }
    }
    if st.parameter_index(":lo")?.is_some() {
        st.raw_bind_parameter(":lo", i64::from(plan.plies.first))?;
        st.raw_bind_parameter(":hi", i64::from(plan.plies.last))?;
    }
    let mut rows = st.raw_query();
    let mut run = RunRow {
        game_id: 0,
        structure_id: 0,
        first_ply: 0,
        last_ply: 0,
        missing: 0,
        bishop_pairs: 0,
    };
    while let Some(r) = rows.next()? {
        run.game_id = r.get(0)?;
        run.structure_id = r.get(1)?;
        let mut i = 2;
        if cols.weight_only {
            let weight: u32 = r.get(2)?;
            run.last_ply = weight - 1;
            i += 1;
        } else {
            run.first_ply = r.get(2)?;
            run.last_ply = r.get(3)?;
            i += 2;
        }
        if cols.missing {
            run.missing = r.get(i)?;
            i += 1;
        }
        if cols.bishop_pairs {
            run.bishop_pairs = r.get(i)?;
        }
        visit(&run);
    }
    Ok(())
}

/// Structure key, game key, run key (numbered per slice).
type Key = (u32, u32, u32);
/// Structure key, game key, run values: the same in every slice.
type FullKey = (u32, u32, Vec<i64>);

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
        let Some(s) = self.structures.key(run.structure_id) else {
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

/// Counts units per structure id (first pass of `--top` over whole structures).
struct StructureCounter {
    per: Per,
    units: Vec<u64>,
    last_game: Vec<i64>,
}

impl StructureCounter {
    fn new(per: Per) -> Self {
        StructureCounter {
            per,
            units: Vec::new(),
            last_game: Vec::new(),
        }
    }

    fn add_run(&mut self, plan: &Plan, keys: &StructureKeys, games: &Games, run: &RunRow) {
        if games.get(run.game_id).is_none() || keys.key(run.structure_id).is_none() {
            return;
        }
        let lo = run.first_ply.max(plan.plies.first);
        let hi = run.last_ply.min(plan.plies.last);
        if lo > hi {
            return;
        }
        let id = run.structure_id as usize;
        if id >= self.units.len() {
            self.units.resize(id + 1, 0);
        }
        match self.per {
            Per::Position => self.units[id] += u64::from(hi - lo + 1),
            Per::Game => {
                if id >= self.last_game.len() {
                    self.last_game.resize(id + 1, i64::MIN);
                }
                if self.last_game[id] != run.game_id {
                    self.last_game[id] = run.game_id;
                    self.units[id] += 1;
                }
            }
        }
    }

    /// Adds another slice's counts (slices hold different games).
    fn merge(mut self, o: StructureCounter) -> StructureCounter {
        if o.units.len() > self.units.len() {
            self.units.resize(o.units.len(), 0);
        }
        for (a, b) in self.units.iter_mut().zip(&o.units) {
            *a += b;
        }
        self
    }

    /// Structures that can be among the `n` with the most units (ties included).
    fn candidates(&self, n: usize) -> Vec<bool> {
        let mut counts: Vec<u64> = self.units.iter().copied().filter(|&u| u > 0).collect();
        let mut keep = vec![false; self.units.len()];
        if n == 0 || counts.is_empty() {
            return keep;
        }
        let threshold = if counts.len() <= n {
            1
        } else {
            let k = counts.len() - n;
            *counts.select_nth_unstable(k).1
        };
        for (id, &u) in self.units.iter().enumerate() {
            keep[id] = u >= threshold && u > 0;
        }
        keep
    }
}

/// Up to this many candidate structures, the second pass of `--top` reads their runs through
/// the `structure_id` index instead of scanning every run again. The environment variable
/// `PAWNDEX_STATS_MAX_INDEXED` overrides it (the tests use it to take the other path).
fn max_indexed_candidates() -> usize {
    std::env::var("PAWNDEX_STATS_MAX_INDEXED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
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

/// Runs a statistics request. `connect` opens another read-only connection to the same
/// database (the scans run in `threads` parallel slices of the games).
pub fn run(
    conn: &Connection,
    connect: &(dyn Fn() -> Result<Connection> + Sync),
    threads: usize,
    q: &Query,
) -> Result<Vec<Group>> {
    let plan = Plan::new(conn, q)?;
    // Every connection that runs a filter using `phase` needs its own temporary mask table.
    let connect_for = || -> Result<Connection> {
        let c = connect()?;
        if plan.joins.masks {
            fill_piece_masks(&c)?;
        }
        Ok(c)
    };
    let (structures, games) = std::thread::scope(|scope| {
        let games = scope.spawn(|| Games::load(&connect()?, &plan));
        let structures = StructureKeys::load(conn, connect, &plan, threads);
        (structures, games.join().expect("the game scan panicked"))
    });
    let (mut structures, games) = (structures?, games?);
    let parts = id_slices(games.first_id, games.last_id, threads);

    let whole_structures = plan.structure_unique
        && plan.game_columns.is_empty()
        && plan.run_columns.is_empty()
        && q.top.is_some();
    // The slices of the second scan: game ranges, or groups of candidate structures.
    let mut candidate_lists: Vec<String> = Vec::new();
    if let (true, Some(n)) = (whole_structures, q.top) {
        // Ranking millions of structures: count units per structure id in a flat table first,
        // then group only the structures that can make the top.
        let counters = scan_slices(&connect_for, &parts, |c, (first, last)| {
            let mut counter = StructureCounter::new(plan.per);
            scan_positions(c, &plan, Runs::Games(first, last), |run| {
                counter.add_run(&plan, &structures, &games, run)
            })?;
            Ok(counter)
        })?;
        let counter = counters
            .into_iter()
            .reduce(StructureCounter::merge)
            .unwrap_or_else(|| StructureCounter::new(plan.per));
        let keep = counter.candidates(n);
        let ids: Vec<usize> = (0..keep.len()).filter(|&i| keep[i]).collect();
        if ids.len() <= max_indexed_candidates() {
            // Few structures: read just their runs through the index, spread over the threads.
            let per_thread = ids.len().div_ceil(threads.max(1)).max(1);
            candidate_lists = ids
                .chunks(per_thread)
                .map(|c| serde_json::to_string(c).expect("ids serialise"))
                .collect();
        }
        structures = StructureKeys::Identity { keep: Some(keep) };
    }

    let aggregate = |c: &Connection, runs: Runs| -> Result<Vec<(FullKey, Totals)>> {
        let mut agg = Aggregator::new(&plan, &structures, &games);
        scan_positions(c, &plan, runs, |run| agg.add_run(run))?;
        Ok(agg.finish())
    };
    let per_slice = if candidate_lists.is_empty() {
        scan_slices(&connect_for, &parts, |c, (first, last)| {
            aggregate(c, Runs::Games(first, last))
        })?
    } else {
        let slots: Vec<(i64, i64)> = (0..candidate_lists.len() as i64).map(|i| (i, i)).collect();
        scan_slices(&connect_for, &slots, |c, (i, _)| {
            aggregate(c, Runs::Structures(&candidate_lists[i as usize]))
        })?
    };
    let mut merged: HashMap<FullKey, Totals> = HashMap::new();
    for groups in per_slice {
        for (key, totals) in groups {
            merged.entry(key).or_default().merge(&totals);
        }
    }

    let structure_values = match &structures {
        StructureKeys::Identity { .. } => identity_values(conn, &plan, &merged)?,
        _ => HashMap::new(),
    };
    let mut out: Vec<Group> = merged
        .into_iter()
        .map(|((s, g, r), totals)| {
            let keys = plan
                .parts
                .iter()
                .map(|part| match *part {
                    Part::Structure(i) => match &structures {
                        StructureKeys::Interned { tuples, .. } => Cell::Int(tuples[s as usize][i]),
                        StructureKeys::Identity { .. } => structure_values[&s][i].clone(),
                        StructureKeys::All => unreachable!("structure column without keys"),
                    },
                    Part::Game(i) => games.tuples[g as usize][i].clone(),
                    Part::Run(i) => Cell::Int(r[i]),
                })
                .collect();
            Group { keys, totals }
        })
        .collect();
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
    Ok(out)
}

/// Structure values of the groups whose key is a structure id.
fn identity_values<V>(
    conn: &Connection,
    plan: &Plan,
    groups: &HashMap<FullKey, V>,
) -> Result<HashMap<u32, Vec<Cell>>> {
    let mut ids: Vec<u32> = groups.keys().map(|(s, _, _)| *s).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut values = HashMap::with_capacity(ids.len());
    let mut raw = vec![0i64; plan.structure_raw.len()];
    let tuple = |raw: &[i64]| -> Vec<Cell> {
        plan.structure_columns
            .iter()
            .zip(&plan.structure_raw_index)
            .map(|(c, index)| {
                let sources: Vec<i64> = index.iter().map(|&i| raw[i]).collect();
                c.structure_value(&sources)
            })
            .collect()
    };
    if ids.len() <= 100_000 {
        let mut st = conn.prepare(&sql::structure_by_id(&plan.structure_raw))?;
        for id in ids {
            st.query_row([id], |r| {
                for (i, v) in raw.iter_mut().enumerate() {
                    *v = r.get(i)?;
                }
                Ok(())
            })?;
            values.insert(id, tuple(&raw));
        }
    } else {
        let mut st = conn.prepare(&sql::structure_scan(&plan.structure_raw, &[]))?;
        let mut rows = st.query(named_params! {":first_id": i64::MIN, ":last_id": i64::MAX})?;
        while let Some(r) = rows.next()? {
            let id: u32 = r.get(0)?;
            if ids.binary_search(&id).is_err() {
                continue;
            }
            for (i, v) in raw.iter_mut().enumerate() {
                *v = r.get(i + 1)?;
            }
            values.insert(id, tuple(&raw));
        }
    }
    Ok(values)
}
