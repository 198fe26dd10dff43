//! What every chart kind shares: text, colours, the legend, the panels and the axes of a chart
//! with categories along x.

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{
    DiscreteRanged, KeyPointHint, NoDefaultFormatting, Ranged, SegmentValue, ValueFormatter,
};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::font::FONT;
use crate::model::columns::{Cell, Column};
use crate::model::features::Kind;

pub(super) type Area<DB> = DrawingArea<DB, Shift>;

/// A chart with categories along x and a number up.
pub(super) type CategoryChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Slots, RangedCoordf64>>;

/// `n` categories along an axis, each an equal slot: category `i` spans `Exact(i)` to
/// `Exact(i + 1)` (the last ends at `Last`, the axis' end) and its label sits at `CenterOf(i)`.
///
/// plotters' `SegmentedCoord` over an integer range did this for two categories or more, but
/// mapped the one value of a one-category range to half the axis' *length* (not its middle)
/// and gave its slot no width: a heatmap with one row or one column was drawn blank, with its
/// labels piled on an edge.
#[derive(Clone, Copy, Debug)]
pub(super) struct Slots(pub i32);

impl Slots {
    /// Where `at` falls, in slots from the axis' start (`Last`: all of them).
    fn slots(&self, at: &SegmentValue<i32>) -> f64 {
        match at {
            SegmentValue::Exact(i) => f64::from(*i),
            SegmentValue::CenterOf(i) => f64::from(*i) + 0.5,
            SegmentValue::Last => f64::from(self.0),
        }
    }
}

impl Ranged for Slots {
    type FormatOption = NoDefaultFormatting;
    type ValueType = SegmentValue<i32>;

    fn map(&self, at: &SegmentValue<i32>, limit: (i32, i32)) -> i32 {
        let width = f64::from(limit.1 - limit.0) / f64::from(self.0.max(1));
        limit.0 + (self.slots(at) * width).round() as i32
    }

    /// The middles of the slots, evenly thinned to the hint's number.
    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<SegmentValue<i32>> {
        let max = hint.max_num_points();
        if max == 0 || self.0 <= 0 {
            return Vec::new();
        }
        let step = (self.0 as usize).div_ceil(max).max(1);
        (0..self.0)
            .step_by(step)
            .map(SegmentValue::CenterOf)
            .collect()
    }

    fn range(&self) -> Range<SegmentValue<i32>> {
        SegmentValue::Exact(0)..SegmentValue::Last
    }
}

/// The slots' starts and the axis' end, in order (what `Histogram` steps through: a bar spans
/// from its value to the next).
impl DiscreteRanged for Slots {
    fn size(&self) -> usize {
        self.0.max(0) as usize + 1
    }

    fn index_of(&self, at: &SegmentValue<i32>) -> Option<usize> {
        match at {
            SegmentValue::Exact(i) | SegmentValue::CenterOf(i) => {
                usize::try_from(*i).ok().filter(|&i| i < self.size() - 1)
            }
            SegmentValue::Last => Some(self.size() - 1),
        }
    }

    fn from_index(&self, index: usize) -> Option<SegmentValue<i32>> {
        let n = self.size() - 1;
        match index {
            i if i < n => Some(SegmentValue::Exact(i as i32)),
            i if i == n => Some(SegmentValue::Last),
            _ => None,
        }
    }
}

impl ValueFormatter<SegmentValue<i32>> for Slots {
    /// The slot's number; every chart sets its own label formatter ([`segment_label`]).
    fn format(at: &SegmentValue<i32>) -> String {
        match at {
            SegmentValue::Exact(i) | SegmentValue::CenterOf(i) => i.to_string(),
            SegmentValue::Last => String::new(),
        }
    }
}

pub(super) const SCORE_DESC: &str = "White's score";

// White's score in colour: one diverging palette for every chart (docs/conventions.md).

