// The overview's summary lists, as heaptrack_gui's first page: the top call
// sites by leaked bytes, bytes live at the peak, allocations and temporary
// allocations over the range, each linking to its row in Call sites (sorted
// the same way, its backtrace open), so the first page names the guilty code.
import { api } from './api.js';
import { bytes, el, integer } from './format.js';
import { labelParams, siteLocation, siteName } from './labels.js';
import { rangeParams, viewHash } from './state.js';

const TOP = 5;
const LISTS = [
  { sort: 'leaked', title: 'Largest leaks', value: (s) => (s.runtime ? 0 : s.leaked_bytes), bytes: true, empty: 'Nothing leaked.' },
  { sort: 'peak', title: 'Most at the peak', value: (s) => s.peak_bytes, bytes: true, empty: 'Nothing was live.' },
  { sort: 'allocations', title: 'Most allocation calls', value: (s) => s.allocations, empty: 'No allocation.' },
  { sort: 'temporary', title: 'Most temporaries', value: (s) => s.temporary, empty: 'No temporary allocation.' },
];

function list(spec, answer, state) {
  const rows = answer.sites.filter((s) => spec.value(s) > 0).slice(0, TOP);
  const id = `top-${spec.sort}`;
  return el('section', { class: 'top-list', 'aria-labelledby': id },
    el('h3', { id }, spec.title),
    rows.length === 0 ? el('p', { class: 'detail' }, spec.empty) : el('ol', {}, rows.map((s) => {
      const value = spec.value(s);
      return el('li', {},
        el('a', { href: viewHash('sites', state, { sort: spec.sort, open: String(s.id) }), title: s.label_full ?? null },
          siteName(s)),
        el('span', { class: 'loc' }, ' ', siteLocation(s)),
        el('span', { class: 'num', title: spec.bytes ? `${integer(value)} bytes` : null }, spec.bytes ? bytes(value) : integer(value)));
    })));
}

export async function topSites(state) {
  const params = { limit: TOP, ...rangeParams(state), ...labelParams(state) };
  const answers = await Promise.all(LISTS.map((spec) => api.sites(state.dump, { ...params, sort: spec.sort })));
  return el('div', { class: 'top-lists', id: 'top-sites' }, LISTS.map((spec, i) => list(spec, answers[i], state)));
}
