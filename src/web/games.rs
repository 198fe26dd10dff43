//! `GET /api/games` and `GET /api/games/export`: `find`'s filters as parameters, the rows of
//! `find --per game --format json` a page at a time (keyset: `after=` the last game id), or the
//! whole list streamed as PGN, FEN or CSV (`find --per game --format pgn|fen|csv`).

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::engine::find::{Filters, resolve_names, search};
use crate::output::table::Format;
use crate::store::read::Snapshot;
use crate::store::read::search::{GameCond, Rows, Search};
use crate::web::error::{ApiError, Params, short};
use crate::web::pool::{Limit, Pool};

/// The position filters' and the order's parameter names: each is the `find` option of the same
/// name (`fen` is `--structure`, `structure` is `--structure-name`).
pub const FILTERS: &[&str] = &[
    "fen",
    "structure",
    "white",
    "black",
    "pawns",
    "no_pawns",
    "ply",
    "sort",
    "reverse",
];

/// The game filters (`find`'s and `plans`' game options): every list of games takes them
/// besides [`FILTERS`].
pub const GAME_FILTERS: &[&str] = &[
    "result",
    "min_elo",
    "player",
    "white_player",
    "black_player",
    "player_name",
    "event",
    "site",
    "eco",
    "date",
    "max_elo",
    "year",
    "time_class",
    "exclude_time_class",
    "min_stay",
];

/// How long an export may run.
const EXPORT_TIME: Duration = Duration::from_secs(600);

/// The filters the parameters give (each value of a repeated parameter counts).
pub fn filters(p: &Params) -> Result<Filters, ApiError> {
    Ok(Filters {
        white: p.all("white"),
        black: p.all("black"),
        pawns: p.all("pawns"),
        no_pawns: p.all("no_pawns"),
        structure: p.get("fen").map(str::to_owned),
        structure_name: p.all("structure"),
        ply: p.get("ply").map(str::to_owned),
        result: p.all("result"),
        // Any whole number: the range is `find`'s rule (engine::find), one for both faces.
        min_elo: match p.get("min_elo") {
            Some(v) => Some(v.trim().parse::<i64>().map_err(|_| {
                ApiError::bad_request(format!(
                    "min_elo={}: not a whole number (give a rating from 0 to {})",
                    short(v),
                    crate::engine::find::MAX_ELO
                ))
            })?),
            None => None,
        },
        player: p.all("player"),
        white_player: p.all("white_player"),
        black_player: p.all("black_player"),
        player_name: p.all("player_name"),
        event: p.all("event"),
        site: p.all("site"),
        eco: p.all("eco"),
        date: p.all("date"),
        max_elo: whole(p, "max_elo", "a rating")?,
        year: p.all("year"),
        time_class: p.all("time_class"),
        exclude_time_class: p.all("exclude_time_class"),
        min_stay: whole(p, "min_stay", "a number of plies")?,
        sort: p.get("sort").map(str::to_owned),
        reverse: p.flag("reverse")?,
    })
}

/// A whole number parameter whose range is `find`'s rule (engine::find), `None` when absent.
fn whole(p: &Params, name: &str, what: &str) -> Result<Option<i64>, ApiError> {
    match p.get(name) {
        Some(v) => Ok(Some(v.trim().parse::<i64>().map_err(|_| {
            ApiError::bad_request(format!(
                "{name}={}: not a whole number (give {what})",
                short(v)
            ))
        })?)),
        None => Ok(None),
    }
}

/// The search of the filters, its structure names resolved against the database's catalogue
/// (and, sorted by typicality, the games' ranks from the plans).
fn resolved(conn: &Snapshot, filters: &Filters) -> anyhow::Result<Search> {
    let mut s = search(filters)?;
    resolve_names(conn, &mut s)?;
    crate::engine::find::rank_typical(conn, filters, &mut s)?;
    Ok(s)
}

/// One page: `limit` rows of games after the game id `after`.
pub async fn page(pool: &Arc<Pool>, p: &Params) -> Result<Value, ApiError> {
    let filters = filters(p)?;
    let limit = p.number("limit", 50, 1, crate::web::api::MAX_LIMIT)?;
    let after = match p.get("after") {
        Some(_) => Some(p.number("after", 0, 0, i64::MAX as u64)? as i64),
        None => None,
    };
    let rows = pool
        .run(move |conn| {
            let s = resolved(conn, &filters)?;
            windows(conn, &s, after.unwrap_or(0), limit)
        })
        .await?;
    let rows: Vec<Value> = rows
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(serde_json::from_slice)
        .collect::<Result<_, _>>()
        .map_err(|e| ApiError::internal(format!("reading the rows back: {e}")))?;
    let next = if rows.len() as u64 == limit {
        rows.last().and_then(|r| r.get("game_id")).cloned()
    } else {
        None
    };
    Ok(json!({ "rows": rows, "next": next }))
}