/// What every legend of the score colours says.
pub(super) const SCORE_LEGEND: &str = "White's score: above 50% = White does better";
/// The midpoint of the palette: an even score.
const SCORE_MID: f64 = 50.0;
/// A score this many points from 50% takes the full colour (35% and 65%).
const SCORE_SPAN: f64 = 15.0;
/// White does better (the full colour at 65% and above).
pub(super) const WHITE_BETTER: RGBColor = RGBColor(27, 120, 55);
/// An even score (50%).
pub(super) const EVEN: RGBColor = RGBColor(247, 247, 247);
/// Black does better (the full colour at 35% and below).
pub(super) const BLACK_BETTER: RGBColor = RGBColor(118, 42, 131);
/// No score drawn: no result, or too few games with one.
pub(super) const NO_SCORE: RGBColor = RGBColor(210, 210, 210);
/// The scores of the legends' swatches.
pub(super) const LEGEND_SCORES: [f64; 7] = [35.0, 40.0, 45.0, 50.0, 55.0, 60.0, 65.0];

/// The colour of White's score (in percent): purple under 50%, near white at 50%, green above.
pub(super) fn score_color(score: f64) -> RGBColor {
    let t = ((score - SCORE_MID) / SCORE_SPAN).clamp(-1.0, 1.0);
    let (to, t) = if t >= 0.0 {
        (WHITE_BETTER, t)
    } else {
        (BLACK_BETTER, -t)
    };
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u8;
    RGBColor(mix(EVEN.0, to.0), mix(EVEN.1, to.1), mix(EVEN.2, to.2))
}

/// Black or white, whichever reads better on `fill`.
pub(super) fn ink_on(fill: RGBColor) -> RGBColor {
    let luma = 0.299 * f64::from(fill.0) + 0.587 * f64::from(fill.1) + 0.114 * f64::from(fill.2);
    if luma < 140.0 { WHITE } else { BLACK }
}

/// A swatch's label: `35%-`, `50%`, `65%+`.
fn swatch_label(s: f64) -> String {
    let edge = if s <= SCORE_MID - SCORE_SPAN {
        "-"
    } else if s >= SCORE_MID + SCORE_SPAN {
        "+"
    } else {
        ""
    };
    format!("{s:.0}%{edge}")
}

/// The legend of the score colours in one row, its right edge at `right`, its top at `top`:
/// [`SCORE_LEGEND`], then a swatch per score of [`LEGEND_SCORES`] and one for "no score"
/// (`no_score` says why), each labelled under it.
pub(super) fn score_legend_row<DB: DrawingBackend>(
    area: &Area<DB>,
    right: i32,
    top: i32,
    no_score: &str,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let box_w = 40;
    let n = LEGEND_SCORES.len() as i32;
    let x0 = right - box_w * n;
    text(area, SCORE_LEGEND, (right, top), 13, &BLACK, HPos::Right)?;
    for (i, s) in LEGEND_SCORES.iter().enumerate() {
        let x = x0 + box_w * i as i32;
        swatch(area, (x, top + 20), (box_w - 4, 14), score_color(*s))?;
        outline(area, (x, top + 20), (box_w - 4, 14))?;
        let at = (x + (box_w - 4) / 2, top + 37);
        text(area, &swatch_label(*s), at, 11, &BLACK, HPos::Center)?;
    }
    let y = top + 54;
    swatch(area, (right - 12, y), (12, 12), NO_SCORE)?;
    let grey = RGBColor(60, 60, 60);
    text(area, no_score, (right - 16, y), 11, &grey, HPos::Right)
}

