//! Charts of a statistics result, drawn with plotters as SVG or PNG.
//!
//! One `--by` column gives bars of the counted units over a line of White's score
//! ([`bars`]); two give a line per value of the first column (share of that series' units, and
//! White's score: [`series`]) or, with many series, a heat map of White's score
//! ([`heatmap`]). Reports may pick their own chart ([`phalanx`], [`structures`]);
//! `pawndex structures` draws [`named`].
//!
//! SVG needs no font file: text is written as SVG `<text>` and every layout decision here uses
//! fixed sizes (plotters' legend and caption helpers, which measure text, are not used). PNG
//! rasterises text, so it needs a TrueType font ([`load_font`]).

mod bars;
pub mod boards;
mod font;
mod frame;
mod heatmap;
mod lines;
mod named;
mod phalanx;
mod series;
mod structures;

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use plotters::style::text_anchor::HPos;

use font::PngBackend;
pub use font::load_font;
use frame::{Area, plot_error, text};
pub use named::{NamedBar, draw_named};

use crate::model::UsageError;
use crate::model::columns::{Cell, Column};
use crate::model::report::ChartKind;
use crate::model::{Per, tally::Group};

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

pub fn draw_svg(path: &Path, spec: &Spec, groups: &[Group]) -> Result<()> {
    let svg = render_svg(SIZE, |root| draw(root, spec, groups))
        .with_context(|| format!("drawing {}", path.display()))?;
    write_chart(path, svg.as_bytes())
}

/// The chart as SVG text (what [`draw_svg`] writes to a file).
pub fn svg(spec: &Spec, groups: &[Group]) -> Result<String> {
    render_svg(SIZE, |root| draw(root, spec, groups))
}

pub fn draw_png(path: &Path, spec: &Spec, groups: &[Group]) -> Result<()> {
    let png = render_png(SIZE, |root| draw(root, spec, groups))
        .with_context(|| format!("drawing {}", path.display()))?;
    write_chart(path, &png)
}

/// Draws an SVG picture of `size` pixels in memory.
fn render_svg(
    size: (u32, u32),
    draw: impl FnOnce(&Area<SVGBackend<'_>>) -> Result<()>,
) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        draw(&root)?;
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

/// Draws a PNG picture of `size` pixels in memory (RGB, 8 bits), encoded.
fn render_png(
    size: (u32, u32),
    draw: impl FnOnce(&Area<PngBackend<'_>>) -> Result<()>,
) -> Result<Vec<u8>> {
    load_font()?;
    let (w, h) = size;
    let mut pixels = vec![0u8; w as usize * h as usize * 3];
    {
        let root = PngBackend(BitMapBackend::with_buffer(&mut pixels, size)).into_drawing_area();
        draw(&root)?;
        root.present().map_err(plot_error)?;
    }
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    // The settings plotters' own PNG writer (the image crate) uses: the same bytes as before.
    encoder.set_compression(png::Compression::Fast);
    encoder.set_filter(png::FilterType::Sub);
    encoder.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&pixels)?;
    writer.finish()?;
    Ok(png)
}

/// Writes a drawn chart; a failure says the path and the system's reason in words.
fn write_chart(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::output::write_output(path, "chart", |mut w| {
        use std::io::Write as _;
        w.write_all(bytes)?;
        w.flush()?;
        Ok(())
    })
}

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
    let named_bars = spec.kind == ChartKind::Auto && spec.by == [Column::Structure];
    if (spec.kind == ChartKind::Structures || named_bars) && !groups.is_empty() {
        let (w, _) = head.dim_in_pixel();
        let no_score = format!("under {MIN_GAMES_FOR_SCORE} games");
        frame::score_legend_row(&head, w as i32 - 20, 2, &no_score)?;
    }
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
        (ChartKind::Phalanx, _) => phalanx::phalanx(&body, spec, groups, unit),
        (ChartKind::Structures, _) => structures::structures(&body, spec, groups, unit),
        (ChartKind::Heatmap, _) => heatmap::heatmap(&body, spec, groups, unit),
        (ChartKind::BishopPair, _) => series::series(&body, spec, groups, unit, true),
        // Named structures: too many long names for an axis, and no order to draw a line
        // along; one bar per form, the most common first.
        (_, 1) if named_bars => structures::most_common(&body, spec, groups, unit),
        (_, 1) => bars::bars(&body, spec, groups, unit),
        (_, _) => {
            let first: BTreeSet<&Cell> = groups.iter().map(|g| &g.keys[0]).collect();
            if first.len() <= 8 {
                series::series(&body, spec, groups, unit, false)
            } else {
                heatmap::heatmap(&body, spec, groups, unit)
            }
        }
    }
}
