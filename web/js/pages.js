// The catalogue, statistics and database pages.
import { get, query } from './api.js';
import { clear, errorBox, fmtInt, h, link, noteBox, scoreCell, table } from './dom.js';
import { pawnDiagram } from './diagram.js';
import { parseBoard } from './pawns.js';

export function catalogueView(main) {
  const out = h('div.catalogue', h('p.muted', 'Reading the catalogue…'));
  clear(main, h('div.page', h('h1', 'Named structures'), h('p.lead', 'The catalogue of docs/structures.md with what this database holds of each form (the colour-reversed form is marked "reversed"). White % is White\'s score per game: each game that reaches the form counts once. Each diagram shows the form\'s most common exact pawns (those reached in the most games); click it or the name to open them in the explorer, with the whole form\'s counts.'), out));
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
              { label: 'Structure', cls: 'c-name', cell: (x) => h('div.named', diagramLink(x), structureLink(x)) },
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
  // The form's most common exact pawns (reached in the most games), with the whole form's counts.
  if (x.board) return link(`/?fen=${encodeURIComponent(x.board)}&counts=named`, { title: `Its most common form, reached in ${fmtInt(x.board_games)} game${x.board_games === 1 ? '' : 's'}` }, label);
  if (!x.positions) return h('span.absent', { title: 'No position of this database has it' }, label);
  return link(`/?structure=${encodeURIComponent(x.key + (x.reversed ? '~' : ''))}`, label);
}

/** The form's most common exact pawns as a small diagram, linked as its name is (none when the
 *  database never reaches the form). */
