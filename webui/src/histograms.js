// The overview's histograms of the range's allocations, as heaptrack_gui's and
// bytehound's: how many fell in each power-of-two class of size, with their
// bytes, and of lifetime (for those freed in the range; the rest are counted
// as still live). The classes come from the summary (docs/api.md).
import { bytes, duration, el, integer } from './format.js';

// A power of two without decimals: 512 B, 4 KiB, 2 MiB; 1 ms-ish times likewise.
const sizeBound = (n) => bytes(n).replace(/\.0+ /, ' ');
const timeBound = (ns) => duration(ns).replace(/\.0+ /, ' ');

function classLabel(c, bound) {
  if (c.to === c.from) return bound(c.from);
  return `${bound(c.from)} – ${bound(c.to + 1)}`;
}

function bar(value, highest) {
  const box = el('span', { class: 'bar' });
  box.style.width = `${highest > 0 ? Math.max(0.5, (100 * value) / highest) : 0}%`;  // CSSOM: allowed by the CSP
  return el('span', { class: 'bar-box' }, box);
}

function table(name, caption, classes, bound, columns) {
  const highest = Math.max(0, ...classes.map((c) => c.count));
  return el('table', { class: 'histogram grid', 'aria-label': name },
    el('caption', {}, caption),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Class'), columns.map(([label]) => el('th', { scope: 'col', class: 'num' }, label)),
      el('th', { scope: 'col' }, 'Allocations'))),
    el('tbody', {}, classes.map((c) => el('tr', {},
      el('th', { scope: 'row' }, classLabel(c, bound)),
      columns.map(([, cell]) => el('td', { class: 'num' }, cell(c))),
      el('td', { class: 'bar-cell' }, bar(c.count, highest))))));
}

export function histograms(summary) {
  const h = summary.histograms;
  if (!h || h.sizes.length === 0) return null;
  const count = ['Count', (c) => integer(c.count)];
  const size = ['Bytes', (c) => el('span', { title: `${integer(c.bytes)} bytes` }, bytes(c.bytes))];
  return el('section', { class: 'histograms', id: 'histograms', 'aria-label': 'Histograms' },
    el('h2', {}, 'Sizes and lifetimes'),
    el('div', { class: 'histogram-pair' },
      table('Allocation sizes', 'Requested sizes of the allocations made (each class up to, not including, its second bound).',
        h.sizes, sizeBound, [count, size]),
      el('div', {},
        table('Lifetimes', 'Lifetimes of those freed in the range. 0 ns: freed within the clock tick their allocation was stamped with.',
          h.lifetimes_ns, timeBound, [count, size]),
        el('p', { class: 'detail', id: 'unfreed' },
          `${integer(h.unfreed.count)} ${h.unfreed.count === 1 ? 'allocation' : 'allocations'} (${bytes(h.unfreed.bytes)}) still live at the end.`))));
}
