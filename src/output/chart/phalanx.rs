//! The phalanx report: share of positions with at least one duo, trio and quart, by bucket,
//! over bars of the units in each bucket.

use anyhow::Result;
use plotters::prelude::*;

use super::Spec;
use super::frame::{
    Area, Categories, Panel, Y_LABELS, YAxis, bar_margin, category_chart, color, legend, panels,
    plot_error, short,
};
use super::lines::line_with_markers;
use crate::model::columns::Cell;
use crate::model::tally::Group;

/// Per bucket: its units, and the units with at least one duo, trio and quart.
struct Counts {
    totals: Vec<u64>,
    with: Vec<[u64; 3]>,
}

/// Counts the groups (keys: ply_bucket, duo_count, trio_count, quart_count) by bucket.
fn count(spec: &Spec, groups: &[Group], buckets: &Categories) -> Counts {
    let n = buckets.len() as usize;
    let mut totals = vec![0u64; n];
    let mut with = vec![[0u64; 3]; n];
    for g in groups {
        let i = buckets.at(&g.keys[0]) as usize;
        let u = g.totals.units(spec.per);
        totals[i] += u;
        for (k, count) in with[i].iter_mut().enumerate() {
            if matches!(g.keys.get(k + 1), Some(Cell::Int(c)) if *c > 0) {
                *count += u;
            }
        }
    }
    Counts { totals, with }
}

/// The phalanx report: share of positions with at least one duo, trio and quart, by bucket.
pub(super) fn phalanx<DB: DrawingBackend>(
    body: &Area<DB>,
    spec: &Spec,
    groups: &[Group],
    unit: &str,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let buckets = Categories::distinct(spec.by[0], groups.iter().map(|g| &g.keys[0]));
    let counts = count(spec, groups, &buckets);
    let (upper, lower) = panels(body);
    shares(&upper, spec, &buckets, &counts, unit)?;
    units(&lower, spec, &buckets, &counts.totals, unit)
}

/// The upper panel: a line per phalanx size, the share of each bucket's units with one.
fn shares<DB: DrawingBackend>(
    upper: &Area<DB>,
    spec: &Spec,
    buckets: &Categories,
    counts: &Counts,
    unit: &str,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let shares: Vec<Vec<(i32, f64)>> = (0..3)
        .map(|k| {
            (0..counts.totals.len())
                .filter(|&i| counts.totals[i] > 0)
                .map(|i| {
                    let share = 100.0 * counts.with[i][k] as f64 / counts.totals[i] as f64;
                    (i as i32, share)
                })
                .collect()
        })
        .collect();
    let max = shares
        .iter()
        .flatten()
        .map(|&(_, y)| y)
        .fold(1.0, f64::max)
        .min(100.0)
        * 1.1;
    let desc = format!("% of {unit} with at least one");
    let y = YAxis {
        range: 0.0..max,
        labels: Y_LABELS,
        format: &|v| format!("{v:.0}"),
        desc: &desc,
    };
    let mut top = category_chart(upper, &buckets.labels, Panel::Upper, y)?;
    let side = spec.by[1].name();
    let side = side.split('_').next().unwrap_or("");
    let mut entries = Vec::new();
    for (k, (points, name)) in shares.iter().zip(["duo", "trio", "quart"]).enumerate() {
        let c = color(k);
        line_with_markers(&mut top, points, buckets, c)?;
        entries.push((format!("{side} {name}"), c));
    }
    legend(upper, &entries)
}

/// The lower panel: bars of the units in each bucket.
fn units<DB: DrawingBackend>(
    lower: &Area<DB>,
    spec: &Spec,
    buckets: &Categories,
    totals: &[u64],
    unit: &str,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let max = totals.iter().copied().max().unwrap_or(1).max(1) as f64 * 1.08;
    let y = YAxis {
        range: 0.0..max,
        labels: Y_LABELS,
        format: &|v| short(*v),
        desc: unit,
    };
    let x_desc = spec.by[0].name();
    let panel = Panel::Lower { x_desc: &x_desc };
    let mut bottom = category_chart(lower, &buckets.labels, panel, y)?;
    bottom
        .draw_series(
            Histogram::vertical(&bottom)
                .style(RGBColor(150, 150, 150).filled())
                .margin(bar_margin(lower, buckets.len()))
                .data(
                    totals
                        .iter()
                        .enumerate()
                        .map(|(i, &u)| (i as i32, u as f64)),
                ),
        )
        .map_err(plot_error)?;
    Ok(())
}
