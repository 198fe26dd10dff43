// The Players page (/players?search=TEXT: GET /api/players, the rows of `pawndex players
// --format json`) and a player's page (/player?name=NAME&as=&vs=&FILTERS: GET /api/player, the
// document of `pawndex player NAME --format json`, docs/players.md): games and score per colour,
// a chart of the player's score against the other players' per structure, the structures as a
// table (each linking to its games in the explorer and to their PGN), best and worst, years,
// and with vs= the head-to-head and the opponent's weak structures.
import { get, isAbort, query } from './api.js';
import { clear, errorBox, fmtInt, go, h, link, table } from './dom.js';
import { pawnDiagram } from './diagram.js';
import { parseBoard } from './pawns.js';
import { COLOUR_FILTER, NAME_FILTER, playerHref, playerLink } from './names.js';

const pct = (v) => (v == null ? '–' : `${Number(v).toFixed(1)}%`);
const num1 = (v) => (v == null ? '–' : Number(v).toFixed(1));
const signed = (v) => (v == null ? '–' : `${v > 0 ? '+' : v < 0 ? '−' : '±'}${Math.abs(Number(v)).toFixed(1)}`);
const Colour = (c) => (c === 'white' ? 'White' : 'Black');
/** The games with a result of a row (the score's n). */
const decided = (x) => (x.wins ?? 0) + (x.draws ?? 0) + (x.losses ?? 0);
/** Fewer games with a result than this: "too few games" (docs/players.md). */
const FEW = 10;

/** The surname of a stored name ("Adams, Michael" -> "Adams"), for "Adams's score". */
export function surname(name) {
  const s = String(name || '').split(',')[0].trim();
  return s || String(name || '');
}
const possessive = (n) => `${n}’s`;

// --- the Players page -----------------------------------------------------------------------

export function playersView(main, url) {
  const box = h('input#players-search', {
    type: 'search',
    placeholder: 'a name: carlsen, "Carlsen, M." or Magnus Carlsen',
    spellcheck: false,
    autocomplete: 'off',
    'aria-label': 'Search players',
  });
  const out = h('div.players-list#players-list');
  clear(
    main,
    h(
      'div.page.players-page',
      h('h1', 'Players'),
      h('p.lead', 'Type part of a name: case, accents, periods and the spaces after a comma do not matter. Most games first; click a player for the structure profile: where they go with each colour and how they score there against the other players of the database.'),
      h('form.players-form', { on: { submit: (e) => (e.preventDefault(), search(true)) } }, box),
      out,
    ),
  );
  let timer = null;
  box.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => search(false), 150);
  });

  async function search(push) {
    const text = box.value.trim();
    const where = `/players${query({ search: text })}`;
    if (where !== location.pathname + location.search) history[push ? 'pushState' : 'replaceState'](null, '', where);
    out.classList.add('busy');
    let r;
    try {
      r = await get('/api/players', { search: text, limit: 50 }, 'players');
    } catch (e) {
      if (!isAbort(e)) clear(out, errorBox(e));
      out.classList.remove('busy');
      return;
    }
    out.classList.remove('busy');
    const rows = r.players || [];
    if (!rows.length) return clear(out, h('p.muted#players-none', text ? `No player's name contains "${text}".` : 'The database has no named players.'));
    const t = table(
      [
        { label: 'Player', cell: (x) => h('div', h('strong', playerLink(x.player)), otherSpellings(x)) },
        { label: 'Games', cls: 'num', cell: (x) => fmtInt(x.games) },
        { label: 'White', cls: 'num', cell: (x) => fmtInt(x.white_games) },
        { label: 'Black', cls: 'num', cell: (x) => fmtInt(x.black_games) },
        { label: 'Years', cell: (x) => span(x.first_year, x.last_year) },
        { label: 'Rating', cell: (x) => span(x.min_elo, x.max_elo) },
        { label: 'Top openings', cell: (x) => (x.openings || []).map((e) => h('span.chip', { title: `${fmtInt(e.games)} games` }, e.eco)) },
      ],
      rows,
      (x) => ({ class: 'clickable', title: `Open ${x.player}'s profile`, on: { click: (e) => e.target.tagName !== 'A' && go(playerHref(x.player)) } }),
    );
    t.id = 'players-table';
    const which = text ? ` whose names contain “${text}”` : '';
    clear(out, h('p.muted#players-count', rows.length === 50 ? `The 50 players${which} with the most games (type more of the name to narrow it).` : `${rows.length} player${rows.length === 1 ? '' : 's'}${which}.`), t);
  }

  return {
    route(u) {
      const text = u.searchParams.get('search') || '';
      if (text !== box.value.trim() || !out.firstChild) {
        box.value = text;
        search(false);
      }
      box.focus();
    },
  };
}

