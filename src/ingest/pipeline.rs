//! `pawndex index`: the ingestion pipeline.
//!
//! ```text
//! reader thread            replay stage (rayon, every core)       writer (this thread)
//! open + decompress   ->   RawGame -> GameRecord | Reject    ->   SQLite, large transactions
//! + PGN parse              (bounded channel)                      (bounded channel)
//! ```
//!
//! A game whose text is a copy of a game replayed before it is not replayed again: it is a
//! duplicate ([`copies`](crate::ingest::copies)).
//!
//! Batches keep their order through the pipeline, so game ids do not depend on thread timing
//! and a re-run after an interruption produces the same database as an uninterrupted run.

use std::collections::BTreeMap;
use std::io::{self, IsTerminal, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use crossbeam_channel::{Receiver, Sender, bounded};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use crate::ingest::copies::{self, Copies};
use crate::ingest::input;
use crate::ingest::reader::{PgnGames, RawGame, StrayText};
use crate::ingest::replay::{RejectCategory, Replayed, replay};
use crate::model::numbers::thousands;
use crate::model::sink::{Sink, Stored};

/// Games per batch handed between stages.
const BATCH: usize = 512;
/// Games per transaction, at most.
const COMMIT_EVERY: u64 = 20_000;
/// Time between commits, at most: readers see progress, an interruption loses little.
const COMMIT_INTERVAL: Duration = Duration::from_secs(1);

/// What the pipeline reads, and how.
#[derive(Clone, Debug)]
pub struct ReadOptions {
    pub files: Vec<String>,
    pub threads: usize,
    pub quiet: bool,
    /// Games kept even when they are duplicates: then copies are replayed too (see
    /// [`copies`](crate::ingest::copies)).
    pub keep_duplicates: bool,
}

/// Counts of one run, printed as the end summary.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub files: usize,
    pub games_read: u64,
    pub indexed: u64,
    pub duplicates: u64,
    /// Of the duplicates, the copies not replayed (see [`copies`](crate::ingest::copies)).
    pub copies: u64,
    pub rejected: u64,
    pub rejected_by_reason: BTreeMap<RejectCategory, u64>,
    pub plies: u64,
    pub file_errors: Vec<String>,
    pub file_warnings: Vec<String>,
    pub interrupted: bool,
    pub elapsed: Duration,
}

impl Summary {
    /// The end summary, several lines of text.
    pub fn render(&self) -> String {
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        let mut s = format!(
            "{} file(s), {} games read: {} indexed, {} duplicates, {} rejected; {} plies; {:.1} s, {:.0} games/s\n",
            self.files,
            thousands(self.games_read),
            thousands(self.indexed),
            thousands(self.duplicates),
            thousands(self.rejected),
            thousands(self.plies),
            secs,
            self.games_read as f64 / secs
        );
        for (reason, n) in &self.rejected_by_reason {
            s += &format!("  rejected, {reason}: {}\n", thousands(*n));
        }
        // Errors and warnings were printed when they happened; the summary only counts them.
        if !self.file_errors.is_empty() || !self.file_warnings.is_empty() {
            s += &format!(
                "  {} file error(s), {} warning(s), printed above\n",
                self.file_errors.len(),
                self.file_warnings.len()
            );
        }
        s
    }
}

enum Message {
    /// A file could not be opened or broke while reading; games before the fault were sent.
    FileError(String),
    /// Something a person should know about a file that is not an error (no games in it).
    FileWarning(String),
    Games {
        file: usize,
        games: Vec<RawGame>,
    },
    /// The last games of this file were sent: its warning about text after results is due.
    FileRead(String),
}

enum Replayed2 {
    FileError(String),
    FileWarning(String),
    Games { file: usize, games: Vec<Replayed> },
}

