//! `pawndex structures --chart`: a horizontal bar per named structure form, as long as the
//! games that reach it, coloured by White's score in them (the palette of every chart: purple,
//! Black does better; near white, even; green, White does better), the numbers written after
//! it.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use plotters::style::text_anchor::HPos;

use super::MIN_GAMES_FOR_SCORE;
use super::frame::{
    Area, NO_SCORE, bar_axes, plot_error, row_bar, score_color, score_legend_row, short, text,
};
use crate::output::table::score_text;

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

/// What a bar says of White's score: the score drawn, a score from too few results, or none.
fn bar_score(score: Option<f64>, drawn: Option<f64>) -> String {
    match (score, drawn) {
        (_, Some(s)) => format!("White {}%", score_text(Some(s))),
        (Some(s), None) => format!(
            "White {}% (under {MIN_GAMES_FOR_SCORE} results)",
            score_text(Some(s))
        ),
        (None, _) => "no result".to_string(),
    }
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
    let (w, _) = head.dim_in_pixel();
    let no_score = format!("no result, or under {MIN_GAMES_FOR_SCORE} results");
    score_legend_row(&head, w as i32 - 20, 6, &no_score)?;
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
    for (i, b) in bars.iter().enumerate() {
        let row = n - 1 - i as i32;
        let games = b.games as f64;
        let drawn = b.score.filter(|_| b.results >= MIN_GAMES_FOR_SCORE);
        let fill = drawn.map_or(NO_SCORE, score_color);
        let at = row_bar(&body, &chart, row, games, fill)?;
        text(
            &body,
            &format!("{} games, {}", short(games), bar_score(b.score, drawn)),
            at,
            12,
            &BLACK,
            HPos::Left,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::frame::{BLACK_BETTER, EVEN, WHITE_BETTER};
    use super::*;

    #[test]
    fn scores_take_colours() {
        assert_eq!(score_color(50.0), EVEN);
        assert_eq!(score_color(65.0), WHITE_BETTER);
        assert_eq!(score_color(80.0), WHITE_BETTER);
        assert_eq!(score_color(35.0), BLACK_BETTER);
        let c = score_color(55.0);
        // Greener than even: less red and blue.
        assert!(c.0 < EVEN.0 && c.2 < EVEN.2 && c.1 > c.0);
        let c = score_color(45.0);
        // Purpler than even: less green.
        assert!(c.1 < c.0 && c.1 < c.2);
    }
}
