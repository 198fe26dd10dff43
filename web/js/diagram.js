// A small diagram of a pawn structure: an SVG board drawn as chess books draw one (White at the
// bottom, a1 a dark square, White's pawns white with a dark outline, Black's black), for lists of
// structures (the catalogue, similar structures, plans). Presentation attributes only: the page
// runs under a CSP that refuses inline styles.
import { FILES } from './pawns.js';

const NS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs = {}) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

// A pawn in a square of side 1: head, collar and a wide foot, as the usual diagram glyph.
const PAWN =
  'M0.5 0.17a0.13 0.13 0 0 1 0.08 0.235c0.07 0.04 0.11 0.1 0.11 0.17h-0.09' +
  'c0 0.09 0.04 0.15 0.14 0.22v0.085h-0.48v-0.085c0.1-0.07 0.14-0.13 0.14-0.22h-0.09' +
  'c0-0.07 0.04-0.13 0.11-0.17a0.13 0.13 0 0 1 0.08-0.235z';

/**
 * The diagram of `pawns` (a Map from square to 'w' or 'b', as pawns.js reads them), `size`
 * pixels wide. Its squares and pawns carry data attributes (`data-square`, `data-pawn`) so that
 * tests can read what is drawn; `title` is its tooltip and accessible name.
 */
export function pawnDiagram(pawns, { size = 80, title = '' } = {}) {
  const root = svg('svg', {
    class: 'diagram',
    viewBox: '0 0 8 8',
    width: size,
    height: size,
    role: 'img',
    'aria-label': title || `pawns: ${describe(pawns)}`,
  });
  if (title) root.append(Object.assign(svg('title'), { textContent: title }));
  for (let rank = 8; rank >= 1; rank--) {
    for (let f = 0; f < 8; f++) {
      const x = f;
      const y = 8 - rank;
      const dark = (f + rank) % 2 === 1; // a1: file 0 + rank 1, dark
      root.append(svg('rect', { x, y, width: 1, height: 1, class: dark ? 'sq-dark' : 'sq-light', fill: dark ? '#b58863' : '#f0d9b5', 'data-square': FILES[f] + rank }));
    }
  }
  for (const [sq, c] of pawns) {
    const x = FILES.indexOf(sq[0]);
    const y = 8 - Number(sq[1]);
    const white = c === 'w';
    root.append(
      svg('path', {
        d: PAWN,
        // Enlarged about the square's centre: legible at 8 pixels a square.
        transform: `translate(${x + 0.5} ${y + 0.5}) scale(1.35) translate(-0.5 -0.53)`,
        fill: white ? '#fff' : '#111',
        stroke: white ? '#111' : '#fff',
        'stroke-width': white ? 0.07 : 0.03,
        'stroke-linejoin': 'round',
        'data-pawn': `${white ? 'P' : 'p'}${sq}`,
      }),
    );
  }
  root.append(svg('rect', { x: 0, y: 0, width: 8, height: 8, fill: 'none', stroke: '#555', 'stroke-width': 0.08 }));
  return root;
}

/** The pawns in words for a screen reader: "White a2 b2 …; Black a7 …". */
function describe(pawns) {
  const of = (c) => [...pawns].filter(([, v]) => v === c).map(([sq]) => sq).sort();
  return `White ${of('w').join(' ') || 'none'}; Black ${of('b').join(' ') || 'none'}`;
}
