//! `pawndex plans`: what the games do in a structure. The store hands the stretches of plies
//! each game spends in it (a named form, exact pawns, or the structures within a `similar`
//! distance, under `find`'s game filters); the games are replayed from their stored moves on
//! [`parallel::threads`] connections, each thread counting into its own [`Tally`]
//! (`model::plans`, where the rules are); the tallies merge into a [`Report`].

use std::time::Instant;

use anyhow::Result;
use shakmaty::Color;

use crate::engine::find::{Filters, resolve_names};
use crate::engine::parallel;
use crate::model::fen::structure_of;
use crate::model::plans::{
    Decade, ModelGame, MoveRow, PerDecade, PlainMove, Report, Tally, lower_median, side_index,
    typicality,
};
use crate::model::similar::{Options, Pawns};
use crate::model::structure::{Catalogue, Code};
use crate::model::usage;
use crate::store::read::Snapshot;
use crate::store::read::plans::{
    Stretches, game, games_per_decade, named_stretches, passing_games, push_stretch, replayed_game,
};

/// How many of a side's most played plan moves the typicality of a game counts.
pub const TYPICAL_MOVES: usize = 10;

/// The most structures `--within` takes (the closest first).
pub const MAX_WITHIN: usize = 2000;

/// Games below this many are replayed on the caller's connection alone.
const FEW_GAMES: usize = 256;

/// What `plans` asks: the structure and game filters (`find`'s), `--within`, and how long the
/// lists are.
#[derive(Clone, Debug, Default)]
pub struct Request {
    pub filters: Filters,
    /// With `filters.structure`: the structures within this `similar` distance of it.
    pub within: Option<u32>,
    /// The longest list of moves per side, of breaks and of other exits.
    pub top: usize,
    /// How many model games.
    pub model_games: usize,
    pub threads: usize,
    /// Only the games' order is wanted (`typical_games`): the games per decade are not
    /// counted.
    pub ranking_only: bool,
}

