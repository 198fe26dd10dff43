//! A statistics question as a command line or a URL states it (a built-in report or `--by`
//! columns, with `--per`, `--where`, `--ply`, `--min-elo` and `--top`), turned into the
//! [`Query`] the engine runs, the chart it draws and the chart's title.

use anyhow::{Result, bail};

use crate::model::UsageError;
use crate::model::columns::{self, Column};
use crate::model::report::{ChartKind, Report};
use crate::model::{Per, names};

use super::{PlyRange, Query};

/// What was asked: a report or columns, and the filters on top.
#[derive(Clone, Debug, Default)]
pub struct Ask {
    pub report: Option<Report>,
    pub by: Vec<String>,
    pub per: Option<Per>,
    pub filters: Vec<String>,
    pub ply: Option<PlyRange>,
    pub min_elo: Option<i64>,
    pub top: Option<usize>,
}

/// The `--by` columns by name, refusing an unknown one (with the closest) or one given twice.
pub fn parse_columns(names_given: &[String]) -> Result<Vec<Column>> {
    let mut out = Vec::new();
    for name in names_given {
        let Some(c) = Column::parse(name) else {
            let valid: Vec<String> = columns::all().iter().map(|c| c.name()).collect();
            let closest = names::did_you_mean(name, valid.iter().map(String::as_str));
            return Err(UsageError(format!(
                "unknown column {name:?}{closest}\n  valid columns: {}",
                valid.join(", ")
            ))
            .into());
        };
        if out.contains(&c) {
            return Err(UsageError(format!("column {} given twice in --by", c.name())).into());
        }
        out.push(c);
    }
    Ok(out)
}

/// The query, the chart it draws and the chart's title.
pub fn query(ask: &Ask) -> Result<(Query, ChartKind, String)> {
    let (mut query, kind, title) = match ask.report {
        Some(r) => {
            let d = r.definition();
            let query = Query {
                by: d.by,
                per: d.per,
                filters: d.filter.map(String::from).into_iter().collect(),
                plies: d.plies,
                min_elo: None,
                top: d.top,
            };
            (query, d.chart, d.title.to_string())
        }
        None => {
            let by = parse_columns(&ask.by)?;
            let title = format!(
                "White's score by {}",
                by.iter()
                    .map(|c| c.words())
                    .collect::<Vec<_>>()
                    .join(" and ")
            );
            let query = Query {
                by,
                per: Per::Position,
                filters: Vec::new(),
                plies: PlyRange::ALL,
                min_elo: None,
                top: None,
            };
            (query, ChartKind::Auto, title)
        }
    };
    if let Some(per) = ask.per {
        query.per = per;
    }
    if let Some(empty) = ask.filters.iter().find(|f| f.trim().is_empty()) {
        bail!(UsageError(format!(
            "--where {empty:?}: the expression is empty (give a condition, as in \
             \"white_islands >= 3\")"
        )));
    }
    query.filters.extend(ask.filters.iter().cloned());
    if let Some(p) = ask.ply {
        query.plies = query.plies.intersect(p);
    }
    if let Some(elo) = ask.min_elo {
        crate::engine::find::check_min_elo(elo)?;
    }
    query.min_elo = ask.min_elo;
    if ask.top.is_some() {
        query.top = ask.top;
    }
    Ok((query, kind, title))
}
