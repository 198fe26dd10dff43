//! `pawndex player NAME`: a player's structure profile (`model::profile` holds its rules). The
//! player's games come from the name look-up's spellings; each game's runs give the named
//! forms and exact pawn structures it reaches with the player's colour and its plies there;
//! the games are replayed once each (`model::plans::side_plays`) on [`parallel`] connections
//! for the player's moves and breaks. The baselines: for named forms, `structure_results`
//! summed over ratings and time classes, less the player's own games of that colour; for exact
//! pawns, the games reaching them (a stay of at least [`MIN_EXACT_STAY`] plies) read on the
//! fly, the player's own left out. `--baseline OTHER.db` reads both from another database
//! classified with the same catalogue.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use anyhow::{Result, bail};
use shakmaty::Color;

use crate::engine::find::{Filters, resolve_names, search};
use crate::engine::parallel;
use crate::model::columns::pawn_fen;
use crate::model::outcome::Outcome;
use crate::model::plans::{PlainMove, side_plays};
use crate::model::players::Player;
use crate::model::profile::{
    HeadToHead, Kind, MIN_EXACT_STAY, MutualGame, Played, Profile, Rating, Results, Row, TOP,
    UnknownPlayer, Year, sort_rows, year,
};
use crate::model::usage;
use crate::store::read::Snapshot;
use crate::store::read::names::{self, Resolution};
use crate::store::read::plans::{passing_games, replayed_game};
use crate::store::read::profile::{
    PlayerGame, Run, catalogue_fingerprint, exact_candidates, exact_games, game_runs, player_games,
    set_pawns, structure_results,
};
use crate::store::read::search::{Search, structure_names};
use crate::store::read::similar::set_id;

/// How many exact pawn structures per colour `--exact` lists by default.
pub const DEFAULT_EXACT: usize = 10;

/// The candidate games of an exact structure read in one statement (slices of them spread
/// over the threads).
const EXACT_SLICE: usize = 2048;

/// How many named forms the years' shares follow.
const YEAR_FORMS: usize = 5;

/// What `pawndex player` asks.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The player's name as typed.
    pub name: String,
    /// `--as white|black`: that colour only.
    pub only: Option<Color>,
    /// The game filters (`find`'s): they choose the player's games; only the time-class ones
    /// also apply to the baselines.
    pub filters: Filters,
    /// `--vs OPPONENT`.
    pub vs: Option<String>,
    /// `--baseline OTHER.db`.
    pub baseline: Option<PathBuf>,
    /// `--exact N`: exact pawn structures per colour.
    pub exact: usize,
    pub threads: usize,
}

/// The player `typed` names in the database, or an [`UnknownPlayer`] error listing the
/// candidates (unknown or ambiguous).
pub fn find_player(conn: &Snapshot, typed: &str) -> Result<Player> {
    if typed.trim().is_empty() {
        usage!("the player's name is empty");
    }
    let list = |players: Vec<Player>| -> Vec<(String, i64)> {
        players.into_iter().map(|p| (p.shown, p.games)).collect()
    };
    let (message, candidates) = match names::resolve(conn, typed)? {
        Resolution::One(p) => return Ok(p),
        Resolution::Ambiguous(players) => (
            format!("\"{typed}\" names several players; give one of them:"),
            list(players),
        ),
        Resolution::Unknown(players) if players.is_empty() => (
            format!("no player named \"{typed}\" (pawndex players --search TEXT lists names)"),
            Vec::new(),
        ),
        Resolution::Unknown(players) => (
            format!("no player named \"{typed}\"; close names:"),
            list(players),
        ),
    };
    Err(anyhow::Error::new(UnknownPlayer {
        message,
        candidates,
    }))
}

