// Call sites: a table sortable by leaked bytes, leaked count, peak
// contribution, bytes and calls allocated; a row expands to its whole
// symbolized backtrace. Sort and the open row live in the URL hash.
import { api } from './api.js';
import { bytes, el, integer, location } from './format.js';

const COLUMNS = [
  { sort: 'leaked', label: 'Leaked bytes', value: (s) => s.leaked_bytes, bytes: true },
  { sort: 'count', label: 'Leaked blocks', value: (s) => s.leaked_count },
  { sort: 'peak', label: 'At peak', value: (s) => s.peak_bytes, bytes: true },
  { sort: 'allocated', label: 'Allocated bytes', value: (s) => s.allocated_bytes, bytes: true },
  { sort: 'allocations', label: 'Allocations', value: (s) => s.allocations },
];
export const SORTS = COLUMNS.map((c) => c.sort).concat(['temporary', 'retained']);
const PAGE = 200;

function frameItem(f) {
  return el('li', { class: f.inlined ? 'frame inlined' : 'frame' },
    el('span', { class: 'fn' }, f.function ?? f.label),
    f.inlined ? el('span', { class: 'tag' }, 'inlined') : null,
    f.file ? el('span', { class: 'loc' }, location(f)) : null,
    f.module ? el('span', { class: 'module' }, f.module) : null);
}

async function fillBacktrace(cell, state, id) {
  cell.replaceChildren(el('p', { class: 'loading' }, 'Loading the backtrace…'));
  try {
    const site = await api.site(state.dump, id);
    cell.replaceChildren(el('ol', { class: 'backtrace', 'aria-label': 'Backtrace, innermost first' }, site.frames.map(frameItem)));
    if (site.truncated) cell.append(el('p', { class: 'detail' }, 'The recorder cut this stack at its maximum depth.'));
  } catch (e) {
    cell.replaceChildren(el('p', { class: 'error', role: 'alert' }, e.message));
  }
}

function row(site, state, navigate) {
  const open = state.open === String(site.id);
  const top = site.top || {};
  const tr = el('tr', { class: 'site', 'data-site': site.id, 'aria-expanded': open ? 'true' : 'false', tabindex: 0 },
    el('td', { class: 'fn' }, top.label ?? '?', site.runtime ? el('span', { class: 'tag' }, 'runtime') : null),
    el('td', { class: 'loc' }, location(top) ?? ''),
    COLUMNS.map((c) => el('td', { class: 'num', title: c.bytes ? bytes(c.value(site)) : null }, integer(c.value(site)))));
  const toggle = () => navigate({ open: open ? null : String(site.id) });
  tr.addEventListener('click', toggle);
  tr.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); toggle(); } });
  if (!open) return [tr];
  const cell = el('td', { colspan: COLUMNS.length + 2 });
  fillBacktrace(cell, state, site.id);
  return [tr, el('tr', { class: 'detail-row' }, cell)];
}

export async function renderSites(root, state, navigate) {
  const sort = SORTS.includes(state.sort) ? state.sort : 'leaked';
  const answer = await api.sites(state.dump, sort, 0, PAGE);
  const head = el('tr', {},
    el('th', { scope: 'col' }, 'Function'), el('th', { scope: 'col' }, 'Location'),
    COLUMNS.map((c) => el('th', { scope: 'col', class: 'num', 'aria-sort': c.sort === sort ? 'descending' : 'none' },
      el('button', { type: 'button', onclick: () => navigate({ sort: c.sort, open: null }) }, c.label))));
  const body = el('tbody', {}, answer.sites.map((s) => row(s, state, navigate)));
  root.replaceChildren(
    el('h2', {}, 'Call sites'),
    el('p', { class: 'detail' },
      `${integer(answer.total)} sites with a non-zero figure, sorted by ${sort}` +
      (answer.total > PAGE ? `; the first ${PAGE} are shown.` : '.') + ' Click a row for its backtrace.'),
    answer.sites.length === 0
      ? el('p', { class: 'empty' }, 'No call site has a non-zero figure for this sort.')
      : el('table', { class: 'sites' }, el('thead', {}, head), body));
}
