//! What a question counts and over which plies: every position or every game once, and ply
//! ranges as the command line writes them.

use clap::ValueEnum;

/// Every position (game and ply) or every game once.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Per {
    /// Every matching position (game and ply) counts once
    Position,
    /// Every matching game counts once
    Game,
}

/// Parses a ply range `A..B` (both included), `A..`, `..B` or one ply `N`.
///
/// ```text
/// 10..20 -> (10, 20)    30.. -> (30, u32::MAX)    ..4 -> (0, 4)    7 -> (7, 7)
/// ```
pub fn ply_range(text: &str) -> std::result::Result<(u32, u32), String> {
    let t = text.trim();
    let bad = || "expected A..B, A.., ..B or N with whole numbers of plies (0 or more)".to_string();
    let number = |s: &str, default: u32| -> std::result::Result<u32, String> {
        let s = s.trim();
        if s.is_empty() {
            Ok(default)
        } else {
            s.parse().map_err(|_| bad())
        }
    };
    let (from, to) = match t.split_once("..") {
        Some((a, b)) if !(a.trim().is_empty() && b.trim().is_empty()) => {
            (number(a, 0)?, number(b, u32::MAX)?)
        }
        Some(_) => return Err(bad()),
        None => {
            let n = t.parse().map_err(|_| bad())?;
            (n, n)
        }
    };
    if from > to {
        return Err(format!("the range is empty ({from} > {to})"));
    }
    Ok((from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ply_ranges() {
        assert_eq!(ply_range("10..20"), Ok((10, 20)));
        assert_eq!(ply_range("10.."), Ok((10, u32::MAX)));
        assert_eq!(ply_range("..20"), Ok((0, 20)));
        assert_eq!(ply_range(" 7 "), Ok((7, 7)));
        for bad in ["..", "a..b", "20..10", "-1..3", "", "1..2..3"] {
            assert!(ply_range(bad).is_err(), "{bad}");
        }
    }
}
