//! `GET /api/stats`: the parameters into the statistics question the command line asks
//! (`engine::stats::request`), and its answer as rows, CSV or the SVG chart.

use std::path::Path;

use anyhow::Result;
use clap::ValueEnum;

use crate::engine::stats::request::{Ask, query};
use crate::engine::stats::{self as engine, PlyRange, StatsDb};
use crate::model::Per;
use crate::model::report::Report;
use crate::web::error::{ApiError, Params, short};
use crate::web::pool::Work;

/// The most groups (rows, bars) one request may make: more is no table or chart one reads,
/// and `by=game_id,ply` on a big database would take gigabytes. More is a 400 saying so.
pub const MAX_GROUPS: usize = 100_000;

/// What `/api/stats` answers with.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Csv,
    Svg,
}

impl Format {
    pub fn parse(v: Option<&str>) -> Result<Format, ApiError> {
        match v {
            None | Some("json") => Ok(Format::Json),
            Some("csv") => Ok(Format::Csv),
            Some("svg") => Ok(Format::Svg),
            Some(other) => Err(ApiError::bad_request(format!(
                "format={}: give json, csv or svg",
                short(other)
            ))),
        }
    }
}

fn value_names<T: ValueEnum>() -> String {
    T::value_variants()
        .iter()
        .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_owned()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The question the parameters ask (the command line's options of the same names).
pub fn ask(p: &Params) -> Result<Ask, ApiError> {
    let mut ask = Ask::default();
    match (p.get("report"), p.get("by")) {
        (Some(name), None) => {
            ask.report = Some(Report::from_str(name, true).map_err(|_| {
                ApiError::bad_request(format!(
                    "report={}: no such report; the reports: {}",
                    short(name),
                    value_names::<Report>()
                ))
            })?);
        }
        (None, Some(by)) => {
            ask.by = by.split(',').map(|c| c.trim().to_owned()).collect();
        }
        _ => {
            return Err(ApiError::bad_request(
                "give report=NAME (a built-in report) or by=COLUMN[,COLUMN]",
            ));
        }
    }
    if let Some(per) = p.get("per") {
        ask.per = Some(Per::from_str(per, true).map_err(|_| {
            ApiError::bad_request(format!("per={}: give position or game", short(per)))
        })?);
    }
    if let Some(range) = p.get("ply") {
        let (first, last) = crate::model::ply_range(range)
            .map_err(|why| ApiError::bad_request(format!("ply={}: {why}", short(range))))?;
        ask.ply = Some(PlyRange { first, last });
    }
    if let Some(v) = p.get("min_elo") {
        // Any whole number: the range is the engine's rule, one for both faces.
        ask.min_elo = Some(v.trim().parse::<i64>().map_err(|_| {
            ApiError::bad_request(format!(
                "min_elo={}: not a whole number (give a rating from 0 to {})",
                short(v),
                crate::engine::find::MAX_ELO
            ))
        })?);
    }
    if p.get("top").is_some() {
        ask.top = Some(p.number("top", 0, 1, 100_000)? as usize);
    }
    if let Some(form) = p.get("structure") {
        ask.filters.push(structure_filter(form)?);
    }
    if let Some(fen) = p.get("fen") {
        // The pawns as the stored bitboards (SQLite integers): numbers made here, not text of
        // the request.
        let (white, black) = crate::model::fen::structure_of(fen)?;
        ask.filters.push(format!(
            "white_pawns = {} AND black_pawns = {}",
            white as i64, black as i64
        ));
    }
    Ok(ask)
}

/// `structure=KEY` (or `KEY~`) as the `--where` condition on the named structure; only a key
/// of the catalogue in force is taken, so no text of the request reaches the SQL.
fn structure_filter(form: &str) -> Result<String, ApiError> {
    let (key, reversed) = match form.strip_suffix('~') {
        Some(k) => (k, 1),
        None => (form, 0),
    };
    let catalogue = crate::model::structure::Catalogue::active();
    let Some(d) = catalogue.definitions().iter().find(|d| d.key == key) else {
        return Err(ApiError::bad_request(format!(
            "structure={}: no structure of the catalogue has this key",
            short(form)
        )));
    };
    Ok(format!(
        "structure = '{}' AND structure_reversed = {reversed}",
        d.key.replace('\'', "''")
    ))
}

/// The answer: its content type and bytes.
pub fn answer(
    work: &Work<'_>,
    path: &Path,
    ask: &Ask,
    format: Format,
) -> Result<(&'static str, Vec<u8>)> {
    let (query, kind, title) = query(ask)?;
    if query.plies.first > query.plies.last {
        crate::model::usage!("--ply does not overlap the report's own ply range");
    }
    if format == Format::Svg {
        crate::output::chart::check(&query.by, kind)?;
    }
    let limit = work.limit.clone();
    let stop_at = work.limit.clone();
    let stop = move || stop_at.passed();
    let connect = move || -> Result<StatsDb> { StatsDb::open(path, &limit) };
    let db = connect()?;
    // The thread policy of `stats --threads`: each reader's connection under the request's limit.
    let groups = engine::run(
        &db,
        &connect,
        crate::engine::parallel::threads(None),
        &query,
        engine::Bounds {
            max_groups: MAX_GROUPS,
            stop: &stop,
        },
    )?;
    let mut csv = Vec::new();
    crate::output::stats::write_csv(&mut csv, &query, &groups)?;
    Ok(match format {
        Format::Csv => ("text/csv; charset=utf-8", csv),
        Format::Json => {
            let rows = crate::output::stats::csv_rows_json(&csv)?;
            // `per`: what a row's counts and White's score count (each position, or each game).
            let per = if query.per == Per::Game {
                "game"
            } else {
                "position"
            };
            let body = serde_json::to_vec(&serde_json::json!({ "rows": rows, "per": per }))?;
            ("application/json", body)
        }
        Format::Svg => {
            let subtitle = format!(
                "per {}",
                if query.per == Per::Game {
                    "game"
                } else {
                    "position"
                }
            );
            let spec = crate::output::chart::Spec {
                by: &query.by,
                per: query.per,
                kind,
                title: &title,
                subtitle: &subtitle,
            };
            let svg = crate::output::chart::svg(&spec, &groups)?;
            ("image/svg+xml", svg.into_bytes())
        }
    })
}
