//! What the games do in a pawn structure (`pawndex plans`): the moves each side plays while the
//! structure stands, where its pieces stand, and how the games leave it (pawn breaks apart from
//! piece captures of a pawn), tallied from one game at a time.
//!
//! The rules (docs/plans.md is their contract):
//! - a position is *in* the structure when its ply lies in one of the game's stretches the
//!   search found (named form, exact pawns, or the pawn structures within a distance);
//! - a move *counts* for the structure when the position before it is in it;
//! - a move is written as its SAN without check mark and without disambiguation (`Nd2` for
//!   `Nbd2`, `Rxe4` for `R1xe4`; `exd5`, `e8=Q`, `O-O` as SAN writes them): [`PlainMove`];
//! - a move is a *reply* when the mover was in check, or when it captures on the square where
//!   the opponent's move just before captured (a recapture). Replies are what the position
//!   forces rather than a plan, so they are tallied apart ([`Tally::replies`]);
//! - a move *leaves* the structure when the position after it is not in it: a pawn move (or
//!   pawn capture) that leaves is a *pawn break*; any other move that leaves is a piece capture
//!   of a pawn (only pawn moves and captures of pawns change the pawns), an *other exit*;
//! - `games` counts distinct games, and `median_move` is the median over those games of the
//!   full-move number of the first such play (of an even count, the lower of the two middle
//!   numbers: always a move some game played there).

use crate::model::hash::IntMap;

use shakmaty::{Chess, Color, Move, Position, Role, Square};

use crate::model::outcome::Outcome;
use crate::model::stored::StoredGame;
use crate::model::structure::{Catalogue, Code};

/// The six piece kinds in the order every list of them follows (pawn first): shakmaty's.
pub const ROLES: [Role; 6] = Role::ALL;

/// The English name of a piece kind (`knight`).
#[must_use]
pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::Pawn => "pawn",
        Role::Knight => "knight",
        Role::Bishop => "bishop",
        Role::Rook => "rook",
        Role::Queen => "queen",
        Role::King => "king",
    }
}

/// A move as the plans list it, packed in 20 bits: the side, the piece, the target square,
/// whether it captures, the promotion, the file a pawn captures from, and castling.
///
/// ```
/// # use pawndex::model::plans::PlainMove;
/// # use shakmaty::{Chess, Position, san::San};
/// let pos = Chess::default();
/// let m = San::from_ascii(b"Nf3").unwrap().to_move(&pos).unwrap();
/// let plain = PlainMove::new(&m, pos.turn());
/// assert_eq!(plain.san(), "Nf3");
/// assert_eq!(plain.to(), "f3");
/// assert_eq!(plain.piece(), "knight");
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PlainMove(u32);

const CASTLE_SHORT: u32 = 1;
const CASTLE_LONG: u32 = 2;

impl PlainMove {
    /// The plain move of `m`, played by `side`.
    #[must_use]
    pub fn new(m: &Move, side: Color) -> PlainMove {
        let side_bit = u32::from(side == Color::Black);
        let (role, to, capture, promotion, from_file, castle) = match *m {
            Move::Normal {
                role,
                from,
                capture,
                to,
                promotion,
            } => (
                role,
                u32::from(to),
                capture.is_some(),
                promotion.map_or(0, |r| r as u32),
                if role == Role::Pawn && capture.is_some() {
                    u32::from(from.file())
                } else {
                    0
                },
                0,
            ),
            Move::EnPassant { from, to } => (
                Role::Pawn,
                u32::from(to),
                true,
                0,
                u32::from(from.file()),
                0,
            ),
            Move::Castle { king, rook } => {
                let long = rook.file() < king.file();
                let rank = if side == Color::White { 0 } else { 56 };
                let file = if long { 2 } else { 6 };
                (
                    Role::King,
                    rank + file,
                    false,
                    0,
                    0,
                    if long { CASTLE_LONG } else { CASTLE_SHORT },
                )
            }
            Move::Put { role, to } => (role, u32::from(to), false, 0, 0, 0),
        };
        PlainMove(
            side_bit
                | (role as u32) << 1
                | to << 4
                | u32::from(capture) << 10
                | promotion << 11
                | from_file << 14
                | castle << 17,
        )
    }

    /// The side that played it.
    #[must_use]
    pub fn side(self) -> Color {
        if self.0 & 1 == 1 {
            Color::Black
        } else {
            Color::White
        }
    }

    /// The piece kind that moved (the king for castling).
    #[must_use]
    pub fn role(self) -> Role {
        Role::try_from((self.0 >> 1) & 7).unwrap_or(Role::Pawn)
    }

