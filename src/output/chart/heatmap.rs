//! Two `--by` columns with many values in the first: White's score as the colour of each cell.

use anyhow::Result;
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use plotters::style::text_anchor::HPos;

use super::font::FONT;
use super::frame::{
    Area, Categories, NO_SCORE, Slots, ink_on, plot_error, score_color, score_legend_column,
    segment_label, short, text,
};
use super::{MIN_GAMES_FOR_SCORE, Spec, drawn_score};
use crate::model::tally::Group;
use crate::output::table::score_text;

/// A chart with categories along both axes.
type Grid<'a, DB> = ChartContext<'a, DB, Cartesian2d<Slots, Slots>>;

/// The fill of a cell whose score is not drawn (too few games).
const FEW_GAMES: RGBColor = NO_SCORE;

/// The fill of a cell without any group.
const NO_DATA: RGBColor = RGBColor(150, 150, 150);

/// White's score as the colour of each (second column, first column) cell.
pub(super) fn heatmap<DB: DrawingBackend>(
    body: &Area<DB>,
    spec: &Spec,
    groups: &[Group],
    unit: &str,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let (yc, xc) = (spec.by[0], spec.by[1]);
    let xs = Categories::distinct(xc, groups.iter().map(|g| &g.keys[1]));
    let ys = Categories::distinct(yc, groups.iter().map(|g| &g.keys[0]));
    let (plot, scale) = body.split_horizontally(body.dim_in_pixel().0 - 120);
    let mut chart = grid(&plot, &xs, &ys, &xc.name(), &yc.name())?;
    let (pw, ph) = plot.dim_in_pixel();
    let cell_w = (pw as i32 - 90) / xs.len().max(1);
    let cell_h = (ph as i32 - 60) / ys.len().max(1);
    // Room for "66.7%" and the units under it.
    let written = cell_w >= 52 && cell_h >= 30;
    let mut empty = vec![vec![true; ys.len() as usize]; xs.len() as usize];
    for g in groups {
        empty[xs.at(&g.keys[1]) as usize][ys.at(&g.keys[0]) as usize] = false;
    }
    for (x, column) in empty.iter().enumerate() {
        for (y, _) in column.iter().enumerate().filter(|(_, e)| **e) {
            fill_cell(&mut chart, (x as i32, y as i32), NO_DATA)?;
        }
    }
    for g in groups {
        let at = (xs.at(&g.keys[1]), ys.at(&g.keys[0]));
        let fill = drawn_score(g).map_or(FEW_GAMES, score_color);
        fill_cell(&mut chart, at, fill)?;
        if written {
            write_cell(&plot, &chart, at, g, spec, fill)?;
        }
    }
    color_scale(&scale, unit)
}

/// Builds the chart of the cells and draws its axes.
fn grid<'a, DB: DrawingBackend>(
    plot: &'a Area<DB>,
    xs: &Categories,
    ys: &Categories,
    x_desc: &str,
    y_desc: &str,
) -> Result<Grid<'a, DB>>
where
    DB::ErrorType: 'static,
{
    let (nx, ny) = (xs.len(), ys.len());
    let mut chart = ChartBuilder::on(plot)
        .margin_right(10)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(Slots(nx), Slots(ny))
        .map_err(plot_error)?;
    let fx = segment_label(&xs.labels);
    let fy = segment_label(&ys.labels);
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(xs.labels.len().min(25))
        .y_labels(ys.labels.len().min(30))
        .x_label_formatter(&fx)
        .y_label_formatter(&fy)
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .draw()
        .map_err(plot_error)?;
    Ok(chart)
}

/// Fills the cell at (x, y).
fn fill_cell<DB: DrawingBackend>(
    chart: &mut Grid<DB>,
    (x, y): (i32, i32),
    fill: RGBColor,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    chart
        .draw_series([Rectangle::new(
            [
                (SegmentValue::Exact(x), SegmentValue::Exact(y)),
                (SegmentValue::Exact(x + 1), SegmentValue::Exact(y + 1)),
            ],
            fill.filled(),
        )])
        .map_err(plot_error)?;
    Ok(())
}

/// Writes a group's score and units in its cell (filled with `fill`).
fn write_cell<DB: DrawingBackend>(
    plot: &Area<DB>,
    chart: &Grid<DB>,
    (x, y): (i32, i32),
    g: &Group,
    spec: &Spec,
    fill: RGBColor,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let (px, py) = chart.backend_coord(&(SegmentValue::CenterOf(x), SegmentValue::CenterOf(y)));
    let base = plot.get_base_pixel();
    let at = (px - base.0, py - base.1);
    let s = g
        .totals
        .white_score()
        .map_or("-".to_string(), |s| format!("{}%", score_text(Some(s))));
    // White text on the darkest cells.
    let ink = ink_on(fill);
    let ink2 = if ink == WHITE {
        WHITE
    } else {
        RGBColor(60, 60, 60)
    };
    text(plot, &s, (at.0, at.1 - 14), 14, &ink, HPos::Center)?;
    let u = short(g.totals.units(spec.per) as f64);
    text(plot, &u, (at.0, at.1 + 2), 11, &ink2, HPos::Center)
}

/// The colour scale right of the cells (the palette and legend of every chart), and what the
/// cells say.
fn color_scale<DB: DrawingBackend>(scale: &Area<DB>, unit: &str) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let (_, sh) = scale.dim_in_pixel();
    let bottom = sh as i32 - 90;
    score_legend_column(scale, 0, bottom)?;
    let grey = RGBColor(60, 60, 60);
    let note = |s: &str, dy: i32| text(scale, s, (5, bottom + dy), 11, &grey, HPos::Left);
    note("cells: White's score,", 12)?;
    note(unit, 26)?;
    swatch(
        scale,
        FEW_GAMES,
        &format!("under {MIN_GAMES_FOR_SCORE} games"),
        bottom + 46,
    )?;
    swatch(scale, NO_DATA, "no data", bottom + 64)
}

/// A square of `fill` and what it means, at height `y` of the colour scale.
fn swatch<DB: DrawingBackend>(scale: &Area<DB>, fill: RGBColor, meaning: &str, y: i32) -> Result<()>
where
    DB::ErrorType: 'static,
{
    scale
        .draw(&Rectangle::new([(5, y), (17, y + 12)], fill.filled()))
        .map_err(plot_error)?;
    let black = RGBColor(60, 60, 60);
    text(scale, meaning, (21, y), 11, &black, HPos::Left)
}
