//! Command-line interface: the subcommands and their help, dispatch, and how errors end the
//! process. Each command is one glue file here (its options, the call to the work below, the
//! output): `index`, `query`, `find`, `similar` (with `similar_games`), `stats`, `structures`,
//! `migrate`, `check`, `info`, `export` and `serve`; `common` holds what they share.

pub mod annotate;
pub mod check;
pub mod common;
pub mod export;
pub mod filters;
pub mod find;
pub mod index;
pub mod info;
pub mod migrate;
pub mod plans;
pub mod player;
pub mod players;
pub mod query;
pub mod serve;
pub mod similar;
pub mod similar_games;
pub mod stats;
pub mod structures;

use std::path::{Path, PathBuf};

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::cli::common::EXIT_ERROR;

#[derive(Parser, Debug)]
#[command(
    name = "pawndex",
    version,
    about = "Index chess games by pawn structure into SQLite, then query them",
    long_about = "pawndex replays every game of a PGN collection, computes pawn-structure \
                  features for every ply (islands, dispersion, distortion, duos, trios, quarts, \
                  bishop pairs, piece-set) and stores them in an indexed SQLite database, so \
                  that structure questions become index lookups.",
    after_help = "Examples:\n  pawndex index games.pgn.zst\n  pawndex query white-isolated-queen-pawn --limit 10\n  pawndex find --white 'islands>=3' --result 1-0 --per game --format pgn > games.pgn\n  pawndex stats --report islands-vs-score --chart islands.svg"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
