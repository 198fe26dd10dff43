//! Named pawn structures: the catalogue of `structures/*.toml` compiled into bitboard rules, and
//! the classifier that names a position from its two pawn bitboards.
//!
//! A definition states, for each side, the squares that must hold a pawn of that side, the
//! squares (or whole files) that must not, lists of squares of which at least one must, and
//! how many pawns may stand on a group of files. Pawns it does not mention are free. The
//! colour-reversed form (colours swapped, board turned: a White pawn on d4 becomes a Black pawn
//! on d5) is looked for when the definition says so. The format and the match rule are
//! described for chess players in `docs/structures.md`.
//!
//! The classifier is a pure function of the two bitboards (a1 = bit 0):
//!
//! ```
//! use pawndex::structure::Catalogue;
//!
//! let catalogue = Catalogue::builtin().unwrap();
//! // . . . . . . . .   8
//! // p p . . . p p p   7   Black: a7 b7 c6 d5 f7 g7 h7 (no e-pawn)
//! // . . p . . . . .   6
//! // . . . p . . . .   5
//! // . . . P . . . .   4   White: a2 b2 d4 e3 f2 g2 h2 (no c-pawn)
//! // . . . . P . . .   3
//! // P P . . . P P P   2
//! // . . . . . . . .   1
//! //  a b c d e f g h
//! let white = 0x0000_0000_0810_E300;
//! let black = 0x00E3_0408_0000_0000;
//! let code = catalogue.classify(white, black);
//! let (definition, reversed) = catalogue.named(code).unwrap();
//! assert_eq!((definition.key.as_str(), reversed), ("carlsbad", false));
//! // The same pawns with colours swapped and the board turned: the reversed Carlsbad.
//! let code = catalogue.classify(black.swap_bytes(), white.swap_bytes());
//! assert_eq!(catalogue.named(code).map(|(d, r)| (d.key.as_str(), r)), Some(("carlsbad", true)));
//! // The start position has no name.
//! assert_eq!(catalogue.classify(0xFF00, 0x00FF_0000_0000_0000), 0);
//! ```

use std::path::Path;
use std::sync::OnceLock;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

mod builtin {
    include!(concat!(env!("OUT_DIR"), "/structures.rs"));
}

/// The environment variable naming a folder of `*.toml` files to use instead of the built-in
/// catalogue.
pub const CATALOGUE_VAR: &str = "PAWNDEX_STRUCTURES";

/// Structure code stored in `runs.structure`: 0 for no name, else `2 * id + reversed`, where
/// `id` is the definition's 1-based place in the catalogue sorted by key.
pub type Code = u16;

/// The conditions on one side's pawns, as bitboards.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SideRule {
    /// A pawn on each of these squares.
    pub pawns: u64,
    /// No pawn on any of these squares.
    pub none: u64,
    /// For each mask, a pawn on at least one of its squares.
    pub one_of: Vec<u64>,
    /// For each (mask, min, max), between min and max pawns on the mask.
    pub count: Vec<(u64, u32, u32)>,
}

impl SideRule {
    /// Whether a side's pawns meet every condition.
    #[inline]
    #[must_use]
    pub fn matches(&self, pawns: u64) -> bool {
        pawns & self.pawns == self.pawns
            && pawns & self.none == 0
            && self.one_of.iter().all(|m| pawns & m != 0)
            && self.count.iter().all(|&(m, lo, hi)| {
                let n = (pawns & m).count_ones();
                lo <= n && n <= hi
            })
    }

    /// How many conditions the rule states: a square counts 1 (so a whole file counts 6), a
    /// `one_of` list or a count 1.
    #[must_use]
    pub fn conditions(&self) -> u32 {
        // A file letter stands for its squares on ranks 2 to 7 (see `file_mask`).
        self.pawns.count_ones()
            + self.none.count_ones()
            + self.one_of.len() as u32
            + self.count.len() as u32
    }

    /// The same rule for the other colour on the turned board (rank r becomes rank 9 - r).
    #[must_use]
    pub fn turned(&self) -> SideRule {
        SideRule {
            pawns: self.pawns.swap_bytes(),
            none: self.none.swap_bytes(),
            one_of: self.one_of.iter().map(|m| m.swap_bytes()).collect(),
            count: self
                .count
                .iter()
                .map(|&(m, lo, hi)| (m.swap_bytes(), lo, hi))
                .collect(),
        }
    }

    /// A canonical text of the rule (the catalogue's fingerprint is made of these).
    fn canonical(&self) -> String {
        let one_of: Vec<String> = self.one_of.iter().map(|m| format!("{m:x}")).collect();
        let count: Vec<String> = self
            .count
            .iter()
            .map(|(m, lo, hi)| format!("{m:x}:{lo}-{hi}"))
            .collect();
        format!(
            "pawns {:x} none {:x} one_of [{}] count [{}]",
            self.pawns,
            self.none,
            one_of.join(","),
            count.join(",")
        )
    }
}

