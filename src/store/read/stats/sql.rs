//! Every SQL text `pawndex stats` runs, in one place so that a change of the storage layout
//! behind `ply_features` only touches this file (and the reads of this folder that run them).
//!
//! The statistics never expand the `ply_features` view. They read three tables in order:
//! `pawn_sets` once (structure columns and structure filters, per side), `games` once (results,
//! Elos, game filters) and `runs` once, run by run, weighting each run by its length
//! (`last_ply - first_ply + 1`); when the runs matter only for their named structure,
//! `structure_changes` stands in for `runs` ([`STRUCTURE_CHANGES_SCAN`]). `--where` expressions run inside these scans against
//! *sources* that expose the `ply_features` column names (plus the derived columns and the
//! `games` columns); the SQL definitions of the derived columns below are the twins of the Rust
//! rules in [`crate::model::columns`].

use std::fmt::Write as _;

use crate::model::columns::{Column, OPENING_LAST_PLY, PieceMasks, Side};

/// `games` columns a `--where` expression may use (besides `game_id`, `elo_band`, `year` and
/// `decade`).
pub const GAME_COLUMNS: &[&str] = &[
    "event",
    "site",
    "date",
    "round",
    "white",
    "black",
    "result",
    "white_elo",
    "black_elo",
    "eco",
    "plies",
    "source",
    "fen",
    "chess960",
];

/// Number of set bits of a non-negative 64-bit value (SWAR; pawn masks never reach bit 63).
fn popcount(x: &str) -> String {
    let a = format!("({x} - (({x} >> 1) & 0x5555555555555555))");
    let b = format!("(({a} & 0x3333333333333333) + (({a} >> 2) & 0x3333333333333333))");
    format!("((({b} + ({b} >> 4)) & 0x0F0F0F0F0F0F0F0F) % 255)")
}

/// `elo_band`: mean of the Elos floored to a multiple of 100, NULL when one is missing.
fn elo_band() -> String {
    let sum = "(g.white_elo + g.black_elo)";
    format!(
        "CASE WHEN g.white_elo IS NULL OR g.black_elo IS NULL THEN NULL \
         ELSE ({sum} - ({sum} % 200 + 200) % 200) / 2 END"
    )
}

/// `year`: the first four characters of the date when they are four digits, else NULL (the
/// twin of [`crate::model::columns::year_of`]).
fn year() -> String {
    "CASE WHEN substr(g.date, 1, 4) GLOB '[0-9][0-9][0-9][0-9]' \
     THEN CAST(substr(g.date, 1, 4) AS INTEGER) END"
        .to_string()
}

/// `decade`: the year floored to a multiple of 10 (1990 for the 1990s), NULL when unknown.
fn decade() -> String {
    format!("({} / 10 * 10)", year())
}

/// `phase` at ply `ply`, see [`crate::model::columns::Phase`]. `masks` is `m` when the per-game masks
/// of FEN starts are joined as `m` (from [`PIECE_MASKS_TABLE`]), else `None` for standard
/// starts only.
fn phase(ply: &str, masks: Option<&str>) -> String {
    let std = PieceMasks::STANDARD;
    let mask = |name: &str, standard: u32| match masks {
        Some(m) => format!("coalesce({m}.{name}, {standard})"),
        None => standard.to_string(),
    };
    let pieceset = "(4294967295 - p.missing)";
    // "At most one" is `x & (x - 1) = 0`.
    let side_ok = |q: String, r: String| {
        format!("(({pieceset} & {q}) = 0 OR (({pieceset} & {r}) & (({pieceset} & {r}) - 1)) = 0)")
    };
    let white = side_ok(
        mask("white_queens", std.queens[0]),
        mask("white_pieces", std.minors_and_rooks[0]),
    );
    let black = side_ok(
        mask("black_queens", std.queens[1]),
        mask("black_pieces", std.minors_and_rooks[1]),
    );
    format!(
        "CASE WHEN {white} AND {black} THEN 'endgame' \
         WHEN {ply} <= {OPENING_LAST_PLY} THEN 'opening' ELSE 'middlegame' END"
    )
}

