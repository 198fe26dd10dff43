//! The single writer of `pawndex index`: games, runs and pawn sets in large transactions.
//!
//! Memory follows the work in flight, not the database: pawn-set ids and game hashes are looked
//! up through the database's indexes behind bounded caches ([`keys`]). While the caches hold
//! everything the database holds (a load into an empty database that has not yet filled them),
//! a miss needs no lookup at all.
//!
//! Each table is written one way for the whole run, chosen when the writer starts
//! ([`tables::Paths`]): rows through SQL, or, for `runs`, the key indexes and the derived
//! tables of a first load, pages laid out in key order. The WAL is checkpointed on a thread of
//! its own ([`checkpoint`]); [`errors`] says what a run that cannot finish tells its user.

pub(super) mod checkpoint;
mod errors;
mod keys;
mod tables;

use anyhow::{Result, bail};
use rusqlite::{Connection, params};

use self::checkpoint::Checkpointer;
use self::keys::{Cache, HASH_CACHE, KEY_INDEXES, NAME_INDEXES, SET_CACHE};
use self::tables::{ChangeRows, IntRows, Paths, TableOut};
use super::bulk_tree::{self, PageWriter};
use super::derive;
use super::rows::ROWS_PER_INSERT;
use crate::model::features::SIDE_FEATURE_COUNT;
use crate::model::game::{GameRecord, Reject};
use crate::model::hash::IntMap;
use crate::model::sink::{Sink, Stored};
use crate::model::time_class::time_class;
use crate::model::workload::{self, Workload};
use crate::store::schema::players;
use crate::store::side_columns;

use self::errors::Step;
pub use self::errors::{FinishPhase, Unfolded, WriteFailed};

const SET_COLUMNS: usize = 3 + SIDE_FEATURE_COUNT;

/// The single writer: owns the connection while loading.
pub struct Writer {
    conn: Connection,
    keep_duplicates: bool,
    /// Per side (0 White, 1 Black), pawns -> pawn set id.
    sets: [Cache<u64, u32>; 2],
    /// Per side, the last pawn set asked for and its id.
    last_set: [Option<(u64, i64)>; 2],
    next_set_id: i64,
    /// Hashes of stored games -> the id of the (last) game stored with it.
    hashes: Cache<i64, i64>,
    /// The other games of a hash that more than one stored game has (a collision: distinct
    /// games, one hash), so that a duplicate of any of them is recognised.
    collided: IntMap<i64, Vec<i64>>,
    /// Whether a key index (`KEY_INDEXES`, by position) was dropped for this run: a load into
    /// an empty table finds every key in the cache and builds the index in one sort at the end
    /// instead of row by row (a third of the load of masters-1 went to `pawn_sets_key`).
    deferred: [bool; 2],
    /// Whether the name indexes (`NAME_INDEXES`) were dropped for this run (a first load).
    names_deferred: bool,
    ply_numbers: i64,
    in_transaction: bool,
    /// A write failed and its transaction was rolled back: the run is over.
    stopped: bool,
    /// The way each table is written in this run.
    paths: Paths,
    /// Rows of `pawn_sets` waiting for a multi-row INSERT (far fewer statement executions
    /// than row by row).
    pending_sets: IntRows<SET_COLUMNS>,
    /// Rows of `game_summary`, the same way.
    summaries: IntRows<{ tables::SUMMARY_COLUMNS }>,
    /// Rows of `structure_changes`, the same way.
    changes: ChangeRows,
    /// The (set, game) pairs of the games stored, for the derived tables at the end (so that
    /// they need not be read back from the runs).
    pairs: derive::PairCollector,
    /// The entries of the key indexes (`KEY_INDEXES`) of a first load, taken from the caches at
    /// its end and sorted, waiting to be laid out at the last commit: (pawns, side, id) and
    /// (hash, id).
    laid_sets: Option<Vec<[i64; 3]>>,
    laid_hashes: Option<Vec<[i64; 2]>>,
    /// The (White, Black) set ids of the game being stored (a buffer kept between games).
    run_sets: Vec<(i64, i64)>,
    /// Checkpoints the WAL after each commit, on its own thread (see `checkpoint`).
    checkpointer: Option<Checkpointer>,
    /// What this transaction's games add to `player_names` and `structure_results`.
    players: players::Tally,
}

