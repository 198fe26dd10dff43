//! The pairs of the games being derived, collected game by game and folded set by set:
//! what each pawn set's `set_games` list and `set_totals` row get.

use anyhow::{Result, bail};
use rusqlite::Connection;

use super::sort::{Pair, PairSorter};
use super::tables::{Totals, encode_games};
use crate::model::outcome::Outcome;

/// Collects the (set, game) pairs of games given one after the other, run by run in ply
/// order, and their positions by bishop-pair state. The writer feeds it the games it stores
/// (so that a fresh load builds the derived tables without reading its runs back); [`pairs`]
/// feeds it runs read from the database.
pub struct PairCollector {
    sorter: PairSorter,
    bishops: [i64; 4],
    /// Per side, the set being followed in the current game (a pawn set occupies one stretch
    /// of a game: a new set id on a side is a new pair).
    current: [Option<Pair>; 2],
    game: u32,
    outcome: u8,
    white_elo: u16,
    black_elo: u16,
    /// The first game fed, if any.
    first_game: Option<i64>,
}

impl PairCollector {
    #[must_use]
    pub fn new() -> PairCollector {
        PairCollector {
            sorter: PairSorter::new(),
            bishops: [0; 4],
            current: [None, None],
            game: 0,
            outcome: 3,
            white_elo: 0,
            black_elo: 0,
            first_game: None,
        }
    }

    fn flush_current(&mut self) -> Result<()> {
        for side in 0..2 {
            if let Some(p) = self.current[side].take() {
                self.sorter.push(p)?;
            }
        }
        Ok(())
    }

    /// Starts a game: its id, result text and ratings as stored in `games`.
    pub fn start_game(
        &mut self,
        id: i64,
        result: Option<&str>,
        white_elo: Option<i64>,
        black_elo: Option<i64>,
    ) -> Result<()> {
        self.flush_current()?;
        let Ok(game) = u32::try_from(id) else {
            bail!("game id {id} is out of range (the database is damaged; run `pawndex check`)");
        };
        let elo = |v: Option<i64>| v.map_or(0, |e| e.clamp(1, i64::from(u16::MAX)) as u16);
        self.game = game;
        self.outcome = Outcome::parse(result).index() as u8;
        self.white_elo = elo(white_elo);
        self.black_elo = elo(black_elo);
        self.first_game.get_or_insert(id);
        Ok(())
    }

    /// Adds a run of the current game.
    pub fn add_run(
        &mut self,
        white_set: i64,
        black_set: i64,
        plies: i64,
        bishop_pairs: i64,
    ) -> Result<()> {
        let plies = u32::try_from(plies.max(0)).unwrap_or(u32::MAX);
        self.bishops[(bishop_pairs & 3) as usize] += i64::from(plies);
        for (side, set) in [white_set, black_set].into_iter().enumerate() {
            let Ok(set) = u32::try_from(set) else {
                bail!(
                    "a run of game {} names pawn set {set}: ids out of range (the database is \
                     damaged; run `pawndex check`)",
                    self.game
                );
            };
            match &mut self.current[side] {
                Some(p) if p.set == set => p.plies = p.plies.saturating_add(plies),
                c => {
                    if let Some(p) = c.take() {
                        self.sorter.push(p)?;
                    }
                    *c = Some(Pair {
                        set,
                        game: self.game,
                        plies,
                        outcome: self.outcome,
                        white_elo: self.white_elo,
                        black_elo: self.black_elo,
                    });
                }
            }
        }
        Ok(())
    }

    /// The first game fed, if any.
    #[must_use]
    pub fn first_game(&self) -> Option<i64> {
        self.first_game
    }

    pub(super) fn finish(mut self) -> Result<(PairSorter, [i64; 4])> {
        self.flush_current()?;
        Ok((self.sorter, self.bishops))
    }
}

impl Default for PairCollector {
    fn default() -> Self {
        PairCollector::new()
    }
}

/// Feeds `collector` the runs of the games in `from..=to` from the database, in game order.
pub(super) fn pairs(
    conn: &Connection,
    collector: &mut PairCollector,
    from: i64,
    to: i64,
) -> Result<()> {
    if from > to {
        return Ok(());
    }
    let mut st = conn.prepare(
        "SELECT g.id, g.result, g.white_elo, g.black_elo, r.white_set, r.black_set,
                r.last_ply - r.first_ply + 1, r.bishop_pairs
         FROM games AS g JOIN runs AS r ON r.game_id = g.id
         WHERE g.id BETWEEN ?1 AND ?2
         ORDER BY g.id, r.first_ply",
    )?;
    let mut rows = st.query([from, to])?;
    let mut game = None;
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        if game != Some(id) {
            collector.start_game(
                id,
                r.get_ref(1)?.as_str_or_null()?,
                r.get::<_, Option<i64>>(2).ok().flatten(),
                r.get::<_, Option<i64>>(3).ok().flatten(),
            )?;
            game = Some(id);
        }
        collector.add_run(r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?)?;
    }
    Ok(())
}

/// What some games give one pawn set: its totals and its games, ascending.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetAggregate {
    pub set: u32,
    /// Positions, games, White wins, draws, Black wins (positions of games with that result),
    /// White Elo sum and positions with a White Elo, the same for Black: the columns of
    /// `set_totals` after `set_id`.
    pub totals: Totals,
    pub games: Vec<u32>,
}

