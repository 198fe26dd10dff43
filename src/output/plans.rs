//! The answer of `pawndex plans` as JSON (also `GET /api/plans`), an aligned table and CSV.
//! Every score is the mover's (or the side's) score in percent with one decimal
//! (docs/conventions.md); `delta` is that score minus the side's score over all the
//! structure's games, in percentage points.

use std::io::Write;

use anyhow::Result;
use serde_json::{Value, json};
use shakmaty::Color;

use crate::model::plans::{MoveRow, ROLES, Report, role_name, side_points, side_score};
use crate::output::table::number_json;

/// Which sides to show.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Sides {
    Both,
    One(Color),
}

impl Sides {
    /// `white`, `black` or `both`.
    #[must_use]
    pub fn parse(text: &str) -> Option<Sides> {
        match text {
            "both" => Some(Sides::Both),
            "white" => Some(Sides::One(Color::White)),
            "black" => Some(Sides::One(Color::Black)),
            _ => None,
        }
    }

    fn list(self) -> Vec<Color> {
        match self {
            Sides::Both => vec![Color::White, Color::Black],
            Sides::One(c) => vec![c],
        }
    }

    fn shows(self, c: Color) -> bool {
        self == Sides::Both || self == Sides::One(c)
    }
}

/// A side as the JSON names it.
pub(crate) fn side_key(c: Color) -> &'static str {
    match c {
        Color::White => "white",
        Color::Black => "black",
    }
}

fn index(c: Color) -> usize {
    usize::from(c == Color::Black)
}

/// The side's score over the structure's games.
#[must_use]
pub fn baseline(report: &Report, side: Color) -> Option<f64> {
    side_score(&report.games, side)
}

/// A move's score minus its side's baseline, in percentage points (rounded as shown).
fn delta(report: &Report, row: &MoveRow) -> Option<f64> {
    // Rounded as shown (`number_json`, `format!("{:.1}")`: an exact tie to even), so the delta
    // is the difference of the two numbers a reader sees.
    let shown = |v: f64| format!("{v:.1}").parse::<f64>().unwrap_or(v);
    Some(shown(row.score()?) - shown(baseline(report, row.mv.side())?))
}

/// The fields every listed move has; the score under `score_key` (`score`, or `score_after`
/// for an exit).
fn row_json(report: &Report, r: &MoveRow, score_key: &str) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert("san".into(), r.mv.san().into());
    m.insert("side".into(), side_key(r.mv.side()).into());
    m.insert("piece".into(), r.mv.piece().into());
    m.insert("to".into(), r.mv.to().into());
    m.insert("games".into(), r.games().into());
    m.insert("median_move".into(), r.median_move.into());
    m.insert(score_key.into(), number_json(r.score(), 1));
    m.insert("delta".into(), number_json(delta(report, r), 1));
    m
}

fn move_json(report: &Report, r: &MoveRow) -> Value {
    Value::Object(row_json(report, r, "score"))
}

fn exit_json(report: &Report, r: &MoveRow) -> Value {
    let mut m = row_json(report, r, "score_after");
    m.insert("written".into(), r.mv.written().into());
    m.insert("leads_to".into(), r.leads_to_key().into());
    m.insert("leads_to_name".into(), r.leads_to_name().into());
    Value::Object(m)
}

/// Share in percent with one decimal (0 for no position).
fn share(n: u64, of: u64) -> Value {
    number_json((of > 0).then(|| 100.0 * n as f64 / of as f64), 1)
}

/// The squares of one side: the positions counted, and per piece kind 64 shares (a1 … h8)
/// for all games, the games the side won and those it lost.
fn squares_json(report: &Report, side: Color) -> Value {
    let s = index(side);
    let (won, lost) = match side {
        Color::White => (0, 2),
        Color::Black => (2, 0),
    };
    let positions = |o: Option<usize>| -> u64 {
        match o {
            Some(o) => report.positions[o],
            None => report.positions.iter().sum(),
        }
    };
    let mut out = serde_json::Map::new();
    out.insert(
        "positions".into(),
        json!({"all": positions(None), "won": positions(Some(won)), "lost": positions(Some(lost))}),
    );
    for (r, role) in ROLES.into_iter().enumerate() {
        let counts = |o: Option<usize>| -> Vec<u64> {
            (0..64)
                .map(|sq| match o {
                    Some(o) => report.squares[o][s][r][sq],
                    None => (0..4).map(|o| report.squares[o][s][r][sq]).sum(),
                })
                .collect()
        };
        let shares = |o: Option<usize>| -> Vec<Value> {
            let of = positions(o);
            counts(o).into_iter().map(|n| share(n, of)).collect()
        };
        out.insert(
            role_name(role).into(),
            json!({"all": shares(None), "won": shares(Some(won)), "lost": shares(Some(lost))}),
        );
    }
    Value::Object(out)
}