/// Temporary table of the piece masks of games that start from a FEN (rarely any).
/// Lifts `query_only` while pawndex fills its own temporary table (the file stays read-only).
pub const WRITES_ALLOWED: &str = "PRAGMA query_only = OFF";
/// Sets `query_only` again before any user expression runs.
pub const READ_ONLY_AGAIN: &str = "PRAGMA query_only = ON";

pub const PIECE_MASKS_TABLE: &str = "CREATE TEMP TABLE IF NOT EXISTS stats_piece_masks (
    game_id      INTEGER PRIMARY KEY,
    white_queens INTEGER NOT NULL,
    white_pieces INTEGER NOT NULL,
    black_queens INTEGER NOT NULL,
    black_pieces INTEGER NOT NULL
)";
pub const INSERT_PIECE_MASKS: &str =
    "INSERT OR REPLACE INTO temp.stats_piece_masks VALUES (?1, ?2, ?3, ?4, ?5)";

/// The SQL of a column inside the positions source (aliases `p`, `s`, `g`; `ply` is the SQL of
/// the ply, or of the first ply of a piece of a run on which the ply columns are constant), or
/// `None` for `pawn_fen`, which only exists in Rust.
pub fn column_expr(c: Column, ply: &str, masks: Option<&str>) -> Option<String> {
    Some(match c {
        Column::GameId => "p.game_id".into(),
        Column::Ply => ply.into(),
        Column::PlyBucket => format!("({ply} / 10 * 10)"),
        Column::Phase => phase(ply, masks),
        Column::BishopPair(Side::White) => "(p.bishop_pairs & 1)".into(),
        Column::BishopPair(Side::Black) => "(p.bishop_pairs >> 1)".into(),
        Column::Pieceset => "(4294967295 - p.missing)".into(),
        Column::EloBand => elo_band(),
        Column::Year => year(),
        Column::Decade => decade(),
        Column::SquareCount(f, s) => popcount(&format!("{}.{}", alias(s), f.name())),
        Column::PawnFen => return None,
        Column::Structure => {
            "(SELECT sn.key FROM structure_names AS sn WHERE sn.id = p.structure >> 1)".into()
        }
        Column::StructureReversed => "(p.structure & 1)".into(),
        c => {
            let name = c.name();
            let s = c.side().unwrap_or(Side::White);
            let bare = name.split_once('_').map_or(name.as_str(), |(_, b)| b);
            format!("{}.{bare}", alias(s))
        }
    })
}

/// The alias of a side's `pawn_sets` row in the positions source.
fn alias(s: Side) -> &'static str {
    match s {
        Side::White => "w",
        Side::Black => "b",
    }
}

/// `SELECT expr AS name, …` for the given columns.
fn select_list(out: &mut String, columns: impl IntoIterator<Item = (String, String)>) {
    for (expr, name) in columns {
        let _ = write!(out, ",\n       {expr} AS {name}");
    }
}

fn structure_columns() -> impl Iterator<Item = Column> {
    crate::model::columns::all()
        .iter()
        .copied()
        .filter(|c| c.level() == crate::model::columns::Level::Structure && *c != Column::PawnFen)
}

/// What a `--where` expression can see in the pawn-set scan of one side: that side's columns
/// (`white_islands`, …), the set's row aliased as that side's alias.
pub fn side_source(side: Side) -> String {
    let a = alias(side);
    let mut sql = format!("SELECT {a}.id AS id");
    select_list(
        &mut sql,
        structure_columns()
            .filter(|c| c.side() == Some(side))
            .map(|c| (column_expr(c, "", None).unwrap(), c.name())),
    );
    let code = match side {
        Side::White => 0,
        Side::Black => 1,
    };
    let _ = write!(sql, "\nFROM pawn_sets AS {a} WHERE {a}.side = {code}");
    sql
}

/// `, g.event AS event, …, elo_band, year, decade`: the [`GAME_COLUMNS`] and the derived game
/// columns of the games row `g`.
fn select_game_columns(sql: &mut String) {
    select_list(
        sql,
        GAME_COLUMNS
            .iter()
            .map(|name| (format!("g.{name}"), name.to_string())),
    );
    select_list(
        sql,
        [
            (elo_band(), "elo_band".to_string()),
            (year(), "year".to_string()),
            (decade(), "decade".to_string()),
        ],
    );
}