/// A player's profile.
pub fn profile(conn: &Snapshot, request: &Request) -> Result<Profile> {
    let f = &request.filters;
    if f.min_stay.is_some() {
        usage!("--min-stay: a profile counts every game of the player (not a structure's stay)");
    }
    let player = find_player(conn, &request.name)?;
    let reference = match &request.baseline {
        Some(path) => Some(open_reference(conn, path)?),
        None => None,
    };
    let mut p = one_profile(conn, request, &player, request.only, reference.as_ref())?;
    if let Some(vs) = &request.vs {
        let opponent = find_player(conn, vs)?;
        p.head_to_head = Some(head_to_head(conn, request, &player, &opponent)?);
        let mut o = one_profile(
            conn,
            request,
            &opponent,
            request.only.map(|c| !c),
            reference.as_ref(),
        )?;
        o.baseline_source.clone_from(&p.baseline_source);
        p.opponent = Some(Box::new(o));
    }
    Ok(p)
}

/// Opens `--baseline OTHER.db`, refusing a database classified with another catalogue.
fn open_reference(conn: &Snapshot, path: &std::path::Path) -> Result<(Snapshot, String)> {
    let other = Snapshot::open(path, conn.limit())?;
    let ours = catalogue_fingerprint(conn)?;
    let theirs = catalogue_fingerprint(&other)?;
    if ours != theirs {
        bail!(
            "--baseline {}: its structures were classified with another catalogue (fingerprint \
             {} here, {} there): the same structure keys would not mean the same pawns; \
             re-index one of them with the same structures/ (pawndex migrate reclassifies)",
            path.display(),
            ours.as_deref().unwrap_or("none"),
            theirs.as_deref().unwrap_or("none")
        );
    }
    Ok((other, path.display().to_string()))
}

/// An exact pawn structure: White's and Black's pawn sets.
type Pair = (i64, i64);

/// A game's stretches of plies in a structure (first, last), sorted, disjoint.
type Stretches = Vec<(u32, u32)>;

/// Per row key, the baseline's games: all of them, and those in the rating band.
type Baselines<K> = HashMap<K, (Results, Results)>;

/// A game's stay in a named form (`runs.structure` code) or exact pawns (with their form's
/// code): its plies there and its stretches.
#[derive(Clone, Debug)]
struct Stay<K> {
    key: K,
    code: i64,
    plies: u64,
    stretches: Stretches,
}

/// A game's stays per named form and per exact pawns.
#[derive(Clone, Debug, Default)]
struct Stays {
    named: Vec<Stay<i64>>,
    exact: Vec<Stay<Pair>>,
}

fn add_stay<K: PartialEq>(list: &mut Vec<Stay<K>>, key: K, code: i64, r: &Run) {
    let plies = u64::from(r.last_ply - r.first_ply) + 1;
    match list.iter_mut().find(|s| s.key == key) {
        Some(s) => {
            s.plies += plies;
            push(&mut s.stretches, r.first_ply, r.last_ply);
        }
        None => list.push(Stay {
            key,
            code,
            plies,
            stretches: vec![(r.first_ply, r.last_ply)],
        }),
    }
}

fn push(stretches: &mut Vec<(u32, u32)>, first: u32, last: u32) {
    match stretches.last_mut() {
        Some(prev) if prev.1.saturating_add(1) >= first => prev.1 = prev.1.max(last),
        _ => stretches.push((first, last)),
    }
}

fn stays(runs: &[Run]) -> Stays {
    let mut s = Stays::default();
    for r in runs {
        if r.structure != 0 {
            add_stay(&mut s.named, r.structure, r.structure, r);
        }
        add_stay(&mut s.exact, (r.white_set, r.black_set), r.structure, r);
    }
    s
}