/// The legend of the score colours in a column `width` wide from `top` to `bottom`, for the
/// right of a heat map: [`SCORE_LEGEND`] in three lines, then a bar from 65% (top) to 35%.
pub(super) fn score_legend_column<DB: DrawingBackend>(
    area: &Area<DB>,
    top: i32,
    bottom: i32,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let (title, meaning) = SCORE_LEGEND.split_once(": ").unwrap_or((SCORE_LEGEND, ""));
    text(area, &format!("{title}:"), (5, top), 13, &BLACK, HPos::Left)?;
    let (first, second) = meaning.split_once(" = ").unwrap_or((meaning, ""));
    text(
        area,
        &format!("{first} ="),
        (5, top + 17),
        11,
        &BLACK,
        HPos::Left,
    )?;
    text(area, second, (5, top + 31), 11, &BLACK, HPos::Left)?;
    let (top, steps) = (top + 55, 42);
    let (hi, lo) = (SCORE_MID + SCORE_SPAN, SCORE_MID - SCORE_SPAN);
    for i in 0..steps {
        let s = hi - (hi - lo) * f64::from(i) / f64::from(steps - 1);
        let y0 = top + (bottom - top) * i / steps;
        let y1 = top + (bottom - top) * (i + 1) / steps;
        swatch(area, (15, y0), (25, y1 - y0), score_color(s))?;
    }
    let n = LEGEND_SCORES.len() - 1;
    for (i, s) in LEGEND_SCORES.iter().rev().enumerate() {
        let y = top + (bottom - top) * i as i32 / n as i32 - 7;
        text(area, &swatch_label(*s), (46, y), 12, &BLACK, HPos::Left)?;
    }
    Ok(())
}

/// A thin grey frame around the rectangle at `at` of `size` pixels (a swatch near white).
fn outline<DB: DrawingBackend>(area: &Area<DB>, at: (i32, i32), size: (i32, i32)) -> Result<()>
where
    DB::ErrorType: 'static,
{
    area.draw(&Rectangle::new(
        [at, (at.0 + size.0, at.1 + size.1)],
        RGBColor(160, 160, 160).stroke_width(1),
    ))
    .map_err(plot_error)
}

/// A filled rectangle at `at` of `size` pixels.
pub(super) fn swatch<DB: DrawingBackend>(
    area: &Area<DB>,
    at: (i32, i32),
    size: (i32, i32),
    fill: RGBColor,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    area.draw(&Rectangle::new(
        [at, (at.0 + size.0, at.1 + size.1)],
        fill.filled(),
    ))
    .map_err(plot_error)
}

/// A chart of horizontal bars: a number along x, one row per category (the first of `rows`
/// at the bottom).
pub(super) type BarChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, Slots>>;

/// Draws row `row` of a [`BarChart`] on `body` from 0 to `value`: filled with `fill`, outlined
/// in grey, a sixth of the row's height left free above and below. Returns where the bar's
/// label goes: 6 pixels right of its end, 7 above the row's middle, relative to `body`.
pub(super) fn row_bar<DB: DrawingBackend>(
    body: &Area<DB>,
    chart: &BarChart<'_, DB>,
    row: i32,
    value: f64,
    fill: RGBColor,
) -> Result<(i32, i32)>
where
    DB::ErrorType: 'static,
{
    let base = body.get_base_pixel();
    let (x0, y0) = chart.backend_coord(&(0.0, SegmentValue::Exact(row + 1)));
    let (x1, y1) = chart.backend_coord(&(value, SegmentValue::Exact(row)));
    let gap = ((y1 - y0).abs() / 6).max(1);
    let corners = [
        (x0 - base.0, y0.min(y1) - base.1 + gap),
        (x1 - base.0, y0.max(y1) - base.1 - gap),
    ];
    body.draw(&Rectangle::new(corners, fill.filled()))
        .map_err(plot_error)?;
    body.draw(&Rectangle::new(
        corners,
        RGBColor(120, 120, 120).stroke_width(1),
    ))
    .map_err(plot_error)?;
    let (px, py) = chart.backend_coord(&(value, SegmentValue::CenterOf(row)));
    Ok((px - base.0 + 6, py - base.1 - 7))
}