/// One named structure of the catalogue.
#[derive(Clone, Debug)]
pub struct Definition {
    /// The file stem: `carlsbad`.
    pub key: String,
    pub name: String,
    pub family: String,
    pub description: String,
    pub source: String,
    pub about: String,
    /// Whether the colour-reversed form is looked for too.
    pub reversed: bool,
    pub priority: i32,
    pub white: SideRule,
    pub black: SideRule,
}

impl Definition {
    fn conditions(&self) -> u32 {
        self.white.conditions() + self.black.conditions()
    }
}

/// One form (normal or reversed) of a definition, in the order forms are tried: the square
/// conditions of both sides as plain bitboards (tested first, they decide almost every
/// position), the rest only when a side has `one_of` or `count` conditions.
#[derive(Clone, Debug)]
struct Form {
    code: Code,
    white_pawns: u64,
    black_pawns: u64,
    white_none: u64,
    black_none: u64,
    rest: Option<Box<[SideRule; 2]>>,
}

impl Form {
    fn new(code: Code, white: &SideRule, black: &SideRule) -> Form {
        let plain = |r: &SideRule| r.one_of.is_empty() && r.count.is_empty();
        Form {
            code,
            white_pawns: white.pawns,
            black_pawns: black.pawns,
            white_none: white.none,
            black_none: black.none,
            rest: (!plain(white) || !plain(black))
                .then(|| Box::new([white.clone(), black.clone()])),
        }
    }

    #[inline]
    fn matches(&self, white: u64, black: u64) -> bool {
        white & self.white_pawns == self.white_pawns
            && black & self.black_pawns == self.black_pawns
            && (white & self.white_none) | (black & self.black_none) == 0
            && self
                .rest
                .as_ref()
                .is_none_or(|r| r[0].matches(white) && r[1].matches(black))
    }

    /// The rules of both sides, for the fingerprint.
    fn rules(&self) -> [SideRule; 2] {
        match &self.rest {
            Some(r) => [r[0].clone(), r[1].clone()],
            None => [
                SideRule {
                    pawns: self.white_pawns,
                    none: self.white_none,
                    ..SideRule::default()
                },
                SideRule {
                    pawns: self.black_pawns,
                    none: self.black_none,
                    ..SideRule::default()
                },
            ],
        }
    }
}

/// The definitions, sorted by key, and the forms in match order.
#[derive(Clone, Debug, Default)]
pub struct Catalogue {
    definitions: Vec<Definition>,
    forms: Vec<Form>,
    /// The files as read: (key, TOML text), sorted by key.
    texts: Vec<(String, String)>,
}

impl Catalogue {
    /// The catalogue built into this pawndex (the repository's `structures/` folder).
    pub fn builtin() -> Result<Catalogue> {
        Catalogue::from_texts(
            builtin::BUILTIN
                .iter()
                .map(|&(k, t)| (k.to_string(), t.to_string())),
        )
        .context("the built-in structure catalogue")
    }

    /// The catalogue of a folder's `*.toml` files.
    pub fn from_dir(dir: &Path) -> Result<Catalogue> {
        let entries = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read the structure catalogue {}", dir.display()))?;
        let mut files = Vec::new();
        for entry in entries {
            let path = entry
                .with_context(|| format!("cannot read the structure catalogue {}", dir.display()))?
                .path();
            if path.extension().is_some_and(|e| e == "toml") {
                let key = path
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .with_context(|| format!("{} has a name that is not UTF-8", path.display()))?
                    .to_string();
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                files.push((key, text));
            }
        }
        if files.is_empty() {
            bail!(
                "{} holds no structure definitions (*.toml files)",
                dir.display()
            );
        }
        Catalogue::from_texts(files)
            .with_context(|| format!("in the structure catalogue {}", dir.display()))
    }

