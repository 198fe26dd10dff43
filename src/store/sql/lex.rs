//! The one SQL lexer of pawndex: cuts SQL text into tokens (string literals, quoted names,
//! words, numbers, comments, parentheses, semicolons) with their byte offsets, as SQLite reads
//! them. `pawndex query` uses it to find where the first statement ends; `pawndex stats` to
//! check a `--where` expression and list the names it uses.

/// What a token is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A string literal `'…'` (a doubled quote inside is a quote).
    String,
    /// A quoted name `"…"`, `` `…` `` or `[…]` (a doubled `"` or `` ` `` inside is one).
    QuotedName,
    /// A bare word: a keyword, a name or a function name.
    Word,
    /// A number, including `0x1F`, `1e5` and `.5`.
    Number,
    /// `-- …` up to and including the end of its line.
    LineComment,
    /// `/* … */`.
    BlockComment,
    Open,
    Close,
    Semicolon,
    /// A run of white space.
    Space,
    /// Any other character (an operator, a comma).
    Other,
}

/// A token: its kind and bytes `start..end` of the text.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
    /// False for a string, quoted name or block comment that runs to the end of the text
    /// without its closing mark.
    pub closed: bool,
}

impl Token {
    /// Whether the token is a comment.
    #[must_use]
    pub fn is_comment(&self) -> bool {
        matches!(self.kind, Kind::LineComment | Kind::BlockComment)
    }

    /// The token's text.
    #[must_use]
    pub fn text<'a>(&self, sql: &'a str) -> &'a str {
        &sql[self.start..self.end]
    }

    /// The content of a closed string or quoted name: without its quotes, a doubled quote
    /// read as one.
    #[must_use]
    pub fn unquoted(&self, sql: &str) -> String {
        let text = self.text(sql);
        let mut chars = text.chars();
        let Some(open) = chars.next() else {
            return String::new();
        };
        let close = closing(open);
        let inner = &text[open.len_utf8()..text.len() - close.len_utf8()];
        if close == ']' {
            return inner.to_string();
        }
        inner.replace(&format!("{close}{close}"), &close.to_string())
    }
}

/// The mark that closes a quote opened by `open`.
#[must_use]
pub fn closing(open: char) -> char {
    match open {
        '[' => ']',
        c => c,
    }
}

/// The tokens of `sql`, in order, covering every byte.
#[must_use]
pub fn tokens(sql: &str) -> Vec<Token> {
    let chars: Vec<(usize, char)> = sql.char_indices().collect();
    let at = |i: usize| chars.get(i).map(|&(_, c)| c);
    let offset = |i: usize| chars.get(i).map_or(sql.len(), |&(o, _)| o);
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        let (kind, next, closed) = match c {
            '\'' | '"' | '`' | '[' => {
                let (next, closed) = quoted(&chars, i);
                let kind = if c == '\'' {
                    Kind::String
                } else {
                    Kind::QuotedName
                };
                (kind, next, closed)
            }
            '-' if at(i + 1) == Some('-') => {
                let end = (i + 2..chars.len()).find(|&j| chars[j].1 == '\n');
                (Kind::LineComment, end.map_or(chars.len(), |j| j + 1), true)
            }
            '/' if at(i + 1) == Some('*') => {
                let end = (i + 2..chars.len().saturating_sub(1))
                    .find(|&j| chars[j].1 == '*' && chars[j + 1].1 == '/');
                match end {
                    Some(j) => (Kind::BlockComment, j + 2, true),
                    None => (Kind::BlockComment, chars.len(), false),
                }
            }
            '(' => (Kind::Open, i + 1, true),
            ')' => (Kind::Close, i + 1, true),
            ';' => (Kind::Semicolon, i + 1, true),
            c if c.is_ascii_digit()
                || (c == '.' && at(i + 1).is_some_and(|d| d.is_ascii_digit())) =>
            {
                let next = run_end(&chars, i + 1, |c| c.is_ascii_alphanumeric() || c == '.');
                (Kind::Number, next, true)
            }
            c if c.is_alphabetic() || c == '_' => {
                let next = run_end(&chars, i + 1, |c| {
                    c.is_alphanumeric() || c == '_' || c == '$'
                });
                (Kind::Word, next, true)
            }
            c if c.is_whitespace() => (
                Kind::Space,
                run_end(&chars, i + 1, char::is_whitespace),
                true,
            ),
            _ => (Kind::Other, i + 1, true),
        };
        out.push(Token {
            kind,
            start: offset(i),
            end: offset(next),
            closed,
        });
        i = next;
    }
    out
}

/// The index after the run of characters from `from` that pass `keep`.
fn run_end(chars: &[(usize, char)], from: usize, keep: impl Fn(char) -> bool) -> usize {
    (from..chars.len())
        .find(|&j| !keep(chars[j].1))
        .unwrap_or(chars.len())
}

/// The end of the quote opened at `i` (the index after its closing mark) and whether it is
/// closed at all.
fn quoted(chars: &[(usize, char)], i: usize) -> (usize, bool) {
    let close = closing(chars[i].1);
    let mut j = i + 1;
    while j < chars.len() {
        if chars[j].1 == close {
            // A doubled quote is a quote inside.
            if close != ']' && chars.get(j + 1).is_some_and(|&(_, c)| c == close) {
                j += 2;
                continue;
            }
            return (j + 1, true);
        }
        j += 1;
    }
    (chars.len(), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(sql: &str) -> Vec<(Kind, &str)> {
        tokens(sql)
            .into_iter()
            .filter(|t| t.kind != Kind::Space)
            .map(|t| (t.kind, t.text(sql)))
            .collect()
    }

    #[test]
    fn tokens_cover_the_text_in_order() {
        let sql = "SELECT 'a;b', \"x\"\"y\", [z] -- c ;\n/* d */ f(1.5e3) é;";
        let ts = tokens(sql);
        let mut at = 0;
        for t in &ts {
            assert_eq!(t.start, at);
            at = t.end;
        }
        assert_eq!(at, sql.len());
        assert_eq!(
            kinds(sql),
            [
                (Kind::Word, "SELECT"),
                (Kind::String, "'a;b'"),
                (Kind::Other, ","),
                (Kind::QuotedName, "\"x\"\"y\""),
                (Kind::Other, ","),
                (Kind::QuotedName, "[z]"),
                (Kind::LineComment, "-- c ;\n"),
                (Kind::BlockComment, "/* d */"),
                (Kind::Word, "f"),
                (Kind::Open, "("),
                (Kind::Number, "1.5e3"),
                (Kind::Close, ")"),
                (Kind::Word, "é"),
                (Kind::Semicolon, ";"),
            ]
        );
        let names: Vec<String> = ts
            .iter()
            .filter(|t| t.kind == Kind::QuotedName)
            .map(|t| t.unquoted(sql))
            .collect();
        assert_eq!(names, ["x\"y", "z"]);
    }

    #[test]
    fn unclosed_quotes_and_comments_run_to_the_end() {
        for sql in ["'open", "\"a\"\"", "[x", "/* c", "/*/"] {
            let ts = tokens(sql);
            assert_eq!(ts.len(), 1, "{sql}");
            assert!(!ts[0].closed && ts[0].end == sql.len(), "{sql}");
        }
        let ts = tokens("-- no newline");
        assert_eq!(ts.len(), 1);
        assert!(ts[0].closed && ts[0].kind == Kind::LineComment);
    }
}
