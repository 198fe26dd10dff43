//! Writing the report of `pawndex structures`: the aligned table (names cut in the middle so
//! that "(rev.)" stays), CSV, JSON lines, and the summary line on stderr.

use std::io::Write;

use anyhow::Result;
use serde_json::{Value, json};

use crate::model::numbers::thousands;
use crate::model::structure_report::{EcoShare, Move, Next, Row, Totals, WINDOW};
use crate::output::table::{number_json, score_json, score_text};

/// The last stderr line: how much of the database has a name.
pub fn summary(totals: &Totals, named: u64, named_window: u64) -> String {
    let pct = |part: u64, all: u64| {
        if all == 0 {
            "0.0".to_string()
        } else {
            format!("{:.1}", 100.0 * part as f64 / all as f64)
        }
    };
    format!(
        "pawndex: {}% of positions have a named structure ({} of {}); {}% of plies {}..{} ({} of {})",
        pct(named, totals.positions),
        thousands(named),
        thousands(totals.positions),
        pct(named_window, totals.window_positions),
        WINDOW.0,
        WINDOW.1,
        thousands(named_window),
        thousands(totals.window_positions)
    )
}

/// A number with `digits` decimals, empty for None.
pub fn opt(v: Option<f64>, digits: usize) -> String {
    v.map(|v| format!("{v:.digits$}")).unwrap_or_default()
}

/// `D36 15.8%`.
pub fn eco_item(e: &EcoShare) -> String {
    format!("{} {:.1}%", e.eco, e.share)
}

/// `isolani 387`, `carlsbad (reversed) 98`, `none 5301`.
pub fn next_item(n: &Next) -> String {
    format!("{} {}", n.label(), n.count)
}

/// `c5 1894 (57.1%)`, `…exd5 12`: the move (Black's after "…"), its count and White's score
/// (no score without a result).
pub fn move_item(m: &Move) -> String {
    match m.results.white_score() {
        Some(s) => format!("{} {} ({}%)", m.text(), m.count, score_text(Some(s))),
        None => format!("{} {}", m.text(), m.count),
    }
}

/// CSV header.
pub const CSV_COLUMNS: [&str; 13] = [
    "key",
    "name",
    "family",
    "reversed",
    "positions",
    "games",
    "white_score",
    "stays",
    "avg_stay",
    "eco",
    "turns_into",
    "leaving_moves",
    "games_with_result",
];

/// One CSV row per form, the lists joined by "; ".
pub fn write_csv(out: &mut dyn Write, rows: &[Row]) -> Result<()> {
    let mut w = crate::output::table::csv_writer(out);
    w.write_record(CSV_COLUMNS)?;
    let join = |items: Vec<String>| items.join("; ");
    for r in rows {
        w.write_record([
            r.form.key.clone(),
            r.form.name.clone(),
            r.form.family.clone(),
            u8::from(r.form.reversed).to_string(),
            r.positions.to_string(),
            r.games.to_string(),
            score_text(r.results.white_score()),
            r.stays.to_string(),
            opt(r.avg_stay(), 2),
            join(r.eco.iter().map(eco_item).collect()),
            join(r.turns_into.iter().map(next_item).collect()),
            join(r.leaving.iter().map(move_item).collect()),
            r.results.games().to_string(),
        ])?;
    }
    w.flush()?;
    Ok(())
}

/// A JSON array of one object per form, the lists nested.
pub fn write_json(out: &mut dyn Write, rows: &[Row]) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, &to_json(rows))?;
    writeln!(out)?;
    Ok(())
}

