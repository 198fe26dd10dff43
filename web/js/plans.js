// The explorer's Plans tab: what the games do in the structure shown (GET /api/plans, the
// document of `pawndex plans --format json`): each side's moves there with the mover's score,
// the pawn breaks and other exits, where the pieces stand (heat maps), the share per decade and
// the model games. Every side label comes from the data.
import { get, isAbort } from './api.js';
import { clear, errorBox, fmtInt, h, link, table } from './dom.js';
import { playerLink } from './names.js';

const PIECES = [
  ['knight', 'Knights'],
  ['bishop', 'Bishops'],
  ['rook', 'Rooks'],
  ['queen', 'Queens'],
  ['king', 'Kings'],
  ['pawn', 'Pawns'],
];
const MAPS = [
  ['all', 'all games'],
  ['won', 'games it won'],
  ['lost', 'games it lost'],
  ['diff', 'won − lost'],
];

const pct = (v) => (v == null ? '–' : `${Number(v).toFixed(1)}%`);
const signed = (v) => (v == null ? '–' : `${v > 0 ? '+' : ''}${Number(v).toFixed(1)}`);
/** A move as a chess text writes it: …c5 for Black. */
const written = (x) => (x.side === 'black' ? '…' : '') + x.san;

/**
 * Renders the Plans tab into `out` for `which` ({structure: KEY} or {fen: BOARD}), `what` being
 * the structure in words; `shapes(list)` draws marks on the explorer's board.
 */
export async function loadPlans(out, which, what, state, shapes) {
  clear(out, h('p.muted', `Replaying the games of ${what}…`));
  let r;
  try {
    r = await get('/api/plans', { ...which, top: 15, model_games: 10 }, 'tab');
  } catch (e) {
    if (!isAbort(e)) clear(out, errorBox(e));
    return;
  }
  if (!r.games) {
    clear(out, h('p.muted#plans-none', `No game of the database reaches ${what}.`));
    return;
  }
  const base = r.baseline || {};
  const summary = h(
    'p.plans-summary#plans-summary',
    h('strong', fmtInt(r.games)),
    ` games reach ${what} (${fmtInt(r.plies)} positions). In them White scores `,
    h('strong', pct(base.white?.score)),
    ', Black ',
    h('strong', pct(base.black?.score)),
    '. A move’s score is the mover’s score in the games where it was played there; Δ is that score minus the side’s score above (percentage points). Recaptures and answers to a check are left out.',
  );
  const moveTable = (side, rows) =>
    table(
      [
        { label: side === 'white' ? "White's move" : "Black's move", cell: (x) => h('strong', written(x)) },
        { label: 'Games', cls: 'num', cell: (x) => fmtInt(x.games) },
        { label: 'Move no.', cls: 'num', cell: (x) => String(x.median_move) },
        { label: 'Score', cls: 'num', cell: (x) => pct(x.score) },
        { label: 'Δ', cls: 'num', cell: (x) => deltaCell(x.delta, x.games) },
      ],
      rows,
      (x) => ({
        title: `${side === 'white' ? 'White' : 'Black'} played ${written(x)} in ${fmtInt(x.games)} games (median move ${x.median_move}); the ${side === 'white' ? 'White' : 'Black'} score in those games: ${pct(x.score)}`,
        on: {
          mouseenter: () => shapes([{ orig: x.to, brush: side === 'white' ? 'green' : 'purple' }]),
          mouseleave: () => shapes([]),
        },
      }),
    );
  const moves = h(
    'div.plans-moves',
    h('div', h('h4', "White's moves"), moveTable('white', r.moves?.white || [])),
    h('div', h('h4', "Black's moves"), moveTable('black', r.moves?.black || [])),
  );
  moves.querySelectorAll('table').forEach((t, i) => (t.id = i ? 'plans-black' : 'plans-white'));
  const exitTable = (rows, id, label) => {
    if (!rows.length) return h('p.muted', 'None.');
    const t = table(
      [
        { label, cell: (x) => h('strong', { title: x.side === 'black' ? 'Black plays it' : 'White plays it' }, x.written || written(x)) },
        { label: 'Side', cell: (x) => (x.side === 'black' ? 'Black' : 'White') },
        { label: 'Games', cls: 'num', cell: (x) => fmtInt(x.games) },
        { label: 'Move no.', cls: 'num', cell: (x) => String(x.median_move) },
        { label: 'Mover’s score', cls: 'num', cell: (x) => pct(x.score_after) },
        { label: 'Δ', cls: 'num', cell: (x) => deltaCell(x.delta, x.games) },
        { label: 'Leads to', cell: (x) => (x.leads_to ? h('span', x.leads_to_name) : h('span.muted', 'no name')) },
      ],
      rows,
    );
    t.id = id;
    return t;
  };
  const heat = h('div.plans-heat#plans-heat');
  // Decades with few games say little (the masters' 1740s hold one game): left out, and said.
  const MIN_DECADE = 100;
  const decades = (r.decades || []).filter((d) => d.decade && d.games >= MIN_DECADE);
  const fewDecades = (r.decades || []).filter((d) => !d.decade || d.games < MIN_DECADE).reduce((a, d) => a + d.games, 0);
  clear(
    out,
    summary,
    moves,
    h('h4', 'Pawn breaks'),
    h('p.legend', 'Pawn moves and pawn captures that leave the structure, with the structure they lead to.'),
    exitTable(r.breaks || [], 'plans-breaks', 'Break'),
    h('h4', 'Other ways out'),
    h('p.legend', 'Piece captures of a pawn that end the structure.'),
    exitTable(r.other_exits || [], 'plans-exits', 'Move'),
    h('h4', 'Where the pieces stand'),
    heat,
    decades.length ? h('h4', 'Games reaching it, per decade') : null,
    decades.length ? decadeBars(decades) : null,
    decades.length && fewDecades ? h('p.legend', `Left out: ${fmtInt(fewDecades)} games of decades with fewer than ${MIN_DECADE} games or of unknown years.`) : null,
    h('h4', 'Model games'),
    h('p.legend', `Most typical first: how many of its side’s ${r.typical_moves} most played moves the winner played here (a draw: the smaller of both sides), then rating and stay.`),
    modelGames(r.model_games || []),
  );
  renderHeat(heat, r.squares || {}, state);
}

