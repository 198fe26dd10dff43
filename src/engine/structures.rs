//! The report of `pawndex structures`: per named structure form (normal and colour-reversed
//! apart), how often it occurs, how games in it end, how long they stay in it, its openings,
//! what it turns into and the moves that leave it, gathered in one pass over the games and one
//! over the structure changes (read by [`crate::store::read::structure_report`]).

use std::collections::HashMap;

use anyhow::Result;

use crate::model::structure_report::{
    EcoShare, Form, Move, Next, Results, Row, Side, Totals, WINDOW, black_to_move, side_of_ply,
};
use crate::store::read::Snapshot;
use crate::store::read::structure_report::{self, Change, GameRow, StructureName};

/// A move that leaves a form.
#[derive(Clone, Debug, Default)]
pub struct Leaving {
    pub count: u64,
    pub results: Results,
}

/// What the pass gathers for one form.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub positions: u64,
    pub stays: u64,
    pub games: u64,
    pub results: Results,
    pub eco: HashMap<String, u64>,
    pub turns_into: HashMap<u16, u64>,
    /// By the side that played the move and its SAN.
    pub leaving: HashMap<(Side, String), Leaving>,
}

/// Everything the pass gathers.
pub struct Gathered {
    pub tallies: HashMap<u16, Tally>,
    /// Positions with a name, in all and at plies 20..60.
    pub named: u64,
    pub named_window: u64,
}

impl Gathered {
    pub fn new() -> Self {
        Gathered {
            tallies: HashMap::new(),
            named: 0,
            named_window: 0,
        }
    }

    /// Adds one game's changes.
    pub fn add_game(&mut self, g: &GameRow<'_>, changes: &[Change]) {
        let result = g.result;
        let mut reached: Vec<u16> = Vec::new();
        let mut left: Vec<(u16, Side, &str)> = Vec::new();
        let black_first = black_to_move(g.fen);
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
                let side = side_of_ply(c.ply, black_first);
                t.leaving.entry((side, san.to_string())).or_default().count += 1;
                if !left.contains(&(c.from, side, san)) {
                    left.push((c.from, side, san));
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
        for (code, side, san) in left {
            if let Some(l) = self
                .tallies
                .get_mut(&code)
                .and_then(|t| t.leaving.get_mut(&(side, san.to_string())))
            {
                l.results.add(result);
            }
        }
    }
}

/// Reads every game and every change once: the totals, and the tallies per form.
pub fn gather(conn: &Snapshot) -> Result<(Totals, Gathered)> {
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

/// The `n` largest entries by count, ties by label.
pub fn top<T, K: Ord>(
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
pub fn forms(names: &[StructureName]) -> Vec<Form> {
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
pub fn rows(all: &[Form], chosen: &[Form], gathered: &mut Gathered, top_n: usize) -> Vec<Row> {
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
                    .map(|((side, san), l)| Move {
                        side,
                        san,
                        count: l.count,
                        results: l.results,
                    })
                    .collect(),
                top_n,
                |m| m.count,
                |m| (m.san.clone(), m.side.code()),
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

/// The `structures` report of a database: the rows of the forms `keep` chooses, in catalogue
/// order, lists `top` long, and what its summary line counts.
pub struct Report {
    pub rows: Vec<Row>,
    pub totals: Totals,
    /// Positions with a name, in all and at plies 20..60.
    pub named: u64,
    pub named_window: u64,
}

/// Gathers the `structures` report of the catalogue `names` (the database's) over `conn`: one
/// pass over the games and their structure changes, for the command and the server alike.
pub fn report(
    conn: &Snapshot,
    names: &[StructureName],
    keep: impl Fn(&Form) -> bool,
    top: usize,
) -> Result<Report> {
    let all = forms(names);
    let chosen: Vec<Form> = all.iter().filter(|f| keep(f)).cloned().collect();
    let (totals, mut gathered) = gather(conn)?;
    Ok(Report {
        rows: rows(&all, &chosen, &mut gathered, top),
        totals,
        named: gathered.named,
        named_window: gathered.named_window,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_run_to_the_next_change_or_the_end() {
        let mut g = Gathered::new();
        let game = GameRow {
            result: Some("1-0"),
            eco: Some("D36"),
            plies: 30,
            fen: None,
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
        assert_eq!(t.leaving[&(Side::White, "c4".to_string())].count, 1);
        assert_eq!(t.results.white_wins, 1);
        assert_eq!(g.named, 11);
        // plies 20..60: 25..30
        assert_eq!(g.named_window, 6);
    }

    #[test]
    fn leaving_moves_are_keyed_by_side() {
        let change = |ply, from, to, san: &str| Change {
            ply,
            from,
            to,
            san: Some(san.into()),
        };
        // The same SAN by both sides: two moves. Ply 4 is Black's from the standard start,
        // White's from a start with Black to move.
        let mut g = Gathered::new();
        let standard = GameRow {
            result: Some("0-1"),
            eco: None,
            plies: 10,
            fen: None,
        };
        g.add_game(&standard, &[change(1, 0, 2, "e4"), change(4, 2, 0, "Nxd4")]);
        let black_first = GameRow {
            fen: Some("4k3/pppppppp/8/8/8/8/PPPPPPPP/4K3 b - - 0 1"),
            ..standard
        };
        g.add_game(
            &black_first,
            &[change(1, 0, 2, "e5"), change(4, 2, 0, "Nxd4")],
        );
        let t = &g.tallies[&2];
        assert_eq!(t.leaving[&(Side::Black, "Nxd4".to_string())].count, 1);
        assert_eq!(t.leaving[&(Side::White, "Nxd4".to_string())].count, 1);
    }
}