/// The whole answer as one JSON document.
#[must_use]
pub fn to_json(report: &Report, sides: Sides) -> Value {
    let per_side = |f: &dyn Fn(Color) -> Value| -> Value {
        let mut m = serde_json::Map::new();
        for c in sides.list() {
            m.insert(side_key(c).into(), f(c));
        }
        Value::Object(m)
    };
    let moves = |lists: &[Vec<MoveRow>; 2]| {
        per_side(&|c| {
            Value::Array(
                lists[index(c)]
                    .iter()
                    .map(|r| move_json(report, r))
                    .collect(),
            )
        })
    };
    let exits = |rows: &[MoveRow]| -> Value {
        rows.iter()
            .filter(|r| sides.shows(r.mv.side()))
            .map(|r| exit_json(report, r))
            .collect()
    };
    json!({
        "structure": report.target,
        "games": report.game_count(),
        "plies": report.plies(),
        "results": {
            "white_wins": report.games[0],
            "draws": report.games[1],
            "black_wins": report.games[2],
            "unknown": report.games[3],
        },
        "baseline": per_side(&|c| {
            let (_, scored) = side_points(&report.games, c);
            json!({"score": number_json(baseline(report, c), 1), "games": scored})
        }),
        "moves": moves(&report.moves),
        "replies": moves(&report.replies),
        "breaks": exits(&report.breaks),
        "other_exits": exits(&report.other_exits),
        "squares": per_side(&|c| squares_json(report, c)),
        "decades": report.decades.iter().map(|d| json!({
            "decade": d.decade.map(|d| format!("{d}s")),
            "games": d.games,
            "structure_games": d.in_structure,
            "share": share(d.in_structure, d.games),
        })).collect::<Vec<_>>(),
        "typical_moves": report.typical_moves,
        "model_games": report.model_games.iter().map(|m| json!({
            "id": m.visit.id,
            "white": m.header.white,
            "black": m.header.black,
            "white_elo": m.header.white_elo,
            "black_elo": m.header.black_elo,
            "result": m.header.result,
            "date": m.header.date,
            "event": m.header.event,
            "eco": m.header.eco,
            "entered_ply": m.visit.entered,
            "stay": m.visit.stay,
            "typicality": m.typicality,
        })).collect::<Vec<_>>(),
    })
}

/// Writes the JSON document and a newline.
pub fn write_json(out: &mut dyn Write, report: &Report, sides: Sides) -> Result<()> {
    serde_json::to_writer(&mut *out, &to_json(report, sides))?;
    writeln!(out)?;
    Ok(())
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(String::new, |v| format!("{v:.1}"))
}

fn signed(v: Option<f64>) -> String {
    v.map_or_else(String::new, |v| format!("{v:+.1}"))
}

/// One CSV of every list: `list` (moves, replies, breaks, other_exits), the side, the move
/// and its figures; squares and model games are in the JSON only.
pub fn write_csv(out: &mut dyn Write, report: &Report, sides: Sides) -> Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "list",
        "side",
        "san",
        "piece",
        "to",
        "games",
        "median_move",
        "score",
        "delta",
        "leads_to",
    ])?;
    let mut row = |list: &str, r: &MoveRow| -> Result<()> {
        let leads = r.leads_to_key().unwrap_or_default();
        w.write_record([
            list,
            side_key(r.mv.side()),
            &r.mv.san(),
            r.mv.piece(),
            &r.mv.to(),
            &r.games().to_string(),
            &r.median_move.to_string(),
            &opt(r.score()),
            &opt(delta(report, r)),
            &leads,
        ])?;
        Ok(())
    };
    for c in sides.list() {
        for r in &report.moves[index(c)] {
            row("moves", r)?;
        }
    }
    for c in sides.list() {
        for r in &report.replies[index(c)] {
            row("replies", r)?;
        }
    }
    for r in report.breaks.iter().filter(|r| sides.shows(r.mv.side())) {
        row("breaks", r)?;
    }
    for r in report
        .other_exits
        .iter()
        .filter(|r| sides.shows(r.mv.side()))
    {
        row("other_exits", r)?;
    }
    w.flush()?;
    Ok(())
}