/// The JSON lines of the first `limit` games after `after`, read window by window of game
/// ids (each twice as wide as the last), so a page reads the runs of about the games it lists,
/// however deep it is (a search through candidate lists takes one window).
fn windows(conn: &Snapshot, search: &Search, after: i64, limit: u64) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    if !search.order.is_plain() {
        // Sorted: every matching game is keyed, one statement; the page starts after the
        // game `after` in this order (keyset on the key and the id: no game twice, none
        // skipped).
        let mut s = search.clone();
        s.order.after = (after > 0).then_some(after);
        let mut stmt = s.rows_statement(conn, Rows::Games)?;
        crate::output::table::write_results(
            conn,
            &mut stmt,
            Format::Json,
            Some(limit),
            1,
            &mut buf,
        )?;
        return Ok(buf);
    }
    let last = crate::store::schema::games::last_game_id(conn)?;
    // A search with pawn or structure conditions reads lists of candidate games first (cheap
    // for a few games, costly to repeat): one window to the end.
    let listed =
        !search.structures.is_empty() || !search.white.is_empty() || !search.black.is_empty();
    let first = if listed {
        i64::MAX
    } else {
        (limit as i64).saturating_mul(4)
    };
    let (mut lo, mut width, mut found) = (after, first, 0u64);
    while found < limit && lo < last {
        let hi = lo.saturating_add(width).min(last);
        let mut s = search.clone();
        s.games.push(GameCond::Ids(lo, hi));
        let mut stmt = s.rows_statement(conn, Rows::Games)?;
        found += crate::output::table::write_results(
            conn,
            &mut stmt,
            Format::Json,
            Some(limit - found),
            1,
            &mut buf,
        )?;
        lo = hi;
        width = width.saturating_mul(2);
    }
    Ok(buf)
}

/// How long an export waits for its client to take the next chunk before it gives up.
const SEND_TIMEOUT: Duration = Duration::from_secs(30);

/// Sends what is written, in chunks, to the response body; fails once the client is gone, when
/// it has taken nothing for [`SEND_TIMEOUT`], or past the export's time limit.
struct ToBody {
    tx: mpsc::Sender<Vec<u8>>,
    buf: Vec<u8>,
    limit: Limit,
    runtime: tokio::runtime::Handle,
}

impl Write for ToBody {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= 1 << 16 {
            self.flush()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        if self.limit.passed() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the export ran past its time limit",
            ));
        }
        let chunk = std::mem::take(&mut self.buf);
        let sent = self
            .runtime
            .block_on(tokio::time::timeout(SEND_TIMEOUT, self.tx.send(chunk)));
        match sent {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe)),
            Err(_) => Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the client took nothing for 30 s",
            )),
        }
    }
}

/// The whole filtered list as a streamed file.
pub async fn export(pool: &Arc<Pool>, p: &Params) -> Result<Response, ApiError> {
    let filters = filters(p)?;
    let (format, content_type, ext) = match p.get("format") {
        Some("pgn") | None => (Format::Pgn, "application/x-chess-pgn", "pgn"),
        Some("fen") => (Format::Fen, "text/plain; charset=utf-8", "fen"),
        Some("csv") => (Format::Csv, "text/csv; charset=utf-8", "csv"),
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "format={}: give pgn, fen or csv",
                short(other)
            )));
        }
    };
    // Too many exports at once, or a mistake in the filters: a 503 or a 400, before any
    // byte of the file.
    let slot = pool.export_slot()?;
    let search = pool.run(move |conn| resolved(conn, &filters)).await?;
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(8);
    let pool = Arc::clone(pool);
    // Whether the file was sent whole: else the body ends in an error, and the client sees a
    // broken transfer rather than a file cut short that looks complete.
    let whole = Arc::new(AtomicBool::new(false));
    let sent_whole = Arc::clone(&whole);
    let runtime = tokio::runtime::Handle::current();
    tokio::spawn(async move {
        let _ = pool
            .run_export(slot, EXPORT_TIME, move |conn| {
                let mut stmt = search.rows_statement(conn, Rows::Games)?;
                let mut out = ToBody {
                    tx,
                    buf: Vec::new(),
                    limit: conn.limit.clone(),
                    runtime,
                };
                crate::output::table::write_results(
                    conn,
                    &mut stmt,
                    format,
                    None,
                    crate::engine::parallel::threads(None),
                    &mut out,
                )?;
                out.flush()?;
                sent_whole.store(true, Ordering::SeqCst);
                Ok(())
            })
            .await;
    });
    let mut ended = false;
    let stream = futures_util::stream::poll_fn(move |cx| {
        rx.poll_recv(cx).map(|chunk| match chunk {
            Some(c) => Some(Ok(c)),
            None if ended || whole.load(Ordering::SeqCst) => None,
            None => {
                ended = true;
                Some(Err(std::io::Error::other(
                    "the export stopped before its end",
                )))
            }
        })
    });
    let mut response = (StatusCode::OK, Body::from_stream(stream)).into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"games.{ext}\"")) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(response)
}
