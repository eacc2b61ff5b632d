// The flamegraph's tree as a table, heaptrack_gui's call trees: top-down
// (from the outermost frame in) or bottom-up (from the allocating function
// out to its callers: the server's invert=1). Each row is a frame with its
// value and share of the total; a row opens to its children, largest first.
import { el } from './format.js';
import { nodeLabel } from './flame_canvas.js';
import { functionName } from './labels.js';

// `linkOf(node)`: where the frame's name leads (its callers and callees).
function rows(node, depth, total, show, query, linkOf) {
  const children = [...(node.children || [])].sort((a, b) => b.value - a.value);
  const toggle = el('button', { type: 'button', class: 'tree-toggle', 'aria-expanded': 'false', disabled: children.length === 0 },
    children.length === 0 ? '·' : '▸');
  const name = el('td', { class: 'fn' }, toggle, ' ',
    el('a', { href: linkOf(node) }, functionName(nodeLabel(node), node.name)));
  name.style.paddingLeft = `${0.4 + 1.1 * depth}rem`;  // CSSOM: allowed by the CSP
  const tr = el('tr', { class: query && node.name.includes(query) ? 'tree-row match' : 'tree-row', 'data-depth': depth },
    name, el('td', { class: 'num' }, show(node.value)),
    el('td', { class: 'num' }, `${((100 * node.value) / (total || 1)).toFixed(1)}%`));
  let opened = null;  // the children's handles while open
  // `all`: this row and every row shown under it, so closing removes them all.
  const handle = { tr, get all() { return [tr, ...(opened ?? []).flatMap((h) => h.all)]; } };
  toggle.addEventListener('click', () => {
    if (opened) {
      for (const r of handle.all.slice(1)) r.remove();
      opened = null;
      toggle.textContent = '▸';
      toggle.setAttribute('aria-expanded', 'false');
      return;
    }
    opened = children.map((c) => rows(c, depth + 1, total, show, query, linkOf));
    tr.after(...opened.map((h) => h.tr));
    toggle.textContent = '▾';
    toggle.setAttribute('aria-expanded', 'true');
  });
  return handle;
}

export function callTree(root, total, show, inverted, query, linkOf) {
  const top = [...(root.children || [])].sort((a, b) => b.value - a.value).map((c) => rows(c, 0, total, show, query, linkOf).tr);
  return el('table', { class: 'sites grid call-tree', 'aria-label': inverted ? 'Call tree, bottom-up' : 'Call tree, top-down' },
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, inverted ? 'Allocating function, then its callers' : 'Function, then its callees'),
      el('th', { scope: 'col', class: 'num' }, 'Value'), el('th', { scope: 'col', class: 'num' }, 'Share'))),
    el('tbody', {}, top));
}
