//! The named queries: the `.sql` files of `queries/` (embedded in the binary), their
//! descriptions, the typed search each one is written from, and close names for a typo.

use crate::store::read::params::Value;
use anyhow::{Result, bail};

use crate::model::usage;
use crate::store::read::search::{Feature, Op, RunCond, Search, SetCond};

macro_rules! named_queries {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../../queries/", $name, ".sql")))),*]
    };
}

/// The named queries: (name, SQL text of `queries/NAME.sql`).
pub const NAMED_SQL: &[(&str, &str)] = named_queries![
    "white-duo",
    "black-duo",
    "white-trio",
    "black-trio",
    "white-quart",
    "black-quart",
    "white-bishop-pair",
    "black-bishop-pair",
    "white-three-islands",
    "black-three-islands",
    "white-isolated-queen-pawn",
    "black-isolated-queen-pawn",
    "white-hanging-pawns",
    "black-hanging-pawns",
    "carlsbad",
    "reversed-carlsbad",
    "white-stonewall",
    "black-stonewall",
    "white-maroczy-bind",
    "black-maroczy-bind",
    "exact-structure",
];

/// A named query: its name, the one-line description from its opening comment, its SQL.
#[derive(Copy, Clone, Debug)]
pub struct NamedQuery {
    pub name: &'static str,
    pub description: &'static str,
    pub sql: &'static str,
}

/// The description in a query file's opening comment, `-- NAME: description`.
#[must_use]
pub fn description(name: &str, sql: &'static str) -> Option<&'static str> {
    let first = sql.lines().next()?;
    let rest = first.strip_prefix("-- ")?.strip_prefix(name)?;
    Some(rest.strip_prefix(": ")?.trim())
}

/// Every named query, in catalogue order.
#[must_use]
pub fn named_queries() -> Vec<NamedQuery> {
    NAMED_SQL
        .iter()
        .map(|&(name, sql)| NamedQuery {
            name,
            description: description(name, sql).unwrap_or(""),
            sql,
        })
        .collect()
}

/// The named query called `name` (case ignored).
#[must_use]
pub fn named(name: &str) -> Option<NamedQuery> {
    named_queries()
        .into_iter()
        .find(|q| q.name.eq_ignore_ascii_case(name.trim()))
}

/// Names close to a mistyped one, closest first.
#[must_use]
pub fn closest_names(name: &str) -> Vec<&'static str> {
    crate::model::names::closest(name, NAMED_SQL.iter().map(|&(n, _)| n))
}

/// Squares by name ("d4 e3"), as a bitboard (a1 = bit 0).
fn sq(names: &str) -> u64 {
    names
        .split_whitespace()
        .map(|n| {
            let b = n.as_bytes();
            1u64 << (u32::from(b[1] - b'1') * 8 + u32::from(b[0] - b'a'))
        })
        .fold(0, |a, b| a | b)
}

/// Whole files by letter ("ce"), as a bitboard.
fn files(letters: &str) -> u64 {
    letters
        .bytes()
        .map(|f| 0x0101_0101_0101_0101u64 << (f - b'a'))
        .fold(0, |a, b| a | b)
}

