//! Charts of a statistics result, drawn with plotters as SVG or PNG.
//!
//! One `--by` column gives bars of the counted units over a line of White's score; two give a
//! line per value of the first column (share of that series' units, and White's score) or, with
//! many series, a heat map of White's score. Reports may pick their own chart.
//!
//! SVG needs no font file: text is written as SVG `<text>` and every layout decision here uses
//! fixed sizes (plotters' legend and caption helpers, which measure text, are not used). PNG
//! rasterises text, so it needs a TrueType font ([`load_font`]).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::OnceLock;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{SegmentValue, SegmentedCoord};
use plotters::coord::types::{RangedCoordf64, RangedCoordi32};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::columns::{Cell, Column};
use super::engine::{Group, Per};
use super::report::ChartKind;
use crate::command::UsageError;

const SIZE: (u32, u32) = (1000, 700);
/// Scores of groups with fewer games are too noisy to draw (they stay in the CSV).
const MIN_GAMES_FOR_SCORE: u64 = 30;

/// A group's White score, when it has enough games to be drawn.
fn drawn_score(g: &Group) -> Option<f64> {
    if g.totals.games < MIN_GAMES_FOR_SCORE {
        return None;
    }
    g.totals.white_score()
}
const FONT: &str = "sans-serif";

/// What to draw, besides the data.
pub struct Spec<'a> {
    pub by: &'a [Column],
    pub per: Per,
    pub kind: ChartKind,
    pub title: &'a str,
    pub subtitle: &'a str,
}

/// Refuses, before any work, a chart that cannot be drawn.
pub fn check(by: &[Column], kind: ChartKind) -> Result<()> {
    if kind == ChartKind::Auto && !(1..=2).contains(&by.len()) {
        return Err(UsageError(format!(
            "--chart draws one or two --by columns (or a --report), not {}",
            by.len()
        ))
        .into());
    }
    Ok(())
}

/// Files tried, in order, for the PNG font (the environment variable `PAWNDEX_FONT`, when set,
/// is the only one tried).
const FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/local/share/fonts/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "/Library/Fonts/Arial.ttf",
    "C:\\Windows\\Fonts\\arial.ttf",
];

/// Finds a TrueType font and registers it as plotters' sans-serif (once per process).
pub fn load_font() -> Result<()> {
    static LOADED: OnceLock<Result<(), String>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            let candidates: Vec<String> = match std::env::var("PAWNDEX_FONT") {
                Ok(p) => vec![p],
                Err(_) => FONT_PATHS.iter().map(|s| s.to_string()).collect(),
            };
            for path in &candidates {
                let Ok(bytes) = std::fs::read(path) else {
                    continue;
                };
                // plotters keeps the font for the whole process.
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font(FONT, FontStyle::Normal, bytes).is_ok() {
                    return Ok(());
                }
            }
            Err(format!(
                "PNG charts need a TrueType font and none was found (looked for {}); set \
                 PAWNDEX_FONT to a .ttf file, or draw SVG, which needs no font",
                candidates.join(", ")
            ))
        })
        .clone()
        .map_err(|e| anyhow!(e))
}

pub fn draw_svg(path: &Path, spec: &Spec, groups: &[Group]) -> Result<()> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    draw(&root, spec, groups)?;
    root.present().map_err(plot_error)
}

pub fn draw_png(path: &Path, spec: &Spec, groups: &[Group]) -> Result<()> {
    load_font()?;
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    draw(&root, spec, groups)?;
    root.present().map_err(plot_error)
}

fn plot_error<E: std::error::Error + Send + Sync + 'static>(
    e: DrawingAreaErrorKind<E>,
) -> anyhow::Error {
    anyhow!("{e}")
}

type Area<DB> = DrawingArea<DB, Shift>;

