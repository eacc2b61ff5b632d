// The Downloads menu: the current dump, range and metric in each export
// format (docs/exports.md). Plain links: the server names the file
// (Content-Disposition), so nothing is fetched or built in the page.
import { exportUrl } from './api.js';
import { el } from './format.js';
import { rangeParams } from './state.js';

const FORMATS = [
  ['pprof', 'pprof (.pb.gz)'], ['collapsed', 'collapsed stacks'], ['svg', 'flamegraph SVG'],
  ['massif', 'massif'], ['heaptrack', 'heaptrack'], ['json', 'report JSON'],
];
const EXPORT_METRICS = ['allocated', 'allocations', 'leaked', 'peak'];

// The metric the current view shows, if an export has it.
function metricOf(state) {
  const shown = state.view === 'flame' ? (state.metric ?? 'leaked') : state.view === 'sites' ? (state.sort ?? 'leaked') : 'leaked';
  return EXPORT_METRICS.includes(shown) ? shown : undefined;
}

export function downloadLinks(menu, state) {
  const metric = metricOf(state);
  const params = { metric, ...rangeParams(state) };
  // heaptrack's format needs the whole event order: memrec export refuses a range for it.
  const ranged = state.from !== undefined || state.to !== undefined;
  const link = ([format, label]) => {
    const whole = format === 'heaptrack' && ranged;
    return el('li', {}, el('a', { href: exportUrl(state.dump, { format, ...(whole ? {} : params) }), download: '', 'data-format': format,
      onclick: () => { menu.open = false; } },
      whole ? `${label} (whole recording)` : label));
  };
  const list = el('ul', { role: 'list' }, FORMATS.map(link));
  menu.replaceChildren(
    el('summary', {}, 'Downloads'),
    el('div', { class: 'menu' },
      el('p', { class: 'detail' }, `Dump ${state.dump}`, metric ? `, ${metric}` : '',
        ranged ? ', selected range' : ', whole recording'),
      list));
}
