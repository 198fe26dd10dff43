//! The JSON API (`docs/serve.md`): one handler per route, each checking its parameters, then
//! calling on a pooled connection the function the command line calls for the same question,
//! and rendering with `output`'s writers.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State as Extract};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::engine::explore;
use crate::model::similar::{Options, Pawns};
use crate::web::error::{ApiError, Params, short};
use crate::web::state::State;

type Shared = Extract<Arc<State>>;
type Pairs = Result<Query<Vec<(String, String)>>, QueryRejection>;
type Answer = Result<Response, ApiError>;

/// The most rows one request lists.
pub const MAX_LIMIT: u64 = 500;

/// The parameters of a request, checked against the names its route takes.
fn params(query: Pairs, known: &[&str]) -> Result<Params, ApiError> {
    let Query(pairs) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    Params::check(pairs, known)
}

/// The pawns of the `fen` parameter (the command line's words for a bad FEN).
fn pawns(p: &Params) -> Result<Pawns, ApiError> {
    let fen = p.required("fen", "FEN (a FEN, or only its board part)")?;
    let (white, black) = crate::model::fen::structure_of(fen)?;
    Ok(Pawns { white, black })
}

fn json(v: Value) -> Answer {
    Ok(Json(v).into_response())
}

/// `GET /api/structure?fen=FEN`: names, nearest forms, features and counts.
pub async fn structure(Extract(state): Shared, q: Pairs) -> Answer {
    let p = params(q, &["fen", "counts"])?;
    let target = pawns(&p)?;
    if p.get("counts").is_some() && !p.flag("counts")? {
        // The name alone: no database work.
        let card = explore::classify(target);
        return json(crate::output::explore::card_json(&card, None));
    }
    let s = Arc::clone(&state);
    let v = state
        .pool
        .run(move |conn| {
            let card = explore::card(conn, target)?;
            let named = crate::model::structure::Catalogue::active().named(card.code);
            let row = match named {
                Some((d, reversed)) => {
                    let report = s.report(conn)?;
                    explore::form_row(&report, &d.key, reversed).map(|r| top(r, 5))
                }
                None => None,
            };
            Ok(crate::output::explore::card_json(&card, row.as_ref()))
        })
        .await?;
    json(v)
}

/// A report row with its lists cut to `n` (what `structures --top n` lists).
fn top(r: &crate::model::structure_report::Row, n: usize) -> crate::model::structure_report::Row {
    let mut r = r.clone();
    r.eco.truncate(n);
    r.turns_into.truncate(n);
    r.leaving.truncate(n);
    r
}

/// `GET /api/similar?fen=FEN&…`: the rows of `similar --format json`.
pub async fn similar(Extract(state): Shared, q: Pairs) -> Answer {
    let p = params(
        q,
        &[
            "fen",
            "limit",
            "mirror",
            "reversed",
            "ignore_wings",
            "max_distance",
            "min_games",
        ],
    )?;
    let request = crate::engine::similar::Request {
        target: pawns(&p)?,
        options: Options {
            ignore_wings: p.flag("ignore_wings")?,
            mirror: p.flag("mirror")?,
            colour_reversed: p.flag("reversed")?,
        },
        limit: p.number("limit", 20, 1, MAX_LIMIT)? as usize,
        max_distance: match p.get("max_distance") {
            Some(_) => Some(p.number("max_distance", 0, 0, 10_000)? as u32),
            None => None,
        },
        min_games: p.number("min_games", 1, 1, u64::from(u32::MAX))?,
    };
    // Ranked as the command ranks: the sets read on the thread policy's connections (the
    // request's own, and the others forked from it under the request's limit, so that they
    // stop too when the client goes away).
    let threads = crate::engine::parallel::threads(None);
    let rows = state
        .pool
        .run(move |work| crate::engine::similar::rank(work, threads, request))
        .await?;
    let rows: Vec<Value> = rows.iter().map(crate::output::similar::to_json).collect();
    json(json!({ "rows": rows }))
}

/// `GET /api/game/ID`: a game replayed, 404 when no game has the id.
pub async fn game(Extract(state): Shared, Path(id): Path<String>) -> Answer {
    let Ok(id) = id.parse::<i64>() else {
        return Err(ApiError::bad_request(format!(
            "game id {:?}: give a whole number (the id `pawndex find` lists)",
            short(&id)
        )));
    };
    let view = state.pool.run(move |conn| explore::game(conn, id)).await?;
    match view {
        Some(v) => json(crate::output::explore::game_json(&v)),
        None => Err(ApiError::not_found(format!(
            "no game with id {id} in the database"
        ))),
    }
}

