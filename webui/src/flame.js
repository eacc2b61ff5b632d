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
import { refusedNote, rangeOrWhole } from './refused.js';
import { hashFor, rangeParams } from './state.js';

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

// The zoom last drawn: its path and the names along it. The zoom is a path
// of child indices, and a live dump's tree gains frames between updates, so
// a path drawn before is found again by its names (zoomByNames).
let drawnZoom = null;

// The path in `root` whose names are `names` (after the root's), or null.
function pathOf(root, names) {
  const parts = [];
  let node = root;
  for (const name of names) {
    const i = (node.children || []).findIndex((c) => c.name === name);
    if (i < 0) return null;
    parts.push(i);
    node = node.children[i];
  }
  return parts.join('.');
}

// The zoom of `state` in `root`: the same frames as drawn last on this
// dump and view, put back in the hash (without a new history entry) when
// their indices moved.
function zoomByNames(root, state, key) {
  if (!state.zoom || drawnZoom?.key !== key || drawnZoom.path !== state.zoom) return state.zoom;
  const names = resolve(root, state.zoom).slice(1).map((n) => n.name);
  if (names.length === drawnZoom.names.length && names.every((n, i) => n === drawnZoom.names[i])) return state.zoom;
  const path = pathOf(root, drawnZoom.names);
  if (path === null) return state.zoom;
  history.replaceState(null, '', hashFor({ ...state, zoom: path }));
  return path;
}

export async function renderFlame(root, state, navigate) {
  const metric = metricOf(state);
  const raw = state.raw === '1' ? 1 : undefined;
  const inverted = state.inv === '1';
  const asTree = state.show === 'tree';
  const asCallers = state.show === 'callers';
  // A followed dump may refuse ranges (refused.js): the whole run's flamegraph then.
  const { answer: flame, refused } = asCallers ? { answer: null, refused: null } : await rangeOrWhole(state, (s) =>
    api.flame(s.dump, { metric, ...rangeParams(s), raw, at: metric === 'live' ? s.at : undefined, invert: inverted ? 1 : undefined }));
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
  const key = JSON.stringify([state.dump, metric, inverted, raw, state.from, state.to, state.at]);
  state = { ...state, zoom: zoomByNames(flame.root, state, key) };
  const chain = resolve(flame.root, state.zoom);
  drawnZoom = state.zoom ? { key, path: state.zoom, names: chain.slice(1).map((n) => n.name) } : null;
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
    refused ? refusedNote(refused) : null,
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