/// The axes of a [`BarChart`] on `body`: x from 0 to `max`, named `x_desc`, one row per label
/// of `rows` in a left margin `label_width` wide, the x labels `x_height` high.
pub(super) fn bar_axes<'a, DB: DrawingBackend>(
    body: &'a Area<DB>,
    rows: &[String],
    max: f64,
    (label_width, x_height): (u32, u32),
    x_desc: &str,
) -> Result<BarChart<'a, DB>>
where
    DB::ErrorType: 'static,
{
    let n = i32::try_from(rows.len()).unwrap_or(i32::MAX);
    let mut chart = ChartBuilder::on(body)
        .margin_right(20)
        .x_label_area_size(x_height)
        .y_label_area_size(label_width)
        .build_cartesian_2d(0.0..max, Slots(n))
        .map_err(plot_error)?;
    let format = segment_label(rows);
    chart
        .configure_mesh()
        .disable_y_mesh()
        .light_line_style(WHITE)
        .y_labels(rows.len())
        .y_label_formatter(&format)
        .x_label_formatter(&|v| short(*v))
        .x_desc(x_desc)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 15))
        .draw()
        .map_err(plot_error)?;
    Ok(chart)
}

pub(super) fn plot_error<E: std::error::Error + Send + Sync + 'static>(
    e: DrawingAreaErrorKind<E>,
) -> anyhow::Error {
    anyhow!("{e}")
}

/// Draws a line of text; `size` in pixels.
pub(super) fn text<DB: DrawingBackend>(
    area: &Area<DB>,
    s: &str,
    at: (i32, i32),
    size: u32,
    color: &RGBColor,
    h: HPos,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let style = TextStyle::from((FONT, size).into_font())
        .color(color)
        .pos(Pos::new(h, VPos::Top));
    area.draw(&Text::new(s.to_string(), at, style))
        .map_err(plot_error)
}

/// A value as an axis or legend label.
pub(super) fn label(c: Column, v: &Cell) -> String {
    match v {
        Cell::Null => "none".into(),
        v => c.render(v),
    }
}

/// 1234567 -> "1.2M".
pub(super) fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.1}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The `i`th series colour.
pub(super) fn color(i: usize) -> RGBColor {
    const COLORS: [RGBColor; 8] = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(255, 127, 14),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(23, 190, 207),
    ];
    COLORS[i % COLORS.len()]
}

/// A legend drawn by hand (plotters' own legend measures text, which SVG cannot without a
/// font): a coloured line and a label per entry, top right of `area`.
/// How far down from the top of its area a [`legend`] of `entries` lines reaches, in pixels.
pub(super) fn legend_height(entries: usize) -> i32 {
    10 + 20 * entries as i32 + 10
}

pub(super) fn legend<DB: DrawingBackend>(
    area: &Area<DB>,
    entries: &[(String, RGBColor)],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    if entries.is_empty() {
        return Ok(());
    }
    let (w, _) = area.dim_in_pixel();
    let longest = entries
        .iter()
        .map(|(s, _)| s.chars().count())
        .max()
        .unwrap_or(0);
    let box_w = 50 + (longest as i32 * 8);
    let x0 = w as i32 - box_w - 20;
    let y0 = 10;
    let h = legend_height(entries.len()) - y0;
    area.draw(&Rectangle::new(
        [(x0, y0), (x0 + box_w, y0 + h)],
        WHITE.mix(0.85).filled(),
    ))
    .map_err(plot_error)?;
    area.draw(&Rectangle::new(
        [(x0, y0), (x0 + box_w, y0 + h)],
        RGBColor(160, 160, 160).stroke_width(1),
    ))
    .map_err(plot_error)?;
    for (i, (s, c)) in entries.iter().enumerate() {
        let y = y0 + 15 + 20 * i as i32;
        area.draw(&PathElement::new(
            vec![(x0 + 8, y), (x0 + 34, y)],
            c.stroke_width(3),
        ))
        .map_err(plot_error)?;
        text(area, s, (x0 + 42, y - 8), 14, &BLACK, HPos::Left)?;
    }
    Ok(())
}