/// `GET /api/info`: what `pawndex info --format json` prints.
pub async fn info(Extract(state): Shared, q: Pairs) -> Answer {
    params(q, &[])?;
    let path = state.pool.path().to_path_buf();
    let v = state
        .pool
        .run(move |conn| {
            let mut info = crate::store::read::info::snapshot(conn, &path)?;
            // File names only: where the files lie on this machine is no business of a page.
            info.db = file_name(&info.db);
            for s in &mut info.sources {
                s.name = file_name(std::path::Path::new(&s.name))
                    .display()
                    .to_string();
            }
            Ok(crate::output::info::to_json(&info))
        })
        .await?;
    json(v)
}

/// The last part of a path (the whole of it when it has none, like `-` for standard input).
fn file_name(path: &std::path::Path) -> std::path::PathBuf {
    path.file_name()
        .map_or_else(|| path.to_path_buf(), std::path::PathBuf::from)
}

/// `GET /api/catalogue?top=N`: the array of `structures --top N --format json` as rows.
pub async fn catalogue(Extract(state): Shared, q: Pairs) -> Answer {
    let p = params(q, &["top"])?;
    let n = p.number("top", 3, 1, crate::web::state::REPORT_TOP as u64)? as usize;
    let s = Arc::clone(&state);
    let rows = state
        .pool
        .run(move |conn| {
            let report = s.report(conn)?;
            let forms = s.common_forms(conn)?;
            let rows: Vec<_> = report.iter().map(|r| top(r, n)).collect();
            let mut json = crate::output::structures::to_json(&rows);
            // Each form's most common exact pawns: where its link opens the explorer.
            if let Some(items) = json.as_array_mut() {
                for (item, row) in items.iter_mut().zip(&rows) {
                    if let Some(f) = forms.iter().find(|f| f.code == row.form.code) {
                        item["board"] = json!(crate::model::similar::pawn_board(Pawns {
                            white: f.white,
                            black: f.black,
                        }));
                        item["board_games"] = json!(f.games);
                    }
                }
            }
            Ok(json)
        })
        .await?;
    json(json!({ "rows": rows }))
}

/// `GET /api/breaks?structure=KEY` (a named form: its leaving moves from the `structures`
/// report) or `?fen=FEN` (exactly these pawns): the moves that leave it, `limit` from `after`.
pub async fn breaks(Extract(state): Shared, q: Pairs) -> Answer {
    let p = params(q, &["fen", "structure", "limit", "after"])?;
    let limit = p.number("limit", 50, 1, MAX_LIMIT)? as usize;
    let after = p.number("after", 0, 0, u64::from(u32::MAX))? as usize;
    match (p.get("structure"), p.get("fen")) {
        (Some(form), None) => named_breaks(&state, form, after, limit).await,
        (None, Some(_)) => {
            let target = pawns(&p)?;
            let v = state
                .pool
                .run(move |work| {
                    let limit_of = work.limit.clone();
                    let rows = explore::breaks(work, target, &|| limit_of.passed())?;
                    Ok(crate::output::explore::exact_breaks_json(
                        target, &rows, after, limit,
                    ))
                })
                .await?;
            json(v)
        }
        _ => Err(ApiError::bad_request(
            "give structure=KEY (KEY~ for the colour-reversed form) or fen=FEN",
        )),
    }
}

/// The leaving moves of a named form (`KEY`, `KEY~` reversed).
async fn named_breaks(state: &Arc<State>, form: &str, after: usize, limit: usize) -> Answer {
    let (key, reversed) = match form.strip_suffix('~') {
        Some(base) => (base.to_owned(), true),
        None => (form.to_owned(), false),
    };
    let s = Arc::clone(state);
    let v = state
        .pool
        .run(move |conn| {
            let report = s.report(conn)?;
            Ok(explore::form_row(&report, &key, reversed)
                .map(|row| crate::output::explore::breaks_json(row, after, limit)))
        })
        .await?;
    v.map_or_else(
        || {
            Err(ApiError::not_found(format!(
                "structure={}: the database's catalogue has no such form",
                short(form)
            )))
        },
        json,
    )
}