/// The stays of each game of `games`, read on up to `threads` connections.
fn read_stays(conn: &Snapshot, games: &[PlayerGame], threads: usize) -> Result<Vec<Stays>> {
    let one = |conn: &Snapshot, slice: &[PlayerGame]| -> Result<Vec<Stays>> {
        let mut runs = Vec::new();
        let mut out = Vec::with_capacity(slice.len());
        for (i, g) in slice.iter().enumerate() {
            if i % 256 == 0 && conn.limit().passed() {
                return Err(crate::store::read::interrupted("interrupted"));
            }
            game_runs(conn, g.id, &mut runs)?;
            out.push(stays(&runs));
        }
        Ok(out)
    };
    if games.len() < 512 || threads <= 1 {
        return one(conn, games);
    }
    let forks = conn.forks();
    let per = games.len().div_ceil(threads);
    let parts = parallel::fan_out(games.chunks(per), |slice| one(&forks.open()?, slice))?;
    Ok(parts.into_iter().flatten().collect())
}

/// The time-class filters alone (what applies to the baselines).
fn time_search(f: &Filters) -> Result<Search> {
    search(&Filters {
        time_class: f.time_class.clone(),
        exclude_time_class: f.exclude_time_class.clone(),
        ..Filters::default()
    })
}

/// The colours `names` plays in game `g` (both when they play each other).
fn colours(g: &PlayerGame, names: &HashSet<&str>) -> Vec<Color> {
    [Color::White, Color::Black]
        .into_iter()
        .filter(|&c| names.contains(g.name(c)))
        .collect()
}

/// A row being counted: the player's games, plies and, per move, the games.
#[derive(Default)]
struct Counting {
    results: Results,
    plies: u64,
    moves: HashMap<PlainMove, Results>,
    breaks: HashMap<PlainMove, Results>,
}

/// A row's identity: named (code) or exact (pawn sets), and the colour.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum RowKey {
    Named(i64, bool),
    Exact(Pair, bool),
}

fn colour_of(black: bool) -> Color {
    if black { Color::Black } else { Color::White }
}

