// The game replay: /game/ID?ply=N. A board, the move list, keys ←/→/Home/End, the strip of
// named structures per ply, the ply's features and "explore this structure".
import { get } from './api.js';
import { viewBoard } from './board.js';
import { clear, errorBox, featureValue, h, link, noteBox } from './dom.js';
import { playerLink } from './names.js';

export function gameView(main, url) {
  const id = url.pathname.split('/')[2];
  let game = null;
  let ply = 0;
  const wrap = h('div.cg-wrap.board#game-board');
  const el = {
    head: h('div.game-head'),
    moves: h('div.moves#moves'),
    strip: h('div.strip#structure-strip'),
    stretches: h('ul.stretches#stretches'),
    info: h('div.ply-info#ply-info'),
    msg: h('div.msg'),
  };
  clear(
    main,
    h(
      'div.game',
      h(
        'div.left',
        h('div.board-wrap', wrap),
        el.strip,
        el.stretches,
        h(
          'div.controls',
          h('div.group', plyButtons(step)),
          h('div.group', h('button', { type: 'button', on: { click: () => board.flip() } }, 'Flip')),
        ),
        h('p.muted.keys', 'Keys: ← → move a ply, Home and End go to the ends.'),
      ),
      h('div.right', el.head, el.msg, el.info, el.moves),
    ),
  );
  const board = viewBoard(wrap);

  function step(i) {
    if (!game) return;
    const last = game.plies.length - 1;
    show([0, ply - 1, ply + 1, last][i]);
  }

  const unKeys = plyKeys(step);

  function show(n, push = true) {
    if (!game) return;
    const before = ply;
    ply = Math.max(0, Math.min(game.plies.length - 1, n));
    const p = game.plies[ply];
    const prev = game.plies[ply - 1];
    board.show(p.fen, lastMove(prev?.fen, p.fen), Math.abs(ply - before) === 1);
    if (push) {
      history.replaceState(null, '', `/game/${id}?ply=${ply}`);
      el.msg.querySelector('.url-note')?.remove();
    }
    main.dataset.ply = String(ply);
    markPly(el.moves, el.strip, ply);
    const name = structureName(p.structure);
    const feats = (side) =>
      Object.entries(p[side] || {})
        .map(([k, v]) => `${k.replace(/_/g, ' ')} ${featureValue(v)}`)
        .join(' · ');
    clear(
      el.info,
      h('p.ply-line', h('span.label', `Ply ${ply}`), p.san ? ` after ${moveNo(ply)}${p.san}` : ' (start)', ' — ', h('strong#ply-structure', name)),
      h('p.feat', h('span.label', 'White: '), feats('white') || '–'),
      h('p.feat', h('span.label', 'Black: '), feats('black') || '–'),
      h('p', link(`/?fen=${encodeURIComponent(p.board || p.fen.split(' ')[0])}`, 'Explore this structure →')),
    );
  }

  function render() {
    const t = game.tags || {};
    const elo = (e) => (e ? ` (${e})` : '');
    clear(
      el.head,
      h('h2#game-players', playerLink(t.White, { id: 'game-white' }), elo(t.WhiteElo), ' – ', playerLink(t.Black, { id: 'game-black' }), elo(t.BlackElo)),
      h('p.muted', [t.Event, t.Site, t.Date, t.Round && `round ${t.Round}`, t.ECO, t.Result].filter(Boolean).join(' · ')),
    );
    renderMoves(el.moves, game.plies, t.Result, show);
    renderStrip(el.strip, el.stretches, game.plies, show, (p) => `/game/${id}?ply=${p}`);
  }

  async function load(u) {
    try {
      game = await get(`/api/game/${encodeURIComponent(id)}`);
    } catch (e) {
      clear(el.head, h('h2', `Game ${id}`));
      clear(el.msg, errorBox(e), h('p', link('/', '← back to the explorer')));
      return;
    }
    render();
    showFromUrl(u);
  }

  /** The ply of the URL (?ply=N), or the start or the last ply with a note saying why. */
  function showFromUrl(u) {
    const [n, note] = plyOfUrl(u.searchParams.get('ply'), game.plies.length - 1);
    clear(el.msg, note ? noteBox(note) : null);
    show(n, false);
  }

  return {
    route(u) {
      if (!game) load(u);
      else showFromUrl(u);
    },
    destroy() {
      unKeys();
      board.destroy();
    },
  };
}

/** The ply a URL asks for, as [ply, note]: a whole number from 0 to `last`; anything else gives
 *  the start (or the last ply, past the end) and a note in a player's words. */
export function plyOfUrl(raw, last) {
  if (raw == null || raw === '') return [0, null];
  const range = `a ply is a whole number from 0 (the start) to ${last} (after the last move)`;
  if (!/^[+-]?\d+$/.test(raw.trim())) return [0, `The link asks for ply "${raw}": ${range}. Showing the start.`];
  const n = Number(raw.trim());
  if (n < 0) return [0, `The link asks for ply ${n}, before the first move: ${range}. Showing the start.`];
  if (n > last) return [last, `The link asks for ply ${n}, but this game ends at ply ${last}. Showing the last position.`];
  return [n, null];
}

