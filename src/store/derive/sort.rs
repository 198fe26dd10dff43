//! The (pawn set, game) pairs of a merge, sorted by (set, game) in bounded memory: sorted
//! chunks spill to temporary files and merge at the end with the chunk still in memory.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};

use anyhow::{Context, Result};

/// One (pawn set, game) pair of the games being derived, with what the totals need.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Pair {
    pub(super) set: u32,
    pub(super) game: u32,
    pub(super) plies: u32,
    /// 0 White wins, 1 draw, 2 Black wins, 3 none.
    pub(super) outcome: u8,
    /// 0: no rating.
    pub(super) white_elo: u16,
    pub(super) black_elo: u16,
}

const PAIR_BYTES: usize = 17;

impl Pair {
    /// The sort key: (set, game) is unique among the pairs of one merge.
    pub(super) fn key(&self) -> u64 {
        (u64::from(self.set) << 32) | u64::from(self.game)
    }

    fn write(&self, out: &mut impl Write) -> std::io::Result<()> {
        let mut b = [0u8; PAIR_BYTES];
        b[0..4].copy_from_slice(&self.set.to_le_bytes());
        b[4..8].copy_from_slice(&self.game.to_le_bytes());
        b[8..12].copy_from_slice(&self.plies.to_le_bytes());
        b[12] = self.outcome;
        b[13..15].copy_from_slice(&self.white_elo.to_le_bytes());
        b[15..17].copy_from_slice(&self.black_elo.to_le_bytes());
        out.write_all(&b)
    }

    fn read(input: &mut impl Read) -> std::io::Result<Option<Pair>> {
        let mut b = [0u8; PAIR_BYTES];
        match input.read_exact(&mut b) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        }
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        Ok(Some(Pair {
            set: u32_at(0),
            game: u32_at(4),
            plies: u32_at(8),
            outcome: b[12],
            white_elo: u16::from_le_bytes([b[13], b[14]]),
            black_elo: u16::from_le_bytes([b[15], b[16]]),
        }))
    }
}

/// Sorted sources merged by a scan of their heads, not a heap, below this many files.
const LINEAR_MERGE_MAX: usize = 8;

/// Pairs kept in memory before a sorted chunk goes to a temporary file (20 bytes each). Two
/// chunks take turns (one fills while the other is sorted and written), so this is 80 MiB.
/// (Chunks of 6 Mi pairs, a new one for each spill: the four masters shards took 3-8% longer,
/// with a peak of 362-378 MiB against 318-330, the kernel zeroing each new chunk's pages.)
const PAIRS_IN_MEMORY: usize = 2 << 20;

/// Sorts pairs by (set, game) in bounded memory: sorted chunks spill to temporary files (sorted
/// and written by a background thread while pairs keep coming, one chunk at a time) and are
/// merged at the end with the last chunk, which stays in memory.
pub(super) struct PairSorter {
    /// Pairs per chunk ([`PAIRS_IN_MEMORY`]; smaller in tests).
    limit: usize,
    chunk: Vec<Pair>,
    spills: Vec<std::fs::File>,
    spilling: Option<std::thread::JoinHandle<Result<Spilled>>>,
}

/// A chunk written to its temporary file, and the chunk's buffer, emptied.
type Spilled = (std::fs::File, Vec<Pair>);

/// Sorts a chunk and writes it to a temporary file, rewound; the chunk comes back empty, for
/// the chunk after next.
fn write_sorted(mut chunk: Vec<Pair>) -> Result<Spilled> {
    chunk.sort_unstable_by_key(Pair::key);
    let mut file = tempfile::tempfile().context("creating a temporary sort file")?;
    {
        let mut out = BufWriter::with_capacity(1 << 20, &mut file);
        for p in &chunk {
            p.write(&mut out)?;
        }
        out.flush()?;
    }
    file.seek(SeekFrom::Start(0))?;
    chunk.clear();
    Ok((file, chunk))
}

impl PairSorter {
    pub(super) fn new() -> PairSorter {
        PairSorter::with_limit(PAIRS_IN_MEMORY)
    }

    fn with_limit(limit: usize) -> PairSorter {
        let limit = limit.max(1);
        PairSorter {
            limit,
            // All of it at once: grown by doubling, the chunk would be copied (and its new
            // pages faulted in) seven times on its way to the limit. Then it takes turns with
            // the one spilled (see `PAIRS_IN_MEMORY`). (With chunks of 6 Mi pairs, a third,
            // spare chunk cost 120 MB more at the peak, 1,012 MiB for 4 million games against
            // 884.)
            chunk: Vec::with_capacity(limit),
            spills: Vec::new(),
            spilling: None,
        }
    }

