// Caller/callee of one function, as heaptrack_gui's tab: the functions of the
// flamegraph's frames with their self value (they are the allocating frame:
// the call trees' bottom-up roots) and inclusive value (every site whose
// stack holds them, once however deep the recursion), and for the selected
// one (`fn` in the hash: its whole name) its direct callers and callees. The
// flamegraph's metric, range, search and "Library frames" apply.
import { api } from './api.js';
import { el, integer } from './format.js';
import { nodeLabel } from './flame_canvas.js';
import { functionName } from './labels.js';
import { rangeParams, viewHash } from './state.js';

const LIMIT = 50;
const MAX_NAME_URL = 6000;

const share = (v, of) => `${((100 * v) / (of || 1)).toFixed(1)}%`;

// A name's key as the server computes it (reports/caller_callee.h
// name_key): FNV-1a, 64 bits, of its UTF-8 bytes, as 16 hex digits.
export function nameKey(name) {
  let h = 0xcbf29ce484222325n;
  for (const b of new TextEncoder().encode(name)) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return h.toString(16).padStart(16, '0');
}

// A name longer than this once percent-encoded is asked for by its key: the
// server reads request lines of up to 8 KiB (the hash, never sent, holds any).
const tooLong = (name) => encodeURIComponent(name).length > MAX_NAME_URL;

// The hash that selects `name` in this view.
export function callersHash(state, name) {
  return viewHash('flame', state, { metric: state.metric, q: state.q, show: 'callers', fn: name });
}

function nameLink(state, row) {
  return el('a', { href: callersHash(state, row.name) }, functionName(nodeLabel(row), row.name));
}

function linkTable(state, label, head, links, inclusive, show) {
  if (links.length === 0) return el('p', { class: 'detail' }, `No ${head.toLowerCase()}.`);
  return el('table', { class: 'sites grid callers', 'aria-label': label },
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, head), el('th', { scope: 'col', class: 'num' }, 'Value'),
      el('th', { scope: 'col', class: 'num', title: 'Of the selected function\'s inclusive value' }, 'Share'))),
    el('tbody', {}, links.map((l) => el('tr', {}, el('td', { class: 'fn' }, nameLink(state, l)),
      el('td', { class: 'num' }, show(l.value)), el('td', { class: 'num' }, share(l.value, inclusive))))));
}

function selectedPanel(state, answer, show) {
  const f = answer.selected;
  const figure = (id, title, value) => el('section', { class: 'card', 'aria-label': title }, el('h3', {}, title),
    el('div', { class: 'value', id }, show(value)), el('div', { class: 'detail' }, `${share(value, answer.total)} of ${show(answer.total)}`));
  return el('section', { class: 'caller-callee', 'aria-label': 'Selected function' },
    el('h3', {}, functionName(f.name === null ? state.fn : nodeLabel(f), f.name ?? state.fn)),
    el('div', { class: 'cards' }, figure('fn-self', 'Self (allocating frame)', f.self), figure('fn-inclusive', 'Inclusive', f.inclusive)),
    f.inclusive === 0 ? el('p', { class: 'detail', id: 'fn-absent' },
      `No call site with a non-zero ${answer.metric} figure in this range has this function on its stack.`) : null,
    el('div', { class: 'caller-callee-tables' },
      el('div', {}, el('h4', {}, 'Called by'), linkTable(state, 'Callers of the selected function', 'Caller', f.callers, f.inclusive, show)),
      el('div', {}, el('h4', {}, 'Calls'), linkTable(state, 'Callees of the selected function', 'Callee', f.callees, f.inclusive, show))));
}

function functionTable(state, answer, show) {
  const rows = answer.functions.map((f) => el('tr', { 'aria-selected': f.name === state.fn ? 'true' : null },
    el('td', { class: 'fn' }, nameLink(state, f)),
    el('td', { class: 'num' }, show(f.self)), el('td', { class: 'num' }, show(f.inclusive))));
  return el('table', { class: 'sites grid callers', 'aria-label': 'Functions by inclusive value' },
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Function'),
      el('th', { scope: 'col', class: 'num', title: 'Sites whose allocating frame is the function' }, 'Self'),
      el('th', { scope: 'col', class: 'num', title: 'Sites whose stack holds the function, each once' }, 'Inclusive'))),
    el('tbody', {}, rows));
}

// The view's body below the flamegraph's toolbar; `show` formats a value of `metric`.
export async function callerCallee(state, metric, show) {
  const byKey = state.fn !== undefined && tooLong(state.fn);
  const answer = await api.functions(state.dump, {
    metric, ...rangeParams(state), raw: state.raw === '1' ? 1 : undefined, at: metric === 'live' ? state.at : undefined,
    search: state.q || undefined, name: byKey ? undefined : state.fn, key: byKey ? nameKey(state.fn) : undefined, limit: LIMIT,
  });
  const more = answer.matched - answer.functions.length;
  return [
    answer.selected ? selectedPanel(state, answer, show)
      : el('p', { class: 'detail' }, 'Pick a function: its name here, in the call tree, or a zoomed flamegraph frame\'s link.'),
    el('h3', {}, state.q ? `Functions matching “${state.q}”` : 'Functions'),
    answer.functions.length === 0 ? el('p', { class: 'empty' }, `No function has a non-zero ${metric} figure${state.q ? ' and matches the search' : ''}.`)
      : functionTable(state, answer, show),
    more > 0 ? el('p', { class: 'detail' }, `${integer(more)} more: narrow them with the search.`) : null,
  ];
}