/// Gap on each side of a bar: none when the bars are only a few pixels wide.
pub(super) fn bar_margin<DB: DrawingBackend>(area: &Area<DB>, n: i32) -> u32 {
    let width = area.dim_in_pixel().0.saturating_sub(80);
    (width / n.max(1) as u32 / 6).min(3)
}

/// Splits the body into an upper panel (counts) and a lower one (scores).
pub(super) fn panels<DB: DrawingBackend>(body: &Area<DB>) -> (Area<DB>, Area<DB>) {
    let (_, h) = body.dim_in_pixel();
    body.split_vertically(h * 55 / 100)
}

/// Category labels on a segmented axis.
pub(super) fn segment_label(labels: &[String]) -> impl Fn(&SegmentValue<i32>) -> String + '_ {
    move |v| match v {
        SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
            labels.get(*i as usize).cloned().unwrap_or_default()
        }
        SegmentValue::Last => String::new(),
    }
}

/// The values of one column along an axis, in order, with their labels and where a line
/// drawn along them must break.
pub(super) struct Categories<'g> {
    pub labels: Vec<String>,
    /// `joins[i]`: values `i` and `i + 1` are neighbours (nothing could lie between them).
    pub joins: Vec<bool>,
    index: HashMap<&'g Cell, i32>,
}

impl<'g> Categories<'g> {
    /// The distinct values among `cells`, sorted.
    pub fn distinct(col: Column, cells: impl Iterator<Item = &'g Cell>) -> Self {
        Self::in_order(col, cells.collect::<BTreeSet<_>>().into_iter().collect())
    }

    /// `cells` in the order given (each once).
    pub fn in_order(col: Column, cells: Vec<&'g Cell>) -> Self {
        let labels = cells.iter().map(|v| label(col, v)).collect();
        let joins = cells
            .windows(2)
            .map(|w| adjacent(col, w[0], w[1]))
            .collect();
        let index = cells
            .iter()
            .enumerate()
            .map(|(i, v)| (*v, i as i32))
            .collect();
        Categories {
            labels,
            joins,
            index,
        }
    }

    pub fn len(&self) -> i32 {
        self.labels.len() as i32
    }

    /// Where `v` is on the axis (0 for a value not on it).
    pub fn at(&self, v: &Cell) -> i32 {
        self.index.get(v).copied().unwrap_or(0)
    }

    /// Whether a line from value `i` to value `i + 1` may be drawn.
    pub fn joined(&self, i: i32) -> bool {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.joins.get(i))
            .copied()
            .unwrap_or(false)
    }
}

/// The distance between neighbouring values of a column whose values are ordered numbers
/// (None: the numbers name categories, like a pawn mask, and have no gaps).
fn step(col: Column) -> Option<i64> {
    match col {
        Column::PlyBucket => Some(10),
        Column::EloBand => Some(100),
        Column::Decade => Some(10),
        Column::Feature(f, _) if f.kind() == Kind::Squares => None,
        Column::GameId
        | Column::Pawns(_)
        | Column::Pieceset
        | Column::PawnFen
        | Column::Structure => None,
        _ => Some(1),
    }
}

/// Whether the values of `col` are ordered numbers, so that an axis of them has a start and
/// an end (not names of categories in some order).
pub(super) fn ordered(col: Column) -> bool {
    step(col).is_some()
}

/// Whether `b` follows `a` with no possible value between them: a missing number is a gap, and
/// so is the step from "none" (no value) to a value. Values that name categories (named
/// structures, piece-sets, pawn masks) have no neighbours: a line between two of them would
/// draw a trend that is not there.
fn adjacent(col: Column, a: &Cell, b: &Cell) -> bool {
    match (a, b) {
        (Cell::Int(x), Cell::Int(y)) => step(col).is_some_and(|s| y - x == s),
        (Cell::Text(_), Cell::Text(_)) => ordered(col),
        _ => false,
    }
}

