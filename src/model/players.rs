//! Players' names: the folding rule that makes spellings comparable, the merging of a database's
//! spellings into players, and how a typed name finds one (docs/players.md, "Names").
//!
//! The store keeps every stored spelling with its folded form and its surname (`player_names`);
//! this module decides, from the spellings of a few surnames, who is who.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// A name folded for comparison: no accents, no case, a period is a space, one space between
/// words and none next to a comma or at the ends.
///
/// ```
/// use pawndex::model::players::fold;
/// assert_eq!(fold("Carlsen, Magnus"), "carlsen,magnus");
/// assert_eq!(fold("  CARLSEN ,  M. "), "carlsen,m");
/// assert_eq!(fold("Ðukić, Željko"), "dukic,zeljko");
/// assert_eq!(fold("Øystein Dannevig"), "oystein dannevig");
/// assert_eq!(fold("Großmann,J.-K."), "grossmann,j -k");
/// ```
#[must_use]
pub fn fold(name: &str) -> String {
    let mut plain = String::with_capacity(name.len());
    for c in name.nfkd() {
        if is_combining_mark(c) {
            continue;
        }
        match c {
            'ß' => plain.push_str("ss"),
            'ẞ' => plain.push_str("ss"),
            'Æ' | 'æ' => plain.push_str("ae"),
            'Œ' | 'œ' => plain.push_str("oe"),
            'Ø' | 'ø' => plain.push('o'),
            'Ł' | 'ł' => plain.push('l'),
            'Đ' | 'đ' | 'Ð' | 'ð' => plain.push('d'),
            'Þ' | 'þ' => plain.push_str("th"),
            'ı' => plain.push('i'),
            '.' => plain.push(' '),
            c if c.is_whitespace() => plain.push(' '),
            c => plain.extend(c.to_lowercase()),
        }
    }
    let mut out = String::with_capacity(plain.len());
    for (i, part) in plain.split(',').enumerate() {
        if i > 0 {
            out.push(',');
        }
        let mut first = true;
        for word in part.split(' ').filter(|w| !w.is_empty()) {
            if !first {
                out.push(' ');
            }
            out.push_str(word);
            first = false;
        }
    }
    out
}

/// The surname of a folded name: the part before its first comma, or all of it.
///
/// ```
/// use pawndex::model::players::surname;
/// assert_eq!(surname("carlsen,magnus"), "carlsen");
/// assert_eq!(surname("magnus carlsen"), "magnus carlsen");
/// ```
#[must_use]
pub fn surname(folded: &str) -> &str {
    folded.split_once(',').map_or(folded, |(s, _)| s)
}

/// The given names of a folded name, as words (split at spaces and hyphens): empty without a
/// comma.
fn given_words(folded: &str) -> Vec<&str> {
    folded.split_once(',').map_or_else(Vec::new, |(_, g)| {
        g.split([' ', '-', ',']).filter(|w| !w.is_empty()).collect()
    })
}

/// Whether a folded name is a plain "surname,given names": one comma, and given names made of
/// letters, spaces and hyphens only (not `anand,v2`, `anand,v / fritz7`, two names in one).
fn plain(folded: &str) -> bool {
    let mut parts = folded.split(',');
    parts.next();
    match (parts.next(), parts.next()) {
        (Some(given), None) => {
            !given.is_empty()
                && given
                    .chars()
                    .all(|c| c.is_alphabetic() || c == ' ' || c == '-')
        }
        _ => false,
    }
}

/// Whether folded name `short` abbreviates `long` (docs/players.md): the same surname, given
/// names in both, each of `short`'s given words the start of `long`'s word at the same place
/// (`m` of `magnus`, `ju` of `judit`, `j k` of `jan krzysztof`), and the two not alike.
///
/// ```
/// use pawndex::model::players::abbreviates;
/// assert!(abbreviates("carlsen,m", "carlsen,magnus"));
/// assert!(abbreviates("polgar,ju", "polgar,judit"));
/// assert!(abbreviates("carlsen,magnus", "carlsen,magnus oen"));
/// assert!(!abbreviates("carlsen,magnus", "carlsen,magnus"));
/// assert!(!abbreviates("carlsen,h", "carlsen,magnus"));
/// assert!(!abbreviates("carlsen", "carlsen,magnus"));
/// assert!(!abbreviates("polgar,s", "polgar-shutzman,sam"));
/// // Only plain names take part: one comma, given names of letters, spaces and hyphens.
/// assert!(!abbreviates("anand,v", "anand,v2"));
/// assert!(!abbreviates("anand,viswanathan", "anand,viswanathan:borgialli,mihail"));
/// ```
#[must_use]
pub fn abbreviates(short: &str, long: &str) -> bool {
    if short == long || surname(short) != surname(long) || !plain(short) || !plain(long) {
        return false;
    }
    let (s, l) = (given_words(short), given_words(long));
    !s.is_empty() && s.len() <= l.len() && s.iter().zip(&l).all(|(a, b)| b.starts_with(a))
}