// Parsed once per process; boxing the larger argument structs would buy nothing.
#[allow(clippy::large_enum_variant)]
enum Command {
    /// Build or extend a pawn-structure database from PGN files.
    #[command(
        long_about = "Reads PGN (plain, .gz, .bz2 or .zst, recognised by their first bytes, or - \
                      for stdin), replays every game's mainline, and stores games, per-ply \
                      features and rejected games in the database. Games already in the \
                      database are skipped, so re-running a command after an interruption \
                      finishes the job.\n\nExit status: 0 success, 1 error (an input could not \
                      be read, or a fatal error), 2 bad command line, 130 interrupted by \
                      Ctrl-C.",
        after_help = "Examples:\n  pawndex index games.pgn\n  pawndex index --db masters.db masters-*.pgn.zst\n  zcat big.pgn.gz | pawndex index -"
    )]
    Index(crate::cli::index::IndexArgs),
    /// Run a named query, a .sql file or ad-hoc SQL against the database.
    Query(crate::cli::query::QueryArgs),
    /// Search positions by pawn-structure filters, without writing SQL.
    Find(crate::cli::find::FindArgs),
    /// Structures like a given one, ranked by a documented distance, with what differs.
    #[command(
        long_about = "Ranks the distinct pawn structures (White's pawns with Black's) of the \
                      database by their distance to a target (the pawns of a FEN, or of a game's \
                      ply) and lists the closest with their distance, what differs, their \
                      positions, the games that reach them and White's score in those games. \
                      It ranks each side's distinct pawn sets first and reads only the runs of \
                      games that can hold a close structure."
    )]
    Similar(crate::cli::similar::SimilarArgs),
    /// Statistics of features against results, ratings and game phase, as CSV and charts.
    Stats(crate::cli::stats::StatsArgs),
    /// Named pawn structures: how often, how games in them end, what they turn into.
    #[command(
        long_about = "Reports, for every form of every named structure in the database's \
                      catalogue (the normal form and the colour-reversed one apart), its \
                      positions, the games that reach it and White's score in them, the average \
                      stay in plies, the most common ECO codes, the structures it turns into \
                      and the moves that leave it, with White's score after each. It reads the \
                      structure changes and the games, never the per-ply runs.\n\nExit \
                      status: 0 success, 1 error, 2 bad option."
    )]
    Structures(crate::cli::structures::StructuresArgs),
    /// What the games do in a structure: each side's moves, pawn breaks, piece squares, model games.
    #[command(
        long_about = "For the positions of a structure (a named one, exact pawns, or the \
                      structures within a distance of them), under find's game filters: the \
                      moves each side plays there, most played first, with the mover's score in \
                      the games that have them against the side's score over all the \
                      structure's games; the pawn breaks and piece captures that leave it, with \
                      the structure they lead to; where each side's pieces stand (JSON, and \
                      heat maps with --chart); and the most typical games. Every figure comes \
                      from replaying the games' stored moves."
    )]
    Plans(crate::cli::plans::PlansArgs),
    /// Annotate games with what the reference's games did in their structures.
    #[command(
        long_about = "Annotates every game of a PGN file with what a reference database's \
                      games did in its structures: at the start its structures in order; where \
                      its named structure begins or changes, the reference's games, White's and \
                      the side to move's score, the average stay, each side's most played moves \
                      and pawn breaks and model games there; where it leaves a structure, how \
                      often the reference left it by the same move and with what score; where \
                      it keeps unnamed pawns, the games with exactly those pawns or the nearest \
                      frequent structure. Writes PGN with comments marked `pawndex:` (the game's \
                      own text unchanged) or JSON lines."
    )]
    Annotate(crate::cli::annotate::AnnotateArgs),
    /// A player's structure profile: the structures reached per colour, the score against a baseline.
    #[command(
        long_about = "A player's structure profile: the player's games and score per colour; \
                      for every named structure (both forms) and the most reached exact pawn \
                      structures, with the player's colour: games, plies spent there, the \
                      player's score with its 95% interval, the baseline (the score of the \
                      database's other games in the same structure with the same colour, and \
                      within the player's rating band), the difference and how much to trust \
                      it, the player's most played moves and breaks there; best and worst \
                      structures; the share of the player's games per structure by year. \
                      --vs adds the games against an opponent and the opponent's profile; \
                      --baseline takes the baselines from another database."
    )]
    Player(crate::cli::player::PlayerArgs),
    /// Players by name: their spellings, games, years, ratings and openings.
    #[command(
        long_about = "Lists the players one of whose names holds a text, most games first: the \
                      name shown, every spelling the player's row covers (spellings that fold \
                      alike, and initials merged into the one full name they match), games as \
                      White and as Black, first and last year, rating range and the three most \
                      played ECO codes. Reads the name index, never a scan of the games."
    )]
    Players(crate::cli::players::PlayersArgs),
    /// Upgrade a database, finish an interrupted run's work, merge appended games.
    #[command(
        long_about = "Upgrades a database written by an older pawndex to the current schema, in \
                      place and in one transaction (killed at any moment, the file holds the old \
                      database or the new one), then builds what an interrupted `pawndex index` \
                      left unbuilt (the set_games index and set_totals aggregates) and merges \
                      the unmerged tail (the few games an append leaves out of them, which reads \
                      take from the runs). `pawndex index` upgrades and finishes the same way \
                      before adding games.\n\nExit status: 0 success, 1 error.",
        after_help = "Example:\n  pawndex migrate --db masters.db"
    )]
    Migrate(crate::cli::migrate::MigrateArgs),
    /// Verify a database: SQLite's integrity check and pawndex's own invariants (read-only).
    #[command(
        long_about = "Opens a database read-only and verifies it in one read transaction: \
                      SQLite's integrity check, then pawndex's invariants (runs tile each game's \
                      plies, every id points to a row of the right kind, pawn-set features equal \
                      a recomputation, and set_games, set_totals and bishop_totals equal what \
                      they summarise). Prints one line per problem (the first 5 of each kind) \
                      and a last line, `ok: …` or `N problem(s) found`. An unfinished database \
                      (games of an interrupted run not yet in the derived tables) is a note, \
                      not a problem.\n\nExit \
                      status: 0 everything holds, 1 a problem was found or the file is not a \
                      pawndex database.",
        after_help = "Example:\n  pawndex check --db masters.db"
    )]
    Check(crate::cli::check::CheckArgs),
    /// What a database holds: games, plies, sources, rejects, schema, size, state (read-only).
    #[command(
        long_about = "Describes a database without changing it (opened read-only; no file is \
                      created): its size, schema version, games, plies (and positions), pawn \
                      sets, rejected games, and per source (the file name given to `pawndex \
                      index`) its games, plies and rejects, then the rejects by reason. The \
                      state line says whether the database is complete, holds an unmerged tail \
                      (a small append, by design), or was left by an interrupted `pawndex \
                      index`, and then what to run. It reads one pass over the games, never the \
                      runs.\n\nExit status: 0 success, 1 the file is missing or not a current \
                      pawndex database.",
        after_help = "Examples:\n  pawndex info --db masters.db\n  pawndex info --db masters.db --format json | jq .games"
    )]
    Info(crate::cli::info::InfoArgs),
    /// Export a database in another format (parquet: a dataset for DuckDB and Spark).
    Export(crate::cli::export::ExportArgs),
    /// Explore a database in a browser: a local web server and its JSON API (read-only).
    #[command(
        long_about = "Starts a local web server over a database (opened read-only) and prints \
                      its URL: the pawn-structure explorer (set pawns on a board, see the \
                      named structure, its counts, similar structures and the moves that \
                      leave it, replay games, statistics) and a JSON API for scripts, \
                      described in docs/serve.md. It listens on 127.0.0.1 unless --bind says \
                      otherwise, and can run while `pawndex index` adds games. Stop it with \
                      Ctrl-C.\n\nExit status: 0 stopped, 1 error (the database is missing \
                      or not a pawndex database, the port is taken).",
        after_help = "Examples:\n  pawndex serve\n  pawndex serve --db masters.db --port 8000 --open\n  curl 'http://127.0.0.1:8080/api/structure?fen=8/pp3ppp/2p5/3p4/3P4/4P3/PP3PPP/8'"
    )]
    Serve(crate::cli::serve::ServeArgs),
}

