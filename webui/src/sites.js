// Call sites over the selected range: a server-sorted, paged table (leaked
// bytes, leaked blocks, live at the peak, bytes and calls allocated, live at
// the selected instant), each row with a sparkline of its live bytes; a row
// expands to a chart of its live bytes and blocks over the range and its whole
// backtrace (a grouped one to its paths too). Sort, page, the open row and the
// naming toggles (labels.js) are in the hash.
import { api } from './api.js';
import { backtrace } from './backtrace.js';
import { buildingNote, bytes, el, fill, integer } from './format.js';
import { keptNote } from './kept.js';
import { refusedNote, rangeOrWhole, wholeRun } from './refused.js';
import { labelParams, labelToggles, siteLocation, siteName } from './labels.js';
import { siteChart } from './site_chart.js';
import { sparkline } from './sparkline.js';
import { rangeParams, viewHash } from './state.js';

const COLUMNS = [
  { sort: 'leaked', label: 'Leaked bytes', value: (s) => s.leaked_bytes, bytes: true },
  { sort: 'count', label: 'Leaked blocks', value: (s) => s.leaked_count },
  { sort: 'peak', label: 'At peak', value: (s) => s.peak_bytes, bytes: true },
  { sort: 'allocated', label: 'Allocated bytes', value: (s) => s.allocated_bytes, bytes: true },
  { sort: 'allocations', label: 'Allocations', value: (s) => s.allocations },
];
const LIVE = { sort: 'live', label: 'Live at instant', value: (s) => s.live_bytes, bytes: true };
// The growth of a site's live bytes over the range (docs/analyzer.md "Growth"):
// its slope a minute and the fit's R², the whole fit on hover.
function growthText(g) {
  if (!g) return '—';
  const sign = g.slope_bytes_per_minute < 0 ? '' : '+';
  return `${sign}${bytes(Math.round(g.slope_bytes_per_minute))}/min · R² ${g.r2.toFixed(2)}`;
}
function growthTitle(g) {
  if (!g) return null;
  return `${integer(Math.round(g.slope_bytes_per_minute))} bytes a minute, R² ${g.r2.toFixed(3)}, ` +
    `grew in ${Math.round(g.grew_share * 100)} % of the range, net ${integer(g.net_bytes)} bytes; ` +
    `score ${integer(Math.round(g.score))} (slope × R² × share grown)`;
}

// Sorts without a column of their own: a site's temporary allocations, the
// runtime's retained bytes (its caches, listed apart from leaks), growth, and
// what the range kept: its allocations still live at the instant, or at the
// range's end (`memrec report --retained FROM..TO --at AT`).
const EXTRA = {
  temporary: { sort: 'temporary', label: 'Temporary', value: (s) => s.temporary },
  retained: { sort: 'retained', label: 'Runtime retained', value: (s) => s.runtime_retained_bytes, bytes: true },
  growth: { sort: 'growth', label: 'Growth', text: (s) => growthText(s.growth), title: (s) => growthTitle(s.growth) },
  kept: { sort: 'kept', label: 'Kept from the range', text: (s) => bytes(s.kept_bytes),
    title: (s) => `${integer(s.kept_bytes)} bytes in ${integer(s.kept_count)} ${s.kept_count === 1 ? 'block' : 'blocks'}` },
};
export const SORTS = ['leaked', 'count', 'peak', 'allocated', 'allocations', 'live', 'temporary', 'retained', 'growth', 'kept'];
const SORT_NAMES = {
  leaked: 'leaked bytes', count: 'leaked blocks', peak: 'bytes at the peak', allocated: 'allocated bytes',
  allocations: 'allocations', live: 'live at the instant', temporary: 'temporary allocations', retained: 'runtime retained',
  growth: 'growth of live bytes', kept: 'kept from the range',
};