impl Writer {
    pub fn new(conn: Connection, keep_duplicates: bool) -> Result<Writer> {
        // SQLite's page cache is emptied after each commit that wrote laid-out pages: `main.rs`
        // has glibc keep the memory it frees during the load.
        workload::entering(Workload::Load);
        let no_games: bool =
            conn.query_row("SELECT NOT EXISTS (SELECT 1 FROM games)", [], |r| r.get(0))?;
        let no_sets: bool =
            conn.query_row("SELECT NOT EXISTS (SELECT 1 FROM pawn_sets)", [], |r| {
                r.get(0)
            })?;
        let next_set_id: i64 =
            conn.query_row("SELECT coalesce(max(id), 0) + 1 FROM pawn_sets", [], |r| {
                r.get(0)
            })?;
        let ply_numbers: i64 =
            conn.query_row("SELECT count(*) FROM ply_numbers", [], |r| r.get(0))?;
        // An empty table's index waits for the end of the run; any other index must exist (a
        // run killed before its end left it dropped).
        let deferred = [no_sets, no_games];
        let paths = Paths::choose(&conn)?;
        if std::env::var_os("PAWNDEX_TIMINGS").is_some() {
            eprintln!("timings: laid-out pages: {}", paths.describe());
        }
        for (&(name, _, create), defer) in KEY_INDEXES.iter().zip(deferred) {
            if defer {
                conn.execute_batch(&format!("DROP INDEX IF EXISTS {name}"))?;
            } else {
                conn.execute_batch(create)?;
            }
        }
        for (name, create) in NAME_INDEXES {
            if no_games {
                conn.execute_batch(&format!("DROP INDEX IF EXISTS {name}"))?;
            } else {
                conn.execute_batch(create)?;
            }
        }
        let checkpointer = Checkpointer::start(&conn)?;
        Ok(Writer {
            conn,
            keep_duplicates,
            sets: [
                Cache::new(SET_CACHE, no_sets),
                Cache::new(SET_CACHE, no_sets),
            ],
            last_set: [None, None],
            next_set_id,
            hashes: Cache::new(HASH_CACHE, no_games),
            collided: IntMap::default(),
            deferred,
            names_deferred: no_games,
            ply_numbers,
            in_transaction: false,
            stopped: false,
            paths,
            pending_sets: IntRows::new(format!("pawn_sets ({})", side_columns::pawn_sets())),
            summaries: tables::summary_rows(),
            changes: ChangeRows::default(),
            pairs: derive::PairCollector::new(),
            laid_sets: None,
            laid_hashes: None,
            run_sets: Vec::new(),
            checkpointer,
            players: players::Tally::default(),
        })
    }

    fn begin(&mut self) -> Result<()> {
        if self.stopped {
            bail!("the run stopped at a failed write; nothing more is written");
        }
        if !self.in_transaction {
            self.conn.execute_batch("BEGIN IMMEDIATE")?;
            self.in_transaction = true;
        }
        Ok(())
    }

    /// Makes everything written so far durable.
    pub fn commit(&mut self) -> Result<()> {
        let r = self.commit_inner();
        self.explain(r, Step::Storing)
    }

    fn commit_inner(&mut self) -> Result<()> {
        self.flush(true)?;
        self.players.flush(&self.conn)?;
        if self.in_transaction {
            // Last: SQLite must allocate no page after the tree's (see `bulk_tree`).
            let laid = (self.laid_sets.take(), self.laid_hashes.take());
            let mut registered = false;
            let pages = self.paths.runs.pages() || laid.0.is_some() || laid.1.is_some();
            if pages {
                let mut w = PageWriter::begin(&self.conn)?;
                registered = self.lay_out_key_indexes(&mut w, laid.0, laid.1)?;
                self.paths.runs.write_pages(&mut w)?;
                w.end()?;
            }
            self.conn.execute_batch("COMMIT")?;
            self.in_transaction = false;
            if registered {
                bulk_tree::reload_schema(&self.conn)?;
            }
            if let Some(c) = &mut self.checkpointer {
                c.nudge(&self.conn)?;
            }
            if pages {
                // Forget what SQLite parsed of pages now rewritten (see `bulk_tree`).
                self.conn.release_memory()?;
            }
        }
        Ok(())
    }

