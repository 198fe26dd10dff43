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

use crate::model::structure_file::{file_cap, parse, read_capped};

mod builtin {
    include!(concat!(env!("OUT_DIR"), "/structures.rs"));
}

/// The environment variable naming a folder of `*.toml` files to use instead of the built-in
/// catalogue.
pub const CATALOGUE_VAR: &str = "PAWNDEX_STRUCTURES";

/// The most bytes one definition file may hold (the built-in files hold under 1 KiB).
pub const MAX_FILE_BYTES: u64 = 64 * 1024;
/// The most bytes a whole catalogue may hold.
pub const MAX_CATALOGUE_BYTES: u64 = 32 * 1024 * 1024;
/// The most definitions a catalogue may hold (the codes allow 32,766).
pub const MAX_DEFINITIONS: usize = 20_000;
/// The most entries of one list in a definition: `pawns`, `none`, `one_of`, one list of
/// `one_of`, `count` (a side has 48 squares).
pub const MAX_LIST: usize = 64;

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

    /// The catalogue of a folder's `*.toml` files. Each file may hold [`MAX_FILE_BYTES`], the
    /// folder [`MAX_DEFINITIONS`] files and [`MAX_CATALOGUE_BYTES`] in all: a file is measured
    /// before it is read and read no further than its cap, so a file growing meanwhile cannot
    /// pass.
    pub fn from_dir(dir: &Path) -> Result<Catalogue> {
        let entries = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read the structure catalogue {}", dir.display()))?;
        let mut files = Vec::new();
        let mut total = 0u64;
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
                if files.len() == MAX_DEFINITIONS {
                    bail!(
                        "{} holds more than {MAX_DEFINITIONS} structure definitions (*.toml \
                         files); a catalogue may hold at most {MAX_DEFINITIONS}",
                        dir.display()
                    );
                }
                let text = read_capped(&path)?;
                total += text.len() as u64;
                if total > MAX_CATALOGUE_BYTES {
                    bail!(
                        "{} holds more than {MAX_CATALOGUE_BYTES} bytes of structure \
                         definitions; a catalogue may hold at most {MAX_CATALOGUE_BYTES} bytes \
                         ({} MiB)",
                        dir.display(),
                        MAX_CATALOGUE_BYTES >> 20
                    );
                }
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
        let mut texts: Vec<(String, String)> = Vec::new();
        let mut total = 0u64;
        for (key, text) in files {
            if texts.len() == MAX_DEFINITIONS {
                bail!(
                    "more than {MAX_DEFINITIONS} structure definitions; a catalogue may hold at \
                     most {MAX_DEFINITIONS}"
                );
            }
            let len = text.len() as u64;
            if len > MAX_FILE_BYTES {
                bail!("{key}.toml is {len} bytes, {}", file_cap());
            }
            total += len;
            if total > MAX_CATALOGUE_BYTES {
                bail!(
                    "more than {MAX_CATALOGUE_BYTES} bytes of structure definitions; a \
                     catalogue may hold at most {MAX_CATALOGUE_BYTES} bytes ({} MiB)",
                    MAX_CATALOGUE_BYTES >> 20
                );
            }
            texts.push((key, text));
        }
        texts.sort();
        for (key, text) in &texts {
            definitions.push(parse(key, text).with_context(|| format!("in {key}.toml"))?);
        }
        definitions.sort_by(|a, b| a.key.cmp(&b.key));
        if let Some(w) = definitions.windows(2).find(|w| w[0].key == w[1].key) {
            bail!("structure {} is defined twice", w[0].key);
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

/// The structures a [`Catalogue::fingerprint`] names: (id, key, whether it has a reversed
/// form), sorted by id. `None` when the text is not a fingerprint (a line is not
/// `key[~] code: …`, or a key has two ids). Lets `pawndex check` compare `structure_names` with
/// the catalogue the runs were named with, whatever catalogue is in force.
#[must_use]
pub fn fingerprint_structures(fingerprint: &str) -> Option<Vec<(u16, String, bool)>> {
    let mut found: std::collections::BTreeMap<u16, (String, bool)> = Default::default();
    for line in fingerprint.lines() {
        let (head, _) = line.split_once(": ")?;
        let (form, code) = head.split_once(' ')?;
        let code: Code = code.parse().ok()?;
        let (key, reversed) = match form.strip_suffix('~') {
            Some(key) => (key, true),
            None => (form, false),
        };
        if code < 2 || (code % 2 == 1) != reversed || key.is_empty() {
            return None;
        }
        let entry = found
            .entry(code / 2)
            .or_insert_with(|| (key.to_string(), false));
        if entry.0 != key {
            return None;
        }
        entry.1 |= reversed;
    }
    let list: Vec<(u16, String, bool)> = found.into_iter().map(|(id, (k, r))| (id, k, r)).collect();
    let mut keys: Vec<&str> = list.iter().map(|(_, k, _)| k.as_str()).collect();
    keys.sort_unstable();
    keys.windows(2).all(|w| w[0] != w[1]).then_some(list)
}

static ACTIVE: OnceLock<Catalogue> = OnceLock::new();

// Every code `2 * id + 1` of a catalogue within the caps fits a `Code`.
const _: () = assert!(MAX_DEFINITIONS < (Code::MAX / 2) as usize);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::structure_file::{file_mask, files_mask, files_text, squares, squares_text};

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
    fn a_fingerprint_names_the_catalogues_structures() {
        let c = Catalogue::builtin().unwrap();
        let want: Vec<(u16, String, bool)> = c
            .definitions()
            .iter()
            .enumerate()
            .map(|(i, d)| (i as u16 + 1, d.key.clone(), d.reversed))
            .collect();
        assert_eq!(fingerprint_structures(&c.fingerprint()), Some(want));
        assert_eq!(fingerprint_structures(""), Some(vec![]));
        for bad in [
            "x",
            "a 2 white",
            "a~ 2: w",
            "a 3: w",
            "a 2: w\nb 2: w",
            "a 2: w\na 4: w",
        ] {
            assert_eq!(fingerprint_structures(bad), None, "{bad}");
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
    fn lists_and_catalogues_above_the_caps_are_refused() {
        let squares: Vec<String> = (0..=MAX_LIST).map(|_| "\"d4\"".to_string()).collect();
        let long = text(&format!("pawns = [{}]", squares.join(", ")), "");
        let e = Catalogue::from_texts([("t".to_string(), long)]).unwrap_err();
        assert!(format!("{e:#}").contains("at most 64"), "{e:#}");
        let short = text("pawns = [\"d4\"]", "");
        let many = (0..=MAX_DEFINITIONS).map(|i| (format!("k{i}"), short.clone()));
        let e = Catalogue::from_texts(many).unwrap_err();
        assert!(format!("{e:#}").contains("at most 20000"), "{e:#}");
        let big = format!("{short}#{}\n", "x".repeat(60_000));
        let e =
            Catalogue::from_texts((0..600).map(|i| (format!("k{i}"), big.clone()))).unwrap_err();
        assert!(format!("{e:#}").contains("at most 33554432 bytes"), "{e:#}");
        let e = Catalogue::from_texts([("t".to_string(), format!("{big}{big}"))]).unwrap_err();
        assert!(format!("{e:#}").contains("65536 bytes"), "{e:#}");
    }

    /// A small random generator for the property below.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn square(&mut self) -> u64 {
            1 << (8 + self.below(48))
        }
    }

    /// The conditions of one side that the pawns `set` meet, drawn at random, as TOML lines.
    fn met_by(rng: &mut Rng, set: u64) -> String {
        let name = |mask: u64| {
            squares_text(mask)
                .split(' ')
                .map(|s| format!("{s:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut lines = Vec::new();
        let pawns = set & rng.next() & rng.next();
        if pawns != 0 {
            lines.push(format!("pawns = [{}]", name(pawns)));
        }
        let mut none: Vec<String> = Vec::new();
        for _ in 0..rng.below(4) {
            let sq = rng.square();
            if sq & set == 0 {
                none.push(format!("{:?}", squares_text(sq)));
            }
        }
        for f in b'a'..=b'h' {
            if file_mask(f) & set == 0 && rng.below(4) == 0 {
                none.push(format!("\"{}\"", char::from(f)));
            }
        }
        if !none.is_empty() {
            lines.push(format!("none = [{}]", none.join(", ")));
        }
        if set != 0 {
            let members: Vec<u64> = (0..64).filter(|i| set >> i & 1 == 1).collect();
            let mut lists = Vec::new();
            for _ in 0..rng.below(4) {
                let mut list = 1u64 << members[rng.below(members.len() as u64) as usize];
                for _ in 0..rng.below(5) {
                    list |= rng.square();
                }
                lists.push(format!("[{}]", name(list)));
            }
            if !lists.is_empty() {
                lines.push(format!("one_of = [{}]", lists.join(", ")));
            }
        }
        let mut counts = Vec::new();
        for _ in 0..rng.below(4) {
            let bits = 1 + rng.below(255) as usize;
            let mask = files_mask(bits);
            let n = (set & mask).count_ones() as u64;
            let mut c = format!("{{ files = {:?}", files_text(mask));
            let (min, max) = match rng.below(3) {
                0 => (Some(rng.below(n + 1)), None),
                1 => (None, Some(n + rng.below(4))),
                _ => (Some(rng.below(n + 1)), Some(n + rng.below(4))),
            };
            if let Some(m) = min {
                c.push_str(&format!(", min = {m}"));
            }
            if let Some(m) = max {
                c.push_str(&format!(", max = {m}"));
            }
            counts.push(c + " }");
        }
        if !counts.is_empty() {
            lines.push(format!("count = [{}]", counts.join(", ")));
        }
        lines.join("\n")
    }

    /// The tests that refuse a definition no pawns can meet never refuse one that some pawns
    /// meet: random pawn sets of both sides (at most 8 each, disjoint), random conditions they
    /// meet, and the definition is read and names those pawns.
    #[test]
    fn nothing_some_pawns_meet_is_refused() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for case in 0..20_000 {
            let (mut white, mut black) = (0u64, 0u64);
            for _ in 0..rng.below(9) {
                white |= rng.square();
            }
            for _ in 0..rng.below(9) {
                black |= rng.square() & !white;
            }
            let (w, b) = (met_by(&mut rng, white), met_by(&mut rng, black));
            let t = text(&w, &b);
            let c = match Catalogue::from_texts([("t".to_string(), t.clone())]) {
                Ok(c) => c,
                Err(e) if format!("{e:#}").contains("no condition") => continue,
                Err(e) => panic!("case {case}: {e:#}\n{t}"),
            };
            assert_eq!(c.classify(white, black), 2, "case {case}\n{t}");
        }
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