/// One stored spelling and its games.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spelling {
    pub name: String,
    pub folded: String,
    pub games: i64,
}

/// A player: the spellings merged into one, the one shown first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Player {
    /// The spelling shown: the full-name spelling with the most games (else the spelling with
    /// the most games).
    pub shown: String,
    /// The folded name the player is known by (of the shown spelling).
    pub folded: String,
    /// Every stored spelling, sorted.
    pub names: Vec<String>,
    /// Games of all the spellings (a game between two of them counted twice).
    pub games: i64,
    /// Whether this is an abbreviation left alone because it abbreviates several players.
    pub ambiguous: bool,
}

/// Merges spellings into players (the rule of docs/players.md): the spellings of one folded
/// form are one player; an abbreviation ([`abbreviates`]: initials, `Polgar,Ju`) joins the one
/// complete player of its surname it abbreviates (complete: abbreviating no other spelling),
/// when exactly one; else it stays alone, marked `ambiguous`. Players come out most games first.
///
/// ```
/// use pawndex::model::players::{Spelling, merge};
/// let s = |name: &str, games| Spelling {
///     name: name.into(),
///     folded: pawndex::model::players::fold(name),
///     games,
/// };
/// let players = merge(vec![
///     s("Carlsen,M", 3421),
///     s("Carlsen,Magnus", 9),
///     s("Carlsen, Magnus", 2),
///     s("Carlsen,H", 1),
///     s("Polgar,Susan", 400),
///     s("Polgar,Sofia", 100),
///     s("Polgar,S", 50),
/// ]);
/// let names: Vec<_> = players.iter().map(|p| (p.shown.as_str(), p.names.len())).collect();
/// assert_eq!(
///     names,
///     [("Carlsen,Magnus", 3), ("Polgar,Susan", 1), ("Polgar,Sofia", 1), ("Polgar,S", 1), ("Carlsen,H", 1)]
/// );
/// assert!(players[3].ambiguous);
/// ```
#[must_use]
pub fn merge(mut spellings: Vec<Spelling>) -> Vec<Player> {
    spellings.sort_by(|a, b| {
        surname(&a.folded)
            .cmp(surname(&b.folded))
            .then(a.folded.cmp(&b.folded))
            .then(a.name.cmp(&b.name))
    });
    let mut players = Vec::new();
    let mut rest = &spellings[..];
    while let Some(first) = rest.first() {
        let n = rest
            .iter()
            .take_while(|s| surname(&s.folded) == surname(&first.folded))
            .count();
        merge_surname(&rest[..n], &mut players);
        rest = &rest[n..];
    }
    players.sort_by(|a, b| b.games.cmp(&a.games).then(a.shown.cmp(&b.shown)));
    players
}

/// [`merge`] for the spellings of one surname, sorted by folded form.
fn merge_surname(spellings: &[Spelling], players: &mut Vec<Player>) {
    // The players of each folded form.
    let mut groups: Vec<Vec<Spelling>> = Vec::new();
    for s in spellings {
        match groups.last_mut() {
            Some(g) if g[0].folded == s.folded => g.push(s.clone()),
            _ => groups.push(vec![s.clone()]),
        }
    }
    // A group is complete when it abbreviates no other; an abbreviation joins the one
    // complete group it abbreviates (abbreviating is transitive, so that group is the end of
    // every chain), and stays alone when it abbreviates several.
    let folded: Vec<&str> = groups.iter().map(|g| g[0].folded.as_str()).collect();
    let complete: Vec<bool> = folded
        .iter()
        .map(|a| !folded.iter().any(|b| abbreviates(a, b)))
        .collect();
    let mut joined: Vec<Option<usize>> = vec![None; groups.len()];
    let mut ambiguous = vec![false; groups.len()];
    for (i, a) in folded.iter().enumerate() {
        if complete[i] {
            continue;
        }
        let targets: Vec<usize> = (0..folded.len())
            .filter(|&j| complete[j] && abbreviates(a, folded[j]))
            .collect();
        match targets[..] {
            [j] => joined[i] = Some(j),
            _ => ambiguous[i] = true,
        }
    }
    let mut joining: Vec<Vec<Spelling>> = vec![Vec::new(); groups.len()];
    for (i, g) in groups.iter().enumerate() {
        if let Some(j) = joined[i] {
            joining[j].extend(g.iter().cloned());
        }
    }
    for ((own, others), (i, ambiguous)) in groups
        .into_iter()
        .zip(joining)
        .zip(ambiguous.into_iter().enumerate())
    {
        if joined[i].is_none() {
            players.push(player_of(own, others, ambiguous));
        }
    }
}

