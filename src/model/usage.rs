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
