//! What `pawndex annotate` writes of a game's notes: the comments put into its PGN text (each
//! starting with `pawndex:`), and the JSON object of `--format json` (also the server's
//! "Your game" answer). docs/annotate.md is the contract.

use serde_json::{Value, json};
use shakmaty::Color;

use crate::model::annotate::{
    Change, Failure, Form, FormFigures, LeftBy, MARK, Notes, PawnsFigures, Settled, Stretch,
};
use crate::model::numbers::thousands;
use crate::model::plans::MoveRow;
use crate::model::similar::{Pawns, pawn_board};
use crate::output::plans::side_key;
use crate::output::table::number_json;

/// The board part of a FEN with only these pawns (as `similar` writes a structure).
fn pawns_board(white: u64, black: u64) -> String {
    pawn_board(Pawns { white, black })
}

fn side_name(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}

fn form_json(form: Option<&Form>) -> Value {
    form.map_or(
        Value::Null,
        |f| json!({"key": f.key, "reversed": f.reversed, "name": f.shown()}),
    )
}

/// A leads-to form as `plans` writes it (`panov~`), or null.
fn leads_to_json(row: &MoveRow) -> Value {
    row.leads_to_key().map_or(Value::Null, Value::from)
}

/// A move row: its SAN, side, games, and the mover's score (null below `min_games`).
fn row_json(row: &MoveRow, min_games: u64, exit: bool) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("san".into(), row.mv.san().into());
    m.insert("side".into(), side_key(row.mv.side()).into());
    m.insert("games".into(), row.games().into());
    let score = (row.games() >= min_games).then(|| row.score()).flatten();
    m.insert("score".into(), number_json(score, 1));
    if exit {
        m.insert("leads_to".into(), leads_to_json(row));
    }
    Value::Object(m)
}

/// The figures of a form, as quoted (lists empty below `min_games` games).
fn reference_json(f: &FormFigures, to_move: Color, min_games: u64) -> Value {
    let enough = f.game_count() >= min_games;
    let quoted = |v: Option<f64>| {
        if enough {
            number_json(v, 1)
        } else {
            Value::Null
        }
    };
    let per_side = |list: &dyn Fn(Color) -> Vec<Value>| json!({"white": list(Color::White), "black": list(Color::Black)});
    let moves = per_side(&|c| {
        if !enough {
            return Vec::new();
        }
        f.moves[usize::from(c == Color::Black)]
            .iter()
            .map(|r| row_json(r, min_games, false))
            .collect()
    });
    let breaks = per_side(&|c| {
        if !enough {
            return Vec::new();
        }
        f.breaks(c)
            .take(BREAKS)
            .map(|r| row_json(r, min_games, true))
            .collect()
    });
    let model_games: Vec<Value> = if enough {
        f.model_games
            .iter()
            .map(|m| {
                json!({
                    "id": m.visit.id,
                    "white": m.header.white,
                    "black": m.header.black,
                    "result": m.header.result,
                    "date": m.header.date,
                    "event": m.header.event,
                    "white_elo": m.header.white_elo,
                    "black_elo": m.header.black_elo,
                    "entered_ply": m.visit.entered,
                })
            })
            .collect()
    } else {
        Vec::new()
    };
    json!({
        "games": f.game_count(),
        "positions": f.positions,
        "white_score": quoted(f.score(Color::White)),
        "black_score": quoted(f.score(Color::Black)),
        "to_move_score": quoted(f.score(to_move)),
        "avg_stay": if enough { number_json(f.average_stay(), 2) } else { Value::Null },
        "moves": moves,
        "breaks": breaks,
        "model_games": model_games,
    })
}

/// Pawn breaks quoted per side.
pub const BREAKS: usize = 2;

fn left_json(l: &LeftBy, min_games: u64) -> Value {
    let games = l.row.games();
    json!({
        "from": form_json(Some(&l.from)),
        "san": l.row.mv.san(),
        "side": side_key(l.row.mv.side()),
        "leads_to": leads_to_json(&l.row),
        "games": games,
        "form_games": l.form_games,
        "score": number_json((games >= min_games).then(|| l.row.score()).flatten(), 1),
        "alternatives": l.alternatives.iter().map(|r| row_json(r, min_games, true)).collect::<Vec<_>>(),
    })
}

fn change_json(c: &Change, min_games: u64) -> Value {
    json!({
        "ply": c.ply,
        "san": c.san,
        "to_move": side_key(c.to_move),
        "structure": form_json(c.structure.as_ref()),
        "reference": c.reference.as_ref().map_or(Value::Null, |f| reference_json(f, c.to_move, min_games)),
        "left_by": c.left_by.as_ref().map_or(Value::Null, |l| left_json(l, min_games)),
    })
}

fn pawns_json(p: &PawnsFigures, min_games: u64) -> Value {
    json!({
        "structure": pawns_board(p.white, p.black),
        "distance": p.distance,
        "differs": p.differs,
        "name": p.form.as_ref().map(Form::shown),
        "games": p.games,
        "positions": p.positions,
        "white_score": number_json((p.games >= min_games).then_some(p.white_score).flatten(), 1),
    })
}

