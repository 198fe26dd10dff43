//! `pawndex similar`: the distinct structures (White pawn set, Black pawn set) of a database
//! ranked by their distance to a target (see [`crate::similar`]), with what differs, their
//! positions, games and White's score.
//!
//! How it stays fast: the distance is a White part plus a Black part (for each form of the
//! target the options allow), so each side's distinct pawn sets are ranked on their own; a pair
//! can be within a distance `D` only if each of its sets is within `D` minus the other side's
//! best part. For a growing `D`, the games that reach a candidate set of both sides come from
//! `set_games` (plus the unmerged tail), and only those games' runs are read; the pairs within
//! `D` are counted there. Once `--limit` pairs are within `D` (or `D` reaches
//! `--max-distance`, or every set is a candidate), every pair within `D` has been seen, so the
//! ranking is exact.

use std::collections::HashMap;
use std::io::{self, BufWriter, Write};

use anyhow::Result;
use clap::{Args, ValueEnum};

use crate::command::{self, usage};
use crate::similar::{self, Options, PartTable, Pawns, Variant};
use crate::store::similar as db;

/// How `similar` writes its rows.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum SimilarFormat {
    /// Aligned columns for a terminal
    Table,
    /// CSV with a header row
    Csv,
    /// One JSON object per line
    Json,
}

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
pawndex similar --game 1234 --ply 30 --mirror --limit 10\n  \
pawndex similar --structure \"$FEN\" --ignore-wings --min-games 5 --format csv\n  \
pawndex similar --structure \"$FEN\" --max-distance 4 --sql > q.sql && sqlite3 pawndex.db < q.sql"
)]
pub struct SimilarArgs {
    /// The target: the pawns of this position (a FEN, or only its board part)
    #[arg(long, value_name = "FEN", allow_hyphen_values = true, conflicts_with_all = ["game", "ply"], required_unless_present = "game")]
    pub structure: Option<String>,
    /// The target: the pawns of this game (its id) at --ply
    #[arg(long, value_name = "ID", requires = "ply")]
    pub game: Option<i64>,
    /// The ply of --game (0 = the start position)
    #[arg(long, value_name = "N", requires = "game")]
    pub ply: Option<i64>,
    /// How many structures to list
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
    /// Output format
    #[arg(long, short, value_enum, default_value_t = SimilarFormat::Table)]
    pub format: SimilarFormat,
    /// Print instead one plain SQLite statement that returns the same rows (without
    /// `differs`), e.g. `pawndex similar --structure "$FEN" --max-distance 4 --sql > q.sql;
    /// sqlite3 pawndex.db < q.sql`
    #[arg(long, conflicts_with = "format")]
    pub sql: bool,
    /// Database to read (opened read-only)
    #[arg(long, default_value = command::DEFAULT_DB, value_name = "PATH")]
    pub db: std::path::PathBuf,
}

/// One ranked structure.
#[derive(Clone, Debug, PartialEq)]
pub struct Similar {
    pub pawns: Pawns,
    pub distance: u32,
    pub differs: String,
    pub positions: u64,
    pub games: u64,
    /// White's points (a win 2, a draw 1) and the games with a result.
    pub points: u64,
    pub scored: u64,
}

impl Similar {
    /// White's score in percent over the games with a result, `None` without one.
    #[must_use]
    pub fn white_score(&self) -> Option<f64> {
        (self.scored > 0).then(|| 50.0 * self.points as f64 / self.scored as f64)
    }
}

/// Counts of one (White set, Black set) pair.
#[derive(Default, Clone, Copy)]
struct Tally {
    distance: u32,
    positions: u64,
    games: u64,
    points: u64,
    scored: u64,
    last_game: i64,
}

/// Per pawn set of one side: its pawns and its part of the distance for each form of the target.
struct SideSets {
    /// Indexed by set id: the pawns and the parts (one per variant); parts `u16::MAX` for a set
    /// of the other side (or no set).
    by_id: Vec<(u64, [u16; 4])>,
    /// (least part, id), ascending.
    ranked: Vec<(u32, i64)>,
}

impl SideSets {
    fn get(&self, id: i64) -> Option<(u64, [u16; 4])> {
        let e = *self.by_id.get(usize::try_from(id).ok()?)?;
        (e.1[0] != u16::MAX).then_some(e)
    }
}

