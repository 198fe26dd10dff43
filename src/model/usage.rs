//! A mistake in what the user asked for (a bad name, value or argument), found after the
//! command line was parsed: every layer can return one, and the command line reports it like
//! clap's own errors, with exit status 2.

use std::fmt;

/// A mistake on the command line found after parsing (a bad name, value or argument):
/// reported like clap's, exit status 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Returns a [`UsageError`] from the current function.
macro_rules! usage {
    ($($arg:tt)*) => {
        return Err(anyhow::Error::new($crate::model::UsageError(format!($($arg)*))))
    };
}
pub(crate) use usage;

/// A bad value of one option, with the option kept apart from the words, so that each face
/// names it its own way: the command line as its flag (`--structure-name nonexist: unknown
/// structure`), the server as its parameter (`structure=nonexist: unknown structure`). Made by
/// [`bad_value`], it travels as the context of a [`UsageError`] (the command line's text), so
/// that everything that knows usage errors (exit status 2, a 400) knows it too.
#[derive(Debug, Clone)]
pub struct BadValue {
    /// The command line's flag (`--structure`).
    pub flag: &'static str,
    /// The value as given (empty when `why` quotes it).
    pub value: String,
    /// What is wrong with it, naming no flag.
    pub why: String,
}

impl fmt::Display for BadValue {
    /// The command line's words: `--flag value: why`, or `--flag: why` when the words quote
    /// the value themselves (`value` empty).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.value.is_empty() {
            write!(f, "{}: {}", self.flag, self.why)
        } else {
            write!(f, "{} {}: {}", self.flag, self.value, self.why)
        }
    }
}

/// The usage error of a bad value of the option `flag` (see [`BadValue`]).
pub fn bad_value(
    flag: &'static str,
    value: impl Into<String>,
    why: impl Into<String>,
) -> anyhow::Error {
    let bad = BadValue {
        flag,
        value: value.into(),
        why: why.into(),
    };
    anyhow::Error::new(UsageError(bad.to_string())).context(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_value_is_a_usage_error_in_the_command_lines_words() {
        let e = bad_value("--structure-name", "nonexist", "unknown structure");
        assert_eq!(
            e.to_string(),
            "--structure-name nonexist: unknown structure"
        );
        assert_eq!(
            e.downcast_ref::<UsageError>().unwrap().0,
            "--structure-name nonexist: unknown structure"
        );
        let b = e.downcast_ref::<BadValue>().unwrap();
        assert_eq!((b.flag, b.value.as_str()), ("--structure-name", "nonexist"));
    }
}
