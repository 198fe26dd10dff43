//! Reading a structure definition file (`structures/*.toml`, format in `docs/structures.md`):
//! its size caps, its TOML fields, and the checks that refuse a definition that can never
//! match (a square required for both sides, counts that cannot hold together).

use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;

use crate::model::structure::{Definition, MAX_FILE_BYTES, MAX_LIST, SideRule};

/// The most pawns a side can have.
const MAX_PAWNS: u32 = 8;
/// The squares where a pawn can stand: ranks 2 to 7.
const PAWN_SQUARES: u64 = 0x00FF_FFFF_FFFF_FF00;

/// The file cap, for messages.
pub(super) fn file_cap() -> String {
    format!(
        "above the limit of {MAX_FILE_BYTES} bytes ({} KiB) for a structure definition file",
        MAX_FILE_BYTES >> 10
    )
}

/// Reads one definition file: a file above [`MAX_FILE_BYTES`] is refused before it is read,
/// and no more than the cap (and one byte) is ever read.
pub(super) fn read_capped(path: &Path) -> Result<String> {
    let cannot = || format!("cannot read {}", path.display());
    let meta = std::fs::metadata(path).with_context(cannot)?;
    if !meta.is_file() {
        bail!("{} is not a regular file", path.display());
    }
    if meta.len() > MAX_FILE_BYTES {
        bail!("{} is {} bytes, {}", path.display(), meta.len(), file_cap());
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .with_context(cannot)?
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(cannot)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        bail!(
            "{} grew while it was read to more than {MAX_FILE_BYTES} bytes, {}",
            path.display(),
            file_cap()
        );
    }
    String::from_utf8(bytes).map_err(|_| anyhow!("{} is not UTF-8 text", path.display()))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DefinitionFile {
    name: String,
    family: String,
    description: String,
    source: String,
    #[serde(default)]
    about: String,
    #[serde(default)]
    reversed: bool,
    #[serde(default)]
    priority: i32,
    #[serde(default)]
    white: SideFile,
    #[serde(default)]
    black: SideFile,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct SideFile {
    #[serde(default)]
    pawns: Vec<String>,
    #[serde(default)]
    none: Vec<String>,
    #[serde(default)]
    one_of: Vec<Vec<String>>,
    #[serde(default)]
    count: Vec<CountFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CountFile {
    files: String,
    min: Option<u32>,
    max: Option<u32>,
}

/// Parses one definition file.
pub(super) fn parse(key: &str, text: &str) -> Result<Definition> {
    if key.is_empty()
        || !key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        bail!("the file name must be lowercase letters, digits and '-' (got {key:?})");
    }
    let file: DefinitionFile = toml::from_str(text)?;
    for (field, value) in [
        ("name", &file.name),
        ("family", &file.family),
        ("description", &file.description),
        ("source", &file.source),
    ] {
        if value.trim().is_empty() {
            bail!("`{field}` is empty");
        }
    }
    let white = side_rule(&file.white).context("in [white]")?;
    let black = side_rule(&file.black).context("in [black]")?;
    if white.conditions() + black.conditions() == 0 {
        bail!("no condition on either side: every position would match");
    }
    let both = white.pawns & black.pawns;
    if both != 0 {
        bail!(
            "{} is in `pawns` of both [white] and [black]: a square holds one pawn, so the \
             structure can never match",
            squares_text(both)
        );
    }
    satisfiable(&white, black.pawns).context("in [white]")?;
    satisfiable(&black, white.pawns).context("in [black]")?;
    Ok(Definition {
        key: key.to_string(),
        name: file.name.trim().to_string(),
        family: file.family.trim().to_string(),
        description: file.description.trim().to_string(),
        source: file.source.trim().to_string(),
        about: file.about.trim().to_string(),
        reversed: file.reversed,
        priority: file.priority,
        white,
        black,
    })
}

/// The squares of a file letter `a`..`h` where a pawn can stand (ranks 2 to 7: a whole file
/// counts 6 conditions).
pub(super) fn file_mask(letter: u8) -> u64 {
    0x0001_0101_0101_0100 << (letter - b'a')
}

/// A square `a2`..`h7` (pawns never stand on the first or last rank), or with `files`, a
/// lone file letter meaning that file's squares.
pub(super) fn squares(text: &str, files: bool) -> Result<u64> {
    match text.as_bytes() {
        [f @ b'a'..=b'h'] if files => Ok(file_mask(*f)),
        [f @ b'a'..=b'h', r @ b'2'..=b'7'] => Ok(1 << ((r - b'1') * 8 + (f - b'a'))),
        [b'a'..=b'h', b'1' | b'8'] => bail!("no pawn can stand on {text}"),
        _ if files => bail!("{text:?} is neither a square (like \"d4\") nor a file (like \"c\")"),
        _ => bail!("{text:?} is not a square (like \"d4\")"),
    }
}

/// Refuses a list longer than [`MAX_LIST`].
fn capped<T>(list: &[T], what: &str) -> Result<()> {
    if list.len() > MAX_LIST {
        bail!(
            "`{what}` has {} entries; a list may hold at most {MAX_LIST}",
            list.len()
        );
    }
    Ok(())
}

/// Compiles one side's conditions.
fn side_rule(side: &SideFile) -> Result<SideRule> {
    capped(&side.pawns, "pawns")?;
    capped(&side.none, "none")?;
    capped(&side.one_of, "one_of")?;
    capped(&side.count, "count")?;
    let mut rule = SideRule::default();
    for s in &side.pawns {
        rule.pawns |= squares(s, false).context("in `pawns`")?;
    }
    for s in &side.none {
        rule.none |= squares(s, true).context("in `none`")?;
    }
    if rule.pawns & rule.none != 0 {
        bail!("a square is both in `pawns` and in `none`");
    }
    for list in &side.one_of {
        capped(list, "one_of` list")?;
        let mut mask = 0;
        for s in list {
            mask |= squares(s, false).context("in `one_of`")?;
        }
        if mask == 0 {
            bail!("an empty list in `one_of`");
        }
        rule.one_of.push(mask);
    }
    for c in &side.count {
        let mut mask = 0;
        for f in c.files.bytes() {
            if !(b'a'..=b'h').contains(&f) {
                bail!("`count` files must be letters a to h (got {:?})", c.files);
            }
            // One meaning only: a file counts once (the mask), so it is written once.
            if mask & file_mask(f) != 0 {
                bail!(
                    "`count` on {:?} names the file {} twice; write each file once",
                    c.files,
                    char::from(f)
                );
            }
            mask |= file_mask(f);
        }
        if mask == 0 {
            bail!("`count` without files");
        }
        let (lo, hi) = (c.min.unwrap_or(0), c.max.unwrap_or(u32::from(u8::MAX)));
        if c.min.is_none() && c.max.is_none() {
            bail!("`count` on {:?} needs `min` or `max`", c.files);
        }
        if lo > hi {
            bail!(
                "`count` on {:?} can never match (min {lo} above max {hi})",
                c.files
            );
        }
        rule.count.push((mask, lo, hi));
    }
    Ok(rule)
}

/// The files a mask touches, as letters: `"cde"`.
pub(super) fn files_text(mask: u64) -> String {
    (b'a'..=b'h')
        .filter(|&f| mask & file_mask(f) != 0)
        .map(char::from)
        .collect()
}

/// The squares of a mask, as names: `"d4 e4"`.
pub(super) fn squares_text(mask: u64) -> String {
    (0..64)
        .filter(|i| mask >> i & 1 == 1)
        .map(|i| format!("{}{}", char::from(b'a' + i % 8), i / 8 + 1))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The files of a mask as 8 bits (a = bit 0).
fn file_bits(mask: u64) -> usize {
    (0..8)
        .filter(|&f| mask & file_mask(b'a' + f) != 0)
        .fold(0, |b, f| b | 1 << f)
}

/// The squares of the files in 8 bits.
pub(super) fn files_mask(bits: usize) -> u64 {
    (0..8)
        .filter(|f| bits >> f & 1 == 1)
        .fold(0, |m, f| m | file_mask(b'a' + f as u8))
}

/// How many of the masks a greedy choice finds pairwise disjoint (smallest first): a lower
/// bound on the pawns it takes to put one on each.
fn disjoint<'a>(masks: impl Iterator<Item = &'a u64>) -> u32 {
    let mut masks: Vec<u64> = masks.copied().collect();
    masks.sort_by_key(|m| m.count_ones());
    let (mut taken, mut n) = (0u64, 0);
    for m in masks {
        if m & taken == 0 {
            taken |= m;
            n += 1;
        }
    }
    n
}

/// Refuses one side's conditions when no set of pawns can meet them all: a `one_of` list with
/// no square left, a `count` asking for more pawns than its files can hold or allowing fewer
/// than the required pawns (and `one_of` lists) on them, more than 8 pawns needed in all, or
/// counts that cannot hold together. `other` is the other side's required squares (a square
/// holds one pawn). Each test is a necessary condition, so nothing that can match is refused.
fn satisfiable(rule: &SideRule, other: u64) -> Result<()> {
    let free = PAWN_SQUARES & !rule.none & !other;
    for &m in &rule.one_of {
        if m & free == 0 {
            bail!(
                "the `one_of` list {} can never match: each of its squares is in `none` or \
                 holds a required pawn of the other side",
                squares_text(m)
            );
        }
    }
    // The `one_of` lists no required pawn meets, on the squares left to them: each needs a
    // pawn more.
    let open: Vec<u64> = rule
        .one_of
        .iter()
        .filter(|&&m| m & rule.pawns == 0)
        .map(|&m| m & free)
        .collect();
    for &(mask, lo, hi) in &rule.count {
        let files = files_text(mask);
        let room = (mask & free).count_ones();
        if lo > room {
            if room == mask.count_ones() {
                bail!(
                    "`count` on {files:?} asks for at least {lo} pawns, but those files hold at \
                     most {room} (ranks 2 to 7)"
                );
            }
            bail!(
                "`count` on {files:?} asks for at least {lo} pawns, but only {room} squares of \
                 those files are free (the others are in `none` or hold the other side's \
                 required pawns)"
            );
        }
        let required = (rule.pawns & mask).count_ones();
        let lists = disjoint(open.iter().filter(|&&m| m & !mask == 0));
        if required + lists > hi {
            let why = match (required, lists) {
                (r, 0) => format!("`pawns` puts {r} there"),
                (0, l) => format!("`one_of` needs {l} there"),
                (r, l) => format!("`pawns` puts {r} there and `one_of` needs {l} more"),
            };
            bail!("`count` on {files:?} allows at most {hi} pawns, but {why}");
        }
    }
    let (pawns, counts, lists) = fewest_pawns(rule, &open);
    if pawns + counts + lists > MAX_PAWNS {
        let mut parts = vec![format!("{pawns} in `pawns`")];
        if counts > 0 {
            parts.push(format!("{counts} more for the `count` minimums"));
        }
        if lists > 0 {
            parts.push(format!("{lists} more for `one_of`"));
        }
        bail!(
            "the conditions need at least {} pawns ({}), but a side has at most {MAX_PAWNS}",
            pawns + counts + lists,
            parts.join(", ")
        );
    }
    if !rule.count.is_empty() && !counts_can_hold(rule, free, &open) {
        bail!(
            "the `count` conditions cannot all hold together (with `pawns`, `none` and \
             `one_of`, and at most {MAX_PAWNS} pawns, 6 on a file)"
        );
    }
    Ok(())
}

/// A lower bound on the pawns a side's conditions need: (required squares, more pawns for the
/// `count` minimums of pairwise disjoint groups of files, more for pairwise disjoint open
/// `one_of` lists on the other files). The three kinds of pawns are distinct.
fn fewest_pawns(rule: &SideRule, open: &[u64]) -> (u32, u32, u32) {
    // best[m]: the most pawns beyond the required ones that counts on disjoint groups of files
    // covering exactly the files m need.
    let mut best: [Option<u32>; 256] = [None; 256];
    best[0] = Some(0);
    for &(mask, lo, _) in &rule.count {
        let files = file_bits(mask);
        let extra = lo.saturating_sub((rule.pawns & mask).count_ones());
        for m in (0..256).rev() {
            if let Some(b) = best[m]
                && m & files == 0
            {
                let t = &mut best[m | files];
                *t = Some(t.map_or(b + extra, |x| x.max(b + extra)));
            }
        }
    }
    let mut most = (0, 0);
    for (m, b) in best.iter().enumerate() {
        if let Some(b) = *b {
            let outside = files_mask(m);
            let lists = disjoint(open.iter().filter(|&&l| l & outside == 0));
            if b + lists > most.0 + most.1 {
                most = (b, lists);
            }
        }
    }
    (rule.pawns.count_ones(), most.0, most.1)
}

/// Steps [`counts_can_hold`] may take; past them it answers yes (never refusing wrongly).
const COUNT_SEARCH_STEPS: u32 = 200_000;

/// Whether some number of pawns on each file, at most 8 in all, meets the required squares, the
/// free squares, every `count`, and (a necessary condition) the open `one_of` lists. A search
/// over the files, pruned by the counts; it gives up (yes) after [`COUNT_SEARCH_STEPS`] steps.
fn counts_can_hold(rule: &SideRule, free: u64, open: &[u64]) -> bool {
    struct Search<'a> {
        groups: Vec<(usize, u32, u32)>,
        required: [u32; 8],
        room: [u32; 8],
        open: &'a [u64],
        k: [u32; 8],
        steps: u32,
    }
    impl Search<'_> {
        /// Whether files `f..` can be filled, `total` pawns on files `..f` so far.
        fn go(&mut self, f: usize, total: u32) -> bool {
            self.steps += 1;
            if self.steps > COUNT_SEARCH_STEPS {
                return true;
            }
            let still: u32 = self.required[f..].iter().sum();
            if total + still > MAX_PAWNS {
                return false;
            }
            let left = MAX_PAWNS - total;
            for &(g, lo, hi) in &self.groups {
                let (mut done, mut room) = (0, 0);
                for i in 0..8 {
                    if g >> i & 1 == 1 {
                        if i < f {
                            done += self.k[i];
                        } else {
                            room += self.room[i];
                        }
                    }
                }
                if done > hi || done + room.min(left) < lo {
                    return false;
                }
            }
            if f == 8 {
                return self.lists_fit();
            }
            for n in self.required[f]..=self.room[f] {
                if total + n > MAX_PAWNS {
                    break;
                }
                self.k[f] = n;
                if self.go(f + 1, total + n) {
                    return true;
                }
            }
            false
        }

        /// Necessary for the open lists: each has a square on a file with a pawn to spare,
        /// and the pairwise disjoint ones no more than the pawns to spare.
        fn lists_fit(&self) -> bool {
            let spare: Vec<u32> = (0..8).map(|i| self.k[i] - self.required[i]).collect();
            let spare_files = (0..8)
                .filter(|&i| spare[i] > 0)
                .fold(0u64, |m, i| m | file_mask(b'a' + i as u8));
            self.open.iter().all(|&l| l & spare_files != 0)
                && disjoint(self.open.iter()) <= spare.iter().sum()
        }
    }
    let per_file = |mask: u64| -> [u32; 8] {
        std::array::from_fn(|i| (mask & file_mask(b'a' + i as u8)).count_ones())
    };
    let mut search = Search {
        groups: rule
            .count
            .iter()
            .map(|&(m, lo, hi)| (file_bits(m), lo, hi))
            .collect(),
        required: per_file(rule.pawns),
        room: per_file(free),
        open,
        k: [0; 8],
        steps: 0,
    };
    search.go(0, 0)
}