    /// Writes buffered rows: whole multi-row chunks only, or everything when `all`.
    fn flush(&mut self, all: bool) -> Result<()> {
        self.pending_sets.flush(&self.conn, all)?;
        self.paths.runs.flush(&self.conn, all)?;
        self.summaries.flush(&self.conn, all)?;
        self.changes.flush(&self.conn, all)
    }

    fn ensure_ply_numbers(&mut self, plies: u32) -> Result<()> {
        let needed = i64::from(plies) + 1;
        if needed > self.ply_numbers {
            let mut st = self
                .conn
                .prepare_cached("INSERT INTO ply_numbers (n) VALUES (?1)")?;
            for n in self.ply_numbers..needed {
                st.execute([n])?;
            }
            self.ply_numbers = needed;
        }
        Ok(())
    }

    /// Turns a failed write (disk full, I/O error) into a [`WriteFailed`] that says what is
    /// safe and what to run, after rolling back what was not committed. The writer writes
    /// nothing more.
    fn explain<T>(&mut self, r: Result<T>, step: Step) -> Result<T> {
        let e = match r {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        let Some(full) = errors::write_failure(&e) else {
            return Err(e);
        };
        if !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        self.in_transaction = false;
        self.stopped = true;
        self.pending_sets.forget();
        self.paths.runs.forget();
        self.summaries.forget();
        self.changes.forget();
        self.players.forget();
        let games = self
            .conn
            .query_row("SELECT count(*) FROM games", [], |r| r.get(0))
            .unwrap_or(0);
        Err(WriteFailed {
            db: self.conn.path().unwrap_or("the database").to_owned(),
            step,
            full,
            games,
            cause: format!("{e:#}"),
        }
        .into())
    }

    /// Stores one replayed game unless it is a duplicate.
    pub fn add_game(&mut self, g: &GameRecord, source: &str) -> Result<Stored> {
        let r = self.add_game_inner(g, source);
        self.explain(r, Step::Storing)
    }

    fn add_game_inner(&mut self, g: &GameRecord, source: &str) -> Result<Stored> {
        self.begin()?;
        if self.is_duplicate(g)? {
            return Ok(Stored::Duplicate);
        }
        self.ensure_ply_numbers(g.plies)?;
        let game_id = tables::insert_game(&self.conn, g, source)?;
        self.summaries
            .add(&self.conn, tables::summary_row(game_id, &g.summary))?;
        let t = &g.header;
        self.pairs
            .start_game(game_id, t.result.as_deref(), t.white_elo, t.black_elo)?;
        // The set ids first, in a loop of their own: the lookups miss the CPU's caches (the
        // maps hold millions of sets), and back to back their misses overlap.
        let mut ids = std::mem::take(&mut self.run_sets);
        ids.clear();
        for run in &g.runs {
            ids.push((
                self.set_id(run.white_pawns, 0)?,
                self.set_id(run.black_pawns, 1)?,
            ));
        }
        for (run, &(white, black)) in g.runs.iter().zip(&ids) {
            self.pairs.add_run(
                white,
                black,
                i64::from(run.last_ply) - i64::from(run.first_ply) + 1,
                run.bishop_pairs.into(),
            )?;
            let row = [
                game_id,
                run.first_ply.into(),
                run.last_ply.into(),
                white,
                black,
                (u32::MAX - run.pieceset).into(),
                run.bishop_pairs.into(),
                run.structure.into(),
            ];
            self.paths.runs.add(&self.conn, row)?;
        }
        self.run_sets = ids;
        let class = time_class(g.time_control.as_deref(), t.event.as_deref()).name();
        self.players
            .add_game(t, class, g.changes.iter().map(|c| i64::from(c.to)));
        for c in &g.changes {
            let ints = [game_id, c.ply.into(), c.from.into(), c.to.into()];
            self.changes.add((ints, c.san.clone()));
        }
        if self.paths.runs.waiting() >= 4 * ROWS_PER_INSERT
            || self.summaries.waiting() >= 4 * ROWS_PER_INSERT
            || self.changes.waiting() >= 4 * ROWS_PER_INSERT
        {
            self.flush(false)?;
        }
        self.remember_hash(g.hash, game_id);
        Ok(Stored::Indexed)
    }

    /// Records a rejected game (once per source and offset, so re-runs add nothing).
    pub fn add_reject(&mut self, r: &Reject, source: &str) -> Result<()> {
        let result = self.add_reject_inner(r, source);
        self.explain(result, Step::Storing)
    }

    fn add_reject_inner(&mut self, r: &Reject, source: &str) -> Result<()> {
        self.begin()?;
        self.conn
            .prepare_cached(
                "INSERT OR IGNORE INTO rejects (source, offset, event, white, black, ply, reason)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                source,
                r.offset as i64,
                r.event,
                r.white,
                r.black,
                r.ply,
                r.reason
            ])?;
        Ok(())
    }

