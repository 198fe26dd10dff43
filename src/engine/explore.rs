//! The questions of the explorer (`pawndex serve`) that no single command answers alone, as
//! typed functions over the same parts the commands use: what a structure is called and how it
//! does (the classifier, the nearest named forms, the `similar` ranking at distance 0, the
//! `structures` report), and a game replayed ply by ply with its named structure and features.

use std::collections::HashMap;

use anyhow::Result;
use shakmaty::fen::Fen;
use shakmaty::{EnPassantMode, Position};

pub use crate::model::explore::{Break, Card, GameView, Ply};
use crate::model::features::SideFeatures;
use crate::model::search::Side;
use crate::model::similar::{Pawns, Similar};
use crate::model::stored::StoredGame;
use crate::model::structure::Catalogue;
use crate::model::structure_near::nearest;
use crate::model::structure_report::{EcoShare, Row};
use crate::store::read::Snapshot;
use crate::store::read::structure_report::CommonForm;

/// How many near forms a card lists when no form matches.
pub const NEAREST: usize = 3;

/// The card of a structure without its counts: its names, nearest forms and features (no
/// database work).
#[must_use]
pub fn classify(pawns: Pawns) -> Card {
    let catalogue = Catalogue::active();
    let code = catalogue.classify(pawns.white, pawns.black);
    let turned = pawns.colour_reversed();
    Card {
        pawns,
        code,
        reversed_code: catalogue.classify(turned.white, turned.black),
        nearest: if code == 0 {
            nearest(catalogue, pawns.white, pawns.black, NEAREST)
        } else {
            Vec::new()
        },
        features: [
            SideFeatures::white(pawns.white),
            SideFeatures::black(pawns.black),
        ],
        exact: None,
        exact_eco: Vec::new(),
    }
}

/// How many openings a card lists for the exact pawns (as `structures --top 5`).
pub const TOP_OPENINGS: usize = 5;

/// The card of a structure: its names, nearest forms, features, exact counts and the most
/// common openings of the games with exactly these pawns.
pub fn card(conn: &Snapshot, pawns: Pawns) -> Result<Card> {
    let (exact, ecos) = exact_games(conn, pawns)?;
    let exact_eco = match &exact {
        Some(found) => crate::engine::structures::top(
            ecos.into_iter()
                .map(|(eco, n)| EcoShare {
                    eco,
                    games: n,
                    share: 100.0 * n as f64 / found.games.max(1) as f64,
                })
                .collect(),
            TOP_OPENINGS,
            |e| e.games,
            |e| e.eco.clone(),
        ),
        None => Vec::new(),
    };
    Ok(Card {
        exact,
        exact_eco,
        ..classify(pawns)
    })
}

/// Exactly these pawns as `similar --max-distance 0` lists them (None: no position has them),
/// and how many of the games that reach them have each ECO code: the runs of the pair of pawn
/// sets, through the game lists of both sets.
fn exact_games(conn: &Snapshot, pawns: Pawns) -> Result<(Option<Similar>, HashMap<String, u64>)> {
    use crate::store::read::similar::{pair_runs, set_id};
    let (Some(w), Some(b)) = (set_id(conn, 0, pawns.white)?, set_id(conn, 1, pawns.black)?) else {
        return Ok((None, HashMap::new()));
    };
    let runs = pair_runs(conn, &[(w, b)])?;
    if runs.is_empty() {
        return Ok((None, HashMap::new()));
    }
    let mut found = Similar {
        pawns,
        sets: (w, b),
        distance: 0,
        differs: String::new(),
        positions: 0,
        games: 0,
        points: 0,
        scored: 0,
    };
    let (mut ecos, mut last_game) = (HashMap::new(), None);
    for r in &runs {
        found.positions += u64::try_from(r.last_ply - r.first_ply + 1).unwrap_or(0);
        if last_game == Some(r.game) {
            continue;
        }
        last_game = Some(r.game);
        found.games += 1;
        if let Some(eco) = r.eco.as_ref().filter(|e| !e.is_empty()) {
            *ecos.entry(eco.clone()).or_default() += 1;
        }
        if let Some(points) = crate::engine::similar::points(r.result.as_deref()) {
            found.points += points;
            found.scored += 1;
        }
    }
    Ok((Some(found), ecos))
}

/// The row of the `structures` report (all forms, lists of `top`) for a form, by key.
pub fn form_row<'a>(rows: &'a [Row], key: &str, reversed: bool) -> Option<&'a Row> {
    rows.iter()
        .find(|r| r.form.key == key && r.form.reversed == reversed)
}

/// The `structures` report of every form of the database's catalogue, lists `top` long (what
/// `pawndex structures --top N --format json` prints, before `--min-games`).
pub fn structures_report(conn: &Snapshot, top: usize) -> Result<Vec<Row>> {
    let names = crate::store::read::structure_report::names(conn)?;
    Ok(crate::engine::structures::report(conn, &names, |_| true, top)?.rows)
}

