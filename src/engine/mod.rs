//! The work that is neither storage nor printing, as typed functions any face (the command
//! line, a web server) can call: the named queries, statistics and their reports, and
//! `pawndex check`'s comparisons (its reads are the store's).

pub mod annotate;
pub mod check;
pub mod count;
pub mod explore;
pub mod find;
pub mod parallel;
pub mod plans;
pub mod profile;
pub mod queries;
pub mod similar;
mod similar_sets;
pub mod stats;
pub mod structures;
