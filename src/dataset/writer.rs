//! Writing a dataset: rolling zstd Parquet files per table, and [`DatasetWriter`], the
//! second destination of the ingest pipeline (the first is SQLite's `store::Writer`).

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use std::thread::JoinHandle;

use anyhow::{Context, Result, bail};
use arrow_array::RecordBatch;
use crossbeam_channel::{Sender, bounded};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use super::failed::{self, Step};
use super::layout::{Claim, TABLES};
use super::tables::{self, ChangeRow, Changes, GameRow, Games, RejectRow, Rejects, RunRow, Runs};
use crate::model::game::{GameRecord, Reject, content_check};
use crate::model::sink::{Sink, Stored};
use crate::model::structure::{Catalogue, Code};

/// Rows per row group of `runs`: large groups compress better, and engines read the groups
/// in parallel. The encoder holds a whole group (compressed) in memory.
const RUN_ROW_GROUP: usize = 1 << 20;
/// Rows per row group of `games` and `rejects`: a game's row is some 130 bytes compressed
/// (its moves), so a group of 2^20 games would hold 130 MB in memory.
const GAME_ROW_GROUP: usize = 1 << 17;
/// Rows buffered before they are handed to the Parquet encoder.
const BATCH_ROWS: usize = 1 << 16;
/// A game's number takes the low 40 bits of its id, the shard the 23 above.
const NUMBER_BITS: u32 = 40;

/// The bytes every staging file of the run may take in all, from `PAWNDEX_MAX_DATASET_BYTES`
/// (read here only). A testing knob: a write past it fails with "No space left on device", as
/// on a full disk, without filling one.
fn space_left() -> Option<&'static AtomicU64> {
    static LEFT: OnceLock<Option<AtomicU64>> = OnceLock::new();
    LEFT.get_or_init(|| {
        let bytes = std::env::var("PAWNDEX_MAX_DATASET_BYTES").ok()?;
        bytes.trim().parse().ok().map(AtomicU64::new)
    })
    .as_ref()
}

/// A staging file: the file, with the testing limit of [`space_left`].
struct StagedFile {
    file: File,
    left: Option<&'static AtomicU64>,
}

impl Write for StagedFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(left) = self.left {
            let n = buf.len() as u64;
            if left
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |l| l.checked_sub(n))
                .is_err()
            {
                #[cfg(unix)]
                return Err(io::Error::from_raw_os_error(28)); // ENOSPC
                #[cfg(not(unix))]
                return Err(io::Error::new(
                    io::ErrorKind::StorageFull,
                    "No space left on device",
                ));
            }
        }
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// The files of one table: `part-SSSSSSS-NNNN.parquet` in the staging directory, a new one
/// when the current one reaches `max_bytes`.
struct TableFiles {
    table: &'static str,
    dir: PathBuf,
    shard: u32,
    max_bytes: u64,
    next_file: u32,
    open: Option<ArrowWriter<BufWriter<StagedFile>>>,
    files: Vec<PathBuf>,
    rows: u64,
}

impl TableFiles {
    fn new(claim: &Claim, table: &'static str, max_bytes: u64) -> Result<Self> {
        let dir = claim.staging_dir(table);
        std::fs::create_dir_all(&dir).with_context(|| Step::Create(dir.clone()))?;
        Ok(TableFiles {
            table,
            dir,
            shard: claim.shard,
            max_bytes,
            next_file: 0,
            open: None,
            files: Vec::new(),
            rows: 0,
        })
    }

    /// zstd everywhere (level 1 for `runs`: on masters-1 its files grow 3% and the whole run
    /// takes 5% less time than at level 3); per column the encoding that makes it smallest
    /// (measured on the masters corpus): sorted ids as deltas, high-cardinality bitboards and
    /// move lists plain (a dictionary of them overflows and costs time), a dictionary for the
    /// small features. The move lists (a third of the bytes) stay at level 3: level 6 made the
    /// dataset 1.6% smaller and the whole run 10% slower on 2 cores; level 1 was no faster.
    fn properties(&self) -> Result<WriterProperties> {
        let zstd =
            |level| -> Result<Compression> { Ok(Compression::ZSTD(ZstdLevel::try_new(level)?)) };
        let runs = self.table == "runs";
        let mut b = WriterProperties::builder()
            .set_compression(zstd(if runs { 1 } else { 3 })?)
            .set_max_row_group_row_count(Some(if runs { RUN_ROW_GROUP } else { GAME_ROW_GROUP }))
            .set_created_by(format!("pawndex {}", env!("CARGO_PKG_VERSION")))
            .set_key_value_metadata(Some(vec![
                KeyValue::new("pawndex.table".into(), self.table.to_string()),
                KeyValue::new("pawndex.shard".into(), self.shard.to_string()),
            ]));
        let col = |name: &str| ColumnPath::from(name);
        let (deltas, plain, strong): (&[&str], &[&str], &[(&str, i32)]) = match self.table {
            "runs" => (
                &["game_id"],
                &["white_pawns", "black_pawns", "pieceset"],
                &[],
            ),
            "games" => (&["id", "offset"], &["hash"], &[]),
            "structure_changes" => (&["game_id"], &[], &[]),
            _ => (&["id"], &[], &[]),
        };
        for name in deltas {
            b = b
                .set_column_dictionary_enabled(col(name), false)
                .set_column_encoding(col(name), Encoding::DELTA_BINARY_PACKED);
        }
        for name in plain {
            b = b.set_column_dictionary_enabled(col(name), false);
        }
        if self.table == "games" {
            b = b
                .set_column_dictionary_enabled(col("moves"), false)
                .set_column_encoding(col("moves"), Encoding::DELTA_LENGTH_BYTE_ARRAY);
        }
        for (name, level) in strong {
            b = b.set_column_compression(col(name), zstd(*level)?);
        }
        Ok(b.build())
    }

