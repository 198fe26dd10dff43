//! `pawndex structures`: per named structure form (normal and colour-reversed apart), how often
//! it occurs, how games in it end, how long they stay in it, its openings, what it turns into
//! and the moves that leave it.
//!
//! Everything comes from one ordered pass over `structure_changes` joined to `games`
//! ([`crate::store::structure_report`]): a *stay* in a form runs from a change into it to the
//! game's next change (exclusive) or to the game's last position, so the positions in a form are
//! the sum of its stays. The report never reads `runs`.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use crate::cli::common::{self as command, DEFAULT_DB, UsageError, usage};
use crate::output::table::{score_json, score_text};
use crate::store::structure_report::{self, Change, GameRow, NameRow};

use crate::output::chart;

/// The ply window of the last stderr line (the middlegame, where names matter most).
const WINDOW: (u32, u32) = (20, 60);

/// The end of `--help`: the columns and examples.
const AFTER_HELP: &str = "\
One row per structure form, in catalogue order: the normal form, then the colour-reversed one
(colours swapped, board turned) when the definition looks for it. Forms no game reaches are
listed too (--min-games 1 leaves them out).

Columns:
  positions      positions (game and ply) in the form
  games          games that reach the form
  white_score    White's score in percent over the games that reach it with a result
                 (1-0, 1/2-1/2, 0-1); empty when none has one
  stays          times a game enters the form; avg_stay = positions / stays: the plies
                 from entering it to leaving it (or to the game's end), on average
  eco            the most common ECO codes of its games, with their share of its games
  turns_into     the forms the game changes to when it leaves, with counts (none = no name)
  leaving_moves  the moves that leave it, with counts and White's score in those games
The last line on stderr gives the share of all positions that have a name, and of plies
20..60.

Examples:
  pawndex structures --db masters.db --top 3
  pawndex structures --db masters.db --family d4-d5 --format csv > d4d5.csv
  pawndex structures --db masters.db --min-games 100 --chart structures.png
  pawndex structures --db masters.db --format json | jq '.[0].turns_into'";

/// How the report is written.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// Aligned columns, at most 100 characters wide (lists cut short)
    Table,
    /// One row per form; lists joined by "; " (RFC 4180 quoting, LF line ends)
    Csv,
    /// An array of objects, the lists as nested arrays
    Json,
}

/// Options of `pawndex structures`.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct StructuresArgs {
    /// Database to read (opened read-only)
    #[arg(long, default_value = DEFAULT_DB, value_name = "PATH")]
    pub db: PathBuf,
    /// Output format
    #[arg(long, short, value_enum, default_value_t = ReportFormat::Table)]
    pub format: ReportFormat,
    /// Also draw a chart of games per form, coloured by White's score (by extension)
    #[arg(long, value_name = "FILE.png|FILE.svg")]
    pub chart: Option<PathBuf>,
    /// Only the structures of this family (as in the catalogue, case ignored); several
    /// (repeated, or "d4-d5,Benoni"): any of them
    #[arg(long, value_name = "TEXT")]
    pub family: Vec<String>,
    /// Only the forms that at least N games reach
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub min_games: u64,
    /// Length of the lists (ECO codes, next structures, leaving moves)
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub top: u16,
}

/// Games by result: White wins, draws, Black wins.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Results {
    pub white_wins: u64,
    pub draws: u64,
    pub black_wins: u64,
}

impl Results {
    fn add(&mut self, result: Option<&str>) {
        match result {
            Some("1-0") => self.white_wins += 1,
            Some("1/2-1/2") => self.draws += 1,
            Some("0-1") => self.black_wins += 1,
            _ => {}
        }
    }

    /// Games with a result.
    pub fn games(&self) -> u64 {
        self.white_wins + self.draws + self.black_wins
    }

    /// White's score in percent, None without a result.
    pub fn white_score(&self) -> Option<f64> {
        crate::output::table::white_score(2 * self.white_wins + self.draws, self.games())
    }
}

/// One form of a catalogue structure.
#[derive(Clone, Debug)]
struct Form {
    code: u16,
    key: String,
    name: String,
    family: String,
    reversed: bool,
}

impl Form {
    fn display(&self) -> String {
        if self.reversed {
            format!("{} (reversed)", self.name)
        } else {
            self.name.clone()
        }
    }
}

