//! `pawndex check`: verifies a database without changing it.
//!
//! The file is opened read-only ([`super::open_read_only`], which refuses anything that is not
//! a pawndex database) and every check runs in one read transaction, so they all see one
//! snapshot, even while `pawndex index` writes. First SQLite's own `PRAGMA integrity_check`
//! (pages, records, indexes; up to 100 messages), then pawndex's invariants:
//!
//! - `derived`: one row; `through` and `finished` non-negative integers, not past the last
//!   game. Games above both (stored by a run that did not finish) are a *note* (an unfinished
//!   database), not a problem; games above `through` only are the unmerged tail (by design).
//! - `games`: ids in 1..=2^32-1 (the derived tables store them as 32-bit), `plies` an integer in
//!   0..=16,384, `moves` two bytes per ply, one `game_summary` row each and at least one run;
//!   `ply_numbers` holds 0..=the longest game (the view expands runs through it).
//! - `pawn_sets`, streamed: ids in 1..2^31, side 0 or 1, no pawn on rank 1 or 8, at most 8
//!   pawns, and the stored features equal [`SideFeatures`] of the pawns.
//! - ids: pawndex numbers games and pawn sets from 1 without gaps; ids running far past the
//!   rows (more than twice as many ids as rows, plus 65,536: [`super::ids::dense`]) are a
//!   problem, which `similar` and `stats` refuse to read.
//! - `runs`, streamed in key order with their game and both pawn sets: the game exists;
//!   `0 <= first_ply <= last_ply <= plies`; per game the runs tile `0..=plies` exactly; both
//!   sets exist on the right side; a pawn set holds one stretch of a game (pawn moves cannot be
//!   undone); `bishop_pairs` in 0..=3 and `missing` in 0..=2^32-1.
//! - named structures: `structure_names` holds one row per structure of the catalogue the runs
//!   were named with (the keys its fingerprint in `structure_catalogue` names, by id, with the
//!   reversed flag) and no other, and every run's code has its row. The catalogue the runs were
//!   named with is the one in force, else a *note* (`pawndex migrate` re-classifies);
//!   with it, every run's `structure` equals an independent classification of its pawns (the
//!   catalogue's TOML texts read again and matched square by square on an 8x8 board, not with
//!   the index's bitboard rules; the forms each pawn set meets are remembered, one bit per
//!   form, in at most 16 MiB per side); `structure_changes` has exactly one row per ply where the
//!   code changes between consecutive runs of a game (and at ply 0 when the first run is
//!   named), with the same from and to, a move after ply 0 and none at ply 0.
//! - `set_totals`, `set_games`, `bishop_totals`, for the games with id <= `derived.through`:
//!   equal to a recomputation from `runs` and `games`. Pawn-set ids are taken in windows of
//!   2^20; each window is one pass over the runs into a dense array (88 bytes per id, 92 MB at
//!   most), then the window's rows of both tables are streamed and compared. A game list is
//!   compared by its count, last id and an order-sensitive fingerprint; the first mismatches
//!   are then described game by game (one more pass over the runs each). Rows for ids that are
//!   not pawn sets are problems too.
//!
//! Each kind of problem prints its first 5 examples (SQLite's messages: 100) and a count of
//! the rest. A table that cannot be read (a damaged file) is one problem and the other checks
//! go on. Nothing read from the file sizes an allocation unchecked or can panic.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use anyhow::Result;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, Row, params};

use super::decode_games;
use crate::model::features::SideFeatures;
use crate::model::game::MAX_PLIES;
use crate::model::outcome::Outcome;
use crate::model::structure::Catalogue;

/// Examples printed per kind of problem.
const EXAMPLES: u64 = 5;
/// Messages asked of `PRAGMA integrity_check` (and printed).
const INTEGRITY_MESSAGES: u64 = 100;
/// Pawn-set ids per pass over the runs for the derived tables.
const SETS_PER_PASS: i64 = 1 << 20;
/// Pawn-set ids are below this.
const SET_ID_END: i64 = 1 << 31;
/// Game ids are at most this (the derived tables hold them as 32-bit numbers).
const MAX_GAME_ID: i64 = u32::MAX as i64;
/// Bytes the structure check may spend per side remembering which forms' rules a pawn set
/// meets ([`SideCache`]): 16 MiB, so 80,000 sets of a side per generation with the built-in
/// catalogue, 4,000 with 10,000 definitions.
const STRUCTURE_CACHE_BYTES: usize = 16 << 20;
/// Earlier pawn sets remembered per game and side for the one-stretch check.
const STRETCH_MEMORY: usize = 4096;

/// A kind of problem: the table it is about and a plural description for the count of the
/// examples not shown.
struct Kind {
    table: &'static str,
    what: &'static str,
    limit: u64,
}

const fn kind(table: &'static str, what: &'static str) -> Kind {
    Kind {
        table,
        what,
        limit: EXAMPLES,
    }
}

static INTEGRITY: Kind = Kind {
    table: "sqlite",
    what: "messages from SQLite's integrity check",
    limit: INTEGRITY_MESSAGES,
};
static UNREADABLE: Kind = Kind {
    table: "database",
    what: "tables that cannot be read",
    limit: 100,
};
static DERIVED: Kind = kind("derived", "problems with the derived row");
static GAME_IDS: Kind = kind("games", "games with ids out of range");
static GAME_PLIES: Kind = kind("games", "games with bad plies or moves");
static GAME_SUMMARY: Kind = kind("game_summary", "games and summaries without each other");
static GAME_RUNS: Kind = kind("runs", "games without runs");
static PLY_NUMBERS: Kind = kind("ply_numbers", "problems with ply_numbers");
static SET_IDS: Kind = kind("pawn_sets", "pawn sets with ids out of range");
static SET_PAWNS: Kind = kind("pawn_sets", "pawn sets with impossible pawns or sides");
static SET_FEATURES: Kind = kind("pawn_sets", "pawn sets whose features are wrong");
static ID_SPANS: Kind = kind("ids", "tables whose ids run far past their rows");
static RUN_GAME: Kind = kind("runs", "games in runs that are not in games");
static RUN_PLIES: Kind = kind("runs", "runs outside their game's plies");
static RUN_TILING: Kind = kind("runs", "gaps or overlaps between runs");
static RUN_SETS: Kind = kind("runs", "runs naming missing or wrong-side pawn sets");
static RUN_STRETCH: Kind = kind("runs", "pawn sets back after other sets");
static RUN_VALUES: Kind = kind("runs", "runs with values out of range");
static ORPHANS: Kind = kind("set_totals", "derived rows for ids that are not pawn sets");
static SET_TOTALS: Kind = kind("set_totals", "set_totals rows that differ from the runs");
static SET_GAMES: Kind = kind("set_games", "set_games rows that differ from the runs");
static RUN_STRUCTURE: Kind = kind(
    "runs",
    "runs whose structure is not the catalogue's name of their pawns",
);
static RUN_CODES: Kind = kind(
    "runs",
    "runs whose structure code has no row in structure_names",
);
static NAMES: Kind = kind(
    "structure_names",
    "structure_names rows that differ from the catalogue the runs were named with",
);
static CHANGE_ROWS: Kind = kind(
    "structure_changes",
    "structure_changes rows that differ from the runs",
);
static BISHOPS: Kind = kind(
    "bishop_totals",
    "bishop_totals rows that differ from the runs",
);

/// What a check found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Problems found (all of them, also those not printed).
    pub problems: u64,
    /// Notes (an unfinished database), not problems.
    pub notes: Vec<String>,
    pub games: i64,
    pub runs: u64,
    pub pawn_sets: u64,
}

impl Summary {
    /// The last line of the output.
    #[must_use]
    pub fn last_line(&self) -> String {
        if self.problems == 0 {
            format!(
                "ok: {} games, {} runs, {} pawn sets; SQLite's integrity check and pawndex's \
                 invariants hold",
                self.games, self.runs, self.pawn_sets
            )
        } else {
            format!("{} problem(s) found", self.problems)
        }
    }
}

/// The note for an unfinished database: `pending` games stored by a run that did not finish
/// (above `derived.finished` and `derived.through`). Games of the unmerged tail (above
/// `through`, not above `finished`) are by design and get no note.
#[must_use]
pub fn unfinished_note(pending: i64, db: &Path) -> String {
    let games = if pending == 1 { "game" } else { "games" };
    if super::indexing_now(db) {
        // `pawndex migrate` would wait for the running index's lock: it adds them itself.
        return format!(
            "note: {pending} {games} not yet in the derived tables; a `pawndex index` is writing \
             to {} now and adds them when it finishes",
            db.display()
        );
    }
    format!(
        "note: {pending} {games} not yet in the derived tables; run `pawndex migrate --db {}`",
        db.display()
    )
}

