//! The four tables of a dataset as Arrow schemas, and column buffers that fill one record
//! batch at a time (see `docs/dataset.md` for what each column means).

use std::sync::{Arc, OnceLock};

use anyhow::Result;
use arrow_array::builder::{BinaryBuilder, StringBuilder};
use arrow_array::{ArrayRef, BooleanArray, Int8Array, Int32Array, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::model::columns::{self, Column};
use crate::model::features::{Kind, SIDE_FEATURE_COUNT, SIDE_FEATURES, SideFeatures};
use crate::model::game::Header;

/// The rows of a column vector, leaving it empty with room for as many again (the next batch
/// then grows no vector from nothing).
fn take_vec<T>(v: &mut Vec<T>) -> Vec<T> {
    let cap = v.len();
    std::mem::replace(v, Vec::with_capacity(cap))
}

/// The columns of `games`, with their Arrow types and whether they can be NULL.
const GAMES: &[(&str, DataType, bool)] = &[
    ("id", DataType::Int64, false),
    ("event", DataType::Utf8, true),
    ("site", DataType::Utf8, true),
    ("date", DataType::Utf8, true),
    ("round", DataType::Utf8, true),
    ("white", DataType::Utf8, true),
    ("black", DataType::Utf8, true),
    ("result", DataType::Utf8, true),
    ("white_elo", DataType::Int64, true),
    ("black_elo", DataType::Int64, true),
    ("eco", DataType::Utf8, true),
    ("plies", DataType::Int32, false),
    ("source", DataType::Utf8, false),
    ("offset", DataType::Int64, false),
    ("fen", DataType::Utf8, true),
    ("chess960", DataType::Boolean, false),
    ("moves", DataType::Binary, false),
    ("hash", DataType::Int64, false),
];

/// The columns of `runs`: the `ply_features` columns (see [`columns::ply_features`]), with
/// `ply` as two bounds.
fn runs_columns() -> &'static [(String, DataType, bool)] {
    static RUNS: OnceLock<Vec<(String, DataType, bool)>> = OnceLock::new();
    RUNS.get_or_init(|| {
        let mut out = vec![
            ("game_id".to_string(), DataType::Int64, false),
            ("first_ply".to_string(), DataType::Int32, false),
            ("last_ply".to_string(), DataType::Int32, false),
        ];
        for c in columns::ply_features().into_iter().skip(2) {
            let (ty, null) = match c {
                Column::Feature(f, _) if f.kind() == Kind::Squares => (DataType::Int64, false),
                Column::Feature(..) | Column::BishopPair(_) => (DataType::Int8, false),
                Column::Structure => (DataType::Utf8, true),
                Column::StructureReversed => (DataType::Boolean, false),
                _ => (DataType::Int64, false),
            };
            out.push((c.name(), ty, null));
        }
        out
    })
}

/// The columns of `structure_changes`: the SQLite view `structure_transitions`.
const STRUCTURE_CHANGES: &[(&str, DataType, bool)] = &[
    ("game_id", DataType::Int64, false),
    ("ply", DataType::Int32, false),
    ("from_structure", DataType::Utf8, true),
    ("from_reversed", DataType::Boolean, false),
    ("to_structure", DataType::Utf8, true),
    ("to_reversed", DataType::Boolean, false),
    ("move", DataType::Utf8, true),
];

const REJECTS: &[(&str, DataType, bool)] = &[
    ("id", DataType::Int64, false),
    ("source", DataType::Utf8, false),
    ("offset", DataType::Int64, false),
    ("event", DataType::Utf8, true),
    ("white", DataType::Utf8, true),
    ("black", DataType::Utf8, true),
    ("ply", DataType::Int32, true),
    ("reason", DataType::Utf8, false),
];

fn schema(columns: &[(impl AsRef<str>, DataType, bool)]) -> SchemaRef {
    Arc::new(Schema::new(
        columns
            .iter()
            .map(|(name, ty, null)| Field::new(name.as_ref(), ty.clone(), *null))
            .collect::<Vec<_>>(),
    ))
}

/// The schema of a table by name.
#[must_use]
pub fn schema_of(table: &str) -> SchemaRef {
    match table {
        "games" => schema(GAMES),
        "runs" => schema(runs_columns()),
        "structure_changes" => schema(STRUCTURE_CHANGES),
        _ => schema(REJECTS),
    }
}

