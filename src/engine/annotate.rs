//! `pawndex annotate` and "Your game": one replayed game (it need not be in the reference
//! database) against a reference database: where its named structure changes, what the
//! reference's games did in each of its structures (`plans` over the whole reference, once
//! per form and kept), how often they left it by the game's move, and for the unnamed pawn
//! structures the game settles in, the reference's games with exactly those pawns or the
//! nearest ones (`similar`). docs/annotate.md is the contract; `model::annotate` the data.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use anyhow::{Result, bail};
use shakmaty::{Color, Position};

use crate::engine::find::Filters;
use crate::engine::plans::{Request as PlansRequest, plans};
use crate::engine::similar::{Request as SimilarRequest, rank};
use crate::model::annotate::{
    Change, Form, FormFigures, LeftBy, Notes, PawnsFigures, SETTLED, Settled, Stretch,
};
use crate::model::game::GameRecord;
use crate::model::plans::{MoveRow, PlainMove};
use crate::model::similar::{Options as Distance, Pawns};
use crate::model::structure::{Catalogue, Code};
use crate::store::read::Snapshot;
use crate::store::read::profile::catalogue_fingerprint;

/// What is said, and how much.
#[derive(Clone, Debug)]
pub struct Options {
    /// Plan moves quoted per side.
    pub top: usize,
    /// Other exits quoted where the game leaves a structure.
    pub alternatives: usize,
    /// Model games quoted per structure (0: none).
    pub model_games: usize,
    /// Below this many games a figure is not quoted.
    pub min_games: u64,
    /// Only the changes of the named structure (no unnamed stretches' pawns).
    pub only_changes: bool,
    pub threads: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            top: 3,
            alternatives: 3,
            model_games: 2,
            min_games: 10,
            only_changes: false,
            threads: 1,
        }
    }
}

/// Exact pawn structures kept at most (a run over thousands of games meets new ones all the
/// time: the memory stays bounded).
const KEPT_PAWNS: usize = 4096;

/// The farthest a "nearest frequent structure" is looked for (`similar`'s distance: one pawn
/// one square away is 1).
pub const NEAREST_WITHIN: u32 = 4;

/// One form's figures once computed, behind the lock its computing thread holds.
type FormSlot = Arc<Mutex<Option<Arc<FormFigures>>>>;

/// The exact pawns' figures and the nearest frequent structure (when they are rare).
type PawnsAnswer = (PawnsFigures, Option<PawnsFigures>);

/// The reference database's answers, each asked once: the figures of every named form met
/// so far and of recent exact pawn structures. One per database, shared by the games of a run
/// (or the requests of a server).
pub struct Reference {
    pub label: String,
    pub games: u64,
    options: Options,
    /// Per form a slot of its own: a thread computing a form's figures holds its slot, so that
    /// another game's thread waits for them instead of computing them again.
    forms: Mutex<HashMap<Code, FormSlot>>,
    pawns: Mutex<HashMap<(u64, u64), Arc<PawnsAnswer>>>,
    /// Where the time went (`PAWNDEX_TIMINGS`): forms asked and their seconds, exact pawn
    /// structures asked and their seconds, nearest structures looked for.
    spent: Mutex<Spent>,
}

/// Where a reference's time went.
#[derive(Clone, Copy, Debug, Default)]
pub struct Spent {
    pub forms: u64,
    pub forms_seconds: f64,
    pub pawns: u64,
    pub pawns_seconds: f64,
    pub nearest: u64,
}

impl Reference {
    /// The reference behind `conn` (shown as `label`). Refuses a database whose structures were
    /// named with another catalogue than the one in force: its structure codes would not mean
    /// the game's.
    pub fn new(conn: &Snapshot, label: &str, options: Options) -> Result<Reference> {
        let theirs = catalogue_fingerprint(conn)?;
        let ours = Catalogue::active().fingerprint();
        if theirs.as_deref().is_some_and(|t| t != ours) {
            bail!(
                "{label}: its structures were named with another structure catalogue than the one \
                 in force: run `pawndex migrate --db {label}` to re-classify it, or annotate with \
                 the catalogue it was indexed with (PAWNDEX_STRUCTURES)"
            );
        }
        let games = crate::store::read::similar::game_count(conn)? as u64;
        Ok(Reference {
            label: label.to_string(),
            games,
            options,
            forms: Mutex::new(HashMap::new()),
            pawns: Mutex::new(HashMap::new()),
            spent: Mutex::new(Spent::default()),
        })
    }

    #[must_use]
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Where the time went so far.
    #[must_use]
    pub fn spent(&self) -> Spent {
        *lock(&self.spent)
    }

