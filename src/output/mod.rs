//! Writing answers: tables, CSV and JSON, PGN and FEN export, and charts.

pub mod chart;
pub mod export;
mod file;
pub mod similar;
pub mod structures;
pub mod table;

pub use file::{check_output_path, write_output};
