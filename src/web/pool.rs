//! A small pool of read-only connections for the request handlers: each piece of work runs on
//! a blocking thread (never on the async workers), in one read transaction (one snapshot: never
//! half a game of a concurrent `pawndex index`, and the next request sees its new games), under
//! a time limit, and is interrupted when the request goes away (the client closed the tab).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub use crate::store::read::Limit;
use crate::store::read::{Reader, Snapshot};
use crate::web::error::ApiError;

/// How long one request's database work may take.
pub const TIME_LIMIT: Duration = Duration::from_secs(10);

/// How many exports may stream at once. They have their own slots, apart from the
/// interactive requests' (an export writes as fast as its client reads, and a client that stops
/// reading must not hold a connection that a page is waiting for).
pub const EXPORTS: usize = 2;

/// The connections, opened as they are first needed, at most `size` at work at once for the
/// interactive requests, and at most [`EXPORTS`] more for exports.
pub struct Pool {
    path: PathBuf,
    idle: Mutex<Vec<Reader>>,
    slots: Arc<Semaphore>,
    export_slots: Arc<Semaphore>,
}

/// Cancels the work of a request whose future is dropped before the work ended.
struct Cancel {
    limit: Limit,
    done: bool,
}

impl Drop for Cancel {
    fn drop(&mut self) {
        if !self.done {
            self.limit.cancel();
        }
    }
}

impl Pool {
    /// A pool over the database `path` (already checked by [`crate::store::open_for_reading`]),
    /// with `first` as its first connection.
    pub fn new(path: PathBuf, first: Reader, size: usize) -> Arc<Pool> {
        Arc::new(Pool {
            path,
            idle: Mutex::new(vec![first]),
            slots: Arc::new(Semaphore::new(size.max(1))),
            export_slots: Arc::new(Semaphore::new(EXPORTS)),
        })
    }

    /// The database file.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    fn take(&self) -> anyhow::Result<Reader> {
        let idle = self.idle.lock().ok().and_then(|mut v| v.pop());
        match idle {
            Some(c) => Ok(c),
            None => Reader::open(&self.path),
        }
    }

    fn give_back(&self, reader: Reader) {
        if let Ok(mut v) = self.idle.lock() {
            v.push(reader);
        }
    }

    /// Runs `work` on a connection of the pool, in one read transaction, on a blocking thread,
    /// under [`TIME_LIMIT`]; dropping the returned future interrupts it.
    pub async fn run<T, F>(self: &Arc<Self>, work: F) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce(&Work<'_>) -> anyhow::Result<T> + Send + 'static,
    {
        self.run_for(TIME_LIMIT, work).await
    }

    /// [`Pool::run`] under another time limit.
    pub async fn run_for<T, F>(self: &Arc<Self>, time: Duration, work: F) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce(&Work<'_>) -> anyhow::Result<T> + Send + 'static,
    {
        let permit = Arc::clone(&self.slots)
            .acquire_owned()
            .await
            .map_err(|_| ApiError::unavailable("the server is shutting down"))?;
        self.run_with(permit, time, work).await
    }

    /// A slot of the exports', or a 503 when [`EXPORTS`] exports are streaming already.
    pub fn export_slot(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        Arc::clone(&self.export_slots)
            .try_acquire_owned()
            .map_err(|_| {
                ApiError::unavailable(format!(
                    "{EXPORTS} exports are being sent already; try again when one has ended"
                ))
            })
    }

    /// `work` on a connection of its own under `permit` (a slot of [`Pool::export_slot`]), as
    /// [`Pool::run_for`] runs it.
    pub async fn run_export<T, F>(
        self: &Arc<Self>,
        permit: OwnedSemaphorePermit,
        time: Duration,
        work: F,
    ) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce(&Work<'_>) -> anyhow::Result<T> + Send + 'static,
    {
        self.run_with(permit, time, work).await
    }

    async fn run_with<T, F>(
        self: &Arc<Self>,
        permit: OwnedSemaphorePermit,
        time: Duration,
        work: F,
    ) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce(&Work<'_>) -> anyhow::Result<T> + Send + 'static,
    {
        let limit = Limit::within(Some(time));
        let mut cancel = Cancel {
            limit: limit.clone(),
            done: false,
        };
        let pool = Arc::clone(self);
        let task = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let snapshot = pool.take()?.snapshot(&limit)?;
            let result = work(&Work {
                conn: &snapshot,
                limit,
            });
            if let Some(reader) = snapshot.end() {
                pool.give_back(reader);
            }
            result
        });
        let result = task.await;
        cancel.done = true;
        match result {
            Ok(r) => r.map_err(ApiError::from),
            Err(e) => Err(ApiError::internal(format!(
                "the request's work failed: {e}"
            ))),
        }
    }
}

/// A request's snapshot (it dereferences to it) and its limit (the snapshot's), for the work
/// between statements.
pub struct Work<'a> {
    pub conn: &'a Snapshot,
    pub limit: Limit,
}

impl std::ops::Deref for Work<'_> {
    type Target = Snapshot;
    fn deref(&self) -> &Snapshot {
        self.conn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A statement that never ends by itself.
    const ENDLESS: &str =
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

    fn pool() -> Arc<Pool> {
        // One connection: the next request waits for the first one's to come back.
        Pool::new(PathBuf::from("/nonexistent.db"), Reader::in_memory(), 1)
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn a_dropped_request_interrupts_its_query() {
        let pool = pool();
        runtime().block_on(async {
            let endless = pool.run(|c| Ok(c.query_row(ENDLESS, [], |r| r.get::<_, i64>(0))?));
            // The client goes away: the future is dropped while the query runs.
            let gone = tokio::time::timeout(Duration::from_millis(200), endless).await;
            assert!(gone.is_err(), "the endless query returned");
            // The one connection comes back once the query stopped (else this waits forever;
            // the bound only keeps a broken interrupt from hanging the test run).
            let next = tokio::time::timeout(
                Duration::from_secs(60),
                pool.run(|c| Ok(c.query_row("SELECT 7", [], |r| r.get::<_, i64>(0))?)),
            )
            .await
            .expect("the interrupted query kept its connection");
            assert_eq!(next.unwrap(), 7);
        });
    }

    #[test]
    fn a_query_past_its_time_limit_is_a_503() {
        let pool = pool();
        runtime().block_on(async {
            let err = pool
                .run_for(Duration::from_millis(50), |c| {
                    Ok(c.query_row(ENDLESS, [], |r| r.get::<_, i64>(0))?)
                })
                .await
                .unwrap_err();
            assert_eq!(err.status, axum::http::StatusCode::SERVICE_UNAVAILABLE);
            assert!(err.message.contains("narrow it down"), "{}", err.message);
            // The connection is fine afterwards (its transaction was ended: a new one begins).
            let ok = pool
                .run(|c| Ok(c.query_row("SELECT 7", [], |r| r.get::<_, i64>(0))?))
                .await
                .unwrap();
            assert_eq!(ok, 7);
        });
    }
}