export const moveNo = (ply) => (ply % 2 === 1 ? `${(ply + 1) / 2}. ` : `${ply / 2}… `);

/** The squares a move changed, from two FENs (for chessground's last-move highlight). */
export function lastMove(a, b) {
  if (!a || !b) return undefined;
  const grid = (fen) => {
    const out = {};
    fen.split(' ')[0].split('/').forEach((row, i) => {
      let f = 0;
      for (const ch of row) {
        if (/\d/.test(ch)) f += Number(ch);
        else out['abcdefgh'[f++] + (8 - i)] = ch;
      }
    });
    return out;
  };
  const x = grid(a);
  const y = grid(b);
  const from = [];
  const to = [];
  for (const f of 'abcdefgh')
    for (let r = 1; r <= 8; r++) {
      const sq = f + r;
      if (x[sq] && !y[sq]) from.push(sq);
      else if (y[sq] && x[sq] !== y[sq]) to.push(sq);
    }
  if (from.length === 1 && to.length === 1) return [from[0], to[0]];
  // Castling: the king's squares.
  const k = from.find((s) => /[kK]/.test(x[s]));
  const kt = to.find((s) => /[kK]/.test(y[s]));
  if (k && kt) return [k, kt];
  return from.length && to.length ? [from[0], to[0]] : undefined;
}

/** The moves in rows (number, White's move, Black's move), each a button to its ply; the
 *  result last. `marked(ply)` adds a class to a move (the "Your game" page marks its notes). */
export function renderMoves(box, plies, result, show, marked = () => null) {
  const moves = [];
  for (const p of plies) {
    if (!p.san) continue;
    if (p.ply % 2 === 1) moves.push(h('span.no', `${(p.ply + 1) / 2}.`));
    else if (!moves.length) moves.push(h('span.no', `${p.ply / 2}.`), h('span.mv.empty', '…'));
    const mv = h('span.mv', { 'data-ply': String(p.ply), on: { click: () => show(p.ply) } }, p.san);
    const mark = marked(p.ply);
    if (mark) mv.classList.add(mark);
    moves.push(mv);
  }
  if (result) moves.push(h('span.res', result));
  clear(box, moves);
}

/** A named structure in words: its name, "(reversed)" for the colour-reversed form. */
export const structureName = (st) => (st ? st.name + (st.reversed ? ' (reversed)' : '') : 'no named structure');

/** The strip: one cell per ply, coloured by named structure, a mark where it changes; under
 *  it the list of the stretches (structure, plies from–to), each a link (`href(ply)`) to its
 *  first ply. */
export function renderStrip(strip, list, plies, show, href) {
  const colours = new Map();
  const cells = [];
  const stretches = [];
  for (const p of plies) {
    const key = p.structure ? p.structure.key + (p.structure.reversed ? '~' : '') : null;
    if (key && !colours.has(key)) colours.set(key, colours.size % 8);
    const cell = h('span.cell', { 'data-ply': String(p.ply), title: `ply ${p.ply}: ${structureName(p.structure)}`, on: { click: () => show(p.ply) } });
    cell.classList.add(key ? `c${colours.get(key)}` : 'none');
    const last = stretches[stretches.length - 1];
    if (!last || last.key !== key) {
      if (last) cell.classList.add('change');
      stretches.push({ key, name: structureName(p.structure), from: p.ply, to: p.ply });
    } else last.to = p.ply;
    cells.push(cell);
  }
  clear(strip, cells);
  clear(
    list,
    stretches
      .filter((x) => x.key)
      .map((x) =>
        h('li', h(`span.swatch.c${colours.get(x.key)}`), h('a', { href: href(x.from), on: { click: (e) => (e.preventDefault(), show(x.from)) } }, x.name), ` plies ${x.from}–${x.to}`),
      ),
  );
  if (!stretches.some((x) => x.key)) list.append(h('li.muted', 'No named structure in this game.'));
}

/** Marks the ply shown in the moves list and the strip. */
export function markPly(moves, strip, ply) {
  for (const m of moves.querySelectorAll('.mv')) m.classList.toggle('on', Number(m.dataset.ply) === ply);
  for (const c of strip.querySelectorAll('.cell')) c.classList.toggle('on', Number(c.dataset.ply) === ply);
  moves.querySelector('.mv.on')?.scrollIntoView({ block: 'nearest' });
}

/** The buttons to the first, previous, next and last ply: `step(i)`, i from 0 to 3. */
export const plyButtons = (step) =>
  ['«', '‹', '›', '»'].map((t, i) => h(`button#nav-${['first', 'prev', 'next', 'last'][i]}`, { type: 'button', title: ['Home', '←', '→', 'End'][i], on: { click: () => step(i) } }, t));

/** Home, ←, → and End call `step(0…3)` (not while typing in a field); returns the undoing. */
export function plyKeys(step) {
  const onKey = (e) => {
    if (e.target.closest && e.target.closest('input, textarea, select')) return;
    const i = { Home: 0, ArrowLeft: 1, ArrowRight: 2, End: 3 }[e.key];
    if (i == null) return;
    e.preventDefault();
    step(i);
  };
  document.addEventListener('keydown', onKey);
  return () => document.removeEventListener('keydown', onKey);
}
