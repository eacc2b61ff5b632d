// The diff view's table of changed call sites (/api/diff/sites): each site's
// base and new figure of the metric, the signed change and its percent,
// named as Call sites names it, linking to it there (the new dump's, or the
// base's for a vanished site, over that side's range).
import { bytes, el, integer } from './format.js';
import { siteLocation, siteName } from './labels.js';
import { viewHash } from './state.js';

export const TABLE_SORTS = { magnitude: 'largest change', delta: 'growth first', percent: 'percent' };
const BYTE_METRICS = ['leaked', 'peak', 'allocated'];

const sign = (n) => (n > 0 ? '+' : n < 0 ? '−' : '±');

// A figure of the metric: sizes as KiB/MiB with the exact bytes on hover.
function figure(n, isBytes, signed = false) {
  const text = isBytes ? bytes(Math.abs(n)) : integer(Math.abs(n));
  const exact = isBytes ? `${signed ? sign(n) : ''}${integer(Math.abs(n))} bytes` : null;
  return el('span', { title: exact }, signed ? `${sign(n)}${text}` : (isBytes ? bytes(n) : integer(n)));
}

// As memrec diff's text prints it: one decimal, "new" when the base had none.
function percentText(row) {
  if (row.percent === null) return el('span', { title: 'Nothing in base: no percent' }, 'new');
  return `${sign(row.percent)}${Math.abs(row.percent).toFixed(1)}%`;
}

function siteHref(row, answer, state, metric) {
  const side = row.new_site !== null ? 'new' : 'base';
  const range = answer[`${side}_range`];
  return viewHash('sites', {
    dump: String(answer[side]), raw: state.raw,
    from: range.from_ns === 0 ? undefined : String(range.from_ns),
    to: range.to_ns === null ? undefined : String(range.to_ns),
  }, { sort: metric, open: String(row[`${side}_site`]) });
}

function row(r, answer, state, metric, isBytes) {
  const tags = [r.status === 'changed' ? null : el('span', { class: `tag ${r.status}` }, r.status),
    r.runtime ? el('span', { class: 'tag' }, 'runtime') : null];
  return el('tr', { class: `diff-site ${r.status}` },
    el('td', { class: 'fn' }, el('a', { href: siteHref(r, answer, state, metric), title: r.label_full ?? null }, siteName(r)), tags),
    el('td', { class: 'loc' }, siteLocation(r)),
    el('td', { class: 'num' }, figure(r.base, isBytes)),
    el('td', { class: 'num' }, figure(r.new, isBytes)),
    el('td', { class: `num change ${r.change > 0 ? 'grows' : 'shrinks'}` }, figure(r.change, isBytes, true)),
    el('td', { class: 'num' }, percentText(r)));
}

export function diffTable(answer, state, navigate) {
  const metric = answer.metric;
  const isBytes = BYTE_METRICS.includes(metric);
  const sortSelect = el('select', { 'aria-label': 'Order sites by', id: 'diff-sort' },
    Object.entries(TABLE_SORTS).map(([value, text]) => el('option', { value }, text)));
  sortSelect.value = answer.sort;
  sortSelect.addEventListener('change', () => navigate({ sort: sortSelect.value === 'magnitude' ? null : sortSelect.value }));
  const shown = answer.sites.length;
  const count = `${integer(answer.total)} call ${answer.total === 1 ? 'site' : 'sites'} changed in ${metric}` +
    (answer.total > shown ? `; the first ${integer(shown)} by ${TABLE_SORTS[answer.sort]}.` : '.');
  const head = el('tr', {},
    el('th', { scope: 'col' }, 'Function'), el('th', { scope: 'col' }, 'Location'),
    el('th', { scope: 'col', class: 'num' }, 'Base'), el('th', { scope: 'col', class: 'num' }, 'New'),
    // By |change| no column is in order: neither header says so.
    el('th', { scope: 'col', class: 'num', 'aria-sort': answer.sort === 'delta' ? 'descending' : 'none' }, 'Change'),
    el('th', { scope: 'col', class: 'num', 'aria-sort': answer.sort === 'percent' ? 'descending' : 'none' }, 'Percent'));
  return el('section', { class: 'diff-sites', 'aria-labelledby': 'diff-sites-title' },
    el('h3', { id: 'diff-sites-title' }, 'Changed sites'),
    el('div', { class: 'toolbar' }, el('label', {}, 'Order by ', sortSelect),
      el('span', { class: 'detail', id: 'diff-sites-count' }, count)),
    shown === 0 ? el('p', { class: 'empty' }, `No call site changed in ${metric}.`)
      : el('table', { class: 'grid', 'aria-label': 'Changed sites' }, el('thead', {}, head),
        el('tbody', {}, answer.sites.map((r) => row(r, answer, state, metric, isBytes)))));
}
