//! A game's time class (classical, rapid, blitz, bullet, simul, blindfold or unknown), from its
//! `TimeControl` tag when it has one the PGN standard describes, else from the words of its
//! `Event` tag. The rule, its bounds and its word list are documented in `docs/find.md` ("Time
//! class"); `games.time_class` stores its answer.
//!
//! ```
//! use pawndex::model::time_class::{TimeClass, time_class};
//! assert_eq!(time_class(Some("180+2"), Some("Titled Tuesday")), TimeClass::Blitz);
//! assert_eq!(time_class(Some("40/7200:3600"), None), TimeClass::Classical);
//! assert_eq!(time_class(None, Some("World Rapid 2015")), TimeClass::Rapid);
//! assert_eq!(time_class(Some("900+10"), Some("Amber Blindfold")), TimeClass::Blindfold);
//! assert_eq!(time_class(None, Some("Blitzstein mem")), TimeClass::Unknown);
//! ```

/// A game's time class.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TimeClass {
    Classical,
    Rapid,
    Blitz,
    Bullet,
    Simul,
    Blindfold,
    Unknown,
}

impl TimeClass {
    /// Every class, in the order of the documentation.
    pub const ALL: [TimeClass; 7] = [
        TimeClass::Classical,
        TimeClass::Rapid,
        TimeClass::Blitz,
        TimeClass::Bullet,
        TimeClass::Simul,
        TimeClass::Blindfold,
        TimeClass::Unknown,
    ];

    /// The name stored in `games.time_class` and taken by `--time-class`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            TimeClass::Classical => "classical",
            TimeClass::Rapid => "rapid",
            TimeClass::Blitz => "blitz",
            TimeClass::Bullet => "bullet",
            TimeClass::Simul => "simul",
            TimeClass::Blindfold => "blindfold",
            TimeClass::Unknown => "unknown",
        }
    }

    /// The class of a name ([`TimeClass::name`]), case ignored.
    #[must_use]
    pub fn parse(name: &str) -> Option<TimeClass> {
        let n = name.trim().to_ascii_lowercase();
        Self::ALL.into_iter().find(|c| c.name() == n)
    }
}

/// Estimated durations (seconds per player: the base plus 40 increments) below which a game is
/// bullet, blitz and rapid; at or above the last it is classical.
pub const BULLET_BELOW: u64 = 3 * 60;
pub const BLITZ_BELOW: u64 = 10 * 60;
pub const RAPID_BELOW: u64 = 60 * 60;
/// A first period that gives a move this many seconds or more is correspondence (a day a
/// move): no class of over-the-board play, so unknown.
pub const CORRESPONDENCE_PER_MOVE: u64 = 24 * 60 * 60;

/// The time class of a game with these `TimeControl` and `Event` tags.
///
/// 1. An Event word for simul or blindfold wins: it says how the game was played, whatever the
///    clock (Amber's blindfold games were rapid).
/// 2. Else a `TimeControl` of a standard form decides ([`from_time_control`]).
/// 3. Else the Event's speed words ([`from_event`]); unknown when there are none, or words of
///    two different speeds ("Rapid & Blitz").
#[must_use]
pub fn time_class(time_control: Option<&str>, event: Option<&str>) -> TimeClass {
    let by_event = event.map_or(TimeClass::Unknown, from_event);
    if matches!(by_event, TimeClass::Simul | TimeClass::Blindfold) {
        return by_event;
    }
    match time_control.map_or(TimeClass::Unknown, from_time_control) {
        TimeClass::Unknown => by_event,
        known => known,
    }
}