/// Every column name of the dataset (a partition may not reuse one).
pub fn all_columns() -> impl Iterator<Item = &'static str> {
    GAMES
        .iter()
        .map(|c| c.0)
        .chain(runs_columns().iter().map(|c| c.0.as_str()))
        .chain(REJECTS.iter().chain(STRUCTURE_CHANGES).map(|c| c.0))
}

/// One row of `games`.
pub struct GameRow<'a> {
    pub id: i64,
    pub header: &'a Header,
    pub plies: i32,
    pub source: &'a str,
    pub offset: i64,
    pub fen: Option<&'a str>,
    pub chess960: bool,
    pub moves: &'a [u8],
    pub hash: i64,
}

/// Buffered rows of `games`.
pub struct Games {
    id: Vec<i64>,
    tags: [StringBuilder; 7],
    white_elo: Vec<Option<i64>>,
    black_elo: Vec<Option<i64>>,
    eco: StringBuilder,
    plies: Vec<i32>,
    source: StringBuilder,
    offset: Vec<i64>,
    fen: StringBuilder,
    chess960: Vec<bool>,
    moves: BinaryBuilder,
    hash: Vec<i64>,
}

impl Default for Games {
    fn default() -> Self {
        Games {
            id: Vec::new(),
            tags: std::array::from_fn(|_| StringBuilder::new()),
            white_elo: Vec::new(),
            black_elo: Vec::new(),
            eco: StringBuilder::new(),
            plies: Vec::new(),
            source: StringBuilder::new(),
            offset: Vec::new(),
            fen: StringBuilder::new(),
            chess960: Vec::new(),
            moves: BinaryBuilder::new(),
            hash: Vec::new(),
        }
    }
}

impl Games {
    pub fn push(&mut self, g: &GameRow) {
        self.id.push(g.id);
        let h = g.header;
        for (b, t) in self.tags.iter_mut().zip(h.roster()) {
            b.append_option(t);
        }
        self.white_elo.push(h.white_elo);
        self.black_elo.push(h.black_elo);
        self.eco.append_option(h.eco.as_deref());
        self.plies.push(g.plies);
        self.source.append_value(g.source);
        self.offset.push(g.offset);
        self.fen.append_option(g.fen);
        self.chess960.push(g.chess960);
        self.moves.append_value(g.moves);
        self.hash.push(g.hash);
    }

    pub fn len(&self) -> usize {
        self.id.len()
    }

    /// The buffered rows as a batch; the buffers start again empty.
    pub fn take(&mut self) -> Result<RecordBatch> {
        let mut cols: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(take_vec(&mut self.id)))];
        for b in &mut self.tags {
            cols.push(Arc::new(b.finish()));
        }
        cols.push(Arc::new(Int64Array::from(take_vec(&mut self.white_elo))));
        cols.push(Arc::new(Int64Array::from(take_vec(&mut self.black_elo))));
        cols.push(Arc::new(self.eco.finish()));
        cols.push(Arc::new(Int32Array::from(take_vec(&mut self.plies))));
        cols.push(Arc::new(self.source.finish()));
        cols.push(Arc::new(Int64Array::from(take_vec(&mut self.offset))));
        cols.push(Arc::new(self.fen.finish()));
        cols.push(Arc::new(BooleanArray::from(take_vec(&mut self.chess960))));
        cols.push(Arc::new(self.moves.finish()));
        cols.push(Arc::new(Int64Array::from(take_vec(&mut self.hash))));
        Ok(RecordBatch::try_new(schema(GAMES), cols)?)
    }
}

/// One row of `runs`: a stretch of plies and the position's values over it.
#[derive(Copy, Clone, Debug)]
pub struct RunRow<'a> {
    pub game_id: i64,
    pub first_ply: i32,
    pub last_ply: i32,
    pub white_pawns: u64,
    pub black_pawns: u64,
    pub white: SideFeatures,
    pub black: SideFeatures,
    /// Bit 0: White has the bishop pair; bit 1: Black has it.
    pub bishop_pairs: u8,
    pub pieceset: u32,
    /// The named structure's key (`None`: no name) and whether it is the reversed form.
    pub structure: Option<&'a str>,
    pub structure_reversed: bool,
}