/// Problems as they are found: printed up to each kind's limit, counted beyond it.
struct Findings<'a> {
    out: &'a mut dyn Write,
    counts: Vec<(&'static Kind, u64)>,
    problems: u64,
    notes: Vec<String>,
}

impl Findings<'_> {
    fn count(&self, kind: &'static Kind) -> u64 {
        self.counts
            .iter()
            .find(|(k, _)| std::ptr::eq(*k, kind))
            .map_or(0, |(_, n)| *n)
    }

    /// Whether the next problem of this kind is printed (worth describing in detail).
    fn shows(&self, kind: &'static Kind) -> bool {
        self.count(kind) < kind.limit
    }

    /// Records a problem; `line` is called only when it is printed.
    fn problem(&mut self, kind: &'static Kind, line: impl FnOnce() -> String) -> Result<()> {
        self.problems += 1;
        let n = match self.counts.iter_mut().find(|(k, _)| std::ptr::eq(*k, kind)) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                self.counts.push((kind, 1));
                1
            }
        };
        if n <= kind.limit {
            writeln!(self.out, "{}", line())?;
        }
        Ok(())
    }

    fn note(&mut self, line: String) -> Result<()> {
        writeln!(self.out, "{line}")?;
        self.notes.push(line);
        Ok(())
    }

    /// The counts of the problems not printed.
    fn finish(&mut self) -> Result<()> {
        for (k, n) in &self.counts {
            if *n > k.limit {
                writeln!(
                    self.out,
                    "{}: … and {} more {}",
                    k.table,
                    n - k.limit,
                    k.what
                )?;
            }
        }
        Ok(())
    }

    /// A check that failed with an error: output errors end the command, anything else (a
    /// table SQLite cannot read) is a problem and the other checks go on.
    fn guard(&mut self, what: &str, result: Result<()>) -> Result<()> {
        match result {
            Ok(()) => Ok(()),
            Err(e) if e.downcast_ref::<std::io::Error>().is_some() => Err(e),
            Err(e) => self.problem(&UNREADABLE, || format!("{what}: cannot be read: {e:#}")),
        }
    }
}

/// An integer value, or `None` for any other type.
fn int(v: ValueRef<'_>) -> Option<i64> {
    match v {
        ValueRef::Integer(i) => Some(i),
        _ => None,
    }
}

/// A value for a message.
fn show(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Null => "NULL".to_owned(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(x) => format!("the real {x}"),
        ValueRef::Text(t) => {
            let s: String = String::from_utf8_lossy(t).chars().take(40).collect();
            format!("the text {s:?}")
        }
        ValueRef::Blob(b) => format!("a blob of {} bytes", b.len()),
    }
}

/// "ply 4 is" or "plies 4 to 7 are".
fn uncovered(from: i64, to: i64) -> String {
    if from == to {
        format!("ply {from} is")
    } else {
        format!("plies {from} to {to} are")
    }
}

/// "1 game" or "3 games".
fn n_games(n: i64) -> String {
    if n == 1 {
        "1 game".to_owned()
    } else {
        format!("{n} games")
    }
}

fn side_name(side: i64) -> String {
    match side {
        0 => "a White".to_owned(),
        1 => "a Black".to_owned(),
        s => format!("a side-{s}"),
    }
}

/// Opens `path` read-only, checks it and writes one line per problem and a last summary line
/// to `out`. `Ok` whatever the database holds (see [`Summary::problems`]); `Err` when the file
/// cannot be opened as a pawndex database or `out` fails.
pub fn run(path: &Path, out: &mut dyn Write) -> Result<Summary> {
    // The catalogue in force (a bad PAWNDEX_STRUCTURES folder stops here).
    Catalogue::load_active()?;
    let conn = super::open_read_only(path)?;
    conn.pragma_update(None, "query_only", true)?;
    // 8 MiB of SQLite pages: the reads are passes in key order and look-ups of pawn sets, as
    // fast as with 64 MiB on the masters, and the memory stays with the check's own bounds.
    conn.pragma_update(None, "cache_size", -8_192)?;
    check(&conn, path, out)
}

/// [`run`] to standard output: `Ok(true)` when everything holds.
pub fn run_to_stdout(path: &Path) -> Result<bool> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let summary = run(path, &mut out)?;
    out.flush()?;
    Ok(summary.problems == 0)
}

/// Checks an open database (in one read transaction). `db` names it in messages.
pub fn check(conn: &Connection, db: &Path, out: &mut dyn Write) -> Result<Summary> {
    conn.execute_batch("BEGIN")?;
    let result = check_snapshot(conn, db, out);
    let _ = conn.execute_batch("COMMIT");
    result
}

fn check_snapshot(conn: &Connection, db: &Path, out: &mut dyn Write) -> Result<Summary> {
    let mut f = Findings {
        out,
        counts: Vec::new(),
        problems: 0,
        notes: Vec::new(),
    };
    let mut summary = Summary::default();
    let r = integrity(conn, &mut f);
    f.guard("sqlite", r)?;
    let mut through = None;
    let r = derived_row(conn, &mut f, db).map(|t| through = t);
    f.guard("derived", r)?;
    let r = games(conn, &mut f).map(|n| summary.games = n);
    f.guard("games", r)?;
    let r = pawn_sets(conn, &mut f).map(|n| summary.pawn_sets = n);
    f.guard("pawn_sets", r)?;
    let r = id_spans(conn, &mut f);
    f.guard("games, pawn_sets", r)?;
    let r = runs(conn, &mut f).map(|n| summary.runs = n);
    f.guard("runs", r)?;
    let r = structures(conn, &mut f, db);
    f.guard("runs.structure, structure_changes", r)?;
    let r = orphans(conn, &mut f);
    f.guard("set_totals, set_games", r)?;
    if let Some(through) = through {
        let r = derived_tables(conn, &mut f, through);
        f.guard("set_totals, set_games, bishop_totals", r)?;
    }
    f.finish()?;
    summary.problems = f.problems;
    summary.notes = std::mem::take(&mut f.notes);
    writeln!(f.out, "{}", summary.last_line())?;
    Ok(summary)
}

fn integrity(conn: &Connection, f: &mut Findings) -> Result<()> {
    let mut st = conn.prepare(&format!("PRAGMA integrity_check({INTEGRITY_MESSAGES})"))?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let msg = match r.get_ref(0)? {
            ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
            other => show(other),
        };
        if msg != "ok" {
            f.problem(&INTEGRITY, || format!("sqlite: {msg}"))?;
        }
    }
    Ok(())
}

/// Steps through every row of `sql` (the offending rows), printing the first ones with `line`.
fn offending(
    conn: &Connection,
    f: &mut Findings,
    kind: &'static Kind,
    sql: &str,
    line: impl Fn(&Row) -> rusqlite::Result<String>,
) -> Result<()> {
    let mut st = conn.prepare(sql)?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let text = if f.shows(kind) {
            line(r)?
        } else {
            String::new()
        };
        f.problem(kind, || text)?;
    }
    Ok(())
}

/// The derived row; returns `through` when the derived tables can be checked against it.
fn derived_row(conn: &Connection, f: &mut Findings, db: &Path) -> Result<Option<i64>> {
    let (rows, last_game): (i64, i64) = conn.query_row(
        "SELECT (SELECT count(*) FROM derived), (SELECT coalesce(max(id), 0) FROM games)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if rows != 1 {
        f.problem(&DERIVED, || {
            format!("derived: holds {rows} rows, not 1 (the games the derived tables cover)")
        })?;
    }
    if rows == 0 {
        return Ok(None);
    }
    let ((through, shown), (finished, shown_finished)) =
        conn.query_row("SELECT through, finished FROM derived LIMIT 1", [], |r| {
            let (t, f) = (r.get_ref(0)?, r.get_ref(1)?);
            Ok(((int(t), show(t)), (int(f), show(f))))
        })?;
    let Some(finished) = finished.filter(|&t| t >= 0) else {
        f.problem(&DERIVED, || {
            format!("derived: finished is {shown_finished}, not a game id")
        })?;
        return Ok(None);
    };
    if finished > last_game {
        f.problem(&DERIVED, || {
            format!(
                "derived: finished is {finished} but the last game is {last_game} (no run stored \
                 those games)"
            )
        })?;
    }
    let Some(through) = through.filter(|&t| t >= 0) else {
        f.problem(&DERIVED, || {
            format!("derived: through is {shown}, not a game id")
        })?;
        return Ok(None);
    };
    if through > last_game {
        f.problem(&DERIVED, || {
            format!(
                "derived: through is {through} but the last game is {last_game} (games stored \
                 later would never enter the derived tables)"
            )
        })?;
    } else if last_game > finished.max(through) {
        f.note(unfinished_note(last_game - finished.max(through), db))?;
    }
    Ok(Some(through))
}