/// `GET /api/stats?report=NAME` or `?by=COLUMNS`: rows, CSV or the SVG chart.
pub async fn stats(Extract(state): Shared, q: Pairs) -> Answer {
    let p = params(
        q,
        &[
            "report",
            "by",
            "per",
            "ply",
            "min_elo",
            "top",
            "structure",
            "fen",
            "format",
        ],
    )?;
    let ask = crate::web::stats::ask(&p)?;
    let format = crate::web::stats::Format::parse(p.get("format"))?;
    let key = format!("{ask:?} {format:?}");
    let s = Arc::clone(&state);
    let kept = state
        .pool
        .run(move |work| {
            let path = s.pool.path().to_path_buf();
            s.stats(work, key, || {
                crate::web::stats::answer(work, &path, &ask, format)
            })
        })
        .await?;
    let mut response = (StatusCode::OK, kept.1.clone()).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(kept.0));
    Ok(response)
}

/// The parameters of the list of games: the filters, and the page or the format.
fn games_params(q: Pairs, more: &[&str]) -> Result<Params, ApiError> {
    let mut known = crate::web::games::FILTERS.to_vec();
    known.extend_from_slice(crate::web::games::GAME_FILTERS);
    known.extend_from_slice(more);
    params(q, &known)
}

/// `GET /api/games?FILTERS&limit=N&after=ID`: a page of `find --per game --format json`.
pub async fn games(Extract(state): Shared, q: Pairs) -> Answer {
    let p = games_params(q, &["limit", "after"])?;
    json(crate::web::games::page(&state.pool, &p).await?)
}

/// `GET /api/games/export?FILTERS&format=pgn|fen|csv`: the whole list, streamed.
pub async fn games_export(Extract(state): Shared, q: Pairs) -> Answer {
    let p = games_params(q, &["format"])?;
    crate::web::games::export(&state.pool, &p).await
}

/// The parameters of `GET /api/plans` besides the game filters: the structure and the lists.
const PLANS_OPTIONS: &[&str] = &["fen", "structure", "within", "side", "top", "model_games"];

/// `GET /api/plans?structure=KEY|fen=FEN[&within=N]&FILTERS&side=&top=&model_games=`: the
/// document of `plans --format json`.
pub async fn plans(Extract(state): Shared, q: Pairs) -> Answer {
    let mut known = PLANS_OPTIONS.to_vec();
    known.extend_from_slice(crate::web::games::GAME_FILTERS);
    let p = params(q, &known)?;
    let filters = crate::web::games::filters(&p)?;
    let within = match p.get("within") {
        Some(_) => Some(p.number("within", 0, 0, 64)? as u32),
        None => None,
    };
    let side = p.get("side").unwrap_or("both");
    let sides = crate::output::plans::Sides::parse(side).ok_or_else(|| {
        ApiError::bad_request(format!("side={}: give white, black or both", short(side)))
    })?;
    let request = crate::engine::plans::Request {
        filters,
        within,
        top: p.number("top", 15, 1, MAX_LIMIT)? as usize,
        model_games: p.number("model_games", 10, 0, MAX_LIMIT)? as usize,
        threads: crate::engine::parallel::threads(None),
        ranking_only: false,
    };
    let v = state
        .pool
        .run(move |conn| {
            let report = crate::engine::plans::plans(conn, &request)?;
            Ok(crate::output::plans::to_json(&report, sides))
        })
        .await?;
    json(v)
}

/// `GET /api/players?search=TEXT&min_games=N&limit=N`: the document of `pawndex players
/// --search TEXT --min-games N --limit N --format json`, byte for byte.
pub async fn players(Extract(state): Shared, q: Pairs) -> Answer {
    let p = params(q, &["search", "min_games", "limit"])?;
    let search = p.get("search").unwrap_or_default().to_owned();
    let min_games = p.number("min_games", 1, 0, i64::MAX as u64)? as i64;
    let limit = p.number("limit", 20, 1, MAX_LIMIT)? as usize;
    let body = state
        .pool
        .run(move |conn| {
            let rows = crate::store::read::names::search(conn, &search, min_games, limit)?;
            let mut out = Vec::new();
            crate::output::players::write_json(&mut out, &search, &rows)?;
            Ok(out)
        })
        .await?;
    json_bytes(body)
}

/// The parameters of `GET /api/player` besides the game filters (`--baseline OTHER.db` is not
/// one: a page may not name files of the server's machine).
const PLAYER_OPTIONS: &[&str] = &["name", "as", "vs", "exact"];

