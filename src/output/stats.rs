//! The rows of `pawndex stats` as CSV (standard output or `-o`, and `GET /api/stats`).

use std::io::Write;

use anyhow::Result;

use crate::model::tally::{Group, Query};

/// The columns after the `--by` columns.
pub const CSV_COUNT_COLUMNS: [&str; 8] = [
    "positions",
    "games",
    "white_wins",
    "draws",
    "black_wins",
    "white_score",
    "avg_white_elo",
    "avg_black_elo",
];

/// The CSV: a header, then one record per group.
pub fn write_csv(out: impl Write, q: &Query, groups: &[Group]) -> Result<()> {
    let mut w = crate::output::table::csv_writer(out);
    let mut header: Vec<String> = q.by.iter().map(|c| c.name()).collect();
    header.extend(CSV_COUNT_COLUMNS.iter().map(|s| s.to_string()));
    w.write_record(&header)?;
    let opt =
        |v: Option<f64>, digits: usize| v.map(|v| format!("{v:.digits$}")).unwrap_or_default();
    for g in groups {
        let t = &g.totals;
        let mut record: Vec<String> = q.by.iter().zip(&g.keys).map(|(c, v)| c.render(v)).collect();
        record.extend([
            t.positions.to_string(),
            t.games.to_string(),
            t.white_wins.to_string(),
            t.draws.to_string(),
            t.black_wins.to_string(),
            crate::output::table::score_text(t.white_score()),
            opt(t.avg_white_elo(), 1),
            opt(t.avg_black_elo(), 1),
        ]);
        w.write_record(&record)?;
    }
    w.flush()?;
    Ok(())
}

/// The CSV's records as JSON objects keyed by its header (what `GET /api/stats` answers):
/// a cell that reads as a number is a number, an empty cell `null`, any other a string.
pub fn csv_rows_json(csv: &[u8]) -> Result<Vec<serde_json::Value>> {
    let mut r = csv::Reader::from_reader(csv);
    let header: Vec<String> = r.headers()?.iter().map(str::to_owned).collect();
    let mut rows = Vec::new();
    for record in r.records() {
        let record = record?;
        let mut obj = serde_json::Map::new();
        for (name, cell) in header.iter().zip(record.iter()) {
            let value = if cell.is_empty() {
                serde_json::Value::Null
            } else if let Ok(n) = cell.parse::<i64>() {
                n.into()
            } else if let Ok(x) = cell.parse::<f64>()
                && x.is_finite()
            {
                x.into()
            } else {
                cell.into()
            };
            obj.insert(name.clone(), value);
        }
        rows.push(serde_json::Value::Object(obj));
    }
    Ok(rows)
}
