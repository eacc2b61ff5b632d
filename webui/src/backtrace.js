// A symbolized backtrace as a list, innermost frame first: function, inline
// marker, file:line and module, all as text. Used by the call sites and the
// allocations views.
import { el, location } from './format.js';

function frameItem(f) {
  return el('li', { class: f.inlined ? 'frame inlined' : 'frame' },
    el('span', { class: 'fn' }, f.function ?? f.label),
    f.inlined ? el('span', { class: 'tag', title: 'inlined into the frame below' }, 'inlined') : null,
    f.file ? el('span', { class: 'loc' }, location(f)) : null,
    f.module ? el('span', { class: 'module', title: f.module }, f.module) : null);
}

export function backtrace(frames, truncated) {
  return el('div', {},
    el('ol', { class: 'backtrace', 'aria-label': 'Backtrace, innermost first' }, (frames || []).map(frameItem)),
    truncated ? el('p', { class: 'detail' }, 'The recorder cut this stack at its maximum depth.') : null);
}
