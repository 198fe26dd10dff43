//! `set_games` against the runs: each set's game list (a blob of varints) holds the games whose
//! runs reach the set, compared by its count, last id and an order-sensitive fingerprint; the
//! first mismatches are then described game by game (one more pass over the runs each).

use anyhow::Result;

use super::derived::Window;
use super::recompute::{Acc, fold};
use super::{Kind, Report, int, n_games, show};
use crate::store::decode_games;
use crate::store::read::Snapshot;
use crate::store::read::check::{self as read, Cell};

/// `set_games` rows of the pawn sets `start..end` against `acc` (the window's recomputation).
pub(super) fn compare_games(
    conn: &Snapshot,
    f: &mut Report,
    through: i64,
    start: i64,
    end: i64,
    acc: &[Acc],
) -> Result<()> {
    // A valid list holds at most `through` ids of at most 10 bytes each: a longer blob is not
    // decoded (its ids would take 8 bytes each in memory).
    let max_bytes = u64::try_from(through)
        .unwrap_or(0)
        .saturating_mul(10)
        .saturating_add(16);
    let mut st = read::set_games(conn)?;
    let mut rows = st.rows(&[start, end])?;
    let mut window = Window::new(Kind::SetGames, start, acc);
    while let Some(r) = rows.next()? {
        let set = r.id(0)?; // INTEGER PRIMARY KEY
        let want = window.row(f, set);
        let mut parts = Vec::new();
        match list_bytes(r.get(2)?, &mut parts) {
            None => {}
            Some(blob) if blob.len() as u64 > max_bytes => parts.push(format!(
                "the list is {} bytes, more than any list of the {through} games up to \
                 derived.through",
                blob.len()
            )),
            Some(blob) => {
                let list = List { through, set, want };
                list.compare(conn, f, blob, &mut parts)?;
            }
        }
        let last = r.get(1)?;
        if want.games > 0 && int(last) != Some(want.last_game) {
            parts.push(format!(
                "last_game is {} but the last game reaching the set is {}",
                show(last),
                want.last_game
            ));
        }
        if !parts.is_empty() {
            f.problem(Kind::SetGames, || {
                format!("set_games: set {set}: {}", parts.join("; "))
            });
        }
    }
    window.finish(f);
    Ok(())
}

/// The bytes of a stored game list (a blob, or text an append wrote with `||`), with what is
/// wrong with its type added to `parts`.
fn list_bytes<'a>(value: Cell<'a>, parts: &mut Vec<String>) -> Option<&'a [u8]> {
    match value {
        Cell::Blob(b) => Some(b),
        Cell::Text(t) => {
            // SQLite's `||` turns blobs into text: an append written that way.
            parts.push(format!(
                "games is text ({} bytes), not a blob, so queries cannot read it",
                t.len()
            ));
            Some(t)
        }
        other => {
            parts.push(format!("games is {}, not a blob", show(other)));
            None
        }
    }
}

/// One set's stored game list and what the runs give it.
struct List {
    through: i64,
    set: i64,
    want: Acc,
}

impl List {
    /// The decoded list against the runs: canonical encoding, no game twice, not empty, and
    /// the games of the runs (described when the example is kept).
    fn compare(
        &self,
        conn: &Snapshot,
        f: &Report,
        blob: &[u8],
        parts: &mut Vec<String>,
    ) -> Result<()> {
        let want = &self.want;
        let ids = decode_games(blob);
        match encoded_len(&ids) {
            Some(n) if n == blob.len() => {}
            Some(n) => parts.push(format!(
                "the list is damaged: its {} bytes give {} game ids, which take {n} bytes",
                blob.len(),
                ids.len()
            )),
            None => {}
        }
        if let Some(w) = ids.windows(2).find(|w| w[1] <= w[0]) {
            parts.push(format!("the list has game {} twice", w[1]));
        }
        if ids.is_empty() && want.games == 0 {
            parts.push("the list is empty".to_owned());
        }
        let fingerprint = ids.iter().fold(0, |h, &id| fold(h, id));
        let count = i64::try_from(ids.len()).unwrap_or(i64::MAX);
        if (count, fingerprint) != (want.games, want.fingerprint) {
            let detail = if f.shows(Kind::SetGames) {
                first_difference(conn, self.through, self.set, &ids)?
            } else {
                String::new()
            };
            parts.push(format!(
                "the list has {}, the runs give {}{detail}",
                n_games(count),
                n_games(want.games)
            ));
        }
        Ok(())
    }
}

/// Where a set's game list first differs from the games whose runs reach it (one pass over
/// the runs), as `": it …"`.
fn first_difference(conn: &Snapshot, through: i64, set: i64, listed: &[i64]) -> Result<String> {
    let mut st = read::games_of_set(conn)?;
    let mut rows = st.rows(&[through, set])?;
    let mut i = 0usize;
    let mut previous = None;
    while let Some(r) = rows.next()? {
        let Some(game) = int(r.get(0)?) else {
            continue;
        };
        if previous == Some(game) {
            continue;
        }
        // A game listed twice is reported on its own.
        while i > 0 && listed.get(i).is_some() && listed.get(i) == listed.get(i - 1) {
            i += 1;
        }
        previous = Some(game);
        match listed.get(i) {
            Some(&l) if l == game => i += 1,
            Some(&l) if l < game => {
                return Ok(format!(": it lists game {l}, which does not reach the set"));
            }
            _ => return Ok(format!(": it misses game {game}")),
        }
    }
    while i > 0 && listed.get(i).is_some() && listed.get(i) == listed.get(i - 1) {
        i += 1;
    }
    Ok(match listed.get(i) {
        Some(&l) => format!(": it lists game {l}, which does not reach the set"),
        None => String::new(),
    })
}

/// Bytes of the canonical encoding of a game list (LEB128 varints of the differences, the
/// first from 0), as `pawndex index` writes it; `None` if the ids are not ascending.
pub(super) fn encoded_len(ids: &[i64]) -> Option<usize> {
    let mut last = 0i64;
    let mut len = 0usize;
    for &id in ids {
        let diff = id.checked_sub(last).filter(|&d| d >= 0)? as u64;
        len += (64 - diff.leading_zeros() as usize).div_ceil(7).max(1);
        last = id;
    }
    Some(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_lengths_match_the_lists_index_writes() {
        // The example of `decode_games`: 3, 4, 132 as 3, 1, 0x80 0x01.
        let ids = decode_games(&[3, 1, 0x80, 0x01]);
        assert_eq!(ids, vec![3, 4, 132]);
        assert_eq!(encoded_len(&ids), Some(4));
        assert_eq!(encoded_len(&[]), Some(0));
        assert_eq!(encoded_len(&[0]), Some(1));
        assert_eq!(encoded_len(&[5, 4]), None);
        assert_eq!(encoded_len(&[i64::MAX]), Some(9));
        // A non-canonical varint (1 as 0x81 0x00) decodes but is longer than it should be.
        assert_eq!(decode_games(&[0x81, 0x00]), vec![1]);
        assert_eq!(encoded_len(&[1]), Some(1));
    }
}