    /// [`Writer::finish_with`] without a progress display.
    pub fn finish(self, merge_all: bool) -> Result<()> {
        self.finish_with(merge_all, |_| {})
    }

    /// Final step of a run: commit, merge the new games into the derived tables (unless they
    /// stay in the unmerged tail, see [`derive::merge_due`]; always with `merge_all`), refresh
    /// planner statistics, and leave one self-contained file (WAL folded in, rollback journal).
    /// `phase` hears of each [`FinishPhase`] as it starts.
    pub fn finish_with(
        mut self,
        merge_all: bool,
        mut phase: impl FnMut(FinishPhase),
    ) -> Result<()> {
        let t0 = std::time::Instant::now();
        phase(FinishPhase::Commit);
        // A first derivation's fold starts now, beside the key indexes and the commit.
        let r = derive::fold_early(&self.conn, &mut self.pairs, self.paths.derived);
        let early = self.explain(r, Step::Deriving)?;
        let r = self.finish_key_indexes();
        self.explain(r, Step::Storing)?;
        self.commit()?;
        self.conn.pragma_update(None, "mmap_size", 0)?;
        self.conn.release_memory()?;
        // The memory the load kept goes back before the derived tables' merge.
        workload::entering(Workload::LoadDone);
        let t_commit = t0.elapsed();
        let pairs = match early {
            Some(fold) => derive::Pairs::Folding(fold),
            None => derive::Pairs::Collected(std::mem::take(&mut self.pairs)),
        };
        phase(FinishPhase::Derive);
        let r = derive::finish_run(&self.conn, merge_all, Some(pairs), self.paths.derived);
        self.explain(r, Step::Deriving)?;
        let t_derive = t0.elapsed() - t_commit;
        let start = std::time::Instant::now();
        phase(FinishPhase::Statistics);
        let r = derive::write_planner_statistics(&self.conn);
        self.explain(r, Step::Finishing)?;
        let statistics = start.elapsed();
        phase(FinishPhase::Checkpoint);
        let checkpoints = self.checkpointer.take().map(Checkpointer::stop);
        // The log folded in and the file back to a rollback journal: the finished database is
        // one file that opens from a read-only directory or medium. Readers may be in the
        // way: the fold waits for them, within reason, and says so.
        let db = self.conn.path().unwrap_or("the database").to_owned();
        let waits = checkpoint::fold_wait();
        let r = checkpoint::fold(&self.conn, waits, |left| {
            eprintln!(
                "pawndex: waiting up to {} s for {} of {db}, to fold its write-ahead log in",
                waits.of(left).as_secs(),
                left.waiting_for()
            );
        });
        let left = self.explain(r, Step::Folding)?;
        if std::env::var_os("PAWNDEX_TIMINGS").is_some() {
            eprintln!(
                "timings: last commit {:.1} s, derived tables {:.1} s, planner statistics {:.1} s, \
                 checkpoint {:.1} s; checkpoints on their own thread: {checkpoints:?}",
                t_commit.as_secs_f64(),
                t_derive.as_secs_f64(),
                statistics.as_secs_f64(),
                (start.elapsed() - statistics).as_secs_f64()
            );
        }
        if let Some(left) = left {
            return Err(Unfolded {
                holders: checkpoint::shm_holders(&db),
                wal_bytes: super::wal_bytes(std::path::Path::new(&db)),
                db,
                left,
                waited: waits.of(left),
            }
            .into());
        }
        Ok(())
    }
}

