// The explorer: a pawns-only board, the structure's name and counts, similar structures, breaks
// and games. The URL holds the structure (/?fen=BOARD).
import { get, isAbort, query } from './api.js';
import { editorBoard } from './board.js';
import { clear, errorBox, featureValue, fmtInt, go, h, link, resultBar, scoreCell, table } from './dom.js';
import * as P from './pawns.js';
import { pawnDiagram } from './diagram.js';
import { loadPlans } from './plans.js';
import { COLOUR_FILTER, NAME_FILTER, playerHref, playerLink } from './names.js';

const START = '8/pppppppp/8/8/8/8/PPPPPPPP/8';
const FILTERS = [
  ['player', 'Player', 'Carlsen'],
  ['white_player', 'White', ''],
  ['black_player', 'Black', ''],
  ['event', 'Event', ''],
  ['site', 'Site', ''],
  ['eco', 'ECO', 'D35 or A00-E99'],
  ['date', 'Date', '2010.. or 1990..1995'],
  ['min_elo', 'Min Elo', '2600'],
  ['max_elo', 'Max Elo', '2800'],
  ['year', 'Years', '1990..1999'],
  ['time_class', 'Time class', 'classical,rapid'],
  ['exclude_time_class', 'Leave out', 'blitz,bullet,simul'],
  ['min_stay', 'Min stay (plies)', '20'],
  ['result', 'Result', '1-0,0-1'],
  ['ply', 'Plies', '20..40'],
  ['white', "White's features", 'islands:3.. or quart'],
  ['black', "Black's features", 'no-bishop-pair'],
];

/** The orders of the Games tab: `sort` of /api/games (`find --sort`). */
const SORTS = [
  ['id', 'database order'],
  ['elo', 'rating (average, highest first)'],
  ['white-elo', "White's rating"],
  ['black-elo', "Black's rating"],
  ['date', 'date (newest first)'],
  ['stay', 'stay in the structure (longest first)'],
  ['typicality', 'typicality (most typical of the structure first)'],
];

