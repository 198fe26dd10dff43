// The catalogue, statistics and database pages.
import { get, query } from './api.js';
import { clear, errorBox, fmtInt, h, link, scoreCell, table } from './dom.js';

export function catalogueView(main) {
  const out = h('div.catalogue', h('p.muted', 'Reading the catalogue…'));
  clear(main, h('div.page', h('h1', 'Named structures'), h('p.lead', 'The catalogue of docs/structures.md with what this database holds of each form (the colour-reversed form is marked "reversed"). Click a structure to open it in the explorer.'), out));
  (async () => {
    try {
      const r = await get('/api/catalogue');
      const rows = r.rows || [];
      const families = new Map();
      for (const x of rows) {
        if (!families.has(x.family)) families.set(x.family, []);
        families.get(x.family).push(x);
      }
      const blocks = [];
      for (const [family, list] of families) {
        blocks.push(
          h('h2.family', family),
          table(
            [
              { label: 'Structure', cls: 'c-name', cell: (x) => structureLink(x) },
              { label: 'Form', cell: (x) => (x.reversed ? 'reversed' : 'normal') },
              { label: 'Positions', cls: 'num', cell: (x) => fmtInt(x.positions) },
              { label: 'Games', cls: 'num', cell: (x) => fmtInt(x.games) },
              { label: 'White %', cell: (x) => scoreCell(x.white_score, 'td', x.games_with_result ?? x.games) },
              { label: 'Avg stay', cls: 'num', cell: (x) => (x.avg_stay == null ? '–' : Number(x.avg_stay).toFixed(1)) },
              { label: 'Top ECO', cell: (x) => (x.eco || []).slice(0, 3).map((e) => e.eco).join(' ') },
            ],
            list,
            (x) => ({ id: `s-${x.key}${x.reversed ? '-rev' : ''}` }),
          ),
        );
      }
      if (!rows.length) blocks.push(h('p.muted', 'The catalogue is empty.'));
      clear(out, blocks);
      out.querySelector('table')?.classList.add('first');
      if (location.hash) document.getElementById(`s-${location.hash.slice(1)}`)?.scrollIntoView();
    } catch (e) {
      clear(out, errorBox(e));
    }
  })();
  return {};
}

function structureLink(x) {
  const label = x.name + (x.reversed ? ' (reversed)' : '');
  // The catalogue row may carry an example board; otherwise the explorer opens the first
  // position of the database with that structure (none: the name without a link).
  const board = x.board || x.example || x.fen;
  if (board) return link(`/?fen=${encodeURIComponent(board)}`, label);
  if (!x.positions) return h('span.absent', { title: 'No position of this database has it' }, label);
  return link(`/?structure=${encodeURIComponent(x.key + (x.reversed ? '~' : ''))}`, label);
}

const REPORTS = [
  ['islands-vs-score', "White's score by the islands of each side"],
  ['bishop-pair-by-elo', 'The bishop pair, by Elo band'],
  ['dispersion-by-phase', 'Dispersion by game phase'],
  ['distortion-by-phase', 'Distortion by game phase'],
  ['phalanx-by-ply', 'Duos, trios and quarts by ply'],
  ['top-structures', 'The most frequent structures'],
];