fn draw<DB: DrawingBackend>(root: &Area<DB>, spec: &Spec, groups: &[Group]) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(plot_error)?;
    let (head, body) = root.split_vertically(70);
    text(&head, spec.title, (20, 12), 26, &BLACK, HPos::Left)?;
    text(
        &head,
        spec.subtitle,
        (20, 46),
        14,
        &RGBColor(90, 90, 90),
        HPos::Left,
    )?;
    if groups.is_empty() {
        let (w, h) = body.dim_in_pixel();
        let at = (w as i32 / 2, h as i32 / 2);
        return text(&body, "No positions matched", at, 24, &BLACK, HPos::Center);
    }
    let body = body.margin(5, 15, 10, 25);
    let unit = match spec.per {
        Per::Position => "positions",
        Per::Game => "games",
    };
    match (spec.kind, spec.by.len()) {
        (ChartKind::Phalanx, _) => phalanx(&body, spec, groups, unit),
        (ChartKind::Structures, _) => structures(&body, spec, groups, unit),
        (ChartKind::Heatmap, _) => heatmap(&body, spec, groups, unit),
        (ChartKind::BishopPair, _) => series(&body, spec, groups, unit, true),
        (_, 1) => bars(&body, spec, groups, unit),
        (_, _) => {
            let first: BTreeSet<&Cell> = groups.iter().map(|g| &g.keys[0]).collect();
            if first.len() <= 8 {
                series(&body, spec, groups, unit, false)
            } else {
                heatmap(&body, spec, groups, unit)
            }
        }
    }
}

/// Draws a line of text; `size` in pixels.
fn text<DB: DrawingBackend>(
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

const SCORE_DESC: &str = "White's score";

/// A value as an axis or legend label.
fn label(c: Column, v: &Cell) -> String {
    match v {
        Cell::Null => "none".into(),
        v => c.render(v),
    }
}

/// 1234567 -> "1.2M".
fn short(v: f64) -> String {
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

fn color(i: usize) -> RGBColor {
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
fn legend<DB: DrawingBackend>(area: &Area<DB>, entries: &[(String, RGBColor)]) -> Result<()>
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
    let h = 20 * entries.len() as i32 + 10;
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
fn bar_margin<DB: DrawingBackend>(area: &Area<DB>, n: i32) -> u32 {
    let width = area.dim_in_pixel().0.saturating_sub(80);
    (width / n.max(1) as u32 / 6).min(3)
}

/// Radius of the dots on a line: none when they would merge.
fn marker(n: i32) -> u32 {
    match n {
        ..=30 => 3,
        31..=60 => 2,
        _ => 0,
    }
}

/// Splits the body into an upper panel (counts) and a lower one (scores).
fn panels<DB: DrawingBackend>(body: &Area<DB>) -> (Area<DB>, Area<DB>) {
    let (_, h) = body.dim_in_pixel();
    body.split_vertically(h * 55 / 100)
}

/// Category labels on a segmented axis.
fn segment_label(labels: &[String]) -> impl Fn(&SegmentValue<i32>) -> String + '_ {
    move |v| match v {
        SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
            labels.get(*i as usize).cloned().unwrap_or_default()
        }
        SegmentValue::Last => String::new(),
    }
}

/// Bars of units per value, over a line of White's score.
fn bars<DB: DrawingBackend>(
    body: &Area<DB>,
    spec: &Spec,
    groups: &[Group],
    unit: &str,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let col = spec.by[0];
    let labels: Vec<String> = groups.iter().map(|g| label(col, &g.keys[0])).collect();
    let n = labels.len() as i32;
    let units: Vec<f64> = groups
        .iter()
        .map(|g| g.totals.units(spec.per) as f64)
        .collect();
    let max = units.iter().copied().fold(1.0, f64::max) * 1.08;
    let (upper, lower) = panels(body);
    let label_count = labels.len().min(25);
    let format = segment_label(&labels);

    let mut top = ChartBuilder::on(&upper)
        .margin_right(10)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((0..n - 1).into_segmented(), 0.0..max)
        .map_err(plot_error)?;
    top.configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE)
        .x_labels(label_count)
        .x_label_formatter(&format)
        .y_label_formatter(&|v| short(*v))
        .y_desc(unit)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .draw()
        .map_err(plot_error)?;
    top.draw_series(
        Histogram::vertical(&top)
            .style(color(0).mix(0.8).filled())
            .margin(bar_margin(&upper, n))
            .data(units.iter().enumerate().map(|(i, &u)| (i as i32, u))),
    )
    .map_err(plot_error)?;

    let scores: Vec<(SegmentValue<i32>, f64)> = groups
        .iter()
        .enumerate()
        .filter_map(|(i, g)| Some((SegmentValue::CenterOf(i as i32), drawn_score(g)?)))
        .collect();
    let mut bottom = score_axes(&lower, n, &format, label_count, &col.name(), SCORE_DESC)?;
    bottom
        .draw_series(LineSeries::new(
            scores.iter().cloned(),
            color(1).stroke_width(2),
        ))
        .map_err(plot_error)?;
    bottom
        .draw_series(
            scores
                .iter()
                .map(|(x, y)| Circle::new((x.clone(), *y), marker(n), color(1).filled())),
        )
        .map_err(plot_error)?;
    Ok(())
}

