// The flamegraph of one dump over the selected range: the metric (leaked,
// live at the peak, allocated, allocations, temporary, live at the selected
// instant), the zoomed frame (a path of child indices) and the search are in
// the URL hash. Frames are drawn by their short name (`label`); hovering
// names a frame in a text line below, the whole demangled name on hover.
// "Library frames" (raw=1) keeps the allocator's frames as leaves. The same
// toolbar serves the call tree (call_tree.js) and caller/callee (callers.js).
import { api } from './api.js';
import { callTree } from './call_tree.js';
import { callerCallee, callersHash } from './callers.js';
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
  const asCallers = state.show === 'callers';
  const flame = asCallers ? null : await api.flame(state.dump,
    { metric, ...rangeParams(state), raw, at: metric === 'live' ? state.at : undefined, invert: inverted ? 1 : undefined });
  const show = metric === 'allocations' || metric === 'temporary' ? integer : (v) => `${integer(v)} bytes`;
  const query = state.q || '';

  const select = el('select', { 'aria-label': 'Metric' },
    METRICS.map(([m, label]) => el('option', { value: m, disabled: m === 'live' && state.at === undefined }, label)));
  select.value = metric;
  select.addEventListener('change', () => navigate({ metric: select.value, zoom: null }));
  const search = el('input', { type: 'search', placeholder: 'Search functions', 'aria-label': 'Search functions', value: query });
  search.addEventListener('change', () => navigate({ q: search.value || null }));
  // Top-down (outermost frames first) or bottom-up (allocating functions
  // first, their callers under them); a flamegraph, the same tree as a
  // table, or one function's callers and callees (callers.js: no order).
  const order = el('select', { 'aria-label': 'Order', disabled: asCallers },
    el('option', { value: '' }, 'top-down'), el('option', { value: '1' }, 'bottom-up'));
  order.value = inverted ? '1' : '';
  order.addEventListener('change', () => navigate({ inv: order.value || null, zoom: null }));
  const as = el('select', { 'aria-label': 'Show as' },
    el('option', { value: '' }, 'flamegraph'), el('option', { value: 'tree' }, 'call tree'),
    el('option', { value: 'callers' }, 'caller/callee'));
  as.value = asTree ? 'tree' : asCallers ? 'callers' : '';
  as.addEventListener('change', () => navigate({ show: as.value || null, zoom: null }));
  const toolbar = (...extra) => el('div', { class: 'toolbar' }, el('label', {}, 'Metric ', select), el('label', {}, 'Order ', order),
    el('label', {}, 'Show ', as), search, labelToggles(state, navigate, { group: false }), ...extra,
    state.at === undefined ? el('span', { class: 'detail' }, 'Click the timeline for “live at the instant”.') : null);
  if (asCallers) {
    fill(root, el('h2', {}, 'Callers and callees'), toolbar(), await callerCallee(state, metric, show));
    return;
  }
  const chain = resolve(flame.root, state.zoom);
  const rects = layout(chain, state.zoom, (n) => n.value);
  const zoomed = chain.length > 1 ? chain[chain.length - 1] : null;
  const info = el('p', { class: 'detail hover-info', id: 'flame-info', 'aria-live': 'polite' }, '\u00a0');
  const summary = query
    ? `“${query}”: ${show(matched(chain[chain.length - 1], query, flame.root))} of ${show(chain[chain.length - 1].value)}`
    : `${show(flame.total)} in all` + (flame.pruned ? `; ${integer(flame.pruned)} frames under 0.05% not drawn` : '');
  const canvas = el('canvas', { role: 'img', 'aria-label': `${inverted ? 'Inverted flamegraph' : 'Flamegraph'} of ${metric}` });
  const body = flame.total === 0 ? el('p', { class: 'empty' }, `No call site has a non-zero ${metric} figure in this range.`)
    : asTree ? callTree(flame.root, flame.total, show, inverted, query, (node) => callersHash(state, node.name)) : canvas;
  fill(root,
    el('h2', {}, 'Flamegraph'),
    toolbar(state.zoom ? el('button', { type: 'button', onclick: () => navigate({ zoom: null }) }, 'Reset zoom') : null,
      zoomed && !asTree ? el('a', { href: callersHash(state, zoomed.name), title: zoomed.name }, `Callers and callees of ${nodeLabel(zoomed)}`) : null),
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
