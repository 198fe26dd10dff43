//! `pawndex check`: its options, and the report written out (one line per problem kept, the
//! notes, the count of the rest of each kind, and a last line) with its exit status.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::cli::common::{EXIT_ERROR, EXIT_OK};
use crate::engine::check::{Finding, Report};
use crate::model::numbers::thousands;
use crate::store::DEFAULT_DB;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Database file to verify (it is not modified)
    #[arg(long, default_value = DEFAULT_DB, value_name = "PATH")]
    pub db: PathBuf,
}

/// Checks the database and prints the report: exit status 0 when everything holds, 1 when a
/// problem was found.
pub fn run(args: CheckArgs) -> Result<i32> {
    let report = crate::engine::check::run(&args.db)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    write_report(&mut out, &report)?;
    out.flush()?;
    Ok(if report.problems == 0 {
        EXIT_OK
    } else {
        EXIT_ERROR
    })
}

/// The problems kept and the notes in the order found, then how many more of each kind, then
/// the last line.
fn write_report(out: &mut dyn Write, report: &Report) -> Result<()> {
    write_found(out, report)?;
    writeln!(out, "{}", last_line(report))?;
    Ok(())
}

/// The problems kept and the notes in the order found, then how many more of each kind.
fn write_found(out: &mut dyn Write, report: &Report) -> Result<()> {
    for found in &report.found {
        match found {
            Finding::Problem { line, .. } | Finding::Note(line) => writeln!(out, "{line}")?,
        }
    }
    for (kind, more) in report.more() {
        writeln!(out, "{}: … and {more} more {}", kind.table(), kind.what())?;
    }
    Ok(())
}

/// The last line of the output.
fn last_line(report: &Report) -> String {
    if report.problems == 0 {
        format!(
            "ok: {} games, {} runs, {} pawn sets; SQLite's integrity check and pawndex's \
             invariants hold",
            thousands(report.games),
            thousands(report.runs),
            thousands(report.pawn_sets)
        )
    } else {
        format!("{} problem(s) found", report.problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::check::Kind;

    #[test]
    fn each_kind_prints_its_first_examples_then_a_count() {
        let mut f = Report::default();
        for i in 0..7 {
            f.problem(Kind::RunPlies, || format!("runs: example {i}"));
        }
        f.problem(Kind::SetFeatures, || "pawn_sets: other".to_owned());
        assert!(!f.shows(Kind::RunPlies) && f.shows(Kind::SetFeatures));
        assert_eq!(f.problems, 8);
        let mut out = Vec::new();
        write_found(&mut out, &f).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 7, "{text}");
        assert_eq!(lines[4], "runs: example 4");
        assert_eq!(lines[5], "pawn_sets: other");
        assert_eq!(
            lines[6],
            "runs: … and 2 more runs outside their game's plies"
        );
        assert_eq!(last_line(&f), "8 problem(s) found");
    }
}