/// Counts what the games do in the structure of `request`.
pub fn plans(conn: &Snapshot, request: &Request) -> Result<Report> {
    let start = Instant::now();
    let f = &request.filters;
    if f.structure.is_none() && f.structure_name.is_empty() {
        usage!("give the structure: --structure-name KEY or --structure FEN");
    }
    if f.structure.is_some() && !f.structure_name.is_empty() {
        usage!("--structure and --structure-name: give one of them");
    }
    if request.within.is_some() && f.structure.is_none() {
        usage!("--within needs --structure FEN (the structures within that distance of it)");
    }
    let mut search = crate::engine::find::search(f)?;
    if !search.structures.is_empty() {
        resolve_names(conn, &mut search)?;
    }
    let catalogue = Catalogue::active();
    let sliced = named_only(conn, &search)?;
    let (target, games, tally, per_decade, found) = if let Some(codes) = &sliced {
        // A named structure and game filters only: each thread takes a slice of the game ids,
        // finds its games' stays from the structure changes, counts its games per decade and
        // replays its games; nothing waits for another phase.
        let last = crate::store::schema::games::last_game_id(conn)?;
        let forks = conn.forks();
        let filtered = !search.games.is_empty();
        let parts = parallel::fan_out(
            parallel::split(1, last, request.threads.max(1)),
            |(from, to)| -> Result<(usize, Tally, PerDecade)> {
                let fork = forks.open()?;
                let mut stretches = named_stretches(&fork, codes, from, to)?;
                if filtered {
                    let ids: Vec<i64> = stretches.iter().map(|(g, _)| *g).collect();
                    let keep = passing_games(&fork, &search, &ids)?;
                    stretches.retain(|(g, _)| keep.binary_search(g).is_ok());
                }
                let tally = replay_slice(&fork, &stretches, catalogue)?;
                let per_decade = if request.ranking_only {
                    PerDecade::default()
                } else {
                    games_per_decade(&fork, &search, Some((from, to)))?
                };
                Ok((stretches.len(), tally, per_decade))
            },
        )?;
        let mut games = 0;
        let mut tally = Tally::default();
        let mut per_decade = PerDecade::default();
        for (n, t, d) in parts {
            games += n;
            tally.merge(t);
            per_decade.merge(d);
        }
        (
            target_words(&search, f),
            games,
            tally,
            per_decade,
            start.elapsed(),
        )
    } else {
        let (target, stretches) = match (request.within, &f.structure) {
            (Some(distance), Some(fen)) => within(conn, request, &search, fen, distance)?,
            _ => (
                target_words(&search, f),
                crate::store::read::plans::stretches(conn, &search)?,
            ),
        };
        let found = start.elapsed();
        // The games per decade (a scan of `games`) on a connection of their own, beside the
        // replay.
        let forks = conn.forks();
        let (per_decade, tally) = parallel::join(
            || -> Result<_> {
                let fork = forks.open()?;
                if request.ranking_only {
                    return Ok(PerDecade::default());
                }
                games_per_decade(&fork, &search, None)
            },
            || replay(conn, &stretches, request.threads, catalogue),
        );
        (target, stretches.len(), tally?, per_decade?, found)
    };
    let replayed = start.elapsed() - found;
    let sliced = sliced.is_some();
    let decades = decades(per_decade, &tally);
    let report = report(conn, target, tally, decades, request, catalogue)?;
    if std::env::var_os("PAWNDEX_TIMINGS").is_some() {
        eprintln!(
            "timings: plans: {games} games; found, replayed and games per decade counted in \
             {:.3} s ({}), report {:.3} s",
            (found + replayed).as_secs_f64(),
            if sliced {
                "each thread a slice of the structure changes".to_string()
            } else {
                format!("found by the runs in {:.3} s", found.as_secs_f64())
            },
            (start.elapsed() - found - replayed).as_secs_f64()
        );
    }
    Ok(report)
}

/// The structure asked for, in words.
fn target_words(search: &crate::store::read::search::Search, f: &Filters) -> String {
    if let Some(fen) = &f.structure {
        return format!("exactly the pawns of {}", fen.trim());
    }
    let catalogue = Catalogue::active();
    let names: Vec<String> = search
        .structures
        .iter()
        .map(|form| {
            let name = catalogue
                .definitions()
                .iter()
                .find(|d| d.key == form.key)
                .map_or(form.key.as_str(), |d| d.name.as_str());
            if form.reversed {
                format!("{name} (reversed)")
            } else {
                name.to_string()
            }
        })
        .collect();
    names.join(" or ")
}

/// The stretches of the structures within `distance` of the pawns of `fen` (at most
/// [`MAX_WITHIN`] of them, the closest), in the games passing the game filters.
fn within(
    conn: &Snapshot,
    request: &Request,
    search: &crate::store::read::search::Search,
    fen: &str,
    distance: u32,
) -> Result<(String, Vec<(i64, Stretches)>)> {
    let (white, black) = structure_of(fen)?;
    let found = crate::engine::similar::rank(
        conn,
        request.threads.max(1),
        crate::engine::similar::Request {
            target: Pawns { white, black },
            options: Options::default(),
            limit: MAX_WITHIN,
            max_distance: Some(distance),
            min_games: 1,
        },
    )?;
    let pairs: Vec<(i64, i64)> = found.iter().map(|s| s.sets).collect();
    let mut out: Vec<(i64, Stretches)> = Vec::new();
    let mut runs = crate::store::read::similar::pair_runs(conn, &pairs)?;
    runs.sort_by_key(|r| (r.game, r.first_ply));
    for r in runs {
        if let (Ok(a), Ok(b)) = (u32::try_from(r.first_ply), u32::try_from(r.last_ply)) {
            push_stretch(&mut out, r.game, a, b);
        }
    }
    let ids: Vec<i64> = out.iter().map(|(g, _)| *g).collect();
    let keep = passing_games(conn, search, &ids)?;
    out.retain(|(g, _)| keep.binary_search(g).is_ok());
    let words = format!(
        "the {} structure{} within distance {distance} of the pawns of {}",
        found.len(),
        if found.len() == 1 { "" } else { "s" },
        fen.trim()
    );
    Ok((words, out))
}

