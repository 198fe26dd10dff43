//! Counting a search's positions (`query --count`, `find --count`): the store decides the plan
//! and reads ([`store::read::count`]); the runs it asks for are read here on [`parallel::threads`]
//! connections, the candidate games cut into slices or the game ids into ranges, through the
//! one fan-out of [`parallel`].

use std::time::Instant;

use anyhow::Result;

use crate::engine::parallel;
use crate::store::read::Snapshot;
use crate::store::read::count::{self, Counting};
use crate::store::read::search::Search;

/// Candidate games below this many are read on the caller's connection alone.
const FEW_GAMES: usize = 4096;

/// Counts the positions of `search` in the snapshot `conn`; the parallel reads take more
/// connections from it ([`Snapshot::fork`]), `threads` of them at most. Every part reads the
/// games stored when the count started.
pub fn positions(conn: &Snapshot, search: &Search, threads: usize) -> Result<u64> {
    let start = Instant::now();
    let counting = count::prepare(conn, search)?;
    let forks = conn.forks();
    let planned = start.elapsed();
    let n = match &counting {
        Counting::Done(n) => *n,
        Counting::Games(filter, games) if games.len() < FEW_GAMES => filter.games(conn, games)?,
        Counting::Games(filter, games) => {
            let per = games.len().div_ceil(threads.max(1));
            parallel::fan_out(games.chunks(per), |slice| {
                let fork = forks.open()?;
                filter.games(&fork, slice)
            })?
            .into_iter()
            .sum()
        }
        Counting::Scan(filter, last_game) => {
            parallel::fan_out(parallel::split(1, *last_game, threads), |(from, to)| {
                let fork = forks.open()?;
                filter.range(&fork, from, to)
            })?
            .into_iter()
            .sum()
        }
    };
    if std::env::var_os("PAWNDEX_TIMINGS").is_some() {
        let how = match &counting {
            Counting::Done(_) => "aggregates".to_string(),
            Counting::Games(_, games) => format!("the runs of {} candidate games", games.len()),
            Counting::Scan(..) => "every run".to_string(),
        };
        eprintln!(
            "timings: plan and sets {:.3} s, {how} {:.3} s",
            planned.as_secs_f64(),
            (start.elapsed() - planned).as_secs_f64()
        );
    }
    Ok(n)
}