function sortSelect(sort, state, navigate) {
  const select = el('select', { 'aria-label': 'Sort by', id: 'sites-sort' },
    SORTS.filter((s) => s !== 'live' || state.at !== undefined).map((s) => el('option', { value: s }, SORT_NAMES[s])));
  select.value = sort;
  select.addEventListener('change', () => navigate({ sort: select.value, open: null, offset: null }));
  return el('label', {}, 'Sort by ', select);
}
const PAGE = 100;
const SPARK = 32;

// From an open row to the same site elsewhere: its allocations one by one
// (the table filtered to it; sorted by kept, to the blocks it kept) and its
// frames in the flamegraph (searched by its label, the metric following the
// sort where the flamegraph has it).
function siteLinks(site, state, sort) {
  const metric = ['leaked', 'peak', 'allocated', 'allocations', 'temporary', 'live'].includes(sort) ? sort : 'allocated';
  const allocations = sort === 'kept'
    ? el('a', { href: viewHash('allocations', state, { site: String(site.id), kept: '1' }) }, 'The blocks it kept')
    : el('a', { href: viewHash('allocations', state, { site: String(site.id) }) },
      `Its ${integer(site.allocations)} ${site.allocations === 1 ? 'allocation' : 'allocations'}`);
  return el('p', { class: 'site-links' }, allocations,
    ' · ',
    el('a', { href: viewHash('flame', state, { metric, q: site.label ?? site.top?.label }) }, 'In the flamegraph'));
}

const CHART_BUCKETS = 200;

// The site's chart, or why there is none (its series needs the allocation table).
async function chartOf(state, id, navigate) {
  try {
    const series = await api.siteSeries(state.dump, id, { ...rangeParams(state), ...labelParams(state), buckets: CHART_BUCKETS });
    return siteChart(series, state.at === undefined ? undefined : Number(state.at), {
      onRange: (from, to) => navigate({ from: String(from), to: String(to) }),
      onInstant: (at) => navigate({ at: String(at) }),
    });
  } catch (e) {
    return { box: el('p', { class: 'error', role: 'alert' }, `No chart: ${e.message}`), draw: () => {} };
  }
}

// Fills the open row's cell before the table is shown (a live update then
// swaps in a row as tall as the one it replaces, so the scroll stays); its
// chart is drawn once shown. With a range the server refuses, the table is
// the whole run's, and so is the row.
async function fillBacktrace(cell, state, id, sort, navigate, shown) {
  try {
    const [site, chart] = await Promise.all([
      api.site(state.dump, id, { ...rangeParams(state), ...labelParams(state) }), chartOf(state, id, navigate)]);
    cell.replaceChildren(siteLinks({ ...site, id }, state, sort), chart.box,
      backtrace(site.frames, site.truncated, site.paths, site.path_count));
    shown(chart.draw);
  } catch (e) {
    cell.replaceChildren(el('p', { class: 'error', role: 'alert' }, e.message));
  }
}

function row(site, columns, state, navigate, sort, filling) {
  const open = state.open === String(site.id);
  const tr = el('tr', { class: 'site', 'data-site': site.id, 'aria-expanded': open ? 'true' : 'false', tabindex: 0 },
    el('td', { class: 'fn' }, siteName(site, site.runtime ? el('span', { class: 'tag' }, 'runtime') : null,
      site.path_count ? el('span', { class: 'tag', title: 'Stacks merged at this line' }, `${integer(site.path_count)} paths`) : null)),
    el('td', { class: 'loc' }, siteLocation(site)),
    columns.map((c) => c.text
      ? el('td', { class: 'num', title: c.title(site) }, c.text(site))
      : el('td', { class: 'num', title: c.bytes ? `${integer(c.value(site))} bytes` : null },
        c.bytes ? bytes(c.value(site)) : integer(c.value(site)))),
    el('td', { class: 'spark-cell' }, site.spark ? sparkline(site.spark) : null));
  const toggle = () => navigate({ open: open ? null : String(site.id) });
  tr.addEventListener('click', toggle);
  tr.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); toggle(); } });
  if (!open) return [tr];
  const cell = el('td', { colspan: columns.length + 3 });
  filling.push(cell);
  return [tr, el('tr', { class: 'detail-row' }, cell)];
}