/// The values of one side feature: a count fits an `Int8` (its `max` is at most 127, see
/// [`SIDE_FEATURES`]), a set of squares is an `Int64` with the bitboard's bits.
enum FeatureColumn {
    Count(Vec<i8>),
    Squares(Vec<i64>),
}

impl FeatureColumn {
    fn push(&mut self, v: u64) {
        match self {
            FeatureColumn::Count(col) => col.push(v as i8),
            FeatureColumn::Squares(col) => col.push(v as i64),
        }
    }
}

/// Buffered rows of `runs`, one vector per column.
pub struct Runs {
    game_id: Vec<i64>,
    first_ply: Vec<i32>,
    last_ply: Vec<i32>,
    pawns: [Vec<i64>; 2],
    /// White's and Black's values of each side feature, in list order.
    features: [[FeatureColumn; 2]; SIDE_FEATURE_COUNT],
    bishop_pair: [Vec<i8>; 2],
    pieceset: Vec<i64>,
    structure: StringBuilder,
    structure_reversed: Vec<bool>,
}

impl Default for Runs {
    fn default() -> Self {
        Runs {
            game_id: Vec::new(),
            first_ply: Vec::new(),
            last_ply: Vec::new(),
            pawns: Default::default(),
            features: std::array::from_fn(|i| match SIDE_FEATURES[i].kind {
                Kind::Count { .. } => [
                    FeatureColumn::Count(Vec::new()),
                    FeatureColumn::Count(Vec::new()),
                ],
                Kind::Squares => [
                    FeatureColumn::Squares(Vec::new()),
                    FeatureColumn::Squares(Vec::new()),
                ],
            }),
            bishop_pair: Default::default(),
            pieceset: Vec::new(),
            structure: StringBuilder::new(),
            structure_reversed: Vec::new(),
        }
    }
}

impl Runs {
    pub fn push(&mut self, r: &RunRow) {
        self.game_id.push(r.game_id);
        self.first_ply.push(r.first_ply);
        self.last_ply.push(r.last_ply);
        self.pawns[0].push(r.white_pawns as i64);
        self.pawns[1].push(r.black_pawns as i64);
        for (i, [w, b]) in self.features.iter_mut().enumerate() {
            let get = SIDE_FEATURES[i].get;
            w.push(get(&r.white));
            b.push(get(&r.black));
        }
        self.bishop_pair[0].push((r.bishop_pairs & 1) as i8);
        self.bishop_pair[1].push((r.bishop_pairs >> 1 & 1) as i8);
        self.pieceset.push(i64::from(r.pieceset));
        self.structure.append_option(r.structure);
        self.structure_reversed.push(r.structure_reversed);
    }

    pub fn len(&self) -> usize {
        self.game_id.len()
    }

    /// The buffered rows as a batch; the buffers start again empty.
    pub fn take(&mut self) -> Result<RecordBatch> {
        let i64s = |v: &mut Vec<i64>| -> ArrayRef { Arc::new(Int64Array::from(take_vec(v))) };
        let i32s = |v: &mut Vec<i32>| -> ArrayRef { Arc::new(Int32Array::from(take_vec(v))) };
        let i8s = |v: &mut Vec<i8>| -> ArrayRef { Arc::new(Int8Array::from(take_vec(v))) };
        let mut cols = vec![
            i64s(&mut self.game_id),
            i32s(&mut self.first_ply),
            i32s(&mut self.last_ply),
        ];
        cols.extend(self.pawns.iter_mut().map(i64s));
        for column in self.features.iter_mut().flatten() {
            cols.push(match column {
                FeatureColumn::Count(v) => i8s(v),
                FeatureColumn::Squares(v) => i64s(v),
            });
        }
        cols.extend(self.bishop_pair.iter_mut().map(i8s));
        cols.push(i64s(&mut self.pieceset));
        cols.push(Arc::new(self.structure.finish()));
        cols.push(Arc::new(BooleanArray::from(take_vec(
            &mut self.structure_reversed,
        ))));
        Ok(RecordBatch::try_new(schema(runs_columns()), cols)?)
    }
}

