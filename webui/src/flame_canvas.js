// Draws a flame tree ({name, children, …}) on a canvas, outermost frame on
// top, and finds the frame under the mouse. Shared by the flamegraph and the
// diff flamegraph, which pass how wide a node is and how it is coloured. Names
// are drawn with fillText, never as markup.
export const ROW = 18;

// A node's short name (the server's `label`, templates and arguments elided), else its name.
export const nodeLabel = (node) => node.label ?? node.name;

// The node at `path` ("0.2.1": child indices from the root) and its ancestors.
export function resolve(root, path) {
  const chain = [root];
  for (const part of (path || '').split('.').filter((p) => p !== '')) {
    const next = (chain[chain.length - 1].children || [])[Number(part)];
    if (!next) break;
    chain.push(next);
  }
  return chain;
}

// Rectangles (x and w as fractions of the width) of the zoomed node's subtree,
// with its ancestors as full-width bars above. A node's children share its
// width by `size`; when they add up to more (a diff's max(base, new)), by their sum.
export function layout(chain, zoom, size) {
  const parts = (zoom || '').split('.').filter((p) => p !== '');
  const rects = [];
  chain.slice(0, -1).forEach((node, depth) => rects.push({ node, depth, x: 0, w: 1, path: parts.slice(0, depth).join('.'), ancestor: true }));
  const walk = (node, depth, x, w, path) => {
    rects.push({ node, depth, x, w, path });
    const children = node.children || [];
    const total = Math.max(size(node), children.reduce((s, c) => s + size(c), 0));
    let cx = x;
    children.forEach((child, i) => {
      const cw = total > 0 ? (w * size(child)) / total : 0;
      walk(child, depth + 1, cx, cw, path === '' ? String(i) : `${path}.${i}`);
      cx += cw;
    });
  };
  walk(chain[chain.length - 1], chain.length - 1, 0, 1, parts.slice(0, chain.length - 1).join('.'));
  return rects;
}

export function draw(canvas, rects, width, color) {
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
    ctx.fillStyle = r.ancestor ? '#d9dde3' : color(r.node);
    ctx.fillRect(x, r.depth * ROW, Math.max(w - 1, 0.5), ROW - 1);
    if (w > 30) {
      ctx.save();
      ctx.beginPath();
      ctx.rect(x, r.depth * ROW, w - 4, ROW);
      ctx.clip();
      ctx.fillStyle = '#1d232b';
      ctx.fillText(nodeLabel(r.node), x + 3, r.depth * ROW + ROW / 2);
      ctx.restore();
    }
  }
}

export function hit(rects, canvas, event) {
  const box = canvas.getBoundingClientRect();
  const fx = (event.clientX - box.left) / box.width;
  const depth = Math.floor((event.clientY - box.top) / ROW);
  return rects.find((r) => r.depth === depth && fx >= r.x && fx < r.x + r.w);
}

// Wires hover (onHover(rect | undefined)) and click-to-zoom (onZoom(path)).
export function interact(canvas, rects, onHover, onZoom) {
  canvas.addEventListener('mousemove', (e) => onHover(hit(rects, canvas, e)));
  canvas.addEventListener('mouseleave', () => onHover(undefined));
  canvas.addEventListener('click', (e) => {
    const r = hit(rects, canvas, e);
    if (r) onZoom(r.path || null);
  });
}

export function canvasWidth() {
  return Math.max(400, document.getElementById('view').clientWidth - 40);
}
