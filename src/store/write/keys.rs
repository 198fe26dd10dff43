//! The writer's two keys: pawn-set ids (`pawn_sets_key`) and game hashes for the duplicate
//! check (`games_hash`), each behind a bounded cache; and the two indexes on them, which a load
//! into empty tables drops and makes again at its end (laid out from the caches in a first
//! load, else built by SQLite).

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, params};

use super::Writer;
use super::tables::TableOut;
use crate::model::features::SideFeatures;
use crate::model::game::GameRecord;
use crate::model::hash::IntMap;
use crate::store::bulk_tree::{self, PageWriter, Tree};

/// Pawn sets of one side kept in the id cache at most: a map of 2^22 buckets of 17 bytes
/// (pawns, id and a control byte), about 71 MB per side. (A map of both sides keyed by
/// (pawns, side) with 64-bit ids held 2 million sets in 105 MB; at scale, sets it had let go
/// were looked up in `pawn_sets_key`, a fifth of the writer's time.)
pub(super) const SET_CACHE: usize = 3_600_000;
/// Game hashes kept in the duplicate cache at most (about 16 bytes each).
pub(super) const HASH_CACHE: usize = 4_000_000;

/// A bounded cache in front of a unique index. `complete` while it holds every key the table
/// holds: then a miss means "absent" without a lookup.
pub(super) struct Cache<K, V> {
    /// Integer keys (pawn bitboards, game hashes), hashed by
    /// [`IntHasher`](crate::model::hash::IntHasher): SipHash took a fifth of the writer's time.
    pub(super) map: IntMap<K, V>,
    pub(super) cap: usize,
    pub(super) complete: bool,
}

impl<K: std::hash::Hash + Eq, V: Copy> Cache<K, V> {
    pub(super) fn new(cap: usize, complete: bool) -> Self {
        Cache {
            map: IntMap::default(),
            cap,
            complete,
        }
    }

    /// Inserts, first emptying the cache when it is full (it then no longer holds everything).
    fn insert(&mut self, k: K, v: V) {
        if self.map.len() >= self.cap {
            self.map.clear();
            self.map.shrink_to(self.cap);
            self.complete = false;
        }
        self.map.insert(k, v);
    }
}

/// The indexes on the writer's two keys, as the migrations make them.
/// The indexes of a player's games by name (schema 6): on a first load (an empty `games`)
/// dropped at the start and built by SQLite at the end, in one sort each, instead of an insert
/// per game into two growing trees of names (a quarter more time to load masters-1); SQLite
/// keeps them current on appends.
pub(super) const NAME_INDEXES: [(&str, &str); 2] = [
    (
        "games_white",
        "CREATE INDEX IF NOT EXISTS games_white ON games(white, eco)",
    ),
    (
        "games_black",
        "CREATE INDEX IF NOT EXISTS games_black ON games(black, eco)",
    ),
];

pub(super) const KEY_INDEXES: [(&str, &str, &str); 2] = [
    (
        "pawn_sets_key",
        "pawn_sets",
        "CREATE UNIQUE INDEX IF NOT EXISTS pawn_sets_key ON pawn_sets(pawns, side)",
    ),
    (
        "games_hash",
        "games",
        "CREATE INDEX IF NOT EXISTS games_hash ON games(hash)",
    ),
];

/// Lays out the pages of a key index from its entries in key order (the index's columns, then
/// the rowid), its top in page `root`.
fn lay_out_index<const N: usize>(
    conn: &Connection,
    w: &mut PageWriter<'_>,
    root: u32,
    entries: &[[i64; N]],
) -> Result<()> {
    let mut tree = Tree::index(conn, root, bulk_tree::int_record_max(N))?;
    for e in entries {
        tree.add_ints(e)?;
        if tree.closed_bytes() >= 8 << 20 {
            tree.write_closed(w)?;
        }
    }
    tree.write(w)
}

/// The stored games with a hash, to compare with a new game. INDEXED BY: the planner
/// statistics are those of the run before; for a database that was small then they make a scan
/// of `games` look cheaper, and the statement keeps that plan while the run makes the table
/// large (appending masters-1, 5,338 duplicates, to a database made from an empty file took
/// 13.9 s instead of 3.3 s).
pub(super) const DUPLICATE_SQL: &str =
    "SELECT event, site, date, round, white, black, result, fen, moves
    FROM games INDEXED BY games_hash WHERE hash = ?1";

/// One stored game by id, as [`DUPLICATE_SQL`] reads them.
const STORED_GAME_SQL: &str = "SELECT event, site, date, round, white, black, result, fen, moves
    FROM games WHERE id = ?1";

