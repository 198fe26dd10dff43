//! The browser front end: the files of `web/`, embedded at build time (`build.rs`), each with
//! its content type and, when that is smaller, a gzip copy made once at start. A path names an
//! embedded file exactly or nothing: no file system is read, so no path can escape.

use std::collections::HashMap;
use std::io::Write;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/web_assets.rs"));
}

/// The single-page application's page.
pub const INDEX: &str = "index.html";

/// One embedded file.
pub struct Asset {
    pub bytes: &'static [u8],
    pub gzip: Option<Vec<u8>>,
    pub content_type: &'static str,
}

/// Every embedded file by its path under `web/`.
pub struct Assets(HashMap<&'static str, Asset>);

/// The content type of a file name, by extension.
#[must_use]
pub fn content_type(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    match ext.to_ascii_lowercase().as_str() {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "txt" | "md" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn compressible(content_type: &str) -> bool {
    content_type.starts_with("text/")
        || content_type.contains("json")
        || content_type.contains("svg")
}

fn gzip(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(bytes).ok()?;
    let out = enc.finish().ok()?;
    (out.len() < bytes.len()).then_some(out)
}

impl Assets {
    /// The embedded files, the text ones gzipped once.
    #[must_use]
    pub fn load() -> Assets {
        let mut map = HashMap::new();
        for &(path, bytes) in embedded::FILES {
            let content_type = content_type(path);
            let gzip = if compressible(content_type) {
                gzip(bytes)
            } else {
                None
            };
            map.insert(
                path,
                Asset {
                    bytes,
                    gzip,
                    content_type,
                },
            );
        }
        Assets(map)
    }

    /// The file at `path` (under `web/`, without a leading `/`).
    #[must_use]
    pub fn get(&self, path: &str) -> Option<&Asset> {
        self.0.get(path)
    }

    /// The response for `path`, gzipped when the request accepts it; a 404 when no file has
    /// this path: a page to a browser (a request that accepts `text/html`), else JSON.
    pub fn respond(&self, path: &str, request: &HeaderMap) -> Response {
        let Some(asset) = self.get(path) else {
            if accepts_html(request) {
                return not_found_page(path);
            }
            return crate::web::error::ApiError::not_found(format!(
                "no page or file at /{}",
                crate::web::error::short(path)
            ))
            .into_response();
        };
        let accepts_gzip = request
            .get_all(header::ACCEPT_ENCODING)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.split(',').any(|e| e.trim().starts_with("gzip")));
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(asset.content_type),
        );
        headers.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        match (&asset.gzip, accepts_gzip) {
            (Some(gz), true) => {
                headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
                (StatusCode::OK, headers, gz.clone()).into_response()
            }
            _ => (StatusCode::OK, headers, asset.bytes).into_response(),
        }
    }
}

/// Whether the request is a browser's for a page (`Accept` names `text/html`).
fn accepts_html(request: &HeaderMap) -> bool {
    request
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.split(',').any(|t| t.trim().starts_with("text/html")))
}

/// The page of a 404: what is missing and a link to the explorer (the path escaped).
fn not_found_page(path: &str) -> Response {
    let shown: String = crate::web::error::short(path)
        .chars()
        .map(|c| match c {
            '&' => "&amp;".to_owned(),
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '"' => "&quot;".to_owned(),
            '\'' => "&#39;".to_owned(),
            c => c.to_string(),
        })
        .collect();
    let page = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Not found · pawndex</title><link rel=\"stylesheet\" href=\"/style.css\">\
         </head>\n<body><main><div class=\"page\"><h1>Not found</h1><p>There is no page at \
         /{shown}. <a href=\"/\">Open the explorer.</a></p></div></main></body></html>\n"
    );
    (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        page,
    )
        .into_response()
}

/// The embedded file a request path names: the page for `/` and the application's own routes
/// (`/game/ID`, `/structures`, `/stats`, `/info`: the views of `web/app.js`), else the path itself without its `/`.
#[must_use]
pub fn file_for(path: &str) -> &str {
    let p = path.trim_start_matches('/');
    let game = p
        .strip_prefix("game/")
        .is_some_and(|id| !id.is_empty() && !id.contains('/'));
    let app_route = p.is_empty()
        || game
        || matches!(
            p,
            "structures" | "stats" | "info" | "players" | "player" | "your-game"
        );
    if app_route { INDEX } else { p }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_of_the_app_serve_the_page() {
        assert_eq!(file_for("/"), INDEX);
        assert_eq!(file_for("/game/12"), INDEX);
        assert_eq!(file_for("/structures"), INDEX);
        assert_eq!(file_for("/players"), INDEX);
        assert_eq!(file_for("/player"), INDEX);
        assert_eq!(file_for("/your-game"), INDEX);
        assert_eq!(file_for("/player/x"), "player/x");
        assert_eq!(file_for("/games"), "games");
        assert_eq!(file_for("/game/12/x"), "game/12/x");
        assert_eq!(file_for("/app.js"), "app.js");
        assert_eq!(file_for("/../Cargo.toml"), "../Cargo.toml");
    }

    #[test]
    fn the_page_is_embedded_and_typed() {
        let assets = Assets::load();
        let page = assets.get(INDEX).expect("web/index.html is embedded");
        assert_eq!(page.content_type, "text/html; charset=utf-8");
        assert!(assets.get("../Cargo.toml").is_none());
        assert_eq!(content_type("x.css"), "text/css; charset=utf-8");
    }
}
