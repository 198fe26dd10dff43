//! `pawndex similar`: the distinct structures (White pawn set, Black pawn set) of a database
//! ranked by their distance to a target (see [`crate::model::similar`]), with what differs, their
//! positions, games and White's score.
//!
//! How it stays fast: the distance is a White part plus a Black part (for each form of the
//! target the options allow), so each side's distinct pawn sets are ranked on their own; a pair
//! can be within a distance `D` only if each of its sets is within `D` minus the other side's
//! best part. For a growing `D`, the games that reach a candidate set of both sides come from
//! `set_games` (plus the unmerged tail), and only those games' runs are read; the pairs within
//! `D` are counted there. Every pair within `D` has then been seen, so once `--limit` pairs are
//! within `D` (or `D` reaches `--max-distance`, or no pair can be farther than `D`), the
//! ranking is exact. Every set being a candidate is not enough: two candidate sets can still
//! make a pair farther than `D`.

use std::io::{self, BufWriter, Write};

use anyhow::Result;
use clap::Args;

use crate::cli::common::{self as command};
use crate::model::similar::{Options, Pawns};
use crate::model::usage;
use crate::output::table::Format;
use crate::store::read::similar as db;
use crate::store::read::{Limit, Snapshot};

#[derive(Args, Debug)]
#[command(
    after_help = "The distance: per side and file, the pawns are matched in order; a \
matched pawn costs the ranks between it and its partner, a pawn without a partner 4; the c- to \
f-files weigh 2, the a-, b-, g- and h-files 1 (0 with --ignore-wings). --mirror also compares \
with the target's mirror image (a-file <-> h-file), --colour-reversed with the target's colours \
swapped and the board turned; the distance is then the least.\n\n\
Exit status: 0 success, 1 error, 2 bad command line.\n\n\
Examples:\n  \
pawndex similar --structure \"8/pp3ppp/2p5/3p4/3P4/4P3/PP3PPP/8\"\n  \
pawndex similar --game 12 --ply 30 --mirror --limit 10\n  \
pawndex similar --structure \"$FEN\" --ignore-wings --min-games 5 --format csv\n  \
pawndex similar --structure \"$FEN\" --limit 5 --games --format pgn > close.pgn\n  \
pawndex similar --structure \"$FEN\" --max-distance 4 --sql > q.sql && sqlite3 pawndex.db < q.sql"
)]
pub struct SimilarArgs {
    /// The target: the pawns of this position (a FEN, or only its board part)
    #[arg(long, value_name = "FEN", allow_hyphen_values = true, conflicts_with_all = ["game", "ply"])]
    pub structure: Option<String>,
    /// The target: the pawns of this game (its id) at --ply
    #[arg(long, value_name = "ID")]
    pub game: Option<i64>,
    /// The ply of --game (0 = the start position)
    #[arg(long, value_name = "N")]
    pub ply: Option<i64>,
    /// How many structures to list (up to 18446744073709551615; the --sql statement's LIMIT
    /// stops at 9223372036854775807, SQLite's largest integer, which lists as much)
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub limit: usize,
    /// Only structures at most this far from the target
    #[arg(long, value_name = "D")]
    pub max_distance: Option<u32>,
    /// Do not compare the a-, b-, g- and h-files
    #[arg(long)]
    pub ignore_wings: bool,
    /// Also compare with the target's mirror image (a-file <-> h-file)
    #[arg(long)]
    pub mirror: bool,
    /// Also compare with the target's colours swapped and the board turned
    #[arg(long)]
    pub colour_reversed: bool,
    /// Only structures reached in at least N games
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub min_games: u64,
    /// List the games that reach the listed structures instead, closest first: one row per
    /// game (at the first ply of its closest listed structure); --format pgn|fen exports them
    #[arg(long)]
    pub games: bool,
    /// With --games: at most N games (the closest first)
    #[arg(long, value_name = "N", requires = "games")]
    pub games_limit: Option<u64>,
    /// Output format (pgn and fen with --games)
    #[arg(long, short, value_enum, default_value = "table")]
    pub format: Format,
    /// Print instead one plain SQLite statement that returns the same rows (without
    /// `differs`), e.g. `pawndex similar --structure "$FEN" --max-distance 4 --sql > q.sql;
    /// sqlite3 pawndex.db < q.sql`
    #[arg(long, conflicts_with_all = ["format", "games"])]
    pub sql: bool,
    /// Database to read (opened read-only)
    #[arg(long, default_value = crate::store::DEFAULT_DB, value_name = "PATH")]
    pub db: std::path::PathBuf,
    #[command(flatten)]
    pub threads: crate::cli::common::ThreadsArg,
}

