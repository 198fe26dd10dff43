//! Lines with a dot on each point, broken where the categories have a gap.

use anyhow::Result;
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;

use super::frame::{Categories, CategoryChart, plot_error};

/// Radius of the dots on a line: none when they would merge.
fn marker(n: i32) -> u32 {
    match n {
        ..=30 => 3,
        31..=60 => 2,
        _ => 0,
    }
}

/// Radius of the dot of a point that no line reaches: always visible.
const LONE_MARKER: u32 = 2;

/// Splits points (category index, value), in increasing index order, into the runs a line may
/// join: consecutive indices whose categories are neighbours.
fn runs<'p>(points: &'p [(i32, f64)], axis: &Categories) -> Vec<&'p [(i32, f64)]> {
    let mut runs = Vec::new();
    let mut start = 0;
    for i in 1..=points.len() {
        let breaks = i == points.len() || {
            let (a, b) = (points[i - 1].0, points[i].0);
            b != a + 1 || !axis.joined(a)
        };
        if breaks {
            runs.push(&points[start..i]);
            start = i;
        }
    }
    runs
}

/// Draws `points` (category index, value) as a line in colour `c`, broken at each gap of
/// `axis`, then a dot on every point.
pub(super) fn line_with_markers<DB: DrawingBackend>(
    chart: &mut CategoryChart<DB>,
    points: &[(i32, f64)],
    axis: &Categories,
    c: RGBColor,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let runs = runs(points, axis);
    for run in runs.iter().filter(|r| r.len() > 1) {
        chart
            .draw_series(LineSeries::new(
                run.iter().map(|&(x, y)| (SegmentValue::CenterOf(x), y)),
                c.stroke_width(2),
            ))
            .map_err(plot_error)?;
    }
    let radius = marker(axis.len());
    chart
        .draw_series(runs.iter().flat_map(|run| {
            let r = if run.len() == 1 {
                radius.max(LONE_MARKER)
            } else {
                radius
            };
            run.iter()
                .map(move |&(x, y)| Circle::new((SegmentValue::CenterOf(x), y), r, c.filled()))
        }))
        .map_err(plot_error)?;
    Ok(())
}