/// Checks of `games`, `game_summary` and `ply_numbers`; returns the number of games.
fn games(conn: &Connection, f: &mut Findings) -> Result<i64> {
    let games: i64 = conn.query_row("SELECT count(*) FROM games", [], |r| r.get(0))?;
    offending(
        conn,
        f,
        &GAME_IDS,
        &format!("SELECT id FROM games WHERE id < 1 OR id > {MAX_GAME_ID} ORDER BY id"),
        |r| {
            let id: i64 = r.get(0)?;
            Ok(format!(
                "games: game {id}: id out of range (1 to {MAX_GAME_ID})"
            ))
        },
    )?;
    offending(
        conn,
        f,
        &GAME_PLIES,
        &format!(
            "SELECT id, plies FROM games
             WHERE typeof(plies) != 'integer' OR plies < 0 OR plies > {MAX_PLIES} ORDER BY id"
        ),
        |r| {
            let id: i64 = r.get(0)?;
            Ok(format!(
                "games: game {id}: plies is {}, not 0 to {MAX_PLIES}",
                show(r.get_ref(1)?)
            ))
        },
    )?;
    offending(
        conn,
        f,
        &GAME_PLIES,
        "SELECT id, plies, typeof(moves), length(moves) FROM games
         WHERE typeof(plies) = 'integer'
           AND (typeof(moves) != 'blob' OR length(moves) != 2 * plies)
         ORDER BY id",
        |r| {
            let id: i64 = r.get(0)?;
            let plies = show(r.get_ref(1)?);
            let kind: String = r.get(2)?;
            let len = show(r.get_ref(3)?);
            Ok(if kind == "blob" {
                format!(
                    "games: game {id}: moves holds {len} bytes, not 2 per ply for {plies} plies"
                )
            } else {
                format!("games: game {id}: moves is a {kind} value, not a blob")
            })
        },
    )?;
    offending(
        conn,
        f,
        &GAME_SUMMARY,
        "SELECT g.id FROM games AS g
         WHERE NOT EXISTS (SELECT 1 FROM game_summary AS s WHERE s.game_id = g.id)
         ORDER BY g.id",
        |r| {
            let id: i64 = r.get(0)?;
            Ok(format!("game_summary: game {id} has no row"))
        },
    )?;
    offending(
        conn,
        f,
        &GAME_SUMMARY,
        "SELECT s.game_id FROM game_summary AS s
         WHERE NOT EXISTS (SELECT 1 FROM games AS g WHERE g.id = s.game_id)
         ORDER BY s.game_id",
        |r| {
            let id: i64 = r.get(0)?;
            Ok(format!(
                "game_summary: row for game {id}, which is not in games"
            ))
        },
    )?;
    offending(
        conn,
        f,
        &GAME_RUNS,
        "SELECT g.id FROM games AS g
         WHERE NOT EXISTS (SELECT 1 FROM runs AS r WHERE r.game_id = g.id)
         ORDER BY g.id",
        |r| {
            let id: i64 = r.get(0)?;
            Ok(format!("runs: game {id} has no runs"))
        },
    )?;
    let (count, min, max, longest): (i64, Option<i64>, Option<i64>, Option<i64>) = conn.query_row(
        "SELECT (SELECT count(*) FROM ply_numbers), (SELECT min(n) FROM ply_numbers),
                    (SELECT max(n) FROM ply_numbers),
                    (SELECT max(plies) FROM games WHERE typeof(plies) = 'integer')",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
    // `n` is the INTEGER PRIMARY KEY: distinct integers, so 0..=max exactly when min is 0
    // and there are max + 1 of them.
    let contiguous = min == Some(0) && max.and_then(|m| m.checked_add(1)) == Some(count);
    let enough = longest.is_none_or(|l| max.is_some_and(|m| m >= l));
    if count > 0 && !contiguous {
        f.problem(&PLY_NUMBERS, || {
            format!(
                "ply_numbers: holds {count} numbers from {} to {}, not 0, 1, 2, … without gaps",
                min.unwrap_or(0),
                max.unwrap_or(0)
            )
        })?;
    }
    if !enough {
        f.problem(&PLY_NUMBERS, || {
            format!(
                "ply_numbers: goes to {} but the longest game has {} plies (ply_features \
                 would miss its last positions)",
                max.map_or_else(|| "nothing".to_owned(), |m| m.to_string()),
                longest.unwrap_or(0)
            )
        })?;
    }
    Ok(games)
}

/// Games and pawn sets whose ids run far past their rows ([`super::ids::dense`]): the readers
/// that keep a slot per id (`similar`, `stats`) refuse such a database and name this check.
fn id_spans(conn: &Connection, f: &mut Findings) -> Result<()> {
    for (table, what) in [("games", "games"), ("pawn_sets", "pawn sets")] {
        let (hi, rows): (i64, i64) = conn.query_row(
            &format!("SELECT coalesce(max(id), 0), count(*) FROM {table}"),
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        if !super::ids::dense(1, hi, rows) {
            f.problem(&ID_SPANS, || {
                format!(
                    "{table}: ids run up to {hi} for {rows} {what}; pawndex numbers them from 1 \
                     without gaps (similar and stats refuse the database)"
                )
            })?;
        }
    }
    Ok(())
}

/// Streams `pawn_sets`; returns how many there are.
fn pawn_sets(conn: &Connection, f: &mut Findings) -> Result<u64> {
    const RANKS_1_AND_8: u64 = 0xFF00_0000_0000_00FF;
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
            f.problem(&SET_IDS, || {
                format!(
                    "pawn_sets: set {id}: id out of range (1 to {})",
                    SET_ID_END - 1
                )
            })?;
        }
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
            f.problem(&SET_PAWNS, || {
                format!("pawn_sets: set {id}: {}, not an integer", bad.join(", "))
            })?;
            continue;
        }
        let [
            side,
            pawns,
            islands,
            dispersion,
            distortion,
            duo,
            trio,
            quart,
        ] = v;
        let pawns = pawns as u64; // bitboards are stored as i64 with the same bits
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
            f.problem(&SET_PAWNS, || {
                format!("pawn_sets: set {id}: {}", wrong.join("; "))
            })?;
        }
        if side != 0 && side != 1 {
            continue;
        }
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
            f.problem(&SET_FEATURES, || {
                format!(
                    "pawn_sets: set {id} (pawns {pawns:#018x}): {}",
                    differ.join("; ")
                )
            })?;
        }
    }
    Ok(n)
}

/// One side's pawn sets in the game being read: the current one and the earlier ones.
#[derive(Default)]
struct Stretches {
    current: Option<i64>,
    earlier: Vec<i64>,
}

/// The runs of the game being read.
struct GameRuns {
    id: i64,
    /// The game is in `games`.
    exists: bool,
    /// Its plies, when it exists and they are an integer.
    plies: Option<i64>,
    /// The ply the next run should start at (`None` after a run whose plies are unreadable).
    next: Option<i64>,
    first_run: bool,
    sets: [Stretches; 2],
}

impl GameRuns {
    fn new(id: i64, plies: ValueRef<'_>) -> GameRuns {
        GameRuns {
            id,
            exists: !matches!(plies, ValueRef::Null),
            plies: int(plies),
            next: Some(0),
            first_run: true,
            sets: Default::default(),
        }
    }