/// Whether a stored game (a row of [`DUPLICATE_SQL`]) is `g`: same roster, start and moves.
fn same_game(r: &rusqlite::Row<'_>, g: &GameRecord) -> Result<bool> {
    for (i, w) in g.header.roster().iter().enumerate() {
        if r.get_ref(i)?.as_str_or_null()? != *w {
            return Ok(false);
        }
    }
    Ok(r.get_ref(7)?.as_str_or_null()? == g.fen.as_deref()
        && r.get_ref(8)?.as_blob()? == g.moves.as_slice())
}

impl Writer {
    /// Registers the key indexes laid out from the caches and writes their pages: first in the
    /// commit's pages, before any other page is written. Whether there were any.
    pub(super) fn lay_out_key_indexes(
        &self,
        w: &mut PageWriter<'_>,
        sets: Option<Vec<[i64; 3]>>,
        hashes: Option<Vec<[i64; 2]>>,
    ) -> Result<bool> {
        let roots = [
            sets.as_ref().map(|_| w.alloc()),
            hashes.as_ref().map(|_| w.alloc()),
        ];
        for (&(name, table, create), root) in KEY_INDEXES.iter().zip(roots) {
            if let Some(root) = root {
                let stored = create.replace(" IF NOT EXISTS", "");
                anyhow::ensure!(
                    bulk_tree::register_index(&self.conn, name, table, root, &stored)?,
                    "no room in page 1 to register {name}"
                );
            }
        }
        if let (Some(entries), Some(root)) = (&sets, roots[0]) {
            lay_out_index(&self.conn, w, root, entries)?;
        }
        if let (Some(entries), Some(root)) = (&hashes, roots[1]) {
            lay_out_index(&self.conn, w, root, entries)?;
        }
        Ok(roots.iter().any(Option::is_some))
    }

    /// At the end of a run, the key indexes it dropped: laid out from the caches when this run
    /// lays out the key indexes (a first load, see [`super::tables::Paths`]) and the caches
    /// still hold every key, else built by SQLite.
    pub(super) fn finish_key_indexes(&mut self) -> Result<()> {
        // Only a tree of at least one entry (an empty index has nothing to lay out).
        let laying = self.paths.key_pages;
        let sets = self.deferred[0]
            && laying
            && self.sets.iter().all(|c| c.complete)
            && self.sets.iter().any(|c| !c.map.is_empty());
        // With duplicates kept, the hash cache records nothing.
        let hashes = self.deferred[1]
            && laying
            && !self.keep_duplicates
            && self.hashes.complete
            && !self.hashes.map.is_empty();
        // Room in page 1 for both indexes' `sqlite_schema` rows: each row's texts and at most 34
        // bytes of headers, varints and its cell pointer (`register_index` changes nothing when
        // a row would not fit, and the run then fails: the bound must hold).
        let needed: usize = KEY_INDEXES
            .iter()
            .map(|(name, table, create)| name.len() + table.len() + create.len() + 34)
            .sum();
        if (sets || hashes) && bulk_tree::schema_room(&self.conn)? >= needed {
            // Laid out at the next commit: there must be a transaction to commit.
            self.begin()?;
            if sets {
                let mut entries =
                    Vec::with_capacity(self.sets[0].map.len() + self.sets[1].map.len());
                for (side, cache) in self.sets.iter_mut().enumerate() {
                    // The cache is done with: its memory goes back before the sort.
                    let map = std::mem::take(&mut cache.map);
                    cache.complete = false;
                    entries.extend(
                        map.into_iter()
                            .map(|(pawns, id)| [pawns as i64, side as i64, i64::from(id)]),
                    );
                }
                entries.sort_unstable();
                self.laid_sets = Some(entries);
                self.deferred[0] = false;
            }
            if hashes {
                let map = std::mem::take(&mut self.hashes.map);
                self.hashes.complete = false;
                let mut entries: Vec<[i64; 2]> = map.into_iter().map(|(h, id)| [h, id]).collect();
                for (&h, ids) in &self.collided {
                    entries.extend(ids.iter().map(|&id| [h, id]));
                }
                entries.sort_unstable();
                self.laid_hashes = Some(entries);
                self.deferred[1] = false;
            }
        }
        (0..KEY_INDEXES.len()).try_for_each(|i| self.restore_index(i))?;
        if self.names_deferred {
            self.begin()?;
            self.flush(true)?;
            for (_, create) in NAME_INDEXES {
                self.conn.execute_batch(create)?;
            }
            self.names_deferred = false;
        }
        Ok(())
    }