    fn square(self) -> Square {
        Square::new((self.0 >> 4) & 63)
    }

    fn castle(self) -> u32 {
        (self.0 >> 17) & 3
    }

    fn captures(self) -> bool {
        (self.0 >> 10) & 1 == 1
    }

    /// Whether a pawn moved (a pawn break when it leaves the structure).
    #[must_use]
    pub fn is_pawn(self) -> bool {
        self.role() == Role::Pawn
    }

    /// The piece's name (`knight`; `king` for castling).
    #[must_use]
    pub fn piece(self) -> &'static str {
        role_name(self.role())
    }

    /// The target square's name (the king's for castling: `g1`, `c8`).
    #[must_use]
    pub fn to(self) -> String {
        self.square().to_string()
    }

    /// The move's SAN without check mark and disambiguation (`Nd2`, `exd5`, `e8=Q`, `O-O`).
    #[must_use]
    pub fn san(self) -> String {
        match self.castle() {
            CASTLE_SHORT => return "O-O".to_string(),
            CASTLE_LONG => return "O-O-O".to_string(),
            _ => {}
        }
        let mut s = String::with_capacity(7);
        let role = self.role();
        if role == Role::Pawn {
            if self.captures() {
                s.push((b'a' + ((self.0 >> 14) & 7) as u8) as char);
                s.push('x');
            }
        } else {
            s.push(role.upper_char());
            if self.captures() {
                s.push('x');
            }
        }
        s.push_str(&self.square().to_string());
        let promotion = (self.0 >> 11) & 7;
        if let Some(r) = (promotion != 0)
            .then(|| Role::try_from(promotion).ok())
            .flatten()
        {
            s.push('=');
            s.push(r.upper_char());
        }
        s
    }

    /// The move as a chess text writes it for its side: `…c5` for Black, `c4` for White.
    #[must_use]
    pub fn written(self) -> String {
        match self.side() {
            Color::White => self.san(),
            Color::Black => format!("…{}", self.san()),
        }
    }
}

/// The lower median of a list of move numbers (the list is sorted in place); 0 for none.
///
/// ```
/// # use pawndex::model::plans::lower_median;
/// assert_eq!(lower_median(&mut [12, 9, 30]), 12);
/// assert_eq!(lower_median(&mut [9, 12, 30, 31]), 12);
/// assert_eq!(lower_median(&mut []), 0);
/// ```
pub fn lower_median(numbers: &mut [u32]) -> u32 {
    if numbers.is_empty() {
        return 0;
    }
    numbers.sort_unstable();
    numbers[(numbers.len() - 1) / 2]
}

/// The games of one move (or break): how many, by result, and the move number of each game's
/// first play.
#[derive(Clone, Debug, Default)]
pub struct Games {
    /// Games by [`Outcome::index`].
    pub by_outcome: [u64; 4],
    pub move_numbers: Vec<u32>,
}

impl Games {
    fn add(&mut self, outcome: Outcome, number: u32) {
        self.by_outcome[outcome.index()] += 1;
        self.move_numbers.push(number);
    }

    fn merge(&mut self, other: Games) {
        for (a, b) in self.by_outcome.iter_mut().zip(other.by_outcome) {
            *a += b;
        }
        self.move_numbers.extend(other.move_numbers);
    }

    /// The number of games.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.by_outcome.iter().sum()
    }
}

/// A game that reached the structure, as the model-game list needs it.
#[derive(Clone, Debug)]
pub struct Visit {
    pub id: i64,
    pub outcome: Outcome,
    /// Plies (positions) in the structure.
    pub stay: u32,
    /// The first ply in the structure.
    pub entered: u32,
    /// The plan moves (not replies) each side played in the structure, each once.
    pub moves: Vec<PlainMove>,
    /// The decade of the game's date (1990 for 1990–1999), `None` for an unknown year.
    pub decade: Option<i64>,
    /// White's and Black's ratings.
    pub elo: (Option<i64>, Option<i64>),
}

/// The decade of a PGN date (`1994.03.12` → 1990), `None` when the year is unknown.
///
/// ```
/// # use pawndex::model::plans::decade;
/// assert_eq!(decade(Some("1994.03.12")), Some(1990));
/// assert_eq!(decade(Some("2000.??.??")), Some(2000));
/// assert_eq!(decade(Some("????.??.??")), None);
/// assert_eq!(decade(None), None);
/// ```
#[must_use]
pub fn decade(date: Option<&str>) -> Option<i64> {
    let year = date?.get(..4)?;
    if !year.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    year.parse::<i64>().ok().map(|y| y / 10 * 10)
}

