//! `POST /api/annotate` ("Your game"): the games of a PGN text read and replayed as `pawndex
//! index` replays them (`ingest::games`), annotated against the served database as `pawndex
//! annotate` annotates them (`engine::annotate`, the command's default options), each answered
//! with the command's JSON object and annotated PGN (`output::annotate`) and its plies for the
//! board (`engine::explore::replayed`). Nothing is written: the games live only in this request.

use anyhow::Result;
use serde_json::{Value, json};

use crate::engine::annotate::{Reference, annotate};
use crate::ingest::games::{GameStream, Prepared};
use crate::model::annotate::insert;
use crate::model::usage;
use crate::output::annotate::{comments, game_json};
use crate::web::pool::Work;

/// The most games one request annotates (the answer holds every ply of each: a text of
/// many short games would make it a hundred times the text's size).
pub const MAX_GAMES: usize = 100;

/// The answer to the PGN text `text` (already checked: within its bound, not binary), against
/// `reference`, the served database's (kept by the server between requests).
pub fn answer(conn: &Work<'_>, reference: &Reference, text: Vec<u8>) -> Result<Value> {
    let mut stream = match GameStream::of_bytes(text, "the PGN text") {
        Ok(s) => s,
        Err(message) => usage!("{message}"),
    };
    let (mut games, mut pgn, mut failed) = (Vec::new(), Vec::new(), 0u64);
    let mut broken = Value::Null;
    loop {
        if conn.limit.passed() {
            return Err(crate::store::read::interrupted("interrupted"));
        }
        let raw = match stream.next_game() {
            Ok(Some(raw)) => raw,
            Ok(None) => break,
            Err(e) => {
                broken = json!(format!(
                    "the text cannot be read from byte {}: {}; the games before it are annotated",
                    e.offset, e.message
                ));
                break;
            }
        };
        if raw.is_not_a_game() {
            pgn.extend_from_slice(&raw.text);
            continue;
        }
        if games.len() == MAX_GAMES {
            usage!(
                "the text holds more than {MAX_GAMES} games, the most one request annotates: send \
                 fewer, or run pawndex annotate FILE --db DATABASE (any number of games)"
            );
        }
        let number = games.len() as u64 + 1;
        let Prepared {
            offset,
            tags,
            text,
            layout,
            replayed,
        } = Prepared::of(raw);
        let (object, annotated, board) = match replayed {
            Ok(record) => {
                let notes = annotate(conn, reference, &record)?;
                let said = comments(&notes, &reference.label, reference.games, true);
                let view = crate::engine::explore::replayed(record.stored())?;
                (
                    game_json(number, offset, &tags, Ok(&notes)),
                    insert(&text, &layout, &said),
                    crate::output::explore::replay_json(&view),
                )
            }
            Err(failure) => {
                failed += 1;
                (
                    game_json(number, offset, &tags, Err(&failure)),
                    text,
                    Value::Null,
                )
            }
        };
        pgn.extend_from_slice(&annotated);
        games.push(json!({
            "annotation": object,
            "pgn": String::from_utf8_lossy(&annotated),
            "replay": board,
        }));
    }
    Ok(json!({
        "games": games,
        "pgn": String::from_utf8_lossy(&pgn),
        "failed": failed,
        "error": broken,
        "forms": forms(),
    }))
}

/// Every form of the catalogue by its key (`KEY~` the colour-reversed one) with its name as a
/// page shows it: what a move `leads_to` is called.
fn forms() -> Value {
    let mut map = serde_json::Map::new();
    for d in crate::model::structure::Catalogue::active().definitions() {
        map.insert(d.key.clone(), json!(d.name));
        map.insert(
            format!("{}~", d.key),
            json!(format!("{} (reversed)", d.name)),
        );
    }
    Value::Object(map)
}