fn one_profile(
    conn: &Snapshot,
    request: &Request,
    player: &Player,
    only: Option<Color>,
    reference: Option<&(Snapshot, String)>,
) -> Result<Profile> {
    let threads = request.threads.max(1);
    let clock = Timings::start();
    let mut full = search(&request.filters)?;
    resolve_names(conn, &mut full)?;
    let time = time_search(&request.filters)?;
    let names_set: HashSet<&str> = player.names.iter().map(String::as_str).collect();
    // Every game of the player under the time-class filters (the baselines leave them out),
    // and which of them the other filters keep.
    let games = player_games(conn, &player.names, &time)?;
    let ids: Vec<i64> = games.iter().map(|g| g.id).collect();
    let kept: HashSet<i64> = passing_games(conn, &full, &ids)?.into_iter().collect();
    clock.lap("games read");
    let all_stays = read_stays(conn, &games, threads)?;
    clock.lap("runs read");
    // The profile's (game, colour) entries.
    let mut entries: Vec<(usize, Color)> = Vec::new();
    let mut ratings = Vec::new();
    let mut totals = [Results::default(); 2];
    for (i, g) in games.iter().enumerate() {
        if !kept.contains(&g.id) {
            continue;
        }
        for c in colours(g, &names_set) {
            if only.is_some_and(|o| o != c) {
                continue;
            }
            entries.push((i, c));
            totals[usize::from(c.is_black())].add(g.outcome(), c);
            if let Some(e) = g.elo(c) {
                ratings.push(e);
            }
        }
    }
    let rating = Rating::of(&mut ratings);
    // The exact pawn structures: per colour, those most of the entries stay in long enough.
    let mut exact_counts: HashMap<(Pair, bool), (u64, u64)> = HashMap::new();
    for &(i, c) in &entries {
        for stay in &all_stays[i].exact {
            if stay.plies >= u64::from(MIN_EXACT_STAY) {
                let e = exact_counts.entry((stay.key, c.is_black())).or_default();
                e.0 += 1;
                e.1 += stay.plies;
            }
        }
    }
    let mut chosen: HashSet<(Pair, bool)> = HashSet::new();
    for black in [false, true] {
        let mut list: Vec<((Pair, bool), (u64, u64))> = exact_counts
            .iter()
            .filter(|(k, _)| k.1 == black)
            .map(|(k, v)| (*k, *v))
            .collect();
        list.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        chosen.extend(list.into_iter().take(request.exact).map(|(k, _)| k));
    }
    // Count the rows and replay each entry's game once for its moves and breaks.
    let counted = count_rows(conn, &games, &all_stays, &entries, &chosen, threads)?;
    clock.lap("games replayed");
    // Baselines.
    let band = rating.map(|r| (r.low, r.high));
    let (base_conn, source) = match reference {
        Some((other, source)) => (other, Some(source.clone())),
        None => (conn, None),
    };
    let base_names = named_baselines(
        base_conn,
        player,
        &time,
        band,
        threads,
        reference.is_none().then_some((&games, &all_stays)),
    )?;
    clock.lap("named baselines");
    let exact_pairs: Vec<(Pair, bool)> = {
        let mut v: Vec<_> = chosen.iter().copied().collect();
        v.sort_unstable();
        v
    };
    let mut pawns_of: HashMap<i64, u64> = HashMap::new();
    for ((w, b), _) in &exact_pairs {
        for id in [*w, *b] {
            if let std::collections::hash_map::Entry::Vacant(e) = pawns_of.entry(id)
                && let Some(p) = set_pawns(conn, id)?
            {
                e.insert(p);
            }
        }
    }
    let base_exact = exact_baselines(
        base_conn,
        &exact_pairs,
        reference.is_some().then_some(&pawns_of),
        &names_set,
        &time,
        rating,
        threads,
    )?;
    clock.lap("exact baselines");
    // The rows.
    let known = structure_names(conn)?;
    let form = |code: i64| -> Option<(String, String, bool)> {
        known
            .iter()
            .find(|n| n.id == code >> 1)
            .map(|n| (n.key.clone(), n.name.clone(), code & 1 == 1))
    };
    let mut rows = Vec::new();
    for (key, c) in counted {
        let (kind, key_text, name, reversed, colour, base) = match key {
            RowKey::Named(code, black) => {
                let Some((k, n, rev)) = form(code) else {
                    continue;
                };
                let base = base_names.get(&(code, black)).copied().unwrap_or_default();
                (Kind::Named, k, Some(n), rev, colour_of(black), base)
            }
            RowKey::Exact(pair, black) => {
                let (Some(&w), Some(&b)) = (pawns_of.get(&pair.0), pawns_of.get(&pair.1)) else {
                    continue;
                };
                let code = all_stays
                    .iter()
                    .flat_map(|s| s.exact.iter())
                    .find(|s| s.key == pair)
                    .map_or(0, |s| s.code);
                let (name, rev) = match form(code) {
                    Some((_, n, rev)) => (Some(n), rev),
                    None => (None, false),
                };
                let base = base_exact.get(&(pair, black)).copied().unwrap_or_default();
                (
                    Kind::Exact,
                    pawn_fen(w, b),
                    name,
                    rev,
                    colour_of(black),
                    base,
                )
            }
        };
        rows.push(Row {
            kind,
            key: key_text,
            name,
            reversed,
            colour,
            results: c.results,
            plies: c.plies,
            baseline: base.0,
            band: rating.map(|_| base.1),
            moves: top(&c.moves),
            breaks: top(&c.breaks),
        });
    }
    sort_rows(&mut rows);
    let years = years(&games, &all_stays, &entries, &form);
    Ok(Profile {
        player: player.shown.clone(),
        names: player.names.clone(),
        only,
        baseline_source: source,
        rating,
        games: totals,
        structures: rows,
        years,
        head_to_head: None,
        opponent: None,
    })
}

/// `PAWNDEX_TIMINGS`: each phase's time on stderr.
struct Timings(Option<std::cell::Cell<std::time::Instant>>);

impl Timings {
    fn start() -> Timings {
        Timings(
            std::env::var_os("PAWNDEX_TIMINGS")
                .map(|_| std::cell::Cell::new(std::time::Instant::now())),
        )
    }

