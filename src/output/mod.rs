//! Writing answers: tables, CSV and JSON, PGN and FEN export, and charts.

pub mod chart;
pub mod export;
pub mod table;
