//! The recomputation of the derived tables from `runs` and `games`: what the runs of the games
//! up to `derived.through` give each pawn set of a window of ids, and the positions by
//! bishop-pair state, counted independently of `derive.rs`.

use anyhow::Result;

use super::int;
use crate::model::outcome::Outcome;
use crate::store::read::Snapshot;
use crate::store::read::check::{self as read, Cell};

/// What the runs of the games up to `through` give one pawn set.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Acc {
    pub(super) positions: i64,
    pub(super) games: i64,
    /// Positions in games won by White, drawn, won by Black.
    pub(super) results: [i64; 3],
    /// White Elo sum, positions with a White Elo, Black Elo sum, positions with a Black Elo.
    pub(super) elo: [i64; 4],
    pub(super) last_game: i64,
    /// [`fold`] of the distinct games in ascending order.
    pub(super) fingerprint: u64,
}

impl Acc {
    pub(super) fn add(
        &mut self,
        game: i64,
        plies: i64,
        outcome: Option<usize>,
        white_elo: Option<i64>,
        black_elo: Option<i64>,
    ) {
        if self.games == 0 || self.last_game != game {
            self.games += 1;
            self.last_game = game;
            self.fingerprint = fold(self.fingerprint, game);
        }
        self.positions = self.positions.saturating_add(plies);
        if let Some(o) = outcome
            && let Some(r) = self.results.get_mut(o)
        {
            *r = r.saturating_add(plies);
        }
        for (i, elo) in [(0, white_elo), (2, black_elo)] {
            if let Some(e) = elo {
                self.elo[i] = self.elo[i].saturating_add(e.saturating_mul(plies));
                self.elo[i + 1] = self.elo[i + 1].saturating_add(plies);
            }
        }
    }

    /// In the column order of `set_totals`.
    pub(super) fn totals(&self) -> [i64; 9] {
        let [w, d, b] = self.results;
        let [we, wp, be, bp] = self.elo;
        [self.positions, self.games, w, d, b, we, wp, be, bp]
    }
}

/// An order-sensitive fingerprint of a list of game ids, one id at a time.
pub(super) fn fold(h: u64, id: i64) -> u64 {
    let mut z = (h.rotate_left(23) ^ id as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An Elo as derive.rs counts it: an integer, clamped to 1..=65535; anything else is unrated.
fn elo(v: Cell<'_>) -> Option<i64> {
    int(v).map(|e| e.clamp(1, i64::from(u16::MAX)))
}

/// The position of pawn set `set` in a window starting at `start` of `len` ids.
pub(super) fn slot(set: i64, start: i64, len: usize) -> Option<usize> {
    let i = usize::try_from(set.checked_sub(start)?).ok()?;
    (i < len).then_some(i)
}

/// One pass over the runs of the games up to `through`: what they give the pawn sets
/// `start..start + acc.len()`, and the positions by bishop-pair state when asked.
pub(super) fn gather(
    conn: &Snapshot,
    through: i64,
    start: i64,
    acc: &mut [Acc],
    mut bishops: Option<&mut [i64; 4]>,
) -> Result<()> {
    if acc.is_empty() && bishops.is_none() {
        return Ok(());
    }
    let mut st = read::runs_with_games(conn)?;
    let mut rows = st.rows(&[through])?;
    while let Some(r) = rows.next()? {
        let (Some(game), Some(first), Some(last)) =
            (int(r.get(0)?), int(r.get(1)?), int(r.get(2)?))
        else {
            continue;
        };
        let plies = last.saturating_sub(first).saturating_add(1).max(0);
        if let Some(b) = bishops.as_deref_mut()
            && let Some(bp) = int(r.get(5)?)
        {
            let i = (bp & 3) as usize; // as derive.rs counts it
            b[i] = b[i].saturating_add(plies);
        }
        if acc.is_empty() {
            continue;
        }
        let result = match r.get(6)? {
            Cell::Text(t) | Cell::Blob(t) => Some(t),
            _ => None,
        };
        let outcome = match Outcome::parse_bytes(result) {
            Outcome::Unknown => None,
            o => Some(o.index()),
        };
        let white_elo = elo(r.get(7)?);
        let black_elo = elo(r.get(8)?);
        for col in [3, 4] {
            if let Some(set) = int(r.get(col)?)
                && let Some(i) = slot(set, start, acc.len())
            {
                acc[i].add(game, plies, outcome, white_elo, black_elo);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_depend_on_order_and_content() {
        let a = [1i64, 2, 3].iter().fold(0, |h, &g| fold(h, g));
        let b = [1i64, 3, 2].iter().fold(0, |h, &g| fold(h, g));
        let c = [1i64, 2].iter().fold(0, |h, &g| fold(h, g));
        assert!(a != b && a != c && b != c);
        let mut acc = Acc::default();
        for (g, plies) in [(1, 2), (1, 3), (2, 1), (3, 1)] {
            acc.add(g, plies, Some(1), Some(2000), None);
        }
        assert_eq!(acc.games, 3);
        assert_eq!(acc.positions, 7);
        assert_eq!(acc.last_game, 3);
        assert_eq!(acc.fingerprint, a);
        assert_eq!(acc.totals(), [7, 3, 0, 7, 0, 14_000, 7, 0, 0]);
    }

    #[test]
    fn slots_never_panic() {
        assert_eq!(slot(5, 1, 10), Some(4));
        assert_eq!(slot(11, 1, 10), None);
        assert_eq!(slot(0, 1, 10), None);
        assert_eq!(slot(i64::MIN, 1, 10), None);
        assert_eq!(slot(i64::MAX, -5, 10), None);
    }
}