/// Per named form of the database, its most common exact form (the pawns reached in the most
/// games among its positions): the runs with a name read in `threads` slices of games at once,
/// each on a connection forked from `conn` (the games up to `conn`'s last one), their tallies
/// added up.
pub fn common_forms(conn: &Snapshot, threads: usize) -> Result<Vec<CommonForm>> {
    use crate::store::read::structure_report as read;
    let last = crate::store::schema::games::last_game_id(conn)?;
    let slices = crate::engine::parallel::split(1, last, threads);
    let forks = conn.forks();
    let tallies = crate::engine::parallel::fan_out(slices, |slice| {
        let fork = forks.open()?;
        read::form_tally(&fork, slice)
    })?;
    read::common_forms_of(conn, &read::merge_tallies(tallies))
}

/// A game by id, replayed: `None` when no game has this id.
pub fn game(conn: &Snapshot, id: i64) -> Result<Option<GameView>> {
    let Some(game) = crate::store::schema::games::load_game(conn, id)? else {
        return Ok(None);
    };
    replayed(game).map(Some)
}

/// A game replayed ply by ply (a stored one, or one just read: `pawndex serve`'s "Your game"):
/// per ply its move's SAN, the FEN, the pawns, their named form and features.
pub fn replayed(game: StoredGame) -> Result<GameView> {
    let catalogue = Catalogue::active();
    let mut pos = game.start()?;
    let mut plies = Vec::with_capacity(game.plies() as usize + 1);
    let mut san = None;
    for ply in 0..=game.plies() {
        if ply > 0 {
            let (m, s) = game.san_at(&pos, ply)?;
            pos.play_unchecked(m);
            san = Some(s.to_string());
        }
        let board = pos.board();
        let pawns = Pawns {
            white: (board.pawns() & board.white()).0,
            black: (board.pawns() & board.black()).0,
        };
        plies.push(Ply {
            ply,
            san: san.take(),
            fen: Fen::from_position(&pos, EnPassantMode::Legal).to_string(),
            pawns,
            code: catalogue.classify(pawns.white, pawns.black),
            features: [
                SideFeatures::white(pawns.white),
                SideFeatures::black(pawns.black),
            ],
        });
    }
    Ok(GameView { game, plies })
}

/// The error of an interrupted statement, for work stopped between statements.
fn interrupted() -> anyhow::Error {
    crate::store::read::interrupted("interrupted")
}

/// The moves by which games leave exactly these pawns (each game's last ply with them, then
/// its next move), most played first; `stop` is asked between games (a time limit).
pub fn breaks(conn: &Snapshot, pawns: Pawns, stop: &dyn Fn() -> bool) -> Result<Vec<Break>> {
    use crate::store::read::similar::{pair_runs, set_id};
    let (Some(w), Some(b)) = (set_id(conn, 0, pawns.white)?, set_id(conn, 1, pawns.black)?) else {
        return Ok(Vec::new());
    };
    // Pawn moves cannot be undone: in a game the pawns stay together in one stretch of plies.
    let mut last = std::collections::BTreeMap::new();
    for r in pair_runs(conn, &[(w, b)])? {
        let e = last.entry(r.game).or_insert(r.last_ply);
        *e = (*e).max(r.last_ply);
    }
    let catalogue = Catalogue::active();
    let mut tally: std::collections::HashMap<(Side, String, u64, u64), Break> =
        std::collections::HashMap::new();
    for (game, last_ply) in last {
        if stop() {
            return Err(interrupted());
        }
        let Some(g) = crate::store::schema::games::load_game(conn, game)? else {
            continue;
        };
        let Ok(last_ply) = u32::try_from(last_ply) else {
            continue;
        };
        if last_ply >= g.plies() {
            continue; // the game ends in the structure
        }
        let mut pos = g.start()?;
        for ply in 1..=last_ply {
            pos.play_unchecked(g.move_at(&pos, ply)?);
        }
        let (m, san) = g.san_at(&pos, last_ply + 1)?;
        let side = match pos.turn() {
            shakmaty::Color::White => Side::White,
            shakmaty::Color::Black => Side::Black,
        };
        pos.play_unchecked(m);
        let board = pos.board();
        let next = Pawns {
            white: (board.pawns() & board.white()).0,
            black: (board.pawns() & board.black()).0,
        };
        let san = san.to_string();
        let row = tally
            .entry((side, san.clone(), next.white, next.black))
            .or_insert_with(|| Break {
                side,
                san,
                next,
                next_code: catalogue.classify(next.white, next.black),
                count: 0,
                results: Default::default(),
            });
        row.count += 1;
        row.results.add(g.header.result.as_deref());
    }
    let mut rows: Vec<Break> = tally.into_values().collect();
    rows.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| a.san.cmp(&b.san))
            .then_with(|| a.side.code().cmp(&b.side.code()))
    });
    Ok(rows)
}
