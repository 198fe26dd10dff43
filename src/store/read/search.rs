//! Typed position searches: conditions on each side's pawn set, on runs and on games, plus a
//! ply range. The storage layer turns a [`Search`] into SQL (for rows) and picks how to count
//! it; `find` and the named queries build searches, and nothing parses SQL pawndex wrote. The
//! conditions come from the walk `store::sql::walk` shares with the DuckDB/Spark dialect; this file
//! is its SQLite back end (`Sqlite`) and the statements around them.
//!
//! Two ways to read the matching runs:
//! - **scan**: every run in key order (game, ply), each checked against the matching pawn sets
//!   (SQLite keeps them in an ephemeral index); first rows come at once;
//! - **postings**: the games that reach a matching set of each side whose sets are rare, from
//!   `set_games` (plus the games not yet in it), then only those games' runs.

use std::convert::Infallible;
use std::fmt::Write as _;

use anyhow::Result;
use rusqlite::Connection;
use rusqlite::types::Value;

pub use crate::model::search::{
    Feature, Form, GameCond, Op, Rows, RunCond, Search, SetCond, Side, StructureForm, squares,
};

use crate::store::sql::walk::{self, Target};

impl GameCond {
    /// The condition as SQL over `games AS g`, with named parameters (see [`GameCond::params`]).
    #[must_use]
    pub fn sql(&self) -> String {
        self.sql_numbered("")
    }

    /// [`GameCond::sql`] with `suffix` after every parameter name.
    fn sql_numbered(&self, suffix: &str) -> String {
        let like = |col: &str, param: &str| format!("g.{col} LIKE :{param}{suffix} ESCAPE '\\'");
        match self {
            GameCond::Result(_) => format!("g.result = :result{suffix}"),
            GameCond::MinElo(_) => {
                format!("g.white_elo >= :min_elo{suffix} AND g.black_elo >= :min_elo{suffix}")
            }
            GameCond::MaxElo(_) => {
                format!("g.white_elo <= :max_elo{suffix} AND g.black_elo <= :max_elo{suffix}")
            }
            GameCond::TimeClasses(names) | GameCond::ExcludeTimeClasses(names) => {
                let (not, param) = match self {
                    GameCond::TimeClasses(_) => ("", "time_class"),
                    _ => ("NOT ", "exclude_time_class"),
                };
                let list: Vec<String> = (1..=names.len())
                    .map(|i| format!(":{param}_{i}{suffix}"))
                    .collect();
                format!("g.time_class {not}IN ({})", list.join(", "))
            }
            GameCond::Player(_) => format!(
                "({} OR {})",
                like("white", "player"),
                like("black", "player")
            ),
            GameCond::PlayerName(_) => {
                format!("(g.white = :player_name{suffix} OR g.black = :player_name{suffix})")
            }
            GameCond::Spellings(_) => format!(
                "(g.white IN (SELECT value FROM json_each(:spellings{suffix})) OR g.black IN \
                 (SELECT value FROM json_each(:spellings{suffix})))"
            ),
            GameCond::WhitePlayer(_) => like("white", "white_player"),
            GameCond::BlackPlayer(_) => like("black", "black_player"),
            GameCond::Event(_) => like("event", "event"),
            GameCond::Site(_) => like("site", "site"),
            GameCond::Ids(..) => format!("g.id > :after{suffix} AND g.id <= :through{suffix}"),
            GameCond::Eco(..) => {
                format!("substr(g.eco, 1, 3) BETWEEN :eco_from{suffix} AND :eco_to{suffix}")
            }
            GameCond::Date(from, to) => {
                // The year must be known; an unknown month or day (`??`) counts as January / the
                // 1st against the lower bound and December / the 31st against the upper one,
                // so a game is in only when its date surely is.
                let mut parts = vec!["g.date GLOB '[0-9][0-9][0-9][0-9]*'".to_string()];
                for (bound, name, op, month, day) in [
                    (from, "date_from", ">=", "01", "01"),
                    (to, "date_to", "<=", "12", "31"),
                ] {
                    if let Some(b) = bound {
                        parts.push(format!(
                            "substr(substr(g.date, 1, 5) || replace(substr(g.date, 6, 2), '??', \
                             '{month}') || substr(g.date, 8, 1) || replace(substr(g.date, 9, 2), \
                             '??', '{day}'), 1, {}) {op} CAST(:{name}{suffix} AS TEXT)",
                            b.len()
                        ));
                    }
                }
                parts.join(" AND ")
            }
            GameCond::AnyOf(any) => {
                let alternatives: Vec<String> = any
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("({})", c.sql_numbered(&format!("{suffix}_{}", i + 1))))
                    .collect();
                format!("({})", alternatives.join(" OR "))
            }
        }
    }

    /// The parameters of [`GameCond::sql`].
    #[must_use]
    pub fn params(&self) -> Vec<(String, Value)> {
        self.params_numbered("")
    }

    /// [`GameCond::params`] with `suffix` after every parameter name.
    fn params_numbered(&self, suffix: &str) -> Vec<(String, Value)> {
        let text = |name: &str, v: &str| (format!("{name}{suffix}"), Value::Text(v.to_string()));
        match self {
            GameCond::Result(r) => vec![text("result", r)],
            GameCond::MinElo(e) => vec![(format!("min_elo{suffix}"), Value::Integer(*e))],
            GameCond::MaxElo(e) => vec![(format!("max_elo{suffix}"), Value::Integer(*e))],
            GameCond::TimeClasses(names) | GameCond::ExcludeTimeClasses(names) => {
                let param = match self {
                    GameCond::TimeClasses(_) => "time_class",
                    _ => "exclude_time_class",
                };
                names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| text(&format!("{param}_{}", i + 1), n))
                    .collect()
            }
            GameCond::Player(n) => vec![text("player", &like_pattern(n))],
            GameCond::PlayerName(n) => vec![text("player_name", n)],
            GameCond::Spellings(names) => vec![text(
                "spellings",
                &serde_json::to_string(names).unwrap_or_else(|_| "[]".to_string()),
            )],
            GameCond::WhitePlayer(n) => vec![text("white_player", &like_pattern(n))],
            GameCond::BlackPlayer(n) => vec![text("black_player", &like_pattern(n))],
            GameCond::Event(n) => vec![text("event", &like_pattern(n))],
            GameCond::Site(n) => vec![text("site", &like_pattern(n))],
            GameCond::Ids(after, through) => vec![
                (format!("after{suffix}"), Value::Integer(*after)),
                (format!("through{suffix}"), Value::Integer(*through)),
            ],
            GameCond::Eco(from, to) => vec![text("eco_from", from), text("eco_to", to)],
            GameCond::Date(from, to) => [("date_from", from), ("date_to", to)]
                .into_iter()
                .filter_map(|(name, b)| b.as_deref().map(|b| text(name, b)))
                .collect(),
            GameCond::AnyOf(any) => any
                .iter()
                .enumerate()
                .flat_map(|(i, c)| c.params_numbered(&format!("{suffix}_{}", i + 1)))
                .collect(),
        }
    }
}