/// Replays the games on up to `threads` connections and merges their tallies.
fn replay(
    conn: &Snapshot,
    games: &[(i64, Stretches)],
    threads: usize,
    catalogue: &Catalogue,
) -> Result<Tally> {
    let one = |conn: &Snapshot, slice: &[(i64, Stretches)]| replay_slice(conn, slice, catalogue);
    let threads = threads.max(1);
    if games.len() < FEW_GAMES || threads == 1 {
        return one(conn, games);
    }
    let forks = conn.forks();
    let per = games.len().div_ceil(threads);
    let tallies = parallel::fan_out(games.chunks(per), |slice| {
        let fork = forks.open()?;
        one(&fork, slice)
    })?;
    let mut all = Tally::default();
    for t in tallies {
        all.merge(t);
    }
    Ok(all)
}

/// Replays the games of `slice` on one connection into a tally.
fn replay_slice(
    conn: &Snapshot,
    slice: &[(i64, Stretches)],
    catalogue: &Catalogue,
) -> Result<Tally> {
    let mut tally = Tally::default();
    for (i, (id, inside)) in slice.iter().enumerate() {
        if i % 64 == 0 && conn.limit().passed() {
            return Err(crate::store::read::interrupted("interrupted"));
        }
        if let Some(g) = replayed_game(conn, *id)? {
            tally.add(&g, inside, catalogue)?;
        }
    }
    Ok(tally)
}

/// The `runs.structure` codes of the search's named forms when they and the game conditions
/// are all it asks (no pawns, features, plies nor least stay): then the stays come from the
/// structure changes alone ([`named_stretches`]).
fn named_only(
    conn: &Snapshot,
    search: &crate::store::read::search::Search,
) -> Result<Option<Vec<i64>>> {
    let only = !search.structures.is_empty()
        && search.white.is_empty()
        && search.black.is_empty()
        && search.runs.is_empty()
        && search.plies == (0, u32::MAX)
        && search.min_stay.is_none();
    if !only {
        return Ok(None);
    }
    Ok(Some(search.structure_codes(conn)?))
}

/// Games per decade under the game filters (`per_decade`), and those of the structure.
fn decades(per_decade: PerDecade, tally: &Tally) -> Vec<Decade> {
    let mut rows: Vec<Decade> = per_decade
        .rows()
        .into_iter()
        .map(|(decade, games)| Decade {
            decade,
            games,
            in_structure: 0,
        })
        .collect();
    for v in &tally.visits {
        if let Some(d) = rows.iter_mut().find(|d| d.decade == v.decade) {
            d.in_structure += 1;
        }
    }
    rows
}

/// The rows of a map of moves, most played first (then by SAN), at most `top`.
fn rows(
    map: &crate::model::hash::IntMap<PlainMove, crate::model::plans::Games>,
    side: Color,
    top: usize,
) -> Vec<MoveRow> {
    let mut list: Vec<MoveRow> = map
        .iter()
        .filter(|(m, _)| m.side() == side)
        .map(|(m, g)| MoveRow {
            mv: *m,
            by_outcome: g.by_outcome,
            median_move: lower_median(&mut g.move_numbers.clone()),
            leads_to: None,
        })
        .collect();
    sort_rows(&mut list);
    list.truncate(top);
    list
}

fn sort_rows(list: &mut [MoveRow]) {
    list.sort_by(|a, b| {
        b.games()
            .cmp(&a.games())
            .then_with(|| a.mv.san().cmp(&b.mv.san()))
            .then_with(|| a.mv.side().is_black().cmp(&b.mv.side().is_black()))
            .then_with(|| a.leads_to.cmp(&b.leads_to))
    });
}