export function explorer(main, url) {
  const s = {
    colour: 'w',
    countsMode: 'exact',
    tab: 'similar',
    opts: { mirror: false, reversed: false, ignore_wings: false },
    structure: null,
    breaks: { rows: [], after: null, next: null, history: [], scope: 'exact' },
    plans: { scope: 'named' },
    // `names`: a player page's choice, kept apart from the form's filters: the player
    // (player_name) and, for one colour, its spellings (white_player or black_player).
    games: { after: null, next: null, stack: [], filters: {}, names: {}, scope: 'exact', limit: 50, sort: 'id', reverse: false },
    baseShapes: [],
  };

  const el = {
    msg: h('div.msg', { role: 'status' }),
    name: h('section.card.name-card#name-card', h('p.muted', 'Place pawns on the board.')),
    counts: h('section.card.counts-card#counts-card'),
    tabBody: h('div.tab-body'),
    fenBox: h('input.fen-input#fen-input', {
      type: 'text',
      spellcheck: false,
      placeholder: 'FEN, pawns-only board, or game id and ply ("12 30")',
      'aria-label': 'Position to explore',
    }),
  };
  const colourBtns = {
    w: h('button.toggle.place-w#place-white', { type: 'button', title: 'Clicks on empty squares place White pawns', on: { click: () => setColour('w') } }, '♙ White pawn'),
    b: h('button.toggle.place-b#place-black', { type: 'button', title: 'Clicks on empty squares place Black pawns', on: { click: () => setColour('b') } }, '♟ Black pawn'),
  };
  const wrap = h('div.cg-wrap.board#board');
  const TABS = ['similar', 'plans', 'breaks', 'games'];
  const tabs = TABS.map((t) =>
    h(`button.tab#tab-${t}`, { type: 'button', on: { click: () => setTab(t) } }, { similar: 'Similar structures', plans: 'Plans', breaks: 'Breaks', games: 'Games' }[t]),
  );

  clear(
    main,
    h(
      'div.explorer',
      h(
        'div.left',
        h('div.board-wrap', wrap),
        h(
          'div.controls',
          h('div.group', colourBtns.w, colourBtns.b),
          h(
            'div.group',
            button('Clear', 'clear', () => change(new Map())),
            button('Start', 'start', () => change(P.parseBoard(START))),
            button('Flip', 'flip', () => board.flip()),
            button('Mirror a↔h', 'mirror', () => change(P.mirror(board.get()))),
            button('Reverse colours', 'reverse', () => change(P.reverse(board.get()))),
          ),
        ),
        h('form.paste', { on: { submit: (e) => (e.preventDefault(), paste()) } }, el.fenBox, h('button', { type: 'submit' }, 'Go')),
        el.msg,
        h('p.board-fen#board-fen'),
      ),
      h('div.right', el.name, el.counts, h('div.tabs', { role: 'tablist' }, tabs), el.tabBody),
    ),
  );

  const board = editorBoard(wrap, {
    place: () => s.colour,
    onRefuse: (words) => say(words, true),
    onChange: (pawns) => {
      say('');
      navigate(pawns);
    },
  });

  function button(label, id, fn) {
    return h(`button#btn-${id}`, { type: 'button', on: { click: fn } }, label);
  }
  function setColour(c) {
    s.colour = c;
    colourBtns.w.classList.toggle('on', c === 'w');
    colourBtns.b.classList.toggle('on', c === 'b');
  }
  function say(words, bad = false) {
    el.msg.textContent = words;
    el.msg.classList.toggle('bad', bad);
  }
  function change(pawns) {
    board.set(pawns);
    say('');
    navigate(pawns);
  }
  function navigate(pawns) {
    go(`/?fen=${encodeURIComponent(P.boardFen(pawns))}${s.tab === 'similar' ? '' : '&tab=' + s.tab}`);
  }

  async function paste() {
    const text = el.fenBox.value.trim();
    if (!text) return;
    const g = /^(?:game\s*)?#?(\d+)(?:\s*[,:\s]\s*(?:ply\s*)?(\d+))?$/i.exec(text);
    try {
      if (g && !text.includes('/')) {
        const game = await get(`/api/game/${g[1]}`);
        const ply = g[2] == null ? game.plies.length - 1 : Number(g[2]);
        const p = game.plies.find((x) => x.ply === ply);
        if (!p) throw new Error(`Game ${g[1]} has plies 0 to ${game.plies.length - 1}, not ${ply}.`);
        change(P.parseBoard(p.board || p.fen));
      } else {
        change(P.parseBoard(text));
      }
    } catch (e) {
      say(e.message, true);
    }
  }

  function setTab(t) {
    s.tab = t;
    tabs.forEach((b) => b.classList.toggle('on', b.id === `tab-${t}`));
    board.shapes([]);
    s.baseShapes = [];
    loadTab();
  }

  // --- on every change --------------------------------------------------------------
  async function update(fen) {
    let pawns;
    try {
      pawns = P.parseBoard(fen);
    } catch (e) {
      board.set(new Map());
      say(`The URL's structure is refused: ${e.message}.`, true);
      clear(el.name, errorBox(e));
      clear(el.counts);
      clear(el.tabBody);
      return;
    }
    if (P.boardFen(pawns) !== P.boardFen(board.get())) board.set(pawns);
    const bf = P.boardFen(pawns);
    document.getElementById('board-fen').textContent = bf;
    el.fenBox.value = '';
    s.games.after = null;
    s.games.stack = [];
    s.breaks.after = null;
    s.breaks.history = [];
    clear(el.name, h('p.muted', 'Looking up the name…'));
    el.name.classList.add('busy');
    try {
      s.structure = await get('/api/structure', { fen: bf }, 'structure');
      renderName();
      renderCounts();
    } catch (e) {
      if (isAbort(e)) return;
      s.structure = null;
      clear(el.name, errorBox(e));
      clear(el.counts);
    } finally {
      el.name.classList.remove('busy');
    }
    loadTab();
  }

  function renderName() {
    const st = s.structure;
    const n = st.named;
    const parts = [];
    if (n) {
      parts.push(
        h('h2.structure-name#structure-name', n.name, n.reversed ? h('span.rev', ' (colour-reversed)') : null),
        h('p.family', `Family: ${n.family || '–'}`, ' · ', link(`/structures#${n.key}`, 'catalogue')),
      );
      if (n.description) parts.push(h('p.description', n.description));
      if (n.about) parts.push(h('div.about', n.about.trim().split(/\n\s*\n/).map((p) => h('p', p))));
      if (n.source) parts.push(h('p.source', n.source));
    } else {
      parts.push(h('h2.structure-name.none#structure-name', 'No named structure'));
      if (st.nearest?.length) {
        parts.push(
          h('p.muted', 'Nearest named structures and the conditions that fail:'),
          h(
            'ul.nearest',
            st.nearest.map((x) =>
              h('li', h('strong', x.name + (x.reversed ? ' (reversed)' : '')), ': ', (x.failing || []).join('; ')),
            ),
          ),
        );
      }
    }
    const r = st.reversed_form;
    if (r) parts.push(h('p.reversed-form', 'Seen from the other side (colours reversed): ', h('strong', r.name + (r.reversed ? ' (reversed)' : ''))));
    clear(el.name, parts);
  }

  function renderCounts() {
    const st = s.structure;
    const named = st.named_counts;
    const modes = h(
      'div.seg',
      h('button.toggle#counts-exact', { type: 'button', class: s.countsMode === 'exact' ? 'toggle on' : 'toggle', on: { click: () => ((s.countsMode = 'exact'), renderCounts()) } }, 'Exact pawns'),
      h('button.toggle#counts-named', { type: 'button', disabled: !named, class: s.countsMode === 'named' ? 'toggle on' : 'toggle', on: { click: () => ((s.countsMode = 'named'), renderCounts()) } }, named ? `All ${st.named.name}` : 'Named structure'),
    );
    const body = [];
    const bands = h('div.elo-bands#elo-bands');
    if (s.countsMode === 'named' && named) {
      body.push(
        h('dl.figures', fig('Positions', fmtInt(named.positions)), fig('Games', fmtInt(named.games)), fig("White's score per game", scoreCell(named.white_score, 'span')), fig('Average stay', stayText(named.avg_stay))),
        resultBar(named),
      );
      if (named.eco?.length) body.push(h('p.eco', h('span.label', 'Top openings: '), named.eco.slice(0, 6).map(ecoChip)));
      if (named.turns_into?.length) body.push(h('p.eco', h('span.label', 'Turns into: '), named.turns_into.slice(0, 5).map((t) => h('span.chip', `${t.key ? (t.name || t.key) + (t.reversed ? ' (reversed)' : '') : 'no named structure'} ${fmtInt(t.count)}`))));
    } else {
      const x = st.exact || {};
      const bar = h('div.bar-slot', resultBar(x));
      body.push(
        h('dl.figures', fig('Positions', fmtInt(x.positions), 'count-positions'), fig('Games', fmtInt(x.games), 'count-games'), fig("White's score per game", scoreCell(x.white_score, 'span')), fig('Average stay', stayText(x.avg_stay), 'count-stay')),
        bar,
      );
      if (!x.positions) body.push(h('p.muted', 'No position of the database has exactly these pawns. Similar structures below.'));
      else {
        if (x.eco?.length) body.push(h('p.eco#exact-eco', h('span.label', 'Top openings: '), x.eco.map(ecoChip)));
        eloBands({ fen: st.board || P.boardFen(board.get()) }, bands, bar);
      }
    }
    if (s.countsMode === 'named' && named) eloBands({ structure: st.named.key + (st.named.reversed ? '~' : '') }, bands, null);
    body.push(bands, featuresTable(st.features));
    const statsParams = s.countsMode === 'named' && named ? { structure: st.named.key + (st.named.reversed ? '~' : '') } : { fen: st.board || P.boardFen(board.get()) };
    body.push(h('p.more', link(`/stats${query({ by: 'white_islands,black_islands', ...statsParams })}`, 'Statistics of these positions →')));
    clear(el.counts, h('div.card-head', h('h3', 'How it does'), modes), body);
  }

  /** An average stay in plies, or a dash without one. */
  function stayText(v) {
    return v == null ? '–' : `${Number(v).toFixed(1)} plies`;
  }

  /** An opening with its share of the games (percent). */
  function ecoChip(e) {
    return h('span.chip', `${e.eco} ${Number(e.share).toFixed(0)}%`);
  }

  /** Elo bands (and, for the exact pawns, the win/draw/loss split) from /api/stats?by=elo_band. */
  async function eloBands(which, out, bar) {
    clear(out, h('p.muted', 'Elo bands…'));
    try {
      const r = await get('/api/stats', { ...which, by: 'elo_band', per: 'game' });
      const rows = r.rows || [];
      if (!rows.length) return clear(out);
      if (bar) {
        const sum = (k) => rows.reduce((a, x) => a + (x[k] || 0), 0);
        clear(bar, resultBar({ white_wins: sum('white_wins'), draws: sum('draws'), black_wins: sum('black_wins') }));
      }
      const band = (b) => (b == null ? 'unrated' : `${b}–${b + 99}`);
      clear(
        out,
        h('h4', 'By Elo band (both players, per game)'),
        table(
          [
            { label: 'Elo', cell: (x) => band(x.elo_band) },
            { label: 'Games', cls: 'num', cell: (x) => fmtInt(x.games) },
            { label: 'White %', cell: (x) => scoreCell(x.white_score, 'td', x.white_wins + x.draws + x.black_wins) },
            { label: 'W / D / L', cell: (x) => resultBar(x) },
          ],
          rows.sort((a, b) => (a.elo_band ?? -1) - (b.elo_band ?? -1)),
        ),
      );
      out.querySelector('table').classList.add('bands');
    } catch (e) {
      // The bands are extra: say in one line why they are missing.
      clear(out, h('p.muted', `Elo bands unavailable: ${e.message}`));
    }
  }

  function fig(label, value, id) {
    return h('div.fig', h('dt', label), h(`dd${id ? '#' + id : ''}`, value));
  }

  function featuresTable(f) {
    if (!f || !f.white) return null;
    const keys = Object.keys(f.white);
    const show = featureValue;
    return h(
      'table.data.features',
      h('thead', h('tr', h('th', 'Feature'), h('th.num', 'White'), h('th.num', 'Black'))),
      h('tbody', keys.map((k) => h('tr', h('td', k.replace(/_/g, ' ')), h('td.num', show(f.white[k])), h('td.num', show(f.black?.[k]))))),
    );
  }

  // --- tabs -----------------------------------------------------------------------
  function loadTab() {
    const bf = P.boardFen(board.get());
    if (s.tab === 'similar') loadSimilar(bf);
    else if (s.tab === 'plans') loadPlansTab(bf);
    else if (s.tab === 'breaks') loadBreaks(bf);
    else loadGames(bf);
  }

  async function loadSimilar(bf) {
    const opts = h(
      'div.opts',
      ['mirror', 'reversed', 'ignore_wings'].map((k) =>
        h('label', h(`input#opt-${k}`, { type: 'checkbox', checked: s.opts[k], on: { change: (e) => ((s.opts[k] = e.target.checked), loadSimilar(bf)) } }), { mirror: ' mirror (a↔h)', reversed: ' colours reversed', ignore_wings: ' ignore the wings' }[k]),
      ),
    );
    const out = h('div.similar', h('p.muted', 'Ranking similar structures…'));
    clear(el.tabBody, opts, out);
    try {
      const r = await get('/api/similar', { fen: bf, limit: 20, ...s.opts }, 'tab');
      const target = board.get();
      const rows = r.rows || [];
      const note = h('p.legend.note#similar-note');
      if (!rows.length) return clear(out, h('p.muted', 'No structure of the database is close to this one.'));
      clear(
        out,
        table(
          [
            { label: 'Dist.', cls: 'num', cell: (x) => String(x.distance) },
            { label: 'Structure', cell: (x) => h('div.named', pawnDiagram(P.fromLists(x.white_pawns, x.black_pawns), { size: 64, title: x.structure }), h('code.board-code', x.structure)) },
            { label: 'Games', cls: 'num', cell: (x) => fmtInt(x.games) },
            { label: 'White %', cell: (x) => scoreCell(x.white_score, 'td', x.games) },
            { label: 'What differs', cell: (x) => x.differs },
          ],
          rows,
          (x) => ({
            class: 'clickable',
            title: 'Click to explore this structure',
            on: {
              mouseenter: () => {
                const [pawns, how] = closestForm(target, P.fromLists(x.white_pawns, x.black_pawns));
                board.shapes(diffShapes(target, pawns));
                note.textContent = how ? `Row ${x.structure} is drawn as its ${how}, the form that is closest to the target.` : '';
              },
              mouseleave: () => {
                board.shapes(s.baseShapes);
                note.textContent = '';
              },
              click: () => change(P.fromLists(x.white_pawns, x.black_pawns)),
            },
          }),
        ),
        h('p.legend', 'Hover a row: red rings mark pawns it lacks, small pawns the ones it has instead. Click a row to make it the target.'),
        note,
      );
      out.querySelector('table').id = 'similar-table';
    } catch (e) {
      if (!isAbort(e)) clear(out, errorBox(e));
    }
  }

  /** The row's pawns in the form (as is, mirrored, colour-reversed, both; as the options allow)
   *  that differs least from the target, and the name of that form ('' as is). */
  function closestForm(target, row) {
    const forms = [[row, '']];
    if (s.opts.mirror) forms.push([P.mirror(row), 'mirror image']);
    if (s.opts.reversed) forms.push([P.reverse(row), 'colour-reversed form']);
    if (s.opts.mirror && s.opts.reversed) forms.push([P.mirror(P.reverse(row)), 'mirrored, colour-reversed form']);
    const cost = (p) => [...target].filter(([sq, c]) => p.get(sq) !== c).length + [...p].filter(([sq, c]) => target.get(sq) !== c).length;
    return forms.reduce((best, f) => (cost(f[0]) < cost(best[0]) ? f : best));
  }

  function diffShapes(a, b) {
    const shapes = [];
    for (const [sq, c] of a) if (b.get(sq) !== c) shapes.push({ orig: sq, brush: 'red' });
    for (const [sq, c] of b)
      if (a.get(sq) !== c) {
        shapes.push({ orig: sq, brush: c === 'w' ? 'green' : 'purple' });
        shapes.push({ orig: sq, piece: { role: 'pawn', color: c === 'w' ? 'white' : 'black', scale: 0.6 } });
      }
    return shapes;
  }

  async function loadBreaks(bf) {
    const out = h('div.breaks', h('p.muted', 'Reading the breaks…'));
    const named = s.structure?.named;
    if (!named) s.breaks.scope = 'exact';
    const exact = s.breaks.scope === 'exact';
    const which = exact ? { fen: bf } : { structure: named.key + (named.reversed ? '~' : '') };
    const scope = h(
      'div.seg.breaks-scope',
      h('button#breaks-exact', { type: 'button', class: exact ? 'toggle on' : 'toggle', on: { click: () => setBreaksScope('exact', bf) } }, 'Exact pawns'),
      h('button#breaks-named', { type: 'button', class: exact ? 'toggle' : 'toggle on', disabled: !named, on: { click: () => setBreaksScope('named', bf) } }, named ? `All ${named.name}${named.reversed ? ' (reversed)' : ''}` : 'Named structure'),
    );
    const what = exact ? 'these exact pawns' : `the ${named.name}${named.reversed ? ' (reversed)' : ''}`;
    clear(el.tabBody, h('div.card-head', h('p.legend', `The moves by which games leave ${what}, most played first; the pawn moves drawn as arrows (green: White, purple: Black). Click one to go where it leads.`), scope), out);
    try {
      const r = await get('/api/breaks', { ...which, limit: 20, after: s.breaks.after }, 'tab');
      const pawns = board.get();
      // The side that played each move comes with it (the server replayed the games); the
      // board only tells which pawn moved, for the arrows.
      const rows = (r.rows || []).map((x) => {
        const side = x.side === 'black' ? 'b' : 'w';
        const after = x.board_after ? P.parseBoard(x.board_after) : null;
        let mv = after ? P.moveBetween(pawns, after) : P.findPawnMove(pawns, x.move, side);
        if (mv && mv.side !== side) mv = null;
        return { ...x, side, mv, after: after || (mv ? P.applyMove(pawns, mv) : null) };
      });
      s.baseShapes = rows
        .filter((x) => x.mv)
        .slice(0, 12)
        .map((x) => ({ orig: x.mv.from, dest: x.mv.to, brush: x.mv.side === 'w' ? 'paleGreen' : 'purple' }));
      board.shapes(s.baseShapes);
      if (!rows.length) return clear(out, h('p.muted', `No game of the database leaves ${what}.`));
      const pager = h(
        'div.pager',
        h('button#breaks-prev', { type: 'button', disabled: !s.breaks.history.length, on: { click: () => ((s.breaks.after = s.breaks.history.pop()), loadBreaks(bf)) } }, '← Previous'),
        h('button#breaks-next', { type: 'button', disabled: r.next == null, on: { click: () => (s.breaks.history.push(s.breaks.after), (s.breaks.after = r.next), loadBreaks(bf)) } }, 'Next page →'),
        h('span.muted', `${fmtInt(r.total ?? rows.length)} moves in all`),
      );
      const leadsTo = (x) => {
        if (x.board_after !== undefined) {
          const st = x.structure_after;
          return [st ? h('strong', st.name + (st.reversed ? ' (reversed)' : '')) : h('span.muted', 'no name'), ' ', h('code.board-code', x.board_after)];
        }
        return x.after ? h('code.board-code', P.boardFen(x.after)) : '–';
      };
      // A pawn move (its SAN starts with a file) is a pawn break; any other leaving move is a
      // piece capturing a pawn: listed apart. The side is the data's, never the board's.
      const pawnMove = (x) => /^[a-h]/.test(x.move);
      const breakTable = (list, id) => {
        const t = table(
          [
            { label: 'Move', cell: (x) => h('strong', { title: x.side === 'b' ? 'Black plays it' : 'White plays it' }, (x.side === 'b' ? '…' : '') + x.move) },
            { label: 'Side', cell: (x) => (x.side === 'b' ? 'Black' : 'White') },
            { label: 'Games', cls: 'num', cell: (x) => fmtInt(x.count) },
            { label: 'White %', cell: (x) => scoreCell(x.white_score, 'td', x.games_with_result) },
            { label: 'Leads to', cell: leadsTo },
          ],
          list,
          (x) => ({
            class: x.after ? 'clickable' : '',
            on: {
              mouseenter: () => x.mv && board.shapes([{ orig: x.mv.from, dest: x.mv.to, brush: x.mv.side === 'w' ? 'green' : 'purple' }]),
              mouseleave: () => board.shapes(s.baseShapes),
              click: () => x.after && change(x.after),
            },
          }),
        );
        t.id = id;
        return t;
      };
      const pawnRows = rows.filter(pawnMove);
      const pieceRows = rows.filter((x) => !pawnMove(x));
      clear(
        out,
        h('h4', 'Pawn breaks'),
        pawnRows.length ? breakTable(pawnRows, 'breaks-table') : h('p.muted#breaks-none', 'No pawn move leaves it on this page.'),
        h('h4', 'Piece captures of a pawn'),
        pieceRows.length ? breakTable(pieceRows, 'exits-table') : h('p.muted#exits-none', 'No piece capture leaves it on this page.'),
        pager,
        h('p.legend', 'The Plans tab gives each break’s median move number and the mover’s score against the structure’s.'),
      );
    } catch (e) {
      if (!isAbort(e)) clear(out, errorBox(e));
    }
  }

  function loadPlansTab(bf) {
    const named = s.structure?.named;
    const scope = named ? s.plans.scope : 'exact';
    const exact = scope === 'exact';
    const which = exact ? { fen: bf } : { structure: named.key + (named.reversed ? '~' : '') };
    const what = exact ? 'these exact pawns' : `the ${named.name}${named.reversed ? ' (reversed)' : ''}`;
    const setScope = (v) => ((s.plans.scope = v), loadPlansTab(bf));
    const seg = h(
      'div.seg.plans-scope',
      h('button#plans-named', { type: 'button', class: exact ? 'toggle' : 'toggle on', disabled: !named, on: { click: () => setScope('named') } }, named ? `All ${named.name}${named.reversed ? ' (reversed)' : ''}` : 'Named structure'),
      h('button#plans-exact', { type: 'button', class: exact ? 'toggle on' : 'toggle', on: { click: () => setScope('exact') } }, 'Exact pawns'),
    );
    const out = h('div.plans#plans');
    // The lesson diagram: the exact pawns, or the named form's most common exact form (the
    // catalogue's board, computed once per server start; drawn when it comes).
    const diagram = h('div.plans-diagram#plans-diagram');
    const draw = (board, title) => clear(diagram, pawnDiagram(P.parseBoard(board), { size: 96, title }), h('span.muted', title));
    if (exact) draw(bf, 'these pawns');
    else
      get('/api/catalogue', { top: 1 })
        .then((r) => {
          const row = (r.rows || []).find((x) => x.key === named.key && x.reversed === !!named.reversed);
          if (row?.board) draw(row.board, `its most common form (${fmtInt(row.board_games)} games)`);
        })
        .catch(() => {});
    clear(el.tabBody, h('div.card-head', h('div.plans-head', diagram, h('p.legend', `What the games do in ${what}: each side's moves, the pawn breaks, where the pieces stand, the model games. Hover a move to mark its square.`)), seg), out);
    loadPlans(out, which, what, s.plans, (marks) => board.shapes(marks.length ? marks : s.baseShapes));
  }

  function setBreaksScope(scope, bf) {
    s.breaks.scope = scope;
    s.breaks.after = null;
    s.breaks.history = [];
    loadBreaks(bf);
  }

  function gameFilters(bf) {
    const f = { ...s.games.filters, ...s.games.names };
    if (s.games.scope === 'exact') f.fen = bf;
    else if (s.games.scope === 'named' && s.structure?.named) f.structure = s.structure.named.key + (s.structure.named.reversed ? '~' : '');
    // The order goes with the filters: the pages and the exports list the games alike.
    if (s.games.sort !== 'id') f.sort = s.games.sort;
    if (s.games.reverse) f.reverse = '1';
    return f;
  }

  async function loadGames(bf) {
    const form = h(
      'form.filters#game-filters',
      {
        on: {
          submit: (e) => {
            e.preventDefault();
            const fd = new FormData(e.target);
            s.games.filters = {};
            for (const [k] of FILTERS) if (fd.get(k)) s.games.filters[k] = String(fd.get(k)).trim();
            s.games.scope = fd.get('scope');
            s.games.limit = Number(fd.get('limit')) || 50;
            s.games.sort = String(fd.get('sort') || 'id');
            s.games.reverse = fd.get('reverse') === '1';
            s.games.after = null;
            s.games.stack = [];
            loadGames(bf);
          },
        },
      },
      h(
        'div.scope',
        [
          ['exact', 'these exact pawns'],
          ['named', s.structure?.named ? `any ${s.structure.named.name}` : 'the named structure'],
          ['all', 'any structure'],
        ].map(([v, label]) => h('label', h('input', { type: 'radio', name: 'scope', value: v, checked: s.games.scope === v, disabled: v === 'named' && !s.structure?.named }), ' ', label)),
      ),
      h('div.grid', FILTERS.map(([k, label, ph]) => h('label', h('span', label), h('input', { name: k, value: s.games.filters[k] || '', placeholder: ph })))),
      h(
        'div.form-end',
        h('label.inline', 'Sort by ', h('select#games-sort', { name: 'sort' }, SORTS.map(([v, label]) => h('option', { value: v, selected: v === s.games.sort }, label)))),
        h('label.inline', h('input#games-reverse', { type: 'checkbox', name: 'reverse', value: '1', checked: s.games.reverse }), ' reversed'),
        h('label.inline', 'Per page ', h('select#games-limit', { name: 'limit' }, [10, 20, 50, 100, 200].map((n) => h('option', { value: String(n), selected: n === s.games.limit }, String(n))))),
        h('button', { type: 'submit' }, 'Find games'),
      ),
    );
    const out = h('div.games', h('p.muted', 'Finding games…'));
    clear(el.tabBody, form, namesLine(bf), out);
    const filters = gameFilters(bf);
    try {
      const r = await get('/api/games', { ...filters, limit: s.games.limit, after: s.games.after }, 'tab');
      const rows = r.rows || [];
      const exports = h('p.exports', 'Export the whole list: ', ['pgn', 'fen', 'csv'].map((f) => h(`a.export#export-${f}`, { href: `/api/games/export${query({ format: f, ...filters })}`, download: `pawndex-games.${f === 'fen' ? 'txt' : f}` }, f.toUpperCase())));
      if (!rows.length) return clear(out, h('p.muted', 'No game matches.'), exports);
      const pager = h(
        'div.pager',
        h('button#games-prev', { type: 'button', disabled: !s.games.stack.length, on: { click: () => ((s.games.after = s.games.stack.pop()), loadGames(bf)) } }, '← Previous'),
        h('button#games-next', { type: 'button', disabled: r.next == null, on: { click: () => (s.games.stack.push(s.games.after), (s.games.after = r.next), loadGames(bf)) } }, 'Next page →'),
      );
      clear(
        out,
        table(
          [
            { label: '#', cls: 'num', cell: (x) => link(`/game/${x.game_id}?ply=${x.ply}`, String(x.game_id)) },
            { label: 'White', cell: (x) => playerLink(x.white) },
            { label: 'Black', cell: (x) => playerLink(x.black) },
            { label: 'Result', cell: (x) => x.result },
            { label: 'Date', cell: (x) => x.date },
            { label: 'Ply', cls: 'num', cell: (x) => String(x.ply) },
          ],
          rows,
          (x) => ({ class: 'clickable', on: { click: (e) => e.target.tagName !== 'A' && go(`/game/${x.game_id}?ply=${x.ply}`) } }),
        ),
        pager,
        exports,
      );
      out.querySelector('table').id = 'games-table';
    } catch (e) {
      if (!isAbort(e)) clear(out, errorBox(e), h('p.muted', 'Check the filters above (their syntax is that of pawndex find).'));
    }
  }

  /** The player a link chose (a player page's "games"): whose games, with which colour, and a
   *  way to drop it. */
  function namesLine(bf) {
    const who = s.games.names[NAME_FILTER];
    if (!who?.length) return null;
    const colour = Object.entries(COLOUR_FILTER).find(([, k]) => s.games.names[k]?.length);
    return h(
      'p.url-note.names-line#games-names',
      h(
        'span',
        'Only the games of ',
        who.map((n, i) => [i ? ' or ' : '', link(playerHref(n), n)]),
        colour ? ` with ${colour[0] === 'white' ? 'White' : 'Black'} (stored as ${s.games.names[colour[1]].map((n) => `“${n}”`).join(', ')})` : '',
        '.',
      ),
      h('button#games-names-off', { type: 'button', on: { click: () => ((s.games.names = {}), (s.games.after = null), (s.games.stack = []), loadGames(bf)) } }, 'All players'),
    );
  }

  /** The Games tab's settings a link gives: `games=exact|named|all` (which structure), the
   *  filters of the form, and a player (player_name, with the colour filter of its spellings). */
  function gamesFromUrl(u) {
    const p = u.searchParams;
    const scope = p.get('games');
    const names = {};
    if (p.getAll(NAME_FILTER).length) {
      names[NAME_FILTER] = p.getAll(NAME_FILTER);
      for (const k of Object.values(COLOUR_FILTER)) if (p.getAll(k).length) names[k] = p.getAll(k);
    }
    const filters = {};
    for (const [k] of FILTERS) if (p.get(k) && !(k in names)) filters[k] = p.get(k);
    if (!scope && !Object.keys(names).length && !Object.keys(filters).length) return;
    if (['exact', 'named', 'all'].includes(scope)) s.games.scope = scope;
    s.games.names = names;
    s.games.filters = filters;
    s.games.after = null;
    s.games.stack = [];
  }

  /** /?structure=KEY (KEY~ reversed): the explorer on the form's most common exact pawns (the
   *  pawns reached in the most games among its positions), showing the whole form's counts;
   *  the link's other parameters (the tab, the Games tab's settings) go along. */
  async function openNamed(key, u) {
    clear(el.name, h('p.muted', `Finding the most common form of the structure ${key}…`));
    try {
      const r = await get('/api/catalogue', { top: 1 });
      const [base, reversed] = key.endsWith('~') ? [key.slice(0, -1), true] : [key, false];
      const row = (r.rows || []).find((x) => x.key === base && x.reversed === reversed);
      if (!row) throw new Error(`There is no structure "${key}" in the catalogue (the Catalogue page lists them).`);
      if (!row.board) throw new Error(`No game of this database reaches the ${row.name}${reversed ? ' (reversed)' : ''}.`);
      const rest = new URLSearchParams(u.search);
      rest.delete('structure');
      rest.delete('fen');
      rest.delete('counts');
      const more = rest.toString();
      go(`/?fen=${encodeURIComponent(row.board)}&counts=named${more ? '&' + more : ''}`, true);
    } catch (e) {
      clear(el.name, errorBox(e));
    }
  }

  setColour('w');
  tabs[0].classList.add('on');

  return {
    route(u) {
      const key = u.searchParams.get('structure');
      if (key && !u.searchParams.get('fen')) return openNamed(key, u);
      gamesFromUrl(u);
      const fen = u.searchParams.get('fen') || START;
      const notes = [];
      const counts = u.searchParams.get('counts');
      if (counts === 'named' || counts === 'exact') s.countsMode = counts;
      else if (counts != null) notes.push(`The link asks for the counts "${counts}": they are "named" (the whole named structure) or "exact" (these pawns). Showing the ${s.countsMode === 'named' ? 'whole named structure' : 'exact pawns'}.`);
      const tab = u.searchParams.get('tab');
      if (tab && tab !== s.tab && TABS.includes(tab)) {
        s.tab = tab;
        tabs.forEach((b) => b.classList.toggle('on', b.id === `tab-${tab}`));
      } else if (tab && !TABS.includes(tab)) {
        notes.push(`The link asks for the tab "${tab}": the tabs are similar, plans, breaks and games. Showing ${s.tab === 'similar' ? 'similar structures' : s.tab}.`);
      }
      update(fen).then(() => notes.length && !el.msg.classList.contains('bad') && say(notes.join(' '), true));
    },
    destroy: () => board.destroy(),
  };
}
