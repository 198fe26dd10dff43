//! The SQL that does not run on SQLite, or runs on every back end: the one walk over a typed
//! search ([`walk`]: which conditions a search tests, each kind matched once), the DuckDB and
//! Spark dialect over the Parquet dataset ([`dialect`], one back end of the walk; the SQLite one
//! is `read::search`), and the SQL lexer of `query`'s checks and `stats --where` ([`lex`]).
//!
//! The walk stands here, not beside the SQLite compiler, because both back ends use it and it
//! imports only the model: this room depends on nothing else of the store, so the reads build
//! on it and it never on them.

pub mod dialect;
pub mod lex;
pub(crate) mod walk;