    fn lap(&self, what: &str) {
        if let Some(at) = &self.0 {
            let now = std::time::Instant::now();
            eprintln!(
                "timings: player: {what} in {:.3} s",
                (now - at.get()).as_secs_f64()
            );
            at.set(now);
        }
    }
}

/// The most played moves of a row, most games first, then by SAN; at most [`TOP`].
fn top(map: &HashMap<PlainMove, Results>) -> Vec<Played> {
    let mut list: Vec<Played> = map
        .iter()
        .map(|(m, r)| Played {
            san: m.san(),
            results: *r,
        })
        .collect();
    list.sort_by(|a, b| {
        b.results
            .games
            .cmp(&a.results.games)
            .then_with(|| a.san.cmp(&b.san))
    });
    list.truncate(TOP);
    list
}

/// Counts every row of the entries: games, plies, and (a replay per game) moves and breaks.
fn count_rows(
    conn: &Snapshot,
    games: &[PlayerGame],
    all_stays: &[Stays],
    entries: &[(usize, Color)],
    chosen: &HashSet<(Pair, bool)>,
    threads: usize,
) -> Result<BTreeMap<RowKey, Counting>> {
    let one = |conn: &Snapshot, slice: &[(usize, Color)]| -> Result<HashMap<RowKey, Counting>> {
        let mut out: HashMap<RowKey, Counting> = HashMap::new();
        for (n, &(i, c)) in slice.iter().enumerate() {
            if n % 64 == 0 && conn.limit().passed() {
                return Err(crate::store::read::interrupted("interrupted"));
            }
            let g = &games[i];
            let s = &all_stays[i];
            let black = c.is_black();
            let mut keys: Vec<RowKey> = Vec::new();
            let mut stretches: Vec<&[(u32, u32)]> = Vec::new();
            let mut plies: Vec<u64> = Vec::new();
            for stay in &s.named {
                keys.push(RowKey::Named(stay.key, black));
                stretches.push(&stay.stretches);
                plies.push(stay.plies);
            }
            for stay in &s.exact {
                if stay.plies >= u64::from(MIN_EXACT_STAY) && chosen.contains(&(stay.key, black)) {
                    keys.push(RowKey::Exact(stay.key, black));
                    stretches.push(&stay.stretches);
                    plies.push(stay.plies);
                }
            }
            if keys.is_empty() {
                continue;
            }
            let outcome = g.outcome();
            let plays = match replayed_game(conn, g.id)? {
                Some(stored) => side_plays(&stored, c, &stretches)?,
                None => vec![(Vec::new(), Vec::new()); keys.len()],
            };
            for ((key, n), (moves, breaks)) in keys.into_iter().zip(plies).zip(plays) {
                let row = out.entry(key).or_default();
                row.results.add(outcome, c);
                row.plies += n;
                for m in moves {
                    row.moves.entry(m).or_default().add(outcome, c);
                }
                for m in breaks {
                    row.breaks.entry(m).or_default().add(outcome, c);
                }
            }
        }
        Ok(out)
    };
    let parts = if entries.len() < 256 || threads <= 1 {
        vec![one(conn, entries)?]
    } else {
        let forks = conn.forks();
        let per = entries.len().div_ceil(threads);
        parallel::fan_out(entries.chunks(per), |slice| one(&forks.open()?, slice))?
    };
    let mut all: BTreeMap<RowKey, Counting> = BTreeMap::new();
    for part in parts {
        for (k, c) in part {
            let row = all.entry(k).or_default();
            row.results.merge(c.results);
            row.plies += c.plies;
            for (m, r) in c.moves {
                row.moves.entry(m).or_default().merge(r);
            }
            for (m, r) in c.breaks {
                row.breaks.entry(m).or_default().merge(r);
            }
        }
    }
    Ok(all)
}

