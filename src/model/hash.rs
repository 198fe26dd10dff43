//! One fast hasher for maps keyed by small integers (pawn bitboards, game hashes, group keys):
//! one multiply per word, folded, instead of SipHash (a fifth of the index writer's time went
//! to hashing, and statistics hash a group key per run). The keys are not chosen by an
//! adversary who could aim at collisions: pawn sets are legal positions, game hashes are
//! themselves hashes and group keys are numbers pawndex hands out. The folded 128-bit product
//! mixes every bit of a word into both halves of the state, so keys that differ only in their
//! high bits (bitboards of the same files on other ranks) still spread over the buckets.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// The hasher: each word of input is mixed in with one folded multiply.
#[derive(Default, Clone, Copy)]
pub struct IntHasher(u64);

impl Hasher for IntHasher {
    /// Bytes (a slice of integers, a string) are taken eight at a time, each word mixed in.
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
        for &b in chunks.remainder() {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u8(&mut self, v: u8) {
        self.write_u64(u64::from(v));
    }

    fn write_u16(&mut self, v: u16) {
        self.write_u64(u64::from(v));
    }

    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }

    fn write_u64(&mut self, v: u64) {
        let m = u128::from((self.0 ^ v).wrapping_add(0x243F_6A88_85A3_08D3))
            * 0x9E37_79B9_7F4A_7C15_u128;
        self.0 = (m as u64) ^ ((m >> 64) as u64);
    }

    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }

    fn write_i64(&mut self, v: i64) {
        self.write_u64(v as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Builds [`IntHasher`]s.
pub type IntBuild = BuildHasherDefault<IntHasher>;
/// A `HashMap` with [`IntHasher`].
pub type IntMap<K, V> = HashMap<K, V, IntBuild>;
/// A `HashSet` with [`IntHasher`].
pub type IntSet<K> = HashSet<K, IntBuild>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn hash<T: Hash>(v: &T) -> u64 {
        IntBuild::default().hash_one(v)
    }

    #[test]
    fn every_bit_of_a_key_moves_the_low_bits() {
        // A map picks buckets by the low bits: a key differing in any one bit (a pawn on
        // another rank) must land elsewhere there.
        let base = 0x0000_0000_0000_FF00u64;
        for bit in 0..64 {
            let other = base ^ (1 << bit);
            assert_ne!(hash(&base) & 0xFFFF, hash(&other) & 0xFFFF, "bit {bit}");
        }
    }

    #[test]
    fn slices_and_tuples_hash_by_value() {
        assert_eq!(hash(&vec![1i64, 2, 3]), hash(&vec![1i64, 2, 3]));
        assert_ne!(hash(&vec![1i64, 2, 3]), hash(&vec![1i64, 3, 2]));
        assert_ne!(hash(&(1u64, 2u32, 3u32)), hash(&(1u64, 3u32, 2u32)));
        let mut m: IntMap<(u64, u8), i64> = IntMap::default();
        m.insert((7, 1), 3);
        assert_eq!(m.get(&(7, 1)), Some(&3));
        assert_eq!(m.get(&(7, 0)), None);
    }
}