/// The search behind the named query `name` (the definition its `.sql` file is written from),
/// with its `--param` values bound.
pub fn named_search(name: &str, params: &[(String, Value)]) -> Result<Search> {
    use SetCond::{Has, NoPawnsOn, PawnOnAny, PawnsOn};
    let mut s = Search::default();
    let exact = name == "exact-structure";
    if !exact && let Some((p, _)) = params.first() {
        usage!("--param {p}: the query has no parameter :{p} (its parameters: none)");
    }
    match name {
        "white-duo" => s.white.push(Has(Feature::DUO)),
        "black-duo" => s.black.push(Has(Feature::DUO)),
        "white-trio" => s.white.push(Has(Feature::TRIO)),
        "black-trio" => s.black.push(Has(Feature::TRIO)),
        "white-quart" => s.white.push(Has(Feature::QUART)),
        "black-quart" => s.black.push(Has(Feature::QUART)),
        "white-bishop-pair" => s.runs.push(RunCond::BishopPairs(1)),
        "black-bishop-pair" => s.runs.push(RunCond::BishopPairs(2)),
        "white-three-islands" => s.white.push(SetCond::Compare(Feature::ISLANDS, Op::Ge, 3)),
        "black-three-islands" => s.black.push(SetCond::Compare(Feature::ISLANDS, Op::Ge, 3)),
        "white-isolated-queen-pawn" => {
            s.white = vec![PawnOnAny(files("d")), NoPawnsOn(files("ce"))];
        }
        "black-isolated-queen-pawn" => {
            s.black = vec![PawnOnAny(files("d")), NoPawnsOn(files("ce"))];
        }
        "white-hanging-pawns" => s.white = vec![PawnsOn(sq("c4 d4")), NoPawnsOn(files("be"))],
        "black-hanging-pawns" => s.black = vec![PawnsOn(sq("c5 d5")), NoPawnsOn(files("be"))],
        "carlsbad" => {
            s.white = vec![PawnsOn(sq("d4 e3")), NoPawnsOn(files("c"))];
            s.black = vec![PawnsOn(sq("c6 d5")), NoPawnsOn(files("e"))];
        }
        "reversed-carlsbad" => {
            s.white = vec![PawnsOn(sq("c3 d4")), NoPawnsOn(files("e"))];
            s.black = vec![PawnsOn(sq("d5 e6")), NoPawnsOn(files("c"))];
        }
        "white-stonewall" => s.white.push(PawnsOn(sq("c3 d4 e3 f4"))),
        "black-stonewall" => s.black.push(PawnsOn(sq("c6 d5 e6 f5"))),
        "white-maroczy-bind" => {
            s.white = vec![PawnsOn(sq("c4 e4")), NoPawnsOn(files("d"))];
            s.black.push(NoPawnsOn(files("c")));
        }
        "black-maroczy-bind" => {
            s.white.push(NoPawnsOn(files("c")));
            s.black = vec![PawnsOn(sq("c5 e5")), NoPawnsOn(files("d"))];
        }
        "exact-structure" => {
            let (w, b) = exact_params(params)?;
            s.white.push(SetCond::Exactly(w));
            s.black.push(SetCond::Exactly(b));
        }
        other => bail!("no search is defined for the named query {other}"),
    }
    Ok(s)
}

/// The pawns of `exact-structure` from its parameters (`white_pawns`, `black_pawns`),
/// refusing a missing or extra parameter and bitboards no position has.
fn exact_params(params: &[(String, Value)]) -> Result<(u64, u64)> {
    let value = |side: &str| -> Result<u64> {
        let key = format!("{side}_pawns");
        match params.iter().rev().find(|(n, _)| *n == key) {
            Some((_, Value::Integer(v))) => Ok(*v as u64),
            Some((_, v)) => {
                usage!("--param {key}: expected a bitboard (an integer, 0x… for hex), got {v:?}")
            }
            None => usage!("the query needs a value for :{key}: add --param {key}=VALUE"),
        }
    };
    let (w, b) = (value("white")?, value("black")?);
    if let Some((p, _)) = params
        .iter()
        .find(|(n, _)| n != "white_pawns" && n != "black_pawns")
    {
        usage!(
            "--param {p}: the query has no parameter :{p} (its parameters: white_pawns, black_pawns)"
        );
    }
    // Bitboards no position has are refused, as `find` refuses such conditions.
    if w & b != 0 {
        usage!(
            "--param white_pawns and black_pawns: both have a pawn on {} (a square \
             holds one pawn)",
            crate::store::read::search::squares(w & b)
        );
    }
    for (side, v) in [("white_pawns", w), ("black_pawns", b)] {
        if v & 0xFF00_0000_0000_00FF != 0 {
            usage!(
                "--param {side}: a pawn on {} (pawns never stand on rank 1 or 8)",
                crate::store::read::search::squares(v & 0xFF00_0000_0000_00FF)
            );
        }
        if v.count_ones() > 8 {
            usage!(
                "--param {side}: {} pawns (a side has at most 8)",
                v.count_ones()
            );
        }
    }
    Ok((w, b))
}

/// The text of a named query's `.sql` file: its opening comment, then the SQL of its search
/// in the scan form (parameters where the search has them).
#[cfg(test)]
pub fn named_file_text(q: &NamedQuery) -> String {
    let comment: String = q
        .sql
        .lines()
        .take_while(|l| l.starts_with("--"))
        .map(|l| format!("{l}\n"))
        .collect();
    let params = if q.name == "exact-structure" {
        vec![
            ("white_pawns".to_string(), Value::Integer(0)),
            ("black_pawns".to_string(), Value::Integer(0)),
        ]
    } else {
        Vec::new()
    };
    let search = named_search(q.name, &params).expect("every named query has a search");
    format!(
        "{comment}{};\n",
        search
            .rows_sql(
                crate::store::read::search::Form::Scan,
                crate::store::read::search::Rows::Positions
            )
            .text
    )
}
