// DOM and number helpers. `el` is the only way views build elements: strings
// become text nodes, never markup, so names from a dump (`operator<`, paths)
// cannot inject HTML. Bytes read as KiB/MiB with the exact count in a tooltip.
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

// replaceChildren() turns a null into the text "null": views build their
// children with conditionals, so they fill their root through this.
export function fill(root, ...children) {
  root.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
}

const grouping = new Intl.NumberFormat('en-US');
export const integer = (n) => (n === null || n === undefined ? '—' : grouping.format(n));

const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
export function bytes(n) {
  if (n === null || n === undefined) return '—';
  let v = Math.abs(n);
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u += 1;
  }
  const sign = n < 0 ? '−' : '';
  return u === 0 ? `${sign}${v} B` : `${sign}${v.toFixed(v < 10 ? 2 : 1)} ${units[u]}`;
}

// A byte count as "12.4 KiB" with "12,726 bytes" on hover.
export function bytesText(n) {
  return el('span', { title: n === null || n === undefined ? null : `${integer(n)} bytes` }, bytes(n));
}

export function duration(ns) {
  if (ns === null || ns === undefined) return '—';
  if (ns < 1e3) return `${ns} ns`;
  if (ns < 1e6) return `${(ns / 1e3).toFixed(1)} µs`;
  if (ns < 1e9) return `${(ns / 1e6).toFixed(1)} ms`;
  return `${(ns / 1e9).toFixed(2)} s`;
}

// A point in time since the dump's start, with the exact ns on hover;
// `fine` shows µs (ms with 3 decimals), for ordering events close together.
export function timeText(ns, fine = false) {
  const text = fine && ns >= 1e6 ? (ns < 1e9 ? `${(ns / 1e6).toFixed(3)} ms` : `${(ns / 1e9).toFixed(6)} s`) : duration(ns);
  return el('span', { title: ns === null || ns === undefined ? null : `${integer(ns)} ns` }, text);
}

export function address(a) {
  if (a === null || a === undefined) return '—';
  return typeof a === 'number' ? `0x${a.toString(16)}` : String(a);
}

export function basename(path) {
  if (!path) return '';
  const i = path.lastIndexOf('/');
  return i < 0 ? path : path.slice(i + 1);
}

// "file:line" of a frame, or its module, or null.
export function location(frame) {
  if (!frame) return null;
  if (frame.file) return frame.line ? `${frame.file}:${frame.line}` : frame.file;
  return frame.module;
}

// A table cell's location: "file.c:12 · module" by base names, the full
// paths on hover.
export function locationText(frame) {
  if (!frame || (!frame.file && !frame.module)) return '';
  const where = frame.file ? `${basename(frame.file)}${frame.line ? `:${frame.line}` : ''}` : basename(frame.module);
  const title = [location(frame), frame.file ? frame.module : null].filter(Boolean).join('\n');
  return el('span', { title }, where, frame.file && frame.module ? el('span', { class: 'module' }, ` · ${basename(frame.module)}`) : null);
}

// "4096", "4k", "1.5 MiB" -> bytes; "" -> null; anything else throws.
export function parseBytes(text) {
  const t = String(text ?? '').trim();
  if (t === '') return null;
  const m = t.match(/^(\d+(?:\.\d+)?)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib)?$/i);
  if (!m) throw new Error(`"${t}" is not a size: write bytes, or a number with k, M or G (KiB, MiB, GiB).`);
  const scale = { k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[(m[2] || 'b')[0].toLowerCase()] || 1;
  return Math.round(Number(m[1]) * scale);
}

// "250ms", "1.5s", "20us", "300" (ns) -> ns; "" -> null; anything else throws.
export function parseDuration(text) {
  const t = String(text ?? '').trim();
  if (t === '') return null;
  const m = t.match(/^(\d+(?:\.\d+)?)\s*(ns|us|µs|ms|s)?$/i);
  if (!m) throw new Error(`"${t}" is not a duration: write a number with ns, us, ms or s.`);
  const scale = { ns: 1, us: 1e3, 'µs': 1e3, ms: 1e6, s: 1e9 }[(m[2] || 'ns').toLowerCase()];
  return Math.round(Number(m[1]) * scale);
}

// A duration in ns as the shortest exact text parseDuration reads back.
export function durationInput(ns) {
  if (ns === null || ns === undefined || ns === '') return '';
  const n = Number(ns);
  for (const [unit, scale] of [['s', 1e9], ['ms', 1e6], ['us', 1e3]]) if (n >= scale && n % scale === 0) return `${n / scale}${unit}`;
  return `${n}ns`;
}

// A note that a part of the view waits for the dump's allocation table; the
// page's poll (app.js) keeps its percent current.
export function buildingNote(what, percent) {
  return el('p', { class: 'building', role: 'status' }, `${what} once memrec view has built the allocation table (`,
    el('span', { class: 'building-percent' }, `${percent} %`), ' done).');
}