/// A move that leaves a form.
#[derive(Clone, Debug, Default)]
struct Leaving {
    count: u64,
    results: Results,
}

/// What the pass gathers for one form.
#[derive(Clone, Debug, Default)]
struct Tally {
    positions: u64,
    stays: u64,
    games: u64,
    results: Results,
    eco: HashMap<String, u64>,
    turns_into: HashMap<u16, u64>,
    leaving: HashMap<String, Leaving>,
}

/// Everything the pass gathers.
struct Gathered {
    tallies: HashMap<u16, Tally>,
    /// Positions with a name, in all and at plies 20..60.
    named: u64,
    named_window: u64,
}

/// What `games` holds in all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Totals {
    /// Positions: every game's plies 0 to its last.
    positions: u64,
    /// Positions at plies 20..60.
    window_positions: u64,
}

impl Gathered {
    fn new() -> Self {
        Gathered {
            tallies: HashMap::new(),
            named: 0,
            named_window: 0,
        }
    }

    /// Adds one game's changes.
    fn add_game(&mut self, g: &GameRow<'_>, changes: &[Change]) {
        let result = g.result;
        let mut reached: Vec<u16> = Vec::new();
        let mut left: Vec<(u16, &str)> = Vec::new();
        for (i, c) in changes.iter().enumerate() {
            if c.to != 0 {
                let end = match changes.get(i + 1) {
                    Some(next) => next.ply.saturating_sub(1),
                    None => g.plies,
                };
                let stay = u64::from(end.saturating_sub(c.ply)) + 1;
                let t = self.tallies.entry(c.to).or_default();
                t.positions += stay;
                t.stays += 1;
                self.named += stay;
                let (lo, hi) = (c.ply.max(WINDOW.0), end.min(WINDOW.1));
                if lo <= hi {
                    self.named_window += u64::from(hi - lo) + 1;
                }
                if !reached.contains(&c.to) {
                    reached.push(c.to);
                }
            }
            if c.from != 0 {
                let t = self.tallies.entry(c.from).or_default();
                *t.turns_into.entry(c.to).or_default() += 1;
                let san = c.san.as_deref().unwrap_or("");
                t.leaving.entry(san.to_string()).or_default().count += 1;
                if !left.contains(&(c.from, san)) {
                    left.push((c.from, san));
                }
            }
        }
        for code in reached {
            let t = self.tallies.entry(code).or_default();
            t.games += 1;
            t.results.add(result);
            if let Some(eco) = g.eco.map(str::trim).filter(|e| !e.is_empty()) {
                *t.eco.entry(eco.to_string()).or_default() += 1;
            }
        }
        for (code, san) in left {
            if let Some(l) = self
                .tallies
                .get_mut(&code)
                .and_then(|t| t.leaving.get_mut(san))
            {
                l.results.add(result);
            }
        }
    }
}

/// Reads every game and every change once: the totals, and the tallies per form.
fn gather(conn: &rusqlite::Connection) -> Result<(Totals, Gathered)> {
    let mut totals = Totals::default();
    let mut out = Gathered::new();
    structure_report::for_each_game(conn, |g, changes| {
        totals.positions += u64::from(g.plies) + 1;
        if g.plies >= WINDOW.0 {
            totals.window_positions += u64::from(g.plies.min(WINDOW.1) - WINDOW.0) + 1;
        }
        if !changes.is_empty() {
            out.add_game(g, changes);
        }
    })?;
    Ok((totals, out))
}

/// One ECO code of a form's games.
#[derive(Clone, Debug, PartialEq)]
struct EcoShare {
    eco: String,
    games: u64,
    /// Percent of the form's games.
    share: f64,
}

/// A form the game turns into.
#[derive(Clone, Debug, PartialEq)]
struct Next {
    /// None: no named structure.
    key: Option<String>,
    /// The structure's name (its key when the catalogue does not know it).
    name: String,
    reversed: bool,
    count: u64,
}

impl Next {
    fn label(&self) -> String {
        match (&self.key, self.reversed) {
            (None, _) => "none".into(),
            (Some(k), false) => k.clone(),
            (Some(k), true) => format!("{k} (reversed)"),
        }
    }
}

/// A move that leaves the form.
#[derive(Clone, Debug, PartialEq)]
struct Move {
    san: String,
    count: u64,
    results: Results,
}