/** "first–last" of two numbers (one when they are equal, a dash without any). */
function span(a, b) {
  if (a == null && b == null) return '–';
  if (a == null || b == null || a === b) return String(a ?? b);
  return `${a}–${b}`;
}

/** The spellings beside the name shown, in small type. */
function otherSpellings(x) {
  const others = (x.names || []).filter((n) => n !== x.player);
  return others.length ? h('div.spellings', `also as ${others.map((n) => `“${n}”`).join(', ')}`) : null;
}

// --- a player's page ------------------------------------------------------------------------

/** The URL parameters of a player's page passed to /api/player as they are. */
const PAGE_PARAMS = ['name', 'as', 'vs', 'exact', 'result', 'min_elo', 'max_elo', 'event', 'site', 'eco', 'date', 'year', 'time_class', 'exclude_time_class'];
/** The controls of the page: parameter, label, placeholder. */
const CONTROLS = [
  ['vs', 'Against (head-to-head)', 'an opponent'],
  ['year', 'Years', '2000..2010'],
  ['time_class', 'Time class', 'classical,rapid'],
  ['event', 'Event', 'Olympiad'],
  ['min_elo', 'Min Elo', '2500'],
];

export function playerView(main, url) {
  const out = h('div.player#player');
  clear(main, h('div.page.player-page', out));
  let shown = null;

  async function load(u) {
    const params = {};
    for (const k of PAGE_PARAMS) if (u.searchParams.get(k)) params[k] = u.searchParams.get(k);
    shown = u.search;
    if (!params.name) {
      clear(out, h('h1', 'Player'), h('p.url-note', { role: 'status' }, 'The link names no player (it needs ?name=NAME). ', link('/players', 'Search the players.')));
      return;
    }
    clear(out, h('h1', params.name), h('p.muted#player-loading', `Reading ${params.name}'s games and the structures they reached…`));
    let r;
    try {
      r = await get('/api/player', params, 'player');
    } catch (e) {
      if (isAbort(e)) return;
      clear(out, h('h1', params.name), errorBox(e), candidates(e.message, params), h('p', link(`/players${query({ search: surname(params.name) })}`, `Search the players named ${surname(params.name)} →`)));
      return;
    }
    document.title = `${r.player} · pawndex`;
    render(out, r, params);
  }

  return {
    route(u) {
      if (u.search !== shown) load(u);
    },
  };
}

/** The page's game filters (year=, event=, …): the explorer's links and the PGN take them too. */
let pageFilters = {};
const NOT_FILTERS = ['name', 'as', 'vs', 'exact'];

/** The candidates an unknown or ambiguous name's error lists ("  Short, Nigel D (34 games)"),
 *  each a link to the page with that name in its place (the player's, or the opponent's). */
function candidates(words, params) {
  const names = [...String(words).matchAll(/^\s+(.+) \((\d+) games\)$/gm)].map((m) => [m[1], Number(m[2])]);
  if (!names.length) return null;
  const typed = /^(?:[a-z_]+: )?(?:no player named )?"([^"]*)"/.exec(words)?.[1];
  const key = params.vs && typed === params.vs && typed !== params.name ? 'vs' : 'name';
  return h(
    'ul.candidates#player-candidates',
    names.map(([n, g]) => h('li', link(`/player${query({ ...params, [key]: n })}`, n), ` · ${fmtInt(g)} games`)),
  );
}