    /// What the reference's games did in the form of `code`: `plans --structure-name KEY[~]`
    /// over every game, with every move and exit kept (the quoted ones are the first).
    pub fn form(&self, conn: &Snapshot, code: Code) -> Result<Arc<FormFigures>> {
        let slot = lock(&self.forms).entry(code).or_default().clone();
        let mut slot = lock(&slot);
        if let Some(f) = &*slot {
            return Ok(f.clone());
        }
        let Some(form) = form_of(code) else {
            bail!("structure code {code} is not in the catalogue");
        };
        let started = std::time::Instant::now();
        let report = plans(
            conn,
            &PlansRequest {
                filters: Filters {
                    structure_name: vec![form.arg()],
                    ..Filters::default()
                },
                within: None,
                top: usize::MAX,
                model_games: self.options.model_games,
                threads: self.options.threads.max(1),
                ranking_only: true,
            },
        )?;
        let mut exits = report.breaks;
        exits.extend(report.other_exits);
        let [white, black] = report.moves;
        let keep = |mut rows: Vec<MoveRow>| {
            rows.truncate(self.options.top);
            rows
        };
        let figures = Arc::new(FormFigures {
            games: report.games,
            positions: report.positions.iter().sum(),
            stays: report.stays,
            moves: [keep(white), keep(black)],
            exits,
            model_games: report.model_games,
        });
        *slot = Some(figures.clone());
        let mut spent = lock(&self.spent);
        spent.forms += 1;
        spent.forms_seconds += started.elapsed().as_secs_f64();
        Ok(figures)
    }

