//! `pawndex annotate`: every game of a PGN file replayed and annotated with what a reference
//! database's games did in its structures (`engine::annotate`), written back as PGN with
//! `{pawndex: …}` comments (the game's own text kept byte for byte) or as JSON lines;
//! `--strip` takes the comments out again. docs/annotate.md is the contract.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use crate::cli::common::{self as command, EXIT_ERROR, EXIT_OK, ThreadsArg};
use crate::engine::annotate::{Options, Reference, annotate_all};
use crate::ingest::games::{GameStream, Prepared};
use crate::ingest::reader::{RawGame, layout};
use crate::model::annotate::{insert, strip};
use crate::model::usage;
use crate::output::annotate::{comments, game_json};
use crate::store::DEFAULT_DB;
use crate::store::read::{Limit, Snapshot};

const AFTER_HELP: &str = "\
Every game of FILE is replayed on its own (it need not be in the reference database). At the
start: its structures in order. Where its named structure begins or changes: the reference's
games and positions there, White's score and the side to move's score, the average stay, each
side's most played moves and pawn breaks (the mover's score) and model games: the figures of
`plans --structure-name KEY` on the reference. Where it leaves a structure: how many reference
games left it by the same move, the mover's score, and the most played other exits. Where it
keeps unnamed pawns 8 plies or more: the reference's games with exactly those pawns, or the
nearest frequent structure (`similar`). A figure over fewer than --min-games games is not quoted.

pawndex's comments start with `pawndex:`; the game's tags, comments, NAGs and variations are
written back unchanged. Annotating an annotated file replaces its pawndex comments; --strip
only removes them. docs/annotate.md has every rule and the JSON fields.

Exit status: 0 every game annotated, 1 a game could not be replayed (reported, written back
unchanged; the others are annotated) or an error, 2 bad command line.

Examples:
  pawndex annotate mygame.pgn --db masters.db
  pawndex annotate games.pgn.zst --db masters.db -o annotated.pgn
  pawndex annotate - --db masters.db --format json < mygame.pgn | jq '.changes[].structure.name'
  pawndex annotate games.pgn --db masters.db --only-changes --no-model-games --min-games 50
  pawndex annotate annotated.pgn --strip -o clean.pgn";

/// `--format` of annotate.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum AnnotateFormat {
    /// The games with pawndex's comments put in
    Pgn,
    /// One JSON object per game and line
    Json,
}

/// Options of `pawndex annotate`.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct AnnotateArgs {
    /// PGN file (plain, .gz, .bz2, .zst), or - for standard input
    #[arg(value_name = "FILE|-")]
    pub file: String,
    /// The reference database (opened read-only)
    #[arg(long, default_value = DEFAULT_DB, value_name = "PATH")]
    pub db: PathBuf,
    /// Write to this file instead of standard output (written in full, then put in place)
    #[arg(long, short, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Output format
    #[arg(long, short, value_enum, default_value_t = AnnotateFormat::Pgn)]
    pub format: AnnotateFormat,
    /// Only remove pawndex's comments (no reference is read)
    #[arg(long)]
    pub strip: bool,
    /// Only where the named structure changes (no summary, no unnamed pawn structures)
    #[arg(long)]
    pub only_changes: bool,
    /// Leave out the model games
    #[arg(long)]
    pub no_model_games: bool,
    /// Below this many reference games a figure is not quoted
    #[arg(long, value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub min_games: u64,
    /// Plan moves quoted per side
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u16).range(1..=20))]
    pub top: u16,
    /// No progress and no summary on standard error (errors are still printed)
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub threads: ThreadsArg,
}

/// Runs `pawndex annotate`.
pub fn run(args: AnnotateArgs) -> Result<i32> {
    command::exit_status(run_annotate(args))
}

