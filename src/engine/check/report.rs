//! What a check found, as data: the problems by kind (the first examples of each with their
//! lines, and how many there are), the notes, and what the database holds. Nothing here
//! prints; `pawndex check` writes a [`Report`] out.

/// Examples kept per kind of problem.
const EXAMPLES: u64 = 5;
/// Messages asked of `PRAGMA integrity_check` (and kept).
pub(super) const INTEGRITY_MESSAGES: u64 = 100;

/// A kind of problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Integrity,
    Unreadable,
    Derived,
    GameIds,
    GamePlies,
    GameHash,
    GameSummary,
    GameRuns,
    PlyNumbers,
    SetIds,
    SetPawns,
    SetFeatures,
    IdSpans,
    RunGame,
    RunPlies,
    RunTiling,
    RunSets,
    RunStretch,
    RunValues,
    Orphans,
    SetTotals,
    SetGames,
    RunStructure,
    RunCodes,
    Names,
    ChangeRows,
    Bishops,
}

impl Kind {
    /// The table the problems are about.
    #[must_use]
    pub fn table(self) -> &'static str {
        match self {
            Kind::Integrity => "sqlite",
            Kind::Unreadable => "database",
            Kind::Derived => "derived",
            Kind::GameIds | Kind::GamePlies | Kind::GameHash => "games",
            Kind::GameSummary => "game_summary",
            Kind::PlyNumbers => "ply_numbers",
            Kind::SetIds | Kind::SetPawns | Kind::SetFeatures => "pawn_sets",
            Kind::IdSpans => "ids",
            Kind::GameRuns
            | Kind::RunGame
            | Kind::RunPlies
            | Kind::RunTiling
            | Kind::RunSets
            | Kind::RunStretch
            | Kind::RunValues
            | Kind::RunStructure
            | Kind::RunCodes => "runs",
            Kind::Orphans | Kind::SetTotals => "set_totals",
            Kind::SetGames => "set_games",
            Kind::Names => "structure_names",
            Kind::ChangeRows => "structure_changes",
            Kind::Bishops => "bishop_totals",
        }
    }

    /// A plural description, for the count of the examples not kept.
    #[must_use]
    pub fn what(self) -> &'static str {
        match self {
            Kind::Integrity => "messages from SQLite's integrity check",
            Kind::Unreadable => "tables that cannot be read",
            Kind::Derived => "problems with the derived row",
            Kind::GameIds => "games with ids out of range",
            Kind::GamePlies => "games with bad plies or moves",
            Kind::GameHash => "games whose tags or moves differ from those they were indexed with",
            Kind::GameSummary => "games and summaries without each other",
            Kind::GameRuns => "games without runs",
            Kind::PlyNumbers => "problems with ply_numbers",
            Kind::SetIds => "pawn sets with ids out of range",
            Kind::SetPawns => "pawn sets with impossible pawns or sides",
            Kind::SetFeatures => "pawn sets whose features are wrong",
            Kind::IdSpans => "tables whose ids run far past their rows",
            Kind::RunGame => "games in runs that are not in games",
            Kind::RunPlies => "runs outside their game's plies",
            Kind::RunTiling => "gaps or overlaps between runs",
            Kind::RunSets => "runs naming missing or wrong-side pawn sets",
            Kind::RunStretch => "pawn sets back after other sets",
            Kind::RunValues => "runs with values out of range",
            Kind::Orphans => "derived rows for ids that are not pawn sets",
            Kind::SetTotals => "set_totals rows that differ from the runs",
            Kind::SetGames => "set_games rows that differ from the runs",
            Kind::RunStructure => "runs whose structure is not the catalogue's name of their pawns",
            Kind::RunCodes => "runs whose structure code has no row in structure_names",
            Kind::Names => {
                "structure_names rows that differ from the catalogue the runs were named with"
            }
            Kind::ChangeRows => "structure_changes rows that differ from the runs",
            Kind::Bishops => "bishop_totals rows that differ from the runs",
        }
    }

    /// How many examples of the kind a report keeps (SQLite's messages: all it gives).
    #[must_use]
    pub fn limit(self) -> u64 {
        match self {
            Kind::Integrity => INTEGRITY_MESSAGES,
            Kind::Unreadable => 100,
            _ => EXAMPLES,
        }
    }
}

/// One thing found, in the order found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// An example of a kind of problem, with its line.
    Problem { kind: Kind, line: String },
    /// A note (an unfinished database, another catalogue), not a problem.
    Note(String),
}

/// What a check found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// The examples kept (each kind's first [`Kind::limit`]) and the notes, in the order found.
    pub found: Vec<Finding>,
    /// Problems per kind (all of them, also those not kept), in the order first found.
    pub counts: Vec<(Kind, u64)>,
    /// Problems found (all of them).
    pub problems: u64,
    pub games: i64,
    pub runs: u64,
    pub pawn_sets: u64,
}

impl Report {
    /// Problems found of one kind.
    #[must_use]
    pub fn count(&self, kind: Kind) -> u64 {
        self.counts
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(0, |(_, n)| *n)
    }

    /// Whether the next problem of this kind is kept (worth describing in detail).
    #[must_use]
    pub fn shows(&self, kind: Kind) -> bool {
        self.count(kind) < kind.limit()
    }

    /// Records a problem; `line` is called only when the example is kept.
    pub fn problem(&mut self, kind: Kind, line: impl FnOnce() -> String) {
        self.problems += 1;
        let n = match self.counts.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                self.counts.push((kind, 1));
                1
            }
        };
        if n <= kind.limit() {
            self.found.push(Finding::Problem { kind, line: line() });
        }
    }

    /// Records a note.
    pub fn note(&mut self, line: String) {
        self.found.push(Finding::Note(line));
    }

    /// The kinds with more problems than examples kept, and how many more.
    pub fn more(&self) -> impl Iterator<Item = (Kind, u64)> + '_ {
        self.counts
            .iter()
            .filter(|(k, n)| *n > k.limit())
            .map(|&(k, n)| (k, n - k.limit()))
    }

    /// A check that failed with an error: an I/O error ends the check, anything else (a table
    /// SQLite cannot read) is a problem and the other checks go on.
    pub(super) fn guard(&mut self, what: &str, result: anyhow::Result<()>) -> anyhow::Result<()> {
        match result {
            Ok(()) => Ok(()),
            Err(e) if e.downcast_ref::<std::io::Error>().is_some() => Err(e),
            Err(e) => {
                self.problem(Kind::Unreadable, || {
                    format!("{what}: cannot be read: {e:#}")
                });
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_messages_are_kept_to_their_limit_and_lines_made_only_when_kept() {
        let mut report = Report::default();
        let mut made = 0;
        for _ in 0..INTEGRITY_MESSAGES + 3 {
            report.problem(Kind::Integrity, || {
                made += 1;
                "sqlite: a message".to_owned()
            });
        }
        assert_eq!(made, INTEGRITY_MESSAGES);
        assert_eq!(report.problems, INTEGRITY_MESSAGES + 3);
        assert_eq!(
            report.more().collect::<Vec<_>>(),
            vec![(Kind::Integrity, 3)]
        );
        report.note("note: one".to_owned());
        assert_eq!(
            report.found.last(),
            Some(&Finding::Note("note: one".to_owned()))
        );
        assert!(report.shows(Kind::Unreadable) && !report.shows(Kind::Integrity));
    }
}