    fn writer(&mut self) -> Result<&mut ArrowWriter<BufWriter<StagedFile>>> {
        if self.open.is_none() {
            let path = self.dir.join(format!(
                "part-{:07}-{:04}.parquet",
                self.shard, self.next_file
            ));
            self.next_file += 1;
            self.files.push(path.clone());
            let file = File::create(&path).with_context(|| Step::Write(path.clone()))?;
            let file = StagedFile {
                file,
                left: space_left(),
            };
            let writer = ArrowWriter::try_new(
                BufWriter::with_capacity(1 << 20, file),
                tables::schema_of(self.table),
                Some(self.properties()?),
            )
            .with_context(|| Step::Write(path))?;
            self.open = Some(writer);
        }
        Ok(self.open.as_mut().expect("opened above"))
    }

    /// The file being written (the last one), for messages.
    fn current(&self) -> Step {
        Step::Write(self.files.last().unwrap_or(&self.dir).clone())
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.rows += batch.num_rows() as u64;
        let max = self.max_bytes;
        let w = self.writer()?;
        let full = w
            .write(batch)
            .map(|()| (w.bytes_written() + w.in_progress_size()) as u64 >= max);
        if full.with_context(|| self.current())? {
            self.close_file()?;
        }
        Ok(())
    }

    fn close_file(&mut self) -> Result<()> {
        if let Some(w) = self.open.take() {
            let closed = (|| -> Result<()> {
                let file = w.into_inner()?;
                file.into_inner()
                    .map_err(|e| e.into_error())?
                    .file
                    .sync_all()?;
                Ok(())
            })();
            closed.with_context(|| self.current())?;
        }
        Ok(())
    }

    /// Closes the last file; a table that got no rows still gets one (empty) file, so that
    /// every table of a partition can be read.
    fn finish(&mut self) -> Result<()> {
        if self.files.is_empty() {
            self.writer()?;
        }
        self.close_file()
    }
}

/// A table's files written on a thread of their own: Parquet encoding and zstd take most of
/// the writer's time, and the four tables encode in parallel with each other and with the
/// replay. At most two batches wait for each encoder, so memory stays bounded.
struct Encoder {
    tx: Option<Sender<RecordBatch>>,
    thread: Option<JoinHandle<Result<TableFiles>>>,
    /// Set when the run is abandoned: the thread stops without closing its file.
    abort: Arc<AtomicBool>,
}

impl Encoder {
    fn start(mut files: TableFiles) -> Result<Self> {
        let (tx, rx) = bounded::<RecordBatch>(2);
        let abort = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&abort);
        let thread = std::thread::Builder::new()
            .name(format!("parquet-{}", files.table))
            .spawn(move || -> Result<TableFiles> {
                for batch in rx {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    files.write(&batch)?;
                }
                if stop.load(Ordering::Relaxed) {
                    bail!("the run was abandoned");
                }
                files.finish()?;
                Ok(files)
            })?;
        Ok(Encoder {
            tx: Some(tx),
            thread: Some(thread),
            abort,
        })
    }

    /// Stops the thread without finishing its file and waits for it, so that nothing is
    /// written into the staging directory any more.
    fn abandon(&mut self) {
        self.abort.store(true, Ordering::Relaxed);
        let _ = self.finish();
    }

    /// Hands a batch to the thread; when the thread has failed, its error.
    fn send(&mut self, batch: RecordBatch) -> Result<()> {
        let sent = self.tx.as_ref().is_some_and(|tx| tx.send(batch).is_ok());
        if sent {
            return Ok(());
        }
        match self.finish() {
            Err(e) => Err(e),
            Ok(_) => bail!("the Parquet encoder stopped"),
        }
    }

    /// Closes the table's last file and returns what was written.
    fn finish(&mut self) -> Result<TableFiles> {
        drop(self.tx.take());
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| anyhow::anyhow!("the Parquet encoder panicked"))?,
            None => bail!("the Parquet encoder already stopped"),
        }
    }
}

