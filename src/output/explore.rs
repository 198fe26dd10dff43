//! The JSON of the explorer's own answers (`pawndex serve`, `docs/serve.md`): a structure's
//! card and a replayed game. The rows it shares with a command (`similar`, `structures`) come
//! from that command's writer.

use serde_json::{Value, json};

use crate::model::explore::{Card, GameView};
use crate::model::features::{Kind, SIDE_FEATURES, SideFeatures};
use crate::model::similar::{pawn_board, square_names};
use crate::model::structure::{Catalogue, Code};
use crate::model::structure_report::Row;

/// A side's features: counts as numbers, sets of squares as lists of square names.
#[must_use]
pub fn features_json(f: &SideFeatures) -> Value {
    let mut map = serde_json::Map::new();
    for spec in &SIDE_FEATURES {
        let v = (spec.get)(f);
        let value = match spec.kind {
            Kind::Count { .. } => json!(v),
            Kind::Squares => json!(square_names(v)),
        };
        map.insert(spec.name.to_owned(), value);
    }
    Value::Object(map)
}

/// A named form: key, name, family, reversed, and with `words` the catalogue's texts.
#[must_use]
pub fn form_json(catalogue: &Catalogue, code: Code, words: bool) -> Value {
    let Some((d, reversed)) = catalogue.named(code) else {
        return Value::Null;
    };
    let mut v = json!({
        "key": d.key,
        "name": d.name,
        "family": d.family,
        "reversed": reversed,
    });
    if words {
        v["description"] = json!(d.description);
        v["about"] = json!(d.about);
        v["source"] = json!(d.source);
    }
    v
}

/// The card of `GET /api/structure`; `named_row` is the named form's row of the
/// `structures` report, when it has one.
#[must_use]
pub fn card_json(card: &Card, named_row: Option<&Row>) -> Value {
    let catalogue = Catalogue::active();
    let exact = card.exact.as_ref();
    json!({
        "board": pawn_board(card.pawns),
        "white_pawns": square_names(card.pawns.white),
        "black_pawns": square_names(card.pawns.black),
        "named": form_json(catalogue, card.code, true),
        "reversed_form": form_json(catalogue, card.reversed_code, true),
        "nearest": card.nearest.iter().map(|n| json!({
            "key": n.key,
            "name": n.name,
            "reversed": n.reversed,
            "failing": n.failing,
        })).collect::<Vec<_>>(),
        "features": {
            "white": features_json(&card.features[0]),
            "black": features_json(&card.features[1]),
        },
        "exact": {
            "positions": exact.map_or(0, |s| s.positions),
            "games": exact.map_or(0, |s| s.games),
            "games_with_result": exact.map_or(0, |s| s.scored),
            "white_score": crate::output::table::score_json(exact.and_then(|s| s.white_score())),
            // A game holds exactly these pawns over one stretch of plies (pawn moves cannot be
            // undone), so a stay is a game.
            "avg_stay": crate::output::table::number_json(
                exact.filter(|s| s.games > 0).map(|s| s.positions as f64 / s.games as f64),
                2,
            ),
            "eco": crate::output::structures::eco_json(&card.exact_eco),
        },
        "named_counts": named_row.map_or(Value::Null, |r| {
            crate::output::structures::to_json(std::slice::from_ref(r))[0].take()
        }),
    })
}

/// A replayed game: tags, moves, and per ply its FEN, named form and features.
#[must_use]
pub fn game_json(view: &GameView) -> Value {
    let g = &view.game;
    let mut tags = serde_json::Map::new();
    let h = &g.header;
    for (name, value) in [
        ("Event", &h.event),
        ("Site", &h.site),
        ("Date", &h.date),
        ("Round", &h.round),
        ("White", &h.white),
        ("Black", &h.black),
        ("Result", &h.result),
        ("ECO", &h.eco),
    ] {
        if let Some(v) = value {
            tags.insert(name.to_owned(), json!(v));
        }
    }
    for (name, value) in [("WhiteElo", h.white_elo), ("BlackElo", h.black_elo)] {
        if let Some(v) = value {
            tags.insert(name.to_owned(), json!(v));
        }
    }
    let mut v = replay_json(view);
    v["id"] = json!(g.id);
    v["tags"] = Value::Object(tags);
    v
}

/// A replayed game without its tags nor id (the game page's, and "Your game"'s, whose tags are
/// the annotation's): the start, the moves, and per ply its FEN, named form and features.
#[must_use]
pub fn replay_json(view: &GameView) -> Value {
    let catalogue = Catalogue::active();
    let plies: Vec<Value> = view
        .plies
        .iter()
        .map(|p| {
            json!({
                "ply": p.ply,
                "san": p.san,
                "fen": p.fen,
                "board": pawn_board(p.pawns),
                "structure": form_json(catalogue, p.code, false),
                "white": features_json(&p.features[0]),
                "black": features_json(&p.features[1]),
            })
        })
        .collect();
    json!({
        "start": view.plies.first().map(|p| p.fen.clone()),
        "chess960": view.game.chess960,
        "moves": view.plies.iter().filter_map(|p| p.san.clone()).collect::<Vec<_>>(),
        "plies": plies,
    })
}

/// The moves that leave a form (its row of the `structures` report), `limit` from `after`,
/// each as `structures --format json` writes a leaving move.
#[must_use]
pub fn breaks_json(row: &Row, after: usize, limit: usize) -> Value {
    let all =
        crate::output::structures::to_json(std::slice::from_ref(row))[0]["leaving_moves"].take();
    let all = all.as_array().cloned().unwrap_or_default();
    let end = after.saturating_add(limit).min(all.len());
    let rows: Vec<Value> = all.get(after.min(end)..end).unwrap_or_default().to_vec();
    json!({
        "structure": {
            "key": row.form.key,
            "name": row.form.name,
            "reversed": row.form.reversed,
            "positions": row.positions,
            "games": row.games,
        },
        "total": all.len(),
        "rows": rows,
        "next": (end < all.len()).then_some(end),
    })
}

/// The moves that leave an exact structure, `limit` from `after`: each as a leaving move of
/// `structures --format json`, with the pawns it leads to and their named form.
#[must_use]
pub fn exact_breaks_json(
    pawns: crate::model::similar::Pawns,
    rows: &[crate::model::explore::Break],
    after: usize,
    limit: usize,
) -> Value {
    let catalogue = Catalogue::active();
    let end = after.saturating_add(limit).min(rows.len());
    let page: Vec<Value> = rows
        .get(after.min(end)..end)
        .unwrap_or_default()
        .iter()
        .map(|b| {
            json!({
                "move": b.san,
                "side": b.side.name(),
                "count": b.count,
                "games_with_result": b.results.games(),
                "white_score": crate::output::table::score_json(b.results.white_score()),
                "board_after": pawn_board(b.next),
                "structure_after": form_json(catalogue, b.next_code, false),
            })
        })
        .collect();
    json!({
        "structure": {
            "board": pawn_board(pawns),
            "leaving_games": rows.iter().map(|b| b.count).sum::<u64>(),
        },
        "total": rows.len(),
        "rows": page,
        "next": (end < rows.len()).then_some(end),
    })
}