/// Reads every file in turn and sends batches of raw games.
fn read_files(
    files: Vec<String>,
    tx: Sender<Message>,
    bytes_done: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
) {
    let mut base = 0u64;
    for (i, name) in files.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let input = match input::open(name) {
            Ok(input) => input,
            Err(e) => {
                let _ = tx.send(Message::FileError(format!("{name}: cannot read: {e}")));
                continue;
            }
        };
        let raw_read = input.raw_read.clone();
        let mut reader = input.reader;
        // `pawndex index` checked every input before it started (`input::check`); a file
        // may have changed since.
        match input::read_head(&mut reader).map(|head| (input::judge_head(&head), head)) {
            Ok((Some(refusal), _)) => {
                let _ = tx.send(Message::FileError(refusal.message(name)));
            }
            Ok((None, head)) => {
                let reader = io::Cursor::new(head).chain(reader);
                games_of_file(
                    i,
                    name,
                    reader,
                    input.decoded,
                    input.trapped,
                    &tx,
                    &stop,
                    || bytes_done.store(base + raw_read.load(Ordering::Relaxed), Ordering::Relaxed),
                );
            }
            Err(e) => {
                let _ = tx.send(Message::FileError(format!("{name}: cannot read: {e}")));
            }
        }
        base += raw_read.load(Ordering::Relaxed);
        bytes_done.store(base, Ordering::Relaxed);
    }
}

/// Sends the games of one decoded PGN stream, in batches.
#[allow(clippy::too_many_arguments)]
fn games_of_file(
    file: usize,
    name: &str,
    reader: impl Read,
    decoded: Arc<AtomicU64>,
    trapped: Arc<std::sync::Mutex<Option<String>>>,
    tx: &Sender<Message>,
    stop: &AtomicBool,
    progress: impl Fn(),
) {
    // The first bytes were read ahead by `input::read_head`, then fed back in front of the
    // stream, so the count is already right.
    let mut games = PgnGames::new(reader, decoded, trapped);
    let mut batch = Vec::with_capacity(BATCH);
    let mut saw_game = false;
    let mut not_games = NotGames::default();
    let error = loop {
        if stop.load(Ordering::Relaxed) {
            break None;
        }
        match games.next_game() {
            Ok(Some(g)) if g.is_not_a_game() => not_games.add(g.offset),
            Ok(Some(g)) => {
                saw_game = true;
                batch.push(g);
                if batch.len() == BATCH {
                    progress();
                    let games = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    if tx.send(Message::Games { file, games }).is_err() {
                        return;
                    }
                }
            }
            Ok(None) => break None,
            Err(e) => {
                break Some(format!(
                    "{name}: read error at byte {} of the decompressed stream: {}; games before it are kept",
                    e.offset, e.message
                ));
            }
        }
    };
    if !batch.is_empty() && tx.send(Message::Games { file, games: batch }).is_err() {
        return;
    }
    let _ = tx.send(Message::FileRead(name.to_string()));
    if let Some(e) = error {
        let _ = tx.send(Message::FileError(e));
    } else if let Some(w) = not_games.warning(name, saw_game, stop.load(Ordering::Relaxed)) {
        let _ = tx.send(Message::FileWarning(w));
    }
}

/// The file's warning about text after the results of its games (NUL padding, a second
/// result, moves): skipped, the games are indexed with the moves before their result.
fn stray_warning(name: &str, stray: &StrayText) -> Option<String> {
    let first = stray.first_offset?;
    Some(format!(
        "{name}: ignored text after the result of {} game(s) (the first at byte {first}): \
         not part of the game, which is indexed with the moves before its result",
        stray.games
    ))
}

/// Stretches of a file that hold neither a tag nor a move (prose, a preamble): not games, so
/// neither read nor rejected, but said once per file.
#[derive(Default)]
struct NotGames {
    count: u64,
    first_offset: Option<u64>,
}

impl NotGames {
    fn add(&mut self, offset: u64) {
        self.count += 1;
        self.first_offset.get_or_insert(offset);
    }