/// SQL with the parameters it needs.
#[derive(Clone, Debug)]
pub struct Sql {
    pub text: String,
    pub params: Vec<(String, Value)>,
}

/// How `--count` counts a search's positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CountPlan {
    /// One side's conditions only: add up `set_totals` of its matching sets.
    Totals(Side),
    /// Bishop-pair conditions only: add up `bishop_totals`.
    Bishops,
    /// Read the runs: only the candidate games' when a side's sets are rare (through
    /// `set_games`) or a named structure is asked for (through `structure_changes`), else every run in parallel slices, each against bit sets of the matching
    /// pawn sets.
    Runs,
}

impl Op {
    /// The SQL operator (the same in SQLite, DuckDB and Spark).
    pub fn sql(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        }
    }
}

fn like_pattern(name: &str) -> String {
    let mut p = String::from("%");
    for c in name.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

fn hex(v: u64) -> String {
    format!("0x{v:016X}")
}

/// The SQLite back end of the shared walk (`store::sql::walk`): a side's conditions over its
/// `pawn_sets` row `s` (one side per subquery), hex masks, an exact structure as a parameter
/// `:white_pawns`/`:black_pawns`, the packed `r.bishop_pairs`, named structures through
/// `structure_names`, game conditions over `games AS g` with parameters.
struct Sqlite;

impl Target for Sqlite {
    type Refusal = Infallible;

    fn feature(&self, _side: Side, column: &str) -> String {
        format!("s.{column}")
    }

    fn mask(&self, v: u64) -> String {
        hex(v)
    }

    fn names_side(&self) -> bool {
        false
    }

    fn exact(&self, side: Side, _pawns: u64) -> String {
        format!(":{}_pawns", side.name())
    }

    fn bishop_pair(&self, side: Side, has: bool) -> String {
        let bit = if side == Side::White { 1 } else { 2 };
        format!("(r.bishop_pairs & {bit}) = {}", if has { bit } else { 0 })
    }

    fn bishop_pairs(&self, state: u8) -> String {
        format!("r.bishop_pairs = {state}  -- bit 0: White has the pair, bit 1: Black has it")
    }

    fn structure_forms(&self, forms: &[StructureForm]) -> String {
        let parts: Vec<String> = forms
            .iter()
            .enumerate()
            .map(|(i, form)| {
                format!(
                    "SELECT 2 * n.id + {} FROM structure_names AS n WHERE n.key = :structure_{}",
                    u8::from(form.reversed),
                    i + 1
                )
            })
            .collect();
        format!(
            "r.structure IN (\n        {}\n      )  -- code 2 * id (+ 1 reversed)",
            parts.join("\n        UNION ALL ")
        )
    }

    fn run_column(&self, column: &str) -> String {
        format!("r.{column}")
    }

    fn greatest_least(&self) -> (&'static str, &'static str) {
        ("max", "min")
    }

    fn game(&self, cond: &GameCond) -> Result<String, Infallible> {
        Ok(cond.sql())
    }
}

impl Search {
    fn side(&self, side: Side) -> &[SetCond] {
        match side {
            Side::White => &self.white,
            Side::Black => &self.black,
        }
    }

    fn ply_range(&self) -> bool {
        self.plies != (0, u32::MAX)
    }

    /// The parameters the SQL of this search binds.
    #[must_use]
    pub fn params(&self) -> Vec<(String, Value)> {
        let mut p = Vec::new();
        for side in [Side::White, Side::Black] {
            for c in self.side(side) {
                if let SetCond::Exactly(v) = c {
                    p.push((format!("{}_pawns", side.name()), Value::Integer(*v as i64)));
                }
            }
        }
        for g in &self.games {
            p.extend(g.params());
        }
        for (i, form) in self.structures.iter().enumerate() {
            p.push((
                format!("structure_{}", i + 1),
                Value::Text(form.key.clone()),
            ));
        }
        if let Some(n) = self.min_stay {
            p.push(("min_stay".to_string(), Value::Integer(n.into())));
        }
        if let Some(after) = self.order.after {
            p.push(("after_game".to_string(), Value::Integer(after)));
        }
        if self.order.key == crate::model::search::SortKey::Typicality {
            let pairs: Vec<String> = self
                .typical
                .iter()
                .map(|(game, ply)| format!("[{game},{ply}]"))
                .collect();
            p.push((
                "typical".to_string(),
                Value::Text(format!("[{}]", pairs.join(","))),
            ));
        }
        p
    }

    /// The `runs.structure` codes of the wanted forms in this database (a form whose key the
    /// database does not name has none).
    pub fn structure_codes(&self, conn: &Connection) -> Result<Vec<i64>> {
        let mut codes = Vec::new();
        let mut st = conn.prepare(
            "SELECT 2 * id + ?2 FROM structure_names WHERE key = ?1 AND (?2 = 0 OR reversed = 1)",
        )?;
        for form in &self.structures {
            let mut rows = st.query(rusqlite::params![form.key, i64::from(form.reversed)])?;
            while let Some(r) = rows.next()? {
                codes.push(r.get::<_, i64>(0)?);
            }
        }
        codes.sort_unstable();
        codes.dedup();
        Ok(codes)
    }

    /// The games that ever stand in one of the wanted forms, ascending, from a scan of
    /// `structure_changes` (small: about 2 rows per game; every game that enters a form has a change to
    /// it, at ply 0 when it starts in it; the changes are written with the game, so they cover
    /// every stored game). `None` without structure conditions.
    pub fn structure_games(&self, conn: &Connection) -> Result<Option<Vec<i64>>> {
        if self.structures.is_empty() {
            return Ok(None);
        }
        let mut games = Vec::new();
        let mut st = conn.prepare(
            "SELECT game_id FROM structure_changes WHERE to_structure = ?1 ORDER BY game_id",
        )?;
        for code in self.structure_codes(conn)? {
            let mut rows = st.query([code])?;
            while let Some(r) = rows.next()? {
                games.push(r.get::<_, i64>(0)?);
            }
        }
        games.sort_unstable();
        games.dedup();
        Ok(Some(games))
    }

    /// `SELECT s.id FROM pawn_sets …` of one side's matching sets, or `None` for no condition.
    #[must_use]
    pub fn sets_sql(&self, side: Side) -> Option<String> {
        sets_select(side, &walk::set_conditions(&Sqlite, side, self.side(side)))
    }

    /// The common table expressions up to `matching_runs`, in the given form.
    fn head(&self, form: Form) -> String {
        let Ok(conds) = walk::conditions(&Sqlite, self);
        let mut ctes = Vec::new();
        for (side, conds) in [(Side::White, &conds.white), (Side::Black, &conds.black)] {
            if let Some(sets) = sets_select(side, conds) {
                ctes.push(format!("matching_{} AS (\n    {sets}\n)", side.name()));
            }
        }
        let mut from = "    FROM runs AS r\n".to_string();
        if form == Form::Postings {
            // :games holds the candidate games (see `Search::candidate_games`), as a JSON
            // array.
            ctes.push(
                "matching_games AS (\n    SELECT value AS game_id FROM json_each(:games)\n    \
                 UNION\n    \
                 SELECT g.id FROM games AS g WHERE g.id > (SELECT through FROM derived)\n)"
                    .to_string(),
            );
            from = "    FROM matching_games AS mg\n    JOIN runs AS r ON r.game_id = mg.game_id\n"
                .to_string();
        }
        let mut wheres = Vec::new();
        for (side, conds) in [(Side::White, &conds.white), (Side::Black, &conds.black)] {
            if !conds.is_empty() {
                wheres.push(format!("r.{0}_set IN matching_{0}", side.name()));
            }
        }
        wheres.extend(conds.structures);
        wheres.extend(conds.runs);
        wheres.extend(conds.plies);
        if !conds.games.is_empty() {
            from.push_str("    JOIN games AS g ON g.id = r.game_id\n");
            wheres.extend(conds.games);
        }
        // With a least stay, the runs found first, then those of the games that stay long
        // enough in them.
        let name = if self.min_stay.is_some() {
            "found_runs"
        } else {
            "matching_runs"
        };
        let mut runs =
            format!("{name} AS (\n    SELECT r.game_id, r.first_ply, r.last_ply\n{from}");
        if !wheres.is_empty() {
            let _ = writeln!(runs, "    WHERE {}", wheres.join("\n      AND "));
        }
        runs.push(')');
        ctes.push(runs);
        if self.min_stay.is_some() {
            let (first, last) = walk::bounds(&Sqlite, self);
            ctes.push(format!(
                "matching_runs AS (\n    SELECT r.game_id, r.first_ply, r.last_ply\n    \
                 FROM found_runs AS r\n    WHERE r.game_id IN (\n        \
                 SELECT r.game_id FROM found_runs AS r\n        GROUP BY r.game_id\n        \
                 HAVING sum({last} - {first} + 1) >= :min_stay  -- the game's stay\n    )\n)"
            ));
        }
        format!("WITH {}\n", ctes.join(",\n"))
    }

    /// The game conditions alone, as SQL over `games AS g` (each a line of a `WHERE`, all to
    /// hold) with their parameters.
    #[must_use]
    pub fn game_conditions(&self) -> (Vec<String>, Vec<(String, Value)>) {
        let Ok(conds) = walk::conditions(&Sqlite, self);
        let params = self.games.iter().flat_map(GameCond::params).collect();
        (conds.games, params)
    }

    /// Whether every position of a game passes the search's position conditions (none on the
    /// pawns, the runs, the named structure or the plies): only the game conditions select.
    fn positions_free(&self) -> bool {
        self.white.is_empty()
            && self.black.is_empty()
            && self.runs.is_empty()
            && self.structures.is_empty()
            && !self.ply_range()
    }

    /// Whether a run with this `bishop_pairs` value passes the run conditions.
    #[must_use]
    pub fn bishops_pass(&self, bishop_pairs: i64) -> bool {
        self.runs.iter().all(|c| match *c {
            RunCond::BishopPair(side, has) => {
                let bit = if side == Side::White { 1 } else { 2 };
                (bishop_pairs & bit != 0) == has
            }
            RunCond::BishopPairs(v) => bishop_pairs == i64::from(v),
        })
    }

    /// The SQL returning the rows of this search.
    #[must_use]
    pub fn rows_sql(&self, form: Form, rows: Rows) -> Sql {
        let mut sql = self.head(form);
        let (first, last) = walk::bounds(&Sqlite, self);
        let columns = "g.white, g.black, g.result, g.date";
        match rows {
            Rows::Positions => {
                let _ = write!(
                    sql,
                    "SELECT r.game_id, n.n AS ply\nFROM matching_runs AS r\n\
                     CROSS JOIN ply_numbers AS n ON n.n BETWEEN {first} AND {last}\n\
                     ORDER BY r.game_id, r.first_ply, n.n"
                );
            }
            Rows::PositionsWithGame => {
                let _ = write!(
                    sql,
                    "SELECT r.game_id, n.n AS ply, {columns}\nFROM matching_runs AS r\n\
                     CROSS JOIN ply_numbers AS n ON n.n BETWEEN {first} AND {last}\n\
                     JOIN games AS g ON g.id = r.game_id\nORDER BY r.game_id, r.first_ply, n.n"
                );
            }
            Rows::Runs => {
                let _ = write!(
                    sql,
                    "SELECT r.game_id, {first} AS first_ply, {last} AS last_ply\n\
                     FROM matching_runs AS r\nORDER BY r.game_id, r.first_ply"
                );
            }
            Rows::Games if self.listed(rows) => {
                // The games in the plans' order, computed outside SQL (`:typical`, a JSON array
                // of [game id, first ply in the structure], most typical first): read once by
                // json_each, each game by its key; a keyset page starts after :after_game's
                // place in the list.
                let (order, op) = if self.order.reverse {
                    ("DESC", "<")
                } else {
                    ("ASC", ">")
                };
                sql = format!(
                    "WITH ranked AS MATERIALIZED (\n    SELECT j.key AS place, j.value ->> 0 AS \
                     game_id, j.value ->> 1 AS ply\n    FROM json_each(:typical) AS j\n)\n\
                     SELECT r.game_id, r.ply, {columns}\nFROM ranked AS r\n\
                     JOIN games AS g ON g.id = r.game_id\n"
                );
                if self.order.after.is_some() {
                    let _ = writeln!(
                        sql,
                        "WHERE r.place {op} (SELECT place FROM ranked WHERE game_id = :after_game)"
                    );
                }
                let _ = write!(sql, "ORDER BY r.place {order}");
            }
            Rows::Games if !self.order.is_plain() => {
                let key = sort_key(self.order);
                let (before, after) = if self.order.key.descending() != self.order.reverse {
                    ("DESC", "<")
                } else {
                    ("ASC", ">")
                };
                if self.positions_free() {
                    // Every position of a game matches (its runs tile it from ply 0 to its
                    // last): no run is read, the stay is the game's positions.
                    let Ok(conds) = walk::conditions(&Sqlite, self);
                    let mut wheres = conds.games;
                    if self.min_stay.is_some() {
                        wheres.push("g.plies + 1 >= :min_stay  -- the game's stay".to_string());
                    }
                    sql = "WITH games_found AS (\n    SELECT g.id AS game_id, 0 AS ply, \
                           g.plies + 1 AS stay\n    FROM games AS g"
                        .to_string();
                    if !wheres.is_empty() {
                        let _ = write!(sql, "\n    WHERE {}", wheres.join("\n      AND "));
                    }
                    sql.push_str("\n)");
                } else {
                    sql.truncate(sql.trim_end().len());
                    let _ = write!(
                        sql,
                        ",\ngames_found AS (\n    SELECT r.game_id, min({first}) AS ply, \
                         sum({last} - {first} + 1) AS stay\n    FROM matching_runs AS r\n    \
                         GROUP BY r.game_id\n)"
                    );
                }
                let _ = write!(
                    sql,
                    ",\nkeyed AS MATERIALIZED (\n    \
                     SELECT f.game_id, f.ply, {columns}, {key} AS sort_key\n    \
                     FROM games_found AS f\n    JOIN games AS g ON g.id = f.game_id\n)\n\
                     SELECT k.game_id, k.ply, k.white, k.black, k.result, k.date\n\
                     FROM keyed AS k\n"
                );
                if self.order.after.is_some() {
                    // A keyset page: the games after :after_game in this order.
                    let _ = writeln!(
                        sql,
                        "WHERE k.sort_key {after} (SELECT sort_key FROM keyed WHERE game_id = \
                         :after_game)\n   OR (k.sort_key = (SELECT sort_key FROM keyed WHERE \
                         game_id = :after_game) AND k.game_id > :after_game)"
                    );
                }
                let _ = write!(sql, "ORDER BY k.sort_key {before}, k.game_id");
            }
            Rows::Games => {
                let _ = write!(
                    sql,
                    "SELECT f.game_id, f.ply, {columns}\nFROM (\n    \
                     SELECT r.game_id, min({first}) AS ply\n    FROM matching_runs AS r\n    \
                     GROUP BY r.game_id\n) AS f\nJOIN games AS g ON g.id = f.game_id\n\
                     ORDER BY f.game_id"
                );
            }
        }
        let mut params = self.params();
        if self.listed(rows) {
            // Its own statement binds only the list and the page's start.
            params.retain(|(name, _)| name == "typical" || name == "after_game");
        }
        Sql { text: sql, params }
    }

    /// SQL counting the positions (or, for `Rows::Games`, the games) of this search.
    #[must_use]
    pub fn count_sql(&self, form: Form, games: bool) -> Sql {
        let mut sql = self.head(form);
        let (first, last) = walk::bounds(&Sqlite, self);
        if games {
            sql.push_str("SELECT count(DISTINCT r.game_id) AS games\nFROM matching_runs AS r");
        } else {
            let _ = write!(
                sql,
                "SELECT coalesce(sum({last} - {first} + 1), 0) AS positions\nFROM matching_runs AS r"
            );
        }
        Sql {
            text: sql,
            params: self.params(),
        }
    }

    /// The pawn sets each side's conditions match, in one pass over `pawn_sets` (an exact
    /// structure is one lookup in `pawn_sets_key` instead).
    pub fn matching_sets(&self, conn: &Connection) -> Result<MatchingSets> {
        let exact = self
            .white
            .iter()
            .chain(&self.black)
            .any(|c| matches!(c, SetCond::Exactly(_)));
        let mut sets = MatchingSets::default();
        if !self.white.is_empty() && !self.black.is_empty() && !exact {
            // Both sides in one pass: each condition on its own line (they end in comments).
            let mut sql = String::from("SELECT s.side, s.id\nFROM pawn_sets AS s\nWHERE ");
            for side in [Side::White, Side::Black] {
                if side == Side::Black {
                    sql.push_str("\n   OR ");
                }
                let _ = write!(sql, "(s.side = {}", side.code());
                for c in walk::set_conditions(&Sqlite, side, self.side(side)) {
                    let _ = write!(sql, "\n      AND {c}");
                }
                sql.push_str("\n)");
            }
            let (mut white, mut black) = (Vec::new(), Vec::new());
            let mut st = conn.prepare(&sql)?;
            let mut rows = st.query([])?;
            while let Some(r) = rows.next()? {
                match r.get::<_, i64>(0)? {
                    0 => white.push(r.get(1)?),
                    1 => black.push(r.get(1)?),
                    _ => {}
                }
            }
            white.sort_unstable();
            black.sort_unstable();
            sets.white = Some(white);
            sets.black = Some(black);
            return Ok(sets);
        }
        let params = self.params();
        for side in [Side::White, Side::Black] {
            let Some(sql) = self.sets_sql(side) else {
                continue;
            };
            let mut st = conn.prepare(&sql)?;
            for (name, value) in &params {
                if let Some(i) = st.parameter_index(&format!(":{name}"))? {
                    st.raw_bind_parameter(i, value)?;
                }
            }
            let mut ids = Vec::new();
            let mut rows = st.raw_query();
            while let Some(r) = rows.next()? {
                ids.push(r.get::<_, i64>(0)?);
            }
            ids.sort_unstable();
            match side {
                Side::White => sets.white = Some(ids),
                Side::Black => sets.black = Some(ids),
            }
        }
        Ok(sets)
    }

    /// The games that can hold a match, ascending: those that enter a wanted named structure
    /// (see [`Search::structure_games`]) unless they are too many, and those in the `set_games`
    /// lists of a matching set of every side whose matching sets are rare (the intersection of
    /// all these), plus the games not yet in the lists when a list was read. `None` when
    /// nothing is rare enough to beat reading every run.
    pub fn candidate_games(
        &self,
        conn: &Connection,
        sets: &MatchingSets,
    ) -> Result<Option<Vec<i64>>> {
        let (through, last): (i64, i64) = conn.query_row(
            "SELECT (SELECT through FROM derived), (SELECT coalesce(max(id), 0) FROM games)",
            [],
            |r| Ok((r.get::<_, Option<i64>>(0)?.unwrap_or(0), r.get(1)?)),
        )?;
        // One side: its lists must be rare (otherwise set_totals or a scan is as fast). Both
        // sides: their intersection is usually far smaller than either list.
        let both = sets.white.is_some() && sets.black.is_some();
        let mut limit = usize::try_from(last / if both { 2 } else { 16 }).unwrap_or(0);
        match super::forced_plan() {
            Some(super::ForcedPlan::Scan) => return Ok(None),
            Some(super::ForcedPlan::Lists) => limit = usize::MAX,
            None => {}
        }
        let mut sides: Vec<&[i64]> = [&sets.white, &sets.black]
            .into_iter()
            .flatten()
            .map(Vec::as_slice)
            .collect();
        sides.sort_by_key(|ids| ids.len());
        let mut list = conn.prepare("SELECT games FROM set_games WHERE set_id = ?1")?;
        // The named structures' games first: one scan of `structure_changes` each, complete.
        let mut games: Option<Vec<i64>> = self
            .structure_games(conn)?
            .filter(|g| limit == usize::MAX || g.len() <= usize::try_from(last / 2).unwrap_or(0));
        let mut lists_read = false;
        for ids in sides {
            // Every set holds at least one game: more sets than the limit cannot be rare.
            if ids.len() > limit {
                continue;
            }
            // A second side narrows the first one's games only if reading its lists (one
            // lookup per set) costs less than reading those games' runs.
            if limit != usize::MAX && games.as_ref().is_some_and(|g| ids.len() > g.len() / 2) {
                continue;
            }
            let Some(these) = listed_games(&mut list, ids, limit)? else {
                continue;
            };
            lists_read = true;
            games = Some(match games {
                None => these,
                Some(before) => before
                    .into_iter()
                    .filter(|g| these.binary_search(g).is_ok())
                    .collect(),
            });
        }
        let Some(mut games) = games else {
            return Ok(None);
        };
        if lists_read {
            // The lists leave out the unmerged tail (the structures' games may hold some).
            add_tail(conn, through, &mut games)?;
        }
        Ok(Some(games))
    }

    /// How to read this search's rows: through the candidate games when some side is rare
    /// (with the `:games` parameter that form needs), else a scan of the runs.
    pub fn rows_form(&self, conn: &Connection) -> Result<(Form, Option<(String, Value)>)> {
        let sets = self.matching_sets(conn)?;
        let last: i64 =
            conn.query_row("SELECT coalesce(max(id), 0) FROM games", [], |r| r.get(0))?;
        let forced = super::forced_plan() == Some(super::ForcedPlan::Lists);
        // Rows come in (game, ply) order either way; a scan yields its first rows at once, so
        // the candidates must be few to be worth their lists.
        Ok(match self.candidate_games(conn, &sets)? {
            Some(games) if forced || (games.len() as i64).saturating_mul(8) < last => (
                Form::Postings,
                Some(("games".to_string(), Value::Text(json_array(&games)))),
            ),
            _ => (Form::Scan, None),
        })
    }

    /// Whether the rows are the typicality's list itself (`rows_sql` reads it, no run).
    fn listed(&self, rows: Rows) -> bool {
        rows == Rows::Games && self.order.key == crate::model::search::SortKey::Typicality
    }

    /// The SQL of this search's rows in its fastest form, with every parameter it binds.
    pub fn fastest_rows_sql(&self, conn: &Connection, rows: Rows) -> Result<Sql> {
        if self.listed(rows) {
            // The list is the games: no candidates to find.
            return Ok(self.rows_sql(Form::Scan, rows));
        }
        let (form, games) = self.rows_form(conn)?;
        let mut sql = self.rows_sql(form, rows);
        sql.params.extend(games);
        Ok(sql)
    }

    /// The statement returning this search's rows, in its fastest form, its parameters
    /// bound (what `find` runs; `GET /api/games` reads it a page at a time).
    pub fn rows_statement<'c>(
        &self,
        conn: &'c Connection,
        rows: Rows,
    ) -> Result<super::query::Prepared<'c>> {
        let sql = self.fastest_rows_sql(conn, rows)?;
        let mut stmt = conn.prepare(&sql.text)?;
        super::params::bind_params(&mut stmt, &sql.params)?;
        Ok(super::query::Prepared::new(stmt))
    }

    /// How to count this search's positions (see [`CountPlan`]).
    #[must_use]
    pub fn count_plan(&self) -> CountPlan {
        if self.white.is_empty()
            && self.black.is_empty()
            && self.games.is_empty()
            && self.structures.is_empty()
            && !self.ply_range()
            && !self.runs.is_empty()
        {
            return CountPlan::Bishops;
        }
        let plain = self.runs.is_empty()
            && self.games.is_empty()
            && self.structures.is_empty()
            && !self.ply_range();
        if plain {
            match (self.white.is_empty(), self.black.is_empty()) {
                (false, true) => return CountPlan::Totals(Side::White),
                (true, false) => return CountPlan::Totals(Side::Black),
                _ => {}
            }
        }
        CountPlan::Runs
    }
}