/// The y axis of a [`CategoryChart`].
pub(super) struct YAxis<'a> {
    pub range: Range<f64>,
    pub labels: usize,
    pub format: &'a dyn Fn(&f64) -> String,
    pub desc: &'a str,
}

/// Which panel a [`CategoryChart`] fills: the upper one leaves the x axis unnamed (the lower
/// one, under it, names it).
pub(super) enum Panel<'a> {
    Upper,
    Lower { x_desc: &'a str },
}

/// The height of the x labels under the upper panel of a [`category_chart`], in pixels.
pub(super) const UPPER_X_LABELS: u32 = 40;

/// Builds a chart with `labels` along x, and draws its axes (at most 25 x labels, no vertical
/// grid lines, white minor grid lines).
pub(super) fn category_chart<'a, DB: DrawingBackend>(
    area: &'a Area<DB>,
    labels: &[String],
    panel: Panel,
    y: YAxis,
) -> Result<CategoryChart<'a, DB>>
where
    DB::ErrorType: 'static,
{
    let n = labels.len() as i32;
    let mut builder = ChartBuilder::on(area);
    builder.margin_right(10).y_label_area_size(70);
    match panel {
        Panel::Upper => builder.x_label_area_size(UPPER_X_LABELS),
        Panel::Lower { .. } => builder.margin_top(10).x_label_area_size(50),
    };
    let mut chart = builder
        .build_cartesian_2d(Slots(n), y.range)
        .map_err(plot_error)?;
    let format = segment_label(labels);
    let mut mesh = chart.configure_mesh();
    mesh.disable_x_mesh()
        .light_line_style(WHITE)
        .x_labels(labels.len().min(25))
        .x_label_formatter(&format)
        .y_labels(y.labels)
        .y_label_formatter(y.format)
        .y_desc(y.desc)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15));
    if let Panel::Lower { x_desc } = panel {
        mesh.x_desc(x_desc);
    }
    mesh.draw().map_err(plot_error)?;
    Ok(chart)
}

/// plotters' number of y labels when a chart does not choose.
pub(super) const Y_LABELS: usize = 11;

/// The lower panel: categories along x, a score from 0% to 100% up, a grey line at 50%. When
/// the score is White's (`whites`), the area above the line is tinted with the colour of
/// [`WHITE_BETTER`], the area under it with that of [`BLACK_BETTER`], and [`SCORE_LEGEND`] is
/// written top left.
pub(super) fn score_axes<'a, DB: DrawingBackend>(
    area: &'a Area<DB>,
    labels: &[String],
    x_desc: &str,
    y_desc: &str,
    whites: bool,
) -> Result<CategoryChart<'a, DB>>
where
    DB::ErrorType: 'static,
{
    let y = YAxis {
        range: 0.0..100.0,
        labels: 6,
        format: &|v| format!("{v:.0}%"),
        desc: y_desc,
    };
    let mut chart = category_chart(area, labels, Panel::Lower { x_desc }, y)?;
    if whites {
        let (first, last) = (SegmentValue::Exact(0), SegmentValue::Last);
        for (from, to, c) in [(50.0, 100.0, WHITE_BETTER), (0.0, 50.0, BLACK_BETTER)] {
            chart
                .draw_series([Rectangle::new(
                    [(first.clone(), to), (last.clone(), from)],
                    c.mix(0.07).filled(),
                )])
                .map_err(plot_error)?;
        }
        let (x, y) = chart.backend_coord(&(SegmentValue::Exact(0), 100.0));
        let base = area.get_base_pixel();
        let at = (x - base.0 + 8, y - base.1 + 5);
        text(
            area,
            SCORE_LEGEND,
            at,
            12,
            &RGBColor(60, 60, 60),
            HPos::Left,
        )?;
    }
    chart
        .draw_series(LineSeries::new(
            [(SegmentValue::Exact(0), 50.0), (SegmentValue::Last, 50.0)],
            RGBColor(150, 150, 150).stroke_width(1),
        ))
        .map_err(plot_error)?;
    Ok(chart)
}
