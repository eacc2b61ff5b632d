// DOM and number helpers. `el` is the only way views build elements: strings
// become text nodes, never markup, so names from a dump (`operator<`, paths)
// cannot inject HTML.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const grouping = new Intl.NumberFormat('en-US');
export const integer = (n) => (n === null || n === undefined ? '—' : grouping.format(n));

const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
export function bytes(n) {
  if (n === null || n === undefined) return '—';
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u += 1;
  }
  return u === 0 ? `${n} B` : `${v.toFixed(v < 10 ? 2 : 1)} ${units[u]}`;
}

export function duration(ns) {
  if (ns === null || ns === undefined) return '—';
  if (ns < 1e3) return `${ns} ns`;
  if (ns < 1e6) return `${(ns / 1e3).toFixed(1)} µs`;
  if (ns < 1e9) return `${(ns / 1e6).toFixed(1)} ms`;
  return `${(ns / 1e9).toFixed(2)} s`;
}

// "file:line" of a frame, or its module, or null.
export function location(frame) {
  if (!frame) return null;
  if (frame.file) return frame.line ? `${frame.file}:${frame.line}` : frame.file;
  return frame.module;
}
