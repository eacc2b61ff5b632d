// The flamegraph: call sites as one tree (outermost frame on top), drawn on a
// canvas. Click a frame to zoom to it, click a frame above to zoom out; the
// metric, the zoomed frame (a path of child indices) and the search are in the
// URL hash. Names are drawn with fillText and shown with textContent only.
import { api } from './api.js';
import { bytes, el, integer } from './format.js';

export const METRICS = ['leaked', 'peak', 'allocated', 'allocations', 'temporary'];
const ROW = 18;

function hue(name) {
  let h = 0;
  for (let i = 0; i < name.length; i += 1) h = (h * 31 + name.charCodeAt(i)) >>> 0;
  return `hsl(${10 + (h % 40)}, 75%, ${62 + (h % 12)}%)`;
}

// The node at `path` ("0.2.1": child indices from the root) and its ancestors.
function resolve(root, path) {
  const chain = [root];
  for (const part of (path || '').split('.').filter((p) => p !== '')) {
    const next = chain[chain.length - 1].children[Number(part)];
    if (!next) break;
    chain.push(next);
  }
  return chain;
}

function layout(chain, paths) {
  const rects = [];
  chain.slice(0, -1).forEach((node, depth) => rects.push({ node, depth, x: 0, w: 1, path: paths[depth], ancestor: true }));
  const walk = (node, depth, x, w, path) => {
    rects.push({ node, depth, x, w, path });
    let cx = x;
    node.children.forEach((child, i) => {
      const cw = node.value > 0 ? (w * child.value) / node.value : 0;
      walk(child, depth + 1, cx, cw, path === '' ? String(i) : `${path}.${i}`);
      cx += cw;
    });
  };
  walk(chain[chain.length - 1], chain.length - 1, 0, 1, paths[chain.length - 1]);
  return rects;
}

function draw(canvas, rects, query, width) {
  const depth = rects.reduce((m, r) => Math.max(m, r.depth), 0) + 1;
  const ratio = window.devicePixelRatio || 1;
  canvas.width = width * ratio;
  canvas.height = depth * ROW * ratio;
  canvas.style.width = `${width}px`;
  canvas.style.height = `${depth * ROW}px`;
  const ctx = canvas.getContext('2d');
  ctx.scale(ratio, ratio);
  ctx.font = '12px ui-monospace, monospace';
  ctx.textBaseline = 'middle';
  for (const r of rects) {
    const x = r.x * width;
    const w = r.w * width;
    if (w < 0.5) continue;
    const match = query && r.node.name.includes(query);
    ctx.fillStyle = match ? '#d946ef' : r.ancestor ? '#d9dde3' : hue(r.node.name);
    ctx.fillRect(x, r.depth * ROW, Math.max(w - 1, 0.5), ROW - 1);
    if (w > 30) {
      ctx.save();
      ctx.beginPath();
      ctx.rect(x, r.depth * ROW, w - 4, ROW);
      ctx.clip();
      ctx.fillStyle = '#1d232b';
      ctx.fillText(r.node.name, x + 3, r.depth * ROW + ROW / 2);
      ctx.restore();
    }
  }
}

function hit(rects, canvas, event) {
  const box = canvas.getBoundingClientRect();
  const fx = (event.clientX - box.left) / box.width;
  const depth = Math.floor((event.clientY - box.top) / ROW);
  return rects.find((r) => r.depth === depth && fx >= r.x && fx < r.x + r.w);
}

function matched(node, query) {
  // The value of the outermost frames whose name matches: nothing counted twice.
  if (node.name.includes(query)) return node.value;
  return node.children.reduce((sum, c) => sum + matched(c, query), 0);
}

export async function renderFlame(root, state, navigate) {
  const metric = METRICS.includes(state.metric) ? state.metric : 'leaked';
  const flame = await api.flame(state.dump, metric);
  const show = metric === 'allocations' || metric === 'temporary' ? integer : (v) => `${integer(v)} bytes`;
  const chain = resolve(flame.root, state.zoom);
  const paths = chain.map((_, i) => (state.zoom || '').split('.').filter((p) => p !== '').slice(0, i).join('.'));
  const rects = layout(chain, paths);
  const query = state.q || '';

  const select = el('select', { 'aria-label': 'Metric' }, METRICS.map((m) => el('option', { value: m }, m)));
  select.value = metric;
  select.addEventListener('change', () => navigate({ metric: select.value, zoom: null }));
  const search = el('input', { type: 'search', placeholder: 'Search functions', 'aria-label': 'Search functions', value: query });
  search.addEventListener('change', () => navigate({ q: search.value || null }));
  const info = el('p', { class: 'detail', id: 'flame-info', 'aria-live': 'polite' });
  const summary = query
    ? `“${query}”: ${show(matched(chain[chain.length - 1], query))} of ${show(chain[chain.length - 1].value)}`
    : `${show(flame.total)} in all` + (flame.pruned ? `; ${integer(flame.pruned)} frames under 0.05% not drawn` : '');
  const canvas = el('canvas', { role: 'img', 'aria-label': `Flamegraph of ${metric}` });
  root.replaceChildren(
    el('h2', {}, 'Flamegraph'),
    el('div', { class: 'toolbar' }, el('label', {}, 'Metric ', select), search,
      state.zoom ? el('button', { type: 'button', onclick: () => navigate({ zoom: null }) }, 'Reset zoom') : null),
    el('p', { class: 'detail', id: 'flame-summary' }, summary),
    flame.total === 0 ? el('p', { class: 'empty' }, `No call site has a non-zero ${metric} figure.`) : canvas,
    info);
  if (flame.total === 0) return;
  const width = Math.max(400, document.getElementById('view').clientWidth - 40);
  draw(canvas, rects, query, width);
  canvas.addEventListener('mousemove', (e) => {
    const r = hit(rects, canvas, e);
    info.textContent = r ? `${r.node.name}: ${show(r.node.value)} (${((100 * r.node.value) / (flame.total || 1)).toFixed(1)}%)` : '';
  });
  canvas.addEventListener('click', (e) => {
    const r = hit(rects, canvas, e);
    if (r) navigate({ zoom: r.path || null });
  });
}