/// Parses the command line, runs the command, returns the process exit code.
pub fn main_with_args() -> i32 {
    let matches = Cli::command().try_get_matches().unwrap_or_else(|e| {
        let args: Vec<String> = std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        crate::cli::common::with_fen_hint(e, &args).exit()
    });
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // For the message about a damaged database: its path, and whether the command writes it.
    let db = db_argument(&matches);
    let writes_db = matches!(cli.command, Command::Index(_) | Command::Migrate(_));
    // A PGN file given as the database of any command (`index` too) is named as PGN, before
    // anything opens it.
    if let Some(db) = &db
        && let Err(e) = common::refuse_pgn_as_database(db, matches!(cli.command, Command::Index(_)))
    {
        eprintln!("pawndex: error: {e:#}");
        return EXIT_ERROR;
    }
    // The commands that classify positions stop on a bad PAWNDEX_STRUCTURES folder before any
    // work (the others read the names stored in the database).
    if matches!(
        cli.command,
        Command::Index(_) | Command::Migrate(_) | Command::Export(_)
    ) && let Err(e) = crate::model::structure::Catalogue::load_active()
    {
        eprintln!("pawndex: error: {e:#}");
        return EXIT_ERROR;
    }
    // Usage errors give exit status 2 and a closed pipe 0, for every command.
    let result = crate::cli::common::exit_status(match cli.command {
        Command::Index(args) => crate::cli::index::run(args),
        Command::Query(args) => crate::cli::query::run(args),
        Command::Find(args) => crate::cli::find::run(args),
        Command::Similar(args) => crate::cli::similar::run(args),
        Command::Stats(args) => crate::cli::stats::run(args),
        Command::Structures(args) => crate::cli::structures::run(args),
        Command::Plans(args) => crate::cli::plans::run(args),
        Command::Annotate(args) => crate::cli::annotate::run(args),
        Command::Player(args) => crate::cli::player::run(args),
        Command::Players(args) => crate::cli::players::run(args),
        Command::Migrate(args) => crate::cli::migrate::run(args),
        Command::Check(args) => crate::cli::check::run(args),
        Command::Info(args) => crate::cli::info::run(args),
        Command::Export(args) => crate::cli::export::run(args),
        Command::Serve(args) => crate::cli::serve::run(args),
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            // A failed write says all there is to say (which file, what is safe, what to run).
            if let Some(failed) = e
                .chain()
                .find_map(|c| c.downcast_ref::<crate::store::WriteFailed>())
            {
                eprintln!("pawndex: error: {failed}");
            } else if let Some(failed) = e.downcast_ref::<crate::dataset::Failed>() {
                eprintln!("pawndex: error: {failed}");
            } else {
                eprintln!("pawndex: error: {e:#}");
            }
            if is_corrupt(&e) {
                eprintln!("pawndex: {}", damaged(db.as_deref(), writes_db));
            }
            EXIT_ERROR
        }
    }
}

/// The `--db` of the command line (of the subcommand that has one).
fn db_argument(matches: &clap::ArgMatches) -> Option<PathBuf> {
    if let Ok(Some(db)) = matches.try_get_one::<PathBuf>("db") {
        return Some(db.clone());
    }
    matches.subcommand().and_then(|(_, sub)| db_argument(sub))
}

/// What to say when SQLite found the database `db` damaged: a command that only reads it
/// changed nothing; a writer's transaction was rolled back.
fn damaged(db: Option<&Path>, writes_db: bool) -> String {
    let (name, check) = match db {
        Some(p) => (
            format!("the database {}", p.display()),
            format!("`pawndex check --db {}`", p.display()),
        ),
        None => ("the database".to_owned(), "`pawndex check`".to_owned()),
    };
    let what = if writes_db {
        "this run's uncommitted writes, if any, were rolled back (what it committed before stays)"
    } else {
        "this command only reads it and changed nothing"
    };
    format!(
        "{name} is damaged (SQLite found a page it cannot read); {what}. {check} lists what \
         is wrong."
    )
}

/// Whether SQLite found a damaged page somewhere in the error's chain.
fn is_corrupt(e: &anyhow::Error) -> bool {
    crate::store::read::is_corrupt(e)
}