/// A player from the spellings of its own folded form (the name shown is the one of them with
/// the most games) and those of the abbreviations joining it.
fn player_of(own: Vec<Spelling>, others: Vec<Spelling>, ambiguous: bool) -> Player {
    let (shown, folded) = own
        .iter()
        .max_by(|a, b| a.games.cmp(&b.games).then(b.name.cmp(&a.name)))
        .map(|s| (s.name.clone(), s.folded.clone()))
        .unwrap_or_default();
    let mut spellings: Vec<Spelling> = own.into_iter().chain(others).collect();
    spellings.sort_by(|a, b| a.name.cmp(&b.name));
    Player {
        shown,
        folded,
        games: spellings.iter().map(|s| s.games).sum(),
        names: spellings.into_iter().map(|s| s.name).collect(),
        ambiguous,
    }
}

/// The surnames whose spellings [`resolve`] needs to find a typed name: its own, and for a name
/// without a comma written "Given Surname", the last word.
///
/// ```
/// use pawndex::model::players::surnames_to_look_up;
/// assert_eq!(surnames_to_look_up("Carlsen, M."), ["carlsen"]);
/// assert_eq!(surnames_to_look_up("Magnus Carlsen"), ["magnus carlsen", "carlsen"]);
/// ```
#[must_use]
pub fn surnames_to_look_up(typed: &str) -> Vec<String> {
    let folded = fold(typed);
    let mut out = vec![surname(&folded).to_owned()];
    if !folded.contains(',')
        && let Some((_, last)) = folded.rsplit_once(' ')
    {
        out.push(last.to_owned());
    }
    out
}

/// What a typed name found among the players (indexes into the slice given to [`resolve`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    One(usize),
    /// Several players match: the candidates, most games first.
    Ambiguous(Vec<usize>),
    Unknown,
}

/// Finds the player a typed name means, among the players of the surnames
/// [`surnames_to_look_up`] named (docs/players.md: an exact spelling, an abbreviation of one player,
/// a surname of one player, "Given Surname"; several matches are ambiguous, never a guess).
///
/// ```
/// use pawndex::model::players::{Resolution, Spelling, fold, merge, resolve};
/// let s = |name: &str| Spelling { name: name.into(), folded: fold(name), games: 1 };
/// let players = merge(vec![s("Carlsen,M"), s("Carlsen,Magnus"), s("Polgar,Susan"), s("Polgar,Judit")]);
/// let magnus = players.iter().position(|p| p.shown == "Carlsen,Magnus").unwrap();
/// assert_eq!(resolve("carlsen, m.", &players), Resolution::One(magnus));
/// assert_eq!(resolve("CARLSEN", &players), Resolution::One(magnus));
/// assert_eq!(resolve("Magnus Carlsen", &players), Resolution::One(magnus));
/// assert!(matches!(resolve("Polgar", &players), Resolution::Ambiguous(c) if c.len() == 2));
/// assert_eq!(resolve("Kasparov", &players), Resolution::Unknown);
/// ```
#[must_use]
pub fn resolve(typed: &str, players: &[Player]) -> Resolution {
    let folded = fold(typed);
    if folded.is_empty() {
        return Resolution::Unknown;
    }
    let r = resolve_folded(&folded, players);
    if r != Resolution::Unknown || folded.contains(',') {
        return r;
    }
    // "Given Surname": the last word as the surname.
    match folded.rsplit_once(' ') {
        Some((given, last)) => resolve_folded(&format!("{last},{given}"), players),
        None => Resolution::Unknown,
    }
}

