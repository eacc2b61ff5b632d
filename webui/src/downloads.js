// The Downloads menu: the current dump, range, metric and filters in each
// export format (docs/exports.md). The view's filters go to the server as the
// allocation table's parameters (the flamegraph's search as `search`) and
// memrec export applies them, so a download holds exactly the allocations the
// view selects. Plain links: the server names the file (Content-Disposition),
// so nothing is fetched or built in the page. The diff view offers `memrec
// diff`'s report of its two dumps instead.
import { diffReportUrl, exportUrl } from './api.js';
import { diffPair } from './diff.js';
import { hasRanges, rangeOf, sideRangeText } from './diff_ranges.js';
import { duration, el, fill, integer } from './format.js';
import { METRICS as FLAME_METRICS, metricOf as flameMetricOf } from './flame.js';
import { SORTS } from './sites.js';
import { rangeParams } from './state.js';

const FORMATS = [
  ['pprof', 'pprof (.pb.gz)'], ['collapsed', 'collapsed stacks'], ['svg', 'flamegraph SVG'],
  ['massif', 'massif'], ['heaptrack', 'heaptrack'], ['json', 'report JSON'],
];
// Only these weigh stacks by one metric; the others carry every figure.
const ONE_METRIC = ['collapsed', 'svg'];

// The view's metric (flamegraph metric or sites sort) as export names it;
// null where export has none (live at an instant).
const EXPORT_METRIC = {
  leaked: 'leaked', count: 'leaked-count', peak: 'peak', allocated: 'allocated', allocations: 'allocations',
  temporary: 'temporary', retained: 'runtime-retained', live: null,
};
const SORT_LABELS = { count: 'leaked blocks', retained: 'runtime-retained', live: 'live at the instant', kept: 'kept from the range' };
const FALLBACK_METRIC = 'allocated';

// What the current view weighs by: {shown, metric}; shown is the view's own label.
function metricOf(state) {
  if (state.view === 'flame') {
    const m = flameMetricOf(state);
    return { shown: FLAME_METRICS.find(([key]) => key === m)[1], metric: EXPORT_METRIC[m] };
  }
  if (state.view === 'sites') {
    let sort = SORTS.includes(state.sort) ? state.sort : 'leaked';
    if (sort === 'live' && state.at === undefined) sort = 'leaked';
    return { shown: SORT_LABELS[sort] ?? sort, metric: EXPORT_METRIC[sort] };
  }
  // The allocation table lists allocations: their bytes are its natural weight.
  if (state.view === 'allocations') return { shown: 'allocated', metric: 'allocated' };
  return { shown: 'leaked', metric: 'leaked' };
}

// The view's filters as export parameters, with a phrase for each.
export function filtersOf(state) {
  const params = {};
  const phrases = [];
  const add = (key, value, phrase) => {
    if (value === undefined || value === null || value === '') return;
    params[key] = value;
    phrases.push(phrase);
  };
  if (state.view === 'flame') add('search', state.q, `a frame containing “${state.q}”`);
  if (state.view === 'allocations') {
    // Kept from the range is the range's blocks live at the instant, or at its end: what leaked=1 keeps.
    const kept = state.kept === '1';
    if ((state.alive === '1' || kept) && state.at !== undefined) add('alive_at', state.at, `alive at ${duration(Number(state.at))}`);
    if (state.leaked === '1' || (kept && state.at === undefined)) add('leaked', '1', kept ? 'live at the range\'s end' : 'leaked');
    add('min_size', state.min_size, `at least ${integer(Number(state.min_size))} bytes`);
    add('max_size', state.max_size, `at most ${integer(Number(state.max_size))} bytes`);
    add('min_life_ns', state.min_life, `living at least ${duration(Number(state.min_life))}`);
    add('max_life_ns', state.max_life, `living at most ${duration(Number(state.max_life))}`);
    add('thread', state.thread, `thread #${state.thread}`);
    // A grouped view's site ids are its groups', which memrec export does not know.
    if (state.group !== 'label') add('site', state.site, `site ${state.site}`);
    add('match', state.match, `function or library matching /${state.match}/`);
  }
  return { params, phrases };
}

function diffLinks(menu, state, dumps) {
  const item = (href, format, text) => el('li', {}, el('a', { href, download: '', 'data-format': format,
    onclick: () => { menu.open = false; } }, text));
  const { base, next } = diffPair(state, dumps);
  const params = { base, new: next, ...rangeOf(state) };
  fill(menu,
    el('summary', {}, 'Downloads'),
    el('div', { class: 'menu' },
      el('p', { class: 'detail', id: 'downloads-scope' }, `memrec diff of dump ${base} (base) and dump ${next} (new), ` +
        (hasRanges(state) ? `base ${sideRangeText(state, 'base', duration)}, new ${sideRangeText(state, 'new', duration)}` : 'whole runs')),
      el('ul', { role: 'list' },
        item(diffReportUrl({ ...params, format: 'json' }), 'diff-json', 'diff report JSON'),
        item(diffReportUrl({ ...params, format: 'text' }), 'diff-text', 'diff report text'))));
}

export function downloadLinks(menu, state, dumps) {
  if (state.view === 'diff') {
    diffLinks(menu, state, dumps);
    return;
  }
  const { shown, metric } = metricOf(state);
  const { params: filters, phrases } = filtersOf(state);
  const ranged = state.from !== undefined || state.to !== undefined;
  const filtered = phrases.length > 0;
  const link = ([format, label]) => {
    // heaptrack's file holds the whole event order: memrec export refuses a range or filter for it.
    if (format === 'heaptrack' && (ranged || filtered)) {
      return el('li', {}, el('a', { href: exportUrl(state.dump, { format }), download: '', 'data-format': format,
        onclick: () => { menu.open = false; } }, `${label} (whole recording, no filters)`));
    }
    const one = ONE_METRIC.includes(format);
    const params = { format, metric: one ? (metric ?? FALLBACK_METRIC) : undefined, ...rangeParams(state), ...filters };
    const text = one && !metric ? `${label} (${FALLBACK_METRIC} bytes)` : label;
    return el('li', {}, el('a', { href: exportUrl(state.dump, params), download: '', 'data-format': format,
      onclick: () => { menu.open = false; } }, text));
  };
  fill(menu,
    el('summary', {}, 'Downloads'),
    el('div', { class: 'menu' },
      el('p', { class: 'detail', id: 'downloads-scope' }, `Dump ${state.dump}, ${metric ?? shown}`,
        ranged ? ', selected range' : ', whole recording'),
      filtered ? el('p', { class: 'detail', id: 'downloads-filters' }, `Only allocations ${phrases.join(', ')}.`) : null,
      metric ? null : el('p', { class: 'note', role: 'note', id: 'downloads-metric-note' },
        `Exports have no “${shown}” metric: collapsed stacks and the SVG weigh ${FALLBACK_METRIC} bytes instead.`),
      el('ul', { role: 'list' }, FORMATS.map(link))));
}
