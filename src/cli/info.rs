//! `pawndex info`: what a database holds, as a table for people or JSON for scripts. The
//! numbers are read by [`crate::store::read::info`]; this module only lays them out.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::model::numbers::thousands;
use crate::output::table::{Format, formats};
use crate::store::read::info::{Info, State};

/// Options of `pawndex info`.
#[derive(Args, Debug)]
pub struct InfoArgs {
    /// Database file to describe (it is not modified)
    #[arg(long, default_value = crate::store::DEFAULT_DB, value_name = "PATH")]
    db: PathBuf,
    /// Output: an aligned table, or one JSON object for scripts
    #[arg(long, default_value = "table", value_parser = formats(&[Format::Table, Format::Json]))]
    format: Format,
}

/// Runs `pawndex info`: the answer on standard output, exit status 0.
pub fn run(args: InfoArgs) -> Result<i32> {
    let info = crate::store::read::info::read(&args.db)?;
    let text = match args.format {
        Format::Json => format!("{:#}\n", crate::output::info::to_json(&info)),
        _ => table(&info),
    };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    crate::cli::common::exit_status(
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map(|()| 0)
            .map_err(Into::into),
    )
}

/// A byte count for people: `494.4 MiB`.
fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} bytes")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// The `state` line: complete, complete with a tail, or interrupted with what to run.
fn state_line(info: &Info) -> String {
    let games = |n: i64| format!("{} game{}", thousands(n), if n == 1 { "" } else { "s" });
    match info.state() {
        State::Complete if info.unfolded() => format!(
            "complete, but not yet one self-contained file: run `{}` to fold the log in",
            info.to_run().unwrap_or_default()
        ),
        State::Complete => "complete".to_owned(),
        State::Tail(n) => format!(
            "complete; {} in the unmerged tail (by design: reads take them from the runs; \
             `pawndex migrate --db {}` merges them)",
            games(n),
            info.db.display()
        ),
        State::Indexing(n) => format!(
            "INDEXING: a `pawndex index` is writing to {} now; {} stored so far are not yet in \
             the derived tables (answers are complete but slower); it adds them when it \
             finishes",
            info.db.display(),
            games(n)
        ),
        State::Unfinished(n) => format!(
            "INTERRUPTED: {} stored by a `pawndex index` that did not finish are not yet in the \
             derived tables; answers are complete but slower; run `{}`",
            games(n),
            info.to_run().unwrap_or_default()
        ),
    }
}

/// The aligned table: one `name  value` line per fact, then the sources and the reasons.
fn table(info: &Info) -> String {
    let mut size = format!(
        "{} ({} bytes)",
        human_bytes(info.bytes),
        thousands(info.bytes as i64)
    );
    if info.wal_bytes > 0 {
        let whose = if info.indexing {
            "a `pawndex index` is writing now"
        } else {
            "not folded into the database"
        };
        size += &format!(
            " + {} write-ahead log ({whose})",
            human_bytes(info.wal_bytes)
        );
    }
    let mut facts = vec![
        ("database", info.db.display().to_string()),
        ("size", size),
        (
            "schema",
            format!("version {} (current)", info.schema_version),
        ),
        ("state", state_line(info)),
        ("games", thousands(info.games)),
        (
            "plies",
            format!(
                "{} ({} positions)",
                thousands(info.plies),
                thousands(info.positions())
            ),
        ),
        ("pawn sets", thousands(info.pawn_sets)),
        ("structures", structures_line(info)),
        ("rejected", thousands(info.rejected)),
    ];
    if info.without_time_control > 0 {
        facts.push((
            "time class",
            format!(
                "{} games indexed before schema version 5 have no TimeControl stored: their \
                 time class comes from the Event tag alone (re-index them to use TimeControl)",
                thousands(info.without_time_control)
            ),
        ));
    }
    if info.unfolded() {
        facts.insert(3, ("log", log_line(info)));
    }
    let mut s = String::new();
    for (name, value) in facts {
        s += &format!("{name:<10}  {value}\n");
    }
    if !info.sources.is_empty() {
        s.push('\n');
        let rows: Vec<[String; 4]> = info
            .sources
            .iter()
            .map(|x| {
                [
                    x.name.clone(),
                    thousands(x.games),
                    thousands(x.plies),
                    thousands(x.rejected),
                ]
            })
            .collect();
        s += &columns(["source", "games", "plies", "rejected"], &rows);
    }
    if !info.reasons.is_empty() {
        s.push('\n');
        let rows: Vec<[String; 2]> = info
            .reasons
            .iter()
            .map(|(reason, n)| [reason.clone(), thousands(*n)])
            .collect();
        s += &columns(["rejected by reason", "games"], &rows);
    }
    s
}

/// The `log` line of a database whose write-ahead log the last run left unfolded.
fn log_line(info: &Info) -> String {
    let db = info.db.display();
    if info.wal_bytes > 0 {
        format!(
            "{db}-wal holds {} not yet folded into the database (a reader kept it open when \
             the last run ended, or the run was killed): copy or move the database with its \
             -wal, a read-only folder cannot open it; run `pawndex migrate --db {db}` to fold it \
             in",
            human_bytes(info.wal_bytes)
        )
    } else {
        format!(
            "the database is still in write-ahead-log mode (another connection had it open \
             when the last run ended, or the run was killed): a read-only folder cannot open \
             it; run `pawndex migrate --db {db}` to switch it back to one self-contained file"
        )
    }
}

/// The named structures and whether they follow the catalogue in force.
fn structures_line(info: &Info) -> String {
    if info.structures_current {
        format!(
            "{} named, classified with this pawndex's catalogue",
            info.structures
        )
    } else {
        format!(
            "{} named, classified with another catalogue: `pawndex migrate --db {}` re-classifies",
            info.structures,
            info.db.display()
        )
    }
}

/// Rows under a header: the first column left-aligned, the others (numbers) right-aligned.
fn columns<const N: usize>(header: [&str; N], rows: &[[String; N]]) -> String {
    let mut width = header.map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; N]| {
        let mut l = String::new();
        for (i, (cell, w)) in cells.iter().zip(width).enumerate() {
            if i == 0 {
                l += &format!("{cell:<w$}");
            } else {
                l += &format!("  {cell:>w$}");
            }
        }
        l.trim_end().to_owned() + "\n"
    };
    let mut s = line(header);
    for row in rows {
        s += &line(row.each_ref().map(String::as_str));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(26_769_525), "26,769,525");
        assert_eq!(thousands(-1234), "-1,234");
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(512), "512 bytes");
        assert_eq!(human_bytes(518_365_184), "494.4 MiB");
    }
}