impl Sink for Writer {
    fn add_game(&mut self, g: &GameRecord, source: &str) -> Result<Stored> {
        Writer::add_game(self, g, source)
    }
    fn add_reject(&mut self, r: &Reject, source: &str) -> Result<()> {
        Writer::add_reject(self, r, source)
    }
    fn commit(&mut self) -> Result<()> {
        Writer::commit(self)
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::keys::{DUPLICATE_SQL, KEY_INDEXES, SET_CACHE};
    use super::*;

    /// A writer for the database at `path`, opened (and created) as `index` opens it.
    fn writer_at(path: &std::path::Path) -> Writer {
        Writer::new(crate::store::open_for_writing(path).unwrap(), false).unwrap()
    }

    /// The replayed games of `examples/sample.pgn`.
    fn sample_games() -> Vec<GameRecord> {
        use crate::ingest::replay::{Replayed, replay};
        use std::sync::atomic::AtomicU64;
        use std::sync::{Arc, Mutex};
        let pgn =
            std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sample.pgn")).unwrap();
        let decoded = Arc::new(AtomicU64::new(0));
        let counting = crate::ingest::input::Counting::new(&pgn[..], decoded.clone());
        let mut read =
            crate::ingest::reader::PgnGames::new(counting, decoded, Arc::new(Mutex::new(None)));
        let mut games = Vec::new();
        while let Some(g) = read.next_game().unwrap() {
            if let Replayed::Game(g) = replay(g) {
                games.push(*g);
            }
        }
        games
    }

    #[test]
    fn finish_announces_its_phases_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open_for_writing(&dir.path().join("t.db")).unwrap();
        let writer = Writer::new(conn, false).unwrap();
        let mut phases = Vec::new();
        writer.finish_with(false, |p| phases.push(p)).unwrap();
        assert_eq!(
            phases,
            [
                FinishPhase::Commit,
                FinishPhase::Derive,
                FinishPhase::Statistics,
                FinishPhase::Checkpoint
            ]
        );
    }

