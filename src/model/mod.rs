//! The chess and data concepts every layer shares, importing nothing else of the crate: the
//! pawn-structure feature kernels, named structures, the distance between structures, the stored
//! move encoding, the piece-set, results and the tag roster, and the columns statistics group by.

pub mod annotate;
pub mod columns;
pub mod explore;
pub mod features;
pub mod fen;
pub mod game;
pub mod hash;
pub mod moves;
pub mod names;
pub mod numbers;
pub mod outcome;
pub mod pieceset;
pub mod plans;
pub mod players;
pub mod profile;
pub mod report;
mod scope;
pub mod search;
pub mod similar;
pub mod sink;
pub mod stored;
pub mod structure;
mod structure_file;
pub mod structure_near;
pub mod structure_report;
pub mod tally;
pub mod time_class;
mod usage;
pub mod workload;

pub use scope::{Per, ply_range};
pub(crate) use usage::usage;
pub use usage::{BadValue, UsageError, bad_value};