    pub(super) fn push(&mut self, p: Pair) -> Result<()> {
        self.chunk.push(p);
        if self.chunk.len() >= self.limit {
            self.spill()?;
        }
        Ok(())
    }

    /// Waits for the chunk being spilled, if any; that chunk, emptied.
    fn join_spill(&mut self) -> Result<Option<Vec<Pair>>> {
        let Some(h) = self.spilling.take() else {
            return Ok(None);
        };
        let (file, chunk) = h
            .join()
            .map_err(|_| anyhow::anyhow!("the sort thread failed"))??;
        self.spills.push(file);
        Ok(Some(chunk))
    }

    fn spill(&mut self) -> Result<()> {
        let next = match self.join_spill()? {
            Some(chunk) => chunk,
            None => Vec::with_capacity(self.limit),
        };
        let chunk = std::mem::replace(&mut self.chunk, next);
        self.spilling = Some(
            std::thread::Builder::new()
                .name("sort".into())
                .spawn(move || write_sorted(chunk))?,
        );
        Ok(())
    }

    /// Every pair in (set, game) order.
    pub(super) fn finish(mut self, mut visit: impl FnMut(Pair) -> Result<()>) -> Result<()> {
        use rayon::slice::ParallelSliceMut;
        drop(self.join_spill()?);
        let mut last = std::mem::take(&mut self.chunk);
        last.par_sort_unstable_by_key(Pair::key);
        if self.spills.is_empty() {
            for p in last {
                visit(p)?;
            }
            return Ok(());
        }
        // 1 MiB of read buffer per file, and 64 MiB in all (4 million games spill some 70).
        let buffer = ((64 << 20) / self.spills.len()).clamp(64 << 10, 1 << 20);
        let mut readers: Vec<BufReader<std::fs::File>> = self
            .spills
            .into_iter()
            .map(|f| BufReader::with_capacity(buffer, f))
            .collect();
        // Sources 0..readers.len() are the files, the last one the chunk in memory.
        let readers_count = readers.len();
        let mut memory = last.into_iter();
        let mut next = |i: usize| -> Result<Option<Pair>> {
            Ok(match readers.get_mut(i) {
                Some(r) => Pair::read(r)?,
                None => memory.next(),
            })
        };
        if readers_count < LINEAR_MERGE_MAX {
            // Few sources (a first load of the masters has three): the smallest of their heads
            // by a scan, cheaper than a heap's moves of each pair.
            let mut heads: Vec<Option<Pair>> = Vec::with_capacity(readers_count + 1);
            for i in 0..=readers_count {
                heads.push(next(i)?);
            }
            loop {
                let mut min: Option<(u64, usize)> = None;
                for (i, h) in heads.iter().enumerate() {
                    if let Some(p) = h
                        && min.is_none_or(|(k, _)| p.key() < k)
                    {
                        min = Some((p.key(), i));
                    }
                }
                let Some((_, i)) = min else {
                    return Ok(());
                };
                let p = std::mem::replace(&mut heads[i], next(i)?);
                visit(p.expect("the smallest head is a pair"))?;
            }
        }
        let mut heap = BinaryHeap::new();
        for i in 0..=readers_count {
            if let Some(p) = next(i)? {
                heap.push(Reverse((p.key(), i, p)));
            }
        }
        while let Some(Reverse((_, i, p))) = heap.pop() {
            visit(p)?;
            if let Some(p) = next(i)? {
                heap.push(Reverse((p.key(), i, p)));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pairs come out in (set, game) order, every one once, whether they stay in memory or
    /// spill to several files (sorted in the background) and merge with the last chunk.
    #[test]
    fn the_sorter_orders_pairs_through_spills() {
        // Spills: 50 and 15 (merged by a heap), 8, 7 and 5 (by a scan), 1, none.
        for limit in [100, 333, 600, 700, 1000, 4999, 1 << 20] {
            let mut sorter = PairSorter::with_limit(limit);
            let mut x = 0x2545_F491_4F6C_DD1Du64;
            let mut want = Vec::new();
            for game in 0..5_000u32 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let p = Pair {
                    set: (x % 300) as u32,
                    game,
                    plies: (x >> 20) as u32 % 50,
                    outcome: (x >> 40) as u8 % 4,
                    white_elo: (x >> 44) as u16,
                    black_elo: 7,
                };
                want.push(p);
                sorter.push(p).unwrap();
            }
            want.sort_unstable_by_key(Pair::key);
            let mut got = Vec::new();
            sorter
                .finish(|p| {
                    got.push(p);
                    Ok(())
                })
                .unwrap();
            assert_eq!(got, want, "limit {limit}");
        }
    }
}
