//! The answer to a request that cannot be answered: a status and `{"error": "…"}` in words a
//! person can act on (the command line's words for the same mistake), and the parameters of a
//! request, checked before any work.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::model::profile::UnknownPlayer;
use crate::model::{BadValue, UsageError};

/// The longest parameter value the server reads (a FEN is under 100 bytes).
pub const MAX_PARAM: usize = 4096;

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }

    pub fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::FORBIDDEN,
            message: message.into(),
        }
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::NOT_FOUND,
            message: message.into(),
        }
    }

    pub fn method_not_allowed(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::METHOD_NOT_ALLOWED,
            message: message.into(),
        }
    }

    pub fn too_large(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            message: message.into(),
        }
    }

    pub fn unavailable(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: message.into(),
        }
    }

    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: message.into(),
        }
    }
}

impl From<anyhow::Error> for ApiError {
    /// A usage error (a bad value: the command line's words) is a 400; a player's name that
    /// finds no one or several (`UnknownPlayer`) a 404 listing the candidates; a query stopped
    /// by the time limit a 503; anything else (a damaged database) a 500 with its words.
    fn from(e: anyhow::Error) -> ApiError {
        // A bad value names the request's parameter (the command line's flag is its own face).
        if let Some(b) = e.downcast_ref::<BadValue>() {
            let param = param_of(b.flag);
            return ApiError::bad_request(if b.value.is_empty() {
                format!("{param}: {}", b.why)
            } else {
                format!("{param}={}: {}", short(&b.value), b.why)
            });
        }
        // A name that finds no player, or several: a 404 with the candidates, naming the
        // parameter where the words name a flag (`--player-name: …` is `player_name: …`).
        if let Some(u) = e.downcast_ref::<UnknownPlayer>() {
            let words = u.to_string();
            return ApiError::not_found(match words.split_once(": ") {
                Some((flag, rest)) if flag.starts_with("--") && !flag.contains(' ') => {
                    format!("{}: {rest}", param_of(flag))
                }
                _ => words,
            });
        }
        if let Some(u) = e.downcast_ref::<UsageError>() {
            return ApiError::bad_request(u.0.clone());
        }
        if crate::store::read::is_interrupted(&e) {
            return ApiError::unavailable(format!(
                "the query took longer than {} s and was stopped: narrow it down (a smaller \
                 limit, more filters)",
                crate::web::pool::TIME_LIMIT.as_secs()
            ));
        }
        ApiError::internal(format!("{e:#}"))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(serde_json::json!({ "error": self.message })),
        )
            .into_response()
    }
}

/// The parameter of the API that a command line flag is: `--structure` (a FEN) is `fen`,
/// `--structure-name` is `structure`, any other `--a-b` is `a_b`.
#[must_use]
pub fn param_of(flag: &str) -> String {
    match flag {
        "--structure" => "fen".to_owned(),
        "--structure-name" => "structure".to_owned(),
        f => f.trim_start_matches('-').replace('-', "_"),
    }
}

/// The query parameters of a request, as given (checked for size and known names).
pub struct Params(pub Vec<(String, String)>);

impl Params {
    /// Checks every name against `known` and every value's length.
    pub fn check(pairs: Vec<(String, String)>, known: &[&str]) -> Result<Params, ApiError> {
        for (name, value) in &pairs {
            if !known.contains(&name.as_str()) {
                let name: String = name.chars().take(40).collect();
                return Err(ApiError::bad_request(format!(
                    "unknown parameter {name:?}; this URL takes {}",
                    known.join(", ")
                )));
            }
            if value.len() > MAX_PARAM {
                return Err(ApiError::bad_request(format!(
                    "{name}: the value is {} bytes long; at most {MAX_PARAM}",
                    value.len()
                )));
            }
        }
        Ok(Params(pairs))
    }

    /// The last value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `name`, in order.
    pub fn all(&self, name: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// A required value.
    pub fn required(&self, name: &str, what: &str) -> Result<&str, ApiError> {
        self.get(name)
            .ok_or_else(|| ApiError::bad_request(format!("give {name}={what}")))
    }

    /// A flag: absent, `0` or `false` is off; empty, `1` or `true` on.
    pub fn flag(&self, name: &str) -> Result<bool, ApiError> {
        match self.get(name) {
            None | Some("0" | "false") => Ok(false),
            Some("" | "1" | "true") => Ok(true),
            Some(v) => Err(ApiError::bad_request(format!(
                "{name}={}: give 1 (or true) or 0 (or false)",
                short(v)
            ))),
        }
    }

    /// A whole number between `min` and `max`, `default` when absent.
    pub fn number(&self, name: &str, default: u64, min: u64, max: u64) -> Result<u64, ApiError> {
        let Some(v) = self.get(name) else {
            return Ok(default);
        };
        match v.trim().parse::<i64>() {
            Ok(n) if n >= 0 && (n as u64) >= min && (n as u64) <= max => Ok(n as u64),
            Ok(_) => Err(ApiError::bad_request(format!(
                "{name}={}: give a whole number from {min} to {max}",
                short(v)
            ))),
            Err(_) => Err(ApiError::bad_request(format!(
                "{name}={}: not a whole number (give one from {min} to {max})",
                short(v)
            ))),
        }
    }
}

/// A value as an error message quotes it: at most 60 characters.
pub fn short(v: &str) -> String {
    if v.chars().count() <= 60 {
        v.to_owned()
    } else {
        v.chars().take(60).collect::<String>() + "…"
    }
}