    /// Builds the key index `i` of [`KEY_INDEXES`] if this run dropped it (first writing the
    /// rows still waiting): at the end, or once its cache no longer holds every key (the
    /// lookups then need it; SQLite keeps it up to date for the rest of the run).
    pub(super) fn restore_index(&mut self, i: usize) -> Result<()> {
        if self.deferred[i] {
            self.flush(true)?;
            // Read through SQLite's bounded page cache, not the memory map: building the index
            // reads the whole table, and mapped pages count in the resident size (4 million
            // games: a peak of 2.7 GiB instead of under 1).
            let mapped: i64 = self.conn.query_row("PRAGMA mmap_size", [], |r| r.get(0))?;
            self.conn.pragma_update(None, "mmap_size", 0)?;
            let built = self.conn.execute_batch(KEY_INDEXES[i].2);
            self.conn.pragma_update(None, "mmap_size", mapped)?;
            built?;
            self.deferred[i] = false;
        }
        Ok(())
    }

    /// Is this game already stored (same roster, start position and moves)? Every game stored
    /// so far is in SQLite (`games` goes through SQL), so the stored one is read back as is.
    pub(super) fn is_duplicate(&mut self, g: &GameRecord) -> Result<bool> {
        if self.keep_duplicates {
            return Ok(false);
        }
        // Compare the real contents, so a hash collision never loses a game.
        if let Some(&id) = self.hashes.map.get(&g.hash) {
            let mut st = self.conn.prepare_cached(STORED_GAME_SQL)?;
            let others = self.collided.get(&g.hash).map_or(&[][..], Vec::as_slice);
            for id in std::iter::once(id).chain(others.iter().copied()) {
                let mut rows = st.query([id])?;
                if let Some(r) = rows.next()?
                    && same_game(r, g)?
                {
                    return Ok(true);
                }
            }
            if self.hashes.complete {
                return Ok(false);
            }
        } else if self.hashes.complete {
            return Ok(false);
        }
        // The cache forgot some hashes: ask the index.
        self.restore_index(1)?;
        let mut st = self.conn.prepare_cached(DUPLICATE_SQL)?;
        let mut rows = st.query([g.hash])?;
        while let Some(r) = rows.next()? {
            if same_game(r, g)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Remembers the hash of a game just stored (not a duplicate: a second game of a hash is a
    /// collision, and both ids are kept).
    pub(super) fn remember_hash(&mut self, hash: i64, game_id: i64) {
        if self.keep_duplicates {
            return;
        }
        if let Some(&other) = self.hashes.map.get(&hash) {
            self.collided.entry(hash).or_default().push(other);
        }
        self.hashes.insert(hash, game_id);
    }

    /// The id of a pawn set of one side (0 White, 1 Black), stored on first sight.
    pub(super) fn set_id(&mut self, pawns: u64, side: u8) -> Result<i64> {
        // Consecutive runs mostly keep one side's pawns (a run ends when either side's pawns,
        // the piece-set or the bishop pairs change).
        let last = &mut self.last_set[usize::from(side & 1)];
        if let Some((p, id)) = *last
            && p == pawns
        {
            return Ok(id);
        }
        let id = self.lookup_set(pawns, side)?;
        self.last_set[usize::from(side & 1)] = Some((pawns, id));
        Ok(id)
    }

    /// [`Self::set_id`] through the cache and the index.
    fn lookup_set(&mut self, pawns: u64, side: u8) -> Result<i64> {
        let cache = &self.sets[usize::from(side & 1)];
        if let Some(&id) = cache.map.get(&pawns) {
            return Ok(id.into());
        }
        if !cache.complete {
            self.restore_index(0)?;
            let found: Option<i64> = self
                .conn
                .prepare_cached("SELECT id FROM pawn_sets WHERE pawns = ?1 AND side = ?2")?
                .query_row(params![pawns as i64, side], |r| r.get(0))
                .optional()?;
            if let Some(id) = found {
                self.remember_set(pawns, side, id)?;
                return Ok(id);
            }
        }
        let id = self.next_set_id;
        self.next_set_id += 1;
        let f = if side == 0 {
            SideFeatures::white(pawns)
        } else {
            SideFeatures::black(pawns)
        };
        let values = f.values();
        let row = std::array::from_fn(|i| match i {
            0 => id,
            1 => side.into(),
            2 => pawns as i64,
            // A bitboard is stored as the i64 of the same bits.
            _ => values[i - 3] as i64,
        });
        self.pending_sets.add(&self.conn, row)?;
        self.remember_set(pawns, side, id)?;
        Ok(id)
    }

    fn remember_set(&mut self, pawns: u64, side: u8, id: i64) -> Result<()> {
        let s = usize::from(side & 1);
        if self.sets[s].map.len() >= self.sets[s].cap {
            // Sets still waiting to be inserted must be findable by the index once the cache
            // forgets them.
            self.flush(true)?;
        }
        match u32::try_from(id) {
            Ok(id) => self.sets[s].insert(pawns, id),
            // An id the cache cannot hold: then a miss no longer means "absent".
            Err(_) => self.sets[s].complete = false,
        }
        Ok(())
    }
}
