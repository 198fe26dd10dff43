//! `pawndex serve`: the explorer in a browser and its JSON API (`docs/serve.md`). This layer
//! holds no SQL and no chess: it routes a request, checks its parameters, calls the same typed
//! function the command line calls for the same question (in `engine`, `store` or `model`) on a
//! read-only connection of [`pool`], and renders the answer with the writers of `output`.

mod annotate;
mod api;
mod assets;
mod error;
mod games;
pub mod host;
mod pool;
mod state;
mod stats;

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::extract::{Request, State as Extract};
use axum::http::{HeaderValue, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::web::state::State;

/// What `pawndex serve` is asked.
#[derive(Clone, Debug)]
pub struct Options {
    pub db: PathBuf,
    pub bind: IpAddr,
    pub port: u16,
    pub open: bool,
    /// More names the server answers to (`--allow-host`), beside the loopback names and the
    /// bound address.
    pub allow_hosts: Vec<String>,
}

/// The connections a server keeps: the one thread policy's count (every core, at most 8), at
/// least 2.
fn pool_size() -> usize {
    crate::engine::parallel::threads(None).max(2)
}

/// The warning for an address other machines can reach.
fn exposure_warning(addr: SocketAddr) -> Option<String> {
    (!addr.ip().is_loopback()).then(|| {
        format!(
            "pawndex: warning: listening on {addr}: the database is readable by anyone who can \
             reach this port"
        )
    })
}

/// Runs the server until Ctrl-C: checks the database (the command line's messages), listens,
/// prints the URL on standard output.
pub fn serve(options: Options) -> Result<i32> {
    // Before the server starts its threads (`main.rs` caps glibc's heaps for it).
    crate::model::workload::entering(crate::model::workload::Workload::Serve);
    let first = crate::store::read::Reader::open(&options.db)?;
    let pool = pool::Pool::new(options.db.clone(), first, pool_size());
    let state = Arc::new(State::new(pool));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(32)
        .enable_all()
        .build()
        .context("starting the server's runtime")?;
    runtime.block_on(async move {
        let addr = SocketAddr::new(options.bind, options.port);
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        let addr = listener.local_addr()?;
        let host = match addr.ip() {
            IpAddr::V6(ip) => format!("[{ip}]"),
            IpAddr::V4(ip) => ip.to_string(),
        };
        let url = format!("http://{host}:{}/", addr.port());
        let mut out = std::io::stdout().lock();
        writeln!(out, "{url}")?;
        out.flush()?;
        drop(out);
        if let Some(w) = exposure_warning(addr) {
            eprintln!("{w}");
        }
        if options.open {
            open_browser(&url);
        }
        state.warm_up();
        let hosts = Arc::new(host::Hosts::new(addr, &options.allow_hosts));
        axum::serve(listener, router(state, hosts))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .context("serving")?;
        Ok(0)
    })
}

/// Asks the desktop to open `url`; a failure is only said.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(opener)
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        eprintln!("pawndex: could not open a browser ({opener}: {e}); open {url}");
    }
}

/// Every route: the API, then the embedded files (and the application's page for its routes).
fn router(state: Arc<State>, hosts: Arc<host::Hosts>) -> Router {
    Router::new()
        .route("/api/structure", get(api::structure))
        .route("/api/similar", get(api::similar))
        .route("/api/game/{id}", get(api::game))
        .route("/api/games", get(api::games))
        .route("/api/games/export", get(api::games_export))
        .route("/api/breaks", get(api::breaks))
        .route("/api/plans", get(api::plans))
        .route("/api/stats", get(api::stats))
        .route("/api/info", get(api::info))
        .route("/api/catalogue", get(api::catalogue))
        .route("/api/players", get(api::players))
        .route("/api/player", get(api::player))
        .route(
            "/api/annotate",
            post(api::annotate)
                .get(api::annotate_get)
                .layer(DefaultBodyLimit::max(api::ANNOTATE_MAX)),
        )
        .route("/api", get(api::unknown))
        .route("/api/{*rest}", get(api::unknown))
        .fallback(static_file)
        .layer(middleware::from_fn_with_state(hosts, only_our_names))
        .layer(middleware::map_response(security_headers))
        .with_state(state)
}

/// Refuses (403, and a line on standard error) a request whose `Host` (or request target) is
/// not a name of this server, or that gives none: see [`host`].
async fn only_our_names(
    Extract(hosts): Extract<Arc<host::Hosts>>,
    request: Request,
    next: middleware::Next,
) -> Response {
    let header = request
        .headers()
        .get(header::HOST)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let target = request.uri().authority().map(|a| a.as_str().to_owned());
    let given: Vec<&String> = header.iter().chain(target.iter()).collect();
    if !given.is_empty() && given.iter().all(|h| hosts.accepts(h)) {
        return next.run(request).await;
    }
    let named = given
        .iter()
        .find(|h| !hosts.accepts(h))
        .map(|h| format!("{:?}", error::short(h)));
    let why = match &named {
        Some(h) => format!("the host {h} is not a name of this server"),
        None => "the request names no host (no Host header)".to_owned(),
    };
    eprintln!(
        "pawndex: refused a request for {}: {why}; pawndex serve --allow-host NAME accepts          another name",
        error::short(request.uri().path())
    );
    error::ApiError::forbidden(format!(
        "{why}: this server answers to 127.0.0.1, localhost and [::1] with its port, the          address it listens on and the names given with --allow-host"
    ))
    .into_response()
}

/// The page or file a path names (see [`assets::file_for`]).
async fn static_file(Extract(state): Extract<Arc<State>>, request: Request) -> Response {
    let file = assets::file_for(request.uri().path());
    state.assets.respond(file, request.headers())
}

/// `Content-Security-Policy: default-src 'self'` on every answer: the page loads nothing from
/// another host.
async fn security_headers(mut response: Response) -> Response {
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'self'"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_other_machines_get_a_warning() {
        assert!(exposure_warning("127.0.0.1:8080".parse().unwrap()).is_none());
        assert!(exposure_warning("[::1]:8080".parse().unwrap()).is_none());
        let w = exposure_warning("0.0.0.0:8080".parse().unwrap()).unwrap();
        assert!(w.contains("readable by anyone"), "{w}");
    }
}
