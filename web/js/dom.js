// Small DOM helpers: no framework, no inline styles in markup (the page runs under a CSP of 'self').

/** h('div.card#id', {attrs, on: {click}}, ...children) */
export function h(tag, attrs, ...children) {
  const [name, ...rest] = tag.split(/(?=[.#])/);
  const el = document.createElement(name || 'div');
  for (const part of rest) {
    if (part[0] === '.') el.classList.add(part.slice(1));
    else el.id = part.slice(1);
  }
  if (attrs && (typeof attrs !== 'object' || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'on') for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
    else if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c == null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export const fmtInt = (n) => (n == null ? '–' : Number(n).toLocaleString('en-US'));

/** White's score in percent, one decimal (docs/conventions.md); '–' without a result. */
export const fmtScore = (s) => (s == null ? '–' : `${Number(s).toFixed(1)}%`);

/** A cell coloured with the one diverging palette: green above 50 (White better), purple under. */
export function scoreCell(score, tag = 'td', games = null) {
  const el = h(`${tag}.num.score`, fmtScore(score));
  if (score == null) el.classList.add('s-none');
  else {
    let d = Math.max(-1, Math.min(1, (score - 50) / 15));
    // Under 30 games a score says little: a faint tint only (docs/conventions.md greys it).
    if (games != null && games < 30) {
      d *= 0.3;
      el.classList.add('s-few');
      el.title = `${games} game${games === 1 ? '' : 's'} with a result: too few to say much`;
    }
    el.classList.add(d > 0 ? 's-white' : d < 0 ? 's-black' : 's-even');
    // The tint's strength goes through a CSS variable (CSSOM, not a style attribute).
    el.style.setProperty('--tint', Math.abs(d).toFixed(2));
  }
  return el;
}

/** A win/draw/loss bar; with only a score (no W/D/L) a White/Black split of the points. */
export function resultBar({ white_wins, draws, black_wins, white_score }) {
  const bar = h('div.wdl');
  const parts = [];
  if (white_wins != null && draws != null && black_wins != null && white_wins + draws + black_wins > 0) {
    const n = white_wins + draws + black_wins;
    parts.push(['w', white_wins / n, `White wins ${fmtPct(white_wins / n)}`]);
    parts.push(['d', draws / n, `Draws ${fmtPct(draws / n)}`]);
    parts.push(['b', black_wins / n, `Black wins ${fmtPct(black_wins / n)}`]);
    bar.title = `${fmtInt(white_wins)} White wins, ${fmtInt(draws)} draws, ${fmtInt(black_wins)} Black wins`;
  } else if (white_score != null) {
    parts.push(['w', white_score / 100, `White ${fmtScore(white_score)}`]);
    parts.push(['b', 1 - white_score / 100, `Black ${fmtScore(100 - white_score)}`]);
    bar.title = `White's score ${fmtScore(white_score)} (no win/draw/loss split for this count)`;
  } else {
    bar.classList.add('empty');
    bar.append(h('span', 'no game with a result'));
    return bar;
  }
  for (const [cls, share, label] of parts) {
    if (!(share > 0)) continue; // no sliver for a part with no game
    const seg = h(`span.${cls}`, label);
    seg.style.flexGrow = String(share);
    seg.title = label;
    // The words, then the number alone, then nothing: whichever fits whole (fitLabels).
    seg.dataset.labels = JSON.stringify([label, label.replace(/^.* /, ''), '']);
    bar.append(seg);
  }
  fitLabels(bar);
  return bar;
}

/** Each segment of a win/draw/loss bar shows the longest of its labels that fits whole, never a
 *  clipped one ("hite wins 33.3"): measured once the bar is on the page, again on resize. */
function fitLabels(bar, tries = 0) {
  if (!bar.isConnected) {
    if (tries < 600) requestAnimationFrame(() => fitLabels(bar, tries + 1));
    return;
  }
  for (const seg of bar.querySelectorAll('span[data-labels]')) {
    const labels = JSON.parse(seg.dataset.labels);
    for (const label of labels) {
      seg.textContent = label;
      if (seg.scrollWidth <= seg.clientWidth) break;
    }
  }
}
window.addEventListener('resize', () => document.querySelectorAll('.wdl').forEach((b) => fitLabels(b)));

const fmtPct = (x) => `${(100 * x).toFixed(1)}%`;

/** A table from column specs [{label, cell(row) -> Node|string, cls}] */
export function table(columns, rows, rowAttrs) {
  return h(
    'table.data',
    h('thead', h('tr', columns.map((c) => h(`th${c.cls ? '.' + c.cls : ''}`, c.label)))),
    h(
      'tbody',
      rows.map((r, i) => {
        const tr = h('tr', rowAttrs ? rowAttrs(r, i) : null);
        if (tr.classList.contains('clickable')) keyboardRow(tr);
        for (const c of columns) {
          const v = c.cell(r, i);
          tr.append(v instanceof Node && v.tagName === 'TD' ? v : h(`td${c.cls ? '.' + c.cls : ''}`, v));
        }
        return tr;
      }),
    ),
  );
}

/** A clickable row reached with Tab: Enter (or Space) opens it as a click does, and focus
 *  shows what hovering shows. */
function keyboardRow(tr) {
  tr.tabIndex = 0;
  tr.addEventListener('keydown', (e) => {
    if (e.target !== tr || (e.key !== 'Enter' && e.key !== ' ')) return;
    e.preventDefault();
    tr.click();
  });
  tr.addEventListener('focus', () => tr.dispatchEvent(new Event('mouseenter')));
  tr.addEventListener('blur', () => tr.dispatchEvent(new Event('mouseleave')));
}

/** A visible note about the page's URL (a parameter it could not follow), in a player's words. */
export function noteBox(words) {
  return h('p.url-note', { role: 'status' }, words);
}

export function errorBox(err) {
  return h('div.error', { role: 'alert' }, err && err.message ? err.message : String(err));
}

/** Navigate inside the single-page app (history.pushState). */
export function go(url, replace = false) {
  window.dispatchEvent(new CustomEvent('pawndex:go', { detail: { url, replace } }));
}

export function link(href, ...children) {
  const attrs = children[0] && typeof children[0] === 'object' && !(children[0] instanceof Node) && !Array.isArray(children[0]) ? children.shift() : {};
  return h('a', { ...attrs, href, 'data-link': true }, ...children);
}

/** A feature's value in words: yes/no, a number, squares separated by spaces, or '–' for none. */
export function featureValue(v) {
  if (v === true) return 'yes';
  if (v === false) return 'no';
  if (Array.isArray(v)) return v.length ? v.join(' ') : '–';
  if (v == null || v === '') return '–';
  return String(v).replace(/,/g, ' ');
}
