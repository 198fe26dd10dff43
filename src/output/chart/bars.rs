//! One `--by` column: bars of the counted units over a line of White's score.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::HPos;

use super::frame::{
    Area, Categories, Panel, SCORE_DESC, Y_LABELS, YAxis, bar_margin, category_chart, color, label,
    ordered, panels, plot_error, score_axes, short, text,
};
use super::lines::line_with_markers;
use super::{Spec, drawn_score};
use crate::model::tally::Group;

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
    let all = groups;
    let groups = &groups[..drawn_count(spec, groups)];
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
    let mut bottom = score_axes(&lower, &axis.labels, &col.name(), SCORE_DESC, true)?;
    line_with_markers(&mut bottom, &scores, &axis, color(1))?;
    tail_note(&lower, spec, &all[groups.len()..], unit)
}

/// A bar under this fraction of the tallest is under a pixel high.
const INVISIBLE: f64 = 1.0 / 500.0;

/// How many groups to draw: on an axis of ordered numbers (plies, say), all but the tail
/// that would show nothing (bars under a pixel and no score), and a margin of a few values
/// after the last one that shows something.
fn drawn_count(spec: &Spec, groups: &[Group]) -> usize {
    let n = groups.len();
    if !ordered(spec.by[0]) {
        return n;
    }
    let units = |g: &Group| g.totals.units(spec.per) as f64;
    let max = groups.iter().map(units).fold(0.0, f64::max);
    let shows = |g: &Group| units(g) >= max * INVISIBLE || drawn_score(g).is_some();
    let Some(last) = groups.iter().rposition(shows) else {
        return n;
    };
    let margin = (last / 50).max(1);
    (last + 1 + margin).min(n)
}

/// Says, bottom right, what the tail left out of the chart holds.
fn tail_note<DB: DrawingBackend>(
    lower: &Area<DB>,
    spec: &Spec,
    tail: &[Group],
    unit: &str,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let Some(end) = tail.last() else {
        return Ok(());
    };
    let col = spec.by[0];
    let units: u64 = tail.iter().map(|g| g.totals.units(spec.per)).sum();
    let note = format!(
        "not drawn: {} more values of {} up to {} ({} {unit}; in the CSV)",
        tail.len(),
        col.name(),
        label(col, &end.keys[0]),
        short(units as f64),
    );
    let (w, h) = lower.dim_in_pixel();
    let grey = RGBColor(90, 90, 90);
    text(
        lower,
        &note,
        (w as i32 - 10, h as i32 - 16),
        11,
        &grey,
        HPos::Right,
    )
}
