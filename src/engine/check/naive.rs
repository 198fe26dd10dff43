//! An independent reading of the structure catalogue for the check: the TOML texts of the
//! catalogue in force read as plain `toml` tables, and a position classified square by square
//! on an 8x8 board, with the match rule of [`crate::model::structure`] (higher priority first, then
//! more conditions, then the key; the normal form before the reversed one). Shares nothing with
//! the bitboard rules the index uses, so a mistake in either shows as a difference.

use anyhow::{Context, Result, bail};

/// A square as (file 0..8, rank 0..8): a2 is (0, 1).
type Square = (usize, usize);

/// One side's pawns on a board: `[rank][file]`.
pub type Board = [[bool; 8]; 8];

/// The board of a pawn bitboard (a1 = bit 0).
pub fn board(pawns: u64) -> Board {
    let mut b = [[false; 8]; 8];
    for (rank, row) in b.iter_mut().enumerate() {
        for (file, cell) in row.iter_mut().enumerate() {
            *cell = pawns >> (rank * 8 + file) & 1 == 1;
        }
    }
    b
}

/// One side's conditions as written in the file.
#[derive(Clone, Debug, Default)]
struct Side {
    pawns: Vec<Square>,
    /// Squares, a whole file already spelled out as its squares on ranks 2 to 7.
    none: Vec<Square>,
    one_of: Vec<Vec<Square>>,
    /// (files, min, max)
    count: Vec<(Vec<usize>, i64, i64)>,
}

impl Side {
    /// The conditions as the documentation counts them: every distinct square of `pawns`
    /// and `none` (a whole file: 6), every `one_of` list and every count.
    fn conditions(&self) -> usize {
        let mut squares: Vec<Square> = self.pawns.clone();
        squares.extend(&self.none);
        squares.sort_unstable();
        squares.dedup();
        squares.len() + self.one_of.len() + self.count.len()
    }

    /// The rule for the other colour on the turned board (rank r becomes 9 - r).
    fn turned(&self) -> Side {
        let turn = |&(f, r): &Square| (f, 7 - r);
        Side {
            pawns: self.pawns.iter().map(turn).collect(),
            none: self.none.iter().map(turn).collect(),
            one_of: self
                .one_of
                .iter()
                .map(|l| l.iter().map(turn).collect())
                .collect(),
            count: self.count.clone(),
        }
    }

    /// Whether a side's pawns meet every condition, looking at each square named.
    fn matches(&self, b: &Board) -> bool {
        self.pawns.iter().all(|&(f, r)| b[r][f])
            && self.none.iter().all(|&(f, r)| !b[r][f])
            && self
                .one_of
                .iter()
                .all(|list| list.iter().any(|&(f, r)| b[r][f]))
            && self.count.iter().all(|(files, lo, hi)| {
                let mut n = 0i64;
                for &f in files {
                    for row in b {
                        n += i64::from(row[f]);
                    }
                }
                *lo <= n && n <= *hi
            })
    }
}

/// One form (normal or reversed) of a definition.
#[derive(Clone, Debug)]
pub struct Form {
    /// 2 * (the key's place in the sorted catalogue, from 1) + reversed.
    pub code: u16,
    white: Side,
    black: Side,
}

/// The catalogue's forms in match order, and its keys sorted.
#[derive(Clone, Debug, Default)]
pub struct Naive {
    pub forms: Vec<Form>,
    pub keys: Vec<String>,
}

fn square(text: &str) -> Result<Square> {
    match text.as_bytes() {
        [f @ b'a'..=b'h', r @ b'2'..=b'7'] => Ok((usize::from(f - b'a'), usize::from(r - b'1'))),
        _ => bail!("{text:?} is not a square a2..h7"),
    }
}

fn strings(v: &toml::Value) -> Result<Vec<&str>> {
    v.as_array()
        .context("not a list")?
        .iter()
        .map(|s| s.as_str().context("not a string"))
        .collect()
}