/// `GET /api/player?name=NAME[&as=white|black][&vs=OPPONENT][&exact=N]&FILTERS`: the document
/// of `pawndex player NAME … --format json`, byte for byte; an unknown or ambiguous name is a
/// 404 listing the candidates.
pub async fn player(Extract(state): Shared, q: Pairs) -> Answer {
    let mut known = PLAYER_OPTIONS.to_vec();
    known.extend_from_slice(crate::web::games::GAME_FILTERS);
    let p = params(q, &known)?;
    let name = p
        .required("name", "NAME (a player's name as pawndex players lists it)")?
        .to_owned();
    let only = match p.get("as") {
        None | Some("both") => None,
        Some("white") => Some(shakmaty::Color::White),
        Some("black") => Some(shakmaty::Color::Black),
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "as={}: give white or black (or both)",
                short(other)
            )));
        }
    };
    let request = crate::engine::profile::Request {
        name,
        only,
        filters: crate::web::games::filters(&p)?,
        vs: p.get("vs").map(str::to_owned),
        baseline: None,
        exact: p.number(
            "exact",
            crate::engine::profile::DEFAULT_EXACT as u64,
            0,
            100,
        )? as usize,
        threads: crate::engine::parallel::threads(None),
    };
    let body = state
        .pool
        .run(move |conn| {
            let profile = crate::engine::profile::profile(conn, &request)?;
            let mut out = Vec::new();
            crate::output::profile::write_json(&mut out, &profile)?;
            Ok(out)
        })
        .await?;
    json_bytes(body)
}

/// A JSON document written by `output` (the command line's bytes).
fn json_bytes(body: Vec<u8>) -> Answer {
    let mut response = (StatusCode::OK, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

/// An `/api/…` path no route has.
pub async fn unknown() -> ApiError {
    ApiError::not_found(
        "no such API route; the routes are /api/structure, /api/similar, /api/game/ID, \
         /api/games, /api/breaks, /api/plans, /api/stats, /api/info, /api/catalogue, \
         /api/players, /api/player and POST /api/annotate (docs/serve.md)",
    )
}

/// The most bytes of PGN text `POST /api/annotate` reads (1 MiB).
pub const ANNOTATE_MAX: usize = 1 << 20;

/// How long the annotation of one request may take (its games replayed and annotated).
pub const ANNOTATE_TIME: std::time::Duration = std::time::Duration::from_secs(30);

/// `POST /api/annotate` with PGN text as the body: its games annotated against the served
/// database as `pawndex annotate --format json` does, each with its annotated PGN and its
/// plies for the board (`docs/serve.md`, "Your game"). Nothing is written.
pub async fn annotate(Extract(state): Shared, body: Result<Bytes, BytesRejection>) -> Answer {
    let text = pgn_body(body)?.to_vec();
    let s = Arc::clone(&state);
    let v = state
        .pool
        .run_for(ANNOTATE_TIME, move |work| {
            let reference = s.reference(work)?;
            crate::web::annotate::answer(work, &reference, text)
        })
        .await
        .map_err(|e| {
            if e.status == StatusCode::SERVICE_UNAVAILABLE {
                ApiError::unavailable(format!(
                    "annotating took longer than {} s and was stopped: send fewer games at once \
                     (pawndex annotate annotates a file of any size)",
                    ANNOTATE_TIME.as_secs()
                ))
            } else {
                e
            }
        })?;
    json(v)
}

/// `GET /api/annotate`: the route takes the PGN text as the body of a POST.
pub async fn annotate_get() -> ApiError {
    ApiError::method_not_allowed(
        "POST the PGN text to /api/annotate (the body of the request, at most 1 MiB)",
    )
}

/// The body of `POST /api/annotate`: PGN text within [`ANNOTATE_MAX`] bytes, not empty, not
/// compressed, not binary.
fn pgn_body(body: Result<Bytes, BytesRejection>) -> Result<Bytes, ApiError> {
    let body = body.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::too_large(format!(
                "the PGN text is larger than {ANNOTATE_MAX} bytes (1 MiB), the most one request \
                 annotates: send fewer games, or run pawndex annotate FILE --db DATABASE"
            ))
        } else {
            ApiError::bad_request(format!("the PGN text could not be read: {}", e.body_text()))
        }
    })?;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request(
            "no PGN text: send the game's text (its tags and moves) as the body of the request",
        ));
    }
    let head = &body[..body.len().min(crate::ingest::input::HEAD_BYTES)];
    let compression = crate::ingest::input::Compression::sniff(head);
    if compression != crate::ingest::input::Compression::Plain {
        return Err(ApiError::bad_request(format!(
            "the body is {}-compressed: send the PGN text itself",
            compression.name()
        )));
    }
    match crate::ingest::input::judge_head(head) {
        Some(crate::ingest::input::Refusal::Archive(_)) => Err(ApiError::bad_request(
            "the body is an archive, not PGN text: unpack it and send the .pgn inside",
        )),
        Some(_) => Err(ApiError::bad_request(
            "the body is not PGN text (binary data at its start)",
        )),
        None => Ok(body),
    }
}