/// The class of a PGN `TimeControl` value (PGN standard, 9.6.1), from the first period:
/// `?` (unknown) and `-` (no clock) are unknown; `S` (seconds, sudden death), `S+I` (an
/// increment of I seconds a move) and `*S` (a sandclock of S seconds) are estimated at S + 40 × I
/// seconds; `M/S` (M moves in S seconds) at the time for 40 moves, 40 × S / M. The estimate is
/// bullet below 3 minutes, blitz below 10, rapid below 60, classical from 60 on; a period of a
/// day or more a move (correspondence) and any other text are unknown.
#[must_use]
pub fn from_time_control(tc: &str) -> TimeClass {
    let Some(first) = tc.trim().split(':').next() else {
        return TimeClass::Unknown;
    };
    let number = |s: &str| -> Option<u64> {
        let s = s.trim();
        (!s.is_empty() && s.len() <= 12 && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let estimate = if let Some(sand) = first.strip_prefix('*') {
        number(sand)
    } else if let Some((moves, secs)) = first.split_once('/') {
        match (number(moves), number(secs)) {
            (Some(m), Some(s)) if m > 0 => {
                if s / m >= CORRESPONDENCE_PER_MOVE {
                    return TimeClass::Unknown;
                }
                Some(s.saturating_mul(40) / m)
            }
            _ => None,
        }
    } else if let Some((base, inc)) = first.split_once('+') {
        match (number(base), number(inc)) {
            (Some(b), Some(i)) => Some(b.saturating_add(i.saturating_mul(40))),
            _ => None,
        }
    } else {
        number(first)
    };
    match estimate {
        None | Some(0) => TimeClass::Unknown,
        Some(s) if s < BULLET_BELOW => TimeClass::Bullet,
        Some(s) if s < BLITZ_BELOW => TimeClass::Blitz,
        Some(s) if s < RAPID_BELOW => TimeClass::Rapid,
        Some(_) => TimeClass::Classical,
    }
}

/// The Event words of each class (whole words, case ignored; a word may be followed by digits:
/// `rapid15`). Checked in this order: simul, blindfold, then the speeds.
pub const EVENT_WORDS: [(TimeClass, &[&str]); 6] = [
    (
        TimeClass::Simul,
        // `sim`: ChessBase's abbreviation (Zuerich sim, USA tour sim).
        &[
            "simul",
            "simuls",
            "sim",
            "sims",
            "simultan",
            "simultaneous",
            "simultanee",
        ],
    ),
    (
        TimeClass::Blindfold,
        &["blindfold", "blind", "blindfolded", "blindsimul"],
    ),
    (TimeClass::Bullet, &["bullet", "hyperbullet", "ultrabullet"]),
    (
        TimeClass::Blitz,
        &[
            "blitz",
            "blitzchess",
            "superblitz",
            "lightning",
            "armageddon",
            "speed",
            "titled",
        ],
    ),
    (
        TimeClass::Rapid,
        &[
            "rapid",
            "rapids",
            // ChessBase's abbreviation (Corsica rap op, Kettler Cup rap).
            "rap",
            "rapidplay",
            "superrapid",
            "semirapid",
            "quickplay",
            "quick",
            "active",
            "rapido",
            "rapide",
            "schnellschach",
        ],
    ),
    (TimeClass::Classical, &["classical"]),
];

/// The class the words of an Event tag name: simul or blindfold when a word of theirs is there;
/// else the one speed its words name, unknown when none or several do.
#[must_use]
pub fn from_event(event: &str) -> TimeClass {
    let lower = event.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .map(|w| w.trim_end_matches(|c: char| c.is_ascii_digit()))
        .filter(|w| !w.is_empty())
        .collect();
    let named = |class: TimeClass| {
        EVENT_WORDS
            .iter()
            .filter(|(c, _)| *c == class)
            .any(|(_, list)| words.iter().any(|w| list.contains(w)))
    };
    for mode in [TimeClass::Simul, TimeClass::Blindfold] {
        if named(mode) {
            return mode;
        }
    }
    let speeds: Vec<TimeClass> = [
        TimeClass::Bullet,
        TimeClass::Blitz,
        TimeClass::Rapid,
        TimeClass::Classical,
    ]
    .into_iter()
    .filter(|&c| named(c))
    .collect();
    match speeds[..] {
        [one] => one,
        _ => TimeClass::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_controls() {
        let tc = from_time_control;
        assert_eq!(tc("?"), TimeClass::Unknown);
        assert_eq!(tc("-"), TimeClass::Unknown);
        assert_eq!(tc(""), TimeClass::Unknown);
        assert_eq!(tc("60"), TimeClass::Bullet);
        assert_eq!(tc("60+1"), TimeClass::Bullet);
        assert_eq!(tc("120+1"), TimeClass::Bullet); // 120 + 40 = 160 s
        assert_eq!(tc("120+2"), TimeClass::Blitz); // 200 s
        assert_eq!(tc("180"), TimeClass::Blitz);
        assert_eq!(tc("180+2"), TimeClass::Blitz);
        assert_eq!(tc("300+3"), TimeClass::Blitz);
        assert_eq!(tc("600"), TimeClass::Rapid);
        assert_eq!(tc("900+10"), TimeClass::Rapid);
        assert_eq!(tc("1500+10"), TimeClass::Rapid);
        assert_eq!(tc("3600"), TimeClass::Classical);
        assert_eq!(tc("5400+30"), TimeClass::Classical);
        assert_eq!(tc("40/7200:3600"), TimeClass::Classical);
        assert_eq!(tc("40/9000:1800+30"), TimeClass::Classical);
        assert_eq!(tc("*180"), TimeClass::Blitz);
        assert_eq!(tc("1/259200"), TimeClass::Unknown);
        assert_eq!(tc("5 min"), TimeClass::Unknown);
        assert_eq!(tc("G/30"), TimeClass::Unknown);
        assert_eq!(tc("0"), TimeClass::Unknown);
        assert_eq!(tc("99999999999999999999"), TimeClass::Unknown);
    }

    #[test]
    fn event_words() {
        let ev = from_event;
        assert_eq!(ev("World Blitz 2015"), TimeClass::Blitz);
        assert_eq!(ev("Amber Rapidplay"), TimeClass::Rapid);
        assert_eq!(ev("Amber-blind 6th"), TimeClass::Blindfold);
        assert_eq!(ev("Tilburg rapid20"), TimeClass::Rapid);
        assert_eq!(ev("Galicia simul"), TimeClass::Simul);
        assert_eq!(ev("Chess.com Bullet Open 1"), TimeClass::Bullet);
        assert_eq!(ev("C'Chartres Rapid&Blitz m"), TimeClass::Unknown);
        assert_eq!(ev("Blitzstein mem"), TimeClass::Unknown);
        assert_eq!(ev("Hoogovens"), TimeClass::Unknown);
        assert_eq!(ev("9th London Classic 2017"), TimeClass::Unknown);
        assert_eq!(ev("London Classic Superrapid"), TimeClass::Rapid);
        assert_eq!(ev("Moscow Lightning"), TimeClass::Blitz);
        assert_eq!(ev("7th Norway Armageddon"), TimeClass::Blitz);
        assert_eq!(ev("Titled Tuesday 2nd June"), TimeClass::Blitz);
        assert_eq!(ev("WORLD BLITZ"), TimeClass::Blitz);
        assert_eq!(ev("Zuerich sim"), TimeClass::Simul);
        assert_eq!(ev("Paris blind-simul"), TimeClass::Simul);
        assert_eq!(ev("Corsica rap op"), TimeClass::Rapid);
        assert_eq!(ev("Simpson mem"), TimeClass::Unknown);
    }

    #[test]
    fn modes_win_and_time_controls_come_before_speed_words() {
        assert_eq!(
            time_class(Some("1500+10"), Some("Amber Blindfold")),
            TimeClass::Blindfold
        );
        assert_eq!(time_class(Some("5400"), Some("Simul")), TimeClass::Simul);
        assert_eq!(
            time_class(Some("5400+30"), Some("World Blitz")),
            TimeClass::Classical
        );
        assert_eq!(time_class(Some("?"), Some("World Blitz")), TimeClass::Blitz);
        assert_eq!(time_class(None, None), TimeClass::Unknown);
        for c in TimeClass::ALL {
            assert_eq!(TimeClass::parse(c.name()), Some(c));
        }
    }
}