    /// The file's warning, if it needs one: no games at all, or text that is no game.
    fn warning(&self, name: &str, saw_game: bool, stopped: bool) -> Option<String> {
        if stopped {
            None
        } else if !saw_game && self.count == 0 {
            Some(format!("{name}: no PGN games found: the file is empty"))
        } else if !saw_game {
            Some(format!(
                "{name}: no PGN games found: the file holds text, but no tags and no moves"
            ))
        } else {
            let first = self.first_offset?;
            Some(format!(
                "{name}: skipped {} stretch(es) of text with no tags and no moves (the first at byte {first})",
                self.count
            ))
        }
    }
}

/// Replays batches on the rayon pool, keeping their order, and counts each file's games with
/// text after their result. Copies of games replayed before are not replayed again.
fn replay_batches(
    rx: Receiver<Message>,
    tx: Sender<Replayed2>,
    pool: rayon::ThreadPool,
    mut copies: Option<Copies>,
) {
    let mut stray = StrayText::default();
    for msg in rx {
        let out = match msg {
            Message::FileError(e) => Replayed2::FileError(e),
            Message::FileWarning(e) => Replayed2::FileWarning(e),
            Message::FileRead(name) => match stray_warning(&name, &std::mem::take(&mut stray)) {
                Some(w) => Replayed2::FileWarning(w),
                None => continue,
            },
            Message::Games { file, games } => {
                // Each game's key is made and looked up on the pool (the set only changes
                // between batches); the batch's new texts are remembered after it.
                let seen = copies.as_ref();
                // (text key, stray text offset), and what replay made of the game.
                type Keyed = (Option<u128>, Option<u64>);
                type Done = (Keyed, Replayed);
                let (keyed, games): (Vec<Keyed>, Vec<Replayed>) = pool.install(|| {
                    games
                        .into_par_iter()
                        .map(|mut g| -> Done {
                            let key = seen.and_then(|_| copies::key(&g));
                            if seen.is_some_and(|c| c.is_copy(key)) {
                                return ((key, None), Replayed::Copy);
                            }
                            g.read_moves();
                            ((key, g.stray), replay(g))
                        })
                        .unzip()
                });
                if let Some(copies) = &mut copies {
                    for (&(key, at), g) in keyed.iter().zip(&games) {
                        copies.remember(key, at, g);
                    }
                }
                keyed
                    .iter()
                    .filter_map(|&(_, at)| at)
                    .for_each(|at| stray.add(at));
                Replayed2::Games { file, games }
            }
        };
        if tx.send(out).is_err() {
            return;
        }
    }
}

fn progress_bar(total: Option<u64>, quiet: bool) -> ProgressBar {
    let hidden = quiet || !std::io::stderr().is_terminal();
    let bar = match total {
        Some(t) => ProgressBar::new(t),
        None => ProgressBar::no_length(),
    };
    if hidden {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    } else {
        let style = ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {msg} ETA {eta}",
        )
        .expect("valid template");
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_millis(200));
    }
    bar
}

/// The spinner shown while [`Writer::finish_with`] runs, naming its phase (hidden like the
/// progress bar when quiet or when stderr is not a terminal).
pub fn phase_spinner(quiet: bool) -> ProgressBar {
    let spinner = ProgressBar::new_spinner();
    if quiet || !std::io::stderr().is_terminal() {
        spinner.set_draw_target(ProgressDrawTarget::hidden());
    } else {
        let style = ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
            .expect("valid template");
        spinner.set_style(style);
        spinner.enable_steady_tick(Duration::from_millis(120));
    }
    spinner
}

/// The bytes of the input files, for the progress bar (`None` when stdin or a file's size is
/// unknown).
fn input_size(files: &[String]) -> Option<u64> {
    files
        .iter()
        .map(|f| {
            if f == "-" {
                None
            } else {
                std::fs::metadata(f).ok().map(|m| m.len())
            }
        })
        .sum()
}

/// When the writer commits: every [`COMMIT_EVERY`] games or [`COMMIT_INTERVAL`], whichever
/// comes first (so readers and a kill see recent games, and a commit never waits long).
struct CommitPolicy {
    since: u64,
    last: Instant,
}

