// A site's live bytes over the range as a small inline SVG (no library): the
// line scaled to the row's own highest value, which the tooltip names.
import { bytes, integer } from './format.js';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 96;
const HEIGHT = 20;

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

export function sparkline(values) {
  const root = svg('svg', { class: 'spark', width: WIDTH, height: HEIGHT, viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img' });
  const list = Array.isArray(values) ? values : [];
  const max = list.reduce((m, v) => Math.max(m, v), 0);
  root.setAttribute('aria-label', `Live bytes over the range, highest ${integer(max)} bytes`);
  const title = svg('title', {});
  title.textContent = `live bytes over the range: highest ${bytes(max)} (${integer(max)} bytes)`;
  root.append(title);
  if (list.length === 0) return root;
  const step = list.length > 1 ? (WIDTH - 2) / (list.length - 1) : 0;
  const y = (v) => (max > 0 ? HEIGHT - 2 - ((HEIGHT - 4) * v) / max : HEIGHT - 2);
  const points = list.map((v, i) => `${(1 + i * step).toFixed(1)},${y(v).toFixed(1)}`);
  root.append(svg('polygon', { class: 'spark-fill', points: `1,${HEIGHT - 2} ${points.join(' ')} ${(1 + (list.length - 1) * step).toFixed(1)},${HEIGHT - 2}` }));
  root.append(svg('polyline', { class: 'spark-line', points: points.join(' ') }));
  return root;
}