/// One output row.
#[derive(Clone, Debug)]
struct Row {
    form: Form,
    positions: u64,
    games: u64,
    results: Results,
    stays: u64,
    eco: Vec<EcoShare>,
    turns_into: Vec<Next>,
    leaving: Vec<Move>,
}

impl Row {
    fn avg_stay(&self) -> Option<f64> {
        (self.stays > 0).then(|| self.positions as f64 / self.stays as f64)
    }
}

/// The `n` largest entries by count, ties by label.
fn top<T, K: Ord>(
    mut items: Vec<T>,
    n: usize,
    count: impl Fn(&T) -> u64,
    key: impl Fn(&T) -> K,
) -> Vec<T> {
    items.sort_by(|a, b| count(b).cmp(&count(a)).then_with(|| key(a).cmp(&key(b))));
    items.truncate(n);
    items
}

/// The forms of the stored catalogue, in catalogue order.
fn forms(names: &[NameRow]) -> Vec<Form> {
    let mut out = Vec::new();
    for n in names {
        let Ok(id) = u16::try_from(n.id) else {
            continue;
        };
        for reversed in [false, true] {
            if reversed && !n.reversed {
                continue;
            }
            out.push(Form {
                code: id.saturating_mul(2) + u16::from(reversed),
                key: n.key.clone(),
                name: n.name.clone(),
                family: n.family.clone(),
                reversed,
            });
        }
    }
    out
}

/// The rows for the forms asked for (`chosen`); `all` names the forms they turn into.
fn rows(all: &[Form], chosen: &[Form], gathered: &mut Gathered, top_n: usize) -> Vec<Row> {
    let by_code: HashMap<u16, &Form> = all.iter().map(|f| (f.code, f)).collect();
    chosen
        .iter()
        .map(|f| {
            let t = gathered.tallies.remove(&f.code).unwrap_or_default();
            let eco = top(
                t.eco
                    .into_iter()
                    .map(|(eco, games)| EcoShare {
                        eco,
                        games,
                        share: 100.0 * games as f64 / t.games.max(1) as f64,
                    })
                    .collect(),
                top_n,
                |e| e.games,
                |e| e.eco.clone(),
            );
            let turns_into = top(
                t.turns_into
                    .into_iter()
                    .map(|(code, count)| {
                        let form = by_code.get(&code);
                        let key = match (code, form) {
                            (0, _) => None,
                            (_, Some(f)) => Some(f.key.clone()),
                            (c, None) => Some(format!("#{c}")),
                        };
                        Next {
                            name: form.map_or_else(
                                || key.clone().unwrap_or_default(),
                                |f| f.name.clone(),
                            ),
                            key,
                            reversed: form.is_some_and(|f| f.reversed),
                            count,
                        }
                    })
                    .collect(),
                top_n,
                |n| n.count,
                |n| n.label(),
            );
            let leaving = top(
                t.leaving
                    .into_iter()
                    .map(|(san, l)| Move {
                        san,
                        count: l.count,
                        results: l.results,
                    })
                    .collect(),
                top_n,
                |m| m.count,
                |m| m.san.clone(),
            );
            Row {
                form: f.clone(),
                positions: t.positions,
                games: t.games,
                results: t.results,
                stays: t.stays,
                eco,
                turns_into,
                leaving,
            }
        })
        .collect()
}

/// Runs `pawndex structures`.
pub fn run(args: StructuresArgs) -> Result<i32> {
    command::exit_status(run_report(args))
}