fn side(v: Option<&toml::Value>) -> Result<Side> {
    let mut s = Side::default();
    let Some(v) = v else {
        return Ok(s);
    };
    let t = v.as_table().context("not a table")?;
    if let Some(p) = t.get("pawns") {
        for x in strings(p)? {
            s.pawns.push(square(x)?);
        }
    }
    if let Some(p) = t.get("none") {
        for x in strings(p)? {
            match x.as_bytes() {
                [f @ b'a'..=b'h'] => {
                    s.none.extend((1..7).map(|r| (usize::from(f - b'a'), r)));
                }
                _ => s.none.push(square(x)?),
            }
        }
    }
    if let Some(p) = t.get("one_of") {
        for list in p.as_array().context("one_of is not a list")? {
            s.one_of.push(
                strings(list)?
                    .into_iter()
                    .map(square)
                    .collect::<Result<_>>()?,
            );
        }
    }
    if let Some(p) = t.get("count") {
        for c in p.as_array().context("count is not a list")? {
            let files = c
                .get("files")
                .and_then(|x| x.as_str())
                .context("count without files")?
                .bytes()
                .map(|f| match f {
                    b'a'..=b'h' => Ok(usize::from(f - b'a')),
                    _ => bail!("count files must be a to h"),
                })
                .collect::<Result<_>>()?;
            let lo = c.get("min").and_then(toml::Value::as_integer).unwrap_or(0);
            let hi = c
                .get("max")
                .and_then(toml::Value::as_integer)
                .unwrap_or(i64::MAX);
            s.count.push((files, lo, hi));
        }
    }
    Ok(s)
}

impl Naive {
    /// Reads the catalogue's (key, TOML text) pairs.
    pub fn read(texts: &[(String, String)]) -> Result<Naive> {
        let mut keys: Vec<String> = texts.iter().map(|(k, _)| k.clone()).collect();
        keys.sort();
        // (priority, conditions, key, reversed, form)
        let mut order = Vec::new();
        for (key, text) in texts {
            let t: toml::Table = toml::from_str(text).with_context(|| format!("in {key}.toml"))?;
            let priority = t
                .get("priority")
                .and_then(toml::Value::as_integer)
                .unwrap_or(0);
            let reversed = t
                .get("reversed")
                .and_then(toml::Value::as_bool)
                .unwrap_or(false);
            let white = side(t.get("white")).with_context(|| format!("{key}: [white]"))?;
            let black = side(t.get("black")).with_context(|| format!("{key}: [black]"))?;
            let id = keys.iter().position(|k| k == key).context("a key")? + 1;
            let code = u16::try_from(2 * id).context("too many structures")?;
            let conditions = white.conditions() + black.conditions();
            if reversed {
                let form = Form {
                    code: code + 1,
                    white: black.turned(),
                    black: white.turned(),
                };
                order.push((priority, conditions, key.clone(), true, form));
            }
            let form = Form { code, white, black };
            order.push((priority, conditions, key.clone(), false, form));
        }
        order.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then(b.1.cmp(&a.1))
                .then(a.2.cmp(&b.2))
                .then(a.3.cmp(&b.3))
        });
        Ok(Naive {
            forms: order.into_iter().map(|o| o.4).collect(),
            keys,
        })
    }

    /// Which forms one side's pawns meet, one bit per form: bit `i` (word `i / 64`) for
    /// `forms[i]`'s White (or Black) rule.
    pub fn side_matches(&self, b: &Board, white: bool) -> Box<[u64]> {
        let mut bits = vec![0u64; self.forms.len().div_ceil(64)];
        for (i, f) in self.forms.iter().enumerate() {
            let meets = if white {
                f.white.matches(b)
            } else {
                f.black.matches(b)
            };
            bits[i / 64] |= u64::from(meets) << (i % 64);
        }
        bits.into_boxed_slice()
    }

    /// The code of the first form both sides meet (0: none).
    pub fn pick(&self, white: &[u64], black: &[u64]) -> u16 {
        white
            .iter()
            .zip(black)
            .enumerate()
            .find(|(_, (w, b))| *w & *b != 0)
            .and_then(|(i, (w, b))| self.forms.get(i * 64 + (w & b).trailing_zeros() as usize))
            .map_or(0, |f| f.code)
    }

    /// A code as its key (`~` for the reversed form), or "no name".
    pub fn name(&self, code: i64) -> String {
        if code == 0 {
            return "no name".to_owned();
        }
        match usize::try_from(code / 2)
            .ok()
            .and_then(|i| i.checked_sub(1))
            .and_then(|i| self.keys.get(i))
        {
            Some(k) if code % 2 == 1 => format!("{k} (reversed)"),
            Some(k) => k.clone(),
            None => format!("the unknown code {code}"),
        }
    }
}
