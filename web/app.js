// pawndex explorer: a single-page app over the JSON API of `pawndex serve` (docs/serve.md).
// Routes without a hash: /, /?fen=FEN, /game/ID?ply=N, /structures, /stats, /info,
// /players?search=TEXT, /player?name=NAME, /your-game.
import { get } from './js/api.js';
import { clear, errorBox, h, link } from './js/dom.js';
import { explorer } from './js/explorer.js';
import { gameView } from './js/game.js';
import { catalogueView, infoView, statsView } from './js/pages.js';

const main = document.getElementById('main');
let current = null; // { kind, view }

function kindOf(path) {
  if (path === '/' || path === '/index.html') return 'explorer';
  if (/^\/game\/[^/]+$/.test(path)) return 'game';
  if (path === '/structures') return 'structures';
  if (path === '/stats') return 'stats';
  if (path === '/info') return 'info';
  if (path === '/players') return 'players';
  if (path === '/player') return 'player';
  if (path === '/your-game') return 'yours';
  return null;
}

/** A view whose module loads when it is first opened (the players' pages, "Your game": not part
 *  of the first page load); the routes it is given meanwhile go to it once it is there. */
function later(name, module = './js/players.js') {
  return (main, url) => {
    let view = null;
    let pending = url;
    let gone = false;
    import(module)
      .then((m) => {
        if (gone) return;
        view = m[name](main, url);
        view.route?.(pending);
      })
      .catch((e) => clear(main, errorBox(e)));
    return {
      route(u) {
        if (view) view.route?.(u);
        else pending = u;
      },
      destroy() {
        gone = true;
        view?.destroy?.();
      },
    };
  };
}

function route() {
  const url = new URL(location.href);
  const kind = kindOf(url.pathname);
  for (const a of document.querySelectorAll('header nav a')) {
    const k = kindOf(new URL(a.href).pathname);
    a.classList.toggle('on', k === kind || (kind === 'game' && k === 'explorer') || (kind === 'player' && k === 'players'));
  }
  try {
    const same = current && current.kind === kind && (kind !== 'game' || current.path === url.pathname);
    if (!same) {
      current?.view?.destroy?.();
      current = null;
      const make = { explorer, game: gameView, structures: catalogueView, stats: statsView, info: infoView, players: later('playersView'), player: later('playerView'), yours: later('yourGameView', './js/yourgame.js') }[kind];
      if (!make) {
        clear(main, h('div.page', h('h1', 'Not found'), h('p', `There is no page at ${url.pathname}. `, link('/', 'Open the explorer.'))));
        return;
      }
      current = { kind, path: url.pathname, view: make(main, url) };
    }
    document.title = { explorer: 'Explorer', game: 'Game', structures: 'Catalogue', stats: 'Statistics', info: 'Database', players: 'Players', player: 'Player', yours: 'Your game' }[kind] + ' · pawndex';
    current.view.route?.(url);
  } catch (e) {
    clear(main, errorBox(e));
    console.error(e);
  }
}

window.addEventListener('pawndex:go', (e) => {
  const { url, replace } = e.detail;
  if (url === location.pathname + location.search) return;
  history[replace ? 'replaceState' : 'pushState'](null, '', url);
  route();
});
window.addEventListener('popstate', route);
document.addEventListener('click', (e) => {
  const a = e.target.closest && e.target.closest('a[data-link]');
  if (!a || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const u = new URL(a.href);
  if (u.origin !== location.origin) return;
  e.preventDefault();
  if (u.pathname + u.search !== location.pathname + location.search) history.pushState(null, '', u.pathname + u.search + u.hash);
  route();
});
window.addEventListener('error', (e) => showFatal(e.message));
window.addEventListener('unhandledrejection', (e) => {
  if (e.reason && e.reason.name === 'AbortError') return;
  showFatal(e.reason?.message || String(e.reason));
});

function showFatal(words) {
  const box = document.getElementById('fatal') || document.body.appendChild(h('div.error.fatal#fatal', { role: 'alert' }));
  box.textContent = `Something went wrong in the page: ${words}`;
}

get('/api/info')
  .then((i) => {
    const games = i.games ?? i.game_count ?? i.counts?.games;
    const name = i.db ?? i.path ?? i.database ?? '';
    document.getElementById('dbname').textContent = [String(name).split('/').pop(), games != null && `${Number(games).toLocaleString('en-US')} games`].filter(Boolean).join(' · ');
  })
  .catch(() => {});

route();