type ScoreChart<'a, DB> =
    ChartContext<'a, DB, Cartesian2d<SegmentedCoord<RangedCoordi32>, RangedCoordf64>>;

/// The lower panel: categories along x, a score from 0 to 1 up, a grey line at 0.5.
fn score_axes<'a, DB: DrawingBackend>(
    area: &'a Area<DB>,
    n: i32,
    format: &dyn Fn(&SegmentValue<i32>) -> String,
    label_count: usize,
    x_desc: &str,
    y_desc: &str,
) -> Result<ScoreChart<'a, DB>>
where
    DB::ErrorType: 'static,
{
    let mut chart = ChartBuilder::on(area)
        .margin_right(10)
        .margin_top(10)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d((0..n - 1).into_segmented(), 0.0..1.0)
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE)
        .x_labels(label_count)
        .x_label_formatter(format)
        .y_labels(6)
        .y_label_formatter(&|v| format!("{v:.1}"))
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .draw()
        .map_err(plot_error)?;
    chart
        .draw_series(LineSeries::new(
            [(SegmentValue::Exact(0), 0.5), (SegmentValue::Last, 0.5)],
            RGBColor(150, 150, 150).stroke_width(1),
        ))
        .map_err(plot_error)?;
    Ok(chart)
}

/// A point of a series chart: x index, upper-panel value, score.
type SeriesPoint = (i32, f64, Option<f64>);

/// One line per value of the first column along the values of the second: the share of the
/// series' units above, White's score below (`pair`: the bishop-pair report, where the series
/// are "White has the pair" and "Black has the pair", counts are raw and the score is the pair
/// side's).
fn series<DB: DrawingBackend>(
    body: &Area<DB>,
    spec: &Spec,
    groups: &[Group],
    unit: &str,
    pair: bool,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let (sc, xc) = (spec.by[0], spec.by[1]);
    let xs: Vec<&Cell> = groups
        .iter()
        .map(|g| &g.keys[1])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let labels: Vec<String> = xs.iter().map(|v| label(xc, v)).collect();
    let n = labels.len() as i32;
    let mut names: Vec<&Cell> = Vec::new();
    for g in groups {
        if !names.contains(&&g.keys[0]) {
            names.push(&g.keys[0]);
        }
    }
    // Per series: its title and (x index, y, score) points.
    let lines: Vec<(String, Vec<SeriesPoint>)> = names
        .iter()
        .map(|name| {
            let members: Vec<&Group> = groups.iter().filter(|g| &g.keys[0] == *name).collect();
            let total: u64 = members.iter().map(|g| g.totals.units(spec.per)).sum();
            let white_has_pair = **name == Cell::Int(1);
            let points = members
                .iter()
                .map(|g| {
                    let x = xs.iter().position(|v| *v == &g.keys[1]).unwrap_or(0) as i32;
                    let u = g.totals.units(spec.per) as f64;
                    let y = if pair {
                        u
                    } else {
                        100.0 * u / total.max(1) as f64
                    };
                    let score =
                        drawn_score(g).map(|s| if pair && !white_has_pair { 1.0 - s } else { s });
                    (x, y, score)
                })
                .collect();
            let title = if pair {
                if white_has_pair {
                    "White has the pair".to_string()
                } else {
                    "Black has the pair".to_string()
                }
            } else {
                format!("{} = {}", sc.name(), label(sc, name))
            };
            (title, points)
        })
        .collect();

    let max = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|&(_, y, _)| y))
        .fold(1e-9, f64::max)
        * 1.1;
    let (upper, lower) = panels(body);
    let label_count = labels.len().min(25);
    let format = segment_label(&labels);
    let up_desc = if pair {
        unit.to_string()
    } else {
        format!("% of the series' {unit}")
    };
    let mut top = ChartBuilder::on(&upper)
        .margin_right(10)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((0..n - 1).into_segmented(), 0.0..max)
        .map_err(plot_error)?;
    top.configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE)
        .x_labels(label_count)
        .x_label_formatter(&format)
        .y_label_formatter(&|v| short(*v))
        .y_desc(up_desc)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .draw()
        .map_err(plot_error)?;
    let score_desc = if pair {
        "score of the side with the pair"
    } else {
        SCORE_DESC
    };
    let mut bottom = score_axes(&lower, n, &format, label_count, &xc.name(), score_desc)?;
    let mut entries = Vec::new();
    for (i, (title, points)) in lines.iter().enumerate() {
        let c = color(i);
        let up: Vec<(SegmentValue<i32>, f64)> = points
            .iter()
            .map(|&(x, y, _)| (SegmentValue::CenterOf(x), y))
            .collect();
        top.draw_series(LineSeries::new(up.iter().cloned(), c.stroke_width(2)))
            .map_err(plot_error)?;
        top.draw_series(
            up.iter()
                .map(|p| Circle::new(p.clone(), marker(n), c.filled())),
        )
        .map_err(plot_error)?;
        let down: Vec<(SegmentValue<i32>, f64)> = points
            .iter()
            .filter_map(|&(x, _, s)| Some((SegmentValue::CenterOf(x), s?)))
            .collect();
        bottom
            .draw_series(LineSeries::new(down.iter().cloned(), c.stroke_width(2)))
            .map_err(plot_error)?;
        bottom
            .draw_series(
                down.iter()
                    .map(|p| Circle::new(p.clone(), marker(n), c.filled())),
            )
            .map_err(plot_error)?;
        entries.push((title.clone(), c));
    }
    legend(&upper, &entries)
}