/// Where the output goes: standard output, or a temporary file beside `-o` moved in place
/// at the end.
enum Sink {
    Stdout(io::BufWriter<io::StdoutLock<'static>>),
    File(io::BufWriter<tempfile::NamedTempFile>, PathBuf),
}

impl Sink {
    fn open(output: Option<&Path>) -> Result<Sink> {
        let Some(path) = output else {
            return Ok(Sink::Stdout(io::BufWriter::new(io::stdout().lock())));
        };
        crate::output::check_output_path("-o", path)?;
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let temp = tempfile::Builder::new()
            .prefix(".pawndex-annotate-")
            .tempfile_in(folder)
            .with_context(|| format!("-o {}: cannot write in its folder", path.display()))?;
        Ok(Sink::File(io::BufWriter::new(temp), path.to_path_buf()))
    }

    fn out(&mut self) -> &mut dyn Write {
        match self {
            Sink::Stdout(w) => w,
            Sink::File(w, _) => w,
        }
    }

    fn finish(self) -> Result<()> {
        match self {
            Sink::Stdout(mut w) => Ok(w.flush()?),
            Sink::File(w, path) => {
                let temp = w.into_inner().map_err(|e| e.into_error())?;
                temp.as_file().sync_all()?;
                temp.persist(&path).map_err(|e| {
                    anyhow::anyhow!("-o {}: cannot write it: {}", path.display(), e.error)
                })?;
                Ok(())
            }
        }
    }
}

/// Games annotated at once (on several threads); the memory in use grows with these, not
/// with the input.
const BATCH: usize = 64;

/// A piece of the input: text that is no game (or a game only stripped), or a game replayed.
enum Piece {
    Text(Vec<u8>),
    Game {
        number: u64,
        words: String,
        game: Prepared,
    },
}

/// Annotates the games of a batch against the reference and writes the batch in order;
/// returns how many games could not be replayed.
fn write_batch(
    args: &AnnotateArgs,
    reference: Option<&(Snapshot, Reference)>,
    sink: &mut Sink,
    spinner: &indicatif::ProgressBar,
    batch: &[Piece],
) -> Result<u64> {
    let records: Vec<&crate::model::game::GameRecord> = batch
        .iter()
        .filter_map(|p| match p {
            Piece::Game { game, .. } => game.replayed.as_deref().ok(),
            _ => None,
        })
        .collect();
    let mut notes = match reference {
        Some((conn, r)) => annotate_all(conn, r, &records, args.threads.count())?,
        None => Vec::new(),
    }
    .into_iter();
    let mut failed = 0;
    for piece in batch {
        let Piece::Game {
            number,
            words,
            game,
        } = piece
        else {
            if let Piece::Text(text) = piece
                && args.format == AnnotateFormat::Pgn
            {
                sink.out().write_all(text)?;
            }
            continue;
        };
        let (offset, tags, text) = (game.offset, &game.tags, &game.text);
        match &game.replayed {
            Ok(_) => {
                let (Some(n), Some((_, r))) = (notes.next(), reference) else {
                    anyhow::bail!("a game's notes are missing");
                };
                match args.format {
                    AnnotateFormat::Json => {
                        writeln!(sink.out(), "{}", game_json(*number, offset, tags, Ok(&n)))?;
                    }
                    AnnotateFormat::Pgn => {
                        let said = comments(&n, &r.label, r.games, !args.only_changes);
                        sink.out().write_all(&insert(text, &game.layout, &said))?;
                    }
                }
            }
            Err(f) => {
                failed += 1;
                spinner.suspend(|| {
                    eprintln!(
                        "pawndex: {words}: {}; written back without annotations",
                        f.reason
                    );
                });
                match args.format {
                    AnnotateFormat::Json => {
                        writeln!(sink.out(), "{}", game_json(*number, offset, tags, Err(f)))?;
                    }
                    AnnotateFormat::Pgn => sink.out().write_all(text)?,
                }
            }
        }
    }
    Ok(failed)
}

/// A game as the messages name it: its number, byte offset and players.
fn game_words(number: u64, raw: &RawGame) -> String {
    let name = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
    format!(
        "game {number} (byte {}, {} - {})",
        raw.offset,
        name(&raw.tags.white),
        name(&raw.tags.black)
    )
}

fn run_annotate(args: AnnotateArgs) -> Result<i32> {
    let start = Instant::now();
    if args.strip && args.format == AnnotateFormat::Json {
        usage!("--strip writes PGN: leave out --format json");
    }
    // The input first: a file that cannot be read, an archive or binary data is refused before
    // anything is written.
    let mut games = match GameStream::open(&args.file) {
        Ok(g) => g,
        Err(message) => anyhow::bail!(message),
    };
    let reference = if args.strip {
        None
    } else {
        command::refuse_pgn_as_database(&args.db, false)?;
        let conn = Snapshot::open(&args.db, &Limit::none())?;
        let label = args.db.file_name().map_or_else(
            || args.db.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let options = Options {
            top: usize::from(args.top),
            model_games: if args.no_model_games { 0 } else { 2 },
            min_games: args.min_games,
            only_changes: args.only_changes,
            threads: args.threads.count(),
            ..Options::default()
        };
        let reference = Reference::new(&conn, &label, options)?;
        Some((conn, reference))
    };
    let mut sink = Sink::open(args.output.as_deref())?;
    let spinner = crate::ingest::phase_spinner(args.quiet);
    let (mut number, mut failed) = (0u64, 0u64);
    let mut broken = None;
    let mut batch: Vec<Piece> = Vec::with_capacity(BATCH);
    loop {
        let next = match games.next_game() {
            Ok(next) => next,
            Err(e) => {
                broken = Some(format!(
                    "{}: read error at byte {} of the decompressed stream: {}; the games before \
                     it are written",
                    crate::ingest::input::shown(&args.file),
                    e.offset,
                    e.message
                ));
                None
            }
        };
        let end = next.is_none();
        if let Some(raw) = next {
            if raw.is_not_a_game() {
                batch.push(Piece::Text(raw.text));
            } else {
                number += 1;
                if reference.is_none() {
                    batch.push(Piece::Text(strip(&raw.text, &layout(&raw.text))));
                } else {
                    let words = game_words(number, &raw);
                    batch.push(Piece::Game {
                        number,
                        words,
                        game: Prepared::of(raw),
                    });
                }
            }
        }
        if batch.len() >= BATCH || (end && !batch.is_empty()) {
            spinner.set_message(format!("annotating: game {number}"));
            failed += write_batch(&args, reference.as_ref(), &mut sink, &spinner, &batch)?;
            batch.clear();
        }
        if end {
            break;
        }
    }
    spinner.finish_and_clear();
    sink.finish()?;
    if let Some((_, r)) = &reference
        && std::env::var_os("PAWNDEX_TIMINGS").is_some()
    {
        let t = r.spent();
        eprintln!(
            "timings: annotate: {} forms in {:.3} s; {} exact pawn structures in {:.3} s ({} \
             nearest looked for); total {:.3} s",
            t.forms,
            t.forms_seconds,
            t.pawns,
            t.pawns_seconds,
            t.nearest,
            start.elapsed().as_secs_f64()
        );
    }
    if let Some(message) = &broken {
        eprintln!("pawndex: error: {message}");
    }
    if !args.quiet {
        let done = if args.strip { "stripped" } else { "annotated" };
        let against = reference
            .as_ref()
            .map(|(_, r)| format!(" against {}", r.label))
            .unwrap_or_default();
        eprintln!(
            "pawndex: {done} {} game{}{against} in {:.2} s{}",
            number - failed,
            if number - failed == 1 { "" } else { "s" },
            start.elapsed().as_secs_f64(),
            if failed > 0 {
                format!("; {failed} could not be replayed (written back unchanged, see above)")
            } else {
                String::new()
            }
        );
    }
    Ok(if failed > 0 || broken.is_some() {
        EXIT_ERROR
    } else {
        EXIT_OK
    })
}
