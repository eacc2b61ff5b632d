// A symbolized backtrace as a list, innermost frame first: function, inline
// marker, file:line and module, all as text. Library frames (folded under the
// site's label, or the runtime's around the program) are dimmed, never dropped. A grouped site lists each of its
// paths too. Used by the call sites and the allocations views.
import { el, integer, location } from './format.js';
import { breakable } from './labels.js';

// The program's own frames stand out; the runtime's around them (thread
// start, main's callers) are dimmed like the folded ones.
function frameItem(f) {
  const kind = f.folded ? 'folded' : f.library ? 'library' : 'own';
  const classes = ['frame', f.inlined ? 'inlined' : null, kind].filter(Boolean).join(' ');
  const title = f.folded ? 'Library code, folded under the site\'s label' : f.library ? 'Library or runtime code' : null;
  return el('li', { class: classes, title },
    breakable(f.function ?? f.label, 'fn'),
    f.inlined ? el('span', { class: 'tag', title: 'inlined into the frame below' }, 'inlined') : null,
    f.file ? breakable(location(f), 'loc') : null,
    f.module ? breakable(f.module, 'module', f.module) : null);
}

function frameList(frames, label) {
  return el('ol', { class: 'backtrace', 'aria-label': label }, (frames || []).map(frameItem));
}

// `paths` (a grouped site's, each a frame list) and `pathCount` (all of them; the server sends up to 50).
export function backtrace(frames, truncated, paths, pathCount) {
  const n = paths?.length ?? 0;
  return el('div', {},
    frameList(frames, 'Backtrace, innermost first'),
    truncated ? el('p', { class: 'detail' }, 'The recorder cut this stack at its maximum depth.') : null,
    n > 0 ? el('h4', {}, `${integer(pathCount ?? n)} paths reach this line`,
      (pathCount ?? n) > n ? ` (the first ${integer(n)} listed)` : '') : null,
    n > 0 ? el('div', { class: 'paths' }, paths.map((p, i) =>
      el('details', { class: 'path' }, el('summary', {}, `Path ${i + 1}: `, pathSummary(p)),
        frameList(p, `Path ${i + 1}, innermost first`)))) : null);
}

// A path in one line: its frames outside the library ones, outermost last.
function pathSummary(frames) {
  const own = frames.filter((f) => !f.folded).map((f) => f.function ?? f.label);
  return el('span', { class: 'fn' }, own.slice(0, 4).join(' ← ') + (own.length > 4 ? ' ← …' : ''));
}