    /// Checks one run (a row of the query in [`runs`]).
    fn run(&mut self, r: &Row, f: &mut Findings) -> Result<()> {
        let id = self.id;
        let first_value = r.get_ref(1)?;
        let last_value = r.get_ref(2)?;
        let (Some(first), Some(last)) = (int(first_value), int(last_value)) else {
            let (a, b) = (show(first_value), show(last_value));
            f.problem(&RUN_VALUES, || {
                format!("runs: game {id}: a run has first_ply {a} and last_ply {b}, not integers")
            })?;
            self.next = None;
            return Ok(());
        };
        let at = format!("runs: game {id} run at ply {first}");
        if first < 0 {
            f.problem(&RUN_PLIES, || format!("{at}: first_ply is negative"))?;
        }
        if last < first {
            f.problem(&RUN_PLIES, || {
                format!("{at}: last_ply {last} < first_ply {first}")
            })?;
        } else if let Some(p) = self.plies
            && last > p
        {
            f.problem(&RUN_PLIES, || {
                format!("{at}: last_ply {last} is past the game's last ply ({p} plies)")
            })?;
        }
        if self.exists {
            match self.next {
                Some(0) if self.first_run && first != 0 => {
                    f.problem(&RUN_TILING, || {
                        format!("runs: game {id}: the first run starts at ply {first}, not 0")
                    })?;
                }
                Some(n) if first > n => {
                    f.problem(&RUN_TILING, || {
                        format!(
                            "runs: game {id}: {} in no run",
                            uncovered(n, first.saturating_sub(1))
                        )
                    })?;
                }
                Some(n) if first < n => {
                    f.problem(&RUN_TILING, || {
                        format!(
                            "{at}: overlaps the run before it, which ends at ply {}",
                            n.saturating_sub(1)
                        )
                    })?;
                }
                _ => {}
            }
        }
        let ends = if last >= first {
            last.saturating_add(1)
        } else {
            first
        };
        self.next = Some(self.next.map_or(ends, |n| n.max(ends)));
        self.first_run = false;

        for (side, name) in [(0usize, "white_set"), (1, "black_set")] {
            let value = r.get_ref(3 + side)?;
            let Some(set) = int(value) else {
                let shown = show(value);
                f.problem(&RUN_VALUES, || format!("{at}: {name} is {shown}"))?;
                continue;
            };
            let stored_side = r.get_ref(8 + side)?;
            match stored_side {
                ValueRef::Null => f.problem(&RUN_SETS, || {
                    format!("{at}: {name} {set} is not in pawn_sets")
                })?,
                ValueRef::Integer(s) if s == side as i64 => {}
                other => {
                    let what = int(other).map_or_else(
                        || format!("a pawn set with side {}", show(other)),
                        |s| format!("{} pawn set", side_name(s)),
                    );
                    f.problem(&RUN_SETS, || format!("{at}: {name} {set} is {what}"))?;
                }
            }
            let s = &mut self.sets[side];
            if s.current != Some(set) {
                if s.earlier.contains(&set) {
                    f.problem(&RUN_STRETCH, || {
                        format!(
                            "{at}: {name} {set} comes back after other sets (a pawn set holds \
                             one stretch of a game)"
                        )
                    })?;
                }
                if let Some(c) = s.current
                    && s.earlier.len() < STRETCH_MEMORY
                {
                    s.earlier.push(c);
                }
                s.current = Some(set);
            }
        }
        let bishops = r.get_ref(6)?;
        if !int(bishops).is_some_and(|b| (0..=3).contains(&b)) {
            let shown = show(bishops);
            f.problem(&RUN_VALUES, || {
                format!("{at}: bishop_pairs is {shown}, not 0 to 3")
            })?;
        }
        let missing = r.get_ref(5)?;
        if !int(missing).is_some_and(|m| (0..=i64::from(u32::MAX)).contains(&m)) {
            let shown = show(missing);
            f.problem(&RUN_VALUES, || {
                format!("{at}: missing is {shown}, not 0 to {}", u32::MAX)
            })?;
        }
        Ok(())
    }

    /// After the game's last run: the runs must end at its last ply.
    fn finish(self, f: &mut Findings) -> Result<()> {
        if let (true, Some(p), Some(n)) = (self.exists, self.plies, self.next)
            && n <= p
        {
            let id = self.id;
            f.problem(&RUN_TILING, || {
                format!(
                    "runs: game {id}: {} in no run (the game has {p} plies)",
                    uncovered(n, p)
                )
            })?;
        }
        Ok(())
    }
}

/// Streams `runs` in key order with their game and pawn sets; returns how many there are.
fn runs(conn: &Connection, f: &mut Findings) -> Result<u64> {
    let mut st = conn.prepare(
        "SELECT r.game_id, r.first_ply, r.last_ply, r.white_set, r.black_set, r.missing,
                r.bishop_pairs, g.plies, w.side, b.side
         FROM runs AS r
         LEFT JOIN games AS g ON g.id = r.game_id
         LEFT JOIN pawn_sets AS w ON w.id = r.white_set
         LEFT JOIN pawn_sets AS b ON b.id = r.black_set
         ORDER BY r.game_id, r.first_ply",
    )?;
    let mut rows = st.query([])?;
    let mut n = 0u64;
    let mut game: Option<GameRuns> = None;
    while let Some(r) = rows.next()? {
        n += 1;
        let id_value = r.get_ref(0)?;
        let Some(id) = int(id_value) else {
            let shown = show(id_value);
            f.problem(&RUN_VALUES, || format!("runs: a run has game_id {shown}"))?;
            continue;
        };
        if game.as_ref().is_none_or(|g| g.id != id) {
            if let Some(done) = game.take() {
                done.finish(f)?;
            }
            let g = GameRuns::new(id, r.get_ref(7)?);
            if !g.exists {
                let first = show(r.get_ref(1)?);
                f.problem(&RUN_GAME, || {
                    format!("runs: game {id} (run at ply {first}): no such game in games")
                })?;
            }
            game = Some(g);
        }
        if let Some(g) = game.as_mut() {
            g.run(r, f)?;
        }
    }
    if let Some(done) = game.take() {
        done.finish(f)?;
    }
    Ok(n)
}

/// The expected row of `structure_changes` for a run: the ply where a game's structure
/// changes, from and to.
type Change = (i64, i64, i64, i64);

/// `structure_changes` read in key order, compared with the changes the runs imply.
struct ChangeRows<'a> {
    rows: rusqlite::Rows<'a>,
    /// The next row not yet compared: (game, ply, from, to, whether `move` is right for the
    /// ply: NULL at ply 0, text after).
    next: Option<(i64, i64, i64, i64, bool)>,
}

impl ChangeRows<'_> {
    fn advance(&mut self, f: &mut Findings) -> Result<()> {
        self.next = None;
        while let Some(r) = self.rows.next()? {
            let vals = [r.get_ref(0)?, r.get_ref(1)?, r.get_ref(2)?, r.get_ref(3)?];
            let [Some(g), Some(p), Some(from), Some(to)] = vals.map(int) else {
                let shown = vals.map(show).join(", ");
                f.problem(&CHANGE_ROWS, || {
                    format!("structure_changes: a row with values {shown} that are not integers")
                })?;
                continue;
            };
            let move_ok = match r.get_ref(4)? {
                ValueRef::Null => p == 0,
                ValueRef::Text(t) => p > 0 && !t.is_empty(),
                _ => false,
            };
            self.next = Some((g, p, from, to, move_ok));
            return Ok(());
        }
        Ok(())
    }

    /// Compares the rows up to and including `want` (or all left, with `None`).
    fn expect(
        &mut self,
        want: Option<Change>,
        naive: &naive::Naive,
        f: &mut Findings,
    ) -> Result<()> {
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
                    f.problem(&CHANGE_ROWS, || {
                        format!("structure_changes: game {g} ply {p}: from {a} to {b}, but the runs change from {c} to {d}")
                    })?;
                } else if !move_ok {
                    f.problem(&CHANGE_ROWS, || {
                        format!("structure_changes: game {g} ply {p}: the move is missing, or given at ply 0")
                    })?;
                }
                self.advance(f)?;
                return Ok(());
            }
            let (a, b) = (naive.name(from), naive.name(to));
            f.problem(&CHANGE_ROWS, || {
                format!("structure_changes: game {g} ply {p}: a change from {a} to {b} where the runs have none")
            })?;
            self.advance(f)?;
        }
        if let Some((g, p, from, to)) = want {
            let (a, b) = (naive.name(from), naive.name(to));
            f.problem(&CHANGE_ROWS, || {
                format!("structure_changes: game {g} ply {p}: no row for the change from {a} to {b} in the runs")
            })?;
        }
        Ok(())
    }
}

