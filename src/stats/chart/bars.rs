//! One `--by` column: bars of the counted units over a line of White's score.

use anyhow::Result;
use plotters::prelude::*;

use super::frame::{
    Area, Categories, Panel, SCORE_DESC, Y_LABELS, YAxis, bar_margin, category_chart, color,
    panels, plot_error, score_axes, short,
};
use super::lines::line_with_markers;
use super::{Spec, drawn_score};
use crate::stats::engine::Group;

/// Bars of units per value, over a line of White's score.
pub(super) fn bars<DB: DrawingBackend>(
    body: &Area<DB>,
    spec: &Spec,
    groups: &[Group],
    unit: &str,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let col = spec.by[0];
    let axis = Categories::in_order(col, groups.iter().map(|g| &g.keys[0]).collect());
    let n = axis.len();
    let units: Vec<f64> = groups
        .iter()
        .map(|g| g.totals.units(spec.per) as f64)
        .collect();
    let max = units.iter().copied().fold(1.0, f64::max) * 1.08;
    let (upper, lower) = panels(body);

    let y = YAxis {
        range: 0.0..max,
        labels: Y_LABELS,
        format: &|v| short(*v),
        desc: unit,
    };
    let mut top = category_chart(&upper, &axis.labels, Panel::Upper, y)?;
    top.draw_series(
        Histogram::vertical(&top)
            .style(color(0).mix(0.8).filled())
            .margin(bar_margin(&upper, n))
            .data(units.iter().enumerate().map(|(i, &u)| (i as i32, u))),
    )
    .map_err(plot_error)?;

    let scores: Vec<(i32, f64)> = groups
        .iter()
        .enumerate()
        .filter_map(|(i, g)| Some((i as i32, drawn_score(g)?)))
        .collect();
    let mut bottom = score_axes(&lower, &axis.labels, &col.name(), SCORE_DESC)?;
    line_with_markers(&mut bottom, &scores, &axis, color(1))
}
