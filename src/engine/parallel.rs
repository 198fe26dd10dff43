//! Work in parallel, one policy for every command: how many threads ([`threads`]), how a range
//! of ids is cut into slices ([`split`]) and how the slices run at once ([`fan_out`]: scoped
//! threads, each with its own item — a slice, a connection — and the results in item order;
//! [`join`] for two different tasks).
//!
//! For example, `fan_out(split(1, 100, 3), |(a, b)| Ok((a..=b).sum::<i64>()))` sums the ids of
//! `(1, 33)`, `(34, 66)` and `(67, 100)` at once and returns `[561, 1650, 2839]` (a unit test below
//! runs it).

use anyhow::Result;

/// Threads used when no flag says how many: every core, at most this many.
pub const DEFAULT_MAX_THREADS: usize = 8;
/// Threads a flag may ask for, at most.
pub const MAX_THREADS: usize = 64;

/// The number of threads to run: the flag's, else every core up to [`DEFAULT_MAX_THREADS`];
/// always between 1 and [`MAX_THREADS`].
#[must_use]
pub fn threads(flag: Option<usize>) -> usize {
    flag.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(DEFAULT_MAX_THREADS))
    })
    .clamp(1, MAX_THREADS)
}

/// Splits the ids `first..=last` into at most `n` consecutive slices of about equal length,
/// none empty, that tile the range. An empty range (`last < first`) stays one empty slice
/// (a scan of it reads nothing).
#[must_use]
pub fn split(first: i64, last: i64, n: usize) -> Vec<(i64, i64)> {
    if last < first {
        return vec![(first, last)];
    }
    let n = i64::try_from(n.max(1)).unwrap_or(i64::MAX);
    let len = last - first + 1;
    (0..n)
        .map(|i| {
            let at = |k: i64| first + (i128::from(len) * i128::from(k) / i128::from(n)) as i64;
            (at(i), at(i + 1) - 1)
        })
        .filter(|(a, b)| a <= b)
        .collect()
}

/// Runs `work` on every item at once, each on its own scoped thread, and returns the results
/// in item order; the first error in that order, if any. A panic in a thread goes on in the
/// caller.
pub fn fan_out<I: Send, T: Send>(
    items: impl IntoIterator<Item = I>,
    work: impl Fn(I) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    std::thread::scope(|scope| {
        let work = &work;
        let handles: Vec<_> = items
            .into_iter()
            .map(|item| scope.spawn(move || work(item)))
            .collect();
        handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(result) => result,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    })
}

/// Runs `a` on a scoped thread while `b` runs on the caller's; both results. A panic in `a`
/// goes on in the caller.
pub fn join<A: Send, B>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B) -> (A, B) {
    std::thread::scope(|scope| {
        let a = scope.spawn(a);
        let b = b();
        match a.join() {
            Ok(a) => (a, b),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_module_example() {
        let slices = split(1, 100, 3);
        assert_eq!(slices, [(1, 33), (34, 66), (67, 100)]);
        let sums = fan_out(slices, |(a, b)| Ok((a..=b).sum::<i64>())).unwrap();
        assert_eq!(sums, [561, 1650, 2839]);
    }

    #[test]
    fn split_tiles_the_range_without_overlap() {
        for (first, last) in [(1, 1), (1, 10), (5, 1_000_003), (0, 2), (7, 7)] {
            for n in [1, 2, 3, 8, 64] {
                let slices = split(first, last, n);
                assert!(
                    !slices.is_empty() && slices.len() <= n,
                    "{first}..{last} / {n}"
                );
                assert_eq!(slices[0].0, first);
                assert_eq!(slices.last().unwrap().1, last);
                for w in slices.windows(2) {
                    assert_eq!(w[0].1 + 1, w[1].0, "{first}..{last} / {n}: {slices:?}");
                }
                assert!(slices.iter().all(|(a, b)| a <= b));
            }
        }
        // An empty range stays one empty slice (the scan then reads nothing).
        assert_eq!(split(5, 4, 3), vec![(5, 4)]);
    }

    #[test]
    fn fan_out_keeps_the_order_and_the_first_error() {
        let out = fan_out(0..10, |i: i32| Ok(i * i)).unwrap();
        assert_eq!(out, (0..10).map(|i| i * i).collect::<Vec<_>>());
        let err = fan_out(0..10, |i: i32| {
            if i % 4 == 3 {
                anyhow::bail!("item {i}")
            }
            Ok(i)
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "item 3");
        // Borrowed items (slices of one vector) work as well as owned ones.
        let data: Vec<u32> = (1..=100).collect();
        let parts: Vec<&[u32]> = data.chunks(30).collect();
        let sums = fan_out(parts, |part| Ok(part.iter().sum::<u32>())).unwrap();
        assert_eq!(sums.iter().sum::<u32>(), 5050);
        assert_eq!(join(|| 1 + 1, || "two"), (2, "two"));
    }

    #[test]
    fn threads_follow_the_flag_within_bounds() {
        assert_eq!(threads(Some(3)), 3);
        assert_eq!(threads(Some(0)), 1);
        assert_eq!(threads(Some(500)), MAX_THREADS);
        let default = threads(None);
        assert!((1..=DEFAULT_MAX_THREADS).contains(&default));
    }
}