function deltaCell(d, games) {
  const el = h('span.delta', signed(d));
  if (d != null && games >= 30 && Math.abs(d) >= 3) el.classList.add(d > 0 ? 'up' : 'down');
  return el;
}

function decadeBars(rows) {
  const max = Math.max(...rows.map((d) => d.share || 0), 0.1);
  return h(
    'div.decades#plans-decades',
    rows.map((d) => {
      const fill = h('span.decade-fill');
      fill.style.setProperty('--share', ((d.share || 0) / max).toFixed(3));
      return h(
        'div.decade',
        h('span.decade-label', d.decade || 'no year'),
        h('span.decade-bar', fill),
        h('span.decade-value', `${pct(d.share)} of ${fmtInt(d.games)} games`),
      );
    }),
  );
}

function modelGames(rows) {
  if (!rows.length) return h('p.muted', 'None.');
  const name = (n, e) => [playerLink(n), e ? ` (${e})` : ''];
  const t = table(
    [
      { label: '#', cls: 'num', cell: (x) => link(`/game/${x.id}?ply=${x.entered_ply}`, String(x.id)) },
      { label: 'White', cell: (x) => name(x.white, x.white_elo) },
      { label: 'Black', cell: (x) => name(x.black, x.black_elo) },
      { label: 'Result', cell: (x) => x.result || '*' },
      { label: 'Date', cell: (x) => x.date || '' },
      { label: 'Stay', cls: 'num', cell: (x) => `${x.stay} plies` },
      { label: 'Typical', cls: 'num', cell: (x) => String(x.typicality) },
    ],
    rows,
  );
  t.id = 'plans-games';
  return t;
}

/** The heat map controls and an 8×8 board of shares (White at the bottom). */
function renderHeat(out, squares, state) {
  state.heat = state.heat || { side: 'white', piece: 'knight', map: 'all' };
  const hs = state.heat;
  const seg = (items, key) =>
    h(
      'div.seg',
      items.map(([v, label]) =>
        h(`button#heat-${key}-${v}`, { type: 'button', class: hs[key] === v ? 'toggle on' : 'toggle', on: { click: () => ((hs[key] = v), renderHeat(out, squares, state)) } }, label),
      ),
    );
  const side = squares[hs.side];
  const p = side?.[hs.piece];
  const pos = side?.positions || {};
  let values = null;
  if (p) values = hs.map === 'diff' ? p.won.map((w, i) => (w == null || p.lost[i] == null ? null : w - p.lost[i])) : p[hs.map];
  const max = Math.max(0.1, ...(values || []).map((v) => Math.abs(v || 0)));
  const cells = [];
  for (let rank = 7; rank >= 0; rank--) {
    for (let file = 0; file < 8; file++) {
      const i = rank * 8 + file;
      const v = values ? values[i] : null;
      const name = 'abcdefgh'[file] + (rank + 1);
      const cell = h(`div.hsq.${(rank + file) % 2 === 0 ? 'dark' : 'light'}`, { title: `${name}: ${v == null ? '–' : (hs.map === 'diff' ? signed(v) + ' points' : pct(v))}` });
      if (v != null && v !== 0) {
        const t = Math.min(1, Math.abs(v) / max);
        cell.classList.add(hs.map === 'diff' ? (v > 0 ? 'more' : 'less') : 'share');
        cell.style.setProperty('--heat', t.toFixed(2));
        if (Math.abs(v) >= (hs.map === 'diff' ? 2 : 5)) cell.append(h('span.hval', hs.map === 'diff' ? signed(v).replace('.0', '') : String(Math.round(v))));
      }
      if (file === 0) cell.append(h('span.hrank', String(rank + 1)));
      if (rank === 0) cell.append(h('span.hfile', 'abcdefgh'[file]));
      cells.push(cell);
    }
  }
  const who = hs.side === 'white' ? 'White' : 'Black';
  const over = { all: pos.all, won: pos.won, lost: pos.lost, diff: null }[hs.map];
  const words =
    hs.map === 'diff'
      ? `${who}'s ${hs.piece}s: share of positions in the games ${who} won minus in those ${who} lost (green: more in the wins), in points.`
      : `${who}'s ${hs.piece}s: share of the ${fmtInt(over)} positions (${MAPS.find((m) => m[0] === hs.map)[1]}) with one on the square, in percent.`;
  clear(
    out,
    h('div.heat-controls', seg([['white', 'White'], ['black', 'Black']], 'side'), seg(PIECES, 'piece'), seg(MAPS, 'map')),
    h('div.heat-wrap', h('div.heat-board#heat-board', cells), h('p.legend#heat-legend', words)),
  );
}