    /// Parses and orders definitions given as (key, TOML text).
    pub fn from_texts(files: impl IntoIterator<Item = (String, String)>) -> Result<Catalogue> {
        let mut definitions = Vec::new();
        let mut texts: Vec<(String, String)> = files.into_iter().collect();
        texts.sort();
        for (key, text) in &texts {
            definitions.push(parse(key, text).with_context(|| format!("in {key}.toml"))?);
        }
        definitions.sort_by(|a, b| a.key.cmp(&b.key));
        if let Some(w) = definitions.windows(2).find(|w| w[0].key == w[1].key) {
            bail!("structure {} is defined twice", w[0].key);
        }
        if definitions.len() > usize::from(Code::MAX / 2) - 1 {
            bail!("too many structures ({})", definitions.len());
        }
        let mut forms = Vec::new();
        for (i, d) in definitions.iter().enumerate() {
            let id = i as Code + 1;
            forms.push(Form::new(2 * id, &d.white, &d.black));
            if d.reversed {
                forms.push(Form::new(2 * id + 1, &d.black.turned(), &d.white.turned()));
            }
        }
        // Higher priority first, then more conditions, then the key; the normal form before
        // the reversed one.
        forms.sort_by(|a, b| {
            let (da, db) = (
                &definitions[usize::from(a.code / 2 - 1)],
                &definitions[usize::from(b.code / 2 - 1)],
            );
            db.priority
                .cmp(&da.priority)
                .then(db.conditions().cmp(&da.conditions()))
                .then(da.key.cmp(&db.key))
                .then(a.code.cmp(&b.code))
        });
        Ok(Catalogue {
            definitions,
            forms,
            texts,
        })
    }

    /// The catalogue in force: the folder named by `PAWNDEX_STRUCTURES`, else the built-in one.
    /// Loaded once; an unreadable or invalid folder is an error.
    pub fn load_active() -> Result<&'static Catalogue> {
        if let Some(c) = ACTIVE.get() {
            return Ok(c);
        }
        let catalogue = match std::env::var_os(CATALOGUE_VAR) {
            Some(dir) if !dir.is_empty() => Catalogue::from_dir(Path::new(&dir))
                .with_context(|| format!("{CATALOGUE_VAR} names {}", dir.to_string_lossy()))?,
            _ => Catalogue::builtin()?,
        };
        Ok(ACTIVE.get_or_init(|| catalogue))
    }

    /// The catalogue in force, once [`Catalogue::load_active`] succeeded; before that (or
    /// after it failed) the built-in one. Commands load it first, so they stop on a bad folder
    /// before doing any work.
    pub fn active() -> &'static Catalogue {
        ACTIVE.get_or_init(|| Catalogue::builtin().unwrap_or_default())
    }

    /// The definition files as read, (key, TOML text) sorted by key: for an independent
    /// reading of the rules (`pawndex check`).
    #[must_use]
    pub fn texts(&self) -> &[(String, String)] {
        &self.texts
    }

    /// The definitions, sorted by key (the one with code `2 * id + r` is at `id - 1`).
    #[must_use]
    pub fn definitions(&self) -> &[Definition] {
        &self.definitions
    }

    /// The code of the structure the pawns form: the first form, in match order, whose
    /// conditions both sides meet; 0 when none does.
    #[must_use]
    pub fn classify(&self, white: u64, black: u64) -> Code {
        self.forms
            .iter()
            .find(|f| f.matches(white, black))
            .map_or(0, |f| f.code)
    }

    /// The definition a code names and whether it is the reversed form; `None` for 0 or a
    /// code this catalogue does not have.
    #[must_use]
    pub fn named(&self, code: Code) -> Option<(&Definition, bool)> {
        let id = usize::from(code / 2);
        (id >= 1)
            .then(|| self.definitions.get(id - 1))
            .flatten()
            .map(|d| (d, code % 2 == 1))
    }

    /// A canonical text of every rule in match order: two catalogues classify every position
    /// alike when their fingerprints are equal. Stored in the database, which is re-classified
    /// when the catalogue in force has another.
    #[must_use]
    pub fn fingerprint(&self) -> String {
        let mut out = String::new();
        for f in &self.forms {
            let (d, reversed) = self.named(f.code).expect("every form has its definition");
            let [white, black] = f.rules();
            out.push_str(&format!(
                "{}{} {}: white {}; black {}\n",
                d.key,
                if reversed { "~" } else { "" },
                f.code,
                white.canonical(),
                black.canonical()
            ));
        }
        out
    }
}