/// The command, with usage errors still to be turned into exit status 2.
fn run_report(args: StructuresArgs) -> Result<i32> {
    let chart_png = match &args.chart {
        Some(path) => {
            let png = chart_kind(path)?;
            command::check_output_path("--chart", path)?;
            if png {
                chart::load_font()?;
            }
            Some(png)
        }
        None => None,
    };
    let conn = command::open_for_reading(&args.db)?;
    crate::cli::query::warn_if_unfinished(&conn, &args.db)?;
    let names = structure_report::names(&conn)?;
    let all = forms(&names);
    let mut forms = all.clone();
    if !args.family.is_empty() {
        // In catalogue order, each once.
        let mut families: Vec<&str> = Vec::new();
        for n in &names {
            if !families.contains(&n.family.as_str()) {
                families.push(&n.family);
            }
        }
        let mut wanted = Vec::new();
        for given in &args.family {
            let before = wanted.len();
            for family in given.split(',').map(str::trim).filter(|f| !f.is_empty()) {
                if !families
                    .iter()
                    .any(|f| f.to_lowercase() == family.to_lowercase())
                {
                    usage!(
                        "--family {family:?}: no structure of {} has that family{}; its \
                         families: {}",
                        args.db.display(),
                        command::did_you_mean(family, families.iter().copied()),
                        families.join(", ")
                    );
                }
                wanted.push(family.to_lowercase());
            }
            if wanted.len() == before {
                usage!("--family {given:?}: the value is empty (give at least one family)");
            }
        }
        forms.retain(|f| wanted.contains(&f.family.to_lowercase()));
    }
    let (totals, mut gathered) = gather(&conn)?;
    let mut rows = rows(&all, &forms, &mut gathered, usize::from(args.top));
    rows.retain(|r| r.games >= args.min_games);

    let mut out = io::stdout().lock();
    match args.format {
        ReportFormat::Table => write_table(&mut out, &rows)?,
        ReportFormat::Csv => write_csv(&mut out, &rows)?,
        ReportFormat::Json => write_json(&mut out, &rows)?,
    }
    out.flush()?;
    drop(out);

    if let (Some(path), Some(png)) = (&args.chart, chart_png) {
        draw_chart(path, png, &args, &rows)?;
    }
    if names.is_empty() {
        eprintln!("pawndex: {} holds no named structures", args.db.display());
    } else if rows.is_empty() {
        eprintln!(
            "pawndex: no structure form has {} games or more",
            args.min_games
        );
    }
    eprintln!("{}", summary(&totals, &gathered));
    Ok(0)
}

/// The last stderr line: how much of the database has a name.
fn summary(totals: &Totals, g: &Gathered) -> String {
    let pct = |part: u64, all: u64| {
        if all == 0 {
            "0.0".to_string()
        } else {
            format!("{:.1}", 100.0 * part as f64 / all as f64)
        }
    };
    format!(
        "pawndex: {}% of positions have a named structure ({} of {}); {}% of plies {}..{} ({} of {})",
        pct(g.named, totals.positions),
        thousands(g.named),
        thousands(totals.positions),
        pct(g.named_window, totals.window_positions),
        WINDOW.0,
        WINDOW.1,
        thousands(g.named_window),
        thousands(totals.window_positions)
    )
}

/// A number with `digits` decimals, empty for None.
fn opt(v: Option<f64>, digits: usize) -> String {
    v.map(|v| format!("{v:.digits$}")).unwrap_or_default()
}

/// `D36 15.8%`.
fn eco_item(e: &EcoShare) -> String {
    format!("{} {:.1}%", e.eco, e.share)
}

/// `isolani 387`, `carlsbad (reversed) 98`, `none 5301`.
fn next_item(n: &Next) -> String {
    format!("{} {}", n.label(), n.count)
}

/// `c5 1894 (57.1%)`: count and White's score (no score without a result).
fn move_item(m: &Move) -> String {
    match m.results.white_score() {
        Some(s) => format!("{} {} ({}%)", m.san, m.count, score_text(Some(s))),
        None => format!("{} {}", m.san, m.count),
    }
}