export function statsView(main, url) {
  const chart = h('div.chart#stats-chart');
  const pick = h('select#report', REPORTS.map(([k, label]) => h('option', { value: k }, label)));
  const by = h('input#stats-by', { placeholder: 'or group by columns: white_islands,phase', spellcheck: false });
  const form = h(
    'form.stats-form',
    { on: { submit: (e) => (e.preventDefault(), show()) } },
    h('label', 'Report ', pick),
    h('label', by),
    h('button', { type: 'submit' }, 'Show'),
  );
  // Restricted to a structure (from the explorer): ?structure=KEY or ?fen=FEN.
  const restrict = {};
  for (const k of ['structure', 'fen']) if (url.searchParams.get(k)) restrict[k] = url.searchParams.get(k);
  const scope = Object.keys(restrict).length
    ? h('p.scope#stats-scope', 'Only the positions ', restrict.structure ? `of the named structure ${restrict.structure}` : h('span', 'with exactly the pawns ', h('code', restrict.fen)), ' · ', link(restrict.fen ? `/?fen=${encodeURIComponent(restrict.fen)}` : '/structures', 'back to the structure'), ' · ', h('a', { href: '/stats', 'data-link': true }, 'all positions'))
    : h('p.scope.muted', 'All positions of the database (open it from a structure in the explorer to restrict it).');
  clear(main, h('div.page', h('h1', 'Statistics'), h('p.lead', "The built-in reports of pawndex stats, drawn by the server. White's score: green above 50% (White does better), purple under."), scope, form, chart));
  const initial = url.searchParams.get('report');
  if (initial) pick.value = initial;
  if (url.searchParams.get('by')) by.value = url.searchParams.get('by');
  pick.addEventListener('change', () => ((by.value = ''), show()));

  async function show() {
    const params = { ...restrict, ...(by.value.trim() ? { by: by.value.trim() } : { report: pick.value }) };
    history.replaceState(null, '', `/stats${query(params)}`);
    clear(chart, h('p.muted', 'Computing (the first time can take a few seconds)…'));
    const svgUrl = `/api/stats${query({ ...params, format: 'svg' })}`;
    try {
      // Ask for the JSON first: a bad parameter comes back as words, not a broken image.
      const r = await get('/api/stats', params);
      const img = h('img.chart-img', { src: svgUrl, alt: `chart of ${params.report || params.by}` });
      img.addEventListener('error', () => img.replaceWith(h('p.error', 'The chart could not be drawn (the rows are below).')));
      const rows = r.rows || [];
      const cols = rows.length ? Object.keys(rows[0]) : [];
      clear(
        chart,
        img,
        h('p.exports', h('a#stats-csv', { href: `/api/stats${query({ ...params, format: 'csv' })}`, download: `${params.report || 'stats'}.csv` }, 'Download CSV'), ' · ', h('a', { href: svgUrl, download: `${params.report || 'stats'}.svg` }, 'SVG')),
        rows.length
          ? h('details', h('summary', `${rows.length} rows`), table(cols.map((c) => ({ label: c, cell: (x) => (c === 'white_score' ? scoreCell(x[c]) : x[c] == null ? '–' : String(x[c])) })), rows.slice(0, 500)))
          : h('p.muted', 'No rows.'),
      );
    } catch (e) {
      clear(chart, errorBox(e));
    }
  }
  show();
  return {};
}

export function infoView(main) {
  const out = h('div.info', h('p.muted', 'Reading the database…'));
  clear(main, h('div.page', h('h1', 'The database'), out));
  (async () => {
    try {
      const r = await get('/api/info');
      const fig = (label, value) => h('div.fig', h('dt', label), h('dd', value));
      clear(
        out,
        h(
          'dl.figures.summary',
          fig('Games', fmtInt(r.games)),
          fig('Positions', fmtInt(r.positions)),
          fig('Pawn sets', fmtInt(r.pawn_sets)),
          fig('Named structures', fmtInt(r.structures)),
          fig('Size', r.bytes == null ? '–' : `${(r.bytes / 1048576).toFixed(1)} MB`),
        ),
        h('p.muted', r.db ? `${r.db} · ${r.state || ''}` : ''),
        h('h2', 'Everything pawndex info says'),
        describe(r),
      );
    } catch (e) {
      clear(out, errorBox(e));
    }
  })();
  return {};
}

/** Any JSON object as nested definition lists and tables. */
function describe(v) {
  if (Array.isArray(v)) {
    if (v.length && v.every((x) => x && typeof x === 'object' && !Array.isArray(x))) {
      const cols = [...new Set(v.flatMap((x) => Object.keys(x)))];
      return table(cols.map((c) => ({ label: c.replace(/_/g, ' '), cell: (x) => show(x[c]) })), v);
    }
    return v.map(show).join(', ');
  }
  if (v && typeof v === 'object') {
    return h('dl.kv', Object.entries(v).map(([k, x]) => [h('dt', k.replace(/_/g, ' ')), h('dd', x && typeof x === 'object' ? describe(x) : show(x))]));
  }
  return show(v);
}

const show = (x) => (x == null ? '–' : typeof x === 'number' ? x.toLocaleString('en-US') : typeof x === 'object' ? JSON.stringify(x) : String(x));