static ACTIVE: OnceLock<Catalogue> = OnceLock::new();

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
fn parse(key: &str, text: &str) -> Result<Definition> {
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
fn file_mask(letter: u8) -> u64 {
    0x0001_0101_0101_0100 << (letter - b'a')
}

/// A square `a2`..`h7` (pawns never stand on the first or last rank), or with `files`, a
/// lone file letter meaning that file's squares.
fn squares(text: &str, files: bool) -> Result<u64> {
    match text.as_bytes() {
        [f @ b'a'..=b'h'] if files => Ok(file_mask(*f)),
        [f @ b'a'..=b'h', r @ b'2'..=b'7'] => Ok(1 << ((r - b'1') * 8 + (f - b'a'))),
        [b'a'..=b'h', b'1' | b'8'] => bail!("no pawn can stand on {text}"),
        _ if files => bail!("{text:?} is neither a square (like \"d4\") nor a file (like \"c\")"),
        _ => bail!("{text:?} is not a square (like \"d4\")"),
    }
}

/// Compiles one side's conditions.
fn side_rule(side: &SideFile) -> Result<SideRule> {
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
        let mut mask = 0;
        for s in list {
            mask |= squares(s, false).context("in `one_of`")?;
        }
        if mask == 0 {
            bail!("an empty list in `one_of`");
        }
        if mask & !rule.none == 0 {
            bail!("a `one_of` list whose squares are all in `none` can never match");
        }
        rule.one_of.push(mask);
    }
    for c in &side.count {
        let mut mask = 0;
        for f in c.files.bytes() {
            if !(b'a'..=b'h').contains(&f) {
                bail!("`count` files must be letters a to h (got {:?})", c.files);
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
        if lo > hi || lo > 8 {
            bail!(
                "`count` on {:?} can never match (min {lo}, max {hi})",
                c.files
            );
        }
        rule.count.push((mask, lo, hi));
    }
    Ok(rule)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(white: &str, black: &str) -> String {
        format!(
            "name = \"T\"\nfamily = \"F\"\ndescription = \"d\"\nsource = \"s\"\n[white]\n{white}\n[black]\n{black}\n"
        )
    }

    #[test]
    fn the_builtin_catalogue_parses() {
        let c = Catalogue::builtin().unwrap();
        assert!(!c.definitions().is_empty());
        for (i, d) in c.definitions().iter().enumerate() {
            let code = 2 * (i as Code + 1);
            assert_eq!(c.named(code).unwrap().0.key, d.key);
        }
    }

    #[test]
    fn bad_files_are_refused_with_a_reason() {
        let cases = [
            (text("pawns = [\"d9\"]", ""), "not a square"),
            (text("pawns = [\"d8\"]", ""), "no pawn can stand"),
            (text("pawns = [\"d4\"]\nnone = [\"d\"]", ""), "both"),
            (text("pawns = [\"d4\"]\nextra = 1", ""), "unknown field"),
            (text("", ""), "no condition"),
            (
                text("count = [{ files = \"abc\" }]", ""),
                "needs `min` or `max`",
            ),
            (
                text("count = [{ files = \"abz\", min = 1 }]", ""),
                "letters a to h",
            ),
            (text("one_of = [[]]", ""), "empty list"),
        ];
        for (t, want) in cases {
            let e = Catalogue::from_texts([("t".to_string(), t.clone())]).unwrap_err();
            assert!(format!("{e:#}").contains(want), "{t}\n=> {e:#}");
        }
        let e = Catalogue::from_texts([("Bad Key".to_string(), text("pawns = [\"d4\"]", ""))])
            .unwrap_err();
        assert!(format!("{e:#}").contains("lowercase"));
    }

    #[test]
    fn more_conditions_win_then_priority_overrides() {
        let general = text("pawns = [\"d4\"]", "");
        let special = text("pawns = [\"d4\", \"c4\"]", "");
        let c = Catalogue::from_texts([
            ("general".to_string(), general.clone()),
            ("special".to_string(), special.clone()),
        ])
        .unwrap();
        let d4c4 = squares("d4", false).unwrap() | squares("c4", false).unwrap();
        assert_eq!(c.named(c.classify(d4c4, 0)).unwrap().0.key, "special");
        assert_eq!(
            c.named(c.classify(squares("d4", false).unwrap(), 0))
                .unwrap()
                .0
                .key,
            "general"
        );
        let c = Catalogue::from_texts([
            ("general".to_string(), format!("priority = 1\n{general}")),
            ("special".to_string(), special),
        ])
        .unwrap();
        assert_eq!(c.named(c.classify(d4c4, 0)).unwrap().0.key, "general");
    }

    #[test]
    fn counts_and_one_of() {
        let t = text(
            "one_of = [[\"c3\", \"c4\"]]\ncount = [{ files = \"fgh\", min = 2, max = 3 }]",
            "",
        );
        let c = Catalogue::from_texts([("t".to_string(), t)]).unwrap();
        let sq = |s: &str| squares(s, false).unwrap();
        assert_ne!(c.classify(sq("c3") | sq("f2") | sq("g2"), 0), 0);
        assert_eq!(c.classify(sq("c5") | sq("f2") | sq("g2"), 0), 0);
        assert_eq!(c.classify(sq("c4") | sq("f2"), 0), 0);
        assert_eq!(
            c.classify(sq("c4") | sq("f2") | sq("g2") | sq("h2") | sq("h3"), 0),
            0
        );
    }
}
