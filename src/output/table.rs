//! Writing query results: an aligned table, CSV, JSON lines, PGN games or FENs, streamed row by
//! row from a prepared statement (the table waits for its first rows to size its columns).

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread;

use crate::store::read::Snapshot;
use crate::store::read::query::{Cell, Prepared, Record};
use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, ValueEnum};

use crate::output::export::{self, Cursor, StoredGame};

/// How results are written.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned columns for a terminal
    Table,
    /// CSV with a header row (RFC 4180 quoting, LF line ends)
    Csv,
    /// JSON: one object per line (a row each), or one document where the command says so
    Json,
    /// Each matched game once, as PGN, its first matched ply marked with a comment
    Pgn,
    /// game_id, ply and FEN of each matched position, tab-separated
    Fen,
}

/// The `--format` value parser of a command that writes only some of the formats: clap
/// lists and accepts just those (`--format pgn` to `info` is a usage error naming the others).
#[must_use]
pub fn formats(
    allowed: &'static [Format],
) -> impl clap::builder::TypedValueParser<Value = Format> + 'static {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(
        allowed.iter().filter_map(ValueEnum::to_possible_value),
    )
    .map(|name| <Format as ValueEnum>::from_str(&name, false).unwrap_or(Format::Table))
}

/// Options shared by `query` and `find`: where to read and how to write.
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// Database to read (opened read-only)
    #[arg(long, default_value = crate::store::DEFAULT_DB, value_name = "PATH")]
    pub db: PathBuf,
    /// Output format
    #[arg(long, short, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Stop after N rows (N games with --format pgn)
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// Print only the number of matching positions (of rows, for a .sql file or --sql)
    #[arg(long, conflicts_with_all = ["format", "limit"])]
    pub count: bool,
    /// Stop the query after SECONDS (exit status 1); Ctrl-C stops it at any time (130)
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout)]
    pub timeout: Option<f64>,
}

fn parse_timeout(s: &str) -> std::result::Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(t) if t > 0.0 && t <= 1e9 => Ok(t),
        _ => Err(format!("\"{s}\" is not a number of seconds above 0")),
    }
}

/// Rows the table format reads before it fixes its column widths.
const TABLE_SAMPLE_ROWS: usize = 1000;

/// Receives result rows one at a time.
trait Sink {
    /// Handles one row; returns whether it produced an output record (for `--limit`).
    fn row(&mut self, row: &Record<'_, '_>) -> Result<bool>;
    fn finish(&mut self) -> Result<()>;
}

/// Runs a prepared statement (parameters already bound) and writes its rows; returns the
/// number of records written. PGN is formatted on `threads` threads (the caller's thread
/// policy), in order.
pub fn write_results(
    conn: &Snapshot,
    stmt: &mut Prepared<'_>,
    format: Format,
    limit: Option<u64>,
    threads: usize,
    out: &mut dyn Write,
) -> Result<u64> {
    let columns = stmt.columns();
    let mut sink: Box<dyn Sink + '_> = match format {
        Format::Table => Box::new(TableSink::new(columns, out)),
        Format::Csv => Box::new(CsvSink::new(&columns, out)?),
        Format::Json => Box::new(JsonSink::new(columns, out)),
        Format::Pgn => Box::new(PgnSink::new(conn, &columns, out, threads)?),
        Format::Fen => Box::new(FenSink::new(conn, &columns, out)?),
    };
    let mut written = 0u64;
    if limit != Some(0) {
        stmt.each(|row| {
            if sink.row(row)? {
                written += 1;
            }
            Ok(Some(written) != limit)
        })?;
    }
    sink.finish()?;
    Ok(written)
}

/// Index of a column by name (case-insensitive).
fn column_index(columns: &[String], name: &str) -> Option<usize> {
    columns.iter().position(|c| c.eq_ignore_ascii_case(name))
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(3 + bytes.len() * 2);
    s.push_str("X'");
    for b in bytes {
        s.push_str(&format!("{b:02X}"));
    }
    s.push('\'');
    s
}

/// A value as text (NULL is empty; a blob is an SQL hex literal).
fn text(v: Cell<'_>) -> String {
    match v {
        Cell::Null => String::new(),
        Cell::Integer(i) => i.to_string(),
        Cell::Real(f) => f.to_string(),
        Cell::Text(t) => String::from_utf8_lossy(t).into_owned(),
        Cell::Blob(b) => hex(b),
    }
}

struct TableSink<'a> {
    columns: Vec<String>,
    out: &'a mut dyn Write,
    sample: Vec<Vec<String>>,
    numeric: Vec<bool>,
    widths: Option<Vec<usize>>,
}