fn settled_json(s: &Settled, min_games: u64) -> Value {
    json!({
        "ply": s.ply,
        "last_ply": s.last_ply,
        "pawns": pawns_board(s.white, s.black),
        "reference": {
            "games": s.exact.games,
            "positions": s.exact.positions,
            "white_score": number_json((s.exact.games >= min_games).then_some(s.exact.white_score).flatten(), 1),
        },
        "nearest": s.nearest.as_ref().map_or(Value::Null, |n| pawns_json(n, min_games)),
    })
}

fn stretch_json(s: &Stretch) -> Value {
    json!({"structure": form_json(s.structure.as_ref()), "first_ply": s.first_ply, "last_ply": s.last_ply})
}

/// The JSON object of one game (one line of `--format json`): `number` its place in the
/// input (1 = first), `offset` its first byte there, `tags` as read, and its notes or why it
/// could not be annotated.
#[must_use]
pub fn game_json(
    number: u64,
    offset: u64,
    tags: &[(String, String)],
    notes: Result<&Notes, &Failure>,
) -> Value {
    let mut t = serde_json::Map::new();
    for (k, v) in tags {
        t.insert(k.clone(), Value::from(v.as_str()));
    }
    match notes {
        Ok(n) => json!({
            "game": number,
            "offset": offset,
            "tags": t,
            "plies": n.plies,
            "error": Value::Null,
            "min_games": n.min_games,
            "summary": n.stretches.iter().map(stretch_json).collect::<Vec<_>>(),
            "changes": n.changes.iter().map(|c| change_json(c, n.min_games)).collect::<Vec<_>>(),
            "exact": n.settled.iter().map(|s| settled_json(s, n.min_games)).collect::<Vec<_>>(),
        }),
        Err(f) => json!({
            "game": number,
            "offset": offset,
            "tags": t,
            "plies": Value::Null,
            "error": {"ply": f.ply, "reason": f.reason},
            "summary": [],
            "changes": [],
            "exact": [],
        }),
    }
}

/// `n games` with the count grouped, `1 game`.
fn games(n: u64) -> String {
    if n == 1 {
        "1 game".to_string()
    } else {
        format!("{} games", thousands(n))
    }
}

/// A percentage as shown (`57.5%`).
fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "no result".to_string(), |v| format!("{v:.1}%"))
}

/// A move as plans writes it (`…c5` for Black) with its games and the mover's score.
fn row_words(r: &MoveRow, min_games: u64) -> String {
    if r.games() >= min_games {
        format!(
            "{} ({}, {})",
            r.mv.written(),
            games(r.games()),
            pct(r.score())
        )
    } else {
        format!("{} ({})", r.mv.written(), games(r.games()))
    }
}

/// The comments of a game's notes, as (ply, text), in the order they go at each ply: the
/// summary at ply 0 (when `summary`), then per change how the game left a structure and what the new one is,
/// and the unnamed stretches' pawns.
#[must_use]
pub fn comments(
    notes: &Notes,
    label: &str,
    reference_games: u64,
    summary: bool,
) -> Vec<(u32, String)> {
    let min = notes.min_games;
    let mut out = Vec::new();
    if summary {
        out.push((0, summary_words(notes, label, reference_games)));
    }
    for c in &notes.changes {
        if let Some(l) = &c.left_by {
            out.push((c.ply, left_words(c, l, min)));
        }
        if let (Some(form), Some(f)) = (&c.structure, &c.reference) {
            out.push((c.ply, form_words(c, form, f, min)));
        }
    }
    for s in &notes.settled {
        out.push((s.ply, settled_words(s, min)));
    }
    out.sort_by_key(|(ply, _)| *ply);
    // PGN is read by tools that know only ASCII or Latin-1: Black's moves as `...c5`.
    for (_, c) in &mut out {
        *c = c.replace('…', "...");
    }
    out
}

fn summary_words(notes: &Notes, label: &str, reference_games: u64) -> String {
    let named: Vec<String> = notes
        .stretches
        .iter()
        .filter_map(|s| {
            let f = s.structure.as_ref()?;
            Some(format!("{} {}-{}", f.shown(), s.first_ply, s.last_ply))
        })
        .collect();
    let structures = if named.is_empty() {
        "no named structure".to_string()
    } else {
        format!("structures (plies): {}", named.join(", "))
    };
    format!(
        "{MARK} {structures}. Reference: {label}, {}; scores are percent, White's or the \
         mover's as said",
        games(reference_games)
    )
}