fn rank_sets(sets: &[(i64, u8, u64)], side: u8, targets: &[u64], ignore_wings: bool) -> SideSets {
    let max_id = sets.iter().map(|s| s.0).max().unwrap_or(0).max(0) as usize;
    let tables: Vec<PartTable> = targets
        .iter()
        .map(|&t| PartTable::new(t, ignore_wings))
        .collect();
    let mut by_id = vec![(0u64, [u16::MAX; 4]); max_id + 1];
    let mut ranked = Vec::with_capacity(sets.len() / 2 + 1);
    for &(id, s, bb) in sets {
        if s != side || id < 0 {
            continue;
        }
        let mut p = [0u16; 4];
        let mut least = u32::MAX;
        for (k, table) in tables.iter().enumerate() {
            let d = table.part(bb);
            // A part is at most 8 files · weight 2 · 8 pawns · 4 = 512, far below u16::MAX.
            p[k] = u16::try_from(d).unwrap_or(u16::MAX - 1);
            least = least.min(d);
        }
        by_id[id as usize] = (bb, p);
        ranked.push((least, id));
    }
    // A counting sort: the parts are small whole numbers.
    let top = ranked.iter().map(|r| r.0 as usize).max().unwrap_or(0);
    let mut starts = vec![0usize; top + 2];
    for r in &ranked {
        starts[r.0 as usize + 1] += 1;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let mut sorted = vec![(0u32, 0i64); ranked.len()];
    for r in ranked {
        let at = &mut starts[r.0 as usize];
        sorted[*at] = r;
        *at += 1;
    }
    SideSets {
        by_id,
        ranked: sorted,
    }
}

/// Above this share of all games (one in SCAN_FRACTION), the candidate games' runs are read in
/// one pass over every run instead of game by game.
const SCAN_FRACTION: usize = 6;

/// White's points for a result tag (a win 2, a draw 1), `None` for no result.
fn points(result: Option<&str>) -> Option<u64> {
    match result {
        Some("1-0") => Some(2),
        Some("1/2-1/2") => Some(1),
        Some("0-1") => Some(0),
        _ => None,
    }
}

/// The ranked structures for a target (the command's work, without the output).
pub fn rank(
    conn: &rusqlite::Connection,
    target: Pawns,
    options: Options,
    limit: usize,
    max_distance: Option<u32>,
    min_games: u64,
) -> Result<Vec<Similar>> {
    let trace = std::env::var_os("PAWNDEX_SIMILAR_TRACE").is_some();
    let start = std::time::Instant::now();
    let variants: Vec<Variant> = options.variants();
    let forms: Vec<Pawns> = variants.iter().map(|v| v.apply(target)).collect();
    let sets = db::all_sets(conn)?;
    if trace {
        eprintln!("similar: {:?} pawn sets read", start.elapsed());
    }
    let white_targets: Vec<u64> = forms.iter().map(|f| f.white).collect();
    let black_targets: Vec<u64> = forms.iter().map(|f| f.black).collect();
    let white = rank_sets(&sets, 0, &white_targets, options.ignore_wings);
    let black = rank_sets(&sets, 1, &black_targets, options.ignore_wings);
    drop(sets);
    if trace {
        eprintln!("similar: {:?} pawn sets read and ranked", start.elapsed());
    }
    let (Some(&(min_w, _)), Some(&(min_b, _))) = (white.ranked.first(), black.ranked.first())
    else {
        return Ok(Vec::new());
    };
    let tail = db::tail_games(conn)?;
    let game_count = db::game_count(conn)?;
    let mut reader = db::Reader::new(conn)?;
    let n = variants.len();
    let pair_distance = |w: i64, b: i64| -> Option<u32> {
        let (_, pw) = white.get(w)?;
        let (_, pb) = black.get(b)?;
        (0..n).map(|k| u32::from(pw[k]) + u32::from(pb[k])).min()
    };
    let cap = max_distance.unwrap_or(u32::MAX);
    // From the closest possible pair up, in steps of a quarter (at least 2): the last round
    // costs the most, and the rounds before it at most about as much together.
    let mut bound = (min_w + min_b).min(cap);
    let mut runs = Vec::new();
    // The sets of each side that can be in a pair within a bound.
    let candidates = |bound: u32| -> (Vec<i64>, Vec<i64>) {
        let within = |ranked: &[(u32, i64)], other_best: u32| -> Vec<i64> {
            ranked
                .iter()
                .take_while(|(d, _)| *d + other_best <= bound)
                .map(|&(_, id)| id)
                .collect()
        };
        (within(&white.ranked, min_b), within(&black.ranked, min_w))
    };
    loop {
        let (cand_w, cand_b) = candidates(bound);
        let everything = cand_w.len() == white.ranked.len() && cand_b.len() == black.ranked.len();
        // The games that reach a candidate set of each side (both lists, intersected).
        let mut games_w = Vec::new();
        for &id in &cand_w {
            reader.games_of(id, &mut games_w)?;
        }
        games_w.sort_unstable();
        games_w.dedup();
        let mut games_b = Vec::new();
        for &id in &cand_b {
            reader.games_of(id, &mut games_b)?;
        }
        games_b.sort_unstable();
        games_b.dedup();
        let mut games: Vec<i64> = games_w
            .into_iter()
            .filter(|g| games_b.binary_search(g).is_ok())
            .collect();
        games.extend(&tail);
        games.sort_unstable();
        games.dedup();
        if trace {
            eprintln!(
                "similar: {:?} bound {bound}: {} White and {} Black candidate sets, {} games",
                start.elapsed(),
                cand_w.len(),
                cand_b.len(),
                games.len()
            );
        }
        let mut tallies: HashMap<(i64, i64), Tally> = HashMap::new();
        let mut add = |game: i64, points: Option<u64>, r: &db::Run, bound: u32| {
            let Some(d) = pair_distance(r.white_set, r.black_set) else {
                return;
            };
            if d > bound {
                return;
            }
            let t = tallies.entry((r.white_set, r.black_set)).or_default();
            t.distance = d;
            t.positions += u64::try_from(r.last_ply - r.first_ply + 1).unwrap_or(0);
            if t.games == 0 || t.last_game != game {
                t.games += 1;
                t.last_game = game;
                if let Some(p) = points {
                    t.points += p;
                    t.scored += 1;
                }
            }
        };
        let scan = match crate::store::forced_plan() {
            Some(crate::store::ForcedPlan::Scan) => true,
            Some(crate::store::ForcedPlan::Lists) => false,
            None => games.len().saturating_mul(SCAN_FRACTION) > game_count,
        };
        if scan {
            // Most games can hold a close structure: one pass over every run costs less than
            // a lookup per game.
            let results = db::results(conn)?;
            let points_of = |game: i64| {
                results
                    .binary_search_by_key(&game, |r| r.0)
                    .ok()
                    .and_then(|i| points(results[i].1.as_deref()))
            };
            // A pass costs about the same for a wider bound: take one, rather than pass again.
            let wider = bound.saturating_add(8).min(cap);
            let (cand_w, cand_b) = candidates(wider);
            let mut current = (i64::MIN, None);
            db::scan_runs(conn, &cand_w, &cand_b, |game, r| {
                if current.0 != game {
                    current = (game, points_of(game));
                }
                add(game, current.1, &r, wider);
            })?;
            bound = wider;
        } else {
            for &game in &games {
                let result = reader.runs_of(game, &mut runs)?;
                let p = points(result.as_deref());
                for r in &runs {
                    add(game, p, r, bound);
                }
            }
        }
        let found = tallies.values().filter(|t| t.games >= min_games).count();
        if trace {
            eprintln!(
                "similar: {:?} runs read: {} pairs within the bound, {found} with enough games",
                start.elapsed(),
                tallies.len()
            );
        }
        if found >= limit || bound >= cap || everything {
            let mut out: Vec<Similar> = tallies
                .into_iter()
                .filter(|(_, t)| t.games >= min_games)
                .map(|((w, b), t)| {
                    let pawns = Pawns {
                        white: white.get(w).map_or(0, |e| e.0),
                        black: black.get(b).map_or(0, |e| e.0),
                    };
                    Similar {
                        pawns,
                        distance: t.distance,
                        differs: String::new(),
                        positions: t.positions,
                        games: t.games,
                        points: t.points,
                        scored: t.scored,
                    }
                })
                .collect();
            out.sort_by(|a, b| {
                (
                    a.distance,
                    std::cmp::Reverse(a.games),
                    a.pawns.white,
                    a.pawns.black,
                )
                    .cmp(&(
                        b.distance,
                        std::cmp::Reverse(b.games),
                        b.pawns.white,
                        b.pawns.black,
                    ))
            });
            out.truncate(limit);
            for s in &mut out {
                s.differs = similar::explain(s.pawns, target, options);
            }
            return Ok(out);
        }
        // Not enough yet: widen.
        bound = bound.saturating_add((bound / 4).max(2)).min(cap);
    }
}

/// The board part of a FEN holding only the pawns ("8/pp3ppp/2p5/…").
#[must_use]
pub fn pawn_board(p: Pawns) -> String {
    let mut out = String::new();
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            let sq = rank * 8 + file;
            let c = if p.white >> sq & 1 == 1 {
                Some('P')
            } else if p.black >> sq & 1 == 1 {
                Some('p')
            } else {
                None
            };
            match c {
                Some(c) => {
                    if empty > 0 {
                        out.push_str(&empty.to_string());
                        empty = 0;
                    }
                    out.push(c);
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            out.push_str(&empty.to_string());
        }
        if rank > 0 {
            out.push('/');
        }
    }
    out
}

fn target_of(conn: &rusqlite::Connection, args: &SimilarArgs) -> Result<Pawns> {
    if let Some(fen) = &args.structure {
        let (white, black) = crate::query::find::structure_of(fen)?;
        return Ok(Pawns { white, black });
    }
    let (Some(game), Some(ply)) = (args.game, args.ply) else {
        usage!("give the target as --structure FEN or as --game ID --ply N");
    };
    let Some(plies) = db::game_plies(conn, game)? else {
        usage!("--game {game}: no game with this id in the database");
    };
    match db::pawns_at(conn, game, ply)? {
        Some((white, black)) => Ok(Pawns { white, black }),
        None => usage!("--ply {ply}: game {game} has plies 0 to {plies}"),
    }
}

pub fn run(args: SimilarArgs) -> Result<i32> {
    if args.limit == 0 {
        usage!("--limit: give at least 1");
    }
    let conn = command::open_for_reading(&args.db)?;
    // One snapshot for every statement (a concurrent index only appends).
    conn.execute_batch("BEGIN")?;
    let target = target_of(&conn, &args)?;
    let options = Options {
        ignore_wings: args.ignore_wings,
        mirror: args.mirror,
        colour_reversed: args.colour_reversed,
    };
    if args.sql {
        let sql = crate::store::similar_sql::statement(
            target,
            options,
            args.limit,
            args.max_distance,
            args.min_games,
        );
        io::stdout().lock().write_all(sql.as_bytes())?;
        return Ok(command::EXIT_OK);
    }
    let found = rank(
        &conn,
        target,
        options,
        args.limit,
        args.max_distance,
        args.min_games,
    )?;
    let mut out = BufWriter::new(io::stdout().lock());
    write(&mut out, &found, args.format)?;
    out.flush()?;
    Ok(command::EXIT_OK)
}

const HEADER: [&str; 6] = [
    "distance",
    "structure",
    "positions",
    "games",
    "white_score",
    "differs",
];

fn cells(s: &Similar) -> [String; 6] {
    [
        s.distance.to_string(),
        pawn_board(s.pawns),
        s.positions.to_string(),
        s.games.to_string(),
        s.white_score().map_or(String::new(), |v| format!("{v:.1}")),
        s.differs.clone(),
    ]
}

/// Writes the ranked structures (the table's last column, the long one, is `differs`).
fn write(out: &mut dyn Write, found: &[Similar], format: SimilarFormat) -> Result<()> {
    // JSON adds each side's pawns as a list of squares.
    match format {
        SimilarFormat::Table => {
            let rows: Vec<[String; 6]> = found.iter().map(cells).collect();
            let mut width = [0usize; 5];
            for (i, h) in HEADER.iter().take(5).enumerate() {
                width[i] = h.len();
                for r in &rows {
                    width[i] = width[i].max(r[i].chars().count());
                }
            }
            let line = |out: &mut dyn Write, c: [&str; 6]| -> io::Result<()> {
                writeln!(
                    out,
                    "{:>w0$}  {:<w1$}  {:>w2$}  {:>w3$}  {:>w4$}  {}",
                    c[0],
                    c[1],
                    c[2],
                    c[3],
                    c[4],
                    c[5],
                    w0 = width[0],
                    w1 = width[1],
                    w2 = width[2],
                    w3 = width[3],
                    w4 = width[4]
                )
            };
            line(
                out,
                [
                    HEADER[0], HEADER[1], HEADER[2], HEADER[3], HEADER[4], HEADER[5],
                ],
            )?;
            for r in &rows {
                line(out, [&r[0], &r[1], &r[2], &r[3], &r[4], &r[5]])?;
            }
        }
        SimilarFormat::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record(HEADER)?;
            for s in found {
                w.write_record(cells(s))?;
            }
            w.flush()?;
        }
        SimilarFormat::Json => {
            for s in found {
                let v = serde_json::json!({
                    "distance": s.distance,
                    "structure": pawn_board(s.pawns),
                    "positions": s.positions,
                    "games": s.games,
                    "white_score": s.white_score(),
                    "differs": s.differs,
                    "white_pawns": similar::square_list(s.pawns.white),
                    "black_pawns": similar::square_list(s.pawns.black),
                });
                writeln!(out, "{v}")?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pawn_boards_are_fen_board_parts() {
        let start = Pawns {
            white: 0xFF00,
            black: 0x00FF_0000_0000_0000,
        };
        assert_eq!(pawn_board(start), "8/pppppppp/8/8/8/8/PPPPPPPP/8");
        let carlsbad = Pawns {
            white: 0x0000_0000_0810_E300,
            black: 0x00E3_0408_0000_0000,
        };
        assert_eq!(pawn_board(carlsbad), "8/pp3ppp/2p5/3p4/3P4/4P3/PP3PPP/8");
    }
}