impl<'a> TableSink<'a> {
    fn new(columns: Vec<String>, out: &'a mut dyn Write) -> Self {
        let numeric = vec![true; columns.len()];
        TableSink {
            columns,
            out,
            sample: Vec::new(),
            numeric,
            widths: None,
        }
    }

    fn print_line(&mut self, cells: &[String], header: bool) -> io::Result<()> {
        let widths = self.widths.as_ref().expect("widths fixed");
        let mut line = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let w = widths[i];
            let pad = w.saturating_sub(cell.chars().count());
            if i > 0 {
                line.push_str("  ");
            }
            let last = i + 1 == cells.len();
            if self.numeric[i] && !header {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                if !last {
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
        }
        writeln!(self.out, "{line}")
    }

    /// Fixes the widths from the header and the sampled rows, and prints them.
    fn flush_sample(&mut self) -> io::Result<()> {
        let mut widths: Vec<usize> = self.columns.iter().map(|c| c.chars().count()).collect();
        for row in &self.sample {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        self.widths = Some(widths.clone());
        let header = self.columns.clone();
        self.print_line(&header, true)?;
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        self.print_line(&rule, true)?;
        for row in std::mem::take(&mut self.sample) {
            self.print_line(&row, false)?;
        }
        Ok(())
    }
}

impl Sink for TableSink<'_> {
    fn row(&mut self, row: &Record<'_, '_>) -> Result<bool> {
        let mut cells = Vec::with_capacity(self.columns.len());
        for i in 0..self.columns.len() {
            let v = row.get(i)?;
            if self.widths.is_none() && !matches!(v, Cell::Null | Cell::Integer(_) | Cell::Real(_))
            {
                self.numeric[i] = false;
            }
            cells.push(text(v));
        }
        if self.widths.is_some() {
            self.print_line(&cells, false)?;
        } else {
            self.sample.push(cells);
            if self.sample.len() >= TABLE_SAMPLE_ROWS {
                self.flush_sample()?;
            }
        }
        Ok(true)
    }

    fn finish(&mut self) -> Result<()> {
        if self.widths.is_none() {
            self.flush_sample()?;
        }
        self.out.flush()?;
        Ok(())
    }
}

/// The one CSV dialect of pawndex (`query`, `find` and `stats`): RFC 4180 quoting, a header row,
/// and LF line ends (what Unix tools expect; every CSV reader accepts them).
pub fn csv_writer<W: Write>(out: W) -> csv::Writer<W> {
    csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(out)
}

/// Decimals of White's score in tables, CSV and JSON.
pub const SCORE_DECIMALS: usize = 1;

/// White's score as tables and CSV write it: one decimal (`57.5`), empty without a score.
#[must_use]
pub fn score_text(score: Option<f64>) -> String {
    score.map_or(String::new(), |s| format!("{s:.SCORE_DECIMALS$}"))
}

/// White's score as JSON writes it: a number with the decimals of the table (the same value
/// as [`score_text`]), `null` without a score.
#[must_use]
pub fn score_json(score: Option<f64>) -> serde_json::Value {
    number_json(score, SCORE_DECIMALS)
}

/// A number as JSON with the precision its table cell shows (`digits` decimals: `12.35`, not
/// `12.345678`); `null` for none.
#[must_use]
pub fn number_json(v: Option<f64>, digits: usize) -> serde_json::Value {
    v.and_then(|v| format!("{v:.digits$}").parse::<f64>().ok())
        .filter(|v| v.is_finite())
        .map_or(serde_json::Value::Null, serde_json::Value::from)
}

struct CsvSink<'a> {
    writer: csv::Writer<&'a mut dyn Write>,
    record: Vec<String>,
}

impl<'a> CsvSink<'a> {
    fn new(columns: &[String], out: &'a mut dyn Write) -> Result<Self> {
        let mut writer = csv_writer(out);
        writer.write_record(columns)?;
        Ok(CsvSink {
            writer,
            record: vec![String::new(); columns.len()],
        })
    }
}

impl Sink for CsvSink<'_> {
    fn row(&mut self, row: &Record<'_, '_>) -> Result<bool> {
        for (i, cell) in self.record.iter_mut().enumerate() {
            *cell = text(row.get(i)?);
        }
        self.writer.write_record(&self.record)?;
        Ok(true)
    }

    fn finish(&mut self) -> Result<()> {
        self.writer.flush()?;
        Ok(())
    }
}

struct JsonSink<'a> {
    /// Column names as JSON strings, made unique (`x`, `x_2`, …) so that every key is kept.
    keys: Vec<String>,
    out: &'a mut dyn Write,
    line: String,
}