/// The named forms' baselines in `conn`: per (code, Black?), all games and the band's, less the
/// player's own games of that colour. `own`: the player's games and stays when `conn` is the
/// profile's database (read again otherwise).
fn named_baselines(
    conn: &Snapshot,
    player: &Player,
    time: &Search,
    band: Option<(i64, i64)>,
    threads: usize,
    own: Option<(&Vec<PlayerGame>, &Vec<Stays>)>,
) -> Result<Baselines<(i64, bool)>> {
    let read;
    let (games, all_stays) = match own {
        Some(x) => x,
        None => {
            let games = player_games(conn, &player.names, time)?;
            let stays = read_stays(conn, &games, threads)?;
            read = (games, stays);
            (&read.0, &read.1)
        }
    };
    let names_set: HashSet<&str> = player.names.iter().map(String::as_str).collect();
    let mut out: Baselines<(i64, bool)> = HashMap::new();
    for (code, side, all, in_band) in structure_results(conn, time, band)? {
        out.insert((code, side.is_black()), (all, in_band));
    }
    // The player's own games of each colour, left out.
    let mut own_counts: Baselines<(i64, bool)> = HashMap::new();
    for (g, s) in games.iter().zip(all_stays) {
        for c in colours(g, &names_set) {
            let outcome = g.outcome();
            let in_band = band.is_some_and(|(lo, hi)| (lo..=hi).contains(&g.elo(c).unwrap_or(0)));
            for stay in &s.named {
                let e = own_counts.entry((stay.key, c.is_black())).or_default();
                e.0.add(outcome, c);
                if in_band {
                    e.1.add(outcome, c);
                }
            }
        }
    }
    for (k, (a, b)) in own_counts {
        if let Some(e) = out.get_mut(&k) {
            e.0 = e.0.minus(a);
            e.1 = e.1.minus(b);
        }
    }
    Ok(out)
}

/// The exact structures' baselines in `conn`: per (pawn sets here, Black?), the games reaching
/// those pawns with a stay of at least [`MIN_EXACT_STAY`] plies under the time-class filters,
/// whose player of that colour is none of `names`; all and the band's. `other`: `conn` is
/// another database, whose pawn sets are found by their pawns (these, of the sets here).
fn exact_baselines(
    conn: &Snapshot,
    pairs: &[(Pair, bool)],
    other: Option<&HashMap<i64, u64>>,
    names: &HashSet<&str>,
    time: &Search,
    rating: Option<Rating>,
    threads: usize,
) -> Result<Baselines<(Pair, bool)>> {
    let mut out = HashMap::new();
    // The distinct pawn structures, as the baseline database's set ids.
    let mut distinct: Vec<(i64, i64)> = pairs.iter().map(|(p, _)| *p).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let mut theirs: Vec<(i64, i64)> = Vec::new();
    let mut of: Vec<(i64, i64)> = Vec::new();
    for &(w, b) in &distinct {
        let mapped = if let Some(pawns_of) = other {
            let (Some(&wp), Some(&bp)) = (pawns_of.get(&w), pawns_of.get(&b)) else {
                continue;
            };
            match (set_id(conn, 0, wp)?, set_id(conn, 1, bp)?) {
                (Some(x), Some(y)) => (x, y),
                _ => continue,
            }
        } else {
            (w, b)
        };
        theirs.push(mapped);
        of.push((w, b));
    }
    // The candidate games of every pawn structure, then their runs read in slices of about
    // equal length on the threads (one structure may have most of them).
    let mut work: Vec<(usize, Vec<i64>)> = Vec::new();
    for (k, &pair) in theirs.iter().enumerate() {
        let candidates = exact_candidates(conn, pair)?;
        work.extend(
            candidates
                .chunks(EXACT_SLICE)
                .map(|slice| (k, slice.to_vec())),
        );
    }
    let forks = conn.forks();
    let per = work.len().div_ceil(threads.max(1)).max(1);
    let parts = parallel::fan_out(work.chunks(per), |items| {
        let fork = forks.open()?;
        items
            .iter()
            .map(|(k, ids)| {
                Ok((
                    *k,
                    exact_games(&fork, theirs[*k], ids, MIN_EXACT_STAY, time)?,
                ))
            })
            .collect::<Result<Vec<_>>>()
    })?;
    let mut lists: Vec<Vec<PlayerGame>> = vec![Vec::new(); theirs.len()];
    for (k, games) in parts.into_iter().flatten() {
        lists[k].extend(games);
    }
    for (pair, list) in of.iter().zip(&lists) {
        for black in [false, true] {
            if !pairs.contains(&(*pair, black)) {
                continue;
            }
            let c = colour_of(black);
            let mut all = Results::default();
            let mut band = Results::default();
            for game in list {
                if names.contains(game.name(c)) {
                    continue;
                }
                let outcome = game.outcome();
                all.add(outcome, c);
                if rating.is_some_and(|r| r.holds(game.elo(c).unwrap_or(0))) {
                    band.add(outcome, c);
                }
            }
            out.insert((*pair, black), (all, band));
        }
    }
    Ok(out)
}