/// The named structures: the stored catalogue is the one in force (else a note), every run's
/// code is the naive classification of its pawns, and `structure_changes` holds exactly the
/// changes between consecutive runs of each game.
fn structures(conn: &Connection, f: &mut Findings, db: &Path) -> Result<()> {
    let catalogue = Catalogue::active();
    let naive = naive::Naive::read(catalogue.texts())?;
    let named = structure_names(conn, f)?;
    // The runs are compared with the catalogue in force when they were named with its rules.
    let current = super::structures::rules_current(conn, catalogue)?;
    if !current {
        f.note(format!(
            "note: the runs were named with another structure catalogue than the one in force \
             (runs.structure is not compared with it); `pawndex migrate --db {}` re-classifies \
             them",
            db.display()
        ))?;
    } else if f.count(&NAMES) == 0 && !super::structures::is_current(conn, catalogue)? {
        f.note(format!(
            "note: the structures' names or descriptions in the database are not those of the \
             catalogue in force; `pawndex migrate --db {}` rewrites them",
            db.display()
        ))?;
    }
    let mut st = conn.prepare(
        "SELECT game_id, ply, from_structure, to_structure, move
         FROM structure_changes ORDER BY game_id, ply",
    )?;
    let mut changes = ChangeRows {
        rows: st.query([])?,
        next: None,
    };
    changes.advance(f)?;
    let mut runs = conn.prepare(
        "SELECT r.game_id, r.first_ply, r.structure, r.white_set, r.black_set, w.pawns, b.pawns
         FROM runs AS r
         LEFT JOIN pawn_sets AS w ON w.id = r.white_set
         LEFT JOIN pawn_sets AS b ON b.id = r.black_set
         ORDER BY r.game_id, r.first_ply",
    )?;
    let mut rows = runs.query([])?;
    // The forms each pawn set meets, by set id, within a byte budget.
    let forms = naive.forms.len();
    let mut white_sets = SideCache::new(forms, STRUCTURE_CACHE_BYTES);
    let mut black_sets = SideCache::new(forms, STRUCTURE_CACHE_BYTES);
    // (game, code) of the run before.
    let mut before: Option<(i64, i64)> = None;
    while let Some(r) = rows.next()? {
        let (Some(g), Some(ply), Some(code)) =
            (int(r.get_ref(0)?), int(r.get_ref(1)?), int(r.get_ref(2)?))
        else {
            // Reported by the runs check.
            continue;
        };
        if code != 0 {
            let id = usize::try_from(code >> 1).ok();
            match id.and_then(|id| named.get(id).copied().flatten()) {
                Some(reversed) if code & 1 == 0 || reversed => {}
                Some(_) => f.problem(&RUN_CODES, || {
                    format!(
                        "runs: game {g} ply {ply}: structure code {code}, the reversed form of \
                         row {} of structure_names, which has none",
                        code >> 1
                    )
                })?,
                None => f.problem(&RUN_CODES, || {
                    format!(
                        "runs: game {g} ply {ply}: structure code {code} has no row in \
                         structure_names (no row {})",
                        code >> 1
                    )
                })?,
            }
        }
        if current
            && let (Some(ws), Some(bs), Some(wp), Some(bp)) = (
                int(r.get_ref(3)?),
                int(r.get_ref(4)?),
                int(r.get_ref(5)?),
                int(r.get_ref(6)?),
            )
        {
            let white = white_sets.get(ws, || naive.side_matches(&naive::board(wp as u64), true));
            let black = black_sets.get(bs, || naive.side_matches(&naive::board(bp as u64), false));
            let want = i64::from(naive.pick(white, black));
            if want != code {
                let (a, b) = (naive.name(code), naive.name(want));
                f.problem(&RUN_STRUCTURE, || {
                    format!(
                        "runs: game {g} ply {ply}: structure {a}, but the pawns (White {wp:#x}, \
                         Black {bp:#x}) form {b}"
                    )
                })?;
            }
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
fn structure_names(conn: &Connection, f: &mut Findings) -> Result<Vec<Option<bool>>> {
    let fingerprint: String =
        conn.query_row("SELECT fingerprint FROM structure_catalogue", [], |r| {
            r.get(0)
        })?;
    let expected = crate::model::structure::fingerprint_structures(&fingerprint);
    if expected.is_none() {
        f.problem(&NAMES, || {
            "structure_catalogue: the fingerprint is not one pawndex writes, so structure_names \
             cannot be compared with the catalogue the runs were named with"
                .to_owned()
        })?;
    }
    let mut expected: HashMap<i64, (String, bool, bool)> = expected
        .unwrap_or_default()
        .into_iter()
        .map(|(id, key, reversed)| (i64::from(id), (key, reversed, false)))
        .collect();
    let flag = |r: bool| if r { "reversed = 1" } else { "reversed = 0" };
    let mut named = vec![None; usize::from(crate::model::structure::Code::MAX / 2) + 1];
    let mut st = conn.prepare("SELECT id, key, reversed FROM structure_names ORDER BY id")?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let (id, key, reversed) = (r.get_ref(0)?, r.get_ref(1)?, r.get_ref(2)?);
        let (Some(id), ValueRef::Text(key), Some(reversed @ (0 | 1))) =
            (int(id), key, int(reversed))
        else {
            let shown = [id, key, reversed].map(show).join(", ");
            f.problem(&NAMES, || {
                format!("structure_names: a row with values {shown} that are not an id, a key and 0 or 1")
            })?;
            continue;
        };
        let key = String::from_utf8_lossy(key);
        let reversed = reversed == 1;
        if let Some(slot) = usize::try_from(id).ok().and_then(|i| named.get_mut(i)) {
            *slot = Some(reversed);
        }
        match expected.get_mut(&id) {
            None => f.problem(&NAMES, || {
                format!(
                    "structure_names: row {id} ({key}) is not a structure of the catalogue the \
                     runs were named with"
                )
            })?,
            Some((want, want_reversed, seen)) => {
                *seen = true;
                if *want != key {
                    f.problem(&NAMES, || {
                        format!(
                            "structure_names: row {id} is {key}, but the catalogue the runs were \
                             named with has {want} there"
                        )
                    })?;
                } else if *want_reversed != reversed {
                    f.problem(&NAMES, || {
                        format!(
                            "structure_names: row {id} ({key}) has {}, but the catalogue the runs \
                             were named with has {}",
                            flag(reversed),
                            flag(*want_reversed)
                        )
                    })?;
                }
            }
        }
    }
    let mut missing: Vec<(i64, String)> = expected
        .into_iter()
        .filter(|(_, (_, _, seen))| !seen)
        .map(|(id, (key, _, _))| (id, key))
        .collect();
    missing.sort_unstable();
    for (id, key) in missing {
        f.problem(&NAMES, || {
            format!(
                "structure_names: no row {id} for {key}, a structure of the catalogue the runs \
                 were named with"
            )
        })?;
    }
    Ok(named)
}

/// Rows of the derived tables for ids that are not pawn sets.
fn orphans(conn: &Connection, f: &mut Findings) -> Result<()> {
    for table in ["set_totals", "set_games"] {
        offending(
            conn,
            f,
            &ORPHANS,
            &format!(
                "SELECT t.set_id FROM {table} AS t
                 WHERE NOT EXISTS (SELECT 1 FROM pawn_sets AS s WHERE s.id = t.set_id)
                 ORDER BY t.set_id"
            ),
            |r| {
                let id: i64 = r.get(0)?;
                Ok(format!(
                    "{table}: row for set {id}, which is not in pawn_sets"
                ))
            },
        )?;
    }
    Ok(())
}

/// What the runs of the games up to `through` give one pawn set.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct Acc {
    positions: i64,
    games: i64,
    /// Positions in games won by White, drawn, won by Black.
    results: [i64; 3],
    /// White Elo sum, positions with a White Elo, Black Elo sum, positions with a Black Elo.
    elo: [i64; 4],
    last_game: i64,
    /// [`fold`] of the distinct games in ascending order.
    fingerprint: u64,
}

impl Acc {
    fn add(
        &mut self,
        game: i64,
        plies: i64,
        outcome: Option<usize>,
        white_elo: Option<i64>,
        black_elo: Option<i64>,
    ) {
        if self.games == 0 || self.last_game != game {
            self.games += 1;
            self.last_game = game;
            self.fingerprint = fold(self.fingerprint, game);
        }
        self.positions = self.positions.saturating_add(plies);
        if let Some(o) = outcome
            && let Some(r) = self.results.get_mut(o)
        {
            *r = r.saturating_add(plies);
        }
        for (i, elo) in [(0, white_elo), (2, black_elo)] {
            if let Some(e) = elo {
                self.elo[i] = self.elo[i].saturating_add(e.saturating_mul(plies));
                self.elo[i + 1] = self.elo[i + 1].saturating_add(plies);
            }
        }
    }

    /// In the column order of `set_totals`.
    fn totals(&self) -> [i64; 9] {
        let [w, d, b] = self.results;
        let [we, wp, be, bp] = self.elo;
        [self.positions, self.games, w, d, b, we, wp, be, bp]
    }
}

/// An order-sensitive fingerprint of a list of game ids, one id at a time.
fn fold(h: u64, id: i64) -> u64 {
    let mut z = (h.rotate_left(23) ^ id as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Bytes of the canonical encoding of a game list (LEB128 varints of the differences, the
/// first from 0), as `pawndex index` writes it; `None` if the ids are not ascending.
fn encoded_len(ids: &[i64]) -> Option<usize> {
    let mut last = 0i64;
    let mut len = 0usize;
    for &id in ids {
        let diff = id.checked_sub(last).filter(|&d| d >= 0)? as u64;
        len += (64 - diff.leading_zeros() as usize).div_ceil(7).max(1);
        last = id;
    }
    Some(len)
}

/// An Elo as derive.rs counts it: an integer, clamped to 1..=65535; anything else is unrated.
fn elo(v: ValueRef<'_>) -> Option<i64> {
    int(v).map(|e| e.clamp(1, i64::from(u16::MAX)))
}

/// The position of pawn set `set` in a window starting at `start` of `len` ids.
fn slot(set: i64, start: i64, len: usize) -> Option<usize> {
    let i = usize::try_from(set.checked_sub(start)?).ok()?;
    (i < len).then_some(i)
}

/// `set_totals`, `set_games` and `bishop_totals` against the runs of the games up to
/// `through`, in windows of pawn-set ids.
fn derived_tables(conn: &Connection, f: &mut Findings, through: i64) -> Result<()> {
    let mut lo = 1i64;
    let mut first = true;
    loop {
        let (start, max): (Option<i64>, Option<i64>) = conn.query_row(
            "SELECT min(id), max(id) FROM pawn_sets WHERE id >= ?1 AND id < ?2
               AND id < (SELECT min(id) FROM pawn_sets WHERE id >= ?1) + ?3",
            params![lo, SET_ID_END, SETS_PER_PASS],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let window = match (start, max) {
            (Some(s), Some(m)) if m >= s => {
                let len = usize::try_from(m - s + 1)?;
                Some((s, s.saturating_add(SETS_PER_PASS).min(SET_ID_END), len))
            }
            _ => None,
        };
        if window.is_none() && !first {
            break;
        }
        let (start, end, len) = window.unwrap_or((1, 1, 0));
        let mut acc = vec![Acc::default(); len];
        let mut bishops = [0i64; 4];
        gather(
            conn,
            through,
            start,
            &mut acc,
            first.then_some(&mut bishops),
        )?;
        if first {
            compare_bishops(conn, f, &bishops)?;
        }
        if window.is_some() {
            compare_totals(conn, f, start, end, &acc)?;
            compare_games(conn, f, through, start, end, &acc)?;
        }
        first = false;
        if window.is_none() || end <= lo {
            break;
        }
        lo = end;
    }
    Ok(())
}

/// One pass over the runs of the games up to `through`: what they give the pawn sets
/// `start..start + acc.len()`, and the positions by bishop-pair state when asked.
fn gather(
    conn: &Connection,
    through: i64,
    start: i64,
    acc: &mut [Acc],
    mut bishops: Option<&mut [i64; 4]>,
) -> Result<()> {
    if acc.is_empty() && bishops.is_none() {
        return Ok(());
    }
    let mut st = conn.prepare_cached(
        "SELECT r.game_id, r.first_ply, r.last_ply, r.white_set, r.black_set, r.bishop_pairs,
                g.result, g.white_elo, g.black_elo
         FROM runs AS r JOIN games AS g ON g.id = r.game_id
         WHERE r.game_id BETWEEN 1 AND ?1
         ORDER BY r.game_id, r.first_ply",
    )?;
    let mut rows = st.query([through])?;
    while let Some(r) = rows.next()? {
        let (Some(game), Some(first), Some(last)) =
            (int(r.get_ref(0)?), int(r.get_ref(1)?), int(r.get_ref(2)?))
        else {
            continue;
        };
        let plies = last.saturating_sub(first).saturating_add(1).max(0);
        if let Some(b) = bishops.as_deref_mut()
            && let Some(bp) = int(r.get_ref(5)?)
        {
            let i = (bp & 3) as usize; // as derive.rs counts it
            b[i] = b[i].saturating_add(plies);
        }
        if acc.is_empty() {
            continue;
        }
        let outcome = match Outcome::parse_bytes(r.get_ref(6)?.as_bytes_or_null().ok().flatten()) {
            Outcome::Unknown => None,
            o => Some(o.index()),
        };
        let white_elo = elo(r.get_ref(7)?);
        let black_elo = elo(r.get_ref(8)?);
        for col in [3, 4] {
            if let Some(set) = int(r.get_ref(col)?)
                && let Some(i) = slot(set, start, acc.len())
            {
                acc[i].add(game, plies, outcome, white_elo, black_elo);
            }
        }
    }
    Ok(())
}

fn compare_bishops(conn: &Connection, f: &mut Findings, bishops: &[i64; 4]) -> Result<()> {
    let mut st = conn.prepare("SELECT bishop_pairs, positions FROM bishop_totals ORDER BY 1")?;
    let mut rows = st.query([])?;
    let mut seen = [false; 4];
    while let Some(r) = rows.next()? {
        let key: i64 = r.get(0)?; // INTEGER PRIMARY KEY
        let Some(i) = usize::try_from(key).ok().filter(|&i| i < 4) else {
            f.problem(&BISHOPS, || {
                format!("bishop_totals: row for bishop_pairs {key} (only 0 to 3 exist)")
            })?;
            continue;
        };
        seen[i] = true;
        let stored = r.get_ref(1)?;
        if int(stored) != Some(bishops[i]) {
            let shown = show(stored);
            let want = bishops[i];
            f.problem(&BISHOPS, || {
                format!(
                    "bishop_totals: bishop_pairs {key}: positions is {shown}, the runs give {want}"
                )
            })?;
        }
    }
    for (i, &n) in bishops.iter().enumerate() {
        if !seen[i] && n > 0 {
            f.problem(&BISHOPS, || {
                format!("bishop_totals: no row for bishop_pairs {i} (the runs give {n} positions)")
            })?;
        }
    }
    Ok(())
}

/// The sets of `acc[from..to]` that the runs reach but that have no row in `table`.
fn missing_rows(
    f: &mut Findings,
    kind: &'static Kind,
    table: &str,
    start: i64,
    acc: &[Acc],
    from: usize,
    to: usize,
) -> Result<()> {
    for (i, a) in acc.iter().enumerate().take(to).skip(from) {
        if a.games > 0 {
            let set = start.saturating_add(i as i64);
            let (p, g) = (a.positions, a.games);
            f.problem(kind, || {
                format!(
                    "{table}: set {set} has no row (the runs give {p} positions in {})",
                    n_games(g)
                )
            })?;
        }
    }
    Ok(())
}

fn compare_totals(
    conn: &Connection,
    f: &mut Findings,
    start: i64,
    end: i64,
    acc: &[Acc],
) -> Result<()> {
    const COLUMNS: [&str; 9] = [
        "positions",
        "games",
        "white_wins",
        "draws",
        "black_wins",
        "white_elo_sum",
        "white_elo_positions",
        "black_elo_sum",
        "black_elo_positions",
    ];
    let mut st = conn.prepare_cached(
        "SELECT set_id, positions, games, white_wins, draws, black_wins, white_elo_sum,
                white_elo_positions, black_elo_sum, black_elo_positions
         FROM set_totals WHERE set_id >= ?1 AND set_id < ?2 ORDER BY set_id",
    )?;
    let mut rows = st.query([start, end])?;
    let mut next = 0usize;
    while let Some(r) = rows.next()? {
        let set: i64 = r.get(0)?; // INTEGER PRIMARY KEY
        let i = slot(set, start, acc.len());
        let upto = i.unwrap_or(acc.len());
        missing_rows(f, &SET_TOTALS, "set_totals", start, acc, next, upto)?;
        next = next.max(i.map_or(acc.len(), |i| i + 1));
        let want = i.map(|i| acc[i]).unwrap_or_default().totals();
        let mut differ = Vec::new();
        for (c, name) in COLUMNS.iter().enumerate() {
            let stored = r.get_ref(c + 1)?;
            if int(stored) != Some(want[c]) {
                differ.push(format!(
                    "{name} is {}, the runs give {}",
                    show(stored),
                    want[c]
                ));
            }
        }
        if !differ.is_empty() {
            f.problem(&SET_TOTALS, || {
                format!("set_totals: set {set}: {}", differ.join("; "))
            })?;
        }
    }
    missing_rows(f, &SET_TOTALS, "set_totals", start, acc, next, acc.len())
}

fn compare_games(
    conn: &Connection,
    f: &mut Findings,
    through: i64,
    start: i64,
    end: i64,
    acc: &[Acc],
) -> Result<()> {
    // A valid list holds at most `through` ids of at most 10 bytes each: a longer blob is not
    // decoded (its ids would take 8 bytes each in memory).
    let max_bytes = u64::try_from(through)
        .unwrap_or(0)
        .saturating_mul(10)
        .saturating_add(16);
    let mut st = conn.prepare_cached(
        "SELECT set_id, last_game, games FROM set_games
         WHERE set_id >= ?1 AND set_id < ?2 ORDER BY set_id",
    )?;
    let mut rows = st.query([start, end])?;
    let mut next = 0usize;
    while let Some(r) = rows.next()? {
        let set: i64 = r.get(0)?; // INTEGER PRIMARY KEY
        let i = slot(set, start, acc.len());
        let upto = i.unwrap_or(acc.len());
        missing_rows(f, &SET_GAMES, "set_games", start, acc, next, upto)?;
        next = next.max(i.map_or(acc.len(), |i| i + 1));
        let want = i.map(|i| acc[i]).unwrap_or_default();
        let mut parts = Vec::new();
        let bytes = match r.get_ref(2)? {
            ValueRef::Blob(b) => Some(b),
            ValueRef::Text(t) => {
                // SQLite's `||` turns blobs into text: an append written that way.
                parts.push(format!(
                    "games is text ({} bytes), not a blob, so queries cannot read it",
                    t.len()
                ));
                Some(t)
            }
            other => {
                parts.push(format!("games is {}, not a blob", show(other)));
                None
            }
        };
        match bytes {
            None => {}
            Some(blob) if blob.len() as u64 > max_bytes => parts.push(format!(
                "the list is {} bytes, more than any list of the {through} games up to \
                 derived.through",
                blob.len()
            )),
            Some(blob) => {
                let ids = decode_games(blob);
                match encoded_len(&ids) {
                    Some(n) if n == blob.len() => {}
                    Some(n) => parts.push(format!(
                        "the list is damaged: its {} bytes give {} game ids, which take {n} bytes",
                        blob.len(),
                        ids.len()
                    )),
                    None => {}
                }
                if let Some(w) = ids.windows(2).find(|w| w[1] <= w[0]) {
                    parts.push(format!("the list has game {} twice", w[1]));
                }
                if ids.is_empty() && want.games == 0 {
                    parts.push("the list is empty".to_owned());
                }
                let fingerprint = ids.iter().fold(0, |h, &id| fold(h, id));
                let count = i64::try_from(ids.len()).unwrap_or(i64::MAX);
                if (count, fingerprint) != (want.games, want.fingerprint) {
                    let detail = if f.shows(&SET_GAMES) {
                        first_difference(conn, through, set, &ids)?
                    } else {
                        String::new()
                    };
                    parts.push(format!(
                        "the list has {}, the runs give {}{detail}",
                        n_games(count),
                        n_games(want.games)
                    ));
                }
            }
        }
        let last = r.get_ref(1)?;
        if want.games > 0 && int(last) != Some(want.last_game) {
            parts.push(format!(
                "last_game is {} but the last game reaching the set is {}",
                show(last),
                want.last_game
            ));
        }
        if !parts.is_empty() {
            f.problem(&SET_GAMES, || {
                format!("set_games: set {set}: {}", parts.join("; "))
            })?;
        }
    }
    missing_rows(f, &SET_GAMES, "set_games", start, acc, next, acc.len())
}

/// Where a set's game list first differs from the games whose runs reach it (one pass over
/// the runs), as `": it …"`.
fn first_difference(conn: &Connection, through: i64, set: i64, listed: &[i64]) -> Result<String> {
    let mut st = conn.prepare_cached(
        "SELECT r.game_id FROM runs AS r JOIN games AS g ON g.id = r.game_id
         WHERE r.game_id BETWEEN 1 AND ?1 AND (r.white_set = ?2 OR r.black_set = ?2)
         ORDER BY r.game_id, r.first_ply",
    )?;
    let mut rows = st.query([through, set])?;
    let mut i = 0usize;
    let mut previous = None;
    while let Some(r) = rows.next()? {
        let Some(game) = int(r.get_ref(0)?) else {
            continue;
        };
        if previous == Some(game) {
            continue;
        }
        // A game listed twice is reported on its own.
        while i > 0 && listed.get(i).is_some() && listed.get(i) == listed.get(i - 1) {
            i += 1;
        }
        previous = Some(game);
        match listed.get(i) {
            Some(&l) if l == game => i += 1,
            Some(&l) if l < game => {
                return Ok(format!(": it lists game {l}, which does not reach the set"));
            }
            _ => return Ok(format!(": it misses game {game}")),
        }
    }
    while i > 0 && listed.get(i).is_some() && listed.get(i) == listed.get(i - 1) {
        i += 1;
    }
    Ok(match listed.get(i) {
        Some(&l) => format!(": it lists game {l}, which does not reach the set"),
        None => String::new(),
    })
}

/// An independent reading of the structure catalogue for the check: the TOML texts of the
/// catalogue in force read as plain `toml` tables, and a position classified square by square
/// on an 8x8 board, with the match rule of [`crate::model::structure`] (higher priority first, then
/// more conditions, then the key; the normal form before the reversed one). Shares nothing with
/// the bitboard rules the index uses, so a mistake in either shows as a difference.
mod naive {
    use anyhow::{Context, Result, bail};

    /// A square as (file 0..8, rank 0..8): a2 is (0, 1).
    type Square = (usize, usize);

    /// One side's pawns on a board: `[rank][file]`.
    pub type Board = [[bool; 8]; 8];

    /// The board of a pawn bitboard (a1 = bit 0).
    pub fn board(pawns: u64) -> Board {
        let mut b = [[false; 8]; 8];
        for (rank, row) in b.iter_mut().enumerate() {
            for (file, cell) in row.iter_mut().enumerate() {
                *cell = pawns >> (rank * 8 + file) & 1 == 1;
            }
        }
        b
    }

    /// One side's conditions as written in the file.
    #[derive(Clone, Debug, Default)]
    struct Side {
        pawns: Vec<Square>,
        /// Squares, a whole file already spelled out as its squares on ranks 2 to 7.
        none: Vec<Square>,
        one_of: Vec<Vec<Square>>,
        /// (files, min, max)
        count: Vec<(Vec<usize>, i64, i64)>,
    }

    impl Side {
        /// The conditions as the documentation counts them: every distinct square of `pawns`
        /// and `none` (a whole file: 6), every `one_of` list and every count.
        fn conditions(&self) -> usize {
            let mut squares: Vec<Square> = self.pawns.clone();
            squares.extend(&self.none);
            squares.sort_unstable();
            squares.dedup();
            squares.len() + self.one_of.len() + self.count.len()
        }

        /// The rule for the other colour on the turned board (rank r becomes 9 - r).
        fn turned(&self) -> Side {
            let turn = |&(f, r): &Square| (f, 7 - r);
            Side {
                pawns: self.pawns.iter().map(turn).collect(),
                none: self.none.iter().map(turn).collect(),
                one_of: self
                    .one_of
                    .iter()
                    .map(|l| l.iter().map(turn).collect())
                    .collect(),
                count: self.count.clone(),
            }
        }

        /// Whether a side's pawns meet every condition, looking at each square named.
        fn matches(&self, b: &Board) -> bool {
            self.pawns.iter().all(|&(f, r)| b[r][f])
                && self.none.iter().all(|&(f, r)| !b[r][f])
                && self
                    .one_of
                    .iter()
                    .all(|list| list.iter().any(|&(f, r)| b[r][f]))
                && self.count.iter().all(|(files, lo, hi)| {
                    let mut n = 0i64;
                    for &f in files {
                        for row in b {
                            n += i64::from(row[f]);
                        }
                    }
                    *lo <= n && n <= *hi
                })
        }
    }

    /// One form (normal or reversed) of a definition.
    #[derive(Clone, Debug)]
    pub struct Form {
        /// 2 * (the key's place in the sorted catalogue, from 1) + reversed.
        pub code: u16,
        white: Side,
        black: Side,
    }

    /// The catalogue's forms in match order, and its keys sorted.
    #[derive(Clone, Debug, Default)]
    pub struct Naive {
        pub forms: Vec<Form>,
        pub keys: Vec<String>,
    }

    fn square(text: &str) -> Result<Square> {
        match text.as_bytes() {
            [f @ b'a'..=b'h', r @ b'2'..=b'7'] => {
                Ok((usize::from(f - b'a'), usize::from(r - b'1')))
            }
            _ => bail!("{text:?} is not a square a2..h7"),
        }
    }

    fn strings(v: &toml::Value) -> Result<Vec<&str>> {
        v.as_array()
            .context("not a list")?
            .iter()
            .map(|s| s.as_str().context("not a string"))
            .collect()
    }

    fn side(v: Option<&toml::Value>) -> Result<Side> {
        let mut s = Side::default();
        let Some(v) = v else {
            return Ok(s);
        };
        let t = v.as_table().context("not a table")?;
        if let Some(p) = t.get("pawns") {
            for x in strings(p)? {
                s.pawns.push(square(x)?);
            }
        }
        if let Some(p) = t.get("none") {
            for x in strings(p)? {
                match x.as_bytes() {
                    [f @ b'a'..=b'h'] => {
                        s.none.extend((1..7).map(|r| (usize::from(f - b'a'), r)));
                    }
                    _ => s.none.push(square(x)?),
                }
            }
        }
        if let Some(p) = t.get("one_of") {
            for list in p.as_array().context("one_of is not a list")? {
                s.one_of.push(
                    strings(list)?
                        .into_iter()
                        .map(square)
                        .collect::<Result<_>>()?,
                );
            }
        }
        if let Some(p) = t.get("count") {
            for c in p.as_array().context("count is not a list")? {
                let files = c
                    .get("files")
                    .and_then(|x| x.as_str())
                    .context("count without files")?
                    .bytes()
                    .map(|f| match f {
                        b'a'..=b'h' => Ok(usize::from(f - b'a')),
                        _ => bail!("count files must be a to h"),
                    })
                    .collect::<Result<_>>()?;
                let lo = c.get("min").and_then(toml::Value::as_integer).unwrap_or(0);
                let hi = c
                    .get("max")
                    .and_then(toml::Value::as_integer)
                    .unwrap_or(i64::MAX);
                s.count.push((files, lo, hi));
            }
        }
        Ok(s)
    }

    impl Naive {
        /// Reads the catalogue's (key, TOML text) pairs.
        pub fn read(texts: &[(String, String)]) -> Result<Naive> {
            let mut keys: Vec<String> = texts.iter().map(|(k, _)| k.clone()).collect();
            keys.sort();
            // (priority, conditions, key, reversed, form)
            let mut order = Vec::new();
            for (key, text) in texts {
                let t: toml::Table =
                    toml::from_str(text).with_context(|| format!("in {key}.toml"))?;
                let priority = t
                    .get("priority")
                    .and_then(toml::Value::as_integer)
                    .unwrap_or(0);
                let reversed = t
                    .get("reversed")
                    .and_then(toml::Value::as_bool)
                    .unwrap_or(false);
                let white = side(t.get("white")).with_context(|| format!("{key}: [white]"))?;
                let black = side(t.get("black")).with_context(|| format!("{key}: [black]"))?;
                let id = keys.iter().position(|k| k == key).context("a key")? + 1;
                let code = u16::try_from(2 * id).context("too many structures")?;
                let conditions = white.conditions() + black.conditions();
                if reversed {
                    let form = Form {
                        code: code + 1,
                        white: black.turned(),
                        black: white.turned(),
                    };
                    order.push((priority, conditions, key.clone(), true, form));
                }
                let form = Form { code, white, black };
                order.push((priority, conditions, key.clone(), false, form));
            }
            order.sort_by(|a, b| {
                b.0.cmp(&a.0)
                    .then(b.1.cmp(&a.1))
                    .then(a.2.cmp(&b.2))
                    .then(a.3.cmp(&b.3))
            });
            Ok(Naive {
                forms: order.into_iter().map(|o| o.4).collect(),
                keys,
            })
        }

        /// Which forms one side's pawns meet, one bit per form: bit `i` (word `i / 64`) for
        /// `forms[i]`'s White (or Black) rule.
        pub fn side_matches(&self, b: &Board, white: bool) -> Box<[u64]> {
            let mut bits = vec![0u64; self.forms.len().div_ceil(64)];
            for (i, f) in self.forms.iter().enumerate() {
                let meets = if white {
                    f.white.matches(b)
                } else {
                    f.black.matches(b)
                };
                bits[i / 64] |= u64::from(meets) << (i % 64);
            }
            bits.into_boxed_slice()
        }

        /// The code of the first form both sides meet (0: none).
        pub fn pick(&self, white: &[u64], black: &[u64]) -> u16 {
            white
                .iter()
                .zip(black)
                .enumerate()
                .find(|(_, (w, b))| *w & *b != 0)
                .and_then(|(i, (w, b))| self.forms.get(i * 64 + (w & b).trailing_zeros() as usize))
                .map_or(0, |f| f.code)
        }

        /// A code as its key (`~` for the reversed form), or "no name".
        pub fn name(&self, code: i64) -> String {
            if code == 0 {
                return "no name".to_owned();
            }
            match usize::try_from(code / 2)
                .ok()
                .and_then(|i| i.checked_sub(1))
                .and_then(|i| self.keys.get(i))
            {
                Some(k) if code % 2 == 1 => format!("{k} (reversed)"),
                Some(k) => k.clone(),
                None => format!("the unknown code {code}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unfinished_note_says_how_many_games_and_what_to_run() {
        let note = unfinished_note(3, Path::new("masters.db"));
        assert_eq!(
            note,
            "note: 3 games not yet in the derived tables; run `pawndex migrate --db masters.db`"
        );
        assert!(unfinished_note(1, Path::new("a.db")).starts_with("note: 1 game not yet"));
    }

    #[test]
    fn each_kind_prints_its_first_examples_then_a_count() {
        let mut out = Vec::new();
        let mut f = Findings {
            out: &mut out,
            counts: Vec::new(),
            problems: 0,
            notes: Vec::new(),
        };
        for i in 0..7 {
            f.problem(&RUN_PLIES, || format!("runs: example {i}"))
                .unwrap();
        }
        f.problem(&SET_FEATURES, || "pawn_sets: other".to_owned())
            .unwrap();
        assert!(!f.shows(&RUN_PLIES) && f.shows(&SET_FEATURES));
        f.finish().unwrap();
        assert_eq!(f.problems, 8);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 7, "{text}");
        assert_eq!(lines[4], "runs: example 4");
        assert_eq!(lines[5], "pawn_sets: other");
        assert_eq!(
            lines[6],
            "runs: … and 2 more runs outside their game's plies"
        );
    }

    #[test]
    fn encoded_lengths_match_the_lists_index_writes() {
        // The example of `decode_games`: 3, 4, 132 as 3, 1, 0x80 0x01.
        let ids = decode_games(&[3, 1, 0x80, 0x01]);
        assert_eq!(ids, vec![3, 4, 132]);
        assert_eq!(encoded_len(&ids), Some(4));
        assert_eq!(encoded_len(&[]), Some(0));
        assert_eq!(encoded_len(&[0]), Some(1));
        assert_eq!(encoded_len(&[5, 4]), None);
        assert_eq!(encoded_len(&[i64::MAX]), Some(9));
        // A non-canonical varint (1 as 0x81 0x00) decodes but is longer than it should be.
        assert_eq!(decode_games(&[0x81, 0x00]), vec![1]);
        assert_eq!(encoded_len(&[1]), Some(1));
    }

    #[test]
    fn fingerprints_depend_on_order_and_content() {
        let a = [1i64, 2, 3].iter().fold(0, |h, &g| fold(h, g));
        let b = [1i64, 3, 2].iter().fold(0, |h, &g| fold(h, g));
        let c = [1i64, 2].iter().fold(0, |h, &g| fold(h, g));
        assert!(a != b && a != c && b != c);
        let mut acc = Acc::default();
        for (g, plies) in [(1, 2), (1, 3), (2, 1), (3, 1)] {
            acc.add(g, plies, Some(1), Some(2000), None);
        }
        assert_eq!(acc.games, 3);
        assert_eq!(acc.positions, 7);
        assert_eq!(acc.last_game, 3);
        assert_eq!(acc.fingerprint, a);
        assert_eq!(acc.totals(), [7, 3, 0, 7, 0, 14_000, 7, 0, 0]);
    }

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

    #[test]
    fn slots_never_panic() {
        assert_eq!(slot(5, 1, 10), Some(4));
        assert_eq!(slot(11, 1, 10), None);
        assert_eq!(slot(0, 1, 10), None);
        assert_eq!(slot(i64::MIN, 1, 10), None);
        assert_eq!(slot(i64::MAX, -5, 10), None);
    }
}
