//! A player's profile (`pawndex player`, `GET /api/player`) as JSON (docs/players.md: the
//! document), an aligned table and CSV. Scores are the player's, percent with one decimal.

use std::io::Write;

use anyhow::Result;
use serde_json::{Map, Value, json};
use shakmaty::Color;

use crate::model::profile::{Profile, Results, Row};
use crate::output::table::number_json;

fn colour_word(c: Color) -> &'static str {
    match c {
        Color::White => "white",
        Color::Black => "black",
    }
}

fn score_json(r: &Results) -> Value {
    number_json(r.score(), 1)
}

fn results_json(r: &Results) -> Value {
    json!({"games": r.games, "wins": r.wins, "draws": r.draws, "losses": r.losses,
           "score": score_json(r)})
}

fn row_json(r: &Row) -> Value {
    let mut m = Map::new();
    m.insert("kind".into(), r.kind.word().into());
    m.insert("key".into(), r.key.clone().into());
    m.insert("name".into(), r.name.clone().into());
    m.insert("reversed".into(), r.reversed.into());
    m.insert("colour".into(), colour_word(r.colour).into());
    m.insert("games".into(), r.results.games.into());
    m.insert("plies".into(), r.plies.into());
    m.insert("wins".into(), r.results.wins.into());
    m.insert("draws".into(), r.results.draws.into());
    m.insert("losses".into(), r.results.losses.into());
    m.insert("score".into(), number_json(r.score(), 1));
    let (low, high) = r.interval().unzip();
    m.insert("low".into(), number_json(low, 1));
    m.insert("high".into(), number_json(high, 1));
    m.insert("baseline".into(), number_json(r.baseline_score(), 1));
    m.insert("baseline_games".into(), r.baseline.games.into());
    m.insert("baseline_band".into(), number_json(r.band_score(), 1));
    m.insert("baseline_band_games".into(), r.band.map(|b| b.games).into());
    m.insert("delta".into(), number_json(r.delta(), 1));
    m.insert("trust".into(), r.trust().words().into());
    m.insert(
        "moves".into(),
        r.moves
            .iter()
            .map(|p| json!({"san": p.san, "games": p.results.games}))
            .collect(),
    );
    m.insert(
        "breaks".into(),
        r.breaks
            .iter()
            .map(|p| json!({"san": p.san, "games": p.results.games, "score": score_json(&p.results)}))
            .collect(),
    );
    Value::Object(m)
}

fn ranked_json(rows: &[&Row]) -> Value {
    rows.iter()
        .map(|r| {
            json!({"kind": r.kind.word(), "key": r.key, "reversed": r.reversed,
                   "colour": colour_word(r.colour), "games": r.results.games,
                   "score": number_json(r.score(), 1),
                   "baseline": number_json(r.baseline_score(), 1),
                   "delta": number_json(r.delta(), 1)})
        })
        .collect()
}

fn share(n: u64, of: u64) -> Value {
    number_json((of > 0).then(|| 100.0 * n as f64 / of as f64), 1)
}

fn profile_map(p: &Profile) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("player".into(), p.player.clone().into());
    m.insert("names".into(), p.names.clone().into());
    m.insert("as".into(), p.only.map_or("both", colour_word).into());
    m.insert("baseline_source".into(), p.baseline_source.clone().into());
    m.insert(
        "rating".into(),
        p.rating.map_or(
            Value::Null,
            |r| json!({"median": r.median, "low": r.low, "high": r.high}),
        ),
    );
    m.insert(
        "games".into(),
        json!({"white": results_json(&p.games[0]), "black": results_json(&p.games[1]),
               "all": results_json(&p.all_games())}),
    );
    m.insert(
        "structures".into(),
        p.structures.iter().map(row_json).collect(),
    );
    m.insert("best".into(), ranked_json(&p.ranked(true)));
    m.insert("worst".into(), ranked_json(&p.ranked(false)));
    m.insert(
        "years".into(),
        p.years
            .iter()
            .map(|y| {
                json!({"year": y.year, "games": y.games,
                       "structures": y.structures.iter().map(|(key, reversed, n)| {
                           json!({"key": key, "reversed": reversed, "games": n,
                                  "share": share(*n, y.games)})
                       }).collect::<Vec<_>>()})
            })
            .collect(),
    );
    m
}

/// The profile as the JSON document of `pawndex player --format json` and `GET /api/player`.
#[must_use]
pub fn to_json(p: &Profile) -> Value {
    let mut m = profile_map(p);
    if let Some(h) = &p.head_to_head {
        m.insert(
            "head_to_head".into(),
            json!({"opponent": h.opponent, "names": h.names,
                   "games": h.results.games, "wins": h.results.wins,
                   "draws": h.results.draws, "losses": h.results.losses,
                   "score": score_json(&h.results),
                   "list": h.list.iter().map(|g| json!({"id": g.id, "date": g.date,
                       "event": g.event, "colour": colour_word(g.colour), "result": g.result,
                       "eco": g.eco, "plies": g.plies})).collect::<Vec<_>>()}),
        );
    }
    if let Some(o) = &p.opponent {
        m.insert("opponent".into(), Value::Object(profile_map(o)));
    }
    Value::Object(m)
}

/// Writes the JSON document and a newline.
pub fn write_json(out: &mut dyn Write, p: &Profile) -> Result<()> {
    serde_json::to_writer(&mut *out, &to_json(p))?;
    writeln!(out)?;
    Ok(())
}

fn num(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"))
}