/// Squares by outcome, side and piece kind: `[outcome][side][role][square]`.
pub type Squares = [[[[u64; 64]; 6]; 2]; 4];

/// Everything `plans` counts, for the games added so far; tallies of several threads merge.
#[derive(Clone, Debug)]
pub struct Tally {
    /// Games in the structure, by outcome.
    pub games: [u64; 4],
    /// Positions in the structure, by the game's outcome.
    pub positions: [u64; 4],
    /// Stays (stretches of plies) in the structure.
    pub stays: u64,
    pub squares: Box<Squares>,
    /// Plan moves (not replies).
    pub moves: IntMap<PlainMove, Games>,
    /// Recaptures and answers to check.
    pub replies: IntMap<PlainMove, Games>,
    /// Moves leaving the structure, by the move and the named form they lead to (0: none).
    pub exits: IntMap<(PlainMove, Code), Games>,
    pub visits: Vec<Visit>,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            games: [0; 4],
            positions: [0; 4],
            stays: 0,
            squares: Box::new([[[[0; 64]; 6]; 2]; 4]),
            moves: IntMap::default(),
            replies: IntMap::default(),
            exits: IntMap::default(),
            visits: Vec::new(),
        }
    }
}

/// Whether `m`, played from `pos`, is a *reply*: the mover is in check, or it captures on
/// `captured_on`, the square where the opponent's move just before captured (a recapture).
#[must_use]
pub fn is_reply(pos: &Chess, m: &Move, captured_on: Option<Square>) -> bool {
    pos.is_check() || (m.is_capture() && captured_on == Some(m.to()))
}

/// What one side played in one game in each of several structures, the game replayed once:
/// per entry of `rows` (each a game's sorted, disjoint stretches of plies in one structure),
/// the side's plan moves there (replies left out, [`is_reply`]) and its pawn breaks (pawn moves
/// leaving the structure, replies included, as [`Tally::add`] counts exits), each move once.
pub fn side_plays(
    game: &StoredGame,
    side: Color,
    rows: &[&[(u32, u32)]],
) -> anyhow::Result<Vec<(Vec<PlainMove>, Vec<PlainMove>)>> {
    let mut out: Vec<(Vec<PlainMove>, Vec<PlainMove>)> = vec![(Vec::new(), Vec::new()); rows.len()];
    let last = rows
        .iter()
        .filter_map(|r| r.iter().map(|&(_, b)| b).max())
        .max();
    let Some(last) = last else {
        return Ok(out);
    };
    let mut pos: Chess = game.start()?;
    let mut captured_on: Option<Square> = None;
    let end = last.min(game.plies());
    for ply in 0..=end {
        if ply >= game.plies() {
            break;
        }
        let m = game.move_at(&pos, ply + 1)?;
        if pos.turn() == side {
            let mut plain = None;
            let mut reply = None;
            for (i, inside) in rows.iter().enumerate() {
                if !within(inside, ply) {
                    continue;
                }
                let p = *plain.get_or_insert_with(|| PlainMove::new(&m, side));
                let r = *reply.get_or_insert_with(|| is_reply(&pos, &m, captured_on));
                let (moves, breaks) = &mut out[i];
                if !r && !moves.contains(&p) {
                    moves.push(p);
                }
                if p.is_pawn() && !within(inside, ply + 1) && !breaks.contains(&p) {
                    breaks.push(p);
                }
            }
        }
        captured_on = m.is_capture().then(|| m.to());
        pos.play_unchecked(m);
    }
    Ok(out)
}

/// Whether ply `p` lies in one of the sorted, disjoint stretches `inside` (first, last).
fn within(inside: &[(u32, u32)], p: u32) -> bool {
    inside.iter().any(|&(a, b)| a <= p && p <= b)
}