function pager(answer, navigate) {
  const { offset, total } = answer;
  if (total <= PAGE && offset === 0) return null;
  const last = Math.min(offset + answer.sites.length, total);
  return el('nav', { class: 'pager', 'aria-label': 'Pages of call sites' },
    el('button', { type: 'button', disabled: offset === 0, onclick: () => navigate({ offset: offset - PAGE > 0 ? String(offset - PAGE) : null, open: null }) }, '‹ Previous'),
    el('span', { id: 'sites-page' }, `${integer(offset + 1)}–${integer(last)} of ${integer(total)}`),
    el('button', { type: 'button', disabled: last >= total, onclick: () => navigate({ offset: String(offset + PAGE), open: null }) }, 'Next ›'));
}

export async function renderSites(root, state, navigate, context) {
  let sort = SORTS.includes(state.sort) ? state.sort : 'leaked';
  if (sort === 'live' && state.at === undefined) sort = 'leaked';
  const offset = /^\d+$/.test(state.offset ?? '') ? Number(state.offset) : 0;
  const columns = [...COLUMNS, ...(state.at !== undefined ? [LIVE] : []), ...(EXTRA[sort] ? [EXTRA[sort]] : [])];
  const { answer, refused } = await rangeOrWhole(state, (s) =>
    api.sites(s.dump, { sort, offset, limit: PAGE, ...rangeParams(s), ...labelParams(s), at: s.at, spark: SPARK }));
  const kept = answer.kept;
  const head = el('tr', {},
    el('th', { scope: 'col' }, 'Function'), el('th', { scope: 'col' }, 'Location'),
    columns.map((c) => el('th', { scope: 'col', class: 'num', 'aria-sort': c.sort === sort ? 'descending' : 'none' },
      el('button', { type: 'button', onclick: () => navigate({ sort: c.sort, open: null, offset: null }) }, c.label))),
    el('th', { scope: 'col', title: 'Live bytes of the site over the range, scaled to its own highest' }, 'Live over time'));
  // The header stays when no row does, so the sort can always be changed.
  const filling = [];  // the open row's cell
  const body = el('tbody', {}, answer.sites.length === 0
    ? el('tr', {}, el('td', { class: 'empty', colspan: columns.length + 3 }, 'No call site has a non-zero figure in this range.'))
    : answer.sites.map((s) => row(s, columns, state, navigate, sort, filling)));
  const shown = (fn) => (context?.whenShown ? context.whenShown(fn) : fn());
  await Promise.all(filling.map((cell) => fillBacktrace(cell, refused ? wholeRun(state) : state, state.open, sort, navigate, shown)));
  fill(root, [
    el('h2', {}, 'Call sites'),
    el('div', { class: 'toolbar' }, sortSelect(sort, state, navigate), labelToggles(state, navigate)),
    el('p', { class: 'detail', id: 'sites-count' },
      `${integer(answer.total)} ${answer.total === 1 ? 'site' : 'sites'} with a non-zero figure, sorted by ${SORT_NAMES[sort]}.` +
      (state.at === undefined ? ' Click the timeline to add live bytes at an instant.' : '') + ' Click a row for its chart and backtrace.'),
    refused ? refusedNote(refused) : null,
    kept ? keptNote(kept) : null,
    // Sparklines come from the allocation table, which a large dump gets after the page.
    answer.table?.state === 'building' ? buildingNote('Sparklines appear', answer.table.percent) : null,
    el('table', { class: 'sites grid' }, el('thead', {}, head), body),
    pager(answer, navigate)])
  if (answer.table?.state === 'building') context?.whenBuilt?.();
}