function diagramLink(x) {
  if (!x.board) return h('span.diagram-none', { title: 'No position of this database has it' });
  const games = `${fmtInt(x.board_games)} game${x.board_games === 1 ? '' : 's'}`;
  const diagram = pawnDiagram(parseBoard(x.board), { size: 72, title: `${x.name}${x.reversed ? ' (reversed)' : ''}: its most common form, reached in ${games}` });
  return link(`/?fen=${encodeURIComponent(x.board)}&counts=named`, { class: 'diagram-link', 'aria-hidden': 'true', tabindex: '-1' }, diagram);
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
  const pick = h('select#report', REPORTS.map(([k, label]) => h('option', { value: k }, label)), h('option', { value: '' }, 'Your own grouping (the columns at the right)'));
  const by = h('input#stats-by', { placeholder: 'or group by columns: white_islands,phase', spellcheck: false });
  const form = h(
    'form.stats-form',
    { on: { submit: (e) => (e.preventDefault(), show()) } },
    h('label', 'Report ', pick),
    h('label', by),
    h('button', { type: 'submit' }, 'Show'),
  );
  const note = h('div.url-notes');
  // Restricted to a structure (from the explorer): ?structure=KEY or ?fen=FEN.
  const restrict = {};
  for (const k of ['structure', 'fen']) if (url.searchParams.get(k)) restrict[k] = url.searchParams.get(k);
  const scope = Object.keys(restrict).length
    ? h('p.scope#stats-scope', 'Only the positions ', restrict.structure ? `of the named structure ${restrict.structure}` : h('span', 'with exactly the pawns ', h('code', restrict.fen)), ' · ', link(restrict.fen ? `/?fen=${encodeURIComponent(restrict.fen)}` : '/structures', 'back to the structure'), ' · ', h('a', { href: '/stats', 'data-link': true }, 'all positions'))
    : h('p.scope.muted', 'All positions of the database (open it from a structure in the explorer to restrict it).');
  clear(main, h('div.page', h('h1', 'Statistics'), h('p.lead', "The built-in reports of pawndex stats, drawn by the server. White's score: green above 50% (White does better), purple under."), scope, note, form, chart));
  // The dropdown follows the URL: a report by name, or "your own grouping" for ?by=.
  const initial = url.searchParams.get('report');
  if (url.searchParams.get('by')) {
    by.value = url.searchParams.get('by');
    pick.value = '';
  } else if (initial && REPORTS.some(([k]) => k === initial)) pick.value = initial;
  else if (initial) note.append(noteBox(`The link asks for the report "${initial}", which does not exist: the reports are ${REPORTS.map(([k]) => k).join(', ')}. Showing ${REPORTS[0][0]}.`));
  pick.addEventListener('change', () => {
    if (!pick.value) return by.focus();
    by.value = '';
    show();
  });
  by.addEventListener('input', () => {
    if (by.value.trim()) pick.value = '';
  });

  async function show() {
    const params = { ...restrict, ...(by.value.trim() ? { by: by.value.trim() } : { report: pick.value || REPORTS[0][0] }) };
    if (!by.value.trim()) pick.value = params.report;
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
      // Per position, a game counts once per ply it spends in a group; per game, once.
      const per =
        r.per === 'game'
          ? h('p.per#stats-per', h('strong', "White's score per game"), ': each game counts once in a group, however many of its positions are in it.')
          : h('p.per#stats-per', h('strong', "White's score per position"), ': each position counts, so a game counts once for every ply it spends in a group (the explorer counts per game).');
      clear(
        chart,
        per,
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
      const fig = (label, value, id) => h('div.fig', h('dt', label), h(`dd${id ? '#' + id : ''}`, value));
      const games = (n) => `${fmtInt(n)} game${n === 1 ? '' : 's'}`;
      const facts = [
        ['File', r.db || '–'],
        ['Size', r.bytes == null ? '–' : `${fmtBytes(r.bytes)} (${fmtInt(r.bytes)} bytes)`],
        ['State', stateWords(r, games)],
        [
          'Named structures',
          r.structures == null ? '–' : `${fmtInt(r.structures)} in the catalogue, ${r.structures_current === false ? 'classified with another catalogue than this pawndex’s (pawndex migrate re-classifies them)' : 'classified with this pawndex’s catalogue'}`,
        ],
        ['Rejected games', r.rejected ? `${fmtInt(r.rejected)} (not indexed: see the reasons below)` : 'none'],
        ['Schema', r.schema_version == null ? '–' : `version ${r.schema_version}`],
      ];
      if (r.wal_bytes > 0) facts.splice(2, 0, ['Write-ahead log', `${fmtBytes(r.wal_bytes)} beside the file, not yet folded into it`]);
      clear(
        out,
        h(
          'dl.figures.summary',
          fig('Games', fmtInt(r.games), 'info-games'),
          fig('Positions', fmtInt(r.positions)),
          fig('Moves (plies)', fmtInt(r.plies)),
          fig('Pawn sets', fmtInt(r.pawn_sets)),
          fig('Size', r.bytes == null ? '–' : fmtBytes(r.bytes), 'info-size'),
        ),
        h('dl.kv#info-facts', facts.map(([k, v]) => [h('dt', k), h('dd', v)])),
        r.sources?.length
          ? [
              h('h2', 'Indexed from'),
              table(
                [
                  { label: 'File', cell: (x) => x.source },
                  { label: 'Games', cls: 'num', cell: (x) => fmtInt(x.games) },
                  { label: 'Moves (plies)', cls: 'num', cell: (x) => fmtInt(x.plies) },
                  { label: 'Rejected', cls: 'num', cell: (x) => fmtInt(x.rejected) },
                ],
                r.sources,
              ),
            ]
          : null,
        r.rejects_by_reason?.length
          ? [h('h2', 'Why games were rejected'), table([{ label: 'Reason', cell: (x) => x.reason }, { label: 'Games', cls: 'num', cell: (x) => fmtInt(x.games) }], r.rejects_by_reason)]
          : null,
        h('p.muted', 'The same facts as ', h('code', 'pawndex info'), ' prints.'),
      );
    } catch (e) {
      clear(out, errorBox(e));
    }
  })();
  return {};
}

/** A byte count in binary units, as pawndex info writes it: 154.3 MiB (1 MiB = 1,048,576 bytes). */
export function fmtBytes(n) {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = Number(n);
  let u = 0;
  while (v >= 1024 && u + 1 < units.length) {
    v /= 1024;
    u += 1;
  }
  return u === 0 ? `${n} bytes` : `${v.toFixed(1)} ${units[u]}`;
}

/** The database's state in words (the JSON's state, unmerged and unfinished games, to_run). */
function stateWords(r, games) {
  switch (r.state) {
    case 'complete':
      return 'complete: every game is indexed and counted';
    case 'tail':
      return `complete; ${games(r.unmerged_games)} not yet merged into the summary tables (answers include them; pawndex migrate merges them)`;
    case 'indexing':
      return `being indexed now: ${games(r.unfinished_games)} stored so far are not yet in the summary tables (answers include them, more slowly)`;
    case 'interrupted':
      return `interrupted: ${games(r.unfinished_games)} stored by an index run that did not finish are not yet in the summary tables${r.to_run ? `; run ${r.to_run}` : ''}`;
    default:
      return r.state ? String(r.state) : '–';
  }
}