function render(out, r, params) {
  const who = surname(r.player);
  pageFilters = Object.fromEntries(Object.entries(params).filter(([k]) => !NOT_FILTERS.includes(k)));
  const rows = (r.structures || []).map((x, i) => ({ ...x, i }));
  // Exact structures are numbered (E1, E2, …) in the order of the table: the chart and the
  // lists name them so.
  let e = 0;
  for (const x of rows) if (x.kind === 'exact') x.tag = `E${++e}`;
  const find = (b) => rows.find((x) => x.kind === b.kind && x.key === b.key && !!x.reversed === !!b.reversed && x.colour === b.colour) || b;
  const as = r.as === 'white' || r.as === 'black' ? r.as : 'both';
  clear(
    out,
    header(r, params, who),
    controls(r, params),
    h('h2', 'Games'),
    gamesTable(r, who),
    r.head_to_head ? headToHead(r, who) : null,
    h('h2', `${possessive(who)} score against the others’, per structure`),
    h(
      'p.legend',
      `Each row: a structure ${who} reached with that colour. The dot is ${possessive(who)} score in those games, its whisker the 95% interval (where the score would likely lie with many more such games); the bar is the score of the other players of the database with the same colour in the same structure (${r.baseline_source ? `of ${r.baseline_source}` : 'the baseline'}), the diamond that of those rated like ${who} (${bandWords(r)}). Blue: ${who} scores above them beyond the interval, orange: below, grey: in line. Rows with fewer than ${FEW} games with a result are in the table only.`,
    ),
    h('div.player-charts#player-charts', ['white', 'black'].filter((c) => as === 'both' || as === c).map((c) => chart(rows.filter((x) => x.colour === c), c, who, r))),
    h('div.best-worst', bestWorst('Best', 'player-best', (r.best || []).map(find), who), bestWorst('Worst', 'player-worst', (r.worst || []).map(find), who)),
    h('h2#structures', 'Structures'),
    h('p.legend', `Score: ${possessive(who)}, per game, with its 95% interval. Baseline: the other players with the same colour (band: rated ${bandWords(r)}). Δ = score − baseline, in points. Games opens them in the explorer; PGN downloads them.`),
    structuresTable(rows, r, who),
    r.years?.length ? [h('h2', 'Per year'), yearsTable(r, rows)] : null,
    r.opponent ? opponentPart(r) : null,
  );
}

/** The band in words: "2590–2790" or "no ratings". */
function bandWords(r) {
  return r.rating ? `${r.rating.low}–${r.rating.high}` : 'no ratings: no band';
}

function header(r, params, who) {
  const names = r.names || [];
  const facts = [];
  if (names.length > 1 || (names.length === 1 && names[0] !== r.player)) facts.push(h('p.spellings#player-names', `Stored as ${names.map((n) => `“${n}”`).join(', ')}`));
  facts.push(
    h(
      'p.muted#player-rating',
      r.rating ? `Rating: median ${r.rating.median} in these games; the rating band of the baselines is ${r.rating.low}–${r.rating.high}.` : 'No game of the profile has a rating for the player: no rating band.',
      r.as !== 'both' ? ` Only the games with ${Colour(r.as)}.` : '',
      r.baseline_source ? ` Baselines from ${r.baseline_source}.` : '',
    ),
  );
  const all = r.games?.all?.games;
  const mine = { ...pageFilters, [NAME_FILTER]: r.player };
  if (r.as === 'white' || r.as === 'black') mine[COLOUR_FILTER[r.as]] = r.names;
  return h(
    'div.player-head',
    h('h1#player-name', r.player),
    facts,
    h(
      'p.more',
      link(withLists('/', { tab: 'games', games: 'all', ...mine }), { id: 'player-all-games' }, `All ${fmtInt(all)} games in the explorer`),
      ' · ',
      h('a#player-pgn', { href: withLists('/api/games/export', { format: 'pgn', ...mine }), download: `${who}.pgn` }, 'PGN'),
      ' · ',
      link(`/players${query({ search: who })}`, 'other players'),
    ),
  );
}