    /// The reference's games with exactly these pawns (what `similar --max-distance 0` counts,
    /// read from both sets' game lists), and when they are fewer than the threshold (but some),
    /// the nearest structure reached in at least that many within [`NEAREST_WITHIN`] (`similar
    /// --min-games N --max-distance 4 --limit 1`).
    pub fn pawns(&self, conn: &Snapshot, white: u64, black: u64) -> Result<Arc<PawnsAnswer>> {
        if let Some(a) = lock(&self.pawns).get(&(white, black)) {
            return Ok(a.clone());
        }
        let started = std::time::Instant::now();
        let target = Pawns { white, black };
        let games = crate::store::read::similar::exact_pair(conn, white, black)?;
        let (mut points, mut scored) = (0u64, 0u64);
        for (_, _, result) in &games {
            if let Some(p) = crate::engine::similar::points(result.as_deref()) {
                points += p;
                scored += 1;
            }
        }
        let exact = PawnsFigures {
            white,
            black,
            distance: 0,
            differs: "same pawns".into(),
            games: games.len() as u64,
            positions: games.iter().map(|g| g.1).sum(),
            white_score: crate::model::outcome::white_score(points, scored),
            form: None,
        };
        let min = self.options.min_games.max(1);
        let nearest = if exact.games > 0 && exact.games < min {
            // On one connection: the games are annotated on several threads already, and a
            // search within distance 4 is too short to gain from a second connection it would
            // open first (1,000 games: 19.6 s instead of 23.5 s).
            rank(
                conn,
                1,
                SimilarRequest {
                    target,
                    options: Distance::default(),
                    limit: 1,
                    max_distance: Some(NEAREST_WITHIN),
                    min_games: min,
                },
            )?
            .into_iter()
            .next()
            .map(|s| PawnsFigures {
                white: s.pawns.white,
                black: s.pawns.black,
                distance: s.distance,
                white_score: s.white_score(),
                differs: s.differs,
                games: s.games,
                positions: s.positions,
                form: form_of(Catalogue::active().classify(s.pawns.white, s.pawns.black)),
            })
        } else {
            None
        };
        {
            let mut spent = lock(&self.spent);
            spent.pawns += 1;
            spent.nearest += u64::from(exact.games > 0 && exact.games < min);
            spent.pawns_seconds += started.elapsed().as_secs_f64();
        }
        let answer = Arc::new((exact, nearest));
        let mut kept = lock(&self.pawns);
        if kept.len() >= KEPT_PAWNS {
            kept.clear();
        }
        kept.insert((white, black), answer.clone());
        Ok(answer)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The named form of a structure code (`None` for no name).
#[must_use]
pub fn form_of(code: Code) -> Option<Form> {
    Catalogue::active().named(code).map(|(d, reversed)| Form {
        key: d.key.clone(),
        reversed,
        name: d.name.clone(),
    })
}

/// Annotates replayed games against the reference on up to `threads` connections at once (each
/// game's notes in the order of `games`).
pub fn annotate_all(
    conn: &Snapshot,
    reference: &Reference,
    games: &[&GameRecord],
    threads: usize,
) -> Result<Vec<Notes>> {
    let threads = threads.clamp(1, games.len().max(1));
    if threads == 1 {
        return games.iter().map(|g| annotate(conn, reference, g)).collect();
    }
    let forks = conn.forks();
    let parts = crate::engine::parallel::fan_out(0..threads, |k| -> Result<Vec<(usize, Notes)>> {
        let fork = forks.open()?;
        let mut out = Vec::new();
        for (i, g) in games.iter().enumerate().skip(k).step_by(threads) {
            out.push((i, annotate(&fork, reference, g)?));
        }
        Ok(out)
    })?;
    let mut all: Vec<(usize, Notes)> = parts.into_iter().flatten().collect();
    all.sort_by_key(|(i, _)| *i);
    Ok(all.into_iter().map(|(_, n)| n).collect())
}

/// Annotates one replayed game against the reference.
pub fn annotate(conn: &Snapshot, reference: &Reference, game: &GameRecord) -> Result<Notes> {
    let options = reference.options();
    let stored = game.stored();
    let mut pos = stored.start()?;
    let first = pos.turn();
    // The move played from each position before a change of the named structure.
    let mut leaving: HashMap<u32, PlainMove> = HashMap::new();
    let wanted: Vec<u32> = game
        .changes
        .iter()
        .filter(|c| c.ply > 0 && c.from != 0)
        .map(|c| c.ply)
        .collect();
    if let Some(&last) = wanted.iter().max() {
        for ply in 1..=last.min(stored.plies()) {
            let m = stored.move_at(&pos, ply)?;
            if wanted.contains(&ply) {
                leaving.insert(ply, PlainMove::new(&m, pos.turn()));
            }
            pos.play_unchecked(m);
        }
    }
    let mut changes = Vec::new();
    for c in &game.changes {
        let structure = form_of(c.to);
        let figures = if c.to == 0 {
            None
        } else {
            Some(reference.form(conn, c.to)?)
        };
        let left_by = match (form_of(c.from), leaving.get(&c.ply)) {
            (Some(from), Some(&mv)) => Some(left_by(
                &*reference.form(conn, c.from)?,
                from,
                mv,
                structure.as_ref(),
                options.alternatives,
            )),
            _ => None,
        };
        changes.push(Change {
            ply: c.ply,
            san: c.san.clone(),
            to_move: side_to_move(first, c.ply),
            structure,
            reference: figures,
            left_by,
        });
    }
    // Runs of one named structure (runs also split at pawn and piece changes), by code.
    let mut stretches: Vec<Stretch> = Vec::new();
    let mut last_code = None;
    for run in &game.runs {
        match stretches.last_mut() {
            Some(s) if s.last_ply + 1 == run.first_ply && last_code == Some(run.structure) => {
                s.last_ply = run.last_ply;
            }
            _ => stretches.push(Stretch {
                structure: form_of(run.structure),
                first_ply: run.first_ply,
                last_ply: run.last_ply,
            }),
        }
        last_code = Some(run.structure);
    }
    let mut settled = Vec::new();
    if !options.only_changes {
        // Unnamed stretches of one pawn structure (runs also split at piece changes).
        let mut spans: Vec<(u32, u32, u64, u64)> = Vec::new();
        for run in game.runs.iter().filter(|r| r.structure == 0) {
            match spans.last_mut() {
                Some(s)
                    if s.1 + 1 == run.first_ply
                        && (s.2, s.3) == (run.white_pawns, run.black_pawns) =>
                {
                    s.1 = run.last_ply;
                }
                _ => spans.push((
                    run.first_ply,
                    run.last_ply,
                    run.white_pawns,
                    run.black_pawns,
                )),
            }
        }
        for (first, last, white, black) in spans {
            if last - first + 1 < SETTLED {
                continue;
            }
            let answer = reference.pawns(conn, white, black)?;
            if answer.0.games == 0 {
                // A structure the reference does not know: nothing to quote.
                continue;
            }
            settled.push(Settled {
                ply: first,
                last_ply: last,
                white,
                black,
                exact: answer.0.clone(),
                nearest: answer.1.clone(),
            });
        }
    }
    Ok(Notes {
        plies: game.plies,
        stretches,
        changes,
        settled,
        min_games: options.min_games,
    })
}

/// How the game's move `mv` left the form `from` for `to`, against the reference's exits.
fn left_by(
    figures: &FormFigures,
    from: Form,
    mv: PlainMove,
    to: Option<&Form>,
    alternatives: usize,
) -> LeftBy {
    let key = to.map(|f| (f.key.clone(), f.reversed, f.name.clone()));
    let row = figures
        .exits
        .iter()
        .find(|r| r.mv == mv && r.leads_to == key)
        .cloned()
        .unwrap_or(MoveRow {
            mv,
            by_outcome: [0; 4],
            median_move: 0,
            leads_to: key.clone(),
        });
    let mut others: Vec<MoveRow> = figures
        .exits
        .iter()
        .filter(|r| r.mv.side() == mv.side() && !(r.mv == mv && r.leads_to == key))
        .cloned()
        .collect();
    others.sort_by(|a, b| {
        b.games()
            .cmp(&a.games())
            .then_with(|| a.mv.san().cmp(&b.mv.san()))
            .then_with(|| a.leads_to.cmp(&b.leads_to))
    });
    others.truncate(alternatives);
    LeftBy {
        from,
        row,
        alternatives: others,
        form_games: figures.game_count(),
    }
}

/// The side to move at `ply` of a game whose start position has `first` to move.
#[must_use]
pub fn side_to_move(first: Color, ply: u32) -> Color {
    if ply.is_multiple_of(2) { first } else { !first }
}