impl<'a> JsonSink<'a> {
    fn new(columns: Vec<String>, out: &'a mut dyn Write) -> Self {
        let mut seen = HashSet::new();
        let keys = columns
            .into_iter()
            .map(|c| {
                let mut key = c.clone();
                let mut n = 1;
                while !seen.insert(key.clone()) {
                    n += 1;
                    key = format!("{c}_{n}");
                }
                serde_json::Value::String(key).to_string()
            })
            .collect();
        JsonSink {
            keys,
            out,
            line: String::new(),
        }
    }
}

impl Sink for JsonSink<'_> {
    fn row(&mut self, row: &Record<'_, '_>) -> Result<bool> {
        self.line.clear();
        self.line.push('{');
        for (i, key) in self.keys.iter().enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            self.line.push_str(key);
            self.line.push(':');
            let value = match row.get(i)? {
                Cell::Null => serde_json::Value::Null,
                Cell::Integer(v) => v.into(),
                Cell::Real(v) => v.into(),
                Cell::Text(t) => String::from_utf8_lossy(t).into_owned().into(),
                Cell::Blob(b) => hex(b).into(),
            };
            self.line.push_str(&value.to_string());
        }
        self.line.push_str("}\n");
        self.out.write_all(self.line.as_bytes())?;
        Ok(true)
    }

    fn finish(&mut self) -> Result<()> {
        self.out.flush()?;
        Ok(())
    }
}

/// Reads the integer of a `game_id` or `ply` column.
fn integer(row: &Record<'_, '_>, i: usize, name: &str) -> Result<i64> {
    match row.get(i)? {
        Cell::Integer(v) => Ok(v),
        other => bail!("column {name} holds {other:?}, not an integer"),
    }
}

/// Games per batch handed to the PGN formatting thread.
const PGN_BATCH: usize = 256;
/// Batches queued per formatting thread (bounds memory).
const PGN_IN_FLIGHT: usize = 2;

/// A game to write, with its comments.
type PgnJob = (StoredGame, Vec<(u32, String)>);

/// Formats batches of games on worker threads, so that replaying moves into SAN runs in
/// parallel with itself and with reading the query's rows and the games (SQLite stays on the
/// calling thread). Batches go to the workers in turn and come back in the same order.
struct PgnFormatter {
    workers: Vec<PgnWorker>,
    /// Batches sent and not yet written; the oldest went to `next_out`.
    in_flight: usize,
    next_in: usize,
    next_out: usize,
}

struct PgnWorker {
    jobs: Option<SyncSender<Vec<PgnJob>>>,
    texts: Receiver<Result<String>>,
    thread: Option<thread::JoinHandle<()>>,
}

impl PgnFormatter {
    fn start(threads: usize) -> Self {
        let workers = (0..threads.max(1))
            .map(|_| {
                let (jobs, batches) = mpsc::sync_channel::<Vec<PgnJob>>(PGN_IN_FLIGHT);
                let (done, texts) = mpsc::channel();
                let thread = thread::spawn(move || {
                    for batch in batches {
                        let mut text = String::with_capacity(batch.len() * 1024);
                        let result = batch
                            .iter()
                            .try_for_each(|(game, marks)| export::write_pgn(&mut text, game, marks))
                            .map(|()| text);
                        if done.send(result).is_err() {
                            break;
                        }
                    }
                });
                PgnWorker {
                    jobs: Some(jobs),
                    texts,
                    thread: Some(thread),
                }
            })
            .collect();
        PgnFormatter {
            workers,
            in_flight: 0,
            next_in: 0,
            next_out: 0,
        }
    }

    /// Writes the oldest batch in flight.
    fn receive(&mut self, out: &mut dyn Write) -> Result<()> {
        let worker = &self.workers[self.next_out];
        let text = worker
            .texts
            .recv()
            .map_err(|_| anyhow!("a PGN formatting thread stopped"))??;
        self.next_out = (self.next_out + 1) % self.workers.len();
        self.in_flight -= 1;
        out.write_all(text.as_bytes())?;
        Ok(())
    }

    /// Queues a batch, writing finished batches (in order) while too many are queued.
    fn send(&mut self, batch: Vec<PgnJob>, out: &mut dyn Write) -> Result<()> {
        while self.in_flight >= PGN_IN_FLIGHT * self.workers.len() {
            self.receive(out)?;
        }
        self.workers[self.next_in]
            .jobs
            .as_ref()
            .expect("formatter running")
            .send(batch)
            .map_err(|_| anyhow!("a PGN formatting thread stopped"))?;
        self.next_in = (self.next_in + 1) % self.workers.len();
        self.in_flight += 1;
        Ok(())
    }

    /// Writes every queued batch and stops the threads.
    fn finish(&mut self, out: &mut dyn Write) -> Result<()> {
        while self.in_flight > 0 {
            self.receive(out)?;
        }
        for w in &mut self.workers {
            w.jobs = None;
        }
        for w in &mut self.workers {
            if let Some(t) = w.thread.take() {
                t.join()
                    .map_err(|_| anyhow!("a PGN formatting thread panicked"))?;
            }
        }
        Ok(())
    }
}