/// Per year (known years, ascending): the profile's games, and for the [`YEAR_FORMS`] named
/// forms most of them reach, how many reach each.
fn years(
    games: &[PlayerGame],
    all_stays: &[Stays],
    entries: &[(usize, Color)],
    form: &dyn Fn(i64) -> Option<(String, String, bool)>,
) -> Vec<Year> {
    let mut seen: Vec<usize> = entries.iter().map(|(i, _)| *i).collect();
    seen.dedup();
    let mut reached: HashMap<i64, u64> = HashMap::new();
    for &i in &seen {
        for stay in &all_stays[i].named {
            *reached.entry(stay.key).or_default() += 1;
        }
    }
    let mut forms: Vec<(i64, u64)> = reached.into_iter().collect();
    forms.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    forms.truncate(YEAR_FORMS);
    let mut per_year: BTreeMap<i64, (u64, Vec<u64>)> = BTreeMap::new();
    for &i in &seen {
        let Some(y) = year(games[i].date.as_deref()) else {
            continue;
        };
        let e = per_year
            .entry(y)
            .or_insert_with(|| (0, vec![0; forms.len()]));
        e.0 += 1;
        for (k, (code, _)) in forms.iter().enumerate() {
            if all_stays[i].named.iter().any(|s| s.key == *code) {
                e.1[k] += 1;
            }
        }
    }
    per_year
        .into_iter()
        .map(|(y, (n, counts))| Year {
            year: y,
            games: n,
            structures: forms
                .iter()
                .zip(counts)
                .filter_map(|((code, _), k)| form(*code).map(|(key, _, rev)| (key, rev, k)))
                .collect(),
        })
        .collect()
}

/// The player's games against the opponent (under the game filters and `--as`).
fn head_to_head(
    conn: &Snapshot,
    request: &Request,
    player: &Player,
    opponent: &Player,
) -> Result<HeadToHead> {
    let mut full = search(&request.filters)?;
    resolve_names(conn, &mut full)?;
    let games = player_games(conn, &player.names, &full)?;
    let ours: HashSet<&str> = player.names.iter().map(String::as_str).collect();
    let theirs: HashSet<&str> = opponent.names.iter().map(String::as_str).collect();
    let mut results = Results::default();
    let mut list = Vec::new();
    for g in &games {
        for c in [Color::White, Color::Black] {
            if request.only.is_some_and(|o| o != c)
                || !ours.contains(g.name(c))
                || !theirs.contains(g.name(!c))
            {
                continue;
            }
            results.add(Outcome::parse(g.result.as_deref()), c);
            list.push(MutualGame {
                id: g.id,
                date: g.date.clone(),
                event: g.event.clone(),
                colour: c,
                result: g.result.clone(),
                eco: g.eco.clone(),
                plies: g.plies,
            });
        }
    }
    list.sort_by(|a, b| a.date.cmp(&b.date).then(a.id.cmp(&b.id)));
    Ok(HeadToHead {
        opponent: opponent.shown.clone(),
        names: opponent.names.clone(),
        results,
        list,
    })
}