impl Drop for Encoder {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.abandon();
        }
    }
}

/// What a finished run wrote.
#[derive(Clone, Debug, Default)]
pub struct Written {
    pub games: u64,
    pub runs: u64,
    pub rejects: u64,
    /// Rows of `structure_changes`.
    pub changes: u64,
    pub files: usize,
    /// Bytes of the published files.
    pub bytes: u64,
}

/// The key of the structure a code names in the catalogue in force (`None` for no name).
fn key(code: Code) -> Option<&'static str> {
    Catalogue::active().named(code).map(|(d, _)| d.key.as_str())
}

/// Writes one run's games, runs and rejects as a dataset partition; nothing is visible to
/// readers until [`DatasetWriter::finish`] publishes it.
pub struct DatasetWriter {
    /// games, runs, rejects, structure_changes. Declared before `claim`, so dropped first:
    /// the threads have stopped writing when the claim's guard removes the staging files.
    encoders: [Encoder; 4],
    claim: Claim,
    games: Games,
    runs: Runs,
    rejects: Rejects,
    changes: Changes,
    games_stored: u64,
    rejects_stored: u64,
    /// Game hash -> a second, independent hash of the same contents: two games are the same
    /// when both agree (`None` with `--keep-duplicates`).
    seen: Option<HashMap<i64, u64>>,
    /// (source, offset) of the rejects stored: a file given twice rejects its games once.
    rejected: HashSet<(String, u64)>,
}

impl DatasetWriter {
    pub fn new(mut claim: Claim, keep_duplicates: bool, max_file_bytes: u64) -> Result<Self> {
        // The encoders' buffers: `main.rs` has mimalloc keep the memory it frees for them.
        crate::model::workload::entering(crate::model::workload::Workload::Parquet);
        let started = (|| -> Result<[Encoder; 4]> {
            let start = |table| Encoder::start(TableFiles::new(&claim, table, max_file_bytes)?);
            Ok([
                start("games")?,
                start("runs")?,
                start("rejects")?,
                start("structure_changes")?,
            ])
        })();
        let encoders = match started {
            Ok(encoders) => encoders,
            Err(e) => {
                let cleanup = claim.remove_staging();
                return Err(failed::explain(e, claim.dir(), cleanup));
            }
        };
        Ok(DatasetWriter {
            encoders,
            claim,
            games: Games::default(),
            runs: Runs::default(),
            rejects: Rejects::default(),
            changes: Changes::default(),
            games_stored: 0,
            rejects_stored: 0,
            seen: (!keep_duplicates).then(HashMap::new),
            rejected: HashSet::new(),
        })
    }

    /// The shard this run writes (the high bits of its ids).
    pub fn shard(&self) -> u32 {
        self.claim.shard
    }

    /// The id of a run's `n`-th game or reject (from 1).
    fn id(&self, n: u64) -> Result<i64> {
        if n >= 1 << NUMBER_BITS {
            bail!("more than 2^40 games in one run: split the input");
        }
        Ok((i64::from(self.claim.shard) << NUMBER_BITS) | n as i64)
    }

    /// Adds a game unless the run already has the same one.
    pub fn add_game(&mut self, g: &GameRecord, source: &str) -> Result<Stored> {
        if let Some(seen) = &mut self.seen {
            let check = content_check(g);
            match seen.get(&g.hash) {
                Some(&c) if c == check => return Ok(Stored::Duplicate),
                // Same first hash, other contents: a collision; the game is kept (its first
                // hash stays with the earlier game).
                Some(_) => {}
                None => {
                    seen.insert(g.hash, check);
                }
            }
        }
        self.games_stored += 1;
        let id = self.id(self.games_stored)?;
        self.games.push(&GameRow {
            id,
            header: &g.header,
            plies: g.plies as i32,
            source,
            offset: g.offset as i64,
            fen: g.fen.as_deref(),
            chess960: g.chess960,
            moves: &g.moves,
            hash: g.hash,
        });
        for (run, [white, black]) in g.runs.iter().zip(&g.run_features) {
            self.runs.push(&RunRow {
                game_id: id,
                first_ply: run.first_ply as i32,
                last_ply: run.last_ply as i32,
                white_pawns: run.white_pawns,
                black_pawns: run.black_pawns,
                white: *white,
                black: *black,
                bishop_pairs: run.bishop_pairs,
                pieceset: run.pieceset,
                structure: key(run.structure),
                structure_reversed: run.structure % 2 == 1,
            });
        }
        for c in &g.changes {
            self.changes.push(&ChangeRow {
                game_id: id,
                ply: c.ply as i32,
                from: key(c.from),
                from_reversed: c.from % 2 == 1,
                to: key(c.to),
                to_reversed: c.to % 2 == 1,
                san: c.san.as_deref(),
            });
        }
        self.flush_full()?;
        Ok(Stored::Indexed)
    }

