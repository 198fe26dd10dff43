//! The PNG font, and the bitmap backend that draws text with it.
//!
//! plotters' own glyph drawing (its `ab_glyph` font) puts each glyph's ink at the pen position
//! and drops the glyph's left side bearing, so letters sit unevenly ("by" drew as "b y").
//! [`PngBackend`] wraps the bitmap backend and places each glyph at its outline's own bounds.

use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, ScaleFont, point};
use anyhow::{Result, anyhow};
use plotters::prelude::*;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
    text_anchor::{HPos, VPos},
};

/// The font family every chart uses.
pub(super) const FONT: &str = "sans-serif";

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

/// The loaded font, or why none could be.
static LOADED: OnceLock<Result<FontRef<'static>, String>> = OnceLock::new();

/// Finds a TrueType font and registers it as plotters' sans-serif (once per process).
pub fn load_font() -> Result<()> {
    LOADED
        .get_or_init(find_font)
        .as_ref()
        .map(|_| ())
        .map_err(|e| anyhow!(e.clone()))
}

fn find_font() -> Result<FontRef<'static>, String> {
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
        let Ok(font) = FontRef::try_from_slice(bytes) else {
            continue;
        };
        if plotters::style::register_font(FONT, FontStyle::Normal, bytes).is_ok() {
            return Ok(font);
        }
    }
    Err(format!(
        "PNG charts need a TrueType font and none was found (looked for {}); set \
         PAWNDEX_FONT to a .ttf file, or draw SVG, which needs no font",
        candidates.join(", ")
    ))
}

/// The bitmap backend, with text drawn by [`draw_glyphs`].
pub(super) struct PngBackend<'a>(pub BitMapBackend<'a>);

impl DrawingBackend for PngBackend<'_> {
    type ErrorType = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        (iw, ih): (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.blit_bitmap(pos, (iw, ih), src)
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        match LOADED.get() {
            Some(Ok(font)) => draw_glyphs(&mut self.0, font, text, style, pos),
            _ => self.0.draw_text(text, style, pos),
        }
    }
}

/// Draws `text` as plotters would (same size, anchor, baseline and rotation), but with each
/// glyph at its outline's bounds, which include its side bearing and the kerning before it.
fn draw_glyphs<S: BackendTextStyle>(
    backend: &mut BitMapBackend,
    font: &FontRef<'static>,
    text: &str,
    style: &S,
    pos: BackendCoord,
) -> Result<(), DrawingErrorKind<<BitMapBackend<'static> as DrawingBackend>::ErrorType>> {
    let color = style.color();
    if color.alpha == 0.0 {
        return Ok(());
    }
    let size = style.size() as f32;
    let scaled = font.as_scaled(size);
    // Coverage of each pixel, relative to the start of the line, the baseline `size / 2` down
    // (where plotters puts it).
    let mut ink: Vec<(i32, i32, f32)> = Vec::new();
    let mut pen = 0f32;
    let mut prev = None;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(p) = prev {
            pen += scaled.kern(p, id);
        }
        prev = Some(id);
        let glyph = id.with_scale_and_position(size, point(pen, size / 2.0));
        if let Some(outline) = font.outline_glyph(glyph) {
            let b = outline.px_bounds();
            outline.draw(|x, y, cover| {
                ink.push((b.min.x as i32 + x as i32, b.min.y as i32 + y as i32, cover));
            });
        }
        pen += scaled.h_advance(id);
    }
    let (width, height) = (pen as i32, (size / 1.24) as i32);
    let dx = match style.anchor().h_pos {
        HPos::Left => 0,
        HPos::Right => -width,
        HPos::Center => -width / 2,
    };
    let dy = match style.anchor().v_pos {
        VPos::Top => 0,
        VPos::Center => -height / 2,
        VPos::Bottom => -height,
    };
    let trans = style.transform();
    let (w, h) = backend.get_size();
    for (x, y, cover) in ink {
        let (x, y) = trans.transform(x + dx, y + dy);
        let (x, y) = (pos.0 + x, pos.1 + y);
        if x >= 0 && x < w as i32 && y >= 0 && y < h as i32 {
            let c = BackendColor {
                alpha: color.alpha * f64::from(cover.clamp(0.0, 1.0)),
                rgb: color.rgb,
            };
            backend.draw_pixel((x, y), c)?;
        }
    }
    Ok(())
}
