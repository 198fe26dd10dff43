//! The binary: the process-wide choices (the allocators and their options, each with its
//! reason), then the command line. The library tunes no allocator itself: the layers announce
//! what they are about to do (`model::workload`), and [`tune`] decides what that means here.

use pawndex::model::workload::{self, Workload};

/// mimalloc instead of glibc's malloc: the pipeline allocates a game's records on the replay
/// threads and frees them on the writer's, which glibc handles poorly (masters-1: `pawndex index`
/// 11% less wall time, `--parquet` 11% less; bench/README.md). SQLite keeps glibc's malloc.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    workload::set_hook(tune);
    std::process::exit(pawndex::cli::main_with_args());
}

/// The allocators' options for what the process is about to do. Each is process-wide, and
/// not every one is right for every command, so each is set when its work starts rather than
/// once for all: mimalloc keeping its freed memory from the start raised the peak RSS of
/// `pawndex index` by a fifth (masters-1 and -2: 277 against 231 MiB, median of 5, issue 38).
fn tune(work: Workload) {
    match work {
        // glibc keeps the memory it frees during a load, rather than handing the top of the
        // heap back to the kernel at each free. SQLite's page cache comes from glibc's malloc,
        // and the writer empties it after each commit that wrote laid-out pages: with the
        // default trim threshold (128 KiB) each transaction faulted its cache back in, zeroed
        // by the kernel (`clear_page_erms` 3.4-6.8% of all CPU, 1.8-2.3% with this).
        Workload::Load => glibc_trim_threshold(1 << 30, false),
        // The load is over: the memory goes back, and the default threshold, before the
        // finishing steps (the derived tables want the memory for their merge). Measured for
        // issue 38 (masters-1 and -2, 5 runs each): keeping 1 GiB to the end of the run moved
        // the peak RSS by under 5% (223 against 231 MiB), but it would keep a long append's
        // freed heap for its whole finish; the hand-back costs nothing measurable.
        Workload::LoadDone => glibc_trim_threshold(128 << 10, true),
        // mimalloc keeps the memory it frees instead of handing it back a second later: the
        // Parquet encoders allocate and free megabyte buffers all the time, and handed back,
        // each reuse is a page fault in which the kernel zeroes a fresh huge page (four masters
        // shards, paired: page faults 59-74k -> 7.1k, wall time 12% less, peak RSS 300-343 ->
        // 367-375 MiB). `index` into SQLite keeps the default: there the peak rose by 150 MiB
        // for no measurable gain.
        Workload::Parquet => {
            // SAFETY: mi_option_set only stores an integer in mimalloc's option table.
            unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
        }
        // At most two glibc heaps ("arenas"). By default glibc gives up to eight per core, one
        // to each new thread that finds the others busy; the server's request threads and the
        // threads of a parallel `similar` then each keep their freed memory, and under 16
        // clients the heap held twice what it uses (350 MB against 157 MB after
        // bench/serve.sh's load test). Announced before the server starts its threads.
        Workload::Serve => {
            #[cfg(all(target_os = "linux", target_env = "gnu"))]
            // SAFETY: mallopt only sets a tuning value of the allocator.
            unsafe {
                libc::mallopt(libc::M_ARENA_MAX, 2);
            }
        }
    }
}

/// glibc's trim threshold, and with `trim` the free memory at the top of its heaps handed back
/// now.
fn glibc_trim_threshold(bytes: i32, trim: bool) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: plain calls into the allocator, which is thread-safe.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, bytes);
        if trim {
            libc::malloc_trim(0);
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = (bytes, trim);
}

/// `mi_option_purge_delay` in mimalloc v3's `mi_option_t` (libmimalloc-sys 0.1.49 names no
/// constant for it); the test below checks its default, 1000 ms.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

#[cfg(test)]
mod tests {
    use super::MI_OPTION_PURGE_DELAY;

    /// The option number points at the purge delay: 1000 ms by default in mimalloc v3, and the
    /// option after it (`use_numa_nodes`, which the crate does name) is the next number.
    #[test]
    fn the_purge_delay_option_is_the_one_set() {
        assert_eq!(
            MI_OPTION_PURGE_DELAY + 1,
            libmimalloc_sys::mi_option_use_numa_nodes
        );
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            // SAFETY: reads mimalloc's option table.
            let delay = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
            assert_eq!(delay, 1000);
        }
    }
}
