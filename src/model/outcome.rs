//! A game's result, White's score and the names of the sides.

use shakmaty::Color;

/// The result of a game as the totals count it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    WhiteWins = 0,
    Draw = 1,
    BlackWins = 2,
    /// `*`, a missing tag or anything else.
    Unknown = 3,
}

impl Outcome {
    /// The outcome a `Result` tag value stands for (surrounding spaces ignored).
    ///
    /// ```
    /// # use pawndex::outcome::Outcome;
    /// assert_eq!(Outcome::parse(Some("1-0")), Outcome::WhiteWins);
    /// assert_eq!(Outcome::parse(Some("1/2-1/2")), Outcome::Draw);
    /// assert_eq!(Outcome::parse(Some("*")), Outcome::Unknown);
    /// assert_eq!(Outcome::parse(None), Outcome::Unknown);
    /// ```
    pub fn parse(result: Option<&str>) -> Outcome {
        Outcome::parse_bytes(result.map(str::as_bytes))
    }

    /// [`Outcome::parse`] over raw bytes (a database value).
    pub fn parse_bytes(result: Option<&[u8]>) -> Outcome {
        match result.map(<[u8]>::trim_ascii) {
            Some(b"1-0") => Outcome::WhiteWins,
            Some(b"0-1") => Outcome::BlackWins,
            Some(b"1/2-1/2") => Outcome::Draw,
            _ => Outcome::Unknown,
        }
    }

    /// 0 White wins, 1 draw, 2 Black wins, 3 unknown: the index of the totals' columns.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The lower-case name of a side, as feature names spell it (`white_islands`).
pub fn side_name(color: Color) -> &'static str {
    match color {
        Color::White => "white",
        Color::Black => "black",
    }
}

/// White's score, the one unit of every command, table, CSV, JSON and chart (see "Conventions"
/// in docs/features.md): the percent, 0 to 100, of the points White took in the `scored` games
/// (or positions) with a result, from White's `half_points` (a win 2, a draw 1); `None`
/// without a result.
#[must_use]
pub fn white_score(half_points: u64, scored: u64) -> Option<f64> {
    (scored > 0).then(|| 50.0 * half_points as f64 / scored as f64)
}