/// The form a structure code names, as (key, reversed, display name).
fn form(catalogue: &Catalogue, code: Code) -> Option<(String, bool, String)> {
    catalogue
        .named(code)
        .map(|(d, reversed)| (d.key.clone(), reversed, d.name.clone()))
}

fn report(
    conn: &Snapshot,
    target: String,
    tally: Tally,
    decades: Vec<Decade>,
    request: &Request,
    catalogue: &Catalogue,
) -> Result<Report> {
    let top = request.top.max(1);
    let moves = [
        rows(&tally.moves, Color::White, top),
        rows(&tally.moves, Color::Black, top),
    ];
    let replies = [
        rows(&tally.replies, Color::White, top),
        rows(&tally.replies, Color::Black, top),
    ];
    let (mut breaks, mut other_exits) = (Vec::new(), Vec::new());
    for ((m, code), g) in &tally.exits {
        let row = MoveRow {
            mv: *m,
            by_outcome: g.by_outcome,
            median_move: lower_median(&mut g.move_numbers.clone()),
            leads_to: form(catalogue, *code),
        };
        if m.is_pawn() {
            breaks.push(row);
        } else {
            other_exits.push(row);
        }
    }
    sort_rows(&mut breaks);
    sort_rows(&mut other_exits);
    breaks.truncate(top);
    other_exits.truncate(top);
    // Typicality: each side's most played plan moves (over every move of the side, not only
    // the listed ones).
    let typical: [Vec<PlainMove>; 2] = [Color::White, Color::Black].map(|side| {
        rows(&tally.moves, side, TYPICAL_MOVES)
            .into_iter()
            .map(|r| r.mv)
            .collect()
    });
    let mut ranked: Vec<(u32, &crate::model::plans::Visit)> = tally
        .visits
        .iter()
        .map(|v| (typicality(v, &typical), v))
        .collect();
    let average = |v: &crate::model::plans::Visit| match v.elo {
        (Some(w), Some(b)) => Some(w + b),
        _ => None,
    };
    ranked.sort_by(|(ta, a), (tb, b)| {
        tb.cmp(ta)
            .then_with(|| average(b).cmp(&average(a)))
            .then_with(|| b.stay.cmp(&a.stay))
            .then_with(|| a.id.cmp(&b.id))
    });
    let order: Vec<(i64, i64)> = ranked
        .iter()
        .map(|(_, v)| (v.id, i64::from(v.entered)))
        .collect();
    let mut model_games = Vec::new();
    for (t, v) in ranked.into_iter().take(request.model_games) {
        if let Some(g) = game(conn, v.id)? {
            model_games.push(ModelGame {
                visit: v.clone(),
                typicality: t,
                header: g.header,
            });
        }
    }
    debug_assert_eq!(side_index(Color::Black), 1);
    Ok(Report {
        target,
        games: tally.games,
        positions: tally.positions,
        stays: tally.stays,
        moves,
        replies,
        breaks,
        other_exits,
        squares: tally.squares,
        decades,
        model_games,
        typical_moves: TYPICAL_MOVES,
        ranked: order,
    })
}

/// The games of the structure of `filters` in the order of their typicality (the model
/// games' order), each with the first ply it is in the structure: what `find --sort
/// typicality` and `GET /api/games?sort=typicality` list.
pub fn typical_games(
    conn: &Snapshot,
    filters: &Filters,
    threads: usize,
) -> Result<Vec<(i64, i64)>> {
    let mut f = filters.clone();
    f.sort = None;
    f.reverse = false;
    let report = plans(
        conn,
        &Request {
            filters: f,
            within: None,
            top: 1,
            model_games: 0,
            threads,
            ranking_only: true,
        },
    )?;
    Ok(report.ranked)
}
