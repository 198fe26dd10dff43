// The JSON API (docs/serve.md). Errors come as {"error": "..."}: they are thrown as Error(words).

export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v == null || v === '' || v === false) continue;
    // A list is the parameter repeated (any of the values; a name holds commas).
    if (Array.isArray(v)) v.filter((x) => x != null && x !== '').forEach((x) => q.append(k, String(x)));
    else q.set(k, v === true ? '1' : String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

const inflight = new Map();

/** GET a JSON answer; a newer call with the same `slot` aborts the older one. */
export async function get(path, params = {}, slot = null) {
  const url = path + query(params);
  let ctrl = null;
  if (slot) {
    inflight.get(slot)?.abort();
    ctrl = new AbortController();
    inflight.set(slot, ctrl);
  }
  let res;
  try {
    res = await fetch(url, { signal: ctrl?.signal, headers: { Accept: 'application/json' } });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(`The server did not answer (${url}): is pawndex serve still running?`, 0);
  }
  let body = null;
  const text = await res.text();
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!res.ok) {
    const words = body && body.error ? body.error : `${res.status} ${res.statusText}`;
    throw new ApiError(words, res.status);
  }
  if (body == null) throw new ApiError(`The server's answer to ${path} was not JSON`, res.status);
  return body;
}

export const isAbort = (e) => e && e.name === 'AbortError';
