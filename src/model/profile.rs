//! A player's structure profile (`pawndex player`): the player's results per colour, and per
//! structure reached (named forms and the most reached exact pawn structures) the player's
//! score beside a baseline, the score of the other games of the database (or of a reference
//! database) in the same structure with the same colour. The rules (docs/players.md):
//!
//! - a score is the player's, in percent over the games with a result (`1-0`, `1/2-1/2`,
//!   `0-1`): (wins + draws / 2) / (wins + draws + losses);
//! - `low`, `high`: the 95% Wilson score interval of that score (z = 1.96);
//! - `delta`: score − baseline, both rounded to one decimal first;
//! - trust: `too few games` under [`MIN_TRUSTED`] games with a result, else `below` when the
//!   baseline lies above `high`, `above` when it lies below `low`, else `in line`; `no
//!   baseline` when there is none.

use shakmaty::Color;

use crate::model::outcome::Outcome;

/// Fewer games with a result than this: `too few games`; best and worst need this many.
pub const MIN_TRUSTED: u64 = 10;

/// The least plies a game stays in an exact pawn structure for it to count as reaching it.
pub const MIN_EXACT_STAY: u32 = 8;

/// How wide the rating band is on each side of the player's median rating.
pub const BAND: i64 = 100;

/// How many moves and breaks a row lists, and how many rows best and worst hold.
pub const TOP: usize = 5;

/// Games and their results from one side's point of view.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Results {
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl Results {
    /// Counts one game of `side` with `outcome`.
    pub fn add(&mut self, outcome: Outcome, side: Color) {
        self.games += 1;
        match (outcome, side) {
            (Outcome::WhiteWins, Color::White) | (Outcome::BlackWins, Color::Black) => {
                self.wins += 1;
            }
            (Outcome::WhiteWins, Color::Black) | (Outcome::BlackWins, Color::White) => {
                self.losses += 1;
            }
            (Outcome::Draw, _) => self.draws += 1,
            (Outcome::Unknown, _) => {}
        }
    }

    /// Adds another count.
    pub fn merge(&mut self, other: Results) {
        self.games += other.games;
        self.wins += other.wins;
        self.draws += other.draws;
        self.losses += other.losses;
    }

    /// This count without `other`'s games (never below zero).
    #[must_use]
    pub fn minus(self, other: Results) -> Results {
        Results {
            games: self.games.saturating_sub(other.games),
            wins: self.wins.saturating_sub(other.wins),
            draws: self.draws.saturating_sub(other.draws),
            losses: self.losses.saturating_sub(other.losses),
        }
    }

    /// The games with a result.
    #[must_use]
    pub fn scored(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    /// The score in percent (not rounded), `None` without a game with a result.
    ///
    /// ```
    /// # use pawndex::model::profile::Results;
    /// let r = Results { games: 4, wins: 1, draws: 2, losses: 0 };
    /// assert_eq!(r.score(), Some(200.0 / 3.0));
    /// ```
    #[must_use]
    pub fn score(&self) -> Option<f64> {
        let n = self.scored();
        (n > 0).then(|| 100.0 * (self.wins as f64 + self.draws as f64 / 2.0) / n as f64)
    }

    /// The 95% Wilson score interval of [`Results::score`], in percent (not rounded).
    ///
    /// ```
    /// # use pawndex::model::profile::Results;
    /// let (low, high) = Results { games: 10, wins: 5, draws: 0, losses: 5 }.interval().unwrap();
    /// assert_eq!((format!("{low:.1}"), format!("{high:.1}")), ("23.7".into(), "76.3".into()));
    /// ```
    #[must_use]
    pub fn interval(&self) -> Option<(f64, f64)> {
        let n = self.scored() as f64;
        let p = self.score()? / 100.0;
        let z = 1.96f64;
        let z2 = z * z;
        let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
        let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
        Some((
            100.0 * (centre - half).max(0.0),
            100.0 * (centre + half).min(1.0),
        ))
    }
}

/// A number as shown: rounded to one decimal (`format!("{:.1}")`, a tie to even).
#[must_use]
pub fn shown(v: f64) -> f64 {
    format!("{v:.1}").parse::<f64>().unwrap_or(v)
}

/// How much a row's score says.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Trust {
    TooFew,
    Below,
    Above,
    InLine,
    NoBaseline,
}

impl Trust {
    /// The words of the JSON and the table.
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            Trust::TooFew => "too few games",
            Trust::Below => "below",
            Trust::Above => "above",
            Trust::InLine => "in line",
            Trust::NoBaseline => "no baseline",
        }
    }
}

/// A named structure form or an exact pawn structure.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Named,
    Exact,
}