fn row_label(r: &Row) -> String {
    match (&r.name, r.kind) {
        (Some(n), crate::model::profile::Kind::Named) => {
            format!("{n}{}", if r.reversed { " (reversed)" } else { "" })
        }
        (Some(n), _) => format!(
            "{} ({n}{})",
            r.key,
            if r.reversed { ", reversed" } else { "" }
        ),
        (None, _) => r.key.clone(),
    }
}

/// The CSV: one line per structure row.
pub fn write_csv(out: &mut dyn Write, p: &Profile) -> Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "kind",
        "key",
        "name",
        "reversed",
        "colour",
        "games",
        "plies",
        "wins",
        "draws",
        "losses",
        "score",
        "low",
        "high",
        "baseline",
        "baseline_games",
        "baseline_band",
        "baseline_band_games",
        "delta",
        "trust",
        "moves",
        "breaks",
    ])?;
    let blank = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:.1}"));
    for r in &p.structures {
        let (low, high) = r.interval().unzip();
        w.write_record([
            r.kind.word().to_string(),
            r.key.clone(),
            r.name.clone().unwrap_or_default(),
            r.reversed.to_string(),
            colour_word(r.colour).to_string(),
            r.results.games.to_string(),
            r.plies.to_string(),
            r.results.wins.to_string(),
            r.results.draws.to_string(),
            r.results.losses.to_string(),
            blank(r.score()),
            blank(low),
            blank(high),
            blank(r.baseline_score()),
            r.baseline.games.to_string(),
            blank(r.band_score()),
            r.band.map(|b| b.games.to_string()).unwrap_or_default(),
            blank(r.delta()),
            r.trust().words().to_string(),
            r.moves
                .iter()
                .map(|m| format!("{} {}", m.san, m.results.games))
                .collect::<Vec<_>>()
                .join("; "),
            r.breaks
                .iter()
                .map(|m| format!("{} {}", m.san, m.results.games))
                .collect::<Vec<_>>()
                .join("; "),
        ])?;
    }
    w.flush()?;
    Ok(())
}

/// The table: the player, the games per colour, the structures, best and worst, and (with
/// `--vs`) the head-to-head and the opponent's profile.
pub fn write_table(out: &mut dyn Write, p: &Profile) -> Result<()> {
    write_one(out, p)?;
    if let Some(h) = &p.head_to_head {
        writeln!(
            out,
            "\nAgainst {}: {} games, +{} ={} -{}, score {}",
            h.opponent,
            h.results.games,
            h.results.wins,
            h.results.draws,
            h.results.losses,
            num(h.results.score())
        )?;
        for g in &h.list {
            writeln!(
                out,
                "  #{:<8} {:<10} {:<5} {:<7} {:<3} {}",
                g.id,
                g.date.as_deref().unwrap_or("?"),
                colour_word(g.colour),
                g.result.as_deref().unwrap_or("*"),
                g.eco.as_deref().unwrap_or(""),
                g.event.as_deref().unwrap_or("")
            )?;
        }
    }
    if let Some(o) = &p.opponent {
        writeln!(out, "\n== Opponent ==")?;
        write_one(out, o)?;
    }
    Ok(())
}

fn write_one(out: &mut dyn Write, p: &Profile) -> Result<()> {
    writeln!(out, "{} ({})", p.player, p.names.join(", "))?;
    if let Some(r) = p.rating {
        writeln!(
            out,
            "rating: median {} (band {}..{})",
            r.median, r.low, r.high
        )?;
    }
    if let Some(s) = &p.baseline_source {
        writeln!(out, "baselines from {s}")?;
    }
    for (label, r) in [
        ("as White", p.games[0]),
        ("as Black", p.games[1]),
        ("all", p.all_games()),
    ] {
        writeln!(
            out,
            "{label:<9} {:>6} games  +{} ={} -{}  score {}",
            r.games,
            r.wins,
            r.draws,
            r.losses,
            num(r.score())
        )?;
    }
    writeln!(out)?;
    let labels: Vec<String> = p.structures.iter().map(row_label).collect();
    let width = labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(9)
        .max(9);
    writeln!(
        out,
        "{:<width$}  {:<5} {:>6} {:>7} {:>6} {:>13} {:>8} {:>6} {:>6}  trust",
        "structure", "as", "games", "plies", "score", "95%", "baseline", "band", "delta"
    )?;
    for (r, label) in p.structures.iter().zip(&labels) {
        let interval = r
            .interval()
            .map_or_else(|| "-".to_string(), |(l, h)| format!("{l:.1}-{h:.1}"));
        writeln!(
            out,
            "{label:<width$}  {:<5} {:>6} {:>7} {:>6} {:>13} {:>8} {:>6} {:>6}  {}",
            colour_word(r.colour),
            r.results.games,
            r.plies,
            num(r.score()),
            interval,
            num(r.baseline_score()),
            num(r.band_score()),
            r.delta()
                .map_or_else(|| "-".to_string(), |d| format!("{d:+.1}")),
            r.trust().words()
        )?;
    }
    for (title, rows) in [("Best", p.ranked(true)), ("Worst", p.ranked(false))] {
        if rows.is_empty() {
            continue;
        }
        writeln!(out, "\n{title} (against the baseline, at least 10 games):")?;
        for r in rows {
            writeln!(
                out,
                "  {:<width$} {:<5} {:>5} games  {} vs {}  ({})",
                row_label(r),
                colour_word(r.colour),
                r.results.games,
                num(r.score()),
                num(r.baseline_score()),
                r.delta()
                    .map_or_else(|| "-".to_string(), |d| format!("{d:+.1}"))
            )?;
        }
    }
    Ok(())
}
