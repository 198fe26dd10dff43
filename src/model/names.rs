//! Looking names up: the one suggestion rule for a mistyped name (a query, a structure, a
//! family, a column).

/// The names among `candidates` close to a mistyped `name`, closest first (at most three, and
/// only those about as close as the closest): the
/// one suggestion rule of every command that looks a name up. Case is ignored, words in any
/// order count as close ("carlsbad-reversed" finds "reversed-carlsbad"), and so does a name
/// that holds the typed one.
#[must_use]
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let words = |s: &str| {
        let mut w: Vec<&str> = s.split(['-', '_', ' ']).filter(|w| !w.is_empty()).collect();
        w.sort_unstable();
        w.join("-")
    };
    let wanted = name.to_lowercase();
    let mut scored: Vec<(f64, &'a str)> = candidates
        .into_iter()
        .map(|n| {
            let lower = n.to_lowercase();
            let mut score = strsim::jaro_winkler(&wanted, &lower)
                .max(strsim::jaro_winkler(&words(&wanted), &words(&lower)));
            if !wanted.is_empty() && lower.contains(wanted.as_str()) {
                score += 0.2;
            }
            (score, n)
        })
        .filter(|&(s, _)| s >= 0.8)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.dedup_by(|a, b| a.1 == b.1);
    // Only names about as close as the closest: one clear match is not drowned in near ones.
    let best = scored.first().map_or(0.0, |s| s.0);
    scored
        .into_iter()
        .take_while(|&(s, _)| s >= best - 0.1)
        .take(3)
        .map(|(_, n)| n)
        .collect()
}

/// ` (did you mean a, b?)` for the [`closest`] names, or nothing when none is close.
#[must_use]
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let close = closest(name, candidates);
    if close.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", close.join(", "))
    }
}
