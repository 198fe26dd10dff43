//! Stretches of work with a memory pattern of their own, announced by the layer that does them,
//! so that the binary (`src/main.rs`) can tune the process for them: the allocators' options
//! are process-wide choices, made in one place, and the library calls no allocator itself.
//!
//! The binary installs its hook once at start ([`set_hook`]); without one (the library's own
//! tests, the fuzz target) an announcement does nothing.

use std::sync::OnceLock;

/// What the process is about to do.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Workload {
    /// `pawndex index` (or `migrate`) starts loading games into SQLite: many transactions, a
    /// page cache emptied after each commit that wrote laid-out pages.
    Load,
    /// The load is over; the finishing steps (the derived tables' merge) follow.
    LoadDone,
    /// The Parquet dataset is written (`index --parquet`, `export parquet`): encoders that
    /// allocate and free megabyte buffers all the time.
    Parquet,
    /// `pawndex serve` starts: requests on many threads, each with SQLite connections.
    Serve,
}

static HOOK: OnceLock<fn(Workload)> = OnceLock::new();

/// Installs the binary's hook; `false` if one was installed already (the first one stays).
pub fn set_hook(hook: fn(Workload)) -> bool {
    HOOK.set(hook).is_ok()
}

/// Tells the binary's hook, if any, what the process is about to do.
pub fn entering(work: Workload) {
    if let Some(hook) = HOOK.get() {
        hook(work);
    }
}