fn target_of(conn: &Snapshot, args: &SimilarArgs) -> Result<Pawns> {
    if let Some(fen) = &args.structure {
        let (white, black) = crate::model::fen::structure_of(fen)?;
        return Ok(Pawns { white, black });
    }
    let (Some(game), Some(ply)) = (args.game, args.ply) else {
        usage!("give the target as --structure FEN or as --game ID --ply N");
    };
    // A game or a ply the database does not hold is a missing thing (exit 1), not a malformed
    // command line (exit 2).
    let Some(plies) = db::game_plies(conn, game)? else {
        anyhow::bail!(
            "--game {game}: {db} has no game with this id",
            db = args.db.display()
        );
    };
    match db::pawns_at(conn, game, ply)? {
        Some((white, black)) => Ok(Pawns { white, black }),
        // A ply of the game that no run holds: the runs are damaged, not the command line.
        None if (0..=plies).contains(&ply) => anyhow::bail!(
            "game {game} has plies 0 to {plies} but no run of game {game} holds ply {ply}: the \
             database {db} is damaged (this command only reads it and changed nothing); \
             `pawndex check --db {db}` lists what is wrong",
            db = args.db.display()
        ),
        None => anyhow::bail!("--ply {ply}: game {game} has plies 0 to {plies}"),
    }
}

/// Refuses a command line without a whole target, naming what is missing and the other way
/// to give one (clap would name only one way, or call both required).
fn check_target(args: &SimilarArgs) -> Result<()> {
    match (&args.structure, args.game, args.ply) {
        (None, None, None) => usage!(
            "give the target: --structure FEN (the pawns of a position), or --game ID --ply N \
             (the pawns of a game of the database at a ply)"
        ),
        (None, Some(game), None) => usage!(
            "--game {game} needs --ply N, the ply whose pawns are the target (0 = the start \
             position)"
        ),
        (None, None, Some(ply)) => usage!(
            "--ply {ply} needs --game ID: the target is that game's pawns at ply {ply} (or give \
             --structure FEN instead, without --ply)"
        ),
        _ => Ok(()),
    }
}

pub fn run(args: SimilarArgs) -> Result<i32> {
    check_target(&args)?;
    if args.limit == 0 {
        usage!("--limit: give at least 1");
    }
    if !args.games && matches!(args.format, Format::Pgn | Format::Fen) {
        usage!("--format pgn and --format fen export games: add --games");
    }
    if args.games_limit == Some(0) {
        usage!("--games-limit: give at least 1");
    }
    // One snapshot for every statement (a concurrent index only appends).
    let conn = Snapshot::open(&args.db, &Limit::none())?;
    let target = target_of(&conn, &args)?;
    let options = Options {
        ignore_wings: args.ignore_wings,
        mirror: args.mirror,
        colour_reversed: args.colour_reversed,
    };
    if args.sql {
        let sql = crate::store::read::similar_sql::statement(
            target,
            options,
            args.limit,
            args.max_distance,
            args.min_games,
        );
        io::stdout().lock().write_all(sql.as_bytes())?;
        return Ok(command::EXIT_OK);
    }
    let found = crate::engine::similar::rank(
        &conn,
        args.threads.count(),
        crate::engine::similar::Request {
            target,
            options,
            limit: args.limit,
            max_distance: args.max_distance,
            min_games: args.min_games,
        },
    )?;
    let mut out = BufWriter::new(io::stdout().lock());
    if args.games {
        crate::cli::similar_games::write(&conn, &found, args.format, args.games_limit, &mut out)?;
    } else {
        crate::output::similar::write(&mut out, &found, args.format)?;
    }
    out.flush()?;
    if found.is_empty() {
        eprintln!("{}", empty_note(&args));
    }
    Ok(command::EXIT_OK)
}

/// The stderr line of an empty result (as `stats` says "no positions matched"): what left
/// every structure out, and what standard output holds.
fn empty_note(args: &SimilarArgs) -> String {
    let mut limits = Vec::new();
    if let Some(d) = args.max_distance {
        limits.push(format!("--max-distance {d}"));
    }
    if args.min_games > 1 {
        limits.push(format!("--min-games {}", args.min_games));
    }
    let limits = if limits.is_empty() {
        String::new()
    } else {
        format!(" ({})", limits.join(", "))
    };
    let output = match args.format {
        Format::Table => "the table has its header only",
        Format::Csv => "the CSV has its header only",
        Format::Json => "no JSON line",
        Format::Pgn | Format::Fen => "no game",
    };
    format!("pawndex: no structure matched{limits}; {output}")
}
