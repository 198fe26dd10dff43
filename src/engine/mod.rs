//! The work that is neither storage nor printing, as typed functions any face (the command
//! line, a web server) can call: the named queries, statistics and their reports.

pub mod count;
pub mod explore;
pub mod find;
pub mod parallel;
pub mod queries;
pub mod similar;
mod similar_sets;
pub mod stats;
pub mod structures;
