//! Two `--by` columns with few values in the first: one line per value of the first column
//! along the values of the second.

use std::collections::HashMap;

use anyhow::Result;
use plotters::prelude::*;

use super::frame::{
    Area, Categories, Panel, SCORE_DESC, UPPER_X_LABELS, Y_LABELS, YAxis, category_chart, color,
    label, legend, legend_height, panels, score_axes, short,
};
use super::lines::line_with_markers;
use super::{Spec, drawn_score};
use crate::model::columns::Cell;
use crate::model::tally::Group;

/// One line of a series chart: its legend title, its points above (x index, share or count)
/// and below (x index, score).
struct Line {
    title: String,
    up: Vec<(i32, f64)>,
    down: Vec<(i32, f64)>,
}

/// One line per value of the first column along the values of the second: the share of the
/// series' units above, White's score below (`pair`: the bishop-pair report, where the series
/// are "White has the pair" and "Black has the pair", counts are raw and the score is the pair
/// side's).
pub(super) fn series<DB: DrawingBackend>(
    body: &Area<DB>,
    spec: &Spec,
    groups: &[Group],
    unit: &str,
    pair: bool,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let xc = spec.by[1];
    let axis = Categories::distinct(xc, groups.iter().map(|g| &g.keys[1]));
    let lines = lines(spec, groups, &axis, pair);

    let (upper, lower) = panels(body);
    // The legend sits top right over the upper panel: the y axis reaches high enough that
    // no point is drawn under it (the 2600 peak of the bishop-pair report was).
    let plot_height = f64::from(upper.dim_in_pixel().1).max(1.0) - f64::from(UPPER_X_LABELS);
    let free = (legend_height(lines.len()) + 6) as f64 / plot_height.max(1.0);
    let max = lines
        .iter()
        .flat_map(|l| l.up.iter().map(|&(_, y)| y))
        .fold(1e-9, f64::max)
        * 1.05
        / (1.0 - free).max(0.2);
    let up_desc = if pair {
        unit.to_string()
    } else {
        format!("% of the series' {unit}")
    };
    let y = YAxis {
        range: 0.0..max,
        labels: Y_LABELS,
        format: &|v| short(*v),
        desc: &up_desc,
    };
    let mut top = category_chart(&upper, &axis.labels, Panel::Upper, y)?;
    // The bishop-pair report's score is not White's: no colours of White's score there.
    let score_desc = if pair {
        "score of the side with the pair"
    } else {
        SCORE_DESC
    };
    let mut bottom = score_axes(&lower, &axis.labels, &xc.name(), score_desc, !pair)?;
    let mut entries = Vec::new();
    for (i, line) in lines.into_iter().enumerate() {
        let c = color(i);
        line_with_markers(&mut top, &line.up, &axis, c)?;
        line_with_markers(&mut bottom, &line.down, &axis, c)?;
        entries.push((line.title, c));
    }
    legend(&upper, &entries)
}

/// The lines, in the order their first value appears in `groups`, each with its points in
/// the groups' order.
fn lines(spec: &Spec, groups: &[Group], axis: &Categories, pair: bool) -> Vec<Line> {
    let mut members: Vec<(&Cell, Vec<&Group>)> = Vec::new();
    let mut slot: HashMap<&Cell, usize> = HashMap::new();
    for g in groups {
        let i = *slot.entry(&g.keys[0]).or_insert_with(|| {
            members.push((&g.keys[0], Vec::new()));
            members.len() - 1
        });
        members[i].1.push(g);
    }
    members
        .into_iter()
        .map(|(name, members)| line(spec, name, &members, axis, pair))
        .collect()
}

/// The line of the series `name`.
fn line(spec: &Spec, name: &Cell, members: &[&Group], axis: &Categories, pair: bool) -> Line {
    let total: u64 = members.iter().map(|g| g.totals.units(spec.per)).sum();
    let white_has_pair = *name == Cell::Int(1);
    let mut up = Vec::new();
    let mut down = Vec::new();
    for g in members {
        let x = axis.at(&g.keys[1]);
        let u = g.totals.units(spec.per) as f64;
        up.push((
            x,
            if pair {
                u
            } else {
                100.0 * u / total.max(1) as f64
            },
        ));
        let score = drawn_score(g).map(|s| {
            if pair && !white_has_pair {
                100.0 - s
            } else {
                s
            }
        });
        if let Some(s) = score {
            down.push((x, s));
        }
    }
    up.sort_by_key(|p| p.0);
    down.sort_by_key(|p| p.0);
    let title = match (pair, white_has_pair) {
        (true, true) => "White has the pair".to_string(),
        (true, false) => "Black has the pair".to_string(),
        (false, _) => format!("{} = {}", spec.by[0].name(), label(spec.by[0], name)),
    };
    Line { title, up, down }
}