    /// A load into empty tables drops the key indexes and builds them at its end; a run
    /// into tables that have rows (after a killed first run, say) restores any that is missing.
    #[test]
    fn key_indexes_wait_for_the_end_of_a_first_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let indexes = |conn: &Connection| -> Vec<String> {
            conn.prepare(
                "SELECT name FROM sqlite_schema WHERE name IN ('pawn_sets_key', 'games_hash') \
                 ORDER BY name",
            )
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
        };
        // Reopens the database after a finished run: both indexes are there.
        let built_at_the_end = || {
            let conn = crate::store::open_for_writing(&path).unwrap();
            assert_eq!(
                indexes(&conn),
                ["games_hash", "pawn_sets_key"],
                "built at the end"
            );
            conn
        };
        let writer = writer_at(&path);
        assert!(indexes(&writer.conn).is_empty(), "dropped for the load");
        writer.finish(true).unwrap();
        let conn = built_at_the_end();
        // As a killed first run leaves them: rows stored, indexes dropped.
        conn.execute_batch(
            "INSERT INTO pawn_sets (id, side, pawns, islands, dispersion, distortion, duo, trio, quart)
             VALUES (1, 0, 65280, 1, 0, 0, 0, 0, 0);
             DROP INDEX pawn_sets_key; DROP INDEX games_hash;",
        )
        .unwrap();
        // pawn_sets has a row: its index is restored; games has none: its index waits.
        let writer = Writer::new(conn, false).unwrap();
        assert_eq!(indexes(&writer.conn), ["pawn_sets_key"], "restored");
        assert_eq!(writer.deferred, [false, true]);
        writer.finish(true).unwrap();
        built_at_the_end();
    }

    /// The set-id cache forgets its sets when it is full, then finds them in `pawn_sets_key`:
    /// with room for two sets per side, the sets and runs are those of a cache that holds
    /// every set.
    #[test]
    fn a_full_set_cache_gives_the_same_ids() {
        let games = sample_games();
        let stored = |cap: usize| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.db");
            let mut writer = writer_at(&path);
            for cache in &mut writer.sets {
                cache.cap = cap;
            }
            for g in &games {
                writer.add_game(g, "sample.pgn").unwrap();
            }
            let forgot = writer.sets.iter().all(|c| !c.complete);
            writer.finish(true).unwrap();
            let conn = crate::store::open_for_writing(&path).unwrap();
            let rows = |sql: &str| -> Vec<Vec<i64>> {
                let mut st = conn.prepare(sql).unwrap();
                let n = st.column_count();
                st.query_map([], |r| (0..n).map(|i| r.get(i)).collect())
                    .unwrap()
                    .collect::<rusqlite::Result<_>>()
                    .unwrap()
            };
            let sets = rows("SELECT id, side, pawns FROM pawn_sets ORDER BY id");
            let runs =
                rows("SELECT game_id, first_ply, white_set, black_set FROM runs ORDER BY 1, 2");
            (forgot, sets, runs)
        };
        let (forgot_all, sets, runs) = stored(SET_CACHE);
        let (forgot_some, small_sets, small_runs) = stored(2);
        assert!(
            !forgot_all && forgot_some,
            "only the small cache was emptied"
        );
        assert!(sets.len() > 20, "{} sets", sets.len());
        assert_eq!(small_sets, sets);
        assert_eq!(small_runs, runs);
    }

    /// Every row `sql` gives, every column.
    fn all_rows(conn: &Connection, sql: &str) -> Vec<Vec<rusqlite::types::Value>> {
        let mut st = conn.prepare(sql).unwrap();
        let n = st.column_count();
        st.query_map([], |r| (0..n).map(|i| r.get(i)).collect())
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    /// A first load lays out the pages of `runs`, the key indexes and the derived tables itself
    /// (see `bulk_tree`): the same rows in every table as SQLite's inserts, a database that passes
    /// `integrity_check`, and a second run that inserts into the tree as usual.
    #[test]
    fn a_first_load_builds_the_runs_pages_itself() {
        let games = sample_games();
        let (first, second) = games.split_at(games.len() / 2);
        let stored = |bulk: bool, small_caches: bool| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.db");
            let mut runs_pages = Vec::new();
            for (part, source) in [(first, "a.pgn"), (second, "b.pgn")] {
                let mut writer = writer_at(&path);
                if !bulk {
                    // The paths of a run with `PAWNDEX_NO_BULK` set.
                    writer.paths.runs = Box::new(tables::runs_rows());
                    writer.paths.key_pages = false;
                    writer.paths.derived = None;
                }
                // Caches that overflow: their indexes are built in the middle of the load, and
                // the writer asks SQLite for keys.
                if small_caches {
                    writer.hashes.cap = 2;
                    for cache in &mut writer.sets {
                        cache.cap = 2;
                    }
                }
                runs_pages.push(writer.paths.runs.pages() && writer.paths.derived.is_some());
                for (i, g) in part.iter().enumerate() {
                    writer.add_game(g, source).unwrap();
                    if i % 2 == 1 {
                        writer.commit().unwrap();
                    }
                }
                writer.finish(true).unwrap();
            }
            let conn = crate::store::open_for_writing(&path).unwrap();
            let check: String = conn
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .unwrap();
            let mut tables = Vec::new();
            for sql in [
                "SELECT * FROM games ORDER BY id",
                "SELECT * FROM runs ORDER BY game_id, first_ply",
                "SELECT * FROM game_summary ORDER BY game_id",
                "SELECT * FROM structure_changes ORDER BY game_id, ply",
                // The key indexes, read by themselves (laid out or built by SQLite).
                "SELECT pawns, side, id FROM pawn_sets INDEXED BY pawn_sets_key \
                 ORDER BY pawns, side",
                "SELECT hash, id FROM games INDEXED BY games_hash ORDER BY hash, id",
            ] {
                tables.push(all_rows(&conn, sql));
            }
            (runs_pages, check, tables)
        };
        let (pages, check, inserted) = stored(false, false);
        assert_eq!(pages, [false, false]);
        assert_eq!(check, "ok");
        assert!(inserted[0].len() > 5, "{} games", inserted[0].len());
        assert!(inserted[1].len() > 100, "{} runs", inserted[1].len());
        assert!(inserted[2].len() > 5, "{} summaries", inserted[2].len());
        assert!(
            inserted[3]
                .iter()
                .any(|r| matches!(r[4], rusqlite::types::Value::Text(_))),
            "changes with moves: {:?}",
            inserted[3]
        );
        for small_caches in [false, true] {
            let (pages, check, runs) = stored(true, small_caches);
            assert_eq!(pages, [true, false], "only the first run lays out pages");
            assert_eq!(check, "ok", "small caches: {small_caches}");
            assert_eq!(runs, inserted, "small caches: {small_caches}");
        }
    }

    /// A first load folds the pairs it collected while it commits (`derive::fold_early`):
    /// the derived tables are those derived from the stored runs.
    #[test]
    fn a_first_load_folds_its_pairs_early() {
        let games = sample_games();
        let derived = |early: bool| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.db");
            let mut writer = writer_at(&path);
            for g in &games {
                writer.add_game(g, "a.pgn").unwrap();
            }
            if !early {
                // No pairs collected: the derivation reads them from `runs`.
                writer.pairs = derive::PairCollector::new();
            }
            assert_eq!(writer.pairs.first_game(), early.then_some(1));
            writer.finish(true).unwrap();
            let conn = crate::store::open_for_writing(&path).unwrap();
            let check: String = conn
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .unwrap();
            assert_eq!(check, "ok");
            let mut tables = Vec::new();
            for sql in [
                "SELECT * FROM set_games ORDER BY set_id",
                "SELECT * FROM set_totals ORDER BY set_id",
                "SELECT * FROM bishop_totals ORDER BY bishop_pairs",
                "SELECT through, finished FROM derived",
            ] {
                tables.push(all_rows(&conn, sql));
            }
            tables
        };
        let early = derived(true);
        assert!(early[0].len() > 20, "{} sets", early[0].len());
        assert_eq!(early, derived(false));
    }

    /// A duplicate of a game stored earlier in the same transaction is found (the games go
    /// through SQL, so SQLite reads back every game stored), and the hash index that SQLite builds
    /// when the cache overflows holds every game.
    #[test]
    fn a_duplicate_of_a_game_not_yet_committed_is_found() {
        let games = sample_games();
        for small_cache in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.db");
            let mut writer = writer_at(&path);
            if small_cache {
                writer.hashes.cap = 2;
            }
            // No commit: every original is still in the transaction when its copy arrives.
            let first: Vec<Stored> = games
                .iter()
                .map(|g| writer.add_game(g, "a.pgn").unwrap())
                .collect();
            let again: Vec<Stored> = games
                .iter()
                .map(|g| writer.add_game(g, "b.pgn").unwrap())
                .collect();
            writer.finish(true).unwrap();
            let indexed = first.iter().filter(|s| **s == Stored::Indexed).count();
            assert!(indexed > 5, "{indexed} games");
            assert!(
                again.iter().all(|s| *s == Stored::Duplicate),
                "small cache {small_cache}: {again:?}"
            );
            let conn = crate::store::open_for_writing(&path).unwrap();
            let check: String = conn
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .unwrap();
            assert_eq!(check, "ok", "small cache {small_cache}");
            let (stored, hashed): (usize, usize) = conn
                .query_row(
                    "SELECT (SELECT count(*) FROM games),
                            (SELECT count(*) FROM games INDEXED BY games_hash WHERE hash IS NOT NULL)",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap();
            assert_eq!(
                (stored, hashed),
                (indexed, indexed),
                "small cache {small_cache}"
            );
        }
    }

    /// A first load lays out its key indexes from the caches (duplicates kept: only the sets'),
    /// and a connection opened before sees them once the run has committed.
    #[test]
    fn a_first_load_lays_out_its_key_indexes() {
        let games = sample_games();
        for keep_duplicates in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.db");
            let conn = crate::store::open_for_writing(&path).unwrap();
            let mut writer = Writer::new(conn, keep_duplicates).unwrap();
            for g in &games {
                writer.add_game(g, "a.pgn").unwrap();
            }
            writer.commit().unwrap();
            let reader = Connection::open(&path).unwrap();
            let known = |conn: &Connection| -> i64 {
                conn.query_row(
                    "SELECT count(*) FROM sqlite_schema
                     WHERE name IN ('pawn_sets_key', 'games_hash')",
                    [],
                    |r| r.get(0),
                )
                .unwrap()
            };
            assert_eq!(known(&reader), 0);
            writer.finish_key_indexes().unwrap();
            assert!(writer.laid_sets.is_some());
            assert_eq!(writer.laid_hashes.is_some(), !keep_duplicates);
            writer.commit().unwrap();
            assert_eq!(known(&reader), 2, "keep duplicates: {keep_duplicates}");
            let plan: String = reader
                .query_row(
                    "EXPLAIN QUERY PLAN SELECT id FROM pawn_sets WHERE pawns = 1 AND side = 0",
                    [],
                    |r| r.get(3),
                )
                .unwrap();
            assert!(plan.contains("pawn_sets_key"), "{plan}");
            let check: String = reader
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .unwrap();
            assert_eq!(check, "ok");
            // An open connection would keep the end of the run from leaving WAL mode.
            drop(reader);
            writer.finish(true).unwrap();
        }
    }

    /// The writer rebuilds the key indexes from its own statements: they must make what the
    /// migrations make.
    #[test]
    fn key_indexes_are_the_migrations_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open_for_writing(&dir.path().join("t.db")).unwrap();
        for (name, _, create) in KEY_INDEXES {
            let migrated: String = conn
                .query_row(
                    "SELECT sql FROM sqlite_schema WHERE name = ?1",
                    [name],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(create.replace(" IF NOT EXISTS", ""), migrated, "{name}");
        }
    }

    /// A database first written from an empty file has planner statistics of one game; the
    /// duplicate check must still look hashes up by the index, not scan every game.
    #[test]
    fn the_duplicate_check_uses_the_hash_index_after_a_tiny_run() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let conn = crate::store::open_for_writing(&path).unwrap();
        Writer::new(conn, false).unwrap().finish(true).unwrap();
        let conn = crate::store::open_for_writing(&path).unwrap();
        let stat: String = conn
            .query_row(
                "SELECT stat FROM sqlite_stat1 WHERE tbl = 'games' AND idx = 'games_hash'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(stat, "1 1", "the statistics of an empty run");
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {DUPLICATE_SQL}"))
            .unwrap()
            .query_map([0], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(
            plan.iter().any(|p| p.contains("USING INDEX games_hash")),
            "{plan:?}"
        );
        // Without INDEXED BY, these statistics gave a scan of `games` before schema 6 (its name
        // indexes changed the planner's choice since): INDEXED BY keeps the search whatever the
        // statistics say.
    }
}
