//! `pawndex structures --chart`: a horizontal bar per named structure form, as long as the
//! games that reach it, coloured by White's score in them (blue: Black does better, grey: even,
//! red: White does better), the numbers written after it.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use plotters::style::text_anchor::HPos;

use super::MIN_GAMES_FOR_SCORE;
use super::frame::{Area, bar_axes, plot_error, short, text};
use crate::query::output::score_text;

/// One bar: a structure form.
#[derive(Clone, Debug)]
pub struct NamedBar {
    pub label: String,
    /// Games that reach the form.
    pub games: u64,
    /// Of them, games with a result.
    pub results: u64,
    /// White's score in percent, None without a result.
    pub score: Option<f64>,
}

/// Width of the picture in pixels (its height follows the number of bars).
const WIDTH: u32 = 1000;
/// Pixels per bar.
const ROW: u32 = 26;
/// A score this far from 50% takes the full colour.
const FULL: f64 = 10.0;
/// A score of 50%.
const NEUTRAL: RGBColor = RGBColor(200, 200, 200);
/// A score of 60% or more.
const WHITE_BETTER: RGBColor = RGBColor(214, 39, 40);
/// A score of 40% or less.
const BLACK_BETTER: RGBColor = RGBColor(31, 119, 180);
/// No score drawn (no result, or too few).
const NO_SCORE: RGBColor = RGBColor(235, 235, 235);

/// The colour of a score in percent.
fn score_color(score: f64) -> RGBColor {
    let t = ((score - 50.0) / FULL).clamp(-1.0, 1.0);
    let (to, t) = if t >= 0.0 {
        (WHITE_BETTER, t)
    } else {
        (BLACK_BETTER, -t)
    };
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u8;
    RGBColor(
        mix(NEUTRAL.0, to.0),
        mix(NEUTRAL.1, to.1),
        mix(NEUTRAL.2, to.2),
    )
}

/// Draws the chart into `path`: PNG when `png`, else SVG.
pub fn draw_named(
    path: &Path,
    png: bool,
    title: &str,
    subtitle: &str,
    bars: &[NamedBar],
) -> Result<()> {
    let size = (WIDTH, 130 + ROW * bars.len().max(4) as u32);
    let bytes = if png {
        super::render_png(size, |root| draw(root, title, subtitle, bars))
    } else {
        super::render_svg(size, |root| draw(root, title, subtitle, bars)).map(String::into_bytes)
    };
    let bytes = bytes.with_context(|| format!("drawing {}", path.display()))?;
    super::write_chart(path, &bytes)
}

/// The title, the colour scale and a bar per form.
fn draw<DB: DrawingBackend>(
    root: &Area<DB>,
    title: &str,
    subtitle: &str,
    bars: &[NamedBar],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(plot_error)?;
    let (head, body) = root.split_vertically(80);
    text(&head, title, (20, 10), 24, &BLACK, HPos::Left)?;
    text(
        &head,
        subtitle,
        (20, 42),
        14,
        &RGBColor(90, 90, 90),
        HPos::Left,
    )?;
    legend(&head)?;
    if bars.is_empty() {
        let (w, h) = body.dim_in_pixel();
        let at = (w as i32 / 2, h as i32 / 2);
        return text(
            &body,
            "No structure form to draw",
            at,
            22,
            &BLACK,
            HPos::Center,
        );
    }
    let body = body.margin(5, 10, 10, 20);
    let n = bars.len() as i32;
    // The first form at the top.
    let rows: Vec<String> = bars.iter().rev().map(|b| b.label.clone()).collect();
    let max = bars.iter().map(|b| b.games).max().unwrap_or(1).max(1) as f64 * 1.3;
    let chart = bar_axes(&body, &rows, max, (230, 40), "games")?;
    let base = body.get_base_pixel();
    for (i, b) in bars.iter().enumerate() {
        let row = n - 1 - i as i32;
        let games = b.games as f64;
        let drawn = b.score.filter(|_| b.results >= MIN_GAMES_FOR_SCORE);
        let fill = drawn.map_or(NO_SCORE, score_color);
        let (x0, y0) = chart.backend_coord(&(0.0, SegmentValue::Exact(row + 1)));
        let (x1, y1) = chart.backend_coord(&(games, SegmentValue::Exact(row)));
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
        let score = match (b.score, drawn) {
            (_, Some(s)) => format!("White {}%", score_text(Some(s))),
            (Some(s), None) => format!(
                "White {}% (under {MIN_GAMES_FOR_SCORE} results)",
                score_text(Some(s))
            ),
            (None, _) => "no result".to_string(),
        };
        let (px, py) = chart.backend_coord(&(games, SegmentValue::CenterOf(row)));
        text(
            &body,
            &format!("{} games, {score}", short(games)),
            (px - base.0 + 6, py - base.1 - 7),
            12,
            &BLACK,
            HPos::Left,
        )?;
    }
    Ok(())
}

/// The colour scale, top right: swatches from 40% to 60%.
fn legend<DB: DrawingBackend>(head: &Area<DB>) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let (w, _) = head.dim_in_pixel();
    let steps = [40.0, 45.0, 50.0, 55.0, 60.0];
    let box_w = 44;
    let x0 = w as i32 - 20 - box_w * steps.len() as i32;
    text(
        head,
        "White's score (colour)",
        (x0, 8),
        13,
        &BLACK,
        HPos::Left,
    )?;
    for (i, s) in steps.iter().enumerate() {
        let x = x0 + box_w * i as i32;
        head.draw(&Rectangle::new(
            [(x, 28), (x + box_w - 4, 44)],
            score_color(*s).filled(),
        ))
        .map_err(plot_error)?;
        text(
            head,
            &format!("{s:.0}%"),
            (x + (box_w - 4) / 2, 48),
            11,
            &BLACK,
            HPos::Center,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_take_colours() {
        assert_eq!(score_color(50.0), NEUTRAL);
        assert_eq!(score_color(70.0), WHITE_BETTER);
        assert_eq!(score_color(30.0), BLACK_BETTER);
        let c = score_color(55.0);
        assert!(c.0 > NEUTRAL.0 && c.2 < NEUTRAL.2);
    }
}
