// "Your game": /your-game. A PGN pasted (or a .pgn file opened from disk: read by the browser,
// sent nowhere else) is annotated by the server against its database (POST /api/annotate: the
// games replayed, never stored), then shown like the game page: board, moves, the strip of
// named structures, and at each ply the reference's figures for the structure on the board
// (the object of `pawndex annotate --format json`), with links to the structure's pages, the
// model games, and the annotated PGN to download. Every score says whose it is.
import { ApiError } from './api.js';
import { viewBoard } from './board.js';
import { clear, errorBox, fmtInt, fmtScore, h, link } from './dom.js';
import { lastMove, markPly, moveNo, plyButtons, plyKeys, renderMoves, renderStrip, structureName } from './game.js';

/** The largest text the server annotates (1 MiB, docs/serve.md): said before sending. */
const MAX_BYTES = 1 << 20;

/** The last answer, kept while the page is open elsewhere in the app (back to it: still there). */
let kept = null;

export function yourGameView(main) {
  const input = h('textarea#pgn-input', {
    rows: 8,
    spellcheck: false,
    placeholder: '[Event "Club game"]\n[White "You"]\n[Black "Opponent"]\n\n1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. cxd5 exd5 …',
    'aria-label': 'PGN of your game',
  });
  const file = h('input#pgn-file', { type: 'file', accept: '.pgn,.txt,application/x-chess-pgn,text/plain', hidden: true });
  const status = h('div.yg-status#yg-status', { role: 'status' });
  const pick = h('select#game-pick', { 'aria-label': 'Game' });
  const download = h('button#download-pgn', { type: 'button', disabled: true }, 'Download annotated PGN');
  const wrap = h('div.cg-wrap.board#yg-board');
  const el = {
    head: h('div.game-head#yg-head'),
    turn: h('p.turn#yg-turn'),
    moves: h('div.moves#moves'),
    strip: h('div.strip#structure-strip'),
    stretches: h('ul.stretches#stretches'),
    panel: h('div.ply-info.yg-panel#ref-panel'),
    summary: h('div.yg-summary#yg-summary'),
    error: h('div#yg-error'),
  };
  const view = h(
    'div.game.yg-game',
    { hidden: true },
    h(
      'div.left',
      h('div.board-wrap', wrap),
      el.turn,
      el.strip,
      el.stretches,
      h('div.controls', h('div.group', plyButtons(step)), h('div.group', h('button', { type: 'button', on: { click: () => board.flip() } }, 'Flip'))),
      h('p.muted.keys', 'Keys: ← → move a ply, Home and End go to the ends.'),
    ),
    h('div.right', el.head, el.panel, el.moves, el.summary),
  );
  const annotateButton = h('button.primary#annotate', { type: 'button', on: { click: annotate } }, 'Annotate');
  clear(
    main,
    h(
      'div.page.yg',
      h('h1', 'Your game'),
      h(
        'p.lead',
        'Paste a game (or several) in PGN, or open a .pgn file: the server replays it against this database without storing it, and shows at every ply the named structure on the board and what the database’s games did in it. Scores are percent of the points: White’s, or the mover’s (the side that plays the move) where it says so.',
      ),
      input,
      h(
        'div.controls.yg-controls',
        h('div.group', annotateButton, h('button#open-pgn', { type: 'button', on: { click: () => file.click() } }, 'Open a .pgn file…'), file),
        h('div.group', h('label.yg-pick', { hidden: true }, 'Game ', pick), download),
      ),
      status,
      el.error,
      view,
    ),
  );
  const board = viewBoard(wrap);
  let result = null; // the server's answer
  let game = null; // the game shown: { annotation, pgn, replay }
  let ply = 0;

  file.addEventListener('change', () => {
    const f = file.files && file.files[0];
    if (!f) return;
    if (f.size > MAX_BYTES) {
      say(`${f.name} is ${fmtInt(f.size)} bytes: the server annotates at most ${fmtInt(MAX_BYTES)} bytes (1 MiB) at once. Open a smaller file, or use pawndex annotate on the command line.`, true);
      file.value = '';
      return;
    }
    const reader = new FileReader();
    reader.onload = () => {
      input.value = String(reader.result || '');
      say(`Read ${f.name} (${fmtInt(f.size)} bytes). Press Annotate.`);
      file.value = '';
    };
    reader.onerror = () => say(`Could not read ${f.name}: ${reader.error?.message || 'unknown error'}`, true);
    reader.readAsText(f);
  });

  download.addEventListener('click', () => {
    if (!result) return;
    const blob = new Blob([result.pgn], { type: 'application/x-chess-pgn' });
    const a = h('a', { href: URL.createObjectURL(blob), download: 'annotated.pgn' });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  });

  pick.addEventListener('change', () => choose(Number(pick.value)));

  function say(words, bad = false) {
    clear(status, words ? (bad ? errorBox(words) : h('p.muted', words)) : null);
  }

  async function annotate() {
    const text = input.value;
    const bytes = new TextEncoder().encode(text).length;
    if (!text.trim()) return say('Paste a game in PGN first (or open a .pgn file).', true);
    if (bytes > MAX_BYTES) return say(`The text is ${fmtInt(bytes)} bytes: the server annotates at most ${fmtInt(MAX_BYTES)} bytes (1 MiB) at once.`, true);
    annotateButton.disabled = true;
    say('Annotating…');
    main.dataset.ready = '';
    const started = performance.now();
    try {
      show(await post(text));
      main.dataset.ms = String(Math.round(performance.now() - started));
    } catch (e) {
      say(e.message || String(e), true);
    } finally {
      annotateButton.disabled = false;
    }
  }

  function show(r, at = { game: 0, ply: null }) {
    result = r;
    kept = { text: input.value, result: r };
    const games = r.games || [];
    download.disabled = !games.length;
    clear(
      pick,
      games.map((g, i) => {
        const t = g.annotation.tags || {};
        const who = `${t.White || '?'} – ${t.Black || '?'}`;
        return h('option', { value: String(i) }, `${i + 1}. ${who}${t.Result ? ` ${t.Result}` : ''}${g.annotation.error ? ' (not replayed)' : ''}`);
      }),
    );
    pick.closest('label').hidden = games.length < 2;
    const failed = games.filter((g) => g.annotation.error).length;
    const cut = r.error ? ` But ${r.error}.` : '';
    if (!games.length) say(`No game in this text: a game is its tags and moves, as PGN writes them.${cut}`, true);
    else
      say(
        `${games.length === 1 ? 'One game' : `${games.length} games`} annotated against this database${failed ? `; ${failed} could not be replayed (below)` : ''}.${cut}`,
        Boolean(r.error),
      );
    if (games.length) choose(Math.min(at.game, games.length - 1), at.ply);
  }

  function choose(i, at = null) {
    game = result.games[i];
    pick.value = String(i);
    const a = game.annotation;
    const t = a.tags || {};
    const elo = (e) => (e ? ` (${e})` : '');
    clear(
      el.head,
      h('h2#game-players', t.White || '?', elo(t.WhiteElo), ' – ', t.Black || '?', elo(t.BlackElo)),
      h('p.muted', [t.Event, t.Site, t.Date, t.Round && `round ${t.Round}`, t.ECO, t.Result].filter(Boolean).join(' · ')),
    );
    const who = `${t.White || '?'} – ${t.Black || '?'}`;
    clear(el.error, a.error ? errorBox(`Game ${a.game} (${who}) could not be replayed: ${a.error.ply != null ? `at ply ${a.error.ply}, ` : ''}${a.error.reason}. It is written back unchanged in the annotated PGN.`) : null);
    view.hidden = !game.replay;
    if (!game.replay) {
      main.dataset.ready = '1';
      return;
    }
    const plies = game.replay.plies;
    const changed = new Set(a.changes.map((c) => c.ply));
    renderMoves(el.moves, plies, t.Result, showPly, (p) => (changed.has(p) ? 'note' : null));
    renderStrip(el.strip, el.stretches, plies, showPly, () => '#');
    renderSummary(a);
    ply = -1;
    showPly(at ?? firstChange(a), false);
    main.dataset.ready = '1';
  }

  /** The first ply where a named structure begins, else the start. */
  const firstChange = (a) => (a.changes.find((c) => c.structure) || { ply: 0 }).ply;

  function step(i) {
    if (!game || !game.replay) return;
    const last = game.replay.plies.length - 1;
    showPly([0, ply - 1, ply + 1, last][i]);
  }
  const unKeys = plyKeys(step);

  function showPly(n, animate = true) {
    const plies = game.replay.plies;
    const before = ply;
    ply = Math.max(0, Math.min(plies.length - 1, n));
    const p = plies[ply];
    board.show(p.fen, lastMove(plies[ply - 1]?.fen, p.fen), animate && Math.abs(ply - before) === 1);
    main.dataset.ply = String(ply);
    markPly(el.moves, el.strip, ply);
    const white = toMove(p) === 'white';
    clear(el.turn, h(`span.turn-dot.${white ? 'w' : 'b'}`), `${white ? 'White' : 'Black'} to move`, ply === plies.length - 1 && game.annotation.tags?.Result ? ` · game over: ${game.annotation.tags.Result}` : '');
    kept.at = { game: Number(pick.value), ply };
    renderPanel(p);
  }

  function renderPanel(p) {
    const a = game.annotation;
    const changes = a.changes;
    const here = last(changes, (c) => c.ply <= p.ply);
    const next = changes.find((c) => c.ply > p.ply);
    const mover = toMove(p);
    const out = [
      h(
        'p.ply-line',
        h('span.label', `Ply ${p.ply}`),
        p.san ? ` after ${moveNo(p.ply)}${p.san}` : ' (start)',
        ' — ',
        h('strong#ply-structure', structureName(p.structure)),
        here && here.structure && here.ply < p.ply ? h('span.muted', ` since ply ${here.ply}`) : null,
      ),
    ];
    if (here && here.ply === p.ply && here.left_by) out.push(leftBlock(here.left_by, here.ply, true));
    if (p.structure && here && here.reference) {
      out.push(referenceBlock(here, mover));
      if (next && next.left_by) out.push(leftBlock(next.left_by, next.ply, false));
      else if (!next) out.push(h('p.muted', 'The game ends in this structure.'));
    } else if (p.structure) {
      out.push(h('p.muted', 'The reference has no figures for this structure.'));
    } else {
      out.push(exactBlock(p));
    }
    clear(el.panel, out);
  }

  /** The reference's figures for the named structure of the change `c`, for a ply where `mover`
   *  is to move. */
  function referenceBlock(c, mover) {
    const r = c.reference;
    const key = c.structure.key + (c.structure.reversed ? '~' : '');
    const moverScore = mover === 'white' ? r.white_score : r.black_score;
    const few = r.white_score == null && r.games != null;
    return h(
      'div.ref#ref-figures',
      h(
        'p.ref-counts',
        h('span.label', 'In this database: '),
        h('strong#ref-games', fmtInt(r.games)),
        ` game${r.games === 1 ? '' : 's'}, ${fmtInt(r.positions)} positions`,
        r.avg_stay != null ? `; they stay ${Number(r.avg_stay).toFixed(1)} plies on average` : '',
        '.',
      ),
      few
        ? h('p.muted', `Too few games to quote a score (the least is ${MIN_GAMES_WORDS}).`)
        : h(
            'p.ref-scores',
            h('span.label', 'Score: '),
            `White’s ${fmtScore(r.white_score)} · Black’s ${fmtScore(r.black_score)} · `,
            h('strong#ref-mover-score', `${mover === 'white' ? 'White' : 'Black'} (to move here): ${fmtScore(moverScore)}`),
          ),
      h(
        'div.ref-sides',
        ['white', 'black'].map((side) =>
          h(
            'div.ref-side',
            h('h4', side === 'white' ? 'White plays' : 'Black plays'),
            moveList(r.moves?.[side], side, 'No plan move counted.'),
            h('h4', side === 'white' ? 'White’s breaks' : 'Black’s breaks'),
            moveList(r.breaks?.[side], side, 'No pawn break counted.'),
          ),
        ),
      ),
      h('p.muted.ref-note', 'Each move: the games that play it here, and the mover’s score in them.'),
      modelGames(r.model_games || []),
      h(
        'p.ref-links',
        link(`/?structure=${encodeURIComponent(key)}`, { id: 'explore-structure' }, 'Explore this structure →'),
        ' ',
        link(`/?structure=${encodeURIComponent(key)}&tab=plans`, { id: 'structure-plans' }, 'Its plans in full →'),
        ' ',
        link(`/?structure=${encodeURIComponent(key)}&tab=breaks`, 'Its breaks →'),
      ),
    );
  }

  function moveList(list, side, none) {
    if (!list || !list.length) return h('p.muted', none);
    return h(
      'ul.ref-moves',
      list.map((m) =>
        h(
          'li',
          h('strong', (side === 'black' ? '…' : '') + m.san),
          m.leads_to ? h('span.muted', ` → ${formName(m.leads_to)}`) : null,
          ` ${fmtInt(m.games)} game${m.games === 1 ? '' : 's'}`,
          m.score != null ? `, mover ${fmtScore(m.score)}` : '',
        ),
      ),
    );
  }

  function modelGames(list) {
    if (!list.length) return null;
    return h(
      'div.ref-models',
      h('h4', 'Model games'),
      h(
        'ul',
        list.map((g) =>
          h(
            'li',
            link(`/game/${g.id}?ply=${g.entered_ply ?? 0}`, `${g.white}${g.white_elo ? ` (${g.white_elo})` : ''} – ${g.black}${g.black_elo ? ` (${g.black_elo})` : ''}`),
            ` ${[g.result, g.date].filter(Boolean).join(', ')}`,
          ),
        ),
      ),
    );
  }

  /** How the game left a named structure (at ply `at`), and how often the reference left it
   *  the same way; `now` at that very ply. */
  function leftBlock(l, at, now) {
    const by = `${moveNo(at)}${l.san}`;
    const to = l.leads_to ? `the ${formName(l.leads_to)}` : 'no named structure';
    const score = l.score != null ? `, the mover scoring ${fmtScore(l.score)}` : '';
    const written = (x) => `${x.side === 'black' ? '…' : ''}${x.san}`;
    return h(
      `div.left-by${now ? '.now' : ''}`,
      h(
        'p',
        h('span.label', now ? 'Left here: ' : `At ply ${at}: `),
        `${now ? 'the game left' : 'the game leaves'} the ${formName(l.from)} by ${by}, to ${to}. `,
        `${fmtInt(l.games)} game${l.games === 1 ? '' : 's'} of this database left it the same way${score}.`,
      ),
      l.alternatives && l.alternatives.length
        ? h('p.muted', 'Its most played other exits: ', l.alternatives.map((x) => `${written(x)}${x.leads_to ? ` → ${formName(x.leads_to)}` : ''} (${fmtInt(x.games)} game${x.games === 1 ? '' : 's'}${x.score != null ? `, mover ${fmtScore(x.score)}` : ''})`).join(', '))
        : null,
    );
  }

  /** A ply without a named structure: the reference's games with exactly these pawns, when the
   *  game keeps them long enough to be quoted. */
  function exactBlock(p) {
    const e = (game.annotation.exact || []).find((x) => x.ply <= p.ply && p.ply <= x.last_ply);
    const explore = h('p.ref-links', link(`/?fen=${encodeURIComponent(p.board)}`, 'Explore these pawns →'));
    if (!e) return h('div.ref', h('p.muted', 'No named structure here, and the game does not keep these pawns for 8 plies: nothing quoted.'), explore);
    const r = e.reference || {};
    const near = e.nearest;
    return h(
      'div.ref#ref-exact',
      h('p', h('span.label', 'Exactly these pawns in this database: '), `${fmtInt(r.games)} game${r.games === 1 ? '' : 's'}, ${fmtInt(r.positions)} positions`, r.white_score != null ? `, White’s score ${fmtScore(r.white_score)}` : '', '.'),
      near
        ? h(
            'p#ref-nearest',
            h('span.label', 'Nearest structure with more games: '),
            link(`/?fen=${encodeURIComponent(near.structure)}`, near.name || near.structure),
            ` (distance ${near.distance}${near.differs ? `: ${near.differs}` : ''}): ${fmtInt(near.games)} game${near.games === 1 ? '' : 's'}${near.white_score != null ? `, White’s score ${fmtScore(near.white_score)}` : ''}.`,
          )
        : null,
      explore,
    );
  }

  function renderSummary(a) {
    const parts = (a.summary || []).filter((s) => s.structure).map((s) => `${formName(s.structure)} ${s.first_ply}–${s.last_ply}`);
    clear(el.summary, h('p.muted', h('span.label', 'Structures of this game: '), parts.length ? parts.join(', ') : 'none named'));
  }

  /** A form of the annotation in words: a key (KEY~ for the reversed form), or a structure
   *  object, whose name is written as shown ("Panov (reversed)"). */
  function formName(key) {
    if (key == null) return 'no named structure';
    if (typeof key === 'object') return key.name;
    return result.forms?.[key] || key;
  }

  if (kept) {
    input.value = kept.text;
    show(kept.result, kept.at);
  }

  return {
    destroy() {
      unKeys();
      board.destroy();
    },
  };
}

/** The words for `--min-games`' default (docs/annotate.md). */
const MIN_GAMES_WORDS = '10 games';

/** The side to move at a ply, from its FEN. */
const toMove = (p) => (p.fen.split(' ')[1] === 'b' ? 'black' : 'white');

const last = (list, test) => {
  for (let i = list.length - 1; i >= 0; i--) if (test(list[i])) return list[i];
  return undefined;
};

/** POST the PGN text; the answer's JSON, or its error in words. */
async function post(text) {
  let res;
  try {
    res = await fetch('/api/annotate', { method: 'POST', headers: { 'Content-Type': 'application/x-chess-pgn', Accept: 'application/json' }, body: text });
  } catch {
    throw new ApiError('The server did not answer: is pawndex serve still running?', 0);
  }
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(body && body.error ? body.error : `${res.status} ${res.statusText}`, res.status);
  if (!body) throw new ApiError('The server’s answer was not JSON', res.status);
  return body;
}