/// What a `--where` expression can see in the game scan.
pub fn game_source() -> String {
    let mut sql = "SELECT g.id AS id, g.id AS game_id".to_string();
    select_game_columns(&mut sql);
    sql.push_str("\nFROM games AS g");
    sql
}

/// How the positions source cuts runs for `--where` expressions on ply columns.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Cut {
    /// Whole runs: no ply column is used.
    #[default]
    Runs,
    /// Pieces of runs on which `ply_bucket` (when `buckets`) and `phase` (when `opening`) are
    /// constant: a run is cut at multiples of 10 and between plies 20 and 21.
    Pieces { buckets: bool, opening: bool },
    /// Single plies (`ply` itself is used).
    Plies,
}

impl Cut {
    /// The finer of two cuts.
    pub fn merge(self, other: Cut) -> Cut {
        match (self, other) {
            (Cut::Plies, _) | (_, Cut::Plies) => Cut::Plies,
            (Cut::Runs, c) | (c, Cut::Runs) => c,
            (
                Cut::Pieces { buckets, opening },
                Cut::Pieces {
                    buckets: b,
                    opening: o,
                },
            ) => Cut::Pieces {
                buckets: buckets || b,
                opening: opening || o,
            },
        }
    }
}

/// The tables the positions scan joins for its `--where` expressions.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Joins {
    pub cut: Cut,
    pub structures: bool,
    pub games: bool,
    /// The temporary piece masks of FEN starts (`phase` when such games exist).
    pub masks: bool,
}

/// The positions source: one row per run, piece of a run or ply (see [`Cut`]), exposing every
/// column a `--where` expression may use. Parameters `:lo`, `:hi` (ply range), `:first_game`,
/// `:last_game` (game id range).
pub fn positions_source(joins: Joins) -> String {
    let (first, last) = row_plies(joins.cut);
    let mut sql = format!(
        "SELECT p.game_id AS game_id, {first} AS first_ply, {last} AS last_ply, \
         p.white_set AS white_set, p.black_set AS black_set, p.missing AS missing, \
         p.bishop_pairs AS bishop_pairs, p.structure AS structure_code"
    );
    let masks = joins.masks.then_some("m");
    let mut columns = vec![
        Column::BishopPair(Side::White),
        Column::BishopPair(Side::Black),
        Column::Pieceset,
        Column::Structure,
        Column::StructureReversed,
    ];
    if joins.cut != Cut::Runs {
        columns.extend([Column::Ply, Column::PlyBucket, Column::Phase]);
    }
    if joins.structures {
        columns.extend(structure_columns());
    }
    select_list(
        &mut sql,
        columns
            .into_iter()
            .map(|c| (column_expr(c, &first, masks).unwrap(), c.name())),
    );
    if joins.games {
        select_game_columns(&mut sql);
    }
    sql.push_str("\nFROM runs AS p");
    positions_joins(&mut sql, joins);
    sql.push_str(
        "\nWHERE p.game_id BETWEEN :first_game AND :last_game \
         AND p.last_ply >= :lo AND p.first_ply <= :hi",
    );
    if matches!(joins.cut, Cut::Pieces { .. }) {
        let _ = write!(sql, " AND {first} <= {last}");
    }
    sql
}

/// The SQL of the first and last ply of a row of the positions source, within the ply range.
fn row_plies(cut: Cut) -> (String, String) {
    match cut {
        Cut::Runs => ("p.first_ply".to_string(), "p.last_ply".to_string()),
        Cut::Plies => ("n.n".to_string(), "n.n".to_string()),
        Cut::Pieces { buckets, opening } => {
            let (mut first, mut last) = (vec!["p.first_ply", ":lo"], vec!["p.last_ply", ":hi"]);
            if buckets {
                first.push("b.n * 10");
                last.push("b.n * 10 + 9");
            }
            if opening {
                first.push("o.lo");
                last.push("o.hi");
            }
            (
                format!("max({})", first.join(", ")),
                format!("min({})", last.join(", ")),
            )
        }
    }
}

