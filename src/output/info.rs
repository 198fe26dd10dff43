//! What `pawndex info --format json` writes (and `GET /api/info` answers).

use serde_json::json;

use crate::store::read::info::{Info, State};

/// The JSON object of `--format json` (numbers as numbers, no separators).
pub fn to_json(info: &Info) -> serde_json::Value {
    let (state, unmerged, unfinished) = match info.state() {
        State::Complete => ("complete", 0, 0),
        State::Tail(n) => ("tail", n, 0),
        State::Unfinished(n) => ("interrupted", info.lag.pending() - n, n),
        State::Indexing(n) => ("indexing", info.lag.pending() - n, n),
    };
    json!({
        "db": info.db.display().to_string(),
        "schema_version": info.schema_version,
        "bytes": info.bytes,
        "wal_bytes": info.wal_bytes,
        "log_unfolded": info.unfolded(),
        "games": info.games,
        "plies": info.plies,
        "positions": info.positions(),
        "pawn_sets": info.pawn_sets,
        "rejected": info.rejected,
        "structures": info.structures,
        "structures_current": info.structures_current,
        "games_without_time_control": info.without_time_control,
        "sources": info.sources.iter().map(|s| json!({
            "source": s.name,
            "games": s.games,
            "plies": s.plies,
            "rejected": s.rejected,
        })).collect::<Vec<_>>(),
        "rejects_by_reason": info.reasons.iter().map(|(reason, n)| json!({
            "reason": reason,
            "games": n,
        })).collect::<Vec<_>>(),
        "complete": unfinished == 0,
        "state": state,
        "derived_through": info.lag.through,
        "unmerged_games": unmerged,
        "unfinished_games": unfinished,
        "to_run": info.to_run(),
    })
}
