// The diff of two loaded dumps (`base` and `new` in the hash; the same dump
// twice compares two of its ranges), each over its range (diff_ranges.js):
// the flamegraph, where a frame is as wide as the larger of its two values and
// red where the new side has more, blue where it has less, grey where they are
// equal, and the table of changed call sites (diff_table.js).
import { api } from './api.js';
import { duration, el, fill, integer } from './format.js';
import { canvasWidth, draw, interact, layout, nodeLabel, resolve } from './flame_canvas.js';
import { labelToggles } from './labels.js';
import { hasRanges, rangeForm, rangeOf, sideRangeText } from './diff_ranges.js';
import { diffTable, TABLE_SORTS } from './diff_table.js';

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

// The two dumps compared: the hash's, else the first two loaded (the one
// loaded twice: two of its ranges).
export function diffPair(state, dumps) {
  return { base: state.base ?? String(dumps[0]?.id ?? 0), next: state.new ?? String((dumps[1] ?? dumps[0])?.id ?? 0) };
}

function toolbar(state, navigate, dumps, base, next, metric) {
  const metricSelect = el('select', { 'aria-label': 'Metric' }, DIFF_METRICS.map((m) => el('option', { value: m }, m)));
  metricSelect.value = metric;
  metricSelect.addEventListener('change', () => navigate({ metric: metricSelect.value, zoom: null }));
  const search = el('input', { type: 'search', placeholder: 'Search functions', 'aria-label': 'Search functions', value: state.q || '' });
  search.addEventListener('change', () => navigate({ q: search.value || null }));
  return el('div', { class: 'toolbar' },
    dumpSelect('Base', base, dumps, (v) => navigate({ base: v, zoom: null })),
    dumpSelect('New', next, dumps, (v) => navigate({ new: v, zoom: null })),
    el('label', {}, 'Metric ', metricSelect), search, labelToggles(state, navigate, { group: false }),
    state.zoom ? el('button', { type: 'button', onclick: () => navigate({ zoom: null }) }, 'Reset zoom') : null);
}

export async function renderDiff(root, state, navigate, context) {
  const dumps = context.dumps;
  const { base, next } = diffPair(state, dumps);
  const metric = DIFF_METRICS.includes(state.metric) ? state.metric : 'leaked';
  const sort = Object.hasOwn(TABLE_SORTS, state.sort ?? '') ? state.sort : 'magnitude';
  const params = { base, new: next, metric, raw: state.raw === '1' ? 1 : undefined, ...rangeOf(state) };
  const head = [el('h2', {}, 'Diff'), toolbar(state, navigate, dumps, base, next, metric)];
  let tree;
  let table;
  try {
    [tree, table] = await Promise.all([api.diffFlame(params), api.diffSites({ ...params, sort })]);
  } catch (e) {
    // A range or dump the server refuses is shown by the fields, which stay to fix it.
    if (e.status !== 400 && e.status !== 404) throw e;
    fill(root, head, rangeForm(state, navigate, e.message));
    return;
  }
  const show = metric === 'allocations' || metric === 'temporary' ? integer : (v) => `${integer(v)} bytes`;
  const chain = resolve(tree.root, state.zoom);
  const rects = layout(chain, state.zoom, size);
  const query = state.q || '';
  const info = el('p', { class: 'detail hover-info', id: 'diff-info', 'aria-live': 'polite' }, '\u00a0');
  const canvas = el('canvas', { role: 'img', 'aria-label': `Diff flamegraph of ${metric}` });
  const rootNode = tree.root;
  const total = (rootNode.new || 0) - (rootNode.base || 0);
  const same = base === next && !hasRanges(state);
  fill(root, head, rangeForm(state, navigate, null),
    el('p', { class: 'detail', id: 'diff-sides' },
      `Base: dump ${base}, ${sideRangeText(state, 'base', duration)}. New: dump ${next}, ${sideRangeText(state, 'new', duration)}.`),
    same ? el('p', { class: 'note', role: 'note' }, 'Base and new are the same dump over the same time: give each side a range to compare two parts of it.') : null,
    state.from !== undefined || state.to !== undefined || state.at !== undefined
      ? el('p', { class: 'detail' }, 'The header\'s range and instant do not apply here: each side takes its own range above.') : null,
    el('p', { class: 'detail', id: 'diff-summary' },
      `base ${show(rootNode.base || 0)}, new ${show(rootNode.new || 0)}: ${total >= 0 ? '+' : '−'}${show(Math.abs(total))}. `,
      el('span', { class: 'legend grows' }, 'red grows'), ' ', el('span', { class: 'legend shrinks' }, 'blue shrinks')),
    query ? el('p', { class: 'detail', id: 'diff-match' }, matchLine(chain[chain.length - 1], query, show, tree.root)) : null,
    size(rootNode) === 0 ? el('p', { class: 'empty' }, `Neither side has a non-zero ${metric} figure.`) : canvas,
    info,
    diffTable(table, state, navigate));
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