impl CommitPolicy {
    fn new() -> Self {
        CommitPolicy {
            since: 0,
            last: Instant::now(),
        }
    }

    /// Counts `games` more; whether to commit now (then the count starts again).
    fn due(&mut self, games: usize) -> bool {
        self.since += games as u64;
        if self.since >= COMMIT_EVERY || self.last.elapsed() >= COMMIT_INTERVAL {
            self.since = 0;
            self.last = Instant::now();
            return true;
        }
        false
    }
}

/// Hands one replayed batch to the sink and counts what became of each game.
fn store_games(
    sink: &mut impl Sink,
    summary: &mut Summary,
    games: &[Replayed],
    source: &str,
) -> Result<()> {
    for g in games {
        summary.games_read += 1;
        match g {
            Replayed::Game(rec) => match sink.add_game(rec, source)? {
                Stored::Indexed => {
                    summary.indexed += 1;
                    summary.plies += u64::from(rec.plies);
                }
                Stored::Duplicate => summary.duplicates += 1,
            },
            Replayed::Copy => {
                summary.duplicates += 1;
                summary.copies += 1;
            }
            Replayed::Rejected(r) => {
                sink.add_reject(r, source)?;
                summary.rejected += 1;
                *summary.rejected_by_reason.entry(r.category).or_default() += 1;
            }
        }
    }
    Ok(())
}

/// Reads, replays and hands every game to `sink`, with the progress bar. The outer error is
/// a failure to start; the inner one a failure of the sink (the caller says what it means).
pub fn drive(
    opts: &ReadOptions,
    sink: &mut impl Sink,
    stop: &Arc<AtomicBool>,
    start: Instant,
) -> Result<(Summary, Result<()>)> {
    let bar = progress_bar(input_size(&opts.files), opts.quiet);
    let bytes_done = Arc::new(AtomicU64::new(0));

    let threads = opts.threads.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("replay-{i}"))
        .build()
        .context("starting replay threads")?;
    let (raw_tx, raw_rx) = bounded::<Message>(8);
    let (out_tx, out_rx) = bounded::<Replayed2>(8);
    let files = opts.files.clone();
    let copies = Copies::wanted(opts.keep_duplicates).then(Copies::new);
    let reader = {
        let bytes_done = bytes_done.clone();
        let stop = stop.clone();
        thread::Builder::new()
            .name("reader".into())
            .spawn(move || read_files(files, raw_tx, bytes_done, stop))?
    };
    let replayer = thread::Builder::new()
        .name("replay".into())
        .spawn(move || replay_batches(raw_rx, out_tx, pool, copies))?;

    let mut summary = Summary {
        files: opts.files.len(),
        ..Summary::default()
    };
    let mut commits = CommitPolicy::new();
    let result: Result<()> = (|| {
        for msg in &out_rx {
            match msg {
                Replayed2::FileError(e) => {
                    bar.suspend(|| eprintln!("pawndex: error: {e}"));
                    summary.file_errors.push(e);
                }
                Replayed2::FileWarning(w) => {
                    bar.suspend(|| eprintln!("pawndex: warning: {w}"));
                    summary.file_warnings.push(w);
                }
                Replayed2::Games { file, games } => {
                    store_games(sink, &mut summary, &games, &opts.files[file])?;
                    if commits.due(games.len()) {
                        sink.commit()?;
                    }
                    bar.set_position(bytes_done.load(Ordering::Relaxed));
                    let secs = start.elapsed().as_secs_f64().max(1e-9);
                    bar.set_message(format!(
                        "{} games, {:.0} games/s",
                        summary.games_read,
                        summary.games_read as f64 / secs
                    ));
                }
            }
        }
        Ok(())
    })();
    // Unblock and join the other stages whatever happened.
    drop(out_rx);
    let _ = replayer.join();
    let _ = reader.join();
    bar.finish_and_clear();
    Ok((summary, result))
}
