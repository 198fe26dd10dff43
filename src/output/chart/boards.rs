//! `pawndex plans --chart`: where each side's pieces stand in a structure, as heat maps on
//! boards. One row per piece kind (knight, bishop, rook, queen, king), four boards a row: the
//! share of the structure's positions with such a piece on each square over all games, over the
//! games the side won, over those it lost, and the difference (won − lost: the squares that
//! matter). White is at the bottom of every board (a1 bottom left), as in a diagram.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use plotters::style::Color as _;
use plotters::style::text_anchor::HPos;
use shakmaty::{Color, Role};

use super::frame::{Area, BLACK_BETTER, WHITE_BETTER, plot_error, text};
use super::{render_png, render_svg, write_chart};
use crate::model::UsageError;
use crate::model::plans::{ROLES, Report, role_name};
use crate::output::plans::Sides;

/// The pieces drawn (pawns stand where the structure says).
const DRAWN: [Role; 5] = [
    Role::Knight,
    Role::Bishop,
    Role::Rook,
    Role::Queen,
    Role::King,
];
const SQUARE: i32 = 20;
const BOARD: i32 = 8 * SQUARE;
const GAP: i32 = 34;
const LEFT: i32 = 90;
const HEAD: i32 = 78;
const SIDE_HEAD: i32 = 34;
const ROW: i32 = BOARD + 30;
const COLUMNS: [&str; 4] = ["all games", "games it won", "games it lost", "won − lost"];
/// The hue of a share (the more often a piece stands there, the darker).
const SHARE: RGBColor = RGBColor(214, 96, 0);

/// Checks the chart's file name before any work: `true` for PNG (its font loaded), `false`
/// for SVG; a usage error otherwise.
pub fn prepare(path: &Path) -> Result<bool> {
    let png = match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("svg") => false,
        Some("png") => true,
        _ => {
            return Err(UsageError(format!(
                "--chart {}: the file name must end in .svg or .png",
                path.display()
            ))
            .into());
        }
    };
    crate::output::check_output_path("--chart", path)?;
    if png {
        super::load_font()?;
    }
    Ok(png)
}

fn size(sides: usize) -> (u32, u32) {
    let w = LEFT + 4 * BOARD + 3 * GAP + 30;
    let h = HEAD + sides as i32 * (SIDE_HEAD + DRAWN.len() as i32 * ROW) + 20;
    (w as u32, h as u32)
}

/// Draws the heat maps of the shown sides to `path` (PNG when `png`).
pub fn write(path: &Path, png: bool, report: &Report, sides: Sides) -> Result<()> {
    let shown: Vec<Color> = match sides {
        Sides::Both => vec![Color::White, Color::Black],
        Sides::One(c) => vec![c],
    };
    let dims = size(shown.len());
    let bytes = if png {
        render_png(dims, |root| draw(root, report, &shown))?
    } else {
        render_svg(dims, |root| draw(root, report, &shown))?.into_bytes()
    };
    write_chart(path, &bytes).with_context(|| format!("drawing {}", path.display()))
}

/// Shares in percent of one side's piece kind on each square: all, won, lost.
fn shares(report: &Report, side: Color, role: Role) -> [[f64; 64]; 3] {
    let s = usize::from(side == Color::Black);
    let r = ROLES.iter().position(|x| *x == role).unwrap_or(0);
    let (won, lost) = if side == Color::White { (0, 2) } else { (2, 0) };
    let mut out = [[0.0; 64]; 3];
    for (k, outcomes) in [vec![0, 1, 2, 3], vec![won], vec![lost]].iter().enumerate() {
        let positions: u64 = outcomes.iter().map(|&o| report.positions[o]).sum();
        if positions == 0 {
            continue;
        }
        for (sq, cell) in out[k].iter_mut().enumerate() {
            let n: u64 = outcomes.iter().map(|&o| report.squares[o][s][r][sq]).sum();
            *cell = 100.0 * n as f64 / positions as f64;
        }
    }
    out
}

fn mix(from: RGBColor, to: RGBColor, t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let c = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u8;
    RGBColor(c(from.0, to.0), c(from.1, to.1), c(from.2, to.2))
}

