// The catalogue's names by key, fetched once (for "leads to" and "turns into" cells).
import { get } from './api.js';

let names = null;

export async function catalogueNames() {
  if (!names) {
    names = get('/api/catalogue')
      .then((c) => {
        const m = new Map();
        for (const r of c.rows || []) if (!m.has(r.key)) m.set(r.key, r.name);
        return m;
      })
      .catch(() => new Map());
  }
  return names;
}

export function formName(names, key, reversed) {
  if (key == null) return 'no named structure';
  const n = names.get(key) || key;
  return reversed ? `${n} (reversed)` : n;
}