fn form_words(c: &Change, form: &Form, f: &FormFigures, min: u64) -> String {
    let name = form.shown();
    let count = f.game_count();
    if count == 0 {
        return format!("{MARK} {name} from here; no reference game reaches it");
    }
    if count < min {
        return format!(
            "{MARK} {name} from here; only {} of the reference {} it (fewer than {min}: no \
             figures quoted)",
            games(count),
            if count == 1 { "reaches" } else { "reach" }
        );
    }
    let to_move = c.to_move;
    let mut s = format!(
        "{MARK} {name} from here. Reference: {}, {} positions; White scores {}, {} (to \
         move) {}; average stay {:.1} plies.",
        games(count),
        thousands(f.positions),
        pct(f.score(Color::White)),
        side_name(to_move),
        pct(f.score(to_move)),
        f.average_stay().unwrap_or(0.0)
    );
    for side in [Color::White, Color::Black] {
        let moves: Vec<String> = f.moves[usize::from(side == Color::Black)]
            .iter()
            .map(|r| row_words(r, min))
            .collect();
        if !moves.is_empty() {
            s.push_str(&format!(
                " {}'s most played moves (its score): {}.",
                side_name(side),
                moves.join(", ")
            ));
        }
        let listed: Vec<&MoveRow> = f.breaks(side).take(BREAKS).collect();
        // A move listed twice (to two structures) is told apart by where it leads.
        let breaks: Vec<String> = listed
            .iter()
            .map(|r| {
                let twice = listed.iter().filter(|o| o.mv == r.mv).count() > 1;
                let to = if twice {
                    format!(
                        " to {}",
                        r.leads_to_name().unwrap_or_else(|| "no name".into())
                    )
                } else {
                    String::new()
                };
                format!("{}{to}", row_words(r, min))
            })
            .collect();
        if !breaks.is_empty() {
            s.push_str(&format!(
                " {}'s breaks: {}.",
                side_name(side),
                breaks.join(", ")
            ));
        }
    }
    if !f.model_games.is_empty() {
        let games: Vec<String> = f
            .model_games
            .iter()
            .map(|m| {
                let h = &m.header;
                let year = h
                    .date
                    .as_deref()
                    .and_then(|d| d.get(..4))
                    .filter(|y| !y.contains('?'));
                format!(
                    "{} - {} {}{} (#{})",
                    h.white.as_deref().unwrap_or("?"),
                    h.black.as_deref().unwrap_or("?"),
                    h.result.as_deref().unwrap_or("*"),
                    year.map(|y| format!(" {y}")).unwrap_or_default(),
                    m.visit.id
                )
            })
            .collect();
        s.push_str(&format!(" Model games: {}.", games.join("; ")));
    }
    s
}

fn left_words(c: &Change, l: &LeftBy, min: u64) -> String {
    let mover = l.row.mv.side();
    let played = c.san.as_deref().unwrap_or("?");
    let played = if mover == Color::Black {
        format!("…{played}")
    } else {
        played.to_string()
    };
    let to = match &c.structure {
        Some(f) => format!("the {}", f.shown()),
        None => "no named structure".to_string(),
    };
    let count = l.row.games();
    let mut s = format!("{MARK} {played} leaves the {} for {to}: ", l.from.shown());
    if count == 0 {
        s.push_str(&format!(
            "none of the reference's {} in it left it this way.",
            games(l.form_games)
        ));
    } else if count < min {
        s.push_str(&format!(
            "{} of the reference's {} in it left it this way (too few to quote a score).",
            thousands(count),
            games(l.form_games)
        ));
    } else {
        s.push_str(&format!(
            "{} of the reference's {} in it left it this way, {} scoring {} in them.",
            thousands(count),
            games(l.form_games),
            side_name(mover),
            pct(l.row.score())
        ));
    }
    if !l.alternatives.is_empty() {
        let alts: Vec<String> = l
            .alternatives
            .iter()
            .map(|r| {
                let to = r
                    .leads_to_name()
                    .map(|n| format!(" to {n}"))
                    .unwrap_or_default();
                format!("{}{to}", row_words(r, min))
            })
            .collect();
        s.push_str(&format!(
            " {}'s most played other exits: {}.",
            side_name(mover),
            alts.join(", ")
        ));
    }
    s
}

fn settled_words(st: &Settled, min: u64) -> String {
    let e = &st.exact;
    let mut s = format!(
        "{MARK} no named structure; these pawns (kept to ply {}): ",
        st.last_ply
    );
    if e.games >= min {
        s.push_str(&format!(
            "{} of the reference, {} positions, White scores {}.",
            games(e.games),
            thousands(e.positions),
            pct(e.white_score)
        ));
    } else if e.games == 0 {
        s.push_str("no reference game has them.");
    } else {
        s.push_str(&format!(
            "only {} of the reference {} them (fewer than {min}).",
            games(e.games),
            if e.games == 1 { "has" } else { "have" }
        ));
    }
    if let Some(n) = &st.nearest {
        let name = n
            .form
            .as_ref()
            .map(|f| format!(" ({})", f.shown()))
            .unwrap_or_default();
        s.push_str(&format!(
            " Nearest frequent structure: {}{name}, distance {} ({}): {}, White scores {}.",
            pawns_board(n.white, n.black),
            n.distance,
            n.differs,
            games(n.games),
            pct(n.white_score)
        ));
    }
    s
}