/// The joins of the positions source after `FROM runs AS p`.
fn positions_joins(sql: &mut String, joins: Joins) {
    match joins.cut {
        Cut::Runs => {}
        Cut::Plies => sql.push_str(
            "\nJOIN ply_numbers AS n ON n.n BETWEEN max(p.first_ply, :lo) AND min(p.last_ply, :hi)",
        ),
        Cut::Pieces { buckets, opening } => {
            if buckets {
                // b.n numbers the buckets the run overlaps.
                sql.push_str(
                    "\nJOIN ply_numbers AS b \
                     ON b.n BETWEEN max(p.first_ply, :lo) / 10 AND min(p.last_ply, :hi) / 10",
                );
            }
            if opening {
                let _ = write!(
                    sql,
                    "\nJOIN (SELECT 0 AS lo, {OPENING_LAST_PLY} AS hi \
                     UNION ALL SELECT {} AS lo, 2147483647 AS hi) AS o \
                     ON o.lo <= p.last_ply AND o.hi >= p.first_ply",
                    OPENING_LAST_PLY + 1
                );
            }
        }
    }
    if joins.structures {
        sql.push_str(
            "\nJOIN pawn_sets AS w ON w.id = p.white_set\nJOIN pawn_sets AS b ON b.id = p.black_set",
        );
    }
    if joins.games {
        sql.push_str("\nJOIN games AS g ON g.id = p.game_id");
    }
    if joins.masks {
        sql.push_str("\nLEFT JOIN temp.stats_piece_masks AS m ON m.game_id = p.game_id");
    }
}

/// `WHERE (a) AND (b) …`, or nothing.
fn where_clause(filters: &[String]) -> String {
    if filters.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = filters.iter().map(|f| format!("({f})")).collect();
    format!("\nWHERE {}", parts.join("\nAND "))
}

/// Pawn-set scan of one side: `id` then the listed columns (names of that side, such as
/// `white_islands`), for the sets with ids `:first_id..=:last_id` that pass, in id order.
pub fn side_scan(side: Side, columns: &[String], filters: &[String]) -> String {
    let mut cols = "id".to_string();
    for c in columns {
        let _ = write!(cols, ", {c}");
    }
    let mut filters = filters.to_vec();
    filters.push("id BETWEEN :first_id AND :last_id".into());
    format!(
        "SELECT {cols} FROM (\n{}\n){}\nORDER BY id",
        side_source(side),
        where_clause(&filters)
    )
}

/// Per pawn set of one side: `id`, the listed columns (names of that side), then its
/// `set_totals` (positions, games, white_wins, draws, black_wins, white_elo_sum,
/// white_elo_positions, black_elo_sum, black_elo_positions; NULL for a set that only the
/// unmerged tail reaches).
pub fn set_totals_scan(side: Side, columns: &[String]) -> String {
    let mut cols = "s.id".to_string();
    for c in columns {
        let _ = write!(cols, ", s.{c}");
    }
    format!(
        "SELECT {cols}, t.positions, t.games, t.white_wins, t.draws, t.black_wins, \
         t.white_elo_sum, t.white_elo_positions, t.black_elo_sum, t.black_elo_positions\n\
         FROM ({}) AS s LEFT JOIN set_totals AS t ON t.set_id = s.id",
        side_source(side)
    )
}

/// Per pawn set with aggregates: `set_id`, its positions and games (`set_totals`).
pub const SET_TOTAL_UNITS: &str = "SELECT set_id, positions, games FROM set_totals";

/// Per pawn set: `id, side`.
pub const SET_SIDES: &str = "SELECT id, side FROM pawn_sets";

/// The game list of one pawn set (see `pawndex::store::decode_games`).
pub const SET_GAMES_OF: &str = "SELECT games FROM set_games WHERE set_id = ?1";

/// Game scan: `id, result, white_elo, black_elo, fen, chess960, plies` of the games that pass
/// (`:min_elo`, when bound, needs both Elos at least that).
pub fn game_scan(filters: &[String], min_elo: bool) -> String {
    let mut filters = filters.to_vec();
    filters.push("id BETWEEN :first_id AND :last_id".into());
    if min_elo {
        filters.push("white_elo >= :min_elo AND black_elo >= :min_elo".into());
    }
    format!(
        "SELECT id, result, white_elo, black_elo, fen, chess960, plies, date FROM (\n{}\n){}",
        game_source(),
        where_clause(&filters)
    )
}

