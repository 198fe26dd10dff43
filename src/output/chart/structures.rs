//! The top-structures report: a horizontal bar per structure, coloured by White's score (the
//! palette of every chart), its score written after it.

use anyhow::Result;
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use plotters::style::text_anchor::HPos;

use super::frame::{Area, NO_SCORE, bar_axes, label, plot_error, score_color, short, text};
use super::{MIN_GAMES_FOR_SCORE, Spec, drawn_score};
use crate::model::columns::Column;
use crate::model::tally::Group;
use crate::output::table::score_text;

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
    let base = body.get_base_pixel();
    for (i, g) in groups.iter().enumerate() {
        let row = n - 1 - i as i32;
        let u = g.totals.units(spec.per) as f64;
        let (x0, y0) = chart.backend_coord(&(0.0, SegmentValue::Exact(row + 1)));
        let (x1, y1) = chart.backend_coord(&(u, SegmentValue::Exact(row)));
        let gap = ((y1 - y0).abs() / 6).max(1);
        let corners = [
            (x0 - base.0, y0.min(y1) - base.1 + gap),
            (x1 - base.0, y0.max(y1) - base.1 - gap),
        ];
        let fill = drawn_score(g).map_or(NO_SCORE, score_color);
        body.draw(&Rectangle::new(corners, fill.filled()))
            .map_err(plot_error)?;
        body.draw(&Rectangle::new(
            corners,
            RGBColor(120, 120, 120).stroke_width(1),
        ))
        .map_err(plot_error)?;
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
        let (px, py) = chart.backend_coord(&(u, SegmentValue::CenterOf(row)));
        text(
            body,
            &format!("{}  {score}", short(u)),
            (px - base.0 + 6, py - base.1 - 7),
            12,
            &BLACK,
            HPos::Left,
        )?;
    }
    Ok(())
}
