// The page's state lives in the URL hash, `#/VIEW?dump=N&from=…&to=…&at=…&…`, so a
// link or a reload shows the same thing. Every view reads it with readState()
// and changes it with navigate(); the time range (from/to) and the instant (at),
// integer ns since the dump's start, are shared by all views. No DOM here.

// Kept when switching views; every other key belongs to one view. raw and
// group name the call sites (labels.js) in every view that lists them.
export const SHARED_KEYS = ['dump', 'from', 'to', 'at', 'raw', 'group'];
export const VIEW_NAMES = ['dumps', 'overview', 'sites', 'flame', 'allocations', 'maps', 'diff'];

const NS = /^\d{1,19}$/;

export function readState(hash = location.hash) {
  const [view, query = ''] = hash.replace(/^#\/?/, '').split('?');
  const state = { view: view || '' };
  for (const [key, value] of new URLSearchParams(query)) state[key] = value;
  // A range or an instant that is not a plain number is dropped, not sent on.
  for (const key of ['from', 'to', 'at']) if (state[key] !== undefined && !NS.test(state[key])) delete state[key];
  if (state.from !== undefined && state.to !== undefined && Number(state.from) >= Number(state.to)) {
    delete state.from;
    delete state.to;
  }
  return state;
}

export function hashFor(state) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(state)) {
    if (key === 'view' || value === undefined || value === null || value === '') continue;
    params.set(key, String(value));
  }
  const query = params.toString();
  return `#/${state.view || 'overview'}${query ? `?${query}` : ''}`;
}

// The hash of `view` with the shared keys of `state` and `extra`.
export function viewHash(view, state, extra = {}) {
  const next = { view };
  for (const key of SHARED_KEYS) next[key] = state[key];
  return hashFor({ ...next, ...extra });
}

// Changes the current state: a key set to null is removed.
export function navigate(change) {
  const next = { ...readState(), ...change };
  for (const [key, value] of Object.entries(change)) if (value === null) delete next[key];
  location.hash = hashFor(next);
}

// The range and instant as API parameters ({} when none is selected).
export function rangeParams(state) {
  const out = {};
  if (state.from !== undefined) out.from = state.from;
  if (state.to !== undefined) out.to = state.to;
  return out;
}

export function hasRange(state) {
  return state.from !== undefined || state.to !== undefined;
}