/// The columns a positions scan returns, in this order: `game_id, white_set, black_set`, then either
/// `weight` (`last_ply - first_ply + 1`, when no ply range and no ply column needs the plies)
/// or `first_ply, last_ply`, then `missing`, `bishop_pairs` and the structure code
/// (`runs.structure`) when asked for. Every column read costs time on 11 million runs, so only
/// the needed ones are read.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanColumns {
    pub weight_only: bool,
    pub missing: bool,
    pub bishop_pairs: bool,
    pub structure: bool,
}

impl ScanColumns {
    fn list(self, qualifier: &str) -> String {
        let q = qualifier;
        let mut cols = format!("{q}game_id, {q}white_set, {q}black_set");
        if self.weight_only {
            let _ = write!(cols, ", {q}last_ply - {q}first_ply + 1");
        } else {
            let _ = write!(cols, ", {q}first_ply, {q}last_ply");
        }
        if self.missing {
            let _ = write!(cols, ", {q}missing");
        }
        if self.bishop_pairs {
            let _ = write!(cols, ", {q}bishop_pairs");
        }
        if self.structure {
            // The runs' own column, or its name in the positions source.
            cols.push_str(if q.is_empty() {
                ", structure_code"
            } else {
                ", p.structure"
            });
        }
        cols
    }
}

/// The changes of named structure of games `?1..=?2` in (game, ply) order: `game_id, ply,
/// to_structure` (the structure code from that ply on; the primary key's order).
pub const STRUCTURE_CHANGES_SCAN: &str = "SELECT game_id, ply, to_structure FROM structure_changes
     WHERE game_id BETWEEN ?1 AND ?2 ORDER BY game_id, ply";

/// Positions scan: the [`ScanColumns`] of every run (or ply) that passes, in game order.
/// Parameters `:first_game`, `:last_game`, and `:lo`, `:hi` when `ply_range` (always with
/// filters).
pub fn positions_scan(
    columns: ScanColumns,
    ply_range: bool,
    joins: Joins,
    filters: &[String],
) -> String {
    if filters.is_empty() {
        let plies = if ply_range {
            " AND p.last_ply >= :lo AND p.first_ply <= :hi"
        } else {
            ""
        };
        return format!(
            "SELECT {}\nFROM runs AS p\n\
             WHERE p.game_id BETWEEN :first_game AND :last_game{plies}\nORDER BY p.game_id",
            columns.list("p.")
        );
    }
    format!(
        "SELECT {} FROM (\n{}\n){}\nORDER BY game_id",
        columns.list(""),
        positions_source(joins),
        where_clause(filters)
    )
}

/// Checks one `--where` expression against the source it will run in (compiled, never run).
pub fn probe(source: &str, filter: &str) -> String {
    format!("SELECT 1 FROM (\n{source}\n) WHERE ({filter})")
}

/// Whether any game starts from a FEN (only those need per-game piece masks).
pub const ANY_FEN_START: &str = "SELECT EXISTS (SELECT 1 FROM games WHERE fen IS NOT NULL)";
/// Games that start from a FEN.
pub const FEN_STARTS: &str = "SELECT id, fen, chess960 FROM games WHERE fen IS NOT NULL";
/// Range of ids, and the rows they number, to size the lookup tables.
pub const MAX_SET_ID: &str = "SELECT coalesce(max(id), 0) FROM pawn_sets";
pub const GAME_ID_RANGE: &str = "SELECT coalesce(min(id), 0), coalesce(max(id), -1) FROM games";
pub const ROW_COUNTS: &str =
    "SELECT (SELECT count(*) FROM games), (SELECT count(*) FROM pawn_sets)";
/// The number of games.
pub const GAME_COUNT: &str = "SELECT count(*) FROM games";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn popcount_sql_is_valid_and_right() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        for v in [
            0u64,
            1,
            0xFF00,
            0x00FF_0000_0000_0000,
            0x00AA_5500_FF00_1100,
        ] {
            let sql = format!("SELECT {}", popcount(&v.to_string()));
            let n: i64 = conn.query_row(&sql, [], |r| r.get(0)).unwrap();
            assert_eq!(n as u32, v.count_ones(), "{v:#x}");
        }
    }
}