    /// Adds a rejected game (once per source and offset).
    pub fn add_reject(&mut self, r: &Reject, source: &str) -> Result<()> {
        if !self.rejected.insert((source.to_string(), r.offset)) {
            return Ok(());
        }
        self.rejects_stored += 1;
        let id = self.id(self.rejects_stored)?;
        self.rejects.push(&RejectRow {
            id,
            source,
            offset: r.offset as i64,
            event: r.event.as_deref(),
            white: r.white.as_deref(),
            black: r.black.as_deref(),
            ply: r.ply.map(|p| p as i32),
            reason: &r.reason,
        });
        self.flush_full()
    }

    /// Adds rows given directly (`export parquet`): the caller chooses the ids.
    pub fn push_game_row(&mut self, row: &GameRow) -> Result<()> {
        self.games_stored += 1;
        self.games.push(row);
        self.flush_full()
    }

    pub fn push_run_row(&mut self, row: &RunRow) -> Result<()> {
        self.runs.push(row);
        self.flush_full()
    }

    pub fn push_change_row(&mut self, row: &ChangeRow) -> Result<()> {
        self.changes.push(row);
        self.flush_full()
    }

    pub fn push_reject_row(&mut self, row: &RejectRow) -> Result<()> {
        self.rejects_stored += 1;
        self.rejects.push(row);
        self.flush_full()
    }

    /// An id for a row with number `n` of the source (export keeps the database's ids).
    pub fn id_for(&self, n: i64) -> Result<i64> {
        if n < 0 {
            bail!("negative id {n} in the database");
        }
        self.id(n as u64)
    }

    /// Hands the buffers that are full to the encoders.
    fn flush_full(&mut self) -> Result<()> {
        match self.flush(BATCH_ROWS) {
            Ok(()) => Ok(()),
            Err(e) => Err(self.fail(e)),
        }
    }

    /// Abandons the run after `e`: stops the encoders, removes the staging files, and says
    /// what happened ([`failed::Failed`] for a failed write or a lost race).
    fn fail(&mut self, e: anyhow::Error) -> anyhow::Error {
        for encoder in &mut self.encoders {
            encoder.abandon();
        }
        let cleanup = self.claim.remove_staging();
        failed::explain(e, self.claim.dir(), cleanup)
    }

    /// Hands every buffer holding at least `min` rows (and at least one) to its encoder.
    fn flush(&mut self, min: usize) -> Result<()> {
        let min = min.max(1);
        if self.games.len() >= min {
            let b = self.games.take()?;
            self.encoders[0].send(b)?;
        }
        if self.runs.len() >= min {
            let b = self.runs.take()?;
            self.encoders[1].send(b)?;
        }
        if self.rejects.len() >= min {
            let b = self.rejects.take()?;
            self.encoders[2].send(b)?;
        }
        if self.changes.len() >= min {
            let b = self.changes.take()?;
            self.encoders[3].send(b)?;
        }
        Ok(())
    }

    /// Closes every file and publishes the partition; on an error, publishes nothing and
    /// removes the staging files.
    pub fn finish(mut self) -> Result<Written> {
        match self.close_and_publish() {
            Ok(written) => Ok(written),
            Err(e) => Err(self.fail(e)),
        }
    }

    fn close_and_publish(&mut self) -> Result<Written> {
        self.flush(1)?;
        let mut written = Written::default();
        let mut counts = [0u64; 4];
        for (encoder, count) in self.encoders.iter_mut().zip(&mut counts) {
            let files = encoder.finish()?;
            *count = files.rows;
            written.files += files.files.len();
            for p in &files.files {
                written.bytes += std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
            }
        }
        [
            written.games,
            written.runs,
            written.rejects,
            written.changes,
        ] = counts;
        debug_assert_eq!(TABLES.len(), self.encoders.len());
        self.claim.publish()?;
        Ok(written)
    }

    /// Drops what the run wrote: nothing is published.
    pub fn discard(self) -> Result<()> {
        let DatasetWriter {
            claim,
            mut encoders,
            ..
        } = self;
        for e in &mut encoders {
            e.abandon();
        }
        claim.discard()
    }
}

impl Sink for DatasetWriter {
    fn add_game(&mut self, g: &GameRecord, source: &str) -> Result<Stored> {
        DatasetWriter::add_game(self, g, source)
    }
    fn add_reject(&mut self, r: &Reject, source: &str) -> Result<()> {
        DatasetWriter::add_reject(self, r, source)
    }
    fn commit(&mut self) -> Result<()> {
        Ok(())
    }
}