/// The SQL of an order's key over `games AS g` and a game's row `f` of `games_found`
/// (`f.stay`): a value for every game, those without one (no rating, no known year) given the
/// value that puts them last in the order asked for.
fn sort_key(order: crate::model::search::Order) -> String {
    use crate::model::search::SortKey;
    let last_low = order.key.descending() != order.reverse;
    // Beyond any rating a tag can hold (SQLite compares integers and reals by value).
    let missing = if last_low { "-1e300" } else { "1e300" };
    match order.key {
        SortKey::Id => "f.game_id".to_string(),
        SortKey::Elo => format!("coalesce(g.white_elo + g.black_elo, {missing})"),
        SortKey::WhiteElo => format!("coalesce(g.white_elo, {missing})"),
        SortKey::BlackElo => format!("coalesce(g.black_elo, {missing})"),
        SortKey::Date => format!(
            "CASE WHEN g.date GLOB '[0-9][0-9][0-9][0-9]*' THEN replace(g.date, '?', '0') \
             ELSE '{}' END",
            if last_low { "" } else { "~" }
        ),
        SortKey::Stay => "f.stay".to_string(),
        // Sorted by its own statement (see `rows_sql`).
        SortKey::Typicality => "f.game_id".to_string(),
    }
}

/// `SELECT s.id FROM pawn_sets …` of the sets of `side` passing `conds`, or `None` for no
/// condition.
fn sets_select(side: Side, conds: &[String]) -> Option<String> {
    if conds.is_empty() {
        return None;
    }
    let mut sql = format!(
        "SELECT s.id\n    FROM pawn_sets AS s\n    WHERE s.side = {}",
        side.code()
    );
    for c in conds {
        let _ = write!(sql, "\n      AND {c}");
    }
    Some(sql)
}

