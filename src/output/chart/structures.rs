//! The top-structures report: a horizontal bar per structure, coloured by White's score (the
//! palette of every chart), its score written after it.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::HPos;

use super::frame::{Area, NO_SCORE, bar_axes, label, row_bar, score_color, short, text};
use super::{MIN_GAMES_FOR_SCORE, Spec, drawn_score};
use crate::model::columns::Column;
use crate::model::tally::Group;
use crate::output::table::score_text;

/// Rows [`most_common`] draws at most (the rest are counted in a note).
const MOST_ROWS: usize = 25;

/// `--by structure`: a bar per named structure form, the most common first (at most
/// [`MOST_ROWS`], the rest counted in a note under the bars).
pub(super) fn most_common<DB: DrawingBackend>(
    body: &Area<DB>,
    spec: &Spec,
    groups: &[Group],
    unit: &str,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let mut sorted: Vec<Group> = groups.to_vec();
    sorted.sort_by_key(|g| std::cmp::Reverse(g.totals.units(spec.per)));
    let rest = sorted.split_off(sorted.len().min(MOST_ROWS));
    let (bars, note) = body.split_vertically(body.dim_in_pixel().1 as i32 - 18);
    structures(&bars, spec, &sorted, unit)?;
    if !rest.is_empty() {
        let units: u64 = rest.iter().map(|g| g.totals.units(spec.per)).sum();
        let grey = RGBColor(90, 90, 90);
        let (w, _) = note.dim_in_pixel();
        text(
            &note,
            &format!(
                "not drawn: {} less common forms ({} {unit}; in the CSV)",
                rest.len(),
                short(units as f64)
            ),
            (w as i32 - 10, 2),
            11,
            &grey,
            HPos::Right,
        )?;
    }
    Ok(())
}

pub(super) fn structures<DB: DrawingBackend>(
    body: &Area<DB>,
    spec: &Spec,
    groups: &[Group],
    unit: &str,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let fen = spec.by.iter().position(|c| *c == Column::PawnFen);
    let labels: Vec<String> = groups
        .iter()
        .map(|g| match fen {
            Some(i) => label(Column::PawnFen, &g.keys[i]),
            None => spec
                .by
                .iter()
                .zip(&g.keys)
                .map(|(c, v)| label(*c, v))
                .collect::<Vec<_>>()
                .join(" "),
        })
        .collect();
    let n = labels.len() as i32;
    // The first group at the top.
    let rows: Vec<String> = labels.iter().rev().cloned().collect();
    let max = groups
        .iter()
        .map(|g| g.totals.units(spec.per))
        .max()
        .unwrap_or(1)
        .max(1) as f64
        * 1.25;
    let chart = bar_axes(body, &rows, max, (300, 45), unit)?;
    for (i, g) in groups.iter().enumerate() {
        let row = n - 1 - i as i32;
        let u = g.totals.units(spec.per) as f64;
        let fill = drawn_score(g).map_or(NO_SCORE, score_color);
        let at = row_bar(body, &chart, row, u, fill)?;
        let score = drawn_score(g).map_or_else(
            || match g.totals.white_score() {
                Some(s) => format!(
                    "White {}% (under {MIN_GAMES_FOR_SCORE} games)",
                    score_text(Some(s))
                ),
                None => "no result".to_string(),
            },
            |s| format!("White {}%", score_text(Some(s))),
        );
        text(
            body,
            &format!("{}  {score}", short(u)),
            at,
            12,
            &BLACK,
            HPos::Left,
        )?;
    }
    Ok(())
}