/// One row of `structure_changes`: a ply where a game's named structure changes.
#[derive(Copy, Clone, Debug)]
pub struct ChangeRow<'a> {
    pub game_id: i64,
    pub ply: i32,
    /// The key of the structure before the ply (`None`: no name) and whether it was reversed.
    pub from: Option<&'a str>,
    pub from_reversed: bool,
    /// The key of the structure after the ply and whether it is reversed.
    pub to: Option<&'a str>,
    pub to_reversed: bool,
    /// The move in SAN with its check mark; `None` at ply 0.
    pub san: Option<&'a str>,
}

/// Buffered rows of `structure_changes`.
pub struct Changes {
    game_id: Vec<i64>,
    ply: Vec<i32>,
    from: StringBuilder,
    from_reversed: Vec<bool>,
    to: StringBuilder,
    to_reversed: Vec<bool>,
    san: StringBuilder,
}

impl Default for Changes {
    fn default() -> Self {
        Changes {
            game_id: Vec::new(),
            ply: Vec::new(),
            from: StringBuilder::new(),
            from_reversed: Vec::new(),
            to: StringBuilder::new(),
            to_reversed: Vec::new(),
            san: StringBuilder::new(),
        }
    }
}

impl Changes {
    pub fn push(&mut self, c: &ChangeRow) {
        self.game_id.push(c.game_id);
        self.ply.push(c.ply);
        self.from.append_option(c.from);
        self.from_reversed.push(c.from_reversed);
        self.to.append_option(c.to);
        self.to_reversed.push(c.to_reversed);
        self.san.append_option(c.san);
    }

    pub fn len(&self) -> usize {
        self.game_id.len()
    }

    /// The buffered rows as a batch; the buffers start again empty.
    pub fn take(&mut self) -> Result<RecordBatch> {
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(take_vec(&mut self.game_id))),
            Arc::new(Int32Array::from(take_vec(&mut self.ply))),
            Arc::new(self.from.finish()),
            Arc::new(BooleanArray::from(take_vec(&mut self.from_reversed))),
            Arc::new(self.to.finish()),
            Arc::new(BooleanArray::from(take_vec(&mut self.to_reversed))),
            Arc::new(self.san.finish()),
        ];
        Ok(RecordBatch::try_new(schema(STRUCTURE_CHANGES), cols)?)
    }
}

/// One row of `rejects`.
pub struct RejectRow<'a> {
    pub id: i64,
    pub source: &'a str,
    pub offset: i64,
    pub event: Option<&'a str>,
    pub white: Option<&'a str>,
    pub black: Option<&'a str>,
    pub ply: Option<i32>,
    pub reason: &'a str,
}

/// Buffered rows of `rejects`.
pub struct Rejects {
    id: Vec<i64>,
    source: StringBuilder,
    offset: Vec<i64>,
    names: [StringBuilder; 3],
    ply: Vec<Option<i32>>,
    reason: StringBuilder,
}

impl Default for Rejects {
    fn default() -> Self {
        Rejects {
            id: Vec::new(),
            source: StringBuilder::new(),
            offset: Vec::new(),
            names: std::array::from_fn(|_| StringBuilder::new()),
            ply: Vec::new(),
            reason: StringBuilder::new(),
        }
    }
}

impl Rejects {
    pub fn push(&mut self, r: &RejectRow) {
        self.id.push(r.id);
        self.source.append_value(r.source);
        self.offset.push(r.offset);
        for (b, v) in self.names.iter_mut().zip([r.event, r.white, r.black]) {
            b.append_option(v);
        }
        self.ply.push(r.ply);
        self.reason.append_value(r.reason);
    }

    pub fn len(&self) -> usize {
        self.id.len()
    }

    /// The buffered rows as a batch; the buffers start again empty.
    pub fn take(&mut self) -> Result<RecordBatch> {
        let mut cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(take_vec(&mut self.id))),
            Arc::new(self.source.finish()),
            Arc::new(Int64Array::from(take_vec(&mut self.offset))),
        ];
        for b in &mut self.names {
            cols.push(Arc::new(b.finish()));
        }
        cols.push(Arc::new(Int32Array::from(take_vec(&mut self.ply))));
        cols.push(Arc::new(self.reason.finish()));
        Ok(RecordBatch::try_new(schema(REJECTS), cols)?)
    }
}
