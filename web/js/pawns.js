// A pawn structure: a Map from square ('d4') to 'w' or 'b'. Reads FENs and pawns-only boards,
// writes the FEN board part, and mirrors or reverses it.

export const FILES = 'abcdefgh';

export class InputError extends Error {}

/** Read the board part of a FEN (or a whole FEN); keeps only the pawns. A mistake is worded as
 * the server words it (model/fen.rs), so the FEN box and an error answer say the same. */
export function parseBoard(text) {
  const given = String(text).trim();
  const board = given.split(/\s+/)[0];
  const bad = (why) => new InputError(`"${short(given)}" is not a valid FEN: ${why}`);
  if (board.length > 1 && board.endsWith('/')) throw bad(`the board part "${short(board)}" ends with a / (its 8 ranks are separated by 7)`);
  const ranks = board.split('/');
  if (ranks.length !== 8) throw bad(`the board part "${short(board)}" has ${ranks.length} ranks (separated by /), not 8`);
  const pawns = new Map();
  ranks.forEach((row, i) => {
    const rank = 8 - i;
    [...row].forEach((ch, at) => {
      if (!/[1-8pnbrqkPNBRQK~]/.test(ch)) throw bad(`rank ${rank} ("${short(row)}") has '${ch}' at character ${at + 1}, which is no piece (PNBRQK for White, pnbrqk for Black) and no digit 1-8`);
    });
    const width = [...row].reduce((n, ch) => n + (/[1-8]/.test(ch) ? Number(ch) : ch === '~' ? 0 : 1), 0);
    if (width !== 8) throw bad(`rank ${rank} ("${short(row)}") covers ${width} squares, not 8`);
    let file = 0;
    for (const ch of row) {
      if (/[1-8]/.test(ch)) file += Number(ch);
      else if (/[pnbrqkPNBRQK]/.test(ch)) {
        const sq = FILES[file] + rank;
        if (ch === 'P' || ch === 'p') {
          if (rank === 1 || rank === 8) throw new InputError(`"${short(given)}" has a pawn on ${sq} (pawns never stand on rank 1 or 8)`);
          pawns.set(sq, ch === 'P' ? 'w' : 'b');
        }
        file += 1;
      }
    }
  });
  for (const side of ['w', 'b']) {
    const n = [...pawns.values()].filter((c) => c === side).length;
    if (n > 8) throw new InputError(`"${short(given)}" has ${n} ${side === 'w' ? 'White' : 'Black'} pawns (a side has at most 8)`);
  }
  return pawns;
}

const short = (s) => (s.length > 40 ? s.slice(0, 40) + '…' : s);

/** The FEN board part of the pawns (pieces other than pawns are not kept). */
export function boardFen(pawns) {
  const rows = [];
  for (let rank = 8; rank >= 1; rank--) {
    let row = '';
    let empty = 0;
    for (const f of FILES) {
      const c = pawns.get(f + rank);
      if (!c) empty++;
      else {
        if (empty) row += empty;
        empty = 0;
        row += c === 'w' ? 'P' : 'p';
      }
    }
    if (empty) row += empty;
    rows.push(row);
  }
  return rows.join('/');
}

export function mirror(pawns) {
  const out = new Map();
  for (const [sq, c] of pawns) out.set(FILES[7 - FILES.indexOf(sq[0])] + sq[1], c);
  return out;
}

/** Colours swapped and the board turned (a White pawn on d4 becomes a Black pawn on d5). */
export function reverse(pawns) {
  const out = new Map();
  for (const [sq, c] of pawns) out.set(sq[0] + (9 - Number(sq[1])), c === 'w' ? 'b' : 'w');
  return out;
}

export function fromLists(white = [], black = []) {
  const m = new Map();
  for (const s of white) m.set(s, 'w');
  for (const s of black) m.set(s, 'b');
  return m;
}

/** Chessground pieces for a pawn map. */
export function toPieces(pawns) {
  const m = new Map();
  for (const [sq, c] of pawns) m.set(sq, { role: 'pawn', color: c === 'w' ? 'white' : 'black' });
  return m;
}

export function fromPieces(pieces) {
  const m = new Map();
  for (const [sq, p] of pieces) if (p.role === 'pawn') m.set(sq, p.color === 'white' ? 'w' : 'b');
  return m;
}

export const count = (pawns, side) => [...pawns.values()].filter((c) => c === side).length;

/**
 * The pawn move a SAN names, found on these pawns: {from, to, side} or null.
 * "b4": a pawn of either side that can step there; "cxd5": a pawn on the c-file next rank.
 * With `only` ('w' or 'b', the side that played it) the other side's pawns are not tried.
 */
export function findPawnMove(pawns, san, only = null) {
  const m = /^([a-h])(?:x([a-h]))?([2-7])/.exec(String(san).replace(/^P/, ''));
  const m2 = /^([a-h])x([a-h][1-8])/.exec(String(san));
  const tryMove = (side) => {
    const dir = side === 'w' ? 1 : -1;
    if (m2) {
      const to = m2[2];
      const from = m2[1] + (Number(to[1]) - dir);
      return pawns.get(from) === side ? { from, to, side } : null;
    }
    if (!m) return null;
    const to = m[1] + m[3];
    if (pawns.has(to)) return null;
    const one = m[1] + (Number(m[3]) - dir);
    if (pawns.get(one) === side) return { from: one, to, side };
    const two = m[1] + (Number(m[3]) - 2 * dir);
    const startRank = side === 'w' ? '4' : '5';
    if (m[3] === startRank && !pawns.has(one) && pawns.get(two) === side) return { from: two, to, side };
    return null;
  };
  const w = only === 'b' ? null : tryMove('w');
  const b = only === 'w' ? null : tryMove('b');
  // Both sides could play it (rare): the side named by the answer wins, else White's.
  return w && b ? { ...w, ambiguous: true, other: b } : w || b;
}

export function applyMove(pawns, { from, to }) {
  const out = new Map(pawns);
  const c = out.get(from);
  out.delete(from);
  out.set(to, c);
  return out;
}

/**
 * The pawn move between two pawn sets: {from, to, side}, the one pawn that left a square and
 * the one that arrived (a capture also removes a pawn of the other side); null when no pawn
 * moved (a piece took a pawn) or the sets are not one pawn move apart.
 */
export function moveBetween(before, after) {
  const arrived = [...after].filter(([sq, c]) => before.get(sq) !== c);
  if (arrived.length !== 1) return null;
  const [to, side] = arrived[0];
  const left = [...before].filter(([sq, c]) => c === side && after.get(sq) !== c);
  if (left.length !== 1) return null;
  return { from: left[0][0], to, side };
}
