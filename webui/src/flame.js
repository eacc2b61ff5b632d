// The flamegraph of one dump over the selected range: the metric (leaked,
// live at the peak, allocated, allocations, temporary, live at the selected
// instant), the zoomed frame (a path of child indices) and the search are in
// the URL hash. Frames are drawn by their short name (`label`); hovering
// names a frame in a text line below, the whole demangled name on hover.
// "Library frames" (raw=1) keeps the allocator's frames as leaves.
import { api } from './api.js';
import { callTree } from './call_tree.js';
import { el, fill, integer } from './format.js';
import { canvasWidth, draw, interact, layout, nodeLabel, resolve } from './flame_canvas.js';
import { labelToggles } from './labels.js';
import { rangeParams } from './state.js';

export const METRICS = [
  ['leaked', 'leaked'], ['peak', 'live at the peak'], ['allocated', 'allocated bytes'],
  ['allocations', 'allocations'], ['temporary', 'temporary'], ['live', 'live at the instant'],
];

function hue(name) {
  let h = 0;
  for (let i = 0; i < name.length; i += 1) h = (h * 31 + name.charCodeAt(i)) >>> 0;
  return `hsl(${10 + (h % 40)}, 75%, ${62 + (h % 12)}%)`;
}

// The root is no function: its name ("all") never matches a search.
function matched(node, query, root) {
  // The value of the outermost frames whose name matches: nothing counted twice.
  if (node !== root && node.name.includes(query)) return node.value;
  return (node.children || []).reduce((sum, c) => sum + matched(c, query, root), 0);
}

export function metricOf(state) {
  const metric = METRICS.some(([m]) => m === state.metric) ? state.metric : 'leaked';
  return metric === 'live' && state.at === undefined ? 'leaked' : metric;
}

export async function renderFlame(root, state, navigate) {
  const metric = metricOf(state);
  const raw = state.raw === '1' ? 1 : undefined;
  const inverted = state.inv === '1';
  const asTree = state.show === 'tree';
  const flame = await api.flame(state.dump,
    { metric, ...rangeParams(state), raw, at: metric === 'live' ? state.at : undefined, invert: inverted ? 1 : undefined });
  const show = metric === 'allocations' || metric === 'temporary' ? integer : (v) => `${integer(v)} bytes`;
  const chain = resolve(flame.root, state.zoom);
  const rects = layout(chain, state.zoom, (n) => n.value);
  const query = state.q || '';

  const select = el('select', { 'aria-label': 'Metric' },
    METRICS.map(([m, label]) => el('option', { value: m, disabled: m === 'live' && state.at === undefined }, label)));
  select.value = metric;
  select.addEventListener('change', () => navigate({ metric: select.value, zoom: null }));
  const search = el('input', { type: 'search', placeholder: 'Search functions', 'aria-label': 'Search functions', value: query });
  search.addEventListener('change', () => navigate({ q: search.value || null }));
  const info = el('p', { class: 'detail hover-info', id: 'flame-info', 'aria-live': 'polite' }, '\u00a0');
  const summary = query
    ? `“${query}”: ${show(matched(chain[chain.length - 1], query, flame.root))} of ${show(chain[chain.length - 1].value)}`
    : `${show(flame.total)} in all` + (flame.pruned ? `; ${integer(flame.pruned)} frames under 0.05% not drawn` : '');
  const canvas = el('canvas', { role: 'img', 'aria-label': `${inverted ? 'Inverted flamegraph' : 'Flamegraph'} of ${metric}` });
  // Top-down (outermost frames first) or bottom-up (allocating functions
  // first, their callers under them); a flamegraph or the same tree as a table.
  const order = el('select', { 'aria-label': 'Order' },
    el('option', { value: '' }, 'top-down'), el('option', { value: '1' }, 'bottom-up'));
  order.value = inverted ? '1' : '';
  order.addEventListener('change', () => navigate({ inv: order.value || null, zoom: null }));
  const as = el('select', { 'aria-label': 'Show as' },
    el('option', { value: '' }, 'flamegraph'), el('option', { value: 'tree' }, 'call tree'));
  as.value = asTree ? 'tree' : '';
  as.addEventListener('change', () => navigate({ show: as.value || null, zoom: null }));
  const body = flame.total === 0 ? el('p', { class: 'empty' }, `No call site has a non-zero ${metric} figure in this range.`)
    : asTree ? callTree(flame.root, flame.total, show, inverted, query) : canvas;
  fill(root,
    el('h2', {}, 'Flamegraph'),
    el('div', { class: 'toolbar' }, el('label', {}, 'Metric ', select), el('label', {}, 'Order ', order), el('label', {}, 'Show ', as),
      search, labelToggles(state, navigate, { group: false }),
      state.zoom ? el('button', { type: 'button', onclick: () => navigate({ zoom: null }) }, 'Reset zoom') : null,
      state.at === undefined ? el('span', { class: 'detail' }, 'Click the timeline for “live at the instant”.') : null),
    el('p', { class: 'detail', id: 'flame-summary' }, summary),
    body,
    asTree ? null : info);
  if (flame.total === 0 || asTree) return;
  draw(canvas, rects, canvasWidth(), (node) => (query && node !== flame.root && node.name.includes(query) ? '#d946ef' : hue(node.name)));
  interact(canvas, rects,
    (r) => {
      info.textContent = r ? `${nodeLabel(r.node)}: ${show(r.node.value)} (${((100 * r.node.value) / (flame.total || 1)).toFixed(1)}%)` : '\u00a0';
      info.title = r ? r.node.name : '';
      canvas.title = r ? r.node.name : '';
    },
    (path) => navigate({ zoom: path }));
}
