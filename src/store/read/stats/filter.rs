//! `--where` expressions: what they name ([`inspect`], on the one SQL lexer) and whether
//! SQLite accepts one where it will run ([`StatsDb::check_filter`]).

use super::StatsDb;
use super::sql::{self, Joins};
use crate::model::columns::Side;
use crate::store::sql::lex::{self, Kind};

/// The lexical facts about a `--where` expression that decide where it runs.
#[derive(Debug, Default)]
pub struct Inspected {
    /// Identifiers used as names (not function names), lower case.
    pub identifiers: Vec<String>,
}

/// Reads a `--where` expression as SQL tokens: refuses what could end the expression early
/// (`;`, comments, unbalanced parentheses) and lists the names it uses.
pub fn inspect(expr: &str) -> Result<Inspected, String> {
    let tokens = lex::tokens(expr);
    let mut out = Inspected::default();
    let mut depth = 0i32;
    for (n, t) in tokens.iter().enumerate() {
        match t.kind {
            Kind::String | Kind::QuotedName if !t.closed => {
                let open = t.text(expr).chars().next().unwrap_or('\'');
                let close = lex::closing(open);
                return Err(format!("unterminated {open}…{close} in the expression"));
            }
            Kind::QuotedName => out.identifiers.push(t.unquoted(expr).to_ascii_lowercase()),
            Kind::Semicolon => {
                return Err("the expression contains ';': give one expression".into());
            }
            Kind::LineComment => {
                return Err("comments (--) are not allowed in the expression".into());
            }
            Kind::BlockComment => {
                return Err("comments (/* */) are not allowed in the expression".into());
            }
            Kind::Open => depth += 1,
            Kind::Close => {
                depth -= 1;
                if depth < 0 {
                    return Err("unbalanced ')' in the expression".into());
                }
            }
            Kind::Word => {
                // A word before `(` names a function.
                let next = tokens[n + 1..].iter().find(|t| t.kind != Kind::Space);
                if next.is_none_or(|t| t.kind != Kind::Open) {
                    out.identifiers.push(t.text(expr).to_ascii_lowercase());
                }
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err("unbalanced '(' in the expression".into());
    }
    Ok(out)
}

/// Where a `--where` expression runs: the pawn-set scan of one side, the game scan, or the
/// positions scan with the tables it joins.
#[derive(Copy, Clone, Debug)]
pub enum FilterSource {
    Side(Side),
    Games,
    Positions(Joins),
}

impl FilterSource {
    fn sql(self) -> String {
        match self {
            FilterSource::Side(side) => sql::side_source(side),
            FilterSource::Games => sql::game_source(),
            FilterSource::Positions(joins) => sql::positions_source(joins),
        }
    }
}

impl StatsDb {
    /// Checks one `--where` expression against the source it will run in (compiled, never
    /// run): `Err` with what is wrong, in SQLite's words without the SQL around it.
    pub fn check_filter(&self, source: FilterSource, filter: &str) -> Result<(), String> {
        let probe = sql::probe(&source.sql(), filter);
        let stmt = match self.conn.prepare(&probe) {
            Ok(stmt) => stmt,
            Err(rusqlite::Error::MultipleStatement) => return Err("give one expression".into()),
            Err(e) => return Err(sqlite_message(&e)),
        };
        if !stmt.readonly() {
            return Err("the expression is not read-only".into());
        }
        Ok(())
    }
}

fn sqlite_message(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(_, Some(msg)) => msg.clone(),
        // SQLite's own words, without the internal SQL the expression was placed in.
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        e => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    #[test]
    fn inspect_lists_names_and_skips_literals_and_functions() {
        let i =
            inspect("abs(white_islands - \"Black_Islands\") > 1 AND eco LIKE 'B%' AND x'00' = 1")
                .unwrap();
        assert_eq!(
            i.identifiers,
            [
                "white_islands",
                "black_islands",
                "and",
                "eco",
                "like",
                "and",
                "x"
            ]
        );
        let i = inspect("result = 'it''s' AND date(date) > 0x1F").unwrap();
        assert_eq!(i.identifiers, ["result", "and", "date"]);
    }

    #[test]
    fn inspect_refuses_what_could_escape_the_expression() {
        assert!(inspect("1); DELETE FROM games; SELECT (1").is_err());
        assert!(inspect("1 -- comment").is_err());
        assert!(inspect("1 /* c */").is_err());
        assert!(inspect("(1").is_err());
        assert!(inspect("1)").is_err());
        assert!(inspect("'open").is_err());
        assert!(inspect("a - -1").is_ok());
    }

    #[test]
    fn where_errors_give_sqlites_words_without_the_sql() {
        let conn = Connection::open_in_memory().unwrap();
        let e = conn
            .prepare("SELECT 1 FROM (SELECT 2 AS a) WHERE (nosuch = 1)")
            .unwrap_err();
        assert_eq!(sqlite_message(&e), "no such column: nosuch");
    }
}