struct PgnSink<'a> {
    conn: &'a Snapshot,
    out: &'a mut dyn Write,
    game_col: usize,
    ply_col: Option<usize>,
    /// A `pgn_comment` column: its text (when not NULL) is the comment at the marked ply.
    comment_col: Option<usize>,
    /// Games already written (a query need not return a game's rows together).
    done: HashSet<i64>,
    last: Option<i64>,
    batch: Vec<PgnJob>,
    formatter: PgnFormatter,
}

impl<'a> PgnSink<'a> {
    fn new(
        conn: &'a Snapshot,
        columns: &[String],
        out: &'a mut dyn Write,
        threads: usize,
    ) -> Result<Self> {
        let game_col = column_index(columns, "game_id").ok_or_else(|| {
            anyhow!(
                "--format pgn needs a game_id column in the result (columns: {}); \
                 e.g. SELECT id AS game_id FROM games ORDER BY id",
                columns.join(", ")
            )
        })?;
        Ok(PgnSink {
            conn,
            out,
            game_col,
            ply_col: column_index(columns, "ply"),
            comment_col: column_index(columns, "pgn_comment"),
            done: HashSet::new(),
            last: None,
            batch: Vec::with_capacity(PGN_BATCH),
            formatter: PgnFormatter::start(threads),
        })
    }
}

impl Sink for PgnSink<'_> {
    fn row(&mut self, row: &Record<'_, '_>) -> Result<bool> {
        let id = integer(row, self.game_col, "game_id")?;
        if self.last == Some(id) || !self.done.insert(id) {
            return Ok(false);
        }
        self.last = Some(id);
        let game =
            export::load_game(self.conn, id)?.with_context(|| format!("no game with id {id}"))?;
        let marks = match self.ply_col {
            Some(i) => {
                let ply = integer(row, i, "ply")?;
                if !(0..=i64::from(game.plies())).contains(&ply) {
                    bail!(
                        "game {id} has {} plies; there is no ply {ply}",
                        game.plies()
                    );
                }
                let comment = match self.comment_col.map(|c| row.get(c)).transpose()? {
                    Some(Cell::Text(t)) => String::from_utf8_lossy(t).into_owned(),
                    _ => format!("pawndex: first match, game {id} ply {ply}"),
                };
                vec![(ply as u32, comment)]
            }
            None => Vec::new(),
        };
        self.batch.push((game, marks));
        if self.batch.len() >= PGN_BATCH {
            let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(PGN_BATCH));
            self.formatter.send(batch, self.out)?;
        }
        Ok(true)
    }

    fn finish(&mut self) -> Result<()> {
        if !self.batch.is_empty() {
            let batch = std::mem::take(&mut self.batch);
            self.formatter.send(batch, self.out)?;
        }
        self.formatter.finish(self.out)?;
        self.out.flush()?;
        Ok(())
    }
}

struct FenSink<'a> {
    conn: &'a Snapshot,
    out: &'a mut dyn Write,
    game_col: usize,
    ply_col: usize,
    cursor: Option<Cursor>,
}

impl<'a> FenSink<'a> {
    fn new(conn: &'a Snapshot, columns: &[String], out: &'a mut dyn Write) -> Result<Self> {
        let (Some(game_col), Some(ply_col)) = (
            column_index(columns, "game_id"),
            column_index(columns, "ply"),
        ) else {
            bail!(
                "--format fen needs game_id and ply columns in the result (columns: {})",
                columns.join(", ")
            );
        };
        Ok(FenSink {
            conn,
            out,
            game_col,
            ply_col,
            cursor: None,
        })
    }
}

impl Sink for FenSink<'_> {
    fn row(&mut self, row: &Record<'_, '_>) -> Result<bool> {
        let id = integer(row, self.game_col, "game_id")?;
        let ply = integer(row, self.ply_col, "ply")?;
        if self.cursor.as_ref().map(|c| c.game.id) != Some(id) {
            let game = export::load_game(self.conn, id)?
                .with_context(|| format!("no game with id {id}"))?;
            self.cursor = Some(Cursor::new(game)?);
        }
        let cursor = self.cursor.as_mut().expect("cursor loaded");
        let ply = u32::try_from(ply).map_err(|_| anyhow!("game {id}: there is no ply {ply}"))?;
        let fen = cursor.fen(ply)?;
        writeln!(self.out, "{id}\t{ply}\t{fen}")?;
        Ok(true)
    }

    fn finish(&mut self) -> Result<()> {
        self.out.flush()?;
        Ok(())
    }
}
