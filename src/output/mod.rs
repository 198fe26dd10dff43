//! Writing answers: tables, CSV and JSON, PGN and FEN export, and charts.

pub mod annotate;
pub mod chart;
pub mod explore;
pub mod export;
mod file;
pub mod info;
pub mod plans;
pub mod players;
pub mod profile;
pub mod similar;
pub mod stats;
pub mod structures;
pub mod table;

pub use file::{check_output_path, write_output};