/// White's score as the colour of each (second column, first column) cell.
fn heatmap<DB: DrawingBackend>(
    body: &Area<DB>,
    spec: &Spec,
    groups: &[Group],
    unit: &str,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let (yc, xc) = (spec.by[0], spec.by[1]);
    let xs: Vec<&Cell> = groups
        .iter()
        .map(|g| &g.keys[1])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let ys: Vec<&Cell> = groups
        .iter()
        .map(|g| &g.keys[0])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let xl: Vec<String> = xs.iter().map(|v| label(xc, v)).collect();
    let yl: Vec<String> = ys.iter().map(|v| label(yc, v)).collect();
    let (nx, ny) = (xl.len() as i32, yl.len() as i32);
    let (plot, scale) = body.split_horizontally(body.dim_in_pixel().0 - 120);
    let mut chart = ChartBuilder::on(&plot)
        .margin_right(10)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d((0..nx - 1).into_segmented(), (0..ny - 1).into_segmented())
        .map_err(plot_error)?;
    let fx = segment_label(&xl);
    let fy = segment_label(&yl);
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(xl.len().min(25))
        .y_labels(yl.len().min(30))
        .x_label_formatter(&fx)
        .y_label_formatter(&fy)
        .x_desc(xc.name())
        .y_desc(yc.name())
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .draw()
        .map_err(plot_error)?;
    let (pw, ph) = plot.dim_in_pixel();
    let cell_w = (pw as i32 - 90) / nx.max(1);
    let cell_h = (ph as i32 - 60) / ny.max(1);
    for g in groups {
        let x = xs.iter().position(|v| *v == &g.keys[1]).unwrap_or(0) as i32;
        let y = ys.iter().position(|v| *v == &g.keys[0]).unwrap_or(0) as i32;
        let score = g.totals.white_score();
        let fill = drawn_score(g).map_or(RGBColor(210, 210, 210), score_color);
        chart
            .draw_series([Rectangle::new(
                [
                    (SegmentValue::Exact(x), SegmentValue::Exact(y)),
                    (SegmentValue::Exact(x + 1), SegmentValue::Exact(y + 1)),
                ],
                fill.filled(),
            )])
            .map_err(plot_error)?;
        if cell_w >= 44 && cell_h >= 30 {
            let (px, py) =
                chart.backend_coord(&(SegmentValue::CenterOf(x), SegmentValue::CenterOf(y)));
            let base = plot.get_base_pixel();
            let at = (px - base.0, py - base.1);
            let s = score.map_or("-".to_string(), |s| format!("{s:.2}"));
            // White text on the darkest cells.
            let dark = drawn_score(g).is_some_and(|s| (s - 0.5).abs() > 0.14);
            let (ink, ink2) = if dark {
                (WHITE, WHITE)
            } else {
                (BLACK, RGBColor(60, 60, 60))
            };
            text(&plot, &s, (at.0, at.1 - 14), 14, &ink, HPos::Center)?;
            let u = short(g.totals.units(spec.per) as f64);
            text(&plot, &u, (at.0, at.1 + 2), 11, &ink2, HPos::Center)?;
        }
    }
    // Colour scale: the colours vary from 0.3 to 0.7 and are flat beyond.
    let (_, sh) = scale.dim_in_pixel();
    let (top, bottom) = (35, sh as i32 - 90);
    text(&scale, "White's score", (5, 0), 13, &BLACK, HPos::Left)?;
    let steps = 40;
    for i in 0..steps {
        let s = 0.7 - 0.4 * f64::from(i) / f64::from(steps - 1);
        let y0 = top + (bottom - top) * i / steps;
        let y1 = top + (bottom - top) * (i + 1) / steps;
        scale
            .draw(&Rectangle::new(
                [(15, y0), (40, y1)],
                score_color(s).filled(),
            ))
            .map_err(plot_error)?;
    }
    for (s, frac) in [
        ("0.70+", 0.0),
        ("0.60", 0.25),
        ("0.50", 0.5),
        ("0.40", 0.75),
        ("0.30-", 1.0),
    ] {
        let y = top + ((bottom - top) as f64 * frac) as i32 - 7;
        text(&scale, s, (46, y), 13, &BLACK, HPos::Left)?;
    }
    let grey = RGBColor(60, 60, 60);
    text(
        &scale,
        "cells: score,",
        (5, bottom + 12),
        11,
        &grey,
        HPos::Left,
    )?;
    text(&scale, unit, (5, bottom + 26), 11, &grey, HPos::Left)?;
    text(
        &scale,
        "grey: under",
        (5, bottom + 46),
        11,
        &grey,
        HPos::Left,
    )?;
    text(
        &scale,
        &format!("{MIN_GAMES_FOR_SCORE} games"),
        (5, bottom + 60),
        11,
        &grey,
        HPos::Left,
    )
}