/// A row of `structure_names`: the id, the key, the display name and family, and whether the
/// catalogue looks for the colour-reversed form too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructureName {
    pub id: i64,
    pub key: String,
    pub name: String,
    pub family: String,
    pub reversed: bool,
}

/// The named structures the database knows (its `structure_names`), by key.
pub fn structure_names(conn: &Connection) -> Result<Vec<StructureName>> {
    let mut st =
        conn.prepare("SELECT id, key, name, family, reversed FROM structure_names ORDER BY key")?;
    let rows = st.query_map([], |r| {
        Ok(StructureName {
            id: r.get(0)?,
            key: r.get(1)?,
            name: r.get(2)?,
            family: r.get(3)?,
            reversed: r.get::<_, i64>(4)? != 0,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Ids as a JSON array (SQLite's `json_each` reads it).
#[must_use]
pub fn json_array(ids: &[i64]) -> String {
    let mut json = String::with_capacity(ids.len() * 7 + 2);
    json.push('[');
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        let _ = write!(json, "{id}");
    }
    json.push(']');
    json
}

/// The pawn sets matching each side's conditions (ascending ids); `None` for a side without
/// conditions.
#[derive(Debug, Default)]
pub struct MatchingSets {
    pub white: Option<Vec<i64>>,
    pub black: Option<Vec<i64>>,
}

/// The games of the sets `ids` from their `set_games` lists (`list` reads one), sorted and
/// without repeats; `None` once they are more than `limit`.
fn listed_games(
    list: &mut rusqlite::Statement<'_>,
    ids: &[i64],
    limit: usize,
) -> Result<Option<Vec<i64>>> {
    let mut these = Vec::new();
    let mut check_at = limit.max(1024);
    for &id in ids {
        let mut rows = list.query([id])?;
        if let Some(r) = rows.next()? {
            these.extend(crate::store::decode_games(r.get_ref(0)?.as_blob()?));
        }
        if these.len() > check_at {
            these.sort_unstable();
            these.dedup();
            if these.len() > limit {
                return Ok(None);
            }
            check_at = these.len().saturating_mul(2).max(limit);
        }
    }
    these.sort_unstable();
    these.dedup();
    Ok(Some(these))
}

/// Adds the games after `through` (the unmerged tail) to `games`, keeping them sorted and
/// without repeats.
fn add_tail(conn: &Connection, through: i64, games: &mut Vec<i64>) -> Result<()> {
    let mut tail = conn.prepare("SELECT id FROM games WHERE id > ?1 ORDER BY id")?;
    for id in tail.query_map([through], |r| r.get::<_, i64>(0))? {
        games.push(id?);
    }
    games.sort_unstable();
    games.dedup();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_become_sql_over_pawn_sets() {
        let s = Search {
            white: vec![SetCond::Has(Feature::QUART), SetCond::PawnsOn(1 << 27)],
            black: vec![SetCond::Compare(Feature::ISLANDS, Op::Ge, 3)],
            ..Search::default()
        };
        let sql = s.rows_sql(Form::Scan, Rows::Positions).text;
        assert!(sql.contains("s.quart != 0"), "{sql}");
        assert!(
            sql.contains("(s.pawns & 0x0000000008000000) = 0x0000000008000000  -- pawns on d4"),
            "{sql}"
        );
        assert!(sql.contains("s.islands >= 3"), "{sql}");
        assert!(sql.contains("r.white_set IN matching_white"), "{sql}");
        assert!(sql.contains("r.black_set IN matching_black"), "{sql}");
        assert!(!sql.contains("set_games"));
        let post = s.rows_sql(Form::Postings, Rows::Positions).text;
        assert!(post.contains("json_each(:games)"), "{post}");
    }

    #[test]
    fn game_conditions_are_parameters() {
        let s = Search {
            games: vec![GameCond::Player("O'Kelly".into())],
            plies: (10, 20),
            ..Search::default()
        };
        let sql = s.rows_sql(Form::Scan, Rows::Games);
        assert!(!sql.text.contains("O'Kelly"));
        assert!(sql.text.contains("max(r.first_ply, 10)"));
        assert_eq!(
            sql.params,
            vec![("player".to_string(), Value::Text("%O'Kelly%".into()))]
        );
    }
}
