// The chessground board, as a pawns-only editor or a read-only game board.
import { Chessground } from '../vendor/chessground-9.2.1/dist/chessground.min.js';
import { h } from './dom.js';
import { fromPieces, toPieces } from './pawns.js';

const common = {
  coordinates: true,
  animation: { enabled: true, duration: 150 },
  highlight: { lastMove: true, check: false },
  drawable: { enabled: false, visible: true },
};

/**
 * A pawns-only editing board. Click an empty square: a pawn of the colour chosen in `place()`;
 * click a pawn: removed; drag: moved (dropped off the board: removed). `onChange(pawns, why)` gets
 * every change; a pawn dropped on rank 1 or 8 is refused through `onRefuse(words)`.
 */
export function editorBoard(el, { onChange, onRefuse, place }) {
  let pawns = new Map();
  let down = null;
  const cg = Chessground(el, {
    ...common,
    fen: '8/8/8/8/8/8/8/8',
    movable: { free: true, color: 'both', showDests: false },
    draggable: { enabled: true, deleteOnDropOff: true, showGhost: true },
    selectable: { enabled: false },
    premovable: { enabled: false },
    events: {
      change: () => {
        const next = fromPieces(cg.state.pieces);
        const bad = [...next.keys()].find((sq) => sq[1] === '1' || sq[1] === '8');
        if (bad) {
          cg.set({ fen: '8/8/8/8/8/8/8/8' });
          cg.setPieces(toPieces(pawns));
          onRefuse(`A pawn cannot stand on ${bad}: pawns live on ranks 2 to 7.`);
          return;
        }
        pawns = next;
        onChange(pawns, 'drag');
      },
    },
  });
  // Clicks: a press and a release on the same square without moving is a click (a drag moves).
  el.addEventListener('mousedown', (e) => {
    if (e.button !== 0) return;
    down = { x: e.clientX, y: e.clientY, key: cg.getKeyAtDomPos([e.clientX, e.clientY]) };
  }, true);
  el.addEventListener('mouseup', (e) => {
    const d = down;
    down = null;
    if (!d || !d.key || e.button !== 0) return;
    if (Math.hypot(e.clientX - d.x, e.clientY - d.y) > 4) return;
    if (cg.getKeyAtDomPos([e.clientX, e.clientY]) !== d.key) return;
    const key = d.key;
    // Let chessground finish its own mouseup first.
    setTimeout(() => {
      if (pawns.has(key)) {
        pawns = new Map(pawns);
        pawns.delete(key);
      } else {
        if (key[1] === '1' || key[1] === '8') {
          onRefuse(`A pawn cannot stand on ${key}: pawns live on ranks 2 to 7.`);
          return;
        }
        const colour = place();
        const n = [...pawns.values()].filter((c) => c === colour).length;
        if (n >= 8) {
          onRefuse(`${colour === 'w' ? 'White' : 'Black'} already has 8 pawns.`);
          return;
        }
        pawns = new Map(pawns);
        pawns.set(key, colour);
      }
      set(pawns);
      onChange(pawns, 'click');
    }, 0);
  });
  function set(next) {
    pawns = new Map(next);
    cg.set({ fen: '8/8/8/8/8/8/8/8', lastMove: undefined });
    cg.setPieces(toPieces(pawns));
  }
  return {
    cg,
    set,
    get: () => pawns,
    flip: () => cg.toggleOrientation(),
    shapes: (s) => cg.setAutoShapes(s),
    destroy: () => cg.destroy(),
  };
}

/** A read-only board for replaying a game. */
export function viewBoard(el) {
  const cg = Chessground(el, {
    ...common,
    viewOnly: true,
    fen: 'start',
  });
  return {
    cg,
    /** Shows a position; `animate` only for a step of one ply (a jump would fly every piece). */
    show(fen, lastMove, animate = false) {
      cg.set({ animation: { enabled: animate }, fen, lastMove });
    },
    flip: () => cg.toggleOrientation(),
    destroy: () => cg.destroy(),
  };
}

export const boardBox = () => h('div.board-wrap', h('div.cg-wrap.board'));