/// Red (Black scores) through white to green (White scores).
fn score_color(s: f64) -> RGBColor {
    let s = s.clamp(0.0, 1.0);
    let mix = |a: (f64, f64, f64), b: (f64, f64, f64), t: f64| {
        RGBColor(
            (a.0 + (b.0 - a.0) * t).round() as u8,
            (a.1 + (b.1 - a.1) * t).round() as u8,
            (a.2 + (b.2 - a.2) * t).round() as u8,
        )
    };
    let (red, white, green) = (
        (202.0, 0.0, 32.0),
        (247.0, 247.0, 247.0),
        (26.0, 150.0, 65.0),
    );
    // Scores of real groups sit near 0.5: stretch 0.3..0.7 over the whole scale.
    let t = ((s - 0.5) / 0.2).clamp(-1.0, 1.0);
    if t < 0.0 {
        mix(white, red, -t)
    } else {
        mix(white, green, t)
    }
}

/// The phalanx report: share of positions with at least one duo, trio and quart, by bucket.
fn phalanx<DB: DrawingBackend>(
    body: &Area<DB>,
    spec: &Spec,
    groups: &[Group],
    unit: &str,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    // keys: ply_bucket, duo_count, trio_count, quart_count.
    let buckets: Vec<&Cell> = groups
        .iter()
        .map(|g| &g.keys[0])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let labels: Vec<String> = buckets.iter().map(|v| label(spec.by[0], v)).collect();
    let n = labels.len() as i32;
    let mut totals = vec![0u64; buckets.len()];
    let mut with = vec![[0u64; 3]; buckets.len()];
    for g in groups {
        let i = buckets.iter().position(|v| *v == &g.keys[0]).unwrap_or(0);
        let u = g.totals.units(spec.per);
        totals[i] += u;
        for (k, count) in with[i].iter_mut().enumerate() {
            if matches!(g.keys.get(k + 1), Some(Cell::Int(c)) if *c > 0) {
                *count += u;
            }
        }
    }
    let (upper, lower) = panels(body);
    let label_count = labels.len().min(25);
    let format = segment_label(&labels);
    let shares: Vec<Vec<(SegmentValue<i32>, f64)>> = (0..3)
        .map(|k| {
            (0..buckets.len())
                .filter(|&i| totals[i] > 0)
                .map(|i| {
                    let share = 100.0 * with[i][k] as f64 / totals[i] as f64;
                    (SegmentValue::CenterOf(i as i32), share)
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
    let mut top = ChartBuilder::on(&upper)
        .margin_right(10)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((0..n - 1).into_segmented(), 0.0..max)
        .map_err(plot_error)?;
    top.configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE)
        .x_labels(label_count)
        .x_label_formatter(&format)
        .y_label_formatter(&|v| format!("{v:.0}"))
        .y_desc(format!("% of {unit} with at least one"))
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .draw()
        .map_err(plot_error)?;
    let names = ["duo", "trio", "quart"];
    let mut entries = Vec::new();
    for (k, points) in shares.iter().enumerate() {
        let c = color(k);
        top.draw_series(LineSeries::new(points.iter().cloned(), c.stroke_width(2)))
            .map_err(plot_error)?;
        top.draw_series(
            points
                .iter()
                .map(|p| Circle::new(p.clone(), marker(n), c.filled())),
        )
        .map_err(plot_error)?;
        let side = spec.by[1].name();
        let side = side.split('_').next().unwrap_or("");
        entries.push((format!("{side} {}", names[k]), c));
    }
    legend(&upper, &entries)?;

    let max = totals.iter().copied().max().unwrap_or(1).max(1) as f64 * 1.08;
    let mut bottom = ChartBuilder::on(&lower)
        .margin_right(10)
        .margin_top(10)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d((0..n - 1).into_segmented(), 0.0..max)
        .map_err(plot_error)?;
    bottom
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE)
        .x_labels(label_count)
        .x_label_formatter(&format)
        .y_label_formatter(&|v| short(*v))
        .x_desc(spec.by[0].name())
        .y_desc(unit)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .draw()
        .map_err(plot_error)?;
    bottom
        .draw_series(
            Histogram::vertical(&bottom)
                .style(RGBColor(150, 150, 150).filled())
                .margin(bar_margin(&lower, n))
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

/// The top-structures report: a horizontal bar per structure, its score written after it.
fn structures<DB: DrawingBackend>(
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
    let mut chart = ChartBuilder::on(body)
        .margin_right(20)
        .x_label_area_size(45)
        .y_label_area_size(300)
        .build_cartesian_2d(0.0..max, (0..n - 1).into_segmented())
        .map_err(plot_error)?;
    let format = segment_label(&rows);
    chart
        .configure_mesh()
        .disable_y_mesh()
        .light_line_style(WHITE)
        .y_labels(rows.len())
        .y_label_formatter(&format)
        .x_label_formatter(&|v| short(*v))
        .x_desc(unit)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 15))
        .draw()
        .map_err(plot_error)?;
    let base = body.get_base_pixel();
    for (i, g) in groups.iter().enumerate() {
        let row = n - 1 - i as i32;
        let u = g.totals.units(spec.per) as f64;
        let (x0, y0) = chart.backend_coord(&(0.0, SegmentValue::Exact(row + 1)));
        let (x1, y1) = chart.backend_coord(&(u, SegmentValue::Exact(row)));
        let gap = ((y1 - y0).abs() / 6).max(1);
        body.draw(&Rectangle::new(
            [
                (x0 - base.0, y0.min(y1) - base.1 + gap),
                (x1 - base.0, y0.max(y1) - base.1 - gap),
            ],
            color(0).mix(0.75).filled(),
        ))
        .map_err(plot_error)?;
        let score = drawn_score(g).map_or_else(
            || match g.totals.white_score() {
                Some(s) => format!("score {s:.2} (under {MIN_GAMES_FOR_SCORE} games)"),
                None => "no result".to_string(),
            },
            |s| format!("score {s:.2}"),
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