/// Visits the pairs of a sorter set by set, each with what its games give it.
pub(super) fn fold_sets(
    sorter: PairSorter,
    mut visit: impl FnMut(&SetAggregate) -> Result<()>,
) -> Result<()> {
    let mut cur: Option<SetAggregate> = None;
    sorter.finish(|p| {
        if cur.as_ref().is_some_and(|c| c.set != p.set)
            && let Some(c) = cur.take()
        {
            visit(&c)?;
        }
        let c = cur.get_or_insert_with(|| SetAggregate {
            set: p.set,
            ..SetAggregate::default()
        });
        c.games.push(p.game);
        let plies = i64::from(p.plies);
        let t = &mut c.totals;
        t[0] += plies;
        t[1] += 1;
        if p.outcome < 3 {
            t[2 + usize::from(p.outcome)] += plies;
        }
        if p.white_elo > 0 {
            t[5] += i64::from(p.white_elo) * plies;
            t[6] += plies;
        }
        if p.black_elo > 0 {
            t[7] += i64::from(p.black_elo) * plies;
            t[8] += plies;
        }
        Ok(())
    })?;
    if let Some(c) = &cur {
        visit(c)?;
    }
    Ok(())
}

/// What the games above `through` (the unmerged tail, and any unfinished games) give each
/// pawn set, in set order: what readers add to `set_totals` and `set_games`. Its size follows
/// those games; callers read it only for a tail of at most [`TAIL_MAX_GAMES`] games.
pub fn tail_sets(conn: &Connection, through: i64) -> Result<Vec<SetAggregate>> {
    let mut collector = PairCollector::new();
    pairs(conn, &mut collector, through.saturating_add(1), i64::MAX)?;
    let (sorter, _) = collector.finish()?;
    let mut out = Vec::new();
    fold_sets(sorter, |a| {
        out.push(a.clone());
        Ok(())
    })?;
    Ok(out)
}

/// The pairs of the games a run stored, for [`finish_run`]: as collected, or already being
/// folded ([`fold_early`]).
pub enum Pairs {
    Collected(PairCollector),
    Folding(EarlyFold),
}

/// Sets folded ahead of the pages, at most (in batches of [`FRESH_BATCH`]): some tens of MB.
const EARLY_BATCHES: usize = 512;

/// The fold of a first derivation, started before the run's last commit: the merge of the
/// sorted pairs runs on its own thread while the writer sorts and lays out its key indexes
/// and commits (a third of a second of the masters' finish, with the second core idle), and
/// the sets wait in a channel for their pages.
pub struct EarlyFold {
    bishops: [i64; 4],
    folding: Folding,
}

/// The sorted pairs being folded on their own thread ([`fold_fresh`]), and the channel of the
/// sets it makes, in set order.
pub(super) struct Folding {
    pub(super) sets: crossbeam_channel::Receiver<Vec<FreshSet>>,
    pub(super) thread: std::thread::JoinHandle<Result<()>>,
}

impl EarlyFold {
    /// The positions by bishop-pair state, and the fold under way.
    pub(super) fn parts(self) -> ([i64; 4], Folding) {
        (self.bishops, self.folding)
    }
}

impl Folding {
    /// Starts the fold; at most `batches` batches wait in the channel.
    pub(super) fn start(sorter: PairSorter, batches: usize) -> Result<Folding> {
        let (tx, sets) = crossbeam_channel::bounded(batches);
        let thread = std::thread::Builder::new()
            .name("fold".into())
            .spawn(move || fold_fresh(sorter, &tx))?;
        Ok(Folding { sets, thread })
    }
}

/// Starts folding the pairs of `collector` when the run's derivation will lay out fresh pages
/// from them alone: nothing derived yet (`derived.through` is 0), the pairs of every stored
/// game collected (from game 1), and both derived tables empty and open to laid-out pages.
/// Else leaves `collector` as it is.
///
/// `fresh`: the root pages the run chose for a first derivation's pages, if it did.
pub fn fold_early(
    conn: &Connection,
    collector: &mut PairCollector,
    fresh: Option<(u32, u32)>,
) -> Result<Option<EarlyFold>> {
    let through: i64 = conn.query_row("SELECT through FROM derived", [], |r| r.get(0))?;
    if through != 0 || collector.first_game() != Some(1) || fresh.is_none() {
        return Ok(None);
    }
    let (sorter, bishops) = std::mem::take(collector).finish()?;
    Ok(Some(EarlyFold {
        bishops,
        folding: Folding::start(sorter, EARLY_BATCHES)?,
    }))
}

/// Folds the sorted pairs set by set into its games list and totals, sent in batches. A
/// closed channel means the pages failed (they say why).
fn fold_fresh(sorter: PairSorter, tx: &crossbeam_channel::Sender<Vec<FreshSet>>) -> Result<()> {
    let send = |batch| {
        tx.send(batch)
            .map_err(|_| anyhow::anyhow!("the pages stopped"))
    };
    let mut batch = Vec::with_capacity(FRESH_BATCH);
    fold_sets(sorter, |a| {
        let mut list = Vec::new();
        let last = encode_games(&a.games, 0, &mut list);
        batch.push(FreshSet {
            set: a.set,
            last,
            list,
            totals: a.totals,
        });
        if batch.len() == FRESH_BATCH {
            send(std::mem::replace(
                &mut batch,
                Vec::with_capacity(FRESH_BATCH),
            ))?;
        }
        Ok(())
    })?;
    if !batch.is_empty() {
        send(batch)?;
    }
    Ok(())
}

/// Sets handed from the fold to the pages at a time.
const FRESH_BATCH: usize = 1024;

/// One set's `set_games` list (LEB128 differences, and its last game) and `set_totals` row.
pub(super) struct FreshSet {
    pub(super) set: u32,
    pub(super) last: u64,
    pub(super) list: Vec<u8>,
    pub(super) totals: Totals,
}