impl Tally {
    /// Replays `game` up to the move after its last position in the structure and counts its
    /// positions in the stretches `inside` (sorted, disjoint plies, both ends included), the
    /// moves played from them and the moves that leave. `catalogue` names the forms the exits
    /// lead to.
    pub fn add(
        &mut self,
        game: &StoredGame,
        inside: &[(u32, u32)],
        catalogue: &Catalogue,
    ) -> anyhow::Result<()> {
        let Some(&(entered, _)) = inside.first() else {
            return Ok(());
        };
        let last = inside.iter().map(|&(_, b)| b).max().unwrap_or(0);
        let outcome = Outcome::parse(game.header.result.as_deref());
        let o = outcome.index();
        let mut pos: Chess = game.start()?;
        // A game's first plays, each move once (a few dozen: a list beats a map).
        let mut firsts: Vec<((PlainMove, bool), u32)> = Vec::with_capacity(64);
        let mut exits: Vec<((PlainMove, Code), u32)> = Vec::new();
        let mut stay = 0u32;
        // The square the opponent's move just before captured on, for recaptures.
        let mut captured_on: Option<Square> = None;
        let end = last.min(game.plies());
        for ply in 0..=end {
            let here = within(inside, ply);
            if here {
                stay += 1;
                self.positions[o] += 1;
                let board = pos.board();
                for (side, color) in [Color::White, Color::Black].into_iter().enumerate() {
                    let ours = board.by_color(color);
                    for (r, role) in ROLES.into_iter().enumerate() {
                        let counts = &mut self.squares[o][side][r];
                        for sq in ours & board.by_role(role) {
                            counts[usize::from(sq)] += 1;
                        }
                    }
                }
            }
            if ply == game.plies() {
                break;
            }
            let m = game.move_at(&pos, ply + 1)?;
            if here {
                let side = pos.turn();
                let plain = PlainMove::new(&m, side);
                let number = pos.fullmoves().get();
                let reply = is_reply(&pos, &m, captured_on);
                let leaves = !within(inside, ply + 1);
                if !firsts.iter().any(|(k, _)| *k == (plain, reply)) {
                    firsts.push(((plain, reply), number));
                }
                if leaves {
                    let mut after = pos.clone();
                    after.play_unchecked(m);
                    let board = after.board();
                    let code = catalogue.classify(
                        (board.pawns() & board.white()).0,
                        (board.pawns() & board.black()).0,
                    );
                    if !exits.iter().any(|(k, _)| *k == (plain, code)) {
                        exits.push(((plain, code), number));
                    }
                }
            }
            captured_on = m.is_capture().then(|| m.to());
            pos.play_unchecked(m);
        }
        self.games[o] += 1;
        self.stays += inside.len() as u64;
        let mut plan = Vec::new();
        for ((plain, reply), number) in firsts {
            if reply {
                self.replies.entry(plain).or_default().add(outcome, number);
            } else {
                plan.push(plain);
                self.moves.entry(plain).or_default().add(outcome, number);
            }
        }
        for (key, number) in exits {
            self.exits.entry(key).or_default().add(outcome, number);
        }
        plan.sort_unstable();
        self.visits.push(Visit {
            id: game.id,
            outcome,
            stay,
            entered,
            moves: plan,
            decade: decade(game.header.date.as_deref()),
            elo: (game.header.white_elo, game.header.black_elo),
        });
        Ok(())
    }

    /// Adds another tally's counts to this one.
    pub fn merge(&mut self, other: Tally) {
        for i in 0..4 {
            self.games[i] += other.games[i];
            self.positions[i] += other.positions[i];
        }
        self.stays += other.stays;
        for (a, b) in self.squares.iter_mut().zip(other.squares.iter()) {
            for (a, b) in a.iter_mut().zip(b) {
                for (a, b) in a.iter_mut().zip(b) {
                    for (a, b) in a.iter_mut().zip(b) {
                        *a += b;
                    }
                }
            }
        }
        for (k, g) in other.moves {
            self.moves.entry(k).or_default().merge(g);
        }
        for (k, g) in other.replies {
            self.replies.entry(k).or_default().merge(g);
        }
        for (k, g) in other.exits {
            self.exits.entry(k).or_default().merge(g);
        }
        self.visits.extend(other.visits);
    }
}

/// The side's half points (a win 2, a draw 1) and its games with a result, from games by
/// outcome.
#[must_use]
pub fn side_points(by_outcome: &[u64; 4], side: Color) -> (u64, u64) {
    let [white, draws, black, _] = *by_outcome;
    let wins = if side == Color::White { white } else { black };
    (2 * wins + draws, white + draws + black)
}

/// The side's score in percent over the games with a result (`None` without one).
#[must_use]
pub fn side_score(by_outcome: &[u64; 4], side: Color) -> Option<f64> {
    let (points, scored) = side_points(by_outcome, side);
    crate::model::outcome::white_score(points, scored)
}

/// One line of a list of moves (or of exits): the move, its games by outcome and its median
/// move number; for an exit, the named form it leads to.
#[derive(Clone, Debug)]
pub struct MoveRow {
    pub mv: PlainMove,
    pub by_outcome: [u64; 4],
    pub median_move: u32,
    /// For an exit: the form it leads to (key, reversed, display name); `None`: no name.
    pub leads_to: Option<(String, bool, String)>,
}

impl MoveRow {
    #[must_use]
    pub fn games(&self) -> u64 {
        self.by_outcome.iter().sum()
    }