/// CSV header.
const CSV_COLUMNS: [&str; 13] = [
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
fn write_csv(out: &mut dyn Write, rows: &[Row]) -> Result<()> {
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
fn write_json(out: &mut dyn Write, rows: &[Row]) -> Result<()> {
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
                "avg_stay": r.avg_stay(),
                "eco": r.eco.iter().map(|e| json!({
                    "eco": e.eco, "games": e.games, "share": e.share,
                })).collect::<Vec<_>>(),
                "turns_into": r.turns_into.iter().map(|n| json!({
                    "key": n.key, "reversed": n.reversed, "count": n.count,
                })).collect::<Vec<_>>(),
                "leaving_moves": r.leaving.iter().map(|m| json!({
                    "move": m.san,
                    "count": m.count,
                    "games_with_result": m.results.games(),
                    "white_score": score_json(m.results.white_score()),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::to_writer_pretty(&mut *out, &Value::Array(items))?;
    writeln!(out)?;
    Ok(())
}

/// Cuts `s` to `width` characters, ending in "…" when cut.
fn fit(s: &str, width: usize) -> String {
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
fn fit_list(items: &[String], sep: &str, width: usize) -> String {
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
fn cell(s: &str, width: usize) -> String {
    let t = fit(s, width);
    let pad = width - t.chars().count();
    format!("{t}{}", " ".repeat(pad))
}

/// 1234567 -> "1,234,567".
fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Cuts `name` in the middle ("King's…ndian III") so that it and `tail` (" (rev.)", " 51")
/// fit in `width` characters; `tail` is never cut (unless it alone is too wide).
fn fit_name(name: &str, tail: &str, width: usize) -> String {
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
fn table_name(name: &str, reversed: bool) -> (String, &'static str) {
    (name.to_string(), if reversed { " (rev.)" } else { "" })
}

/// [`fit_list`] of names with their tails (`(name, tail)`): when even the first item does not
/// fit whole, its name is cut in the middle ([`fit_name`]) and its tail kept.
fn fit_names(items: &[(String, String)], sep: &str, width: usize) -> String {
    let whole: Vec<String> = items.iter().map(|(n, t)| format!("{n}{t}")).collect();
    let s = fit_list(&whole, sep, width);
    match items.first() {
        Some((name, tail)) if !s.starts_with(&whole[0]) => fit_name(name, tail, width),
        _ => s,
    }
}

/// Widths of the table's columns (with one space between them: 100 characters). The first
/// holds every built-in name with its "(rev.)".
const TABLE: [(&str, usize); 8] = [
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
fn compact(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=9_999 => format!("{:.1}k", n as f64 / 1e3),
        10_000..=999_999 => format!("{}k", (n + 500) / 1_000),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// Aligned columns in 100 characters, the lists cut to whole items.
fn write_table(out: &mut dyn Write, rows: &[Row]) -> Result<()> {
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
        // Named as the first column names them.
        let next: Vec<(String, String)> = r
            .turns_into
            .iter()
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
            .map(|m| format!("{} {}", m.san, compact(m.count)))
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

/// Draws the chart: a bar of games per form with games, coloured by White's score.
fn draw_chart(path: &Path, png: bool, args: &StructuresArgs, rows: &[Row]) -> Result<()> {
    let bars: Vec<chart::NamedBar> = rows
        .iter()
        .filter(|r| r.games > 0)
        .map(|r| chart::NamedBar {
            label: r.form.display(),
            games: r.games,
            results: r.results.games(),
            score: r.results.white_score(),
        })
        .collect();
    let mut parts = vec!["games that reach each form".to_string()];
    if !args.family.is_empty() {
        parts.push(format!("family {}", args.family.join(", ")));
    }
    if args.min_games > 0 {
        parts.push(format!("at least {} games", args.min_games));
    }
    if let Some(name) = args.db.file_name() {
        parts.push(name.to_string_lossy().into_owned());
    }
    chart::draw_named(
        path,
        png,
        "Named pawn structures: games and White's score",
        &parts.join(", "),
        &bars,
    )
}

/// Refuses a chart file name pawndex cannot draw (before any work).
fn chart_kind(path: &Path) -> Result<bool> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("svg") => Ok(false),
        Some("png") => Ok(true),
        _ => Err(UsageError(format!(
            "--chart {}: the file name must end in .svg or .png",
            path.display()
        ))
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_cells_fit() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(cell("ab", 4), "ab  ");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
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

    #[test]
    fn stays_run_to_the_next_change_or_the_end() {
        let mut g = Gathered::new();
        let game = GameRow {
            result: Some("1-0"),
            eco: Some("D36"),
            plies: 30,
        };
        let changes = [
            Change {
                ply: 10,
                from: 0,
                to: 2,
                san: Some("e3".into()),
            },
            Change {
                ply: 15,
                from: 2,
                to: 0,
                san: Some("c4".into()),
            },
            Change {
                ply: 25,
                from: 0,
                to: 2,
                san: Some("c3".into()),
            },
        ];
        g.add_game(&game, &changes);
        let t = &g.tallies[&2];
        assert_eq!((t.positions, t.stays, t.games), (5 + 6, 2, 1));
        assert_eq!(t.turns_into[&0], 1);
        assert_eq!(t.leaving["c4"].count, 1);
        assert_eq!(t.results.white_wins, 1);
        assert_eq!(g.named, 11);
        // plies 20..60: 25..30
        assert_eq!(g.named_window, 6);
    }
}