/** As (both/White/Black), the opponent and a few game filters: a new URL on submit. */
function controls(r, params) {
  const form = h(
    'form.filters.player-filters#player-form',
    {
      on: {
        submit: (e) => {
          e.preventDefault();
          const fd = new FormData(e.target);
          const next = { name: params.name };
          if (fd.get('as') && fd.get('as') !== 'both') next.as = fd.get('as');
          for (const [k] of CONTROLS) if (String(fd.get(k) || '').trim()) next[k] = String(fd.get(k)).trim();
          // Parameters the form does not show stay as the link gave them.
          for (const k of PAGE_PARAMS) if (!(k in next) && params[k] && k !== 'as' && !CONTROLS.some(([c]) => c === k)) next[k] = params[k];
          go(`/player${query(next)}`);
        },
      },
    },
    h(
      'div.grid',
      h('label', h('span', 'Colour'), h('select#player-as', { name: 'as' }, [['both', 'both colours'], ['white', 'White'], ['black', 'Black']].map(([v, t]) => h('option', { value: v, selected: (params.as || 'both') === v }, t)))),
      CONTROLS.map(([k, label, ph]) => h('label', h('span', label), h(`input#player-${k}`, { name: k, value: params[k] || '', placeholder: ph }))),
    ),
    h('div.form-end', h('button', { type: 'submit' }, 'Show'), h('span.legend', 'The game filters choose the player’s games; the baselines follow only the time class.')),
  );
  return form;
}

function gamesTable(r, who) {
  const g = r.games || {};
  const t = table(
    [
      { label: `${who} with`, cell: (x) => h('strong', x.label) },
      { label: 'Games', cls: 'num', cell: (x) => fmtInt(x.g.games) },
      { label: 'Wins', cls: 'num', cell: (x) => fmtInt(x.g.wins) },
      { label: 'Draws', cls: 'num', cell: (x) => fmtInt(x.g.draws) },
      { label: 'Losses', cls: 'num', cell: (x) => fmtInt(x.g.losses) },
      { label: `${possessive(who)} score`, cls: 'num', cell: (x) => pct(x.g.score) },
    ],
    [
      { label: 'White', g: g.white || {} },
      { label: 'Black', g: g.black || {} },
      { label: 'both colours', g: g.all || {} },
    ],
  );
  t.id = 'player-games';
  t.classList.add('compact');
  return t;
}

/** The chart of one colour: per structure row with enough games, the player's score with its
 *  interval against the baseline and the band's baseline, most games first. */
const NS = 'http://www.w3.org/2000/svg';
function svg(tag, attrs = {}, text = null) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v != null) el.setAttribute(k, v);
  if (text != null) el.textContent = text;
  return el;
}
const TRUST_CLASS = { above: 'above', below: 'below' };
const MAX_CHART_ROWS = 20;