    /// The mover's score in these games.
    #[must_use]
    pub fn score(&self) -> Option<f64> {
        side_score(&self.by_outcome, self.mv.side())
    }

    /// The form it leads to as `--structure-name` takes it (`panov~`); `None`: no name.
    #[must_use]
    pub fn leads_to_key(&self) -> Option<String> {
        let (key, reversed, _) = self.leads_to.as_ref()?;
        Some(format!("{key}{}", if *reversed { "~" } else { "" }))
    }

    /// The form it leads to in words (`Panov (reversed)`); `None`: no name.
    #[must_use]
    pub fn leads_to_name(&self) -> Option<String> {
        let (_, reversed, name) = self.leads_to.as_ref()?;
        Some(format!(
            "{name}{}",
            if *reversed { " (reversed)" } else { "" }
        ))
    }
}

/// A game of the model-game list.
#[derive(Clone, Debug)]
pub struct ModelGame {
    pub visit: Visit,
    pub typicality: u32,
    pub header: crate::model::game::Header,
}

/// Games counted per decade (`None`: an unknown year), listed ascending with the unknown year
/// last; counts of several slices of games add up.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PerDecade(std::collections::BTreeMap<(bool, i64), u64>);

impl PerDecade {
    /// Counts `n` games of `decade`.
    pub fn add(&mut self, decade: Option<i64>, n: u64) {
        *self
            .0
            .entry((decade.is_none(), decade.unwrap_or(0)))
            .or_default() += n;
    }

    /// Adds another count's games.
    pub fn merge(&mut self, other: PerDecade) {
        for ((unknown, d), n) in other.0 {
            self.add((!unknown).then_some(d), n);
        }
    }

    /// (decade, games), ascending, the unknown year last.
    #[must_use]
    pub fn rows(&self) -> Vec<(Option<i64>, u64)> {
        self.0
            .iter()
            .map(|(&(unknown, d), &n)| ((!unknown).then_some(d), n))
            .collect()
    }
}

/// Games per decade: all those passing the game filters, and those reaching the structure.
#[derive(Clone, Debug)]
pub struct Decade {
    pub decade: Option<i64>,
    pub games: u64,
    pub in_structure: u64,
}

/// What `plans` answers.
#[derive(Clone, Debug)]
pub struct Report {
    /// What was asked, in words (`Carlsbad`, `exactly these pawns: …`).
    pub target: String,
    /// Games in the structure by outcome (White wins, draws, Black wins, unknown).
    pub games: [u64; 4],
    /// Positions in the structure by the game's outcome.
    pub positions: [u64; 4],
    /// Stays (stretches of plies) in the structure: the average stay is positions / stays.
    pub stays: u64,
    /// Per side (White, Black): plan moves and replies, most played first.
    pub moves: [Vec<MoveRow>; 2],
    pub replies: [Vec<MoveRow>; 2],
    /// Pawn moves that leave the structure, then piece captures of a pawn that leave it.
    pub breaks: Vec<MoveRow>,
    pub other_exits: Vec<MoveRow>,
    pub squares: Box<Squares>,
    pub decades: Vec<Decade>,
    pub model_games: Vec<ModelGame>,
    /// How many of each side's most played plan moves make the typicality of a game.
    pub typical_moves: usize,
    /// Every game of the structure, most typical first (the model games' order), with the
    /// first ply it is in the structure.
    pub ranked: Vec<(i64, i64)>,
}

impl Report {
    /// The number of games in the structure.
    #[must_use]
    pub fn game_count(&self) -> u64 {
        self.games.iter().sum()
    }

    /// The number of positions in the structure.
    #[must_use]
    pub fn plies(&self) -> u64 {
        self.positions.iter().sum()
    }
}

/// The index (0 White, 1 Black) of a side in the reports' pairs.
#[must_use]
pub fn side_index(side: Color) -> usize {
    usize::from(side == Color::Black)
}

/// How many of `top` (each side's most played plan moves) a game's plan moves hold, for the
/// side that won it; for a draw, the smaller of both sides' counts (a draw shows both plans
/// only when both sides played theirs); 0 for an unknown result.
#[must_use]
pub fn typicality(visit: &Visit, top: &[Vec<PlainMove>; 2]) -> u32 {
    let count = |side: usize| visit.moves.iter().filter(|m| top[side].contains(m)).count() as u32;
    match visit.outcome {
        Outcome::WhiteWins => count(0),
        Outcome::BlackWins => count(1),
        Outcome::Draw => count(0).min(count(1)),
        Outcome::Unknown => 0,
    }
}