fn resolve_folded(folded: &str, players: &[Player]) -> Resolution {
    let ordered = |mut found: Vec<usize>| {
        found.sort_by(|&a, &b| {
            players[b]
                .games
                .cmp(&players[a].games)
                .then(players[a].shown.cmp(&players[b].shown))
        });
        found.dedup();
        match found[..] {
            [] => Resolution::Unknown,
            [one] => Resolution::One(one),
            _ => Resolution::Ambiguous(found),
        }
    };
    // The complete players a folded name abbreviates or is.
    let abbreviated = |short: &str| -> Vec<usize> {
        players
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.ambiguous && (p.folded == short || abbreviates(short, &p.folded)))
            .map(|(i, _)| i)
            .collect()
    };
    // 1. A stored spelling.
    if let Some(i) = players
        .iter()
        .position(|p| p.names.iter().any(|n| fold(n) == folded))
    {
        if players[i].ambiguous {
            let mut found = abbreviated(folded);
            found.push(i);
            return ordered(found);
        }
        return Resolution::One(i);
    }
    // 2. An abbreviation of one player.
    if folded.contains(',') {
        return ordered(abbreviated(folded));
    }
    // 3. A surname.
    ordered(
        players
            .iter()
            .enumerate()
            .filter(|(_, p)| surname(&p.folded) == folded)
            .map(|(i, _)| i)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(name: &str, games: i64) -> Spelling {
        Spelling {
            name: name.into(),
            folded: fold(name),
            games,
        }
    }

    #[test]
    fn spellings_of_one_folded_form_are_one_player() {
        let p = merge(vec![s("Carlsen, Magnus", 2), s("carlsen,magnus", 3)]);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].games, 5);
        assert_eq!(p[0].shown, "carlsen,magnus");
    }

    #[test]
    fn initials_without_a_full_name_stay_alone_and_are_found() {
        let players = merge(vec![s("Carlsen,H", 1), s("Carlsen,Magnus", 9)]);
        let h = players.iter().position(|p| p.shown == "Carlsen,H").unwrap();
        assert_eq!(resolve("Carlsen, H.", &players), Resolution::One(h));
        assert!(matches!(resolve("carlsen", &players), Resolution::Ambiguous(c) if c.len() == 2));
    }

    #[test]
    fn ambiguous_initials_list_every_candidate() {
        let players = merge(vec![
            s("Polgar,S", 5),
            s("Polgar,Susan", 50),
            s("Polgar,Sofia", 20),
        ]);
        match resolve("Polgar,S", &players) {
            Resolution::Ambiguous(c) => {
                let shown: Vec<_> = c.iter().map(|&i| players[i].shown.as_str()).collect();
                assert_eq!(shown, ["Polgar,Susan", "Polgar,Sofia", "Polgar,S"]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            resolve("Polgar, Su", &players),
            Resolution::One(
                players
                    .iter()
                    .position(|p| p.shown == "Polgar,Susan")
                    .unwrap()
            )
        );
    }

    #[test]
    fn abbreviations_join_the_one_complete_name() {
        let players = merge(vec![
            s("Duda,J-K", 5),
            s("Duda,Jan-Krzysztof", 50),
            s("Duda,Jan", 3),
        ]);
        let jk = players
            .iter()
            .position(|p| p.shown == "Duda,Jan-Krzysztof")
            .unwrap();
        // Jan abbreviates Jan-Krzysztof too, the one complete Duda: one player.
        assert_eq!(players.len(), 1);
        assert_eq!(
            players[jk].names,
            ["Duda,J-K", "Duda,Jan", "Duda,Jan-Krzysztof"]
        );
        assert_eq!(resolve("duda, j.k.", &players), Resolution::One(jk));
        assert_eq!(resolve("Jan-Krzysztof Duda", &players), Resolution::One(jk));
    }

    #[test]
    fn empty_and_odd_names_do_not_panic() {
        let players = merge(vec![s("?", 3), s(",", 1), s("", 1), s("Ab,", 1)]);
        assert_eq!(resolve("", &players), Resolution::Unknown);
        assert_eq!(resolve("   ", &players), Resolution::Unknown);
        let _ = resolve(",", &players);
        let _ = resolve("?", &players);
    }
}