/// The table: a summary, each side's plan moves, the breaks, the other exits, the model games.
pub fn write_table(out: &mut dyn Write, report: &Report, sides: Sides) -> Result<()> {
    use crate::model::numbers::thousands;
    writeln!(
        out,
        "{}: {} games, {} positions (plies) in it",
        report.target,
        thousands(report.game_count()),
        thousands(report.plies())
    )?;
    for c in sides.list() {
        let (_, scored) = side_points(&report.games, c);
        writeln!(
            out,
            "{}'s score in these games: {}% ({} with a result)",
            if c == Color::White { "White" } else { "Black" },
            opt(baseline(report, c)),
            thousands(scored)
        )?;
    }
    for c in sides.list() {
        let who = if c == Color::White { "White" } else { "Black" };
        writeln!(
            out,
            "\n{who}'s moves in the structure (replies to a check and recaptures apart; score = \
             {who}'s score in the games with the move; delta = against {who}'s score above)"
        )?;
        let rows: Vec<&MoveRow> = report.moves[index(c)].iter().collect();
        move_table(out, report, &rows, false)?;
    }
    writeln!(
        out,
        "\nPawn breaks: pawn moves that leave the structure (score = the mover's score after it)"
    )?;
    exit_table(out, report, &report.breaks, sides)?;
    writeln!(out, "\nOther exits: piece captures of a pawn")?;
    exit_table(out, report, &report.other_exits, sides)?;
    if !report.model_games.is_empty() {
        writeln!(
            out,
            "\nModel games (most typical first: the winner's moves among its side's {} most played; \
             then rating, stay)",
            report.typical_moves
        )?;
        writeln!(
            out,
            "{:>8}  {:<52}  {:<7}  {:<10}  {:>4}  {:>4}",
            "game", "players", "result", "date", "stay", "typ."
        )?;
        for m in &report.model_games {
            let name = |n: &Option<String>, e: Option<i64>| {
                let n = n.as_deref().unwrap_or("?");
                e.map_or_else(|| n.to_string(), |e| format!("{n} {e}"))
            };
            let players = format!(
                "{} - {}",
                name(&m.header.white, m.header.white_elo),
                name(&m.header.black, m.header.black_elo)
            );
            writeln!(
                out,
                "{:>8}  {:<52}  {:<7}  {:<10}  {:>4}  {:>4}",
                m.visit.id,
                crate::output::structures::fit(&players, 52),
                m.header.result.as_deref().unwrap_or("*"),
                m.header.date.as_deref().unwrap_or(""),
                m.visit.stay,
                m.typicality
            )?;
        }
    }
    Ok(())
}

/// A list of moves as table lines; `exits` adds the form each leads to.
fn move_table(out: &mut dyn Write, report: &Report, rows: &[&MoveRow], exits: bool) -> Result<()> {
    if rows.is_empty() {
        writeln!(out, "  (none)")?;
        return Ok(());
    }
    let head = format!(
        "  {:<9} {:>7} {:>7} {:>6} {:>6}",
        "move", "games", "median", "score", "delta"
    );
    writeln!(out, "{head}{}", if exits { "  leads to" } else { "" })?;
    for r in rows {
        let line = format!(
            "  {:<9} {:>7} {:>7} {:>6} {:>6}",
            r.mv.written(),
            r.games(),
            r.median_move,
            opt(r.score()),
            signed(delta(report, r))
        );
        if exits {
            let leads = r.leads_to_name().unwrap_or_else(|| "(no name)".to_string());
            writeln!(out, "{line}  {leads}")?;
        } else {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

/// The exits of the shown sides as table lines.
fn exit_table(out: &mut dyn Write, report: &Report, rows: &[MoveRow], sides: Sides) -> Result<()> {
    let rows: Vec<&MoveRow> = rows.iter().filter(|r| sides.shows(r.mv.side())).collect();
    move_table(out, report, &rows, true)
}