/// The array `--format json` writes: one object per form, the lists nested.
#[must_use]
pub fn to_json(rows: &[Row]) -> Value {
    let items: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({
                "key": r.form.key,
                "name": r.form.name,
                "family": r.form.family,
                "reversed": r.form.reversed,
                "positions": r.positions,
                "games": r.games,
                "games_with_result": r.results.games(),
                "white_wins": r.results.white_wins,
                "draws": r.results.draws,
                "black_wins": r.results.black_wins,
                "white_score": score_json(r.results.white_score()),
                "stays": r.stays,
                "avg_stay": number_json(r.avg_stay(), 2),
                "eco": eco_json(&r.eco),
                "turns_into": r.turns_into.iter().map(|n| json!({
                    "key": n.key,
                    "name": n.key.as_ref().map(|_| &n.name),
                    "reversed": n.reversed,
                    "count": n.count,
                })).collect::<Vec<_>>(),
                "leaving_moves": r.leaving.iter().map(|m| json!({
                    "move": m.san,
                    "side": m.side.name(),
                    "count": m.count,
                    "games_with_result": m.results.games(),
                    "white_score": score_json(m.results.white_score()),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    Value::Array(items)
}

/// Cuts `s` to `width` characters, ending in "…" when cut.
pub fn fit(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Joins as many whole items as fit in `width` characters with `sep`, ending in `sep` and "…"
/// when some are left out (the first item cut when even it does not fit).
pub fn fit_list(items: &[String], sep: &str, width: usize) -> String {
    for k in (1..=items.len()).rev() {
        let mut s = items[..k].join(sep);
        if k < items.len() {
            s.push_str(sep);
            s.push('…');
        }
        if s.chars().count() <= width {
            return s;
        }
    }
    items.first().map(|i| fit(i, width)).unwrap_or_default()
}

/// Pads (left-aligned) or cuts `s` to exactly `width` characters.
pub fn cell(s: &str, width: usize) -> String {
    let t = fit(s, width);
    let pad = width - t.chars().count();
    format!("{t}{}", " ".repeat(pad))
}

/// Cuts `name` in the middle ("King's…ndian III") so that it and `tail` (" (rev.)", " 51")
/// fit in `width` characters; `tail` is never cut (unless it alone is too wide).
pub fn fit_name(name: &str, tail: &str, width: usize) -> String {
    let whole = format!("{name}{tail}");
    let room = width.saturating_sub(tail.chars().count());
    if whole.chars().count() <= width {
        whole
    } else if room < 3 {
        fit(&whole, width)
    } else {
        let keep = room - 1;
        let chars: Vec<char> = name.chars().collect();
        let head: String = chars[..keep.div_ceil(2)].iter().collect();
        let end: String = chars[chars.len() - keep / 2..].iter().collect();
        format!("{}…{}{tail}", head.trim_end(), end.trim_start())
    }
}

/// A form as the table names it: its name, "(rev.)" after the colour-reversed one.
pub fn table_name(name: &str, reversed: bool) -> (String, &'static str) {
    (name.to_string(), if reversed { " (rev.)" } else { "" })
}

/// [`fit_list`] of names with their tails (`(name, tail)`): when even the first item does not
/// fit whole, its name is cut in the middle ([`fit_name`]) and its tail kept.
pub fn fit_names(items: &[(String, String)], sep: &str, width: usize) -> String {
    let whole: Vec<String> = items.iter().map(|(n, t)| format!("{n}{t}")).collect();
    let s = fit_list(&whole, sep, width);
    match items.first() {
        Some((name, tail)) if !s.starts_with(&whole[0]) => fit_name(name, tail, width),
        _ => s,
    }
}

/// Widths of the table's columns (with one space between them: 100 characters). The first
/// holds every built-in name with its "(rev.)".
pub const TABLE: [(&str, usize); 8] = [
    ("structure", 24),
    ("positions", 9),
    ("games", 7),
    ("White%", 6),
    ("stay", 5),
    ("ECO", 9),
    ("turns into", 20),
    ("leaves by", 13),
];

/// A count in at most 4 characters or so: 987, 1.2k, 12k, 1.2M.
pub fn compact(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=9_999 => format!("{:.1}k", n as f64 / 1e3),
        10_000..=999_999 => format!("{}k", (n + 500) / 1_000),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// Aligned columns in 100 characters, the lists cut to whole items.
pub fn write_table(out: &mut dyn Write, rows: &[Row]) -> Result<()> {
    let cols = &TABLE;
    let line = |cells: [String; 8]| -> String {
        let mut s = String::new();
        for (i, (c, (_, w))) in cells.iter().zip(cols).enumerate() {
            if i > 0 {
                s.push(' ');
            }
            // Numbers right-aligned, text left-aligned.
            if (1..=4).contains(&i) {
                s.push_str(&format!("{:>w$}", fit(c, *w)));
            } else {
                s.push_str(&cell(c, *w));
            }
        }
        s.trim_end().to_string()
    };
    writeln!(
        out,
        "{}",
        line(std::array::from_fn(|i| cols[i].0.to_string()))
    )?;
    for r in rows {
        let eco: Vec<String> = r.eco.iter().map(|e| e.eco.clone()).collect();
        // Named as the first column names them; the named forms first (most common first),
        // "none" last: in 20 characters the forms a game goes on to are the news, "none" (the
        // game left every named structure) is the rest.
        let mut by_name: Vec<&Next> = r.turns_into.iter().collect();
        by_name.sort_by_key(|n| n.key.is_none());
        let next: Vec<(String, String)> = by_name
            .into_iter()
            .map(|n| match &n.key {
                None => ("none".to_string(), format!(" {}", compact(n.count))),
                Some(_) => {
                    let (name, rev) = table_name(&n.name, n.reversed);
                    (name, format!("{rev} {}", compact(n.count)))
                }
            })
            .collect();
        let moves: Vec<String> = r
            .leaving
            .iter()
            .map(|m| format!("{} {}", m.text(), compact(m.count)))
            .collect();
        writeln!(
            out,
            "{}",
            line([
                {
                    let (name, rev) = table_name(&r.form.name, r.form.reversed);
                    fit_name(&name, rev, TABLE[0].1)
                },
                thousands(r.positions),
                thousands(r.games),
                r.results
                    .white_score()
                    .map_or_else(|| "-".into(), |s| score_text(Some(s))),
                r.avg_stay()
                    .map_or_else(|| "-".into(), |s| format!("{s:.1}")),
                fit_list(&eco, " ", TABLE[5].1),
                fit_names(&next, ", ", TABLE[6].1),
                fit_list(&moves, ", ", TABLE[7].1),
            ])
        )?;
    }
    Ok(())
}

/// A list of ECO codes with their games and share (percent, to a tenth), as JSON.
#[must_use]
pub fn eco_json(eco: &[crate::model::structure_report::EcoShare]) -> Value {
    eco.iter()
        .map(|e| json!({"eco": e.eco, "games": e.games, "share": number_json(Some(e.share), 1)}))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_cells_fit() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(cell("ab", 4), "ab  ");
        assert_eq!(compact(999), "999");
        let items = [
            "none 7.1k".to_string(),
            "french 310".into(),
            "isolani 20".into(),
        ];
        assert_eq!(fit_list(&items, ", ", 18), "none 7.1k, …");
        assert_eq!(fit_list(&items, ", ", 24), "none 7.1k, french 310, …");
        assert_eq!(fit_list(&[], ", ", 24), "");
        assert_eq!(
            fit_list(&items, ", ", 33),
            "none 7.1k, french 310, isolani 20"
        );
        assert_eq!(fit_list(&items, ", ", 5), "none…");
        assert_eq!(compact(7_096), "7.1k");
        assert_eq!(compact(17_766), "18k");
        assert_eq!(compact(2_316_114), "2.3M");
        let width: usize = TABLE.iter().map(|(_, w)| w).sum::<usize>() + 7;
        assert_eq!(width, 100);
    }

    #[test]
    fn long_names_give_way_in_the_middle() {
        assert_eq!(fit_name("Carlsbad", " (rev.)", 24), "Carlsbad (rev.)");
        let cut = fit_name("Carlsbad of the Exchange Variation", " (rev.)", 24);
        assert_eq!(cut, "Carlsbad…ariation (rev.)");
        assert_eq!(fit_name("King's Indian Complex", "", 12), "King's…mplex");
        assert_eq!(
            fit_name("King's Indian Complex", "", 14),
            "King's…omplex",
            "spaces at the cut are dropped"
        );
        assert_eq!(
            fit_name("Maroczy Bind", " (rev.) 51", 20),
            "Maroc…Bind (rev.) 51"
        );
        // A tail wider than the cell: cut at the end, as any cell.
        assert_eq!(fit_name("Isolani", " (rev.) 12k", 9), "Isolani …");
        let items = [
            ("King's Indian I".to_string(), " 6.3k".to_string()),
            ("none".to_string(), " 12".to_string()),
        ];
        assert_eq!(fit_names(&items, ", ", 30), "King's Indian I 6.3k, none 12");
        assert_eq!(fit_names(&items, ", ", 20), "King's Indian I 6.3k");
        assert_eq!(fit_names(&items, ", ", 16), "King'…ian I 6.3k");
    }
}