impl Kind {
    #[must_use]
    pub fn word(self) -> &'static str {
        match self {
            Kind::Named => "named",
            Kind::Exact => "exact",
        }
    }
}

/// A move of the player's in a structure: its SAN (plain, `model::plans::PlainMove::san`) and
/// the player's results in the games where it was played there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Played {
    pub san: String,
    pub results: Results,
}

/// One row of the profile: a structure with the player's colour.
#[derive(Clone, Debug)]
pub struct Row {
    pub kind: Kind,
    /// The catalogue key (named), or the board part of a FEN holding only the pawns (exact).
    pub key: String,
    /// The structure's display name (for exact pawns: the named form they are in, if any).
    pub name: Option<String>,
    pub reversed: bool,
    pub colour: Color,
    /// The player's games reaching it with that colour.
    pub results: Results,
    /// Their positions in it.
    pub plies: u64,
    /// The other games reaching it, from the same colour's point of view (the baseline's
    /// database: this one, or `--baseline`'s).
    pub baseline: Results,
    /// The same within the rating band; `None` without a band (no rating).
    pub band: Option<Results>,
    /// The player's most played plan moves and pawn breaks there (at most [`TOP`] each).
    pub moves: Vec<Played>,
    pub breaks: Vec<Played>,
}

impl Row {
    /// The player's score there, as shown.
    #[must_use]
    pub fn score(&self) -> Option<f64> {
        self.results.score().map(shown)
    }

    /// The baseline score, as shown.
    #[must_use]
    pub fn baseline_score(&self) -> Option<f64> {
        self.baseline.score().map(shown)
    }

    /// The rating band's baseline score, as shown.
    #[must_use]
    pub fn band_score(&self) -> Option<f64> {
        self.band.and_then(|b| b.score()).map(shown)
    }

    /// The 95% interval of the player's score, as shown.
    #[must_use]
    pub fn interval(&self) -> Option<(f64, f64)> {
        self.results
            .interval()
            .map(|(low, high)| (shown(low), shown(high)))
    }

    /// Score − baseline, both as shown.
    #[must_use]
    pub fn delta(&self) -> Option<f64> {
        Some(shown(self.score()? - self.baseline_score()?))
    }

    /// How much the score says against the baseline.
    #[must_use]
    pub fn trust(&self) -> Trust {
        if self.results.scored() < MIN_TRUSTED {
            return Trust::TooFew;
        }
        let (Some(baseline), Some((low, high))) = (self.baseline_score(), self.interval()) else {
            return Trust::NoBaseline;
        };
        if baseline > high {
            Trust::Below
        } else if baseline < low {
            Trust::Above
        } else {
            Trust::InLine
        }
    }

    /// The row as `--structure-name` or `--structure` takes it (`carlsbad~`, a FEN board).
    #[must_use]
    pub fn label(&self) -> String {
        match self.kind {
            Kind::Named if self.reversed => format!("{}~", self.key),
            _ => self.key.clone(),
        }
    }
}

/// The player's games of one year and how many of them reach each of the most reached named
/// forms.
#[derive(Clone, Debug)]
pub struct Year {
    pub year: i64,
    pub games: u64,
    /// (key, reversed, games).
    pub structures: Vec<(String, bool, u64)>,
}

/// A game of the player against the opponent.
#[derive(Clone, Debug)]
pub struct MutualGame {
    pub id: i64,
    pub date: Option<String>,
    pub event: Option<String>,
    /// The player's colour.
    pub colour: Color,
    pub result: Option<String>,
    pub eco: Option<String>,
    pub plies: i64,
}

/// The player's games against the opponent.
#[derive(Clone, Debug)]
pub struct HeadToHead {
    pub opponent: String,
    pub names: Vec<String>,
    /// The player's results.
    pub results: Results,
    pub list: Vec<MutualGame>,
}

/// The median rating and its band.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Rating {
    pub median: i64,
    pub low: i64,
    pub high: i64,
}

impl Rating {
    /// The lower median of `ratings` (sorted in place) and the band around it; `None` for none.
    ///
    /// ```
    /// # use pawndex::model::profile::Rating;
    /// let r = Rating::of(&mut [2700, 2500, 2600, 2800]).unwrap();
    /// assert_eq!((r.median, r.low, r.high), (2600, 2500, 2700));
    /// ```
    #[must_use]
    pub fn of(ratings: &mut [i64]) -> Option<Rating> {
        if ratings.is_empty() {
            return None;
        }
        ratings.sort_unstable();
        let median = ratings[(ratings.len() - 1) / 2];
        Some(Rating {
            median,
            low: median - BAND,
            high: median + BAND,
        })
    }

