// The diff flamegraph of two loaded dumps (`base` and `new` in the hash): a
// frame is as wide as the larger of its two values and red where the new dump
// has more, blue where it has less, grey where they are equal.
import { api } from './api.js';
import { el, fill, integer } from './format.js';
import { canvasWidth, draw, interact, layout, nodeLabel, resolve } from './flame_canvas.js';
import { labelToggles } from './labels.js';

const DIFF_METRICS = ['leaked', 'peak', 'allocated', 'allocations', 'temporary'];
const size = (n) => Math.max(n.base || 0, n.new || 0);

function colorer(root) {
  let most = 0;
  const walk = (n) => {
    most = Math.max(most, Math.abs((n.new || 0) - (n.base || 0)));
    (n.children || []).forEach(walk);
  };
  walk(root);
  return (n) => {
    const delta = (n.new || 0) - (n.base || 0);
    if (delta === 0 || most === 0) return 'hsl(220, 8%, 86%)';
    const strength = 0.25 + 0.75 * (Math.abs(delta) / most);
    return delta > 0 ? `hsl(2, 80%, ${Math.round(92 - 38 * strength)}%)` : `hsl(215, 80%, ${Math.round(92 - 38 * strength)}%)`;
  };
}

// The outermost frames whose name contains `query`, summed (nothing twice);
// the root ("all") is no function and never matches.
function matched(node, query, root) {
  if (node !== root && node.name.includes(query)) return [node.base || 0, node.new || 0];
  return (node.children || []).reduce(([b, n], c) => {
    const [cb, cn] = matched(c, query, root);
    return [b + cb, n + cn];
  }, [0, 0]);
}

function matchLine(node, query, show, root) {
  const [b, n] = matched(node, query, root);
  return `“${query}”: base ${show(b)}, new ${show(n)} (${n - b >= 0 ? '+' : '−'}${show(Math.abs(n - b))})`;
}

function dumpSelect(label, value, dumps, onChange) {
  const select = el('select', { 'aria-label': label },
    dumps.map((d) => el('option', { value: d.id }, `${d.id}: ${d.exe ? d.exe.split('/').pop() : d.file} (pid ${d.pid})`)));
  select.value = value;
  select.addEventListener('change', () => onChange(select.value));
  return el('label', {}, `${label} `, select);
}

// The two dumps compared: the hash's, else the first two loaded.
export function diffPair(state, dumps) {
  return { base: state.base ?? String(dumps[0].id), next: state.new ?? String(dumps[1].id) };
}

export async function renderDiff(root, state, navigate, context) {
  const dumps = context.dumps;
  if (dumps.length < 2) {
    fill(root, el('h2', {}, 'Diff flamegraph'),
      el('p', { class: 'empty' }, 'A diff needs two dumps: start memrec view with both files (memrec view a.dat b.dat).'));
    return;
  }
  const { base, next } = diffPair(state, dumps);
  const metric = DIFF_METRICS.includes(state.metric) ? state.metric : 'leaked';
  const show = metric === 'allocations' || metric === 'temporary' ? integer : (v) => `${integer(v)} bytes`;
  const tree = await api.diffFlame({ base, new: next, metric, raw: state.raw === '1' ? 1 : undefined });
  const chain = resolve(tree.root, state.zoom);
  const rects = layout(chain, state.zoom, size);
  const metricSelect = el('select', { 'aria-label': 'Metric' }, DIFF_METRICS.map((m) => el('option', { value: m }, m)));
  metricSelect.value = metric;
  metricSelect.addEventListener('change', () => navigate({ metric: metricSelect.value, zoom: null }));
  const query = state.q || '';
  const search = el('input', { type: 'search', placeholder: 'Search functions', 'aria-label': 'Search functions', value: query });
  search.addEventListener('change', () => navigate({ q: search.value || null }));
  const info = el('p', { class: 'detail hover-info', id: 'diff-info', 'aria-live': 'polite' }, '\u00a0');
  const canvas = el('canvas', { role: 'img', 'aria-label': `Diff flamegraph of ${metric}` });
  const rootNode = tree.root;
  const total = (rootNode.new || 0) - (rootNode.base || 0);
  fill(root,
    el('h2', {}, 'Diff flamegraph'),
    el('div', { class: 'toolbar' },
      dumpSelect('Base', base, dumps, (v) => navigate({ base: v, zoom: null })),
      dumpSelect('New', next, dumps, (v) => navigate({ new: v, zoom: null })),
      el('label', {}, 'Metric ', metricSelect), search, labelToggles(state, navigate, { group: false }),
      state.zoom ? el('button', { type: 'button', onclick: () => navigate({ zoom: null }) }, 'Reset zoom') : null),
    el('p', { class: 'detail', id: 'diff-summary' },
      `base ${show(rootNode.base || 0)}, new ${show(rootNode.new || 0)}: ${total >= 0 ? '+' : '−'}${show(Math.abs(total))}. `,
      el('span', { class: 'legend grows' }, 'red grows'), ' ', el('span', { class: 'legend shrinks' }, 'blue shrinks')),
    query ? el('p', { class: 'detail', id: 'diff-match' }, matchLine(chain[chain.length - 1], query, show, tree.root)) : null,
    state.from !== undefined || state.to !== undefined || state.at !== undefined
      ? el('p', { class: 'detail' }, 'The diff compares whole runs: the selected range and instant do not apply here.') : null,
    size(rootNode) === 0 ? el('p', { class: 'empty' }, `Neither dump has a non-zero ${metric} figure.`) : canvas,
    info);
  if (size(rootNode) === 0) return;
  const color = colorer(rootNode);
  draw(canvas, rects, canvasWidth(), (node) => (query && node !== tree.root && node.name.includes(query) ? '#d946ef' : color(node)));
  interact(canvas, rects,
    (r) => {
      info.title = r ? r.node.name : '';
      canvas.title = r ? r.node.name : '';
      if (!r) { info.textContent = '\u00a0'; return; }
      const d = (r.node.new || 0) - (r.node.base || 0);
      info.textContent = `${nodeLabel(r.node)}: base ${show(r.node.base || 0)}, new ${show(r.node.new || 0)} (${d >= 0 ? '+' : '−'}${show(Math.abs(d))})`;
    },
    (path) => navigate({ zoom: path }));
}