fn draw<DB: DrawingBackend>(root: &Area<DB>, report: &Report, shown: &[Color]) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(plot_error)?;
    let grey = RGBColor(90, 90, 90);
    text(
        root,
        &format!("Where the pieces stand: {}", report.target),
        (20, 12),
        22,
        &BLACK,
        HPos::Left,
    )?;
    text(
        root,
        &format!(
            "Share of the structure's positions with the piece on the square ({} games, {} \
             positions). Won − lost: green = more in the games the side won, purple = more in \
             those it lost.",
            report.game_count(),
            report.plies()
        ),
        (20, 44),
        12,
        &grey,
        HPos::Left,
    )?;
    let mut y = HEAD;
    for &side in shown {
        let who = if side == Color::White {
            "White"
        } else {
            "Black"
        };
        text(
            root,
            &format!("{who}'s pieces"),
            (20, y + 6),
            18,
            &BLACK,
            HPos::Left,
        )?;
        for (i, c) in COLUMNS.iter().enumerate() {
            let x = LEFT + i as i32 * (BOARD + GAP) + BOARD / 2;
            text(root, c, (x, y + 10), 13, &grey, HPos::Center)?;
        }
        y += SIDE_HEAD;
        for role in DRAWN {
            let s = shares(report, side, role);
            let max = s
                .iter()
                .flat_map(|b| b.iter().copied())
                .fold(0.0_f64, f64::max);
            let diff: Vec<f64> = (0..64).map(|sq| s[1][sq] - s[2][sq]).collect();
            let max_diff = diff.iter().map(|d| d.abs()).fold(0.0_f64, f64::max);
            let name = role_name(role);
            text(
                root,
                &format!("{name}s"),
                (20, y + BOARD / 2 - 8),
                14,
                &BLACK,
                HPos::Left,
            )?;
            for (i, board) in s.iter().enumerate() {
                let x = LEFT + i as i32 * (BOARD + GAP);
                draw_board(root, (x, y), |sq| {
                    let v = board[sq];
                    let t = if max > 0.0 { v / max } else { 0.0 };
                    (SHARE, t, (v >= 5.0).then(|| format!("{v:.0}")))
                })?;
            }
            let x = LEFT + 3 * (BOARD + GAP);
            draw_board(root, (x, y), |sq| {
                let d = diff[sq];
                let t = if max_diff > 0.0 {
                    d.abs() / max_diff
                } else {
                    0.0
                };
                let to = if d >= 0.0 { WHITE_BETTER } else { BLACK_BETTER };
                let label = (d.abs() >= 2.0).then(|| format!("{d:+.0}"));
                (to, t, label)
            })?;
            y += ROW;
        }
    }
    Ok(())
}

/// A board at `at` (top left), each square tinted and labelled by `cell(square index)`: the
/// hue, its strength (0 to 1) over the square's own light or dark grey, and a label; files
/// and ranks written along the edges.
fn draw_board<DB: DrawingBackend>(
    root: &Area<DB>,
    at: (i32, i32),
    cell: impl Fn(usize) -> (RGBColor, f64, Option<String>),
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let (x0, y0) = at;
    for rank in 0..8 {
        for file in 0..8 {
            let sq = rank * 8 + file;
            let x = x0 + file as i32 * SQUARE;
            let y = y0 + (7 - rank as i32) * SQUARE;
            let dark = (rank + file) % 2 == 0;
            let (hue, t, label) = cell(sq);
            let base = if dark {
                RGBColor(218, 218, 218)
            } else {
                RGBColor(250, 250, 250)
            };
            let color = mix(base, hue, t);
            root.draw(&Rectangle::new(
                [(x, y), (x + SQUARE, y + SQUARE)],
                color.filled(),
            ))
            .map_err(plot_error)?;
            if let Some(label) = label {
                let c = if color.0 as u32 + color.1 as u32 + color.2 as u32 > 400 {
                    BLACK
                } else {
                    WHITE
                };
                text(root, &label, (x + SQUARE / 2, y + 5), 10, &c, HPos::Center)?;
            }
        }
    }
    root.draw(&Rectangle::new(
        [(x0, y0), (x0 + BOARD, y0 + BOARD)],
        RGBColor(60, 60, 60).stroke_width(1),
    ))
    .map_err(plot_error)?;
    let grey = RGBColor(110, 110, 110);
    for i in 0..8 {
        let file = char::from(b'a' + i as u8).to_string();
        text(
            root,
            &file,
            (x0 + i * SQUARE + SQUARE / 2, y0 + BOARD + 2),
            10,
            &grey,
            HPos::Center,
        )?;
        let rank = (8 - i).to_string();
        text(
            root,
            &rank,
            (x0 - 4, y0 + i * SQUARE + 5),
            10,
            &grey,
            HPos::Right,
        )?;
    }
    Ok(())
}