    /// Whether a rating lies in the band (both ends included).
    #[must_use]
    pub fn holds(&self, elo: i64) -> bool {
        (self.low..=self.high).contains(&elo)
    }
}

/// A typed name that finds no player, or several: what to say, and the candidates (the name
/// shown, the games). The command line exits 1 with it; the server answers 404.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownPlayer {
    pub message: String,
    pub candidates: Vec<(String, i64)>,
}

impl std::fmt::Display for UnknownPlayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        for (name, games) in &self.candidates {
            write!(f, "\n  {name} ({games} games)")?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownPlayer {}

/// A player's profile.
#[derive(Clone, Debug)]
pub struct Profile {
    /// The name shown.
    pub player: String,
    /// Every stored spelling the profile covers, sorted.
    pub names: Vec<String>,
    /// `--as`: one colour only.
    pub only: Option<Color>,
    /// `--baseline OTHER.db`, as given.
    pub baseline_source: Option<String>,
    pub rating: Option<Rating>,
    /// The player's games as White and as Black.
    pub games: [Results; 2],
    /// Most games first, then White first, then named before exact, then key, then the
    /// normal form first.
    pub structures: Vec<Row>,
    pub years: Vec<Year>,
    pub head_to_head: Option<HeadToHead>,
    pub opponent: Option<Box<Profile>>,
}

impl Profile {
    /// Both colours' games.
    #[must_use]
    pub fn all_games(&self) -> Results {
        let mut all = self.games[0];
        all.merge(self.games[1]);
        all
    }

    /// The rows with at least [`MIN_TRUSTED`] games with a result and a delta, highest delta
    /// first (`best`) or lowest first; at most [`TOP`]; ties in the rows' order.
    #[must_use]
    pub fn ranked(&self, best: bool) -> Vec<&Row> {
        let mut rows: Vec<(f64, usize)> = self
            .structures
            .iter()
            .enumerate()
            .filter(|(_, r)| r.results.scored() >= MIN_TRUSTED)
            .filter_map(|(i, r)| r.delta().map(|d| (d, i)))
            .collect();
        rows.sort_by(|a, b| {
            let by = if best {
                b.0.total_cmp(&a.0)
            } else {
                a.0.total_cmp(&b.0)
            };
            by.then(a.1.cmp(&b.1))
        });
        rows.into_iter()
            .take(TOP)
            .map(|(_, i)| &self.structures[i])
            .collect()
    }
}

/// The order of the profile's rows: most games first, then White first, then named before
/// exact, then key, then the normal form first.
pub fn sort_rows(rows: &mut [Row]) {
    rows.sort_by(|a, b| {
        b.results
            .games
            .cmp(&a.results.games)
            .then_with(|| a.colour.is_black().cmp(&b.colour.is_black()))
            .then_with(|| a.kind.cmp(&b.kind))
            .then_with(|| a.key.cmp(&b.key))
            .then_with(|| a.reversed.cmp(&b.reversed))
    });
}

/// The year of a PGN date (`1994.03.12` → 1994), `None` when unknown.
#[must_use]
pub fn year(date: Option<&str>) -> Option<i64> {
    let y = date?.get(..4)?;
    if !y.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    y.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval_of_extremes_stays_in_bounds() {
        let all = Results {
            games: 3,
            wins: 3,
            draws: 0,
            losses: 0,
        };
        let (low, high) = all.interval().unwrap();
        assert!(low > 0.0 && (high - 100.0).abs() < 1e-9);
        assert_eq!(Results::default().interval(), None);
    }

    #[test]
    fn trust_follows_the_interval() {
        let row = |w, d, l, bw, bd, bl| Row {
            kind: Kind::Named,
            key: "k".into(),
            name: None,
            reversed: false,
            colour: Color::White,
            results: Results {
                games: w + d + l,
                wins: w,
                draws: d,
                losses: l,
            },
            plies: 0,
            baseline: Results {
                games: bw + bd + bl,
                wins: bw,
                draws: bd,
                losses: bl,
            },
            band: None,
            moves: vec![],
            breaks: vec![],
        };
        assert_eq!(row(5, 0, 4, 1, 0, 1).trust(), Trust::TooFew);
        assert_eq!(row(20, 0, 0, 1, 0, 1).trust(), Trust::Above);
        assert_eq!(row(0, 0, 20, 1, 0, 1).trust(), Trust::Below);
        assert_eq!(row(10, 0, 10, 1, 0, 1).trust(), Trust::InLine);
        assert_eq!(row(10, 0, 10, 0, 0, 0).trust(), Trust::NoBaseline);
        assert_eq!(row(10, 0, 10, 3, 0, 1).delta(), Some(-25.0));
    }
}