export function chart(all, colour, who, r) {
  const rows = all.filter((x) => decided(x) >= FEW && x.score != null).slice(0, MAX_CHART_ROWS);
  const left = all.filter((x) => decided(x) >= FEW && x.score != null).length - rows.length;
  const box = h(`figure.player-chart#chart-${colour}`);
  const title = h('figcaption', h('strong', `With ${Colour(colour)}`), ` · ${fmtInt(r.games?.[colour]?.games)} games`);
  if (!rows.length) {
    clear(box, title, h('p.muted.chart-none', `No structure with ${FEW} or more of ${possessive(who)} games with a result with ${Colour(colour)}.`));
    return box;
  }
  // The axis: the data's range, outward to tens.
  const values = rows.flatMap((x) => [x.low, x.high, x.score, x.baseline, x.baseline_band]).filter((v) => v != null);
  const lo = Math.max(0, Math.floor(Math.min(...values) / 10) * 10);
  const hi = Math.min(100, Math.ceil(Math.max(...values) / 10) * 10);
  const LABEL = 210;
  const PLOT = 400;
  const RIGHT = 150;
  const ROW = 24;
  const TOP = 26;
  const W = LABEL + PLOT + RIGHT;
  const H = TOP + rows.length * ROW + 8;
  const x = (v) => LABEL + ((v - lo) / (hi - lo || 1)) * PLOT;
  const root = svg('svg', { class: 'chart-svg', viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': `${possessive(who)} score with ${Colour(colour)} against the others’, per structure` });
  const step = hi - lo > 50 ? 20 : 10;
  for (let t = Math.ceil(lo / step) * step; t <= hi; t += step) {
    root.append(svg('line', { x1: x(t), x2: x(t), y1: TOP - 4, y2: H - 4, class: t === 50 ? 'grid mid' : 'grid' }));
    root.append(svg('text', { x: x(t), y: TOP - 9, class: 'tick', 'text-anchor': 'middle' }, `${t}%`));
  }
  root.append(svg('text', { x: W - 4, y: TOP - 9, class: 'tick', 'text-anchor': 'end' }, 'score vs others (Δ)'));
  rows.forEach((row, i) => {
    const y = TOP + i * ROW + ROW / 2;
    const g = svg('g', { class: `crow ${TRUST_CLASS[row.trust] || 'inline'}`, 'data-key': row.key, 'data-reversed': String(!!row.reversed), 'data-colour': colour, 'data-score': row.score, 'data-baseline': row.baseline ?? '' });
    if (i % 2 === 0) g.append(svg('rect', { x: 0, y: y - ROW / 2, width: W, height: ROW, class: 'stripe' }));
    const label = rowLabel(row);
    g.append(svg('text', { x: LABEL - 8, y: y + 4, class: 'label', 'text-anchor': 'end' }, fit(label, 30)));
    g.append(svg('line', { x1: x(row.low), x2: x(row.high), y1: y, y2: y, class: 'whisker' }));
    for (const v of [row.low, row.high]) g.append(svg('line', { x1: x(v), x2: x(v), y1: y - 4, y2: y + 4, class: 'whisker' }));
    if (row.baseline_band != null) g.append(svg('path', { d: `M${x(row.baseline_band)} ${y - 5}l4 5l-4 5l-4 -5z`, class: 'band' }));
    if (row.baseline != null) g.append(svg('line', { x1: x(row.baseline), x2: x(row.baseline), y1: y - 8, y2: y + 8, class: 'base' }));
    g.append(svg('circle', { cx: x(row.score), cy: y, r: 5, class: 'dot' }));
    g.append(svg('text', { x: W - 4, y: y + 4, class: 'value', 'text-anchor': 'end' }, `${num1(row.score)} vs ${num1(row.baseline)} (${signed(row.delta)})`));
    g.append(
      svg(
        'title',
        {},
        `${label} with ${Colour(colour)}: ${possessive(who)} score ${pct(row.score)} in ${fmtInt(row.games)} games (95% interval ${num1(row.low)}–${num1(row.high)}); others with ${Colour(colour)} ${pct(row.baseline)} in ${fmtInt(row.baseline_games)} games, rated ${bandWords(r)} ${pct(row.baseline_band)} in ${fmtInt(row.baseline_band_games)}; ${row.trust}`,
      ),
    );
    g.addEventListener('click', () => document.getElementById(rowId(row))?.scrollIntoView({ block: 'center' }));
    root.append(g);
  });
  const legend = h(
    'div.chart-legend',
    h('span.key', keySvg('dot'), `${possessive(who)} score (${Colour(colour)}) and its 95% interval`),
    h('span.key', keySvg('base'), `others with ${Colour(colour)}`),
    r.rating ? h('span.key', keySvg('band'), `others with ${Colour(colour)} rated ${bandWords(r)}`) : null,
  );
  clear(box, title, legend, h('div.chart-scroll', root), left > 0 ? h('p.legend', `${left} more structure${left === 1 ? '' : 's'} with ${FEW}+ games: in the table below.`) : null);
  return box;
}

/** A small key of the chart's legend. */
function keySvg(kind) {
  const s = svg('svg', { width: 28, height: 16, viewBox: '0 0 28 16', class: 'chart-svg key-svg' });
  if (kind === 'dot') {
    s.append(svg('line', { x1: 3, x2: 25, y1: 8, y2: 8, class: 'whisker' }), svg('circle', { cx: 14, cy: 8, r: 5, class: 'dot' }));
    s.classList.add('inline');
  } else if (kind === 'base') s.append(svg('line', { x1: 14, x2: 14, y1: 0, y2: 16, class: 'base' }));
  else s.append(svg('path', { d: 'M14 3l4 5l-4 5l-4 -5z', class: 'band' }));
  return s;
}

/** A label cut to `n` characters with an ellipsis (the whole of it in the row's tooltip). */
const fit = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);

/** The words of a row's structure: its name (reversed), or for an exact one its tag and name. */
function rowLabel(x) {
  const name = x.name ? x.name + (x.reversed && x.kind === 'named' ? ' (reversed)' : '') : null;
  if (x.kind === 'exact') return `${x.tag || 'exact'}: ${name ? `${name} pawns` : 'unnamed pawns'}`;
  return name || x.key + (x.reversed ? '~' : '');
}

const rowId = (x) => `ps-${x.colour}-${x.kind}-${String(x.key).replace(/[^a-z0-9-]/gi, '_')}${x.reversed ? '-rev' : ''}`;

/** The explorer's filters of a row's games: its structure, and the player's spellings with
 *  the row's colour. */
/** The stay in exact pawns that makes a game count in an exact row (docs/players.md: "a stay of
 *  at least 8 plies"), `find --min-stay`. */
const EXACT_STAY = 8;

function rowFilters(x, r) {
  const f = x.kind === 'exact' ? { fen: x.key, min_stay: EXACT_STAY } : { structure: x.key + (x.reversed ? '~' : '') };
  return { ...pageFilters, ...f, [NAME_FILTER]: r.player, [COLOUR_FILTER[x.colour]]: r.names?.length ? r.names : [r.player] };
}

/** A URL with repeated parameters for list values. */
function withLists(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const one of Array.isArray(v) ? v : [v]) if (one != null && one !== '') q.append(k, String(one));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** The explorer's Games tab on the row's games (docs/serve.md: /?structure=KEY&tab=games…). */
export const gamesHref = (x, r) => withLists('/', { ...(x.kind === 'exact' ? { fen: x.key } : { structure: x.key + (x.reversed ? '~' : '') }), tab: 'games', games: x.kind === 'exact' ? 'exact' : 'named', ...nameOnly(rowFilters(x, r)) });
const nameOnly = (f) => Object.fromEntries(Object.entries(f).filter(([k]) => k !== 'fen' && k !== 'structure'));
/** The PGN of the row's games (`find … --per game --format pgn`). */
export const pgnHref = (x, r) => withLists('/api/games/export', { format: 'pgn', ...rowFilters(x, r) });

function structureCell(x) {
  const label = rowLabel(x);
  if (x.kind === 'exact') {
    let diagram = null;
    try {
      diagram = pawnDiagram(parseBoard(x.key), { size: 56, title: `${x.tag}: ${x.key}` });
    } catch {
      diagram = null;
    }
    return h('div.named', diagram ? link(`/?fen=${encodeURIComponent(x.key)}`, { class: 'diagram-link', 'aria-hidden': 'true', tabindex: '-1' }, diagram) : null, h('div', link(`/?fen=${encodeURIComponent(x.key)}`, label), h('div.legend', 'exact pawns')));
  }
  return link(`/?structure=${encodeURIComponent(x.key + (x.reversed ? '~' : ''))}`, { title: 'Open the structure in the explorer' }, label);
}

function trustCell(x) {
  const words = { above: 'above', below: 'below', 'in line': 'in line', 'too few games': 'too few games', 'no baseline': 'no baseline' }[x.trust] || x.trust || '–';
  return h(`span.trust.${TRUST_CLASS[x.trust] || 'inline'}`, { title: trustTitle(x) }, words);
}

function trustTitle(x) {
  if (x.trust === 'too few games') return `${decided(x)} games with a result: fewer than ${FEW}, too few to compare`;
  if (x.trust === 'above') return `The baseline ${num1(x.baseline)} lies under the interval ${num1(x.low)}–${num1(x.high)}`;
  if (x.trust === 'below') return `The baseline ${num1(x.baseline)} lies over the interval ${num1(x.low)}–${num1(x.high)}`;
  if (x.trust === 'no baseline') return 'No other game of the database reaches it with this colour';
  return `The baseline ${num1(x.baseline)} lies inside the interval ${num1(x.low)}–${num1(x.high)}: no clear difference`;
}

const sanOf = (x, colour) => (colour === 'black' ? '…' : '') + x.san;

function structuresTable(rows, r, who) {
  const wrap = h('div.structures-wrap');
  const state = { colour: 'all', few: true };
  const seg = h(
    'div.seg#structures-colour',
    [['all', 'both colours'], ['white', 'White'], ['black', 'Black']].map(([v, t]) => h(`button.toggle#structures-${v}`, { type: 'button', class: v === 'all' ? 'toggle on' : 'toggle', on: { click: () => ((state.colour = v), draw()) } }, t)),
  );
  const few = h('input#structures-few', { type: 'checkbox', checked: true, on: { change: (e) => ((state.few = e.target.checked), draw()) } });
  const body = h('div.table-body');
  function draw() {
    seg.querySelectorAll('button').forEach((b) => b.classList.toggle('on', b.id === `structures-${state.colour}`));
    const list = rows.filter((x) => (state.colour === 'all' || x.colour === state.colour) && (state.few || decided(x) >= FEW));
    if (!list.length) return clear(body, h('p.muted', 'No structure.'));
    const t = table(
      [
        { label: 'Colour', cell: (x) => h(`span.side.${x.colour}`, Colour(x.colour)) },
        { label: 'Structure', cls: 'c-struct', cell: structureCell },
        { label: 'Games', cls: 'num', cell: (x) => fmtInt(x.games) },
        { label: 'Plies', cls: 'num', cell: (x) => fmtInt(x.plies) },
        { label: `${possessive(who)} score`, cls: 'num', cell: (x) => h('span', { title: `${x.wins} wins, ${x.draws} draws, ${x.losses} losses` }, h('strong', pct(x.score)), h('div.legend', x.low == null ? '' : `${num1(x.low)}–${num1(x.high)}`)) },
        { label: 'Baseline', cls: 'num', cell: (x) => h('span', { title: `${fmtInt(x.baseline_games)} games of the others with ${Colour(x.colour)}` }, pct(x.baseline), h('div.legend', `${fmtInt(x.baseline_games)} g`)) },
        { label: 'Band', cls: 'num', cell: (x) => h('span', { title: `${fmtInt(x.baseline_band_games)} games of the others with ${Colour(x.colour)} rated ${bandWords(r)}` }, pct(x.baseline_band), h('div.legend', x.baseline_band_games == null ? '' : `${fmtInt(x.baseline_band_games)} g`)) },
        { label: 'Δ', cls: 'num', cell: (x) => h(`span.delta.${x.delta == null || x.trust === 'too few games' ? 'none' : x.delta > 0 ? 'up' : x.delta < 0 ? 'down' : 'none'}`, signed(x.delta)) },
        { label: 'Trust', cell: trustCell },
        { label: 'Top moves', cls: 'c-moves', cell: (x) => (x.moves || []).map((m) => h('span.chip', { title: `${fmtInt(m.games)} games` }, `${sanOf(m, x.colour)} ${m.games}`)) },
        { label: 'Breaks', cls: 'c-moves', cell: (x) => (x.breaks || []).map((m) => h('span.chip', { title: `${fmtInt(m.games)} games, ${possessive(who)} score ${pct(m.score)}` }, `${sanOf(m, x.colour)} ${m.games}`)) },
        { label: 'Games', cls: 'c-links', cell: (x) => h('span.row-links', link(gamesHref(x, r), { class: 'games-link', title: `${possessive(who)} ${fmtInt(x.games)} games with ${Colour(x.colour)} in it, in the explorer` }, 'games'), ' ', h('a.pgn-link', { href: pgnHref(x, r), download: `${surname(r.player)}-${x.tag || x.key}${x.reversed ? '-reversed' : ''}-${x.colour}.pgn`, title: 'Download these games as PGN' }, 'PGN')) },
      ],
      list,
      (x) => ({ id: rowId(x), class: `srow srow-${x.kind}`, 'data-key': x.key, 'data-colour': x.colour, 'data-reversed': String(!!x.reversed) }),
    );
    t.id = 'player-structures';
    t.classList.add('structures');
    clear(body, t);
  }
  draw();
  clear(wrap, h('div.table-tools', seg, h('label.inline', few, ` rows with fewer than ${FEW} games with a result`), h('span.muted', `${rows.length} rows`)), body);
  return wrap;
}

/** The best or worst rows; `open(x)` the link of a row (default: its row of the table). */
function bestWorst(title, id, list, who, open = null) {
  const box = h('div');
  box.append(h('h3', title === 'Best' ? `Where ${who} does best against the others` : `Where ${who} does worst against the others`));
  if (!list.length) {
    box.append(h('p.muted', `No structure with ${FEW} or more games with a result.`));
    return box;
  }
  const t = table(
    [
      { label: 'Structure', cell: (x) => (open ? open(x) : h('a', { href: `#${rowId(x)}`, on: { click: (e) => (e.preventDefault(), document.getElementById(rowId(x))?.scrollIntoView({ block: 'center' })) } }, rowLabel(x))) },
      { label: `${possessive(who)} colour`, cell: (x) => Colour(x.colour) },
      { label: 'Games', cls: 'num', cell: (x) => fmtInt(x.games) },
      { label: `${possessive(who)} score`, cls: 'num', cell: (x) => pct(x.score) },
      { label: 'Others', cls: 'num', cell: (x) => pct(x.baseline) },
      { label: 'Δ', cls: 'num', cell: (x) => h(`span.delta.${x.delta > 0 ? 'up' : x.delta < 0 ? 'down' : 'none'}`, signed(x.delta)) },
    ],
    list,
  );
  t.id = id;
  box.append(t);
  return box;
}

function yearsTable(r, rows) {
  // The columns: the structures of the years' lists, in the order they first come.
  const cols = [];
  for (const y of r.years)
    for (const s of y.structures || []) {
      const k = s.key + (s.reversed ? '~' : '');
      if (!cols.some((c) => c.k === k)) cols.push({ k, key: s.key, reversed: !!s.reversed });
    }
  const nameOf = (c) => {
    const row = rows.find((x) => x.kind === 'named' && x.key === c.key && !!x.reversed === c.reversed);
    return (row?.name || c.key) + (c.reversed ? ' (rev.)' : '');
  };
  const t = table(
    [
      { label: 'Year', cell: (y) => String(y.year ?? 'no year') },
      { label: 'Games', cls: 'num', cell: (y) => fmtInt(y.games) },
      ...cols.map((c) => ({
        label: nameOf(c),
        cls: 'num',
        cell: (y) => {
          const s = (y.structures || []).find((x) => x.key === c.key && !!x.reversed === c.reversed);
          return s ? h('span', { title: `${fmtInt(s.games)} of ${fmtInt(y.games)} games` }, pct(s.share)) : '–';
        },
      })),
    ],
    r.years,
  );
  t.id = 'player-years';
  t.classList.add('compact');
  return h('div.years-wrap', h('p.legend', 'The share of each year’s games reaching the most reached named structures.'), t);
}

function headToHead(r, who) {
  const x = r.head_to_head;
  const them = surname(x.opponent);
  const summary = h(
    'p.h2h-summary#h2h-summary',
    h('strong', `${who} – ${them}: ${fmtInt(x.games)} games`),
    `, ${who} +${x.wins} =${x.draws} −${x.losses}, ${possessive(who)} score ${pct(x.score)}. `,
    link(playerHref(x.opponent), { id: 'h2h-opponent' }, `${possessive(them)} profile →`),
  );
  const t = table(
    [
      { label: '#', cls: 'num', cell: (g) => link(`/game/${g.id}`, String(g.id)) },
      { label: 'Date', cell: (g) => g.date || '' },
      { label: 'Event', cell: (g) => g.event || '' },
      { label: `${who} had`, cell: (g) => Colour(g.colour) },
      { label: 'Result', cell: (g) => g.result || '*' },
      { label: 'ECO', cell: (g) => g.eco || '' },
      { label: 'Plies', cls: 'num', cell: (g) => fmtInt(g.plies) },
    ],
    x.list || [],
    (g) => ({ class: 'clickable', on: { click: (e) => e.target.tagName !== 'A' && go(`/game/${g.id}`) } }),
  );
  t.id = 'h2h-games';
  return h('section.h2h#player-h2h', h('h2', `Against ${x.opponent}`), summary, (x.list || []).length ? t : h('p.muted', 'No game between them.'));
}

function opponentPart(r) {
  const o = r.opponent;
  const them = surname(o.player);
  const rows = (o.structures || []).map((x) => ({ ...x }));
  let e = 0;
  for (const x of rows) if (x.kind === 'exact') x.tag = `E${++e}`;
  const find = (b) => rows.find((x) => x.kind === b.kind && x.key === b.key && !!x.reversed === !!b.reversed && x.colour === b.colour) || b;
  return h(
    'section.opponent#player-opponent',
    h('h2', `Preparing for ${o.player}`),
    h('p.legend', `Where ${them} scores worst against the other players with the same colour: the structures to aim for. `, link(playerHref(o.player), `${possessive(them)} whole profile →`)),
    bestWorst('Worst', 'opponent-worst', (o.worst || []).map(find), them, (x) => link(gamesHref(x, o), { title: `${possessive(them)} games in it with ${Colour(x.colour)}` }, rowLabel(x))),
  );
}
